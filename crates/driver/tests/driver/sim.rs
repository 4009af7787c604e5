//! Against gz-joint-sim running `sdf/ur3e_world.sdf` in this process (its own node, the
//! same gz-transport wire as Gazebo).

use std::f64::consts::PI;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use gz_transport::MsgsPrefix;
use sas_robot_driver_gazebo::{
    DriverError, DriverState, ErrorKind, ForwardMode, JointSnapshot, LimitPolicy,
    RobotDriverGazebo, RobotDriverGazeboConfiguration, ShutdownToken, TargetOutcome,
};

use crate::log_capture::capture_logs;
use crate::repeating::Repeating;
use crate::support::{node_in, start_ur3e_world, unique_partition, PREFIX, STATES, UR3E_JOINTS};

/// The shipped controllers' `<cmd_max>`: joints move at this speed towards their target.
const CMD_MAX: f64 = 0.25;

/// A partition of the test's own, and the shipped UR3e world running in it.
fn ur3e_world(test: &str) -> (String, gz_joint_sim::SimHandle) {
    let partition = unique_partition(test);
    let sim = start_ur3e_world(&partition);
    (partition, sim)
}

fn ur3e_config(partition: &str) -> RobotDriverGazeboConfiguration {
    let mut config = RobotDriverGazeboConfiguration::new(UR3E_JOINTS, PREFIX, STATES);
    config.partition = Some(partition.to_string());
    config.initialize_timeout = Some(Duration::from_secs(60));
    config
}

fn connected(config: RobotDriverGazeboConfiguration) -> Arc<RobotDriverGazebo> {
    let driver = Arc::new(RobotDriverGazebo::new(config, None).unwrap());
    driver.connect().unwrap();
    driver
}

/// A connected driver in a partition without a simulator, configured with no timeout: its
/// `initialize()` waits until cancelled.
fn connected_to_nothing(test: &str) -> Arc<RobotDriverGazebo> {
    let mut config = ur3e_config(&unique_partition(test));
    config.initialize_timeout = None;
    connected(config)
}

fn initialized(config: RobotDriverGazeboConfiguration) -> Arc<RobotDriverGazebo> {
    let driver = connected(config);
    driver.initialize().unwrap();
    driver
}

/// A control loop on its own thread: forwards the latest target every 10 ms until dropped.
fn control_loop(driver: Arc<RobotDriverGazebo>) -> Repeating {
    Repeating::start(move || {
        driver.forward_targets().unwrap();
        thread::sleep(Duration::from_millis(10));
    })
}

/// Waits (bounded) until `done(snapshot)` holds for a fresh snapshot.
fn wait_for_snapshot(
    driver: &RobotDriverGazebo,
    timeout: Duration,
    what: &str,
    done: impl Fn(&JointSnapshot) -> bool,
) -> JointSnapshot {
    let deadline = Instant::now() + timeout;
    let mut snapshot = driver.snapshot();
    while !done(&snapshot) {
        assert!(
            Instant::now() < deadline,
            "{what}: not within {timeout:?}; last {snapshot:?}"
        );
        driver.wait_for_sample_after(snapshot.sequence, Duration::from_secs(1));
        driver.read_snapshot(&mut snapshot);
    }
    snapshot
}

fn seconds(snapshot: &JointSnapshot) -> f64 {
    snapshot
        .sim_time
        .expect("Gazebo stamps its joint states")
        .as_secs_f64()
}

