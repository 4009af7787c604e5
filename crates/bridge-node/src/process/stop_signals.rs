//! How a node process stops: SIGINT, SIGTERM and SIGHUP — any number of them, at any stage —
//! trigger the [`ShutdownToken`]s registered with [`StopSignals::install`], and nothing else.
//! The handler never exits the process: the stop is always the orderly one (the loop ends
//! within a period, the driver is deinitialized and disconnected, the ROS entities are
//! dropped in order). A [`Teardown`] watchdog bounds that stop instead, and names the step
//! that hung.
//!
//! Why not a handler that exits on the second signal: `ros2 launch` run non-interactively
//! sends SIGINT to the process group and then forwards one more, so a second signal arrives
//! in every stop, in the middle of the DDS teardown, and `exit()` there crashes Fast DDS.
//!
//! One installation serves the whole process (the node binaries, the composer, the Python
//! module): the first [`StopSignals`] installs the handlers, replacing whatever was there
//! (Python's SIGINT handler, rclpy's), and the last one dropped restores them.
//!
//! Opt-in, the same stop when the parent process exits ([`StopSignals::stop_with_parent`],
//! from [`STOP_WITH_PARENT_VARIABLE`]): the kernel sends [`PARENT_DEATH_SIGNAL`]
//! (`PR_SET_PDEATHSIG`) and the dispatch stops the node only if the parent is really gone —
//! the kernel also sends it when merely the parent's *thread* that started us ends.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{ShutdownToken, TriggerListener};

/// The signals that stop a node: Ctrl-C, `kill`/systemd/launch's escalation, a closed terminal.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How long a stop may take, from the first signal (or the loop's end) to the last entity
/// dropped, before [`Teardown`] gives up on it.
pub const TEARDOWN_BOUND: Duration = Duration::from_secs(3);

/// The environment variable that makes a node stop (the orderly stop, exit 0) when its parent
/// process exits: `1` for the parent it has when it arms the watch, or that parent's pid
/// (which also catches a parent that exited before: then the node stops at once).
pub const STOP_WITH_PARENT_VARIABLE: &str = "SAS_STOP_WITH_PARENT";

/// The signal `PR_SET_PDEATHSIG` delivers when the parent exits. Not a stop signal of its own:
/// the kernel sends it also when only the thread of the parent that started this process
/// ends, and a stray one must not stop the node either, so the dispatch checks the parent.
pub const PARENT_DEATH_SIGNAL: libc::c_int = libc::SIGUSR2;

/// Write end of the self-pipe, for the async-signal-safe handler; -1 while not installed.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// The parent process whose exit stops the node; 0 while none is watched.
static WATCHED_PARENT: AtomicI32 = AtomicI32::new(0);
/// The installed handlers (held while installing or removing them).
static INSTALLED: Mutex<Option<Handlers>> = Mutex::new(None);
/// The tokens to trigger and the signals received since the handlers were installed.
static LISTENERS: Mutex<Listeners> = Mutex::new(Listeners {
    next_id: 0,
    tokens: Vec::new(),
    received: 0,
});

struct Listeners {
    next_id: u64,
    tokens: Vec<(u64, ShutdownToken)>,
    received: usize,
}

struct Handlers {
    previous: Vec<(libc::c_int, libc::sigaction)>,
    /// Dropping it ends the dispatch thread (end of file on its side).
    wake: UnixStream,
    dispatch: JoinHandle<()>,
}

/// While it lives, SIGINT, SIGTERM and SIGHUP trigger its token (each signal, however many).
/// Dropping the last one restores the handlers that were installed before.
#[must_use = "the token is only triggered while this guard lives"]
pub struct StopSignals {
    id: u64,
}

impl StopSignals {
    /// Triggers `token` on every stop signal from now on.
    ///
    /// # Errors
    /// The self-pipe, its thread or a handler could not be set up.
    pub fn install(token: ShutdownToken) -> io::Result<Self> {
        let mut installed = lock(&INSTALLED);
        let id = {
            let mut listeners = lock(&LISTENERS);
            let id = listeners.next_id;
            listeners.next_id += 1;
            listeners.tokens.push((id, token));
            id
        };
        if installed.is_none() {
            match Handlers::install() {
                Ok(handlers) => *installed = Some(handlers),
                Err(err) => {
                    lock(&LISTENERS).tokens.retain(|(other, _)| *other != id);
                    return Err(err);
                }
            }
        }
        Ok(StopSignals { id })
    }

