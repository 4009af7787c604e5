//! Switching a robot between position, velocity and effort targets, against a gz-transport
//! peer playing Gazebo (its JointStatePublisher and the three controllers' topics): the new
//! mode's command is sent, the old rate command is set to zero, and a position target is no
//! longer re-sent while another mode is in force.
//!
//! "Not sent" is judged by order, not by waiting: the driver's messages reach the peer over one
//! connection in the order they were sent, so once a later message arrived, anything sent
//! before it has arrived too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gz_transport::msgs::{Double, Model};
use gz_transport::{MessageInfo, Node, Publisher, Subscription};
use sas_robot_driver_gazebo::{RobotDriverGazebo, RobotDriverGazeboConfiguration};

use test_support::wait_for;

use crate::support::{joint_j_model, node_in, unique_partition};

const STATES: &str = "/modes/joint_state";
const PREFIX: &str = "/modes/";
const PATIENCE: Duration = Duration::from_secs(20);
/// Joint `j`'s command topics under the default prefixes (the positions prefix for all three).
const POSITION: &str = "/modes/j/0/cmd_pos";
const VELOCITY: &str = "/modes/j/cmd_vel";
const FORCE: &str = "/modes/j/cmd_force";

/// Every command the peer received, in order: (topic, value).
type Log = Arc<Mutex<Vec<(&'static str, f64)>>>;

/// "Gazebo" in a partition of its own: the joint-state publisher, and a log of the commands
/// it received on `topics`.
struct Gazebo {
    partition: String,
    states: Publisher<Model>,
    log: Log,
    _subscriptions: Vec<Subscription>,
    _node: Node,
}

impl Gazebo {
    fn listening_on(test: &str, topics: &[&'static str]) -> Gazebo {
        let partition = unique_partition(test);
        let node = node_in(&partition);
        let log: Log = Arc::default();
        let subscriptions = topics
            .iter()
            .map(|&topic| listen(&node, &log, topic))
            .collect();
        Gazebo {
            partition,
            states: node.advertise::<Model>(STATES).unwrap(),
            log,
            _subscriptions: subscriptions,
            _node: node,
        }
    }

    /// The joint `j` robot in this partition, with a timeout long enough that no command is
    /// zeroed in the middle of a test.
    fn config(&self) -> RobotDriverGazeboConfiguration {
        let mut config = RobotDriverGazeboConfiguration::new(["j"], PREFIX, STATES);
        config.partition = Some(self.partition.clone());
        config.command_timeout = Duration::from_secs(60);
        config
    }
}

/// Connects `driver` and initializes it while "Gazebo" (`states`) publishes the joint's state.
fn connect_and_initialize(driver: &RobotDriverGazebo, states: &Publisher<Model>) {
    driver.connect().unwrap();
    assert!(states.wait_for_subscribers(PATIENCE));
    let publishing = AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while publishing.load(Ordering::Relaxed) {
                states.publish(&joint_j_model(0.0, 1.0)).unwrap();
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        driver.initialize().unwrap();
        publishing.store(false, Ordering::Relaxed);
    });
}

fn listen(gazebo: &Node, log: &Log, topic: &'static str) -> Subscription {
    let log = log.clone();
    gazebo
        .subscribe(topic, move |command: Double, _: &MessageInfo| {
            log.lock().unwrap().push((topic, command.data))
        })
        .unwrap()
}

/// Waits (bounded) until the log holds `count` commands; returns the ones after `from`.
fn commands_until(log: &Log, count: usize, from: usize, what: &str) -> Vec<(&'static str, f64)> {
    let got = wait_for(
        what,
        PATIENCE,
        || log.lock().unwrap().clone(),
        |got| got.len() >= count,
    );
    got[from..].to_vec()
}

#[test]
fn switching_modes_sends_the_new_command_and_stops_the_old_one() {
    let gazebo = Gazebo::listening_on("modes", &[POSITION, VELOCITY, FORCE]);
    let log = &gazebo.log;
    let driver = RobotDriverGazebo::new(gazebo.config(), None).unwrap();
    connect_and_initialize(&driver, &gazebo.states);

    // Positions, the default forward mode (every call).
    driver.set_target_joint_positions(&[0.5]).unwrap();
    driver.forward_targets().unwrap();
    assert_eq!(
        commands_until(log, 1, 0, "the position target"),
        [(POSITION, 0.5)]
    );
    // To velocities: the velocity is sent; calls after it send it again (every call) but
    // never the position target, which is no longer in force.
    driver.set_target_joint_velocities(&[0.25]).unwrap();
    for _ in 0..3 {
        driver.forward_targets().unwrap();
    }
    assert_eq!(
        commands_until(log, 4, 1, "the velocity target"),
        [(VELOCITY, 0.25); 3],
        "a position re-sent while velocities are in force"
    );
    // To efforts: the velocity in force is set to zero, then the effort is sent.
    driver.set_target_joint_forces(&[0.75]).unwrap();
    driver.forward_targets().unwrap();
    assert_eq!(
        commands_until(log, 6, 4, "velocity zero and the effort target"),
        [(VELOCITY, 0.0), (FORCE, 0.75)]
    );
    // Back to positions: the effort in force is set to zero and the new position sent; the
    // velocity, already zero, is left alone.
    driver.set_target_joint_positions(&[-0.5]).unwrap();
    driver.forward_targets().unwrap();
    driver.forward_targets().unwrap();
    assert_eq!(
        commands_until(log, 9, 6, "effort zero and the position target"),
        [(FORCE, 0.0), (POSITION, -0.5), (POSITION, -0.5)]
    );
    driver.disconnect();
}

/// Non-default velocity and effort prefixes (a world whose JointController and ApplyJointForce
/// listen elsewhere than the position controller): targets go to `<prefix><joint>/cmd_vel`
/// and `/cmd_force` under them, and nothing to the positions prefix's.
#[test]
fn velocity_and_effort_targets_use_their_own_topic_prefixes() {
    let gazebo = Gazebo::listening_on(
        "prefixes",
        &[
            POSITION,
            VELOCITY,
            FORCE,
            "/velocity_controllers/j/cmd_vel",
            "/effort_systems/j/cmd_force",
        ],
    );
    let log = &gazebo.log;
    let mut config = gazebo.config();
    config.joint_velocities_topic_prefix = Some("/velocity_controllers/".into());
    config.joint_forces_topic_prefix = Some("/effort_systems/".into());
    let driver = RobotDriverGazebo::new(config, None).unwrap();
    connect_and_initialize(&driver, &gazebo.states);
    driver.set_target_joint_velocities(&[0.25]).unwrap();
    driver.forward_targets().unwrap();
    driver.set_target_joint_forces(&[0.75]).unwrap();
    driver.forward_targets().unwrap();
    assert_eq!(
        commands_until(log, 3, 0, "the targets under their own prefixes"),
        [
            ("/velocity_controllers/j/cmd_vel", 0.25),
            ("/velocity_controllers/j/cmd_vel", 0.0),
            ("/effort_systems/j/cmd_force", 0.75),
        ]
    );
    driver.disconnect();
}