#[test]
fn initialize_captures_the_worlds_limits_and_positions_match_the_simulator() {
    let (partition, sim) = ur3e_world("initialize_limits");
    let driver = initialized(ur3e_config(&partition));
    assert_eq!(driver.state(), DriverState::Initialized);

    let tau = 2.0 * PI;
    let (lower, upper) = driver.get_joint_limits().unwrap();
    assert_eq!(lower, [-tau, -tau, -PI, -tau, -tau, f64::NEG_INFINITY]);
    assert_eq!(upper, [tau, tau, PI, tau, tau, f64::INFINITY]);

    // At rest (the controllers hold the initial target), the two views agree exactly.
    let positions = driver.get_joint_positions().unwrap();
    for (joint, position) in UR3E_JOINTS.iter().zip(&positions) {
        assert_eq!(Some(*position), sim.joint_position(joint), "{joint}");
    }
    assert_eq!(driver.get_joint_velocities().unwrap().len(), 6);
    assert_eq!(driver.get_joint_torques().unwrap().len(), 6);
    assert!(driver.missing_joints().is_empty());
    driver.deinitialize();
    driver.disconnect();
    sim.stop();
}

#[test]
fn a_target_moves_the_simulated_joints_at_the_controllers_0_25_rad_per_s() {
    let (partition, sim) = ur3e_world("target_moves");
    let driver = initialized(ur3e_config(&partition));
    let start = driver.get_joint_positions().unwrap();
    // Large enough that the motion lasts over 3 s: a test thread descheduled for a while
    // still finds both snapshots mid-motion.
    let offsets = [1.0, -1.0, 0.9, -0.9, 0.8, -0.8];
    let target: Vec<f64> = start.iter().zip(offsets).map(|(q, d)| q + d).collect();
    assert_eq!(
        driver.set_target_joint_positions(&target).unwrap(),
        TargetOutcome::Accepted
    );
    let forwarding = control_loop(driver.clone());

    // Two snapshots half a simulated second apart, both mid-motion for every joint.
    let moving = |s: &JointSnapshot, from: f64, to: f64| {
        (0..6).all(|j| {
            let travelled = (s.positions[j] - start[j]).abs();
            travelled > from && travelled < to
        })
    };
    let first = wait_for_snapshot(&driver, Duration::from_secs(30), "motion starts", |s| {
        moving(s, 0.02, 0.4)
    });
    let second = wait_for_snapshot(&driver, Duration::from_secs(30), "half a second", |s| {
        seconds(s) >= seconds(&first) + 0.5
    });
    assert!(moving(&second, 0.1, 0.79), "{second:?}");
    let dt = seconds(&second) - seconds(&first);
    for j in 0..6 {
        let speed = (second.positions[j] - first.positions[j]) / dt;
        let expected = CMD_MAX * offsets[j].signum();
        assert!(
            (speed - expected).abs() < 0.01,
            "{}: {speed} rad/s, expected {expected}",
            UR3E_JOINTS[j]
        );
        assert!(
            (second.velocities[j] - expected).abs() < 0.01,
            "{}: reported velocity {}",
            UR3E_JOINTS[j],
            second.velocities[j]
        );
    }

    // The joints arrive and stop; the driver then reports what the simulator holds.
    let arrived = wait_for_snapshot(&driver, Duration::from_secs(30), "target reached", |s| {
        (0..6).all(|j| (s.positions[j] - target[j]).abs() < 1e-6 && s.velocities[j] == 0.0)
    });
    let latest = driver.wait_for_sample_after(arrived.sequence, Duration::from_secs(10));
    assert!(latest.is_some(), "joint states stopped");
    let positions = driver.get_joint_positions().unwrap();
    for (j, joint) in UR3E_JOINTS.iter().enumerate() {
        assert_eq!(Some(positions[j]), sim.joint_position(joint), "{joint}");
    }
    drop(forwarding);
    driver.disconnect();
    sim.stop();
}

