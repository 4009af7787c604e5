//! RobotDriverComposite over two RobotDriverGazebo parts that share one gz-transport node,
//! against gz-joint-sim running `sdf/longboy_world.sdf` (R820 + UR3e, one 13-joint model) in
//! this process: the same layout as the original benchmark's composed `longboy_sim`.

use std::f64::consts::PI;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{
    Command, CompositePart, DriverError, DriverState, ErrorKind, ForwardMode, JointSnapshot,
    LimitPolicy, PartOwnership, RobotDriver, RobotDriverComposite, RobotDriverGazebo,
    RobotDriverGazeboConfiguration, ShutdownToken, TargetOutcome,
};

use crate::support::{node_in, start_world, unique_partition};

const R820_JOINTS: [&str; 7] = [
    "joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7",
];
use gz_joint_sim::ur3e_world::JOINTS as UR3E_JOINTS;
const PREFIX: &str = "/model/longboy/joint/";
const STATES: &str = "/world/longboy_world/model/longboy/model/longboy_position_controller/model/longboy/joint_state";

fn start_longboy_world(partition: &str) -> gz_joint_sim::SimHandle {
    start_world("longboy_world.sdf", partition)
}

/// The R820 (refusing out-of-limit targets, forwarding only changes) and the UR3e parts of
/// the longboy model, on one shared node.
fn parts(partition: &str) -> (Arc<RobotDriverGazebo>, Arc<RobotDriverGazebo>) {
    let node = node_in(partition);
    let mut r820 = RobotDriverGazeboConfiguration::new(R820_JOINTS, PREFIX, STATES);
    r820.initialize_timeout = Some(Duration::from_secs(60));
    r820.forward_mode = ForwardMode::OnChangeWithKeepalive(Duration::from_secs(3600));
    let mut ur3e = RobotDriverGazeboConfiguration::new(UR3E_JOINTS, PREFIX, STATES);
    ur3e.initialize_timeout = Some(Duration::from_secs(60));
    ur3e.limit_policy = LimitPolicy::Refuse;
    (
        Arc::new(RobotDriverGazebo::new(r820, Some(node.clone())).unwrap()),
        Arc::new(RobotDriverGazebo::new(ur3e, Some(node)).unwrap()),
    )
}

fn composite_of(
    r820: &Arc<RobotDriverGazebo>,
    ur3e: &Arc<RobotDriverGazebo>,
    ownership: PartOwnership,
) -> RobotDriverComposite {
    RobotDriverComposite::new(
        vec![
            CompositePart::new("r820_sim", r820.clone()),
            CompositePart::new("ur3e_sim", ur3e.clone()),
        ],
        ownership,
    )
    .unwrap()
}

/// Waits (bounded) until `done` holds for a fresh composite snapshot.
fn wait_for_composite(
    composite: &RobotDriverComposite,
    part: &RobotDriverGazebo,
    what: &str,
    done: impl Fn(&JointSnapshot) -> bool,
) -> JointSnapshot {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut snapshot = JointSnapshot::new(0);
    composite.read_snapshot(&mut snapshot);
    while !done(&snapshot) {
        assert!(
            Instant::now() < deadline,
            "{what}: not within 30 s; last {snapshot:?}"
        );
        part.wait_for_sample_after(part.snapshot().sequence, Duration::from_secs(1));
        composite.read_snapshot(&mut snapshot);
    }
    snapshot
}

