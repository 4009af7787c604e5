use sas_robot_driver_gazebo::DriverError;

use crate::WatchdogFault;

use crate::ParameterError;

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
    #[error("RobotDriverROS: cannot create the control loop's timer: {0}")]
    LoopTimer(#[source] std::io::Error),
    /// The executor thread could not be started.
    #[error("RobotDriverROS: cannot start the executor thread: {0}")]
    ExecutorThread(#[source] std::io::Error),
}
