//! What a client knows of its robot: the latest joint state, the joint names, the limits and
//! home states as last received, and the signals for whoever waits on them.
//!
//! Written only by the subscription callbacks (on the DDS listener thread), read by the
//! client's users (Python threads that may hold the GIL, a control loop): neither side may
//! wait for the other. The joint state goes through the contract's sequence lock
//! ([`JointStateCache`]: the writer never waits, a reader copies one whole message and
//! retries if a write overlapped it); it is created with the joint count of the first state
//! that fits (the limits' length, when both limits arrived first and agree: a stray first
//! state of another length does not fix the count), which fixes the robot's joint count and
//! names from then on. A state or a limit of another length is dropped with a warning naming
//! both lengths: it never mixes into what the readers get. Limits and home states change
//! rarely (a bridge sends them on change and as a heartbeat): they sit behind an `ArcSwap`,
//! replaced only when they change, so repeating them costs a comparison and readers load
//! them without a lock. Waiters sleep on a condition variable the writer signals only while
//! someone waits.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use parking_lot::{Condvar, Mutex};
use sas_driver_contract::{
    JointSample, JointSnapshot, JointStateCache, ShutdownToken, SimTime, StateListener,
    StateListenerGuard, StateListeners,
};

use crate::Topics;

/// At most one log line per interval about messages whose length does not fit.
const MISFIT_LOG_INTERVAL: Duration = Duration::from_secs(5);

/// One joint-state message as the subscription hands it over.
#[derive(Debug)]
pub struct JointStateMessage<'a> {
    /// The joint names, if they were read (only while the robot's joints are unknown).
    pub names: Option<&'a [String]>,
    /// One per joint.
    pub positions: &'a [f64],
    /// One per joint, or none.
    pub velocities: &'a [f64],
    /// One per joint, or none.
    pub efforts: &'a [f64],
    /// `header.stamp` in nanoseconds (0: not stamped).
    pub stamp_ns: i64,
}

/// One consistent read of the latest joint state.
#[derive(Clone, Debug)]
pub struct JointStateRead {
    /// One per joint.
    pub positions: Vec<f64>,
    /// Empty if the message had no velocity per joint.
    pub velocities: Vec<f64>,
    /// Empty if the message had no effort per joint.
    pub efforts: Vec<f64>,
    /// `header.stamp` in nanoseconds.
    pub stamp_ns: i64,
    /// When the message reached the subscription.
    pub received_at: Instant,
    /// Joint states received so far, this one included.
    pub sequence: u64,
}

/// Why [`ClientState::wait_until_ready`] returned without the robot's joints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotReady {
    /// The shutdown token was triggered.
    Shutdown,
    /// The deadline passed.
    TimedOut,
    /// The state was closed.
    Closed,
}

/// See the module documentation.
pub struct ClientState {
    joint_states: OnceLock<JointStateCache>,
    /// Set with the cache: the names of the state that fixed the joints (empty if it had
    /// not one per joint).
    joint_names: OnceLock<Vec<String>>,
    /// Whether the latest message had a velocity (effort) per joint; written before the
    /// message goes into the cache.
    has_velocities: AtomicBool,
    has_efforts: AtomicBool,
    /// The samples of the message being written, kept between messages so that taking one
    /// allocates nothing (one writer, the subscription's thread: never contended).
    samples: Mutex<Vec<JointSample>>,
    limits_min: ArcSwapOption<Vec<f64>>,
    limits_max: ArcSwapOption<Vec<f64>>,
    home_states: ArcSwapOption<Vec<i32>>,
    /// Run after each accepted joint state, on the thread that took it.
    listeners: Arc<StateListeners>,
    /// The newest state handed out by [`read`](Self::read) or a wait:
    /// [`wait_for_new_state`](Self::wait_for_new_state) waits for a newer one.
    handed_out: AtomicU64,
    /// Messages dropped because their length differs from the robot's joint count.
    misfits: AtomicU64,
    misfit_logged_at: Mutex<Option<Instant>>,
    closed: AtomicBool,
    waiters: AtomicUsize,
    wait_lock: Mutex<()>,
    wakeup: Condvar,
}