    /// Keeps the handlers installed until the process exits: a signal that arrives after the
    /// stop (launch forwards one more) is counted and changes nothing, where the handler
    /// restored (the default action, Python's) would kill the process or raise.
    pub fn keep_until_exit(self) {
        std::mem::forget(self);
    }

    /// How many stop signals arrived since the handlers were installed.
    pub fn received() -> usize {
        lock(&LISTENERS).received
    }

    /// Arms the stop on the parent's exit as [`STOP_WITH_PARENT_VARIABLE`] asks (nothing if
    /// it is unset, empty or `0`), while the handlers are installed. Call it from the thread
    /// that lives as long as the node (the main thread): the kernel keeps the setting per
    /// thread. The process arms it itself, after its exec: a parent-death signal set before
    /// an exec of a set-user-ID binary would be cleared.
    ///
    /// # Errors
    /// A value that is neither `0`, `1` nor a pid, a pid that is not the parent, no handlers
    /// installed, or a failed `prctl`: the message names what is wrong.
    pub fn stop_with_parent_from_env() -> Result<(), String> {
        let value = std::env::var(STOP_WITH_PARENT_VARIABLE).unwrap_or_default();
        let expected = match value.trim() {
            "" | "0" => return Ok(()),
            "1" => None,
            pid => match pid.parse::<libc::pid_t>() {
                Ok(pid) if pid > 1 => Some(pid),
                _ => {
                    return Err(format!(
                        "{STOP_WITH_PARENT_VARIABLE} must be 1 (stop when the parent process \
                         exits) or the parent's pid, got {value:?}"
                    ))
                }
            },
        };
        Self::stop_with_parent(expected).map_err(|err| err.to_string())
    }

    /// Stops the node (every registered token, as a stop signal does) when its parent process
    /// exits: `expected` names the parent (if it is gone already, the stop begins at once),
    /// `None` takes the current one.
    ///
    /// # Errors
    /// `expected` is a live process other than the parent, no handlers are installed, or
    /// the signal handler or `prctl` failed.
    pub fn stop_with_parent(expected: Option<libc::pid_t>) -> io::Result<()> {
        let mut installed = lock(&INSTALLED);
        let Some(handlers) = installed.as_mut() else {
            return Err(io::Error::other(
                "the stop on the parent's exit needs the stop signal handlers installed",
            ));
        };
        // SAFETY: getppid cannot fail.
        let parent = expected.unwrap_or_else(|| unsafe { libc::getppid() });
        WATCHED_PARENT.store(parent, Ordering::SeqCst);
        if !handlers.handles(PARENT_DEATH_SIGNAL) {
            handlers.handle(PARENT_DEATH_SIGNAL)?;
        }
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; the handler for it is
        // installed above.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL as libc::c_ulong) } != 0
        {
            return Err(io::Error::last_os_error());
        }
        // The parent may have exited before the line above: the kernel then never sends the
        // signal, but the process has been given another parent already.
        // SAFETY: getppid cannot fail.
        let now = unsafe { libc::getppid() };
        if now != parent {
            // SAFETY: kill with signal 0 only checks that the process exists.
            let alive = unsafe { libc::kill(parent, 0) } == 0
                || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
            if alive {
                WATCHED_PARENT.store(0, Ordering::SeqCst);
                // SAFETY: 0 turns the parent-death signal off again.
                unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, 0 as libc::c_ulong) };
                return Err(io::Error::other(format!(
                    "{STOP_WITH_PARENT_VARIABLE}={parent}: process {parent} is not this \
                     process's parent (that is {now})"
                )));
            }
            on_stop_signal(PARENT_DEATH_SIGNAL);
        }
        Ok(())
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        let mut installed = lock(&INSTALLED);
        let last = {
            let mut listeners = lock(&LISTENERS);
            listeners.tokens.retain(|(id, _)| *id != self.id);
            if listeners.tokens.is_empty() {
                listeners.received = 0;
            }
            listeners.tokens.is_empty()
        };
        if last {
            if let Some(handlers) = installed.take() {
                handlers.remove();
            }
        }
    }
}

