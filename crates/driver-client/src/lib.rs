//! A client of a sas robot driver over its ROS 2 topics (what the original
//! `sas::RobotDriverClient` reads and writes): its one job is to see another driver through
//! `<prefix>/get/joint_states`, `get/joint_positions_min|max`, `get/home_states` and to
//! reach it on `<prefix>/set/target_joint_*`, for the composer's `RobotDriverClient` (a
//! [`RobotDriver`](sas_driver_contract::RobotDriver) a composite holds) and the Python
//! module's (a controller's).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::{Duration, Instant};
//! use rclrs::{Context, CreateBasicExecutor, InitOptions};
//! use sas_driver_client::{ClientState, Subscriptions, TargetPublishers, Topics};
//! use sas_driver_contract::{Command, ShutdownToken};
//!
//! let context = Context::new(std::env::args(), InitOptions::new())?;
//! let node = context.create_basic_executor().create_node("controller")?;
//! let topics = Topics::new("/ur3e_1");
//! let state = Arc::new(ClientState::new());
//! let _subscriptions = Subscriptions::new(&node, &topics, &state)?; // fill `state`
//! let targets = TargetPublishers::new(&node, &topics)?;
//! let deadline = Instant::now() + Duration::from_secs(10);
//! let joints = state.wait_until_ready(Some(deadline), &ShutdownToken::new())
//!     .map_err(|why| format!("{why:?} waiting for {}", state.missing(&topics).join(", ")))?;
//! let positions = state.read().expect("ready").positions;
//! assert_eq!(positions.len(), joints);
//! let message = ros_env::std_msgs::msg::rmw::Float64MultiArray {
//!     data: rosidl_runtime_rs::Sequence::from(positions.as_slice()),
//!     ..Default::default()
//! };
//! targets.of(Command::Positions).publish(&message)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Key design decision: the cheapest path from the wire to a reader. Each message is taken
//! on the DDS listener thread that received it (`listener-subscription`: no executor thread
//! wakes), a joint state read straight from its CDR bytes (no C message with its names and
//! arrays allocated 500 times a second), written into the contract's sequence lock, which
//! readers copy without a lock the writer could hold; limits and home states, which rarely
//! change, are swapped in whole (`ArcSwap`). Whoever waits (for a new state, for the robot
//! to be ready) sleeps on a condition variable the writer signals only while someone waits.
//! The binding decides the rest: its node and executor, what it refuses, how it reports.

#![warn(missing_docs)]

mod joint_state_cdr;
mod ros;
mod state;
mod topics;

pub use ros::{advertise, RosError, Subscriptions, TargetPublishers};
pub use state::{ClientState, JointStateMessage, JointStateRead, NotReady};
pub use topics::Topics;