impl Default for ClientState {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientState {
    /// A state that has received nothing.
    pub fn new() -> Self {
        ClientState {
            joint_states: OnceLock::new(),
            joint_names: OnceLock::new(),
            has_velocities: AtomicBool::new(false),
            has_efforts: AtomicBool::new(false),
            samples: Mutex::new(Vec::new()),
            limits_min: ArcSwapOption::empty(),
            limits_max: ArcSwapOption::empty(),
            home_states: ArcSwapOption::empty(),
            listeners: Arc::new(StateListeners::default()),
            handed_out: AtomicU64::new(0),
            misfits: AtomicU64::new(0),
            misfit_logged_at: Mutex::new(None),
            closed: AtomicBool::new(false),
            waiters: AtomicUsize::new(0),
            wait_lock: Mutex::new(()),
            wakeup: Condvar::new(),
        }
    }

    /// Takes one `get/joint_states` message received on `topic`, then runs the state
    /// listeners. A message without positions, or with another joint count than the robot's,
    /// is dropped.
    pub fn receive_joint_state(&self, message: JointStateMessage<'_>, topic: &str) {
        let received_at = Instant::now();
        let joints = message.positions.len();
        if joints == 0 {
            return self.misfit(topic, "no positions", None);
        }
        if self.joint_states.get().is_none() {
            if let Some(count) = self.limits_length().filter(|&count| count != joints) {
                return self.misfit(
                    topic,
                    &format!("{joints} positions"),
                    Some((count, "as both joint limits")),
                );
            }
            // Before the cache: whoever sees the joint count sees the names.
            self.joint_names.get_or_init(|| {
                message
                    .names
                    .filter(|names| names.len() == joints)
                    .map_or_else(Vec::new, <[String]>::to_vec)
            });
        }
        let cache = self
            .joint_states
            .get_or_init(|| JointStateCache::new(joints));
        if cache.joint_count() != joints {
            return self.misfit(
                topic,
                &format!("{joints} positions"),
                Some((cache.joint_count(), "fixed by the first state")),
            );
        }
        let per_joint = |values: &[f64]| values.len() == joints;
        let (has_velocities, has_efforts) =
            (per_joint(message.velocities), per_joint(message.efforts));
        self.has_velocities.store(has_velocities, Ordering::Relaxed);
        self.has_efforts.store(has_efforts, Ordering::Relaxed);
        let mut samples = self.samples.lock();
        samples.clear();
        samples.extend((0..joints).map(|index| JointSample {
            index,
            position: message.positions[index],
            velocity: if has_velocities {
                message.velocities[index]
            } else {
                f64::NAN
            },
            effort: if has_efforts {
                message.efforts[index]
            } else {
                f64::NAN
            },
            // Limits come from their own topics (below), not with the state.
            limit_lower: f64::NAN,
            limit_upper: f64::NAN,
        }));
        // An unstamped state (stamp 0) has no simulation time.
        let stamp = (message.stamp_ns != 0).then(|| SimTime {
            sec: message.stamp_ns.div_euclid(1_000_000_000),
            nsec: message.stamp_ns.rem_euclid(1_000_000_000) as i32,
        });
        cache.write(&samples, stamp, received_at);
        drop(samples);
        self.wake_waiters();
        self.listeners.notify();
    }

    /// Drops a message that does not fit (`what` it holds; the robot's joint count and where
    /// it comes from, if known), logged at most once per interval with the count so far.
    pub(crate) fn misfit(&self, topic: &str, what: &str, joint_count: Option<(usize, &str)>) {
        let dropped = self.misfits.fetch_add(1, Ordering::Relaxed) + 1;
        let now = Instant::now();
        let mut logged_at = self.misfit_logged_at.lock();
        if logged_at.is_some_and(|at| now.duration_since(at) < MISFIT_LOG_INTERVAL) {
            return;
        }
        *logged_at = Some(now);
        let expected = joint_count.map_or_else(String::new, |(count, source)| {
            format!("; the robot has {count} joints ({source})")
        });
        tracing::warn!(
            "RobotDriverClient: dropped a message on {topic} with {what}{expected} ({dropped} \
             dropped so far)."
        );
    }

