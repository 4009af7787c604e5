//! Plumbing shared by the workspace's integration tests (the driver's, gz-transport's,
//! gz-joint-sim's, listener-subscription's): discovery kept on loopback, bounded waits, and
//! child processes (a simulator, a CLI, the real C++ `ign topic`) that die with the test.
//!
//! Used only as a dev-dependency, and depends on no crate of the project (nor on any other), so
//! every crate's tests can use it without a dependency cycle. What is specific to one crate
//! (its partitions' names, its nodes, its messages) stays in that crate's test support.

use std::fmt::Debug;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The address every test keeps discovery and traffic on.
pub const LOOPBACK: &str = "127.0.0.1";

/// The real C++ peers: gz-transport 11's topic and service CLIs (Debian
/// `ignition-transport-cli`), what `ign topic` and `ign service` run.
pub const IGN_TOPIC: &str = "/usr/libexec/ignition/transport11/ign-transport-topic";
pub const IGN_SERVICE: &str = "/usr/libexec/ignition/transport11/ign-transport-service";

/// How often [`eventually`], [`wait_until`] and [`wait_for`] look again.
const POLL: Duration = Duration::from_millis(10);

/// Keeps this test process's discovery on loopback (`GZ_IP`, `IGN_IP`). Every test calls it
/// before it creates a node, so the variables are set once, to the same value, before any
/// thread reads the environment.
pub fn loopback_only() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::env::set_var("GZ_IP", LOOPBACK);
        std::env::set_var("IGN_IP", LOOPBACK);
    });
}

/// `command` in transport partition `partition` (under both the `GZ_` and the `IGN_` names) and
/// on loopback.
pub fn in_partition<'a>(command: &'a mut Command, partition: &str) -> &'a mut Command {
    command
        .env("GZ_PARTITION", partition)
        .env("IGN_PARTITION", partition)
        .env("GZ_IP", LOOPBACK)
        .env("IGN_IP", LOOPBACK)
}

/// Polls `cond` until it holds (true) or `timeout` has passed (false).
pub fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Polls `done` until it holds; panics naming `what` if it does not within `timeout`.
pub fn wait_until(what: &str, timeout: Duration, done: impl FnMut() -> bool) {
    assert!(
        eventually(timeout, done),
        "timed out after {timeout:?} waiting for {what}"
    );
}

/// Polls `read` until `done` holds for what it returns, and returns that; panics naming `what`
/// and showing the last value read if it does not within `timeout`.
pub fn wait_for<T: Debug>(
    what: &str,
    timeout: Duration,
    mut read: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        let value = read();
        if done(&value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}; last {value:?}"
        );
        std::thread::sleep(POLL);
    }
}

/// Takes messages from `rx` until one satisfies `matches` (that message), or none does within
/// `timeout` or the channel disconnects (`None`). Every message taken is shown to `matches`.
pub fn recv_until<T>(
    rx: &Receiver<T>,
    timeout: Duration,
    matches: impl FnMut(&T) -> bool,
) -> Option<T> {
    recv_first(rx, timeout, matches).ok()
}

/// [`recv_until`], for a message that must come: panics naming `what` and showing the last
/// message taken if none satisfies `done` within `timeout`.
pub fn recv_for<T: Debug>(
    what: &str,
    rx: &Receiver<T>,
    timeout: Duration,
    done: impl FnMut(&T) -> bool,
) -> T {
    recv_first(rx, timeout, done).unwrap_or_else(|last| {
        panic!("timed out after {timeout:?} waiting for {what}; last {last:?}")
    })
}

/// The first message from `rx` that satisfies `done` within `timeout`, or the last one taken.
fn recv_first<T>(
    rx: &Receiver<T>,
    timeout: Duration,
    mut done: impl FnMut(&T) -> bool,
) -> Result<T, Option<T>> {
    let deadline = Instant::now() + timeout;
    let mut last = None;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(message) if done(&message) => return Ok(message),
            Ok(message) => last = Some(message),
            Err(_) => break,
        }
    }
    Err(last)
}

/// A child process killed (and reaped) when the guard drops; its output lines arrive, as it
/// writes them, on [`lines`](Self::lines).
pub struct ChildGuard {
    child: Child,
    lines: Receiver<String>,
}

impl ChildGuard {
    /// Starts `command` with no stdin; its stdout lines arrive on [`lines`](Self::lines), its
    /// stderr is discarded.
    pub fn spawn(command: &mut Command) -> ChildGuard {
        Self::start(command, None)
    }

    /// [`spawn`](Self::spawn), with the stderr lines arriving too, each prefixed with
    /// `stderr_tag` (`""`: as they are).
    pub fn spawn_with_stderr(command: &mut Command, stderr_tag: &'static str) -> ChildGuard {
        Self::start(command, Some(stderr_tag))
    }

    fn start(command: &mut Command, stderr_tag: Option<&'static str>) -> ChildGuard {
        let stderr = if stderr_tag.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let (tx, lines) = mpsc::channel();
        forward(child.stdout.take().expect("piped"), "", tx.clone());
        if let Some(tag) = stderr_tag {
            forward(child.stderr.take().expect("piped"), tag, tx);
        }
        ChildGuard { child, lines }
    }

    /// The output lines not yet taken. The channel disconnects once the process has closed its
    /// output (at exit, usually).
    pub fn lines(&self) -> &Receiver<String> {
        &self.lines
    }

