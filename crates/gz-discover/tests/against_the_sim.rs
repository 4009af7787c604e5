//! discover() against gz-joint-sim running the shipped worlds in this process, over real
//! loopback gz-transport (the end-to-end run with the bridge node is in tests/node).

use std::time::Duration;

use gz_discover::{discover, Controller, Options, Robot};
use gz_joint_sim::{SimOptions, World};
use gz_transport::{MsgsPrefix, Node, NodeOptions};

fn run(world: &str, prefix: MsgsPrefix, partition: &str) -> Vec<Robot> {
    test_support::loopback_only();
    let path = format!("{}/../../sdf/{world}", env!("CARGO_MANIFEST_DIR"));
    let partition = format!("gzdisc-{}-{partition}", std::process::id());
    let sim = World::load_with_resource_paths(path, &[])
        .unwrap()
        .start(SimOptions {
            msgs_prefix: prefix,
            partition: Some(partition.clone()),
            ..Default::default()
        })
        .unwrap();
    let node = Node::with_options(NodeOptions {
        partition: Some(partition),
        ..Default::default()
    })
    .unwrap();
    let robots = discover(
        &node,
        &Options {
            timeout: Duration::from_secs(30),
            ..Default::default()
        },
    );
    sim.stop();
    robots
}

/// What `run` finds, which must be exactly one robot.
fn the_one_robot(world: &str, prefix: MsgsPrefix, partition: &str) -> Robot {
    let mut robots = run(world, prefix, partition);
    assert_eq!(robots.len(), 1, "{robots:?}");
    robots.remove(0)
}

/// The config.yaml block of the UR3e `robot` sets the topic prefix `key` (and not
/// `other_key`) and says each of its six joints offers `mode`.
fn assert_yaml_offers(robot: &Robot, mode: &str, key: &str, other_key: &str) {
    let yaml = gz_discover::config_yaml(std::slice::from_ref(robot), "p");
    println!("{yaml}");
    assert!(yaml.contains(&format!("    {key}: \"/model/ur3e/joint/\"\n")));
    assert!(!yaml.contains(other_key));
    assert_eq!(
        yaml.matches(&format!("  # offers {mode}\n")).count(),
        6,
        "{yaml}"
    );
}

#[test]
fn both_arms_of_longboy_are_found_with_their_controllers() {
    let r = the_one_robot("longboy_world.sdf", MsgsPrefix::Gz, "longboy");
    assert_eq!(r.model, "longboy");
    assert_eq!(r.joints.len(), 13);
    assert_eq!(r.joints[0], "joint1");
    assert_eq!(r.joints[12], "wrist_3_joint");
    assert_eq!(r.command_prefix, "/model/longboy/joint/");
    assert_eq!(r.msgs_prefix, MsgsPrefix::Gz);
    assert_eq!(r.controllers, vec![Controller::Listening; 13]);
}

#[test]
fn a_fortress_world_is_found_with_the_ignition_prefix() {
    let r = the_one_robot("fortress/r820_world.sdf", MsgsPrefix::Ignition, "fortress");
    assert_eq!(r.model, "r820");
    assert_eq!(r.msgs_prefix, MsgsPrefix::Ignition);
    assert_eq!(
        r.joint_states_topic,
        "/world/r820_world/model/r820/model/r820_position_controller/model/r820/joint_state"
    );
    assert_eq!(r.controllers, vec![Controller::Listening; 7]);
}

#[test]
fn the_velocity_world_offers_velocity_on_every_joint() {
    let r = the_one_robot("ur3e_velocity_world.sdf", MsgsPrefix::Gz, "velocity");
    assert_eq!(r.joints.len(), 6);
    assert_eq!(r.velocity_prefix, "/model/ur3e/joint/");
    for i in 0..6 {
        assert_eq!(r.modes(i), ["velocity"], "{}", r.joints[i]);
    }
    assert_yaml_offers(
        &r,
        "velocity",
        "joint_velocities_topic_prefix",
        "joint_forces_topic_prefix",
    );
}

#[test]
fn the_effort_world_offers_effort_on_every_joint() {
    let r = the_one_robot("ur3e_effort_world.sdf", MsgsPrefix::Gz, "effort");
    assert_eq!(r.force_prefix, "/model/ur3e/joint/");
    assert_eq!(r.controllers, vec![Controller::Missing; 6]);
    assert_eq!(r.velocity_controllers, vec![Controller::Missing; 6]);
    assert_eq!(r.force_controllers, vec![Controller::Listening; 6]);
    assert_yaml_offers(
        &r,
        "effort",
        "joint_forces_topic_prefix",
        "joint_velocities_topic_prefix",
    );
}

#[test]
fn position_worlds_offer_position_only() {
    let r = the_one_robot("ur3e_world.sdf", MsgsPrefix::Gz, "position");
    for i in 0..6 {
        assert_eq!(r.modes(i), ["position"]);
    }
    let yaml = gz_discover::config_yaml(std::slice::from_ref(&r), "p");
    assert!(!yaml.contains("offers") && !yaml.contains("joint_velocities_topic_prefix"));
}
