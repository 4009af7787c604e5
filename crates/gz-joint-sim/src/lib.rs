//! gz-joint-sim: a small, exact stand-in for the joint part of Gazebo (gz-sim). It loads the
//! same SDF worlds users run in gz-sim, runs their JointPositionController, JointController,
//! ApplyJointForce and JointStatePublisher systems on a fixed-step clock, and speaks
//! gz-transport exactly as Gazebo does: joint position, velocity and force commands
//! (`Double`) in, joint states (`Model`) and the world clock (`Clock`) out, and the world's
//! own services: world control (`/world/<w>/control`: pause, step, reset, run to a time) and
//! `set_pose` for its top-level models, whose poses go out on `/world/<w>/pose/info`
//! (`Pose_V`). There is no collision, contact or gravity: each joint is a 1-DOF body.
//!
//! ```no_run
//! let world = gz_joint_sim::World::load("sdf/ur3e_world.sdf")?;
//! let sim = world.start(gz_joint_sim::SimOptions::default())?;
//! println!("t = {:?}, elbow at {:?}", sim.sim_time(), sim.joint_position("elbow_joint"));
//! sim.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod control;
mod messages;
mod plant;
pub mod sdf;
mod sim;
pub mod topics;
pub mod ur3e_world;
mod world_control;

pub use control::{ControlMode, PidGains};
pub use sdf::{
    ApplyJointForceSpec, AxisSpec, JointControllerSpec, JointKind, JointSpec,
    JointStateTopicNaming, LoadError, Location, ModelSpec, PoseSpec, PositionControllerSpec,
    StatePublisherSpec, World,
};
pub use sim::{
    EffortReport, JointSnapshot, SimHandle, SimOptions, StartError, Timing, DEFAULT_POSE_RATE,
};
pub use world_control::ResetBehaviour;
