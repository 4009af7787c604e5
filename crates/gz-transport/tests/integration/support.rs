use std::process::Command;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gz_transport::msgs::Double;
use gz_transport::{MessageInfo, MsgsPrefix, Node, NodeOptions, Subscription};

/// The real C++ peer (Debian `ignition-transport-cli`).
pub use test_support::IGN_TOPIC;
/// Our CLI, built by cargo for the integration tests.
pub const GZ_TOPIC: &str = env!("CARGO_BIN_EXE_gz-topic");
/// Upper bound of every wait for discovery or delivery (generous: 2 loaded cores).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Poll `cond` until it holds (true) or `timeout` passes (false).
pub use test_support::eventually;
/// Keep this process's nodes on loopback. Runs before any node reads the environment.
pub use test_support::loopback_only as init;

/// A partition no other test (or test run) uses.
pub fn partition(test: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "gzt-{}-{}-{}",
        std::process::id(),
        test,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn node(partition: &str, prefix: MsgsPrefix) -> Node {
    init();
    Node::with_options(NodeOptions {
        partition: Some(partition.to_owned()),
        msgs_prefix: prefix,
        ..Default::default()
    })
    .expect("node starts")
}

/// Messages a subscription callback collected.
pub type Inbox<T> = Arc<Mutex<Vec<(T, MessageInfo)>>>;

pub fn inbox<T>() -> Inbox<T> {
    Arc::new(Mutex::new(Vec::new()))
}

/// A raw subscription of `node` to `topic` that counts what arrives.
pub fn counted(node: &Node, topic: &str) -> (Subscription, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let subscription = node
        .subscribe_raw(topic, move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    (subscription, count)
}

/// A subscription of `node` to the `Double`s on `topic`, collecting them.
pub fn doubles_on(node: &Node, topic: &str) -> (Subscription, Inbox<f64>) {
    let got = inbox::<f64>();
    let sink = got.clone();
    let subscription = node
        .subscribe(topic, move |m: Double, info: &MessageInfo| {
            sink.lock().unwrap().push((m.data, info.clone()));
        })
        .unwrap();
    (subscription, got)
}

/// Runs `program` (a CLI: `ign service`, ours) in `partition` to completion: whether it
/// succeeded, and its stdout. Panics if it does not exit by itself.
pub fn run(program: &str, args: &[&str], partition: &str) -> (bool, String) {
    let mut child = ChildGuard::spawn(program, args, partition);
    let status = child.wait_exit(PATIENCE).expect("the CLI exits by itself");
    (status.success(), child.output())
}

/// Prefix of the stderr lines among a child's lines.
pub const STDERR: &str = "stderr: ";

/// A child process that is killed when the guard is dropped, with its output lines.
pub struct ChildGuard {
    process: test_support::ChildGuard,
    pub seen: Vec<String>,
}

impl ChildGuard {
    /// Start `program` in `partition` (both GZ_ and IGN_ names) on loopback.
    pub fn spawn(program: &str, args: &[&str], partition: &str) -> ChildGuard {
        Self::spawn_env(program, args, partition, &[])
    }

    /// [`spawn`](Self::spawn) with extra environment variables.
    pub fn spawn_env(
        program: &str,
        args: &[&str],
        partition: &str,
        env: &[(&str, &str)],
    ) -> ChildGuard {
        let mut command = Command::new(program);
        command.args(args).envs(env.iter().copied());
        test_support::in_partition(&mut command, partition);
        ChildGuard {
            process: test_support::ChildGuard::spawn_with_stderr(&mut command, STDERR),
            seen: Vec::new(),
        }
    }

    /// Wait until a line (stdout, or stderr prefixed with [`STDERR`]) satisfies `pred`; all lines read are kept in `seen`.
    pub fn wait_line(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let seen = &mut self.seen;
        self.process.wait_line(timeout, |line| {
            seen.push(line.to_owned());
            pred(line)
        })
    }

    /// Wait for the process to exit; `None` if it is still running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.process.wait_exit(timeout)
    }

    /// All stdout collected so far (stderr lines left out), draining what is pending.
    pub fn output(&mut self) -> String {
        while let Ok(line) = self.process.lines().try_recv() {
            self.seen.push(line);
        }
        let stdout: Vec<&str> = self
            .seen
            .iter()
            .filter(|l| !l.starts_with(STDERR))
            .map(String::as_str)
            .collect();
        stdout.join("\n")
    }

    /// SIGKILL: the process gets no chance to say BYE.
    pub fn kill(&mut self) {
        self.process.kill();
    }
}
