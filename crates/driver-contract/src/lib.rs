//! The sas robot driver contract, free of any transport: what a control loop needs from a
//! robot ([`RobotDriver`]), several drivers seen as one ([`RobotDriverComposite`]), and the
//! pieces every driver shares — the joint-state cache and its snapshot, target validation
//! (length, finiteness, limits), the command modes, the forwarding and limit policies, the
//! shutdown token and state listeners, and the errors.
//!
//! Its one job: let code that runs, composes or reaches robot drivers (the ROS node, the
//! composer, the Python module, clients of drivers over ROS) depend on the contract and not
//! on a simulator. The Gazebo driver (`sas-robot-driver-gazebo`, on gz-transport) implements
//! it and re-exports it, so its users see one crate.
//!
//! ```
//! use sas_driver_contract::{check_shape, Command, DriverError};
//!
//! let joints = vec!["shoulder".to_string(), "elbow".to_string()];
//! check_shape(Command::Positions, &joints, &[0.1, 0.2])?;
//! let refused = check_shape(Command::Positions, &joints, &[0.1, f64::NAN]).unwrap_err();
//! assert!(matches!(refused, DriverError::NonFiniteTarget { index: 1, .. }));
//! # Ok::<(), DriverError>(())
//! ```

#![warn(missing_docs)]

mod cache;
mod command;
mod composite;
mod error;
mod listeners;
mod policy;
mod robot_driver;
mod shutdown;
mod sim_time;
mod target;

pub use cache::{Interest, JointSample, JointSnapshot, JointStateCache};
pub use command::Command;
pub use composite::{CompositePart, PartOwnership, RobotDriverComposite};
pub use error::{DriverError, ErrorKind, TransportError};
pub use listeners::{StateListener, StateListenerGuard, StateListeners};
pub use policy::{duration_from_secs, ForwardMode, LimitPolicy, LONGEST_DURATION};
pub use robot_driver::{ReceiveReport, RobotDriver};
pub use shutdown::{ShutdownToken, TriggerListener};
pub use sim_time::SimTime;
pub use target::{
    apply_limits, check_limits, check_shape, Clamp, RateLimit, RateLimitedWarning, TargetOutcome,
};
