//! The joint limits of a DQ Robotics robot parameter file (`DQ_SerialManipulatorDH` JSON, as
//! `DQ_JsonReader` reads it), for `override_joint_limits_with_robot_parameter_file`.
//!
//! Only what the limits need is read: `robot_type` (must be `DQ_SerialManipulatorDH`),
//! `angle_mode` (`degree` or `rad`), `lower_q_limit`, `upper_q_limit`, and `types` (0 revolute,
//! 1 prismatic: in `degree` mode only revolute limits are converted to radians). Other fields
//! (DH parameters, frames, velocity limits) are not checked.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `(lower, upper)` joint limits, in radians (revolute) or metres (prismatic).
#[derive(Clone, Debug, PartialEq)]
pub struct JointLimits {
    /// `lower_q_limit`.
    pub lower: Vec<f64>,
    /// `upper_q_limit`.
    pub upper: Vec<f64>,
}

/// Why a robot parameter file gives no joint limits.
#[derive(Debug, thiserror::Error)]
pub enum RobotParameterFileError {
    /// The file cannot be read.
    #[error("cannot read the robot parameter file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("the robot parameter file {path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
    /// The JSON is not a `DQ_SerialManipulatorDH` description with usable limits.
    #[error(
        "the robot parameter file {path} is not a usable DQ_SerialManipulatorDH file: {problem}"
    )]
    Content {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field.
        problem: String,
    },
}

/// Reads the joint limits of the `DQ_SerialManipulatorDH` file at `path`.
///
/// # Errors
/// The file cannot be read, is not JSON, or lacks consistent limits (each error names the
/// field).
pub fn read_joint_limits(path: &Path) -> Result<JointLimits, RobotParameterFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| RobotParameterFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let json: Value =
        serde_json::from_str(&text).map_err(|source| RobotParameterFileError::Json {
            path: path.to_path_buf(),
            source,
        })?;
    joint_limits(&json).map_err(|problem| RobotParameterFileError::Content {
        path: path.to_path_buf(),
        problem,
    })
}

fn joint_limits(json: &Value) -> Result<JointLimits, String> {
    let object = json.as_object().ok_or("the top level is not an object")?;
    match object.get("robot_type") {
        Some(Value::String(kind)) if kind == "DQ_SerialManipulatorDH" => {}
        Some(other) => {
            return Err(format!(
                "\"robot_type\" is {other}; only \"DQ_SerialManipulatorDH\" is read"
            ))
        }
        None => return Err("\"robot_type\" is missing".into()),
    }
    let degrees = match object.get("angle_mode") {
        Some(Value::String(mode)) if mode == "degree" => true,
        Some(Value::String(mode)) if mode == "rad" => false,
        Some(other) => {
            return Err(format!(
                "\"angle_mode\" is {other}; expected \"degree\" or \"rad\""
            ))
        }
        None => return Err("\"angle_mode\" is missing".into()),
    };
    let mut lower = numbers(object.get("lower_q_limit"), "lower_q_limit")?;
    let mut upper = numbers(object.get("upper_q_limit"), "upper_q_limit")?;
    if lower.is_empty() {
        return Err("\"lower_q_limit\" is empty".into());
    }
    if lower.len() != upper.len() {
        return Err(format!(
            "\"lower_q_limit\" has {} values but \"upper_q_limit\" has {}",
            lower.len(),
            upper.len()
        ));
    }
    let types = match object.get("types") {
        None if !degrees => None,
        None => {
            return Err(
                "\"types\" is missing; in degree mode it says which limits are angles".into(),
            )
        }
        Some(value) => Some(joint_types(value, lower.len())?),
    };
    if degrees {
        let revolute = types.as_deref().unwrap_or_default();
        for (index, &is_revolute) in revolute.iter().enumerate() {
            if is_revolute {
                lower[index] = lower[index].to_radians();
                upper[index] = upper[index].to_radians();
            }
        }
    }
    if let Some(index) = (0..lower.len()).find(|&i| lower[i] > upper[i]) {
        return Err(format!(
            "joint {index}: the lower limit {} is above the upper limit {}",
            lower[index], upper[index]
        ));
    }
    Ok(JointLimits { lower, upper })
}

fn numbers(value: Option<&Value>, field: &str) -> Result<Vec<f64>, String> {
    let array = match value {
        Some(Value::Array(array)) => array,
        Some(other) => {
            return Err(format!(
                "\"{field}\" is {other}; expected an array of numbers"
            ))
        }
        None => return Err(format!("\"{field}\" is missing")),
    };
    array
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value
                .as_f64()
                .ok_or_else(|| format!("\"{field}\"[{index}] is {value}; expected a number"))
        })
        .collect()
}

