//! Test helpers: loopback-only transport, unique partitions, child processes killed on drop.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use gz_joint_sim::{SimHandle, SimOptions, World};
use gz_transport::msgs::{self, GzMessage};
use gz_transport::{MessageInfo, MsgsPrefix, Node, NodeOptions, Subscription};

#[allow(unused_imports)] // each test file uses its own subset
pub use gz_joint_sim::ur3e_world::{JOINTS as UR3E_JOINTS, JOINT_STATES as UR3E_STATE_TOPIC};
#[allow(unused_imports)] // each test file uses its own subset
pub use test_support::loopback_only;
#[allow(unused_imports)] // each test file uses its own subset
pub use test_support::IGN_TOPIC;
use test_support::{in_partition, ChildGuard};

/// A partition no other test (or test run) shares.
pub fn partition(test: &str) -> String {
    format!("gzjs-{}-{test}", std::process::id())
}

/// A node of this process in `partition`, speaking `msgs_prefix` (its traffic on loopback,
/// after [`loopback_only`]).
pub fn loopback_node(partition: &str, msgs_prefix: MsgsPrefix) -> Node {
    Node::with_options(NodeOptions {
        partition: Some(partition.to_owned()),
        namespace: None,
        msgs_prefix,
        ..Default::default()
    })
    .unwrap()
}

/// `world` run in this process with `options` in `partition`, and a node of this process
/// there speaking the same message prefix (its traffic on loopback, after [`loopback_only`]).
pub fn start_with_node(world: &World, partition: &str, options: SimOptions) -> (SimHandle, Node) {
    let msgs_prefix = options.msgs_prefix;
    let sim = world
        .start(SimOptions {
            partition: Some(partition.to_owned()),
            ..options
        })
        .unwrap();
    (sim, loopback_node(partition, msgs_prefix))
}

/// A subscription of `node` to `topic`, and the receiver on which each of its messages
/// arrives as `read` makes it.
pub fn subscribe_channel<M: GzMessage, T: Send + 'static>(
    node: &Node,
    topic: &str,
    mut read: impl FnMut(M) -> T + Send + 'static,
) -> (Subscription, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    let sub = node
        .subscribe(topic, move |m: M, _: &MessageInfo| drop(tx.send(read(m))))
        .unwrap();
    (sub, rx)
}

/// The sim time a joint-state message is stamped with, if it is.
pub fn state_stamp(m: &msgs::Model) -> Option<&msgs::Time> {
    m.header.as_ref()?.stamp.as_ref()
}

/// The world `text` loaded from a file `file_name` of its own (written to a scratch
/// directory for `test`, removed once loaded), with no resource paths.
pub fn world_from_text(test: &str, file_name: &str, text: &str) -> World {
    let dir = std::env::temp_dir().join(format!("gz-joint-sim-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(file_name);
    std::fs::write(&file, text).unwrap();
    let world = World::load_with_resource_paths(&file, &[]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    world
}

pub fn sdf(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../sdf")
        .join(name)
}

/// A child process killed (and reaped) on drop, its stdout and stderr lines read as they come.
pub struct Proc(ChildGuard);

impl Proc {
    pub fn spawn(mut command: Command) -> Proc {
        Proc(ChildGuard::spawn_with_stderr(&mut command, ""))
    }

    /// Waits (bounded) for a line containing `needle`; returns every line seen so far.
    pub fn wait_for_line(&self, needle: &str, timeout: Duration) -> Result<String, Vec<String>> {
        let mut seen = Vec::new();
        self.0
            .wait_line(timeout, |line| {
                let found = line.contains(needle);
                if !found {
                    seen.push(line.to_owned());
                }
                found
            })
            .ok_or(seen)
    }

    pub fn id(&self) -> u32 {
        self.0.id()
    }

    /// Waits (bounded) for exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.0.wait_exit(timeout)
    }

    /// Waits (bounded) for exit, killing the process if it overstays, and returns its exit
    /// status (`None` if it had to be killed) and every output line not yet consumed.
    pub fn finish(&mut self, timeout: Duration) -> (Option<std::process::ExitStatus>, Vec<String>) {
        let status = self.wait_exit(timeout);
        if status.is_none() {
            self.0.kill();
        }
        let mut lines = Vec::new();
        // The reader threads end at EOF, which disconnects the channel.
        while let Ok(line) = self.0.lines().recv_timeout(Duration::from_secs(2)) {
            lines.push(line);
        }
        (status, lines)
    }
}

/// The gz-joint-sim binary on a world, on loopback, in `partition`.
pub fn sim_command(world: &Path, partition: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gz-joint-sim"));
    c.arg(world).args(["--partition", partition]).args(extra);
    c.env("GZ_IP", "127.0.0.1")
        .env("IGN_IP", "127.0.0.1")
        .env("RUST_LOG", "info");
    c.env_remove("GZ_SIM_RESOURCE_PATH")
        .env_remove("IGN_GAZEBO_RESOURCE_PATH")
        .env_remove("SDF_PATH");
    c
}

/// The real C++ `ign topic` helper, on loopback, in `partition`.
pub fn ign_topic(partition: &str, args: &[&str]) -> Command {
    let mut c = Command::new(IGN_TOPIC);
    in_partition(c.args(args), partition);
    c
}
