//! The ROS 2 side of the Gazebo bridge: the SmartArmStack robot-driver topic surface
//! (`<robot_name>/get/joint_states`, `…/set/target_joint_positions`, …) and the control loop
//! that moves data between it and a [`RobotDriverGazebo`] (or any [`RobotDriver`], e.g. a
//! composite of robots) — the original's `RobotDriverROS` + `RobotDriverServer`, with its
//! watchdog (`set/watchdog_trigger`, checked once per period; a fault holds the robot where it
//! is) and `set/shutdown`, and a status per robot on `/diagnostics`; once per process, Gazebo's
//! clock on ROS `/clock` ([`ClockBridge`], `publish_clock`) for nodes on `use_sim_time`. The
//! node binary `sas_robot_driver_ros_gazebo_node` is a thin shell around this library; the
//! Python module and the multi-robot process reuse it unchanged.
//!
//! ```no_run
//! use std::sync::Arc;
//! use bridge_node::{ExecutorThread, NodeParameters, RobotDriverRos};
//! use rclrs::{Context, CreateBasicExecutor, InitOptions};
//! use sas_robot_driver_gazebo::{RobotDriverGazebo, ShutdownToken};
//!
//! let context = Context::new(std::env::args(), InitOptions::new())?;
//! let executor = context.create_basic_executor();
//! let node = executor.create_node("sas_robot_driver_ros_gazebo")?;
//! let parameters = NodeParameters::declare(&node)?;
//! let driver = Arc::new(RobotDriverGazebo::new(parameters.driver.clone(), None)?);
//! let shutdown = ShutdownToken::new(); // trigger it from a signal handler
//! let bridge = RobotDriverRos::new(&node, driver, parameters.ros.clone(), shutdown)?;
//! let spinner = ExecutorThread::spawn(executor)?; // subscriptions are served there
//! let statistics = bridge.control_loop()?; // until `shutdown` is triggered
//! spinner.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Key design decision: `get/joint_states` leaves from the driver's receive thread the moment
//! Gazebo's message is in the cache (a listener the driver calls after the write; rate-capped
//! to the loop's period, latest wins), so a report waits for no period and the loop thread,
//! sleeping on an alarm the receive path keeps moving, wakes only for work nobody else did
//! ([`JointStatesPublishing::Grid`] keeps the original's per-period publishing). Callbacks and
//! the loop run on different threads. The rclrs executor
//! spins on its own thread ([`ExecutorThread`]) and its subscription callbacks only store the
//! latest target in a one-slot mailbox; [`RobotDriverRos::control_loop`] runs on the caller's
//! thread on an absolute-deadline grid of the monotonic clock and never waits for a callback.
//! The original instead did everything on one thread (`spin_some` twice per period), and its
//! Python path held the interpreter lock while sleeping, which starved Gazebo's callback. A
//! caller may hold no lock while the loop runs (Python releases the GIL around it), and
//! nothing here is process-global, so several robots can share one executor and one
//! gz-transport node, each with its own loop thread and its own errors.

#![warn(missing_docs)]

mod error;
mod parameters;
mod process;
mod robot;
pub mod servers;

pub use error::{BridgeError, ParameterError};
pub use parameters::config::{
    JointStatesPublishing, LimitsPublishing, RobotDriverRosConfiguration, StaleJointStates,
    StampSource, TargetForwarding, DEFAULT_HEARTBEAT,
};
pub use parameters::help::{parameter_help_rows, parameters_help, use_sim_time_row};
pub use parameters::multi::{CompositeParameters, MultiRobotParameters};
pub use parameters::params::{
    help_table, help_value, DeclaredParameters, GzParameters, HelpRow, NodeParameters,
    ParameterReader, RobotDefaults, DEFAULT_THREAD_SAMPLING_TIME_SEC,
};
pub use process::clock::{ClockBridge, ClockParameters, SimTimeNotice};
pub use process::dds_profile::DdsProfile;
pub use process::executor_thread::ExecutorThread;
pub use process::log_route::{install_log_route, route_logs_to, LogRoute};
pub use process::multi_robot::{MultiRobot, RobotLoop};
pub use process::node_main::{run_bridge, run_node, serve_robot};
pub use process::program::{
    parameters_or_usage, program_main, run_ros_node, NodeExit, NodeRun, Program,
};
pub use process::ros_log::RosLogLayer;
pub use process::stop_signals::{
    StopSignals, Teardown, PARENT_DEATH_SIGNAL, STOP_SIGNALS, STOP_WITH_PARENT_VARIABLE,
    TEARDOWN_BOUND,
};
pub use robot::control_loop::RobotDriverRos;
pub use robot::counters::RobotCountersSnapshot;
pub use robot::messages::{multi_array, stamp_from_nanos};
pub use robot::schedule::DeadlineGrid;
pub use robot::statistics::LoopStatistics;
pub use robot::watchdog::WatchdogFault;

pub use sas_robot_driver_gazebo::{RobotDriver, RobotDriverGazebo, ShutdownToken};
