//! A simulator replaced under a running driver: a second gz-joint-sim on the same topics
//! while the first still runs, then the first stopped. The driver keeps one source of joint
//! states, follows the new one once the old one is silent, and the new simulator gets the
//! latest target although the forward mode would not send an unchanged one for an hour.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gz_joint_sim::SimHandle;
use sas_robot_driver_gazebo::{
    ForwardMode, RobotDriverGazebo, RobotDriverGazeboConfiguration, SimTime,
};

use crate::support::{start_ur3e_world, unique_partition, PREFIX, STATES, UR3E_JOINTS};

const PATIENCE: Duration = Duration::from_secs(30);

/// Calls `forward_targets` every 2 ms (a control loop) until `done()` holds or `timeout`.
fn run_until(
    driver: &RobotDriverGazebo,
    timeout: Duration,
    what: &str,
    mut done: impl FnMut() -> bool,
) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "{what}: not within {timeout:?}");
        driver.forward_targets().unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    start.elapsed()
}

fn sim_seconds(time: Option<SimTime>) -> f64 {
    time.expect("gz-joint-sim stamps its joint states")
        .as_secs_f64()
}

#[test]
fn a_second_simulator_gets_the_target_and_takes_over_when_the_first_stops() {
    let partition = unique_partition("takeover");
    let first = start_ur3e_world(&partition);
    let mut config = RobotDriverGazeboConfiguration::new(UR3E_JOINTS, PREFIX, STATES);
    config.partition = Some(partition.clone());
    config.initialize_timeout = Some(PATIENCE);
    config.forward_mode = ForwardMode::OnChangeWithKeepalive(Duration::from_secs(3600));
    let driver = Arc::new(RobotDriverGazebo::new(config, None).unwrap());
    driver.connect().unwrap();
    driver.initialize().unwrap();

    let mut target = driver.get_joint_positions().unwrap();
    target[2] += 0.05; // elbow_joint, reached in 0.2 s at the controllers' 0.25 rad/s
    driver.set_target_joint_positions(&target).unwrap();
    let reached = |sim: &SimHandle| {
        sim.joint_position("elbow_joint")
            .is_some_and(|q| (q - target[2]).abs() < 1e-3)
    };
    run_until(
        &driver,
        PATIENCE,
        "the first simulator reaches the target",
        || reached(&first),
    );
    // The first simulator's clock gets well ahead of the second's, so that the switch shows as
    // the stamps going back (the takeover itself takes a few hundred milliseconds).
    std::thread::sleep(Duration::from_millis(1100));
    // From here on only a new subscription makes the driver send the unchanged target again.
    assert!(
        !driver.forward_targets().unwrap(),
        "unchanged, keepalive of an hour"
    );

    // A second simulator on the same topics, started from the world's initial positions.
    let second = start_ur3e_world(&partition);
    let sent_in = run_until(
        &driver,
        PATIENCE,
        "the second simulator gets the target",
        || reached(&second),
    );
    eprintln!("second simulator reached the re-sent target {sent_in:?} after it started");
    assert!(
        driver.foreign_joint_states() > 0,
        "the second simulator's joint states are dropped while the first sends"
    );
    let before_stop = driver.snapshot();
    let first_time = sim_seconds(before_stop.sim_time);
    assert!(
        first_time > sim_seconds(Some(to_sim_time(second.sim_time()))),
        "the stream still comes from the first (older) simulator"
    );

    // The first simulator stops: the second one's states are taken once it was silent.
    let stopped = Instant::now();
    first.stop();
    let mut snapshot = driver.snapshot();
    let switched_in = run_until(
        &driver,
        PATIENCE,
        "the stream switches to the second",
        || {
            driver.read_snapshot(&mut snapshot);
            sim_seconds(snapshot.sim_time) < first_time
        },
    );
    eprintln!(
        "joint states from the second simulator {:?} after the first stopped",
        stopped.elapsed().min(switched_in)
    );
    assert!(
        switched_in < Duration::from_secs(2),
        "switched after {switched_in:?}"
    );
    driver.disconnect();
    second.stop();
}

fn to_sim_time(duration: Duration) -> SimTime {
    SimTime {
        sec: duration.as_secs() as i64,
        nsec: duration.subsec_nanos() as i32,
    }
}
