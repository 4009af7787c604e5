//! Arrays across the boundary: any 1-D sequence of numbers in (a numpy array of any numeric
//! dtype, a list, a tuple), 1-D float64 numpy arrays out.

use numpy::{AllowTypeChange, PyArray1, PyArrayLikeDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors::{Error, Result};

/// The values of `value`, a 1-D sequence of numbers, as f64. `what` starts the error message
/// (e.g. `RobotDriverGazebo::set_target_joint_positions`).
pub(crate) fn f64_vector(value: &Bound<'_, PyAny>, what: &str) -> Result<Vec<f64>> {
    let py = value.py();
    let expected = format!("{what}: expected a 1-D sequence of numbers");
    let array = value
        .extract::<PyArrayLikeDyn<'_, f64, AllowTypeChange>>()
        .map_err(|reason| Error::invalid_argument(format!("{expected}: {}", reason.value(py))))?;
    if array.ndim() != 1 {
        return Err(Error::invalid_argument(format!(
            "{expected}, got {} dimensions.",
            array.ndim()
        )));
    }
    Ok(array.as_array().iter().copied().collect())
}

/// A new 1-D float64 numpy array holding `values`.
pub(crate) fn f64_array<'py>(py: Python<'py>, values: &[f64]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, values)
}
