//! The SmartArmStack composer, `sas_robot_driver_ros_composer_node`: several robot drivers,
//! each reached over its own topics (`<name>/get/joint_states`, …), composed into one robot
//! whose topics are under the node's name. Works with any sas driver, ours or the original's.
//!
//! ```no_run
//! use std::sync::Arc;
//! use bridge_node::{ExecutorThread, RobotDriverRos, RobotDriverRosConfiguration};
//! use composer::RobotDriverClient;
//! use rclrs::{Context, CreateBasicExecutor, InitOptions};
//! use sas_driver_contract::{
//!     CompositePart, ForwardMode, PartOwnership, RobotDriverComposite, ShutdownToken,
//! };
//!
//! let context = Context::new(std::env::args(), InitOptions::new())?;
//! let executor = context.create_basic_executor();
//! let node = executor.create_node("longboy_sim")?;
//! let keepalive = ForwardMode::OnChangeWithKeepalive(std::time::Duration::from_secs(1));
//! let parts = ["r820_sim", "ur3e_sim"]
//!     .into_iter()
//!     .map(|name| {
//!         let client = RobotDriverClient::new(&node, name, None, keepalive)?;
//!         Ok(CompositePart::new(name, Arc::new(client)))
//!     })
//!     .collect::<Result<Vec<_>, composer::ClientError>>()?;
//! let composite = RobotDriverComposite::new(parts, PartOwnership::Owned)?;
//! let shutdown = ShutdownToken::new(); // trigger it from a signal handler
//! let bridge = RobotDriverRos::new(&node, Arc::new(composite), RobotDriverRosConfiguration::new(node.name()), shutdown)?;
//! let spinner = ExecutorThread::spawn(executor)?;
//! bridge.control_loop()?; // longboy_sim/get/joint_states: 13 joints, R820 first
//! spinner.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Key design decision: the composer is no special loop. A [`RobotDriverClient`] is a
//! [`RobotDriver`](sas_driver_contract::RobotDriver) whose robot is another driver's
//! topic surface (read by `sas-driver-client`, as the Python module's client reads it);
//! [`RobotDriverComposite`](sas_driver_contract::RobotDriverComposite) (in the driver
//! contract, free of ROS) concatenates any drivers and splits targets with a
//! total-length check; the bridge's `RobotDriverRos` runs the result like any robot. The
//! multi-robot node composes its own robots the same way, reading their caches instead of
//! their topics. Where the original composer busy-looped on `spin_some` while waiting for
//! its clients, split targets without checking their length (Eigen out of range on a short
//! one) and dropped velocities and efforts, here `initialize` waits on a condition variable
//! (woken by the messages and by the shutdown token), a wrong length is refused and the loop
//! goes on, and velocities and efforts are composed too.

#![warn(missing_docs)]

mod client;
mod params;
mod robot_parameters;

pub use client::{ClientError, RobotDriverClient};
pub use params::{help_rows as parameter_help_rows, ComposerParameters};
pub use robot_parameters::{read_joint_limits, JointLimits, RobotParameterFileError};