#[test]
fn a_composite_of_shared_parts_concatenates_their_state_and_splits_targets_all_or_nothing() {
    let partition = unique_partition("composite_shared");
    let sim = start_longboy_world(&partition);
    let (r820, ur3e) = parts(&partition);
    let composite = composite_of(&r820, &ur3e, PartOwnership::Shared);

    let err = composite
        .set_target(Command::Positions, &[0.0; 13])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::State, "{err}");

    // The composite brings up parts whose own loops have not (idempotent for both).
    composite.connect().unwrap();
    composite.initialize_with(&ShutdownToken::new()).unwrap();
    assert_eq!(r820.state(), DriverState::Initialized);
    assert_eq!(ur3e.state(), DriverState::Initialized);
    let names: Vec<String> = R820_JOINTS
        .iter()
        .chain(&UR3E_JOINTS)
        .map(|j| j.to_string())
        .collect();
    assert_eq!(composite.joint_names(), names);
    assert_eq!(RobotDriver::joint_count(&composite), 13);

    let (lower, upper) = composite.get_joint_limits().unwrap();
    let (r820_lower, r820_upper) = r820.get_joint_limits().unwrap();
    assert_eq!(lower[..7], r820_lower[..]);
    assert_eq!(upper[..7], r820_upper[..]);
    assert_eq!(
        lower[7..],
        [
            -2.0 * PI,
            -2.0 * PI,
            -PI,
            -2.0 * PI,
            -2.0 * PI,
            f64::NEG_INFINITY
        ]
    );
    assert_eq!(upper[9], PI);

    // A composite target reaches both parts, and so the simulator.
    let target = [
        0.05, -0.05, 0.04, -0.04, 0.03, -0.03, 0.02, 0.1, -0.1, 0.08, -0.08, 0.06, -0.06,
    ];
    assert_eq!(
        composite.set_target(Command::Positions, &target).unwrap(),
        TargetOutcome::Accepted
    );
    assert!(
        composite.forward_targets().unwrap(),
        "a fresh target is forwarded at once"
    );
    assert!(
        !composite.forward_targets().unwrap(),
        "then the parts' loops forward it"
    );
    assert!(
        !r820.forward_targets().unwrap(),
        "the R820 part already sent this target"
    );
    let arrived = wait_for_composite(&composite, &r820, "the target", |s| {
        s.positions
            .iter()
            .zip(&target)
            .all(|(q, t)| (q - t).abs() < 1e-6)
            && s.velocities.iter().all(|v| *v == 0.0)
    });
    for (joint, expected) in names.iter().zip(&arrived.positions) {
        assert_eq!(sim.joint_position(joint), Some(*expected), "{joint}");
    }

    // At rest the composite's snapshot is exactly the parts' snapshots end to end.
    let (first, second) = (r820.snapshot(), ur3e.snapshot());
    let mut composed = JointSnapshot::new(0);
    composite.read_snapshot(&mut composed);
    assert_eq!(
        composed.positions,
        [&first.positions[..], &second.positions[..]].concat()
    );
    assert_eq!(
        composed.velocities,
        [&first.velocities[..], &second.velocities[..]].concat()
    );
    assert_eq!(
        composed.efforts,
        [&first.efforts[..], &second.efforts[..]].concat()
    );
    // The composite counts rounds of messages from every part: at most as many as the part
    // that received fewest (both parts read the same messages of the one model).
    assert!(composed.sequence > 0 && composed.sequence <= first.sequence.max(second.sequence));
    assert!(composed.sim_time.is_some() && composed.received_at.is_some());

    // A wrong total length is refused, naming the split.
    let err = composite
        .set_target(Command::Positions, &[0.0; 12])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "RobotDriverComposite::set_target_joint_positions: expected 13 values \
         (7 for r820_sim + 6 for ur3e_sim), got 12."
    );
    assert_eq!(err.kind(), ErrorKind::InvalidTarget);

    // A segment one part refuses leaves every part's target as it was.
    let mut refused = [0.2; 13];
    refused[9] = 4.0; // elbow_joint, limits ±π, and the UR3e part refuses
    let err = composite
        .set_target(Command::Positions, &refused)
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "ur3e_sim: RobotDriverGazebo::set_target_joint_positions: value 2 (elbow_joint) = 4"
        ),
        "{err}"
    );
    assert!(matches!(err, DriverError::Part { .. }));
    assert!(!composite.forward_targets().unwrap());
    assert!(
        !r820.forward_targets().unwrap(),
        "the R820 part got no new target"
    );
    let mut nan = target;
    nan[0] = f64::NAN;
    let err = composite.set_target(Command::Positions, &nan).unwrap_err();
    assert!(err.to_string().contains("value 0 (joint1) is NaN"), "{err}");
    assert!(
        !r820.forward_targets().unwrap(),
        "the R820 part got no new target"
    );

    // Shared parts outlive the composite's lifecycle.
    composite.deinitialize();
    composite.disconnect();
    assert_eq!(r820.state(), DriverState::Initialized);
    assert_eq!(ur3e.state(), DriverState::Initialized);
    assert_eq!(
        composite.get_joint_limits().unwrap_err().kind(),
        ErrorKind::State
    );
    sim.stop();
}

