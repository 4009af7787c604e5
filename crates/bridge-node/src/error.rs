use sas_robot_driver_gazebo::DriverError;

use rclrs::DeclarationError;

use crate::WatchdogFault;

/// Every error of the ROS side. Per-period problems (a refused target, a failed publication)
/// are not errors: the loop logs them, rate-limited, and goes on.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// A node parameter is missing, mistyped or invalid.
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// The ROS-side configuration is invalid.
    #[error("RobotDriverROS: {0}")]
    Configuration(String),
    /// A publisher or subscription could not be created.
    #[error("RobotDriverROS: cannot create the {kind} on {topic:?}: {source}")]
    Topic {
        /// `publisher` or `subscription`.
        kind: &'static str,
        /// The topic as given (before resolution).
        topic: String,
        /// rclrs' reason.
        source: rclrs::RclrsError,
    },
    /// A `set/*` subscription (taken on the DDS listener thread) could not be created.
    #[error("RobotDriverROS: cannot create the subscription on {topic:?}: {source}")]
    Subscription {
        /// The topic as given (before resolution).
        topic: String,
        /// Why it could not.
        source: listener_subscription::Error,
    },
    /// The driver failed (connect, or initialize other than by shutdown).
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// `control_loop` was called while it was already running.
    #[error("RobotDriverROS: control_loop() of {robot_name:?} is already running")]
    AlreadyRunning {
        /// The robot whose loop runs.
        robot_name: String,
    },
    /// The watchdog stopped the robot (it holds its last measured position).
    #[error("RobotDriverROS: the watchdog of {robot_name:?} stopped the robot ({held}): {fault}")]
    Watchdog {
        /// The robot stopped.
        robot_name: String,
        /// Why.
        fault: WatchdogFault,
        /// What was done to hold it (`holding its last measured position`, or why not).
        held: String,
    },
    /// The timer the robot's loop sleeps on could not be created.
    #[error("RobotDriverROS: cannot create the control loop's timer of {robot_name:?}: {source}")]
    LoopTimer {
        /// The robot whose loop it is.
        robot_name: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// Starting robot group `robot` of a multi-robot node failed: which robot, then what.
    #[error("robot {robot:?}: {error}")]
    InRobot {
        /// The robot's (or composite's) group name.
        robot: String,
        /// What failed.
        error: Box<BridgeError>,
    },
    /// The executor thread could not be started.
    #[error("RobotDriverROS: cannot start the executor thread: {0}")]
    ExecutorThread(#[source] std::io::Error),
}

/// A parameter that is missing, has the wrong type or an unusable value.
#[derive(Debug, thiserror::Error)]
pub enum ParameterError {
    /// A mandatory parameter has no value.
    #[error(
        "parameter {name:?} is missing: node {node} needs {expected}. Set it in the params \
         file block keyed by the node name ({node}: ros__parameters: …) or with \
         `--ros-args -p {name}:=<value>`."
    )]
    Missing {
        /// The parameter (with its group, e.g. `r820_sim.joint_names`).
        name: String,
        /// What it must be, with an example.
        expected: &'static str,
        /// The node's fully qualified name.
        node: String,
    },
    /// The value given has another type than the parameter's.
    #[error("parameter {name:?} must be {expected}, but it is {given}.")]
    WrongType {
        /// The parameter.
        name: String,
        /// What it must be, with an example.
        expected: &'static str,
        /// The type and value given.
        given: String,
    },
    /// The value has the right type but cannot be used.
    #[error("parameter {name:?} is invalid: {problem}")]
    Invalid {
        /// The parameter.
        name: String,
        /// Why.
        problem: String,
    },
    /// rclrs refused the declaration for another reason (e.g. declared twice on one node).
    #[error("parameter {name:?} cannot be declared: {source}")]
    Declaration {
        /// The parameter.
        name: String,
        /// rclrs' reason.
        source: DeclarationError,
    },
}