    /// Keeps `values` as the latest lower (`upper == false`) or upper limits, received on
    /// `topic`; a repetition of the current ones changes nothing, limits of another length
    /// than the robot's joint count are dropped.
    pub fn receive_limits(&self, values: &[f64], upper: bool, topic: &str) {
        if let Some(count) = self.joint_count().filter(|&count| count != values.len()) {
            return self.misfit(
                topic,
                &format!("{} limits", values.len()),
                Some((count, "as its joint states")),
            );
        }
        let slot = if upper {
            &self.limits_max
        } else {
            &self.limits_min
        };
        let unchanged = slot
            .load()
            .as_ref()
            .is_some_and(|current| same_bits(current, values));
        if !unchanged {
            slot.store(Some(values.to_vec().into()));
            // Someone may be waiting for the robot to be ready.
            self.wake_waiters();
        }
    }

    /// Keeps `values` as the latest home states.
    pub fn receive_home_states(&self, values: &[i32]) {
        let unchanged = self
            .home_states
            .load()
            .as_ref()
            .is_some_and(|current| current.as_slice() == values);
        if !unchanged {
            self.home_states.store(Some(values.to_vec().into()));
        }
    }

    /// The robot's joint count, once a state arrived.
    pub fn joint_count(&self) -> Option<usize> {
        self.joint_states.get().map(JointStateCache::joint_count)
    }

    /// The joint names of the state that fixed the joint count (empty before it, or if it
    /// did not name one per joint).
    pub fn joint_names(&self) -> &[String] {
        self.joint_names.get().map_or(&[], Vec::as_slice)
    }

    /// Whether a subscription should read the names of the next state: until one fixed the
    /// robot's joints.
    pub fn wants_joint_names(&self) -> bool {
        self.joint_states.get().is_none()
    }

    /// Joint states received so far.
    pub fn sequence(&self) -> u64 {
        self.joint_states.get().map_or(0, JointStateCache::sequence)
    }

    /// The latest joint state, if one arrived. Never waits for the writer (it retries if a
    /// write overlapped the copy); marks the state as handed out.
    pub fn read(&self) -> Option<JointStateRead> {
        let mut snapshot = JointSnapshot::new(0);
        self.read_snapshot(&mut snapshot);
        let received_at = snapshot.received_at?;
        self.handed_out
            .fetch_max(snapshot.sequence, Ordering::Relaxed);
        let present = |flag: &AtomicBool, values: Vec<f64>| {
            if flag.load(Ordering::Relaxed) {
                values
            } else {
                Vec::new()
            }
        };
        let stamp = snapshot.sim_time.unwrap_or_default();
        Some(JointStateRead {
            velocities: present(&self.has_velocities, snapshot.velocities),
            efforts: present(&self.has_efforts, snapshot.efforts),
            positions: snapshot.positions,
            stamp_ns: stamp.sec * 1_000_000_000 + i64::from(stamp.nsec),
            received_at,
            sequence: snapshot.sequence,
        })
    }

    /// Copies the latest joint state into `out` (no joints before the first; velocities and
    /// efforts NaN when the state had none; the limits as last received, NaN until both
    /// fit), allocating nothing once `out` has the robot's size. Does not mark the state as
    /// handed out.
    pub fn read_snapshot(&self, out: &mut JointSnapshot) {
        let Some(cache) = self.joint_states.get() else {
            out.resize(0);
            out.sim_time = None;
            out.received_at = None;
            out.sequence = 0;
            return;
        };
        cache.read(out);
        let (lower, upper) = self.limits();
        for (out, limits) in [
            (&mut out.limits_lower, lower),
            (&mut out.limits_upper, upper),
        ] {
            match limits {
                Some(limits) => out.copy_from_slice(&limits),
                None => out.fill(f64::NAN),
            }
        }
    }

