//! What a `RobotDriverClient` knows of its robot: the latest joint state, the limits and home
//! states as last received, and a signal for whoever waits for the next state.
//!
//! Written only by the subscription callbacks on the client's executor thread, read by Python
//! threads that may hold the GIL: neither side may wait for the other. The joint state goes
//! through the driver's sequence lock ([`JointStateCache`]: the writer never waits, a reader
//! copies one whole message and retries if a write overlapped it); it is created with the
//! joint count of the first state that fits (the limits' length, when both limits arrived
//! first and agree: a stray first state of another length does not fix the count), which
//! fixes the robot's joint count from then on. A state or a limit of another length is
//! dropped with a warning naming both lengths: it never mixes into what the getters return.
//! Limits and home states change rarely (a bridge sends them on change and as a heartbeat):
//! they sit behind an `ArcSwap`, replaced only when they change, so repeating them costs a
//! comparison and readers load them without a lock.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use parking_lot::{Condvar, Mutex};
use sas_robot_driver_gazebo::{JointSample, JointSnapshot, JointStateCache, SimTime};

/// At most one log line per interval about messages whose length does not fit.
const MISFIT_LOG_INTERVAL: Duration = Duration::from_secs(5);

/// One joint-state message as the callback hands it over.
#[derive(Debug)]
pub(crate) struct JointStateMessage<'a> {
    pub positions: &'a [f64],
    pub velocities: &'a [f64],
    pub efforts: &'a [f64],
    /// `header.stamp` in nanoseconds.
    pub stamp_ns: i64,
}

/// One consistent read of the latest joint state.
pub(crate) struct JointStateRead {
    pub positions: Vec<f64>,
    /// Empty if the message had no velocity per joint.
    pub velocities: Vec<f64>,
    /// Empty if the message had no effort per joint.
    pub efforts: Vec<f64>,
    pub stamp_ns: i64,
    pub received_at: Instant,
    /// Joint states received so far, this one included.
    pub sequence: u64,
}

/// See the module documentation.
pub(crate) struct ClientState {
    joint_states: OnceLock<JointStateCache>,
    /// Whether the latest message had a velocity (effort) per joint; written before the
    /// message goes into the cache.
    has_velocities: AtomicBool,
    has_efforts: AtomicBool,
    limits_min: ArcSwapOption<Vec<f64>>,
    limits_max: ArcSwapOption<Vec<f64>>,
    home_states: ArcSwapOption<Vec<i32>>,
    /// The newest state handed to Python (by a getter or a wait): `wait_for_new_state` waits
    /// for a newer one.
    handed_out: AtomicU64,
    /// Messages dropped because their length differs from the robot's joint count.
    misfits: AtomicU64,
    misfit_logged_at: Mutex<Option<Instant>>,
    closed: AtomicBool,
    waiters: AtomicUsize,
    wait_lock: Mutex<()>,
    wakeup: Condvar,
}

impl ClientState {
    pub fn new() -> Self {
        ClientState {
            joint_states: OnceLock::new(),
            has_velocities: AtomicBool::new(false),
            has_efforts: AtomicBool::new(false),
            limits_min: ArcSwapOption::empty(),
            limits_max: ArcSwapOption::empty(),
            home_states: ArcSwapOption::empty(),
            handed_out: AtomicU64::new(0),
            misfits: AtomicU64::new(0),
            misfit_logged_at: Mutex::new(None),
            closed: AtomicBool::new(false),
            waiters: AtomicUsize::new(0),
            wait_lock: Mutex::new(()),
            wakeup: Condvar::new(),
        }
    }

    /// Takes one `get/joint_states` message (on the executor's thread). A message without
    /// positions, or with another joint count than the robot's, is dropped.
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
        let samples: Vec<JointSample> = (0..joints)
            .map(|index| JointSample {
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
            })
            .collect();
        let stamp = SimTime {
            sec: message.stamp_ns.div_euclid(1_000_000_000),
            nsec: message.stamp_ns.rem_euclid(1_000_000_000) as i32,
        };
        cache.write(&samples, Some(stamp), received_at);
        self.wake_waiters();
    }

    /// Drops a message that does not fit (`what` it holds; the robot's joint count and where
    /// it comes from, if known), logged at most once per interval with the count so far.
    pub fn misfit(&self, topic: &str, what: &str, joint_count: Option<(usize, &str)>) {
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

    /// Keeps `limits` as the latest lower (`upper == false`) or upper limits, received on
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
        }
    }

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

    /// Joint states received so far.
    pub fn sequence(&self) -> u64 {
        self.joint_states.get().map_or(0, JointStateCache::sequence)
    }

    /// The latest joint state, if one arrived. Never waits for the writer (it retries if a
    /// write overlapped the copy); marks the state as handed out.
    pub fn read(&self) -> Option<JointStateRead> {
        let cache = self.joint_states.get()?;
        let mut snapshot = JointSnapshot::new(cache.joint_count());
        cache.read(&mut snapshot);
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
    pub fn limits(
        &self,
    ) -> (
        Option<std::sync::Arc<Vec<f64>>>,
        Option<std::sync::Arc<Vec<f64>>>,
    ) {
        let fits = |limits: &std::sync::Arc<Vec<f64>>| Some(limits.len()) == self.joint_count();
        (
            self.limits_min.load_full().filter(fits),
            self.limits_max.load_full().filter(fits),
        )
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

    pub fn home_states(&self) -> Option<std::sync::Arc<Vec<i32>>> {
        self.home_states.load_full()
    }

    /// Blocks until a joint state newer than the newest one handed out arrives (returns its
    /// sequence number and marks it handed out), `deadline` passes or the client is closed
    /// (both `None`). Returns at once if one already arrived, or if `deadline` has passed.
    pub fn wait_for_new_state(&self, deadline: Instant) -> Option<u64> {
        let after = self.handed_out.load(Ordering::Relaxed);
        let newer = || {
            let sequence = self.sequence();
            (sequence > after).then_some(sequence)
        };
        if let Some(sequence) = newer() {
            self.handed_out.fetch_max(sequence, Ordering::Relaxed);
            return Some(sequence);
        }
        if Instant::now() >= deadline {
            return None;
        }
        let mut guard = self.wait_lock.lock();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `wake_waiters`: either this check sees the write, or the
        // writer sees this waiter and wakes it (under the lock, so not before it waits).
        fence(Ordering::SeqCst);
        let found = loop {
            if let Some(sequence) = newer() {
                break Some(sequence);
            }
            if self.is_closed() || self.wakeup.wait_until(&mut guard, deadline).timed_out() {
                break newer();
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        if let Some(sequence) = found {
            self.handed_out.fetch_max(sequence, Ordering::Relaxed);
        }
        found
    }

    fn wake_waiters(&self) {
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) > 0 {
            let _guard = self.wait_lock.lock();
            self.wakeup.notify_all();
        }
    }

    /// Ends every wait; the client's getters refuse from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _guard = self.wait_lock.lock();
        self.wakeup.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// Equal bit for bit (so NaN equals NaN and -0.0 differs from 0.0: any change is kept).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}