#[test]
fn a_composite_owns_its_parts_lifecycle_and_checks_given_limits() {
    let partition = unique_partition("composite_owned");
    let sim = start_longboy_world(&partition);
    let (r820, ur3e) = parts(&partition);

    let wrong = composite_of(&r820, &ur3e, PartOwnership::Owned)
        .with_joint_limits(vec![-1.0; 12], vec![1.0; 12]);
    wrong.connect().unwrap();
    let err = wrong.initialize_with(&ShutdownToken::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(
        err.to_string().contains("12 lower and 12 upper values, but the composed robots have 13 joints (7 for r820_sim + 6 for ur3e_sim)"),
        "{err}"
    );
    wrong.disconnect();
    assert_eq!(r820.state(), DriverState::Disconnected);

    let composite = composite_of(&r820, &ur3e, PartOwnership::Owned)
        .with_joint_limits(vec![-1.0; 13], vec![1.0; 13]);
    composite.connect().unwrap();
    composite.initialize_with(&ShutdownToken::new()).unwrap();
    assert_eq!(
        composite.get_joint_limits().unwrap(),
        (vec![-1.0; 13], vec![1.0; 13])
    );
    composite
        .set_target(Command::Positions, &[0.01; 13])
        .unwrap();
    // Owned parts are forwarded every period (the R820 part's own rule then applies).
    assert!(composite.forward_targets().unwrap());
    assert!(
        composite.forward_targets().unwrap(),
        "the UR3e part forwards every period"
    );
    composite.deinitialize();
    assert_eq!(ur3e.state(), DriverState::Connected);
    composite.disconnect();
    assert_eq!(ur3e.state(), DriverState::Disconnected);
    sim.stop();
}

#[test]
fn a_composite_needs_distinct_parts_and_its_initialize_is_cancelled_by_shutdown() {
    let partition = unique_partition("composite_cancel");
    let (r820, ur3e) = parts(&partition);
    let err = RobotDriverComposite::new(Vec::new(), PartOwnership::Owned)
        .err()
        .unwrap();
    assert!(err.to_string().contains("no robots to compose"), "{err}");
    let err = RobotDriverComposite::new(
        vec![
            CompositePart::new("r820_sim", r820.clone()),
            CompositePart::new("r820_sim", ur3e.clone()),
        ],
        PartOwnership::Owned,
    )
    .err()
    .unwrap();
    assert!(
        err.to_string().contains("\"r820_sim\" is composed twice"),
        "{err}"
    );

    // No simulator: the wait ends only when the token is triggered.
    let composite = Arc::new(composite_of(&r820, &ur3e, PartOwnership::Owned));
    composite.connect().unwrap();
    let token = ShutdownToken::new();
    let waiter = {
        let (composite, token) = (composite.clone(), token.clone());
        std::thread::spawn(move || composite.initialize_with(&token))
    };
    std::thread::sleep(Duration::from_millis(100));
    let triggered = Instant::now();
    token.trigger();
    let err = waiter.join().unwrap().unwrap_err();
    assert!(triggered.elapsed() < Duration::from_secs(1));
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert!(
        err.to_string()
            .starts_with("r820_sim: RobotDriverGazebo::initialize: shutdown"),
        "{err}"
    );
    composite.disconnect();
}