    /// Whether the latest state had a velocity per joint.
    pub fn has_velocities(&self) -> bool {
        self.joint_count().is_some() && self.has_velocities.load(Ordering::Relaxed)
    }

    /// Whether the latest state had an effort per joint.
    pub fn has_efforts(&self) -> bool {
        self.joint_count().is_some() && self.has_efforts.load(Ordering::Relaxed)
    }

    /// `(lower, upper)` as last received, each if it arrived and has one value per joint
    /// (limits that came before the first state and do not fit it are not returned).
    #[allow(clippy::type_complexity)]
    pub fn limits(&self) -> (Option<Arc<Vec<f64>>>, Option<Arc<Vec<f64>>>) {
        let fits = |limits: &Arc<Vec<f64>>| Some(limits.len()) == self.joint_count();
        (
            self.limits_min.load_full().filter(fits),
            self.limits_max.load_full().filter(fits),
        )
    }

    /// The robot's joint count once its states and both limits have arrived with one length:
    /// what a client needs before it can command the robot.
    pub fn ready_joint_count(&self) -> Option<usize> {
        let count = self.joint_count()?;
        let (lower, upper) = self.limits();
        (lower.is_some() && upper.is_some()).then_some(count)
    }

    /// What [`ready_joint_count`](Self::ready_joint_count) still waits for, by topic: those
    /// of `topics` nothing has arrived on, and a limit of another length than the states
    /// with both lengths.
    pub fn missing(&self, topics: &Topics) -> Vec<String> {
        let count = self.joint_count();
        let mut missing = Vec::new();
        if count.is_none() {
            missing.push(topics.joint_states.clone());
        }
        for (upper, slot) in [(false, &self.limits_min), (true, &self.limits_max)] {
            let topic = topics.limits(upper);
            match (slot.load().as_ref(), count) {
                (None, _) => missing.push(topic.to_string()),
                (Some(limits), Some(count)) if limits.len() != count => missing.push(format!(
                    "{topic} with {count} values (it has {})",
                    limits.len()
                )),
                (Some(_), _) => {}
            }
        }
        missing
    }

    /// The length both limits have, while no state fixed the joint count, if they agree.
    fn limits_length(&self) -> Option<usize> {
        let lower = self.limits_min.load();
        let upper = self.limits_max.load();
        match (lower.as_ref(), upper.as_ref()) {
            (Some(lower), Some(upper)) if lower.len() == upper.len() => Some(lower.len()),
            _ => None,
        }
    }

    /// The home states as last received.
    pub fn home_states(&self) -> Option<Arc<Vec<i32>>> {
        self.home_states.load_full()
    }

    /// Runs `listener` after every accepted joint state (on the subscription's thread) while
    /// the guard lives.
    pub fn add_state_listener(&self, listener: StateListener) -> StateListenerGuard {
        self.listeners.add(listener)
    }

    /// Blocks until a joint state newer than the newest one handed out arrives (returns its
    /// sequence number and marks it handed out), `deadline` passes or the state is closed
    /// (both `None`). Returns at once if one already arrived, or if `deadline` has passed.
    pub fn wait_for_new_state(&self, deadline: Instant) -> Option<u64> {
        let after = self.handed_out.load(Ordering::Relaxed);
        let newer = || {
            let sequence = self.sequence();
            (sequence > after).then_some(sequence)
        };
        let found = match newer() {
            Some(sequence) => Some(sequence),
            None if Instant::now() >= deadline => None,
            None => self.wait_for(Some(deadline), newer),
        };
        if let Some(sequence) = found {
            self.handed_out.fetch_max(sequence, Ordering::Relaxed);
        }
        found
    }