/// Without a control loop, one forward right after `initialize()` must reach the simulator:
/// initialize waits until the controllers' subscriptions are connected (a fresh driver's
/// node each round, as a restarted bridge or a Python user's script would be).
#[test]
fn a_target_forwarded_once_right_after_initialize_reaches_the_simulator() {
    let (partition, sim) = ur3e_world("first_target");
    for round in 0..10 {
        let driver = initialized(ur3e_config(&partition));
        assert!(
            driver.unsubscribed_command_topics().is_empty(),
            "round {round}: {:?}",
            driver.unsubscribed_command_topics()
        );
        let mut target = driver.get_joint_positions().unwrap();
        let goal = if round % 2 == 0 { 0.02 } else { 0.0 };
        target[0] = goal;
        driver.set_target_joint_positions(&target).unwrap();
        assert!(driver.forward_targets().unwrap());
        test_support::wait_for(
            &format!("round {round}: shoulder_pan_joint at the one target sent, {goal}"),
            Duration::from_secs(30),
            || sim.joint_position("shoulder_pan_joint").unwrap(),
            |q| (q - goal).abs() <= 1e-3,
        );
        driver.disconnect();
    }
    sim.stop();
}

#[test]
fn invalid_targets_are_refused_and_the_previous_target_stays_in_force() {
    let (partition, sim) = ur3e_world("invalid_targets");
    let mut config = ur3e_config(&partition);
    config.limit_policy = LimitPolicy::Refuse;
    let driver = initialized(config);
    let start = driver.get_joint_positions().unwrap();
    let target: Vec<f64> = start.iter().map(|q| q + 0.1).collect();
    driver.set_target_joint_positions(&target).unwrap();

    let err = driver.set_target_joint_positions(&target[..5]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "RobotDriverGazebo::set_target_joint_positions: expected 6 values, got 5."
    );
    assert_eq!(err.kind(), ErrorKind::InvalidTarget);
    let mut bad = target.clone();
    for non_finite in [f64::NAN, f64::INFINITY] {
        bad[2] = non_finite;
        assert!(matches!(
            driver.set_target_joint_positions(&bad),
            Err(DriverError::NonFiniteTarget { index: 2, .. })
        ));
    }
    bad[2] = 4.0; // elbow_joint is limited to ±π
    let err = driver.set_target_joint_positions(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "RobotDriverGazebo::set_target_joint_positions: value 2 (elbow_joint) = 4 is outside the joint limits [{}, {}].",
            -PI, PI
        )
    );

    // Every refusal left the first target in force: the joints go there.
    let forwarding = control_loop(driver.clone());
    wait_for_snapshot(
        &driver,
        Duration::from_secs(30),
        "first target reached",
        |s| (0..6).all(|j| (s.positions[j] - target[j]).abs() < 1e-6),
    );
    let elbow = sim.joint_position("elbow_joint").unwrap();
    assert!(
        (elbow - target[2]).abs() < 1e-6,
        "the simulator saw a refused target: elbow_joint at {elbow}, target {}",
        target[2]
    );
    drop(forwarding);
    driver.disconnect();
    sim.stop();
}

#[test]
fn a_missing_joint_keeps_initialize_waiting_logs_its_name_and_times_out_naming_it() {
    let (partition, sim) = ur3e_world("missing_joint");
    let mut config = ur3e_config(&partition);
    config.joint_names.push("gripper_joint".into());
    config.initialize_timeout = Some(Duration::from_secs(5));
    let driver = connected(config);

    let (result, logs) = capture_logs(|| driver.initialize());
    let err = result.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    match &err {
        DriverError::InitializeTimeout { missing, .. } => assert_eq!(missing, &["gripper_joint"]),
        other => panic!("expected a timeout, got {other}"),
    }
    assert!(
        err.to_string().contains("still missing: gripper_joint."),
        "{err}"
    );
    // Messages did arrive, but none carried every joint: none was taken as a state (the six
    // present joints' values would otherwise be stamped as a complete state), and only the
    // missing joint is named.
    assert!(driver.incomplete_joint_states() > 0);
    assert_eq!(driver.snapshot().sequence, 0);
    assert_eq!(driver.missing_joints(), ["gripper_joint"]);
    assert!(
        logs.contains("missing: gripper_joint."),
        "the progress log does not name the joint:\n{logs}"
    );
    assert_eq!(driver.state(), DriverState::Connected);
    assert!(matches!(
        driver.get_joint_positions(),
        Err(DriverError::NotInitialized { .. })
    ));
    driver.disconnect();
    sim.stop();
}

