//! gz-joint-sim: a small, exact stand-in for the joint part of Gazebo (gz-sim). It loads the
//! same SDF worlds users run in gz-sim, runs their JointPositionController and
//! JointStatePublisher systems on a fixed-step clock, and speaks gz-transport exactly as
//! Gazebo does: joint position commands (`Double`) in, joint states (`Model`) and the world
//! clock (`Clock`) out. There is no collision, contact or gravity: each joint is a 1-DOF body.

pub mod control;
pub mod sdf;
pub mod topics;

pub use control::{ControlMode, PidGains};
pub use sdf::{
    AxisSpec, JointKind, JointSpec, LoadError, Location, PositionControllerSpec,
    StatePublisherSpec, World,
};
