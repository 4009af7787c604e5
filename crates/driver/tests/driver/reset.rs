//! A world reset seen on the joint states (Gazebo's sim time going back): the velocity
//! command in force is set to zero once, and stays zero until a new target; a target given
//! after the reset is kept. Gazebo's side is a gz-transport node of the test: it publishes the
//! states with the stamps a reset makes and subscribes to the command topics.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use gz_transport::msgs::{Double, Header, Model};
use gz_transport::{Node, Publisher, Subscription};
use parking_lot::Mutex;
use sas_robot_driver_gazebo::{
    Command, ForwardMode, RobotDriverGazebo, RobotDriverGazeboConfiguration, SimTime, WorldReset,
};

use test_support::{wait_for, wait_until};

use crate::support::{joint_j_model, node_in, unique_partition};

const STATES: &str = "/reset/joint_state";
const PREFIX: &str = "/reset/cmd/";
const PATIENCE: Duration = Duration::from_secs(20);

fn model(stamp: SimTime) -> Model {
    Model {
        header: Some(Header {
            stamp: Some(gz_transport::msgs::Time {
                sec: stamp.sec,
                nsec: stamp.nsec,
            }),
            data: vec![],
        }),
        ..joint_j_model(0.0, 1e3)
    }
}

struct Gazebo {
    _node: Node,
    states: Publisher<Model>,
    velocities: Arc<Mutex<Vec<f64>>>,
    forces: Arc<Mutex<Vec<f64>>>,
    _subscriptions: Vec<Subscription>,
}

impl Gazebo {
    /// Publishes a state stamped `stamp` and waits until the driver took it.
    fn publish(&self, driver: &RobotDriverGazebo, stamp: SimTime) {
        let before = driver.snapshot().sequence;
        self.states.publish(&model(stamp)).unwrap();
        wait_until("the driver to take the state", PATIENCE, || {
            driver.snapshot().sequence > before
        });
    }

    /// Waits until the velocity commands received are `expected`.
    fn wait_for_velocities(&self, expected: &[f64]) {
        wait_for_commands(&self.velocities, "velocity", expected);
    }
}

/// Waits until the commands `received` are `expected`.
fn wait_for_commands(received: &Mutex<Vec<f64>>, what: &str, expected: &[f64]) {
    wait_for(
        &format!("{} {what} commands, {expected:?}", expected.len()),
        PATIENCE,
        || received.lock().clone(),
        |got| got.len() >= expected.len(),
    );
    // Anything sent after them would come on the same connection soon after.
    thread::sleep(Duration::from_millis(100));
    assert_eq!(*received.lock(), expected);
}

impl Gazebo {}

/// An initialized driver whose velocity target 0.5 was sent, with a command timeout far
/// beyond the test (only the reset may zero it).
fn driven(test: &str, forward_mode: ForwardMode) -> (RobotDriverGazebo, Gazebo) {
    let partition = unique_partition(test);
    let mut config = RobotDriverGazeboConfiguration::new(["j"], PREFIX, STATES);
    config.partition = Some(partition.clone());
    config.forward_mode = forward_mode;
    config.command_timeout = Duration::from_secs(600);
    let driver = RobotDriverGazebo::new(config, None).unwrap();
    driver.connect().unwrap();
    let node = node_in(&partition);
    let velocities = Arc::new(Mutex::new(Vec::new()));
    let received = velocities.clone();
    let forces = Arc::new(Mutex::new(Vec::new()));
    let received_forces = forces.clone();
    let subscriptions = vec![
        node.subscribe(&format!("{PREFIX}j/cmd_force"), move |m: Double, _| {
            received_forces.lock().push(m.data)
        })
        .unwrap(),
        node.subscribe(&format!("{PREFIX}j/cmd_vel"), move |m: Double, _| {
            received.lock().push(m.data)
        })
        .unwrap(),
        node.subscribe(&format!("{PREFIX}j/0/cmd_pos"), |_: Double, _| {})
            .unwrap(),
    ];
    let states = node.advertise::<Model>(STATES).unwrap();
    assert!(states.wait_for_subscribers(PATIENCE));
    let gazebo = Gazebo {
        _node: node,
        states,
        velocities,
        forces,
        _subscriptions: subscriptions,
    };
    gazebo.publish(&driver, SimTime { sec: 12, nsec: 0 });
    driver.initialize().unwrap();
    wait_until("the velocity controller's subscription", PATIENCE, || {
        driver.check_target(Command::Velocities, &[0.5]).is_ok()
    });
    driver.set_target_joint_velocities(&[0.5]).unwrap();
    assert!(driver.forward_targets().unwrap());
    gazebo.wait_for_velocities(&[0.5]);
    // Forward in time: no reset.
    gazebo.publish(
        &driver,
        SimTime {
            sec: 12,
            nsec: 300_000_000,
        },
    );
    assert_eq!(driver.world_resets(), 0);
    (driver, gazebo)
}

