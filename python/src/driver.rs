//! `RobotDriverGazebo` and `ShutdownSignaler`: the driver core behind a Python surface
//! compatible with the original binding. Joint states keep flowing into the core's cache on
//! the transport's thread, which never takes the GIL; every call here releases it.

use std::sync::Arc;

use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use sas_robot_driver_gazebo::{Command, CommandTimer, RobotDriverGazebo as Core, ShutdownToken};

use crate::arrays::{f64_array, f64_vector};
use crate::config::Configuration;
use crate::errors::{Error, Result};
use crate::gil::{released, released_interruptible, DropReleased, Interruption};

/// A shutdown flag shared by whoever holds it (the original's `sas_core.ShutdownSignaler`).
/// Once `shutdown()` is called, a waiting `initialize()` and a running control loop given
/// this signaler stop.
#[pyclass(module = "sas_robot_driver_gazebo", name = "ShutdownSignaler", frozen)]
pub(crate) struct ShutdownSignaler {
    pub(crate) token: ShutdownToken,
}

#[pymethods]
impl ShutdownSignaler {
    #[new]
    fn new() -> Self {
        ShutdownSignaler {
            token: ShutdownToken::new(),
        }
    }

    /// True once `shutdown()` was called.
    fn should_shutdown(&self) -> bool {
        self.token.is_triggered()
    }

    /// Asks everything watching this signaler to stop. Idempotent.
    fn shutdown(&self) {
        self.token.trigger();
    }

    fn __repr__(&self) -> String {
        format!(
            "ShutdownSignaler(should_shutdown={})",
            self.should_shutdown()
        )
    }
}

/// A robot simulated in Gazebo, seen through gz-transport.
#[pyclass(module = "sas_robot_driver_gazebo", name = "RobotDriverGazebo", frozen)]
pub(crate) struct RobotDriverGazebo {
    pub(crate) core: DropReleased<Arc<Core>>,
    /// The signaler given at construction (or a private one): it cancels `initialize()`.
    pub(crate) shutdown: ShutdownToken,
    /// Sends zero at a velocity/effort target's timeout when nothing else forwards.
    command_timer: CommandTimer,
}

fn arg_type_error(position: &str, expected: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let type_name = got
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!(
        "RobotDriverGazebo(): {position} must be a {expected}, got {type_name}."
    ))
}

#[pymethods]
impl RobotDriverGazebo {
    /// `RobotDriverGazebo(configuration)`, or `RobotDriverGazebo(shutdown_signaler,
    /// configuration)` as the original was called.
    #[new]
    #[pyo3(signature = (*args, configuration = None, shutdown_signaler = None))]
    fn new(
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        configuration: Option<&Bound<'_, PyAny>>,
        shutdown_signaler: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (signaler, configuration) = match (args.len(), configuration, shutdown_signaler) {
            (1, None, signaler) => (signaler.cloned(), args.get_item(0)?),
            (2, None, None) => (Some(args.get_item(0)?), args.get_item(1)?),
            (0, Some(configuration), signaler) => (signaler.cloned(), configuration.clone()),
            (0, None, _) => {
                return Err(PyTypeError::new_err(
                    "RobotDriverGazebo(): missing the configuration \
                     (RobotDriverGazebo(configuration) or \
                     RobotDriverGazebo(shutdown_signaler, configuration)).",
                ))
            }
            _ => {
                return Err(PyTypeError::new_err(
                    "RobotDriverGazebo(): expected (configuration) or \
                     (shutdown_signaler, configuration).",
                ))
            }
        };
        let configuration = configuration
            .cast::<Configuration>()
            .map_err(|_| {
                arg_type_error(
                    "configuration",
                    "RobotDriverGazeboConfiguration",
                    &configuration,
                )
            })?
            .borrow()
            .to_core();
        let shutdown = match signaler {
            Some(signaler) => signaler
                .cast::<ShutdownSignaler>()
                .map_err(|_| arg_type_error("shutdown_signaler", "ShutdownSignaler", &signaler))?
                .get()
                .token
                .clone(),
            None => ShutdownToken::new(),
        };
        let core = released(py, || Core::new(configuration, None)).map_err(Error::from)?;
        Ok(RobotDriverGazebo {
            core: DropReleased::new(Arc::new(core)),
            shutdown,
            command_timer: CommandTimer::new(),
        })
    }

