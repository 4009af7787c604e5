//! Velocity targets through a composite: the UR3e of `sdf/ur3e_velocity_world.sdf` (run in
//! this process) as two parts of three joints each, on one shared node. A composite target
//! is split across the parts, checked all or nothing, moves every joint at its velocity, and
//! is set to zero at each part's command timeout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{
    Command, CompositePart, DriverError, JointSnapshot, LimitPolicy, PartOwnership, RobotDriver,
    RobotDriverComposite, RobotDriverGazebo, RobotDriverGazeboConfiguration, ShutdownToken,
};

use crate::support::{node_in, start_world, unique_partition};

const ARM: [&str; 3] = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint"];
const WRIST: [&str; 3] = ["wrist_1_joint", "wrist_2_joint", "wrist_3_joint"];
const PREFIX: &str = "/model/ur3e/joint/";
const STATES: &str =
    "/world/ur3e_velocity_world/model/ur3e/model/ur3e_velocity_controller/model/ur3e/joint_state";

/// Waits (bounded) until `done` holds for the composite's snapshot.
fn wait_for(composite: &RobotDriverComposite, what: &str, done: impl Fn(&JointSnapshot) -> bool) {
    let snapshot = || {
        let mut snapshot = JointSnapshot::new(0);
        composite.read_snapshot(&mut snapshot);
        snapshot
    };
    test_support::wait_for(what, Duration::from_secs(30), snapshot, done);
}

#[test]
fn a_composite_splits_velocity_targets_and_each_part_stops_at_its_timeout() {
    let partition = unique_partition("composite_velocity");
    let _sim = start_world("ur3e_velocity_world.sdf", &partition);
    let node = node_in(&partition);
    let part = |joints: [&str; 3], limits: Vec<f64>| {
        let mut config = RobotDriverGazeboConfiguration::new(joints, PREFIX, STATES);
        config.initialize_timeout = Some(Duration::from_secs(60));
        config.limit_policy = LimitPolicy::Refuse;
        config.velocity_limits = limits;
        config.command_timeout = Duration::from_millis(200);
        Arc::new(RobotDriverGazebo::new(config, Some(node.clone())).unwrap())
    };
    let arm = part(ARM, vec![std::f64::consts::PI; 3]);
    let wrist = part(WRIST, Vec::new());
    let composite = RobotDriverComposite::new(
        vec![
            CompositePart::new("arm", arm.clone()),
            CompositePart::new("wrist", wrist.clone()),
        ],
        PartOwnership::Owned,
    )
    .unwrap();
    composite.connect().unwrap();
    composite.initialize_with(&ShutdownToken::new()).unwrap();

    // Out of the arm's limit: refused, and the wrist got nothing either.
    let err = composite
        .set_target(Command::Velocities, &[0.0, 0.0, 4.0, 0.3, 0.0, 0.0])
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "arm: RobotDriverGazebo::set_target_joint_velocities: value 2 (elbow_joint) = 4 \
             is outside the velocity limits"
        ),
        "{err}"
    );
    assert_eq!(composite.command_deadline(), None);
    let err = composite
        .set_target(Command::Velocities, &[0.0; 5])
        .unwrap_err();
    assert!(matches!(
        err,
        DriverError::CompositeTargetLength {
            command: Command::Velocities,
            ..
        }
    ));

    let target = [0.2, 0.0, -0.3, 0.0, 0.4, 0.0];
    composite.set_target(Command::Velocities, &target).unwrap();
    assert!(composite.command_deadline().is_some());
    assert!(composite.forward_targets().unwrap());
    wait_for(&composite, "every joint at its velocity", |s| {
        s.velocities
            .iter()
            .zip(target)
            .all(|(v, t)| (v - t).abs() < 1e-9)
    });
    // No new target: each part sends zero at its timeout once asked to forward then.
    let deadline = composite.command_deadline().unwrap();
    while Instant::now() < deadline {
        std::thread::sleep(deadline - Instant::now());
    }
    assert!(composite.forward_targets().unwrap());
    assert_eq!(composite.command_deadline(), None);
    wait_for(&composite, "every joint stopped", |s| {
        s.velocities.iter().all(|&v| v == 0.0)
    });
}