fn reset(driver: &RobotDriverGazebo, gazebo: &Gazebo) {
    gazebo.publish(
        driver,
        SimTime {
            sec: 0,
            nsec: 2_000_000,
        },
    );
    wait_until("the reset to be seen", PATIENCE, || {
        driver.world_resets() == 1
    });
    assert_eq!(
        driver.last_world_reset(),
        Some(WorldReset {
            from: SimTime {
                sec: 12,
                nsec: 300_000_000
            },
            to: SimTime {
                sec: 0,
                nsec: 2_000_000
            },
        })
    );
}

#[test]
fn a_reset_zeroes_the_velocity_command_in_force_until_a_new_target() {
    let (driver, gazebo) = driven("reset_zeroes", ForwardMode::OnChange);
    reset(&driver, &gazebo);
    assert_eq!(driver.command_deadline(), None, "the old target is dropped");
    assert!(driver.forward_targets().unwrap(), "zero is sent");
    assert!(!driver.forward_targets().unwrap(), "once");
    gazebo.wait_for_velocities(&[0.5, 0.0]);
    // The new world's time goes on: no second reset, nothing more sent.
    gazebo.publish(
        &driver,
        SimTime {
            sec: 0,
            nsec: 4_000_000,
        },
    );
    assert!(!driver.forward_targets().unwrap());
    assert_eq!(driver.world_resets(), 1);
    // The client sends again: that target is in force.
    driver.set_target_joint_velocities(&[0.25]).unwrap();
    assert!(driver.forward_targets().unwrap());
    gazebo.wait_for_velocities(&[0.5, 0.0, 0.25]);
}

#[test]
fn under_every_period_forwarding_the_old_target_is_not_sent_into_the_new_world() {
    let (driver, gazebo) = driven("reset_every_period", ForwardMode::EveryPeriod);
    reset(&driver, &gazebo);
    assert!(driver.forward_targets().unwrap(), "zero is sent");
    assert!(
        !driver.forward_targets().unwrap(),
        "then nothing, period after period"
    );
    assert!(!driver.forward_targets().unwrap());
    gazebo.wait_for_velocities(&[0.5, 0.0]);
    driver.set_target_joint_velocities(&[0.25]).unwrap();
    assert!(driver.forward_targets().unwrap());
    assert!(driver.forward_targets().unwrap(), "every period again");
    gazebo.wait_for_velocities(&[0.5, 0.0, 0.25, 0.25]);
}

#[test]
fn a_target_given_after_the_reset_was_seen_is_kept() {
    let (driver, gazebo) = driven("reset_then_target", ForwardMode::OnChange);
    reset(&driver, &gazebo);
    // Given before anything was sent since the reset: the zero owed to the old target goes
    // first, then this one, in force.
    driver.set_target_joint_velocities(&[0.25]).unwrap();
    assert!(driver.command_deadline().is_some());
    assert!(driver.forward_targets().unwrap());
    gazebo.wait_for_velocities(&[0.5, 0.0, 0.25]);
}

#[test]
fn a_reset_zeroes_an_effort_command_in_force_too() {
    let (driver, gazebo) = driven("reset_effort", ForwardMode::OnChange);
    wait_until("the effort system's subscription", PATIENCE, || {
        driver.check_target(Command::Forces, &[2.0]).is_ok()
    });
    // The effort target replaces the velocity one (zeroed as the mode switches).
    driver.set_target_joint_forces(&[2.0]).unwrap();
    assert!(driver.forward_targets().unwrap());
    wait_for_commands(&gazebo.forces, "effort", &[2.0]);
    reset(&driver, &gazebo);
    assert!(driver.forward_targets().unwrap());
    assert!(!driver.forward_targets().unwrap());
    wait_for_commands(&gazebo.forces, "effort", &[2.0, 0.0]);
    gazebo.wait_for_velocities(&[0.5, 0.0]);
}