    /// A copy of the configuration the driver was built with.
    #[getter]
    fn configuration(&self) -> Configuration {
        self.core.configuration().clone().into()
    }

    /// Advertises the joint command topics and subscribes to the joint states. Needs no
    /// running Gazebo. Does nothing if already connected.
    fn connect(&self, py: Python<'_>) -> Result<()> {
        Ok(released(py, || self.core.connect())?)
    }

    /// Waits until every joint has been seen with its limits, then captures the limits.
    /// Returns early with RuntimeError if the shutdown signaler fires or `disconnect()` is
    /// called meanwhile, with TimeoutError after `initialize_timeout_sec`; Ctrl-C raises
    /// KeyboardInterrupt. The GIL is released while waiting.
    fn initialize(&self, py: Python<'_>) -> Result<()> {
        let cancel = ShutdownToken::new();
        let core = &self.core;
        let (result, interruption) =
            released_interruptible(py, &cancel, Some(&self.shutdown), || {
                core.initialize_with(&cancel)
            });
        match interruption {
            Interruption::Raised(raised) => Err(raised.into()),
            Interruption::None => Ok(result?),
        }
    }

    /// Refuses getters and targets again (Gazebo keeps its last command). Safe in any state.
    fn deinitialize(&self, py: Python<'_>) {
        released(py, || self.core.deinitialize());
    }

    /// Unsubscribes and unadvertises; a waiting `initialize()` fails. Safe in any state.
    fn disconnect(&self, py: Python<'_>) {
        released(py, || self.core.disconnect());
    }

