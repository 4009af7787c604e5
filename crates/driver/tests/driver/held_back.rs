//! A receive thread held back while Gazebo keeps publishing (a busy machine): the driver takes
//! the newest of what queued, and its sequence still counts every message Gazebo sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use gz_transport::msgs::Model;
use sas_robot_driver_gazebo::{RobotDriverGazebo, RobotDriverGazeboConfiguration};

use test_support::{wait_for, wait_until};

use crate::support::{joint_j_model, node_in, unique_partition};

const STATES: &str = "/held_back/joint_state";
const PATIENCE: Duration = Duration::from_secs(20);

#[test]
fn a_held_back_driver_takes_the_newest_state_and_counts_every_message() {
    let partition = unique_partition("held_back");
    let mut config = RobotDriverGazeboConfiguration::new(["j"], "/held_back/cmd/", STATES);
    config.partition = Some(partition.clone());
    let driver = RobotDriverGazebo::new(config, None).unwrap();
    driver.connect().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let (sent, all_sent) = mpsc::channel::<()>();
    let all_sent = Mutex::new(all_sent);
    // Runs on the receive thread after each write: the first call holds it until the rest
    // were written to the socket (published without a queue: on loopback, in the driver's
    // socket buffer), so they reach it in one read.
    let _listener = driver.add_state_listener(Arc::new(move || {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            let released = all_sent.lock().unwrap().recv_timeout(PATIENCE);
            assert!(released.is_ok(), "the other states were never sent");
        }
    }));
    let gazebo = node_in(&partition);
    let publisher = gazebo.advertise::<Model>(STATES).unwrap();
    assert!(publisher.wait_for_subscribers(PATIENCE));
    publisher.publish(&joint_j_model(0.0, 1e3)).unwrap();
    wait_until("the first state", PATIENCE, || {
        calls.load(Ordering::SeqCst) > 0
    });
    for position in 1..=9 {
        publisher
            .publish(&joint_j_model(f64::from(position), 1e3))
            .unwrap();
    }
    let stats = gazebo.stats();
    assert_eq!((stats.messages_published, stats.messages_not_sent), (10, 0));
    sent.send(()).unwrap();
    let snapshot = wait_for(
        "the newest state",
        PATIENCE,
        || driver.snapshot(),
        |s| s.positions[0] == 9.0,
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the first and the newest state only"
    );
    assert_eq!(
        snapshot.sequence, 10,
        "the sequence counts the 8 states superseded in the socket"
    );
    assert_eq!(snapshot.last_seen, [10]);
}
