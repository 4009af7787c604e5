//! Shared test plumbing: unique partitions, loopback-only discovery, child processes that die
//! with the test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Once};
use std::time::{Duration, Instant};

pub const IGN_TOPIC: &str = "/usr/libexec/ignition/transport11/ign-transport-topic";

/// Keeps this process's discovery on loopback (children get the same through `command`).
pub fn loopback_only() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Set before any test creates a node, and to the same value by every test.
        std::env::set_var("GZ_IP", "127.0.0.1");
        std::env::set_var("IGN_IP", "127.0.0.1");
    });
}

/// A partition no other test (or test run) shares.
pub fn unique_partition(test: &str) -> String {
    loopback_only();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("driver_{}_{test}_{nanos}", std::process::id())
}

/// A child process killed when the guard drops; its stdout lines arrive on `lines`.
pub struct ChildGuard {
    child: Child,
    pub lines: mpsc::Receiver<String>,
}

impl ChildGuard {
    pub fn spawn(command: &mut Command) -> ChildGuard {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        ChildGuard { child, lines }
    }

    /// True if the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits until a stdout line satisfies `matches`, or `timeout`.
    pub fn wait_for_line(&self, timeout: Duration, matches: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if matches(&line) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real gz-transport 11 CLI (Fortress) in `partition`, on loopback.
pub fn ign_topic(partition: &str) -> Command {
    let mut command = Command::new(IGN_TOPIC);
    command
        .env("IGN_PARTITION", partition)
        .env("GZ_PARTITION", partition)
        .env("IGN_IP", "127.0.0.1")
        .env("GZ_IP", "127.0.0.1");
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