    /// Blocks until the robot's states and both limits have arrived with one length (returns
    /// [`ready_joint_count`](Self::ready_joint_count)), `shutdown` is triggered, `deadline`
    /// passes (`None`: never) or the state is closed; a shutdown wins over a robot ready at
    /// the same moment.
    ///
    /// # Errors
    /// Why it returned without the joints.
    pub fn wait_until_ready(
        self: &Arc<Self>,
        deadline: Option<Instant>,
        shutdown: &ShutdownToken,
    ) -> Result<usize, NotReady> {
        let state = Arc::downgrade(self);
        let _wake = shutdown.on_trigger(Arc::new(move || {
            if let Some(state) = state.upgrade() {
                state.wake_all();
            }
        }));
        let outcome = self.wait_for(deadline, || {
            if shutdown.is_triggered() {
                return Some(Err(NotReady::Shutdown));
            }
            self.ready_joint_count().map(Ok)
        });
        match outcome {
            Some(outcome) => outcome,
            None if self.is_closed() => Err(NotReady::Closed),
            None => Err(NotReady::TimedOut),
        }
    }

    /// Waits until `found` gives a value, re-checking it whenever the writer wakes the
    /// waiters; `None` once `deadline` passes or the state is closed.
    fn wait_for<T>(
        &self,
        deadline: Option<Instant>,
        mut found: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let mut guard = self.wait_lock.lock();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `wake_waiters`: either this check sees the write, or the
        // writer sees this waiter and wakes it (under the lock, so not before it waits).
        fence(Ordering::SeqCst);
        let result = loop {
            if let Some(value) = found() {
                break Some(value);
            }
            if self.is_closed() {
                break found();
            }
            match deadline {
                Some(deadline) => {
                    if self.wakeup.wait_until(&mut guard, deadline).timed_out() {
                        break found();
                    }
                }
                None => self.wakeup.wait(&mut guard),
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn wake_waiters(&self) {
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) > 0 {
            self.wake_all();
        }
    }

    fn wake_all(&self) {
        let _guard = self.wait_lock.lock();
        self.wakeup.notify_all();
    }

    /// Ends every wait; readers should refuse from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// Equal bit for bit (so NaN equals NaN and -0.0 differs from 0.0: any change is kept).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const TOPIC: &str = "/robot/get/joint_states";

    /// Runs `then` on a new thread 20 ms from now, while the test's thread waits for it.
    fn soon_on_another_thread(then: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            then();
        })
    }

    fn state_of(state: &ClientState, names: Option<&[String]>, positions: &[f64], stamp_ns: i64) {
        state.receive_joint_state(
            JointStateMessage {
                names,
                positions,
                velocities: positions,
                efforts: &[],
                stamp_ns,
            },
            TOPIC,
        );
    }

