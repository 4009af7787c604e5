//! The Gazebo robot driver core of the bridge: receives Gazebo's joint states (`gz.msgs.Model`
//! from a JointStatePublisher) into a joint-state cache and forwards target joint positions,
//! velocities and efforts to Gazebo's JointPositionController, JointController and
//! ApplyJointForce topics (`gz.msgs.Double`, one per joint; [`Command`]). A velocity or effort
//! command is set back to zero once its client sends no newer one within the command timeout
//! (`forward_targets` sends the zero; [`RobotDriverGazebo::command_deadline`] says when). It
//! knows nothing of ROS or Python; the ROS node, the Python module and the multi-robot
//! composer bind it.
//!
//! ```no_run
//! use sas_robot_driver_gazebo::{RobotDriverGazebo, RobotDriverGazeboConfiguration, ShutdownToken};
//!
//! let config = RobotDriverGazeboConfiguration::new(
//!     ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint"],
//!     "/model/ur3e/joint/",
//!     "/world/ur3e_world/model/ur3e/joint_state",
//! );
//! let driver = RobotDriverGazebo::new(config, None)?;
//! driver.connect()?;
//! // Blocks until every joint was seen and the controllers' subscriptions are connected.
//! driver.initialize_with(&ShutdownToken::new())?;
//! let q = driver.get_joint_positions()?;
//! driver.set_target_joint_positions(&q)?;
//! driver.forward_targets()?; // the control loop calls this every period
//! driver.disconnect();
//! # Ok::<(), sas_robot_driver_gazebo::DriverError>(())
//! ```
//!
//! Key design decision: Gazebo's messages are written into the cache on the transport's own
//! receive thread, and that write never waits for anyone. The original's Python path held the
//! interpreter lock while its control loop slept, so the Gazebo callback starved and joints were
//! reported seconds late. Here the cache is a sequence lock ([`JointStateCache`]): the single
//! writer publishes a whole message at once, readers copy a consistent snapshot without a lock
//! and retry in the rare case a write overlapped their copy. A mutex and an `ArcSwap` were
//! measured against it (`benches/cache_choice.rs`, figures in the crate's README): at robot
//! arm sizes the sequence lock reads several times faster than both, alone and against a
//! 10 kHz writer, its writer never waits for a reader, and neither side allocates.
//!
//! One source of joint states: the driver takes them from one publisher at a time, so two
//! simulators on one topic (a restarted one while the killed one is not yet forgotten, a
//! second one started by mistake) never interleave. The current publisher keeps the stream
//! while it sends; once it has been silent for 250 ms the next publisher that sends takes
//! over (logged with the silence). Other publishers' messages meanwhile are dropped, counted
//! ([`RobotDriverGazebo::foreign_joint_states`]) and each such publisher is named once in a
//! warning. A new simulator also gets the latest target: after any new subscriber connects to
//! a command topic, `forward_targets` re-sends the target it published last every call for one
//! second. And the first target reaches Gazebo even when it is sent only once:
//! `initialize` waits (up to 2 s, then warns naming the topics) until every command topic's
//! subscriber connection is complete, not just announced.
//!
//! # The way of a state and of a target
//!
//! Each has one path, and no thread on it waits for another:
//!
//! ```text
//! state   Gazebo JointStatePublisher ──gz.msgs.Model──▶ gz-transport receive thread
//!           └─ ModelReceiver::receive: matched by joint name, written whole into the
//!              JointStateCache (sequence lock: the writer never waits)
//!           └─ StateListeners::notify, same thread: a binding's listener reads the new
//!              snapshot (a lock-free copy; a composite combines its parts' here) and acts on
//!              it — the ROS node publishes get/joint_states from this thread
//!         Python getters, control loops: read_snapshot / the cache, whenever they like
//!
//! target  client ──set/target_joint_*──▶ the binding (the ROS node: on the DDS listener
//!         thread that took it, or the loop each period under target_forwarding: periodic)
//!           └─ set_target(Command, values): validated (length, finite, limits, mode) and
//!              stored — the one way a target enters a driver
//!           └─ forward_targets: one gz.msgs.Double per joint on its controller's topic, when
//!              the forwarding rule says so (new target, keepalive, a new subscriber, a
//!              velocity/effort command's timeout zero from the CommandTimer)
//! ```
//!
//! The contract it implements ([`RobotDriver`], the cache, target validation, the errors)
//! is the `sas-driver-contract` crate's, re-exported here.
//!
//! Everything here is `Send + Sync`: one [`RobotDriverGazebo`] can sit in an `Arc` shared by a
//! control loop, a ROS executor and Python threads.

#![warn(missing_docs)]

mod command_timer;
mod config;
mod driver;
#[cfg(test)]
#[path = "../tests/driver/log_capture.rs"]
mod log_capture;
mod rate_commands;
mod receive;
mod reset;
mod robot_driver;
mod source;

pub use command_timer::CommandTimer;
pub use config::{RobotDriverGazeboConfiguration, DEFAULT_COMMAND_TIMEOUT};
pub use driver::{DriverState, RobotDriverGazebo};
pub use receive::ModelReceiver;
pub use reset::WorldReset;
// The sas driver contract this driver implements, re-exported: a user of the Gazebo driver
// needs one crate.
pub use sas_driver_contract::*;