impl Handlers {
    fn install() -> io::Result<Self> {
        let (wake, mut woken) = UnixStream::pair()?;
        // A burst of signals must never block the handler; extra bytes are simply dropped.
        wake.set_nonblocking(true)?;
        let dispatch = std::thread::Builder::new()
            .name("stop-signals".into())
            .spawn(move || {
                let mut signals = [0u8; 16];
                loop {
                    match woken.read(&mut signals) {
                        Ok(0) => return,
                        Ok(n) => signals[..n].iter().for_each(|&s| dispatch(s.into())),
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => return,
                    }
                }
            })?;
        WAKE_FD.store(wake.as_raw_fd(), Ordering::SeqCst);
        let mut handlers = Handlers {
            previous: Vec::new(),
            wake,
            dispatch,
        };
        for signal in STOP_SIGNALS {
            if let Err(err) = handlers.handle(signal) {
                handlers.remove();
                return Err(err);
            }
        }
        Ok(handlers)
    }

    fn handles(&self, signal: libc::c_int) -> bool {
        self.previous.iter().any(|(handled, _)| *handled == signal)
    }

    /// Sends `signal` to the self-pipe from now on, keeping the action it replaces.
    fn handle(&mut self, signal: libc::c_int) -> io::Result<()> {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
        // only calls async-signal-safe functions (write) and touches an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut previous) != 0 {
                return Err(io::Error::last_os_error());
            }
            self.previous.push((signal, previous));
        }
        Ok(())
    }

    fn remove(self) {
        if WATCHED_PARENT.swap(0, Ordering::SeqCst) != 0 {
            // SAFETY: 0 turns the parent-death signal off; its handler goes below.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, 0 as libc::c_ulong) };
        }
        for (signal, previous) in &self.previous {
            // SAFETY: restores an action the kernel gave us for this signal.
            unsafe {
                libc::sigaction(*signal, previous, std::ptr::null_mut());
            }
        }
        WAKE_FD.store(-1, Ordering::SeqCst);
        drop(self.wake);
        // Cannot fail but by a panic in a token's listener; that one was reported already.
        let _ = self.dispatch.join();
    }
}