    #[test]
    fn the_first_state_fixes_joints_and_names_and_misfits_never_mix_in() {
        let state = ClientState::new();
        assert!(state.wants_joint_names());
        let names = ["a".to_string(), "b".to_string()];
        state_of(&state, Some(&names), &[1.0, 2.0], 0);
        assert_eq!(state.joint_count(), Some(2));
        assert_eq!(state.joint_names(), names);
        assert!(!state.wants_joint_names());
        state_of(&state, None, &[1.0, 2.0, 3.0], 0);
        state.receive_limits(&[0.0; 3], false, "/robot/get/joint_positions_min");
        let read = state.read().unwrap();
        assert_eq!((read.positions, read.sequence), (vec![1.0, 2.0], 1));
        assert_eq!(read.velocities, [1.0, 2.0]);
        assert!(read.efforts.is_empty() && !state.has_efforts() && state.has_velocities());
        assert_eq!(state.limits(), (None, None));
        assert_eq!(state.misfits.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn limits_that_agree_before_any_state_refuse_a_stray_state_of_another_length() {
        let state = ClientState::new();
        state.receive_limits(&[-1.0; 3], false, "min");
        state.receive_limits(&[1.0; 3], true, "max");
        state_of(&state, None, &[0.0; 2], 0);
        assert_eq!(state.joint_count(), None);
        state_of(&state, None, &[0.0; 3], 0);
        assert_eq!(state.ready_joint_count(), Some(3));
    }

    #[test]
    fn a_snapshot_has_the_limits_as_received_and_no_sim_time_for_an_unstamped_state() {
        let state = ClientState::new();
        let mut snapshot = JointSnapshot::new(4);
        state.read_snapshot(&mut snapshot);
        assert_eq!((snapshot.joint_count(), snapshot.sequence), (0, 0));
        state_of(&state, None, &[1.0, 2.0], 0);
        state.read_snapshot(&mut snapshot);
        assert_eq!(snapshot.positions, [1.0, 2.0]);
        assert!(snapshot.limits_lower.iter().all(|l| l.is_nan()));
        assert_eq!(snapshot.sim_time, None);
        state.receive_limits(&[-1.0, -2.0], false, "min");
        state.receive_limits(&[1.0, 2.0], true, "max");
        state_of(&state, None, &[3.0, 4.0], 1_500_000_000);
        state.read_snapshot(&mut snapshot);
        assert_eq!(snapshot.limits_lower, [-1.0, -2.0]);
        assert_eq!(snapshot.limits_upper, [1.0, 2.0]);
        assert_eq!(
            snapshot.sim_time,
            Some(SimTime {
                sec: 1,
                nsec: 500_000_000
            })
        );
        assert_eq!(snapshot.last_seen, [2, 2]);
        assert_eq!(state.read().unwrap().stamp_ns, 1_500_000_000);
    }

    #[test]
    fn missing_names_each_topic_and_a_limit_of_another_length_with_both_lengths() {
        let topics = Topics::new("/r");
        let state = ClientState::new();
        assert_eq!(
            state.missing(&topics),
            [
                "/r/get/joint_states",
                "/r/get/joint_positions_min",
                "/r/get/joint_positions_max"
            ]
        );
        state.receive_limits(&[0.0; 3], false, "min");
        state_of(&state, None, &[0.0; 2], 0);
        assert_eq!(
            state.missing(&topics),
            [
                "/r/get/joint_positions_min with 2 values (it has 3)",
                "/r/get/joint_positions_max"
            ]
        );
    }

    #[test]
    fn wait_until_ready_wakes_on_the_last_limit_on_a_shutdown_and_times_out() {
        let state = Arc::new(ClientState::new());
        let shutdown = ShutdownToken::new();
        let soon = || Some(Instant::now() + Duration::from_millis(20));
        assert_eq!(
            state.wait_until_ready(soon(), &shutdown),
            Err(NotReady::TimedOut)
        );
        state_of(&state, None, &[0.0; 2], 0);
        state.receive_limits(&[-1.0; 2], false, "min");
        let writer = {
            let state = state.clone();
            soon_on_another_thread(move || state.receive_limits(&[1.0; 2], true, "max"))
        };
        assert_eq!(state.wait_until_ready(None, &shutdown), Ok(2));
        writer.join().unwrap();

        let waiting = Arc::new(ClientState::new());
        let trigger = {
            let shutdown = shutdown.clone();
            soon_on_another_thread(move || shutdown.trigger())
        };
        assert_eq!(
            waiting.wait_until_ready(None, &shutdown),
            Err(NotReady::Shutdown)
        );
        trigger.join().unwrap();
        assert_eq!(
            state.wait_until_ready(None, &shutdown),
            Err(NotReady::Shutdown),
            "a shutdown wins over a ready robot"
        );
    }

    #[test]
    fn wait_for_new_state_returns_each_state_once_and_close_ends_it() {
        let state = Arc::new(ClientState::new());
        let soon = || Instant::now() + Duration::from_millis(20);
        assert_eq!(state.wait_for_new_state(soon()), None);
        state_of(&state, None, &[0.0], 0);
        assert_eq!(state.wait_for_new_state(soon()), Some(1));
        assert_eq!(state.wait_for_new_state(soon()), None);
        let closer = {
            let state = state.clone();
            soon_on_another_thread(move || state.close())
        };
        assert_eq!(
            state.wait_for_new_state(Instant::now() + Duration::from_secs(60)),
            None
        );
        closer.join().unwrap();
        assert!(state.is_closed());
    }

    #[test]
    fn listeners_run_after_each_accepted_state_only() {
        let state = ClientState::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let guard = state.add_state_listener(Arc::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        state_of(&state, None, &[0.0], 0);
        state_of(&state, None, &[0.0, 1.0], 0);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        drop(guard);
        state_of(&state, None, &[0.0], 0);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
