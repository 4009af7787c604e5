//! Shared test plumbing: unique partitions, the real `ign topic` CLI, the shipped worlds, nodes
//! and messages of the test's own. Loopback-only discovery and child processes that die with
//! the test are the workspace's (test-support).

use std::process::Command;

use test_support::loopback_only;
pub use test_support::ChildGuard;

pub use test_support::IGN_TOPIC;

/// A partition no other test (or test run) shares.
pub fn unique_partition(test: &str) -> String {
    loopback_only();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("driver_{}_{test}_{nanos}", std::process::id())
}

/// The real gz-transport 11 CLI (Fortress) in `partition`, on loopback.
pub fn ign_topic(partition: &str) -> Command {
    let mut command = Command::new(IGN_TOPIC);
    test_support::in_partition(&mut command, partition);
    command
}

/// The shipped UR3e world (sdf/ur3e_world.sdf): its joints, command prefix and joint-state topic.
pub use gz_joint_sim::ur3e_world::{
    COMMAND_PREFIX as PREFIX, JOINTS as UR3E_JOINTS, JOINT_STATES as STATES,
};

/// gz-joint-sim running the shipped world `sdf/<file>` in `partition`.
pub fn start_world(file: &str, partition: &str) -> gz_joint_sim::SimHandle {
    let path = format!("{}/../../sdf/{file}", env!("CARGO_MANIFEST_DIR"));
    gz_joint_sim::World::load_with_resource_paths(&path, &[])
        .unwrap()
        .start(gz_joint_sim::SimOptions {
            partition: Some(partition.to_string()),
            ..Default::default()
        })
        .unwrap()
}

/// gz-joint-sim running the shipped UR3e world in `partition`.
pub fn start_ur3e_world(partition: &str) -> gz_joint_sim::SimHandle {
    start_world("ur3e_world.sdf", partition)
}

/// A gz-transport node of the test's own in `partition` (a driver's shared node, or the
/// test playing Gazebo).
pub fn node_in(partition: &str) -> gz_transport::Node {
    gz_transport::Node::with_options(gz_transport::NodeOptions {
        partition: Some(partition.to_string()),
        ..Default::default()
    })
    .unwrap()
}

/// What Gazebo's JointStatePublisher sends for a model of one joint `j` at `position`,
/// limits ±`limit`.
pub fn joint_j_model(position: f64, limit: f64) -> gz_transport::msgs::Model {
    use gz_transport::msgs::{Axis, Joint, Model};
    Model {
        joint: vec![Joint {
            name: "j".into(),
            axis1: Some(Axis {
                position,
                limit_lower: -limit,
                limit_upper: limit,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}