    /// Takes lines until one satisfies `matches` (that line), or none does within `timeout`
    /// (`None`). Every line taken is shown to `matches`, so it may keep them.
    pub fn wait_line(
        &self,
        timeout: Duration,
        mut matches: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        recv_until(&self.lines, timeout, |line| matches(line))
    }

    /// The process's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// True if the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits for the process to exit; `None` if it is still running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// SIGKILL (the process gets no chance to say goodbye), and reaps it.
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

/// Sends each line of `stream`, prefixed with `tag`, on `tx` from a thread of its own, until
/// the stream ends or nobody listens.
fn forward(stream: impl Read + Send + 'static, tag: &'static str, tx: Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(format!("{tag}{line}")).is_err() {
                break;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn eventually_is_true_once_the_condition_holds_and_false_past_the_timeout() {
        let mut calls = 0;
        assert!(eventually(Duration::from_secs(5), || {
            calls += 1;
            calls == 3
        }));
        assert_eq!(calls, 3);
        let start = Instant::now();
        assert!(!eventually(Duration::from_millis(50), || false));
        assert!(start.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    #[should_panic(expected = "waiting for the impossible")]
    fn wait_until_panics_naming_what_it_waited_for() {
        wait_until("the impossible", Duration::from_millis(20), || false);
    }

    #[test]
    fn wait_for_returns_the_first_value_that_is_done() {
        let mut n = 0;
        let got = wait_for(
            "three",
            Duration::from_secs(5),
            || {
                n += 1;
                n
            },
            |n| *n >= 3,
        );
        assert_eq!(got, 3);
    }

    #[test]
    #[should_panic(expected = "waiting for seven; last 0")]
    fn wait_for_panics_showing_the_last_value() {
        wait_for("seven", Duration::from_millis(20), || 0, |n| *n == 7);
    }

    #[test]
    fn recv_for_returns_the_first_message_that_is_done() {
        let (tx, rx) = mpsc::channel();
        for n in 0..1000 {
            tx.send(n).unwrap();
        }
        let mut taken = 0;
        let got = recv_for("999", &rx, Duration::from_secs(5), |n| {
            taken += 1;
            *n == 999
        });
        assert_eq!((got, taken), (999, 1000));
    }

    #[test]
    #[should_panic(expected = "waiting for an odd number; last Some(4)")]
    fn recv_for_panics_showing_the_last_message() {
        let (tx, rx) = mpsc::channel();
        for n in [2, 4] {
            tx.send(n).unwrap();
        }
        recv_for("an odd number", &rx, Duration::from_millis(20), |n| {
            n % 2 == 1
        });
    }

    #[test]
    fn recv_until_returns_the_first_match_and_none_past_the_timeout_or_disconnected() {
        let (tx, rx) = mpsc::channel();
        for n in [1, 2, 3, 4] {
            tx.send(n).unwrap();
        }
        assert_eq!(
            recv_until(&rx, Duration::from_secs(5), |n| n % 2 == 0),
            Some(2)
        );
        assert_eq!(recv_until(&rx, Duration::from_secs(5), |n| *n > 3), Some(4));
        let start = Instant::now();
        assert_eq!(recv_until(&rx, Duration::from_millis(50), |_| true), None);
        assert!(start.elapsed() >= Duration::from_millis(50));
        tx.send(5).unwrap();
        drop(tx);
        assert_eq!(recv_until(&rx, Duration::from_secs(5), |n| *n > 5), None);
    }

    #[test]
    fn lines_arrive_stdout_as_is_and_stderr_tagged_or_not_at_all() {
        let script = "echo out; echo err >&2; echo last";
        let quiet = ChildGuard::spawn(&mut shell(script));
        let mut seen = Vec::new();
        let last = quiet.wait_line(Duration::from_secs(10), |l| {
            seen.push(l.to_owned());
            l == "last"
        });
        assert_eq!(last.as_deref(), Some("last"));
        assert_eq!(seen, ["out", "last"]);

        let mut both = ChildGuard::spawn_with_stderr(&mut shell(script), "stderr: ");
        assert!(both.wait_exit(Duration::from_secs(10)).unwrap().success());
        let mut all: Vec<String> = both.lines().iter().collect();
        all.sort();
        assert_eq!(all, ["last", "out", "stderr: err"]);
    }

    #[test]
    fn a_line_not_written_in_time_is_none_and_kill_ends_the_process() {
        let mut sleeper = ChildGuard::spawn(&mut shell("sleep 60"));
        assert_eq!(sleeper.wait_line(Duration::from_millis(50), |_| true), None);
        assert!(sleeper.wait_exit(Duration::from_millis(50)).is_none());
        assert!(!sleeper.exited());
        assert!(sleeper.id() > 0);
        sleeper.kill(); // what the drop does
        assert!(sleeper.exited());
    }

    #[test]
    fn in_partition_sets_both_names_and_loopback() {
        let mut command = shell("echo $GZ_PARTITION $IGN_PARTITION $GZ_IP $IGN_IP");
        let child = ChildGuard::spawn(in_partition(&mut command, "p1"));
        assert_eq!(
            child
                .wait_line(Duration::from_secs(10), |_| true)
                .as_deref(),
            Some("p1 p1 127.0.0.1 127.0.0.1")
        );
    }
}
