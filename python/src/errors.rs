//! The one place where Rust errors become Python exceptions.
//!
//! Bad input (an invalid configuration, a refused target, a bad option value) raises
//! `ValueError`; a call the driver's (or client's) state does not allow, a transport failure
//! or a cancelled wait raises `RuntimeError`; a timed-out wait raises `TimeoutError`. Messages
//! are the Rust errors' own, which follow the original C++ driver's.

use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::PyErr;
use sas_robot_driver_gazebo::{DriverError, ErrorKind};

/// Every error a binding call can return.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// From the driver core.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// An argument the binding itself rejects (e.g. an unknown option value).
    #[error("{0}")]
    InvalidArgument(String),
    /// A call the state does not allow (e.g. a closed client, a blacklisted method, nothing
    /// received yet).
    #[error("{0}")]
    #[cfg_attr(not(feature = "ros"), allow(dead_code))] // raised by the client (ROS only)
    NotAvailable(String),
    /// A wait that ran out of time.
    #[error("{0}")]
    #[cfg_attr(not(feature = "ros"), allow(dead_code))]
    TimedOut(String),
    /// Already a Python exception (a failed conversion, KeyboardInterrupt, …).
    #[error(transparent)]
    Python(#[from] PyErr),
    /// From the ROS side (crates/bridge-node).
    #[cfg(feature = "ros")]
    #[error(transparent)]
    Bridge(#[from] bridge_node::BridgeError),
    /// The ROS side of a `RobotDriverClient` could not be made.
    #[cfg(feature = "ros")]
    #[error(transparent)]
    ClientRos(#[from] crate::client_ros::ClientRosError),
    /// rclrs could not initialise a context from the arguments given.
    #[cfg(feature = "ros")]
    #[error("RobotDriverROS: cannot initialise ROS from the arguments given (check --ros-args): {source}")]
    RosInit { source: rclrs::RclrsError },
    /// rclrs could not create the node.
    #[cfg(feature = "ros")]
    #[error("RobotDriverROS: cannot create the node {name:?}: {source}")]
    RosNode {
        name: String,
        source: rclrs::RclrsError,
    },
}

impl Error {
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Error::InvalidArgument(message.into())
    }

    #[cfg_attr(not(feature = "ros"), allow(dead_code))]
    pub(crate) fn not_available(message: impl Into<String>) -> Self {
        Error::NotAvailable(message.into())
    }

    #[cfg_attr(not(feature = "ros"), allow(dead_code))]
    pub(crate) fn timed_out(message: impl Into<String>) -> Self {
        Error::TimedOut(message.into())
    }
}

fn driver_error(error: DriverError) -> PyErr {
    let message = error.to_string();
    match error.kind() {
        ErrorKind::Configuration | ErrorKind::InvalidTarget => PyValueError::new_err(message),
        ErrorKind::State | ErrorKind::Transport | ErrorKind::Cancelled => {
            PyRuntimeError::new_err(message)
        }
        ErrorKind::Timeout => PyTimeoutError::new_err(message),
    }
}

#[cfg(feature = "ros")]
fn bridge_error(error: bridge_node::BridgeError) -> PyErr {
    use bridge_node::BridgeError;
    match error {
        BridgeError::Driver(error) => driver_error(error),
        // Parameters, configuration and topic names (an invalid robot name) are input.
        BridgeError::Parameter(_) | BridgeError::Configuration(_) | BridgeError::Topic { .. } => {
            PyValueError::new_err(error.to_string())
        }
        BridgeError::Subscription { ref source, .. } => subscription_error(source, &error),
        BridgeError::InRobot { .. }
        | BridgeError::AlreadyRunning { .. }
        | BridgeError::ExecutorThread(_)
        | BridgeError::LoopTimer { .. }
        | BridgeError::Watchdog { .. } => PyRuntimeError::new_err(error.to_string()),
    }
}

#[cfg(feature = "ros")]
fn client_ros_error(error: crate::client_ros::ClientRosError) -> PyErr {
    use crate::client_ros::ClientRosError;
    match error {
        // Bad --ros-args, an invalid node name or topic prefix: input.
        ClientRosError::Init(_) | ClientRosError::Node { .. } | ClientRosError::Topic { .. } => {
            PyValueError::new_err(error.to_string())
        }
        ClientRosError::Subscription { ref source, .. } => subscription_error(source, &error),
        ClientRosError::Executor(_) => PyRuntimeError::new_err(error.to_string()),
    }
}

/// A subscription rcl refused (an invalid topic name) is input; a module built without the
/// node-handle link arguments is a defect of the build.
#[cfg(feature = "ros")]
fn subscription_error(
    source: &listener_subscription::Error,
    error: &dyn std::fmt::Display,
) -> PyErr {
    match source {
        listener_subscription::Error::NodeHandleUnknown { .. } => {
            PyRuntimeError::new_err(error.to_string())
        }
        _ => PyValueError::new_err(error.to_string()),
    }
}

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        match error {
            Error::Driver(error) => driver_error(error),
            Error::InvalidArgument(message) => PyValueError::new_err(message),
            Error::NotAvailable(message) => PyRuntimeError::new_err(message),
            Error::TimedOut(message) => PyTimeoutError::new_err(message),
            Error::Python(error) => error,
            #[cfg(feature = "ros")]
            Error::Bridge(error) => bridge_error(error),
            #[cfg(feature = "ros")]
            Error::ClientRos(error) => client_ros_error(error),
            #[cfg(feature = "ros")]
            error @ Error::RosInit { .. } => PyValueError::new_err(error.to_string()),
            #[cfg(feature = "ros")]
            error @ Error::RosNode { .. } => PyRuntimeError::new_err(error.to_string()),
        }
    }
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;