/// Per joint, true for revolute (`0`), false for prismatic (`1`).
fn joint_types(value: &Value, joints: usize) -> Result<Vec<bool>, String> {
    let types = numbers(Some(value), "types")?;
    if types.len() != joints {
        return Err(format!(
            "\"types\" has {} values but the limits have {joints}",
            types.len()
        ));
    }
    types
        .iter()
        .enumerate()
        .map(|(index, &kind)| match kind {
            0.0 => Ok(true),
            1.0 => Ok(false),
            other => Err(format!(
                "\"types\"[{index}] is {other}; expected 0 (revolute) or 1 (prismatic)"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(text: &str) -> Result<JointLimits, String> {
        joint_limits(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn degree_limits_of_revolute_joints_become_radians_and_prismatic_ones_stay() {
        let l = limits(
            r#"{"robot_type": "DQ_SerialManipulatorDH", "angle_mode": "degree",
                "theta": [0, 0], "types": [0, 1],
                "lower_q_limit": [-90, -0.5], "upper_q_limit": [180, 0.25]}"#,
        )
        .unwrap();
        assert_eq!(l.lower, [-std::f64::consts::FRAC_PI_2, -0.5]);
        assert_eq!(l.upper, [std::f64::consts::PI, 0.25]);
    }

    #[test]
    fn rad_limits_are_taken_as_they_are_and_need_no_types() {
        let l = limits(
            r#"{"robot_type": "DQ_SerialManipulatorDH", "angle_mode": "rad",
                "lower_q_limit": [-1, -2], "upper_q_limit": [1, 2.5]}"#,
        )
        .unwrap();
        assert_eq!((l.lower, l.upper), (vec![-1.0, -2.0], vec![1.0, 2.5]));
    }

    #[test]
    fn every_problem_names_its_field() {
        let base = r#""robot_type": "DQ_SerialManipulatorDH", "angle_mode": "rad""#;
        for (text, problem) in [
            ("[1, 2]".to_string(), "the top level is not an object"),
            (
                r#"{"robot_type": "DQ_SerialManipulatorDenso", "angle_mode": "rad"}"#.into(),
                "\"robot_type\" is \"DQ_SerialManipulatorDenso\"",
            ),
            (
                r#"{"angle_mode": "rad"}"#.into(),
                "\"robot_type\" is missing",
            ),
            (
                r#"{"robot_type": "DQ_SerialManipulatorDH", "angle_mode": "grad"}"#.into(),
                "\"angle_mode\" is \"grad\"",
            ),
            (
                format!(r#"{{{base}, "upper_q_limit": [1]}}"#),
                "\"lower_q_limit\" is missing",
            ),
            (
                format!(r#"{{{base}, "lower_q_limit": [-1, "x"], "upper_q_limit": [1, 1]}}"#),
                "\"lower_q_limit\"[1] is \"x\"",
            ),
            (
                format!(r#"{{{base}, "lower_q_limit": [-1, -1], "upper_q_limit": [1]}}"#),
                "\"lower_q_limit\" has 2 values but \"upper_q_limit\" has 1",
            ),
            (
                format!(r#"{{{base}, "lower_q_limit": [], "upper_q_limit": []}}"#),
                "\"lower_q_limit\" is empty",
            ),
            (
                format!(r#"{{{base}, "lower_q_limit": [2], "upper_q_limit": [1]}}"#),
                "joint 0: the lower limit 2 is above the upper limit 1",
            ),
            (
                r#"{"robot_type": "DQ_SerialManipulatorDH", "angle_mode": "degree",
                    "lower_q_limit": [-1], "upper_q_limit": [1]}"#
                    .into(),
                "\"types\" is missing",
            ),
            (
                format!(r#"{{{base}, "types": [2], "lower_q_limit": [-1], "upper_q_limit": [1]}}"#),
                "\"types\"[0] is 2",
            ),
        ] {
            let err = limits(&text).unwrap_err();
            assert!(err.contains(problem), "{text}: {err}");
        }
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("composer_rpf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let err = read_joint_limits(&missing).unwrap_err();
        assert!(err.to_string().starts_with(&format!(
            "cannot read the robot parameter file {}",
            missing.display()
        )));
        let broken = dir.join("broken.json");
        std::fs::write(&broken, "{\"robot_type\": ").unwrap();
        let err = read_joint_limits(&broken).unwrap_err();
        assert!(err.to_string().contains("is not valid JSON"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
