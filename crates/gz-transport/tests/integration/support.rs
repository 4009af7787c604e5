use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use gz_transport::msgs::Double;
use gz_transport::{MessageInfo, MsgsPrefix, Node, NodeOptions, Subscription};

/// The real C++ peer (Debian `ignition-transport-cli`).
pub const IGN_TOPIC: &str = "/usr/libexec/ignition/transport11/ign-transport-topic";
/// Our CLI, built by cargo for the integration tests.
pub const GZ_TOPIC: &str = env!("CARGO_BIN_EXE_gz-topic");
/// Upper bound of every wait for discovery or delivery (generous: 2 loaded cores).
pub const PATIENCE: Duration = Duration::from_secs(30);

static INIT: Once = Once::new();

/// Keep this process's nodes on loopback. Runs before any node reads the environment.
pub fn init() {
    INIT.call_once(|| {
        // SAFETY (edition 2021: set_var is safe to call): every test calls init() before it
        // creates a node, and Once makes them all wait until the variables are set.
        std::env::set_var("GZ_IP", "127.0.0.1");
        std::env::set_var("IGN_IP", "127.0.0.1");
    });
}

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

/// Poll `cond` every 20 ms until it holds or `timeout` passes.
pub fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
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

/// A child process that is killed when the guard is dropped, with its stdout lines.
pub struct ChildGuard {
    child: Child,
    lines: Receiver<String>,
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
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .env("GZ_PARTITION", partition)
            .env("IGN_PARTITION", partition)
            .env("GZ_IP", "127.0.0.1")
            .env("IGN_IP", "127.0.0.1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let (tx, lines) = mpsc::channel();
        let forward = |stream: Box<dyn std::io::Read + Send>, tag: &'static str| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send(format!("{tag}{line}")).is_err() {
                        break;
                    }
                }
            });
        };
        forward(Box::new(child.stdout.take().expect("piped")), "");
        forward(Box::new(child.stderr.take().expect("piped")), STDERR);
        ChildGuard {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Wait until a line (stdout, or stderr prefixed with [`STDERR`]) satisfies `pred`; all lines read are kept in `seen`.
    pub fn wait_line(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Wait for the process to exit; `None` if it is still running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// All stdout collected so far (stderr lines left out), draining what is pending.
    pub fn output(&mut self) -> String {
        while let Ok(line) = self.lines.try_recv() {
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