/// The signal handler: one byte (the signal number) into the self-pipe.
extern "C" fn on_stop_signal(signal: libc::c_int) {
    // SAFETY: errno is thread-local; write(2) is async-signal-safe.
    unsafe {
        let errno = *libc::__errno_location();
        let fd = WAKE_FD.load(Ordering::SeqCst);
        if fd >= 0 {
            let byte = signal as u8;
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
        *libc::__errno_location() = errno;
    }
}

/// On the dispatch thread: counts the signal and triggers every registered token.
fn dispatch(signal: libc::c_int) {
    let parent_exited = signal == PARENT_DEATH_SIGNAL;
    if parent_exited {
        let watched = WATCHED_PARENT.load(Ordering::SeqCst);
        if watched == 0 {
            return; // the watch was disarmed meanwhile
        }
        // SAFETY: getppid cannot fail.
        if unsafe { libc::getppid() } == watched {
            tracing::debug!(
                "::{} while the parent process {watched} still runs (a thread of it ended, or \
                 the signal came from elsewhere); going on.",
                signal_name(signal)
            );
            return;
        }
    }
    let (tokens, received) = {
        let mut listeners = lock(&LISTENERS);
        listeners.received += 1;
        let tokens: Vec<ShutdownToken> = listeners.tokens.iter().map(|(_, t)| t.clone()).collect();
        (tokens, listeners.received)
    };
    let name = if parent_exited {
        format!(
            "The parent process {} exited",
            WATCHED_PARENT.load(Ordering::SeqCst)
        )
    } else {
        format!("{} received", signal_name(signal))
    };
    if received == 1 {
        tracing::info!("::{name}; stopping.");
    } else {
        tracing::info!("::{name} while stopping ({received} signals); the stop goes on.");
    }
    for token in tokens {
        token.trigger();
    }
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        PARENT_DEATH_SIGNAL => "SIGUSR2 (the parent-death signal)",
        _ => "a stop signal",
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Bounds a node's stop: once [`begin`](Self::begin) is called (or a watched token is
/// triggered), everything until [`finish`](Self::finish) must happen within the bound, or
/// the process exits with status 1 and a line naming the step it was in
/// ([`stage`](Self::stage)) — without running exit handlers, which would crash the threads
/// still inside the step. Cheap to clone; every clone is the same watchdog.
#[derive(Clone)]
pub struct Teardown {
    shared: Arc<TeardownShared>,
}

struct TeardownShared {
    program: String,
    bound: Duration,
    state: Mutex<TeardownState>,
    changed: Condvar,
}

struct TeardownState {
    stage: &'static str,
    began: Option<Instant>,
    finished: bool,
}

impl Teardown {
    /// A watchdog for `program` (the name its line starts with), on a thread of its own.
    ///
    /// # Errors
    /// The thread could not be created.
    pub fn spawn(program: &str, bound: Duration) -> io::Result<Self> {
        let teardown = Teardown {
            shared: Arc::new(TeardownShared {
                program: program.to_string(),
                bound,
                state: Mutex::new(TeardownState {
                    stage: "starting",
                    began: None,
                    finished: false,
                }),
                changed: Condvar::new(),
            }),
        };
        let shared = teardown.shared.clone();
        std::thread::Builder::new()
            .name("stop-watchdog".into())
            .spawn(move || shared.watch())?;
        Ok(teardown)
    }

    /// Starts the countdown when `token` is triggered, for as long as the listener lives.
    pub fn begin_on(&self, token: &ShutdownToken) -> TriggerListener {
        let teardown = self.clone();
        let listener = token.on_trigger(Arc::new(move || teardown.begin()));
        if token.is_triggered() {
            self.begin();
        }
        listener
    }

    /// Starts the countdown (once; later calls change nothing).
    pub fn begin(&self) {
        let mut state = lock(&self.shared.state);
        if state.began.is_none() {
            state.began = Some(Instant::now());
            self.shared.changed.notify_all();
        }
    }

    /// Names the step the process is in, for the line printed if it hangs there.
    pub fn stage(&self, stage: &'static str) {
        lock(&self.shared.state).stage = stage;
    }

    /// The stop is complete: the watchdog ends.
    pub fn finish(&self) {
        lock(&self.shared.state).finished = true;
        self.shared.changed.notify_all();
    }
}

impl TeardownShared {
    fn watch(&self) {
        let mut state = lock(&self.state);
        loop {
            if state.finished {
                return;
            }
            match state.began {
                None => {
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                }
                Some(began) => {
                    let Some(left) = self.bound.checked_sub(began.elapsed()) else {
                        break;
                    };
                    state = self
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0;
                }
            }
        }
        eprintln!(
            "{}: the stop hung: still {} {:.1} s after it began; exiting with status 1.",
            self.program,
            state.stage,
            self.bound.as_secs_f64()
        );
        // SAFETY: _exit ends the process at once; no exit handler runs while other threads
        // are still inside the hung step (the stderr line above is already written).
        unsafe { libc::_exit(1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SIGHUP's action now (reads only).
    fn sighup_action() -> libc::sighandler_t {
        // SAFETY: a null new action only reads the current one.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut current);
            current.sa_sigaction
        }
    }

    #[test]
    fn every_signal_triggers_every_token_and_handlers_come_back_when_the_last_guard_goes() {
        // What was there before: the default, or "ignore" under nohup.
        let before = sighup_action();
        let first = ShutdownToken::new();
        let second = ShutdownToken::new();
        let a = StopSignals::install(first.clone()).unwrap();
        let b = StopSignals::install(second.clone()).unwrap();
        for _ in 0..3 {
            // SAFETY: raise(3) sends the signal to this thread; our handler is installed.
            unsafe { libc::raise(libc::SIGHUP) };
        }
        assert!(first.wait_timeout(Duration::from_secs(5)));
        assert!(second.wait_timeout(Duration::from_secs(5)));
        let deadline = Instant::now() + Duration::from_secs(5);
        while StopSignals::received() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(StopSignals::received(), 3);
        drop(a);
        assert!(
            WAKE_FD.load(Ordering::SeqCst) >= 0,
            "b still needs the handlers"
        );
        drop(b);
        assert_eq!(WAKE_FD.load(Ordering::SeqCst), -1);
        assert_eq!(sighup_action(), before, "SIGHUP's previous action is back");
    }

    #[test]
    fn a_finished_teardown_never_fires() {
        let teardown = Teardown::spawn("test", Duration::from_millis(50)).unwrap();
        let token = ShutdownToken::new();
        let _listener = teardown.begin_on(&token);
        token.trigger();
        teardown.stage("finishing");
        teardown.finish();
        std::thread::sleep(Duration::from_millis(100));
    }
}