    /// Latest joint positions (rad or m), float64, in `joint_names` order.
    fn get_joint_positions<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        let values = released(py, || self.core.get_joint_positions())?;
        self.warn_if_non_finite(py, &values)?;
        Ok(f64_array(py, &values))
    }

    /// Latest joint velocities, float64, in `joint_names` order.
    fn get_joint_velocities<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        let values = released(py, || self.core.get_joint_velocities())?;
        self.warn_if_non_finite(py, &values)?;
        Ok(f64_array(py, &values))
    }

    /// Latest joint efforts (Gazebo's `axis1.force`), float64, in `joint_names` order.
    fn get_joint_torques<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        let values = released(py, || self.core.get_joint_torques())?;
        self.warn_if_non_finite(py, &values)?;
        Ok(f64_array(py, &values))
    }

    /// The joints whose latest state from Gazebo has a NaN or infinite position, velocity or
    /// effort, e.g. `["elbow_joint position nan"]`; empty while all are finite. The getters
    /// pass such values on as Gazebo sent them, with a RuntimeWarning naming them.
    fn get_non_finite_joints(&self, py: Python<'_>) -> Vec<String> {
        released(py, || self.core.non_finite_joints())
    }

    /// `(lower, upper)` limits captured by `initialize()`; ±inf for unbounded joints.
    #[allow(clippy::type_complexity)]
    fn get_joint_limits<'py>(
        &self,
        py: Python<'py>,
    ) -> Result<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let (lower, upper) = released(py, || self.core.get_joint_limits())?;
        Ok((f64_array(py, &lower), f64_array(py, &upper)))
    }

    /// The latest Gazebo message as cached, in any state (before the first message: NaN
    /// values, `sequence` 0, `sim_time_sec` and `age_sec` None): positions, velocities and
    /// efforts of one message together, its simulation time, how long ago it arrived, and
    /// how many messages arrived so far.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (snapshot, age) = released(py, || {
            let snapshot = self.core.snapshot();
            let age = snapshot.age();
            (snapshot, age)
        });
        let dict = PyDict::new(py);
        dict.set_item("positions", f64_array(py, &snapshot.positions))?;
        dict.set_item("velocities", f64_array(py, &snapshot.velocities))?;
        dict.set_item("efforts", f64_array(py, &snapshot.efforts))?;
        dict.set_item("sequence", snapshot.sequence)?;
        dict.set_item(
            "sim_time_sec",
            snapshot
                .sim_time
                .map(|t| t.sec as f64 + f64::from(t.nsec) * 1e-9),
        )?;
        dict.set_item("age_sec", age.map(|age| age.as_secs_f64()))?;
        Ok(dict)
    }

    /// Checks the target (length, finite values, limits under `limit_policy`) and sends it
    /// to Gazebo at once; a running control loop keeps re-sending it.
    fn set_target_joint_positions(
        &self,
        py: Python<'_>,
        target_joint_positions_rad: &Bound<'_, PyAny>,
    ) -> Result<()> {
        let values = f64_vector(
            target_joint_positions_rad,
            "RobotDriverGazebo::set_target_joint_positions",
        )?;
        released(py, || {
            self.core.set_target_joint_positions(&values)?;
            self.core.forward_targets()
        })?;
        Ok(())
    }

    /// Checks the velocity target (length, finite values, a JointController subscribed to
    /// every joint's `cmd_vel`, `velocity_limits` under `limit_policy`) and sends it to Gazebo
    /// at once. Without a new one within `command_timeout_sec`, zero velocity is sent.
    fn set_target_joint_velocities(
        &self,
        target_joint_velocities: &Bound<'_, PyAny>,
    ) -> Result<()> {
        self.set_rate_target(Command::Velocities, target_joint_velocities)
    }

    /// Checks the effort target (as velocities, against `effort_limits` and the
    /// ApplyJointForce topics `cmd_force`) and sends it to Gazebo at once. Without a new one
    /// within `command_timeout_sec`, zero effort is sent.
    fn set_target_joint_forces(&self, target_joint_forces: &Bound<'_, PyAny>) -> Result<()> {
        self.set_rate_target(Command::Forces, target_joint_forces)
    }

    fn __repr__(&self) -> String {
        let configuration = self.core.configuration();
        format!(
            "RobotDriverGazebo(joint_names={:?}, joint_states_topic={:?}, state={:?})",
            configuration.joint_names,
            configuration.joint_states_topic,
            self.core.state()
        )
    }
}

impl RobotDriverGazebo {
    /// Sets a velocity or effort target and sends it at once; the command timer zeroes it
    /// unless a new one comes within `command_timeout_sec`.
    fn set_rate_target(&self, command: Command, target: &Bound<'_, PyAny>) -> Result<()> {
        let py = target.py();
        let method = format!("RobotDriverGazebo::{command}");
        let values = f64_vector(target, &method)?;
        released(py, || {
            self.core.set_target(command, &values)?;
            self.command_timer.target_set(&self.core);
            self.core.forward_targets()
        })?;
        Ok(())
    }

    /// A RuntimeWarning naming the joints when a getter returns a non-finite value (Gazebo's,
    /// passed on as received). Python's warning filters decide how often it shows (once per
    /// call site by default).
    fn warn_if_non_finite(&self, py: Python<'_>, values: &[f64]) -> PyResult<()> {
        if values.iter().all(|v| v.is_finite()) {
            return Ok(());
        }
        let joints = released(py, || self.core.non_finite_joints());
        let message = std::ffi::CString::new(format!(
            "RobotDriverGazebo: Gazebo's latest joint state has non-finite values ({}); they \
             are returned as received",
            joints.join(", ")
        ))
        .unwrap_or_default();
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
            &message,
            1,
        )
    }
}
