//! Against the real C++ gz-transport 11 CLI (Ignition Fortress, `ignition.msgs.*`): a
//! `Model` it publishes fills the cache; the `Double`s we forward are what it echoes.

use std::time::{Duration, Instant};

use gz_transport::MsgsPrefix;
use sas_robot_driver_gazebo::{
    DriverError, LimitPolicy, RobotDriverGazebo, RobotDriverGazeboConfiguration, SimTime,
    TargetOutcome,
};

use crate::support::{ign_topic, unique_partition, ChildGuard};

const STATES: &str = "/test/model/arm/joint_state";
const PREFIX: &str = "/model/arm/joint/";
const MODEL: &str = r#"header { stamp { sec: 7 nsec: 500 } }
name: "arm"
joint { name: "other" axis1 { position: 9 } }
joint { name: "b" axis1 { position: -0.25 velocity: 0.5 force: 2 limit_lower: -2 limit_upper: 2 } }
joint { name: "a" axis1 { position: 0.5 velocity: -1 force: 3 limit_lower: -1 limit_upper: 1 } }"#;

fn driver(test: &str, policy: LimitPolicy) -> RobotDriverGazebo {
    let mut config = RobotDriverGazeboConfiguration::new(["a", "b"], PREFIX, STATES);
    config.msgs_prefix = MsgsPrefix::Ignition;
    config.partition = Some(unique_partition(test));
    config.limit_policy = policy;
    config.initialize_timeout = Some(Duration::from_secs(60));
    RobotDriverGazebo::new(config, None).unwrap()
}

/// `ign topic -p` publishes once, about 0.8 s after advertising, and the message is lost if
/// our subscription connects later: repeat it until the cache has a message (bounded).
fn publish_model_until_received(driver: &RobotDriverGazebo) {
    let partition = driver.node().partition().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let mut publisher = ChildGuard::spawn(ign_topic(&partition).args([
            "-t",
            STATES,
            "-m",
            "ignition.msgs.Model",
            "-p",
            MODEL,
        ]));
        let waited = Instant::now();
        while waited.elapsed() < Duration::from_secs(4) && !publisher.exited() {
            if driver
                .wait_for_sample_after(0, Duration::from_millis(100))
                .is_some()
            {
                return;
            }
        }
        if driver
            .wait_for_sample_after(0, Duration::from_millis(500))
            .is_some()
        {
            return;
        }
    }
    panic!("no Model from `ign topic -p` reached the driver within 60 s");
}

#[test]
fn a_model_published_by_ign_topic_fills_the_cache_and_initializes_the_driver() {
    let driver = driver("model_fills_cache", LimitPolicy::Clamp);
    driver.connect().unwrap();
    publish_model_until_received(&driver);

    let snapshot = driver.snapshot();
    assert_eq!(snapshot.positions, [0.5, -0.25]);
    assert_eq!(snapshot.velocities, [-1.0, 0.5]);
    assert_eq!(snapshot.efforts, [3.0, 2.0]);
    assert_eq!(snapshot.limits_lower, [-1.0, -2.0]);
    assert_eq!(snapshot.limits_upper, [1.0, 2.0]);
    assert_eq!(snapshot.sim_time, Some(SimTime { sec: 7, nsec: 500 }));
    assert!(snapshot.sequence >= 1);
    assert!(!snapshot.is_stale(Duration::from_secs(60)));

    // Every joint is in the cache, so initialize returns without another message, after
    // waiting 2 s for the command topics' subscribers (no controllers here; it warns).
    let started = Instant::now();
    driver.initialize().unwrap();
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        driver.unsubscribed_command_topics(),
        [
            format!("{PREFIX}a/0/cmd_pos"),
            format!("{PREFIX}b/0/cmd_pos")
        ]
    );
    assert_eq!(driver.get_joint_positions().unwrap(), [0.5, -0.25]);
    assert_eq!(driver.get_joint_velocities().unwrap(), [-1.0, 0.5]);
    assert_eq!(driver.get_joint_torques().unwrap(), [3.0, 2.0]);
    assert_eq!(
        driver.get_joint_limits().unwrap(),
        (vec![-1.0, -2.0], vec![1.0, 2.0])
    );
    driver.disconnect();
}

/// Forwards until `ign topic -e` on each joint's command topic prints the expected value.
fn assert_echoed(driver: &RobotDriverGazebo, expected: [f64; 2]) {
    let partition = driver.node().partition().to_string();
    let echoes: Vec<ChildGuard> = ["a", "b"]
        .iter()
        .map(|joint| {
            let topic = format!("{PREFIX}{joint}/0/cmd_pos");
            ChildGuard::spawn(ign_topic(&partition).args(["-e", "-t", &topic]))
        })
        .collect();
    for (echo, value) in echoes.iter().zip(expected) {
        let wanted = format!("data: {value}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = false;
        while !seen && Instant::now() < deadline {
            driver.forward_targets().unwrap();
            seen = echo
                .wait_line(Duration::from_millis(50), |line| line.trim() == wanted)
                .is_some();
        }
        assert!(seen, "`ign topic -e` never printed {wanted:?} within 60 s");
    }
}

#[test]
fn forwarded_targets_are_echoed_by_ign_topic_clamped_and_never_nan() {
    let driver = driver("targets_echoed", LimitPolicy::Clamp);
    driver.connect().unwrap();
    publish_model_until_received(&driver);
    driver.initialize().unwrap();

    assert_eq!(
        driver.set_target_joint_positions(&[0.25, -0.5]).unwrap(),
        TargetOutcome::Accepted
    );
    assert_echoed(&driver, [0.25, -0.5]);

    // Out of limits under Clamp: stored and forwarded clamped.
    assert_eq!(
        driver.set_target_joint_positions(&[1.5, -0.5]).unwrap(),
        TargetOutcome::Clamped { joints: 1 }
    );
    assert_echoed(&driver, [1.0, -0.5]);

    // NaN is refused; what goes on the wire is still the previous target.
    let err = driver
        .set_target_joint_positions(&[f64::NAN, 0.0])
        .unwrap_err();
    assert!(matches!(err, DriverError::NonFiniteTarget { index: 0, .. }));
    assert_echoed(&driver, [1.0, -0.5]);
    driver.disconnect();
}