#[test]
fn a_shutdown_token_cancels_a_waiting_initialize_at_once() {
    let driver = connected_to_nothing("cancel");
    let token = ShutdownToken::new();
    let trigger = {
        let token = token.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            let triggered_at = Instant::now();
            token.trigger();
            triggered_at
        })
    };
    let err = driver.initialize_with(&token).unwrap_err();
    let returned_at = Instant::now();
    let triggered_at = trigger.join().unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "RobotDriverGazebo::initialize: shutdown while waiting for joint states on [{STATES}]."
        )
    );
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    // Woken by the trigger, not by the next 2 s progress tick.
    let delay = returned_at.saturating_duration_since(triggered_at);
    assert!(
        delay < Duration::from_millis(1500),
        "returned {delay:?} after the trigger"
    );
    driver.disconnect();
}

#[test]
fn disconnect_during_initialize_ends_the_wait() {
    let driver = connected_to_nothing("disconnect_wakes");
    let waiter = {
        let driver = driver.clone();
        thread::spawn(move || driver.initialize())
    };
    thread::sleep(Duration::from_millis(300));
    driver.disconnect();
    let err = waiter.join().unwrap().unwrap_err();
    assert!(
        matches!(err, DriverError::InitializeDisconnected { .. }),
        "{err}"
    );
}

#[test]
fn callers_waiting_in_initialize_together_all_succeed() {
    // A robot's loop and a composite of the robot both wait for the same driver; whichever
    // initializes it, the other must see success, not "disconnected".
    let partition = unique_partition("concurrent_initialize");
    let driver = connected(ur3e_config(&partition));
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let driver = driver.clone();
            thread::spawn(move || driver.initialize())
        })
        .collect();
    // All four are (very likely) waiting when the joint states start: they wake together.
    thread::sleep(Duration::from_millis(200));
    let sim = start_ur3e_world(&partition);
    for waiter in waiters {
        waiter.join().unwrap().unwrap();
    }
    assert_eq!(driver.state(), DriverState::Initialized);
    driver.disconnect();
    sim.stop();
}

#[test]
fn lifecycle_calls_out_of_order_are_refused_with_clear_errors_and_disconnect_is_idempotent() {
    let partition = unique_partition("lifecycle");
    let driver = RobotDriverGazebo::new(ur3e_config(&partition), None).unwrap();
    assert_eq!(driver.state(), DriverState::Disconnected);
    assert_eq!(
        driver.initialize().unwrap_err().to_string(),
        "RobotDriverGazebo::initialize: not connected; call connect() first."
    );
    assert_eq!(
        driver.forward_targets().unwrap_err().to_string(),
        "RobotDriverGazebo::forward_targets: not connected; call connect() first."
    );
    assert_eq!(
        driver.get_joint_positions().unwrap_err().to_string(),
        "RobotDriverGazebo: joint positions not initialized."
    );
    assert_eq!(
        driver.get_joint_limits().unwrap_err().to_string(),
        "RobotDriverGazebo: joint limits not initialized."
    );
    assert!(matches!(
        driver.set_target_joint_positions(&[0.0; 6]),
        Err(DriverError::TargetBeforeInitialize { .. })
    ));
    driver.disconnect();
    driver.deinitialize();
    driver.connect().unwrap();
    driver.connect().unwrap();
    assert_eq!(driver.state(), DriverState::Connected);
    // Connected without a target: nothing to forward yet.
    assert!(!driver.forward_targets().unwrap());
    driver.disconnect();
    driver.disconnect();
    // The command topics were released: connecting again advertises them again.
    driver.connect().unwrap();
    driver.disconnect();
}

#[test]
fn two_drivers_share_one_node_and_a_mismatching_node_is_refused() {
    let (partition, sim) = ur3e_world("shared_node");
    let node = node_in(&partition);
    let arm = RobotDriverGazeboConfiguration {
        joint_names: UR3E_JOINTS[..3].iter().map(|j| j.to_string()).collect(),
        ..ur3e_config(&partition)
    };
    let wrist = RobotDriverGazeboConfiguration {
        joint_names: UR3E_JOINTS[3..].iter().map(|j| j.to_string()).collect(),
        ..ur3e_config(&partition)
    };
    let drivers = [arm, wrist].map(|config| {
        let driver = RobotDriverGazebo::new(config, Some(node.clone())).unwrap();
        driver.connect().unwrap();
        driver.initialize().unwrap();
        driver
    });
    assert_eq!(drivers[0].get_joint_positions().unwrap().len(), 3);
    assert_eq!(drivers[1].get_joint_positions().unwrap().len(), 3);

    let mut fortress = ur3e_config(&partition);
    fortress.msgs_prefix = MsgsPrefix::Ignition;
    let err = RobotDriverGazebo::new(fortress, Some(node.clone()))
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "RobotDriverGazebo: the shared node's msgs_prefix is \"gz.msgs.\" but the configuration asks for \"ignition.msgs.\"."
    );
    let mut elsewhere = ur3e_config(&partition);
    elsewhere.partition = Some("elsewhere".into());
    assert_eq!(
        RobotDriverGazebo::new(elsewhere, Some(node))
            .err()
            .unwrap()
            .kind(),
        ErrorKind::Configuration
    );
    drivers.iter().for_each(RobotDriverGazebo::disconnect);
    sim.stop();
}

#[test]
fn the_driver_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RobotDriverGazebo>();
    assert_send_sync::<ShutdownToken>();
}

#[test]
fn forward_modes_clamp_warnings_and_deinitialize_decide_what_is_published() {
    let (partition, sim) = ur3e_world("forward_modes");

    // EveryPeriod (default): every call publishes once a target exists.
    let every = initialized(ur3e_config(&partition));
    assert!(!every.forward_targets().unwrap(), "no target yet");
    let q = every.get_joint_positions().unwrap();
    every.set_target_joint_positions(&q).unwrap();
    assert!(every.forward_targets().unwrap());
    assert!(every.forward_targets().unwrap());
    every.deinitialize();
    assert_eq!(every.state(), DriverState::Connected);
    assert!(
        !every.forward_targets().unwrap(),
        "deinitialize drops the target"
    );
    assert!(matches!(
        every.set_target_joint_positions(&q),
        Err(DriverError::TargetBeforeInitialize { .. })
    ));
    every.disconnect();

    // OnChangeWithKeepalive: a new target, or the keepalive, triggers a publication.
    let keepalive = Duration::from_millis(500);
    let mut config = ur3e_config(&partition);
    config.forward_mode = ForwardMode::OnChangeWithKeepalive(keepalive);
    let on_change = initialized(config);
    on_change.set_target_joint_positions(&q).unwrap();
    assert!(on_change.forward_targets().unwrap(), "first publication");
    assert!(
        !on_change.forward_targets().unwrap(),
        "unchanged, within keepalive"
    );
    on_change.set_target_joint_positions(&q).unwrap();
    assert!(
        on_change.forward_targets().unwrap(),
        "a new target is published"
    );
    assert!(!on_change.forward_targets().unwrap());
    thread::sleep(keepalive + Duration::from_millis(50));
    assert!(on_change.forward_targets().unwrap(), "keepalive");

    // Clamping warns once per second however many targets are clamped.
    let mut over = q.clone();
    over[2] = 10.0; // elbow_joint: ±π
    let (outcomes, logs) = capture_logs(|| {
        (0..5)
            .map(|_| on_change.set_target_joint_positions(&over).unwrap())
            .collect::<Vec<_>>()
    });
    assert!(outcomes
        .iter()
        .all(|o| *o == TargetOutcome::Clamped { joints: 1 }));
    assert_eq!(
        logs.matches("clamped 1 value(s) into the joint limits, first 2 (elbow_joint) = 10")
            .count(),
        1,
        "{logs}"
    );
    on_change.disconnect();
    sim.stop();
}
