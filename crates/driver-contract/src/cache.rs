//! The joint-state cache: a sequence lock over atomic slots.
//!
//! Why a sequence lock: the writer (the transport's receive thread) must never wait for a
//! reader, readers must see all joints of one message together, and neither side may
//! allocate per message. The writer marks the sequence odd, stores the message's values and
//! marks it even again; a reader copies the values between two reads of the sequence and
//! retries if they differ. Slots are `AtomicU64`s holding `f64` bits, so the copy is free of
//! data races in safe Rust; the fences follow Boehm, "Can seqlocks get along with programming
//! language memory models?" (MSPC 2012). The Gazebo driver's `benches/cache_choice.rs`
//! compares it with a `parking_lot::Mutex` and an `ArcSwap`.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::SimTime;

/// Per-joint fields, joint-major so one joint's values share a cache line.
const POSITION: usize = 0;
const VELOCITY: usize = 1;
const EFFORT: usize = 2;
const LIMIT_LOWER: usize = 3;
const LIMIT_UPPER: usize = 4;
/// Sequence number of the message that last carried the joint (0: never).
const LAST_SEEN: usize = 5;
const FIELDS: usize = 6;

/// Spins before a waiting reader or writer starts yielding its time slice (a writer
/// descheduled mid-write would otherwise be waited for by spinning).
const SPINS_BEFORE_YIELD: u32 = 64;

/// One joint's values from one Gazebo message, addressed by configuration index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSample {
    /// Index in the configuration's `joint_names`.
    pub index: usize,
    /// `axis1.position` (rad or m).
    pub position: f64,
    /// `axis1.velocity`.
    pub velocity: f64,
    /// `axis1.force` (the original's "torque").
    pub effort: f64,
    /// `axis1.limit_lower` (may be -inf).
    pub limit_lower: f64,
    /// `axis1.limit_upper` (may be +inf).
    pub limit_upper: f64,
}

/// A consistent copy of the cache: every joint's values as of message `sequence`. Vectors are
/// in configuration order; a joint never seen holds NaN.
#[derive(Clone, Debug, PartialEq)]
pub struct JointSnapshot {
    /// Joint positions.
    pub positions: Vec<f64>,
    /// Joint velocities.
    pub velocities: Vec<f64>,
    /// Joint efforts (forces/torques).
    pub efforts: Vec<f64>,
    /// Lower limits as last seen in a message (the driver's `get_joint_limits()` returns the
    /// ones captured at `initialize()`).
    pub limits_lower: Vec<f64>,
    /// Upper limits as last seen in a message.
    pub limits_upper: Vec<f64>,
    /// Per joint, the sequence number of the last message that carried it (0: never). A
    /// message that lacks a joint leaves that joint's older values in place.
    pub last_seen: Vec<u64>,
    /// Gazebo's stamp (simulation time) of message `sequence`, if it had one.
    pub sim_time: Option<SimTime>,
    /// When message `sequence` reached our receive callback.
    pub received_at: Option<Instant>,
    /// Number of messages written so far; 0 before the first one.
    pub sequence: u64,
}

impl JointSnapshot {
    /// An empty snapshot for `joint_count` joints (NaN values, sequence 0). Reading into it
    /// allocates nothing.
    pub fn new(joint_count: usize) -> Self {
        JointSnapshot {
            positions: vec![f64::NAN; joint_count],
            velocities: vec![f64::NAN; joint_count],
            efforts: vec![f64::NAN; joint_count],
            limits_lower: vec![f64::NAN; joint_count],
            limits_upper: vec![f64::NAN; joint_count],
            last_seen: vec![0; joint_count],
            sim_time: None,
            received_at: None,
            sequence: 0,
        }
    }

    /// Number of joints.
    pub fn joint_count(&self) -> usize {
        self.positions.len()
    }

    /// Time since the message reached the driver; `None` before the first message.
    pub fn age(&self) -> Option<Duration> {
        self.received_at.map(|at| at.elapsed())
    }

    /// True if and only if no message arrived yet or the last one is older than `threshold`.
    pub fn is_stale(&self, threshold: Duration) -> bool {
        self.age().is_none_or(|age| age > threshold)
    }

    /// True if and only if joint `index` was seen and has non-NaN limits (±inf is fine).
    ///
    /// # Panics
    /// If `index` is not below [`joint_count`](Self::joint_count).
    pub fn joint_is_ready(&self, index: usize) -> bool {
        self.last_seen[index] != 0
            && !self.limits_lower[index].is_nan()
            && !self.limits_upper[index].is_nan()
    }

    /// Sets the number of joints: new joints hold NaN and were never seen. Allocates only when
    /// growing past the capacity, so a driver can fill a caller's snapshot in place.
    pub fn resize(&mut self, joint_count: usize) {
        self.positions.resize(joint_count, f64::NAN);
        self.velocities.resize(joint_count, f64::NAN);
        self.efforts.resize(joint_count, f64::NAN);
        self.limits_lower.resize(joint_count, f64::NAN);
        self.limits_upper.resize(joint_count, f64::NAN);
        self.last_seen.resize(joint_count, 0);
    }
}

/// Which event a waiter wants to be woken for.
#[derive(Clone, Copy)]
pub enum Interest {
    /// Every new message.
    Sample,
    /// Only the cache becoming ready (see [`JointStateCache::is_ready`]).
    Ready,
}

/// Latest joint states of one robot: one writer at a time, any number of readers that never
/// block it. See the module documentation for the protocol.
pub struct JointStateCache {
    /// Twice the number of completed writes, plus one while a write is in progress.
    sequence: AtomicU64,
    slots: Box<[AtomicU64]>,
    sim_time_present: AtomicBool,
    sim_time_sec: AtomicU64,
    sim_time_nsec: AtomicU64,
    /// Nanoseconds from `epoch` to the receive instant, plus one (0: never received).
    received_nanos: AtomicU64,
    epoch: Instant,
    joint_count: usize,
    /// Latched once every joint was seen with non-NaN limits.
    ready: AtomicBool,
    wait_lock: Mutex<()>,
    wakeup: Condvar,
    sample_waiters: AtomicUsize,
    ready_waiters: AtomicUsize,
}

impl JointStateCache {
    /// An empty cache for `joint_count` joints.
    pub fn new(joint_count: usize) -> Self {
        let slots = (0..joint_count * FIELDS)
            .map(|slot| {
                let initial = if slot % FIELDS == LAST_SEEN {
                    0
                } else {
                    f64::NAN.to_bits()
                };
                AtomicU64::new(initial)
            })
            .collect();
        JointStateCache {
            sequence: AtomicU64::new(0),
            slots,
            sim_time_present: AtomicBool::new(false),
            sim_time_sec: AtomicU64::new(0),
            sim_time_nsec: AtomicU64::new(0),
            received_nanos: AtomicU64::new(0),
            epoch: Instant::now(),
            joint_count,
            ready: AtomicBool::new(false),
            wait_lock: Mutex::new(()),
            wakeup: Condvar::new(),
            sample_waiters: AtomicUsize::new(0),
            ready_waiters: AtomicUsize::new(0),
        }
    }

    /// Number of joints.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Number of messages written so far (the sequence number of the latest one).
    pub fn sequence(&self) -> u64 {
        self.sequence.load(Ordering::Acquire) / 2
    }

    /// True if and only if every joint has been seen with non-NaN limits; latched.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Writes one message's samples as one unit and returns its sequence number. Samples
    /// with an index out of range are ignored. Never waits for a reader; concurrent writers
    /// (only possible briefly around a reconnect) are serialised against each other.
    pub fn write(
        &self,
        samples: &[JointSample],
        sim_time: Option<SimTime>,
        received_at: Instant,
    ) -> u64 {
        self.write_superseding(samples, sim_time, received_at, 0)
    }

    /// [`write`](Self::write) for a message that superseded `superseded` earlier ones the
    /// transport skipped (they arrived together with it): the sequence advances past them
    /// too, so that it counts every message the publisher sent and readers see the skipped
    /// ones as never read.
    pub fn write_superseding(
        &self,
        samples: &[JointSample],
        sim_time: Option<SimTime>,
        received_at: Instant,
        superseded: u64,
    ) -> u64 {
        let before = self.lock_for_writing();
        // Orders the odd sequence before the data stores (Boehm's writer fence).
        fence(Ordering::Release);
        let message = before / 2 + 1 + superseded;
        for sample in samples {
            if sample.index >= self.joint_count {
                continue;
            }
            let joint = &self.slots[sample.index * FIELDS..(sample.index + 1) * FIELDS];
            let store =
                |field: usize, value: f64| joint[field].store(value.to_bits(), Ordering::Relaxed);
            store(POSITION, sample.position);
            store(VELOCITY, sample.velocity);
            store(EFFORT, sample.effort);
            store(LIMIT_LOWER, sample.limit_lower);
            store(LIMIT_UPPER, sample.limit_upper);
            joint[LAST_SEEN].store(message, Ordering::Relaxed);
        }
        self.sim_time_present
            .store(sim_time.is_some(), Ordering::Relaxed);
        let sim_time = sim_time.unwrap_or_default();
        self.sim_time_sec
            .store(sim_time.sec as u64, Ordering::Relaxed);
        self.sim_time_nsec
            .store(sim_time.nsec as u32 as u64, Ordering::Relaxed);
        let since_epoch = received_at.saturating_duration_since(self.epoch).as_nanos();
        self.received_nanos.store(
            u64::try_from(since_epoch).unwrap_or(u64::MAX - 1) + 1,
            Ordering::Relaxed,
        );
        self.sequence.store(message * 2, Ordering::Release);
        self.after_write();
        message
    }

    /// Copies the latest message into `out` (resizing it only if it has the wrong joint
    /// count). Never blocks the writer; retries if a write overlapped the copy.
    pub fn read(&self, out: &mut JointSnapshot) {
        if out.joint_count() != self.joint_count {
            out.resize(self.joint_count);
        }
        let mut spins = 0;
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 0 {
                self.copy_slots(out);
                // Orders the copy before the second sequence read (Boehm's reader fence).
                fence(Ordering::Acquire);
                if self.sequence.load(Ordering::Relaxed) == before {
                    out.sequence = before / 2;
                    return;
                }
            }
            back_off(&mut spins);
        }
    }

    fn copy_slots(&self, out: &mut JointSnapshot) {
        let load = |slot: &AtomicU64| f64::from_bits(slot.load(Ordering::Relaxed));
        for (joint, slots) in self.slots.chunks_exact(FIELDS).enumerate() {
            out.positions[joint] = load(&slots[POSITION]);
            out.velocities[joint] = load(&slots[VELOCITY]);
            out.efforts[joint] = load(&slots[EFFORT]);
            out.limits_lower[joint] = load(&slots[LIMIT_LOWER]);
            out.limits_upper[joint] = load(&slots[LIMIT_UPPER]);
            out.last_seen[joint] = slots[LAST_SEEN].load(Ordering::Relaxed);
        }
        out.sim_time = self
            .sim_time_present
            .load(Ordering::Relaxed)
            .then(|| SimTime {
                sec: self.sim_time_sec.load(Ordering::Relaxed) as i64,
                nsec: self.sim_time_nsec.load(Ordering::Relaxed) as u32 as i32,
            });
        out.received_at = match self.received_nanos.load(Ordering::Relaxed) {
            0 => None,
            nanos => self.epoch.checked_add(Duration::from_nanos(nanos - 1)),
        };
    }

    /// Takes the writer's side of the lock: turns an even sequence odd, returns the even one.
    fn lock_for_writing(&self) -> u64 {
        let mut spins = 0;
        loop {
            let current = self.sequence.load(Ordering::Relaxed);
            if current & 1 == 0
                && self
                    .sequence
                    .compare_exchange_weak(
                        current,
                        current + 1,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                return current;
            }
            back_off(&mut spins);
        }
    }

    fn after_write(&self) {
        let became_ready = !self.ready.load(Ordering::Relaxed) && self.all_joints_ready();
        if became_ready {
            self.ready.store(true, Ordering::SeqCst);
        }
        // Pairs with the fence in `wait_until`: either the waiter sees this write, or we see
        // the waiter's registration and wake it (store-load ordering needs SeqCst on both).
        fence(Ordering::SeqCst);
        let wanted = self.sample_waiters.load(Ordering::Relaxed) > 0
            || (became_ready && self.ready_waiters.load(Ordering::Relaxed) > 0);
        if wanted {
            self.wake_waiters();
        }
    }

    fn all_joints_ready(&self) -> bool {
        self.slots.chunks_exact(FIELDS).all(|joint| {
            joint[LAST_SEEN].load(Ordering::Relaxed) != 0
                && !f64::from_bits(joint[LIMIT_LOWER].load(Ordering::Relaxed)).is_nan()
                && !f64::from_bits(joint[LIMIT_UPPER].load(Ordering::Relaxed)).is_nan()
        })
    }

    /// Wakes everyone blocked in [`wait_until`](Self::wait_until) so they re-check.
    pub fn wake_waiters(&self) {
        let _guard = self.wait_lock.lock();
        self.wakeup.notify_all();
    }

    /// Blocks until `done()` holds or `deadline` passes, re-checking on every `interest`
    /// event and on [`wake_waiters`](Self::wake_waiters). Returns the last `done()`.
    pub fn wait_until(
        &self,
        interest: Interest,
        deadline: Option<Instant>,
        mut done: impl FnMut() -> bool,
    ) -> bool {
        let waiters = match interest {
            Interest::Sample => &self.sample_waiters,
            Interest::Ready => &self.ready_waiters,
        };
        let mut guard = self.wait_lock.lock();
        waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let result = loop {
            if done() {
                break true;
            }
            match deadline {
                Some(deadline) => {
                    if self.wakeup.wait_until(&mut guard, deadline).timed_out() {
                        break done();
                    }
                }
                None => self.wakeup.wait(&mut guard),
            }
        };
        waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Blocks until a message with a sequence number above `sequence` has been written, or
    /// `timeout` passes. Returns the latest sequence number if one arrived.
    pub fn wait_for_sample_after(&self, sequence: u64, timeout: Duration) -> Option<u64> {
        let deadline = Instant::now().checked_add(timeout);
        self.wait_until(Interest::Sample, deadline, || self.sequence() > sequence)
            .then(|| self.sequence())
    }
}

fn back_off(spins: &mut u32) {
    if *spins < SPINS_BEFORE_YIELD {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn sample(index: usize, value: f64) -> JointSample {
        JointSample {
            index,
            position: value,
            velocity: value + 0.1,
            effort: value + 0.2,
            limit_lower: -value,
            limit_upper: value,
        }
    }

    #[test]
    fn an_unwritten_cache_reads_nan_and_sequence_zero() {
        let cache = JointStateCache::new(2);
        let mut snapshot = JointSnapshot::new(0);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.joint_count(), 2);
        assert!(snapshot.positions.iter().all(|p| p.is_nan()));
        assert_eq!(snapshot.last_seen, [0, 0]);
        assert_eq!(snapshot.sequence, 0);
        assert_eq!(snapshot.received_at, None);
        assert!(snapshot.is_stale(Duration::from_secs(1000)));
        assert!(!cache.is_ready());
    }

    #[test]
    fn a_write_superseding_skipped_messages_counts_them_in_the_sequence() {
        let cache = JointStateCache::new(1);
        assert_eq!(cache.write(&[sample(0, 1.0)], None, Instant::now()), 1);
        let newest = cache.write_superseding(&[sample(0, 5.0)], None, Instant::now(), 3);
        assert_eq!(newest, 5, "messages 2 to 4 were skipped for 5");
        assert_eq!(cache.sequence(), 5);
        assert_eq!(cache.wait_for_sample_after(4, Duration::ZERO), Some(5));
        let mut snapshot = JointSnapshot::new(1);
        cache.read(&mut snapshot);
        assert_eq!((snapshot.positions[0], snapshot.last_seen[0]), (5.0, 5));
        assert_eq!(cache.write(&[sample(0, 6.0)], None, Instant::now()), 6);
    }

    #[test]
    fn a_write_is_read_back_whole_with_stamp_instant_and_sequence() {
        let cache = JointStateCache::new(2);
        let now = Instant::now();
        let stamp = SimTime { sec: 12, nsec: 5 };
        let sequence = cache.write(&[sample(1, 2.0), sample(0, 1.0)], Some(stamp), now);
        assert_eq!(sequence, 1);
        let mut snapshot = JointSnapshot::new(2);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.positions, [1.0, 2.0]);
        assert_eq!(snapshot.velocities, [1.1, 2.1]);
        assert_eq!(snapshot.efforts, [1.2, 2.2]);
        assert_eq!(snapshot.limits_lower, [-1.0, -2.0]);
        assert_eq!(snapshot.limits_upper, [1.0, 2.0]);
        assert_eq!(snapshot.last_seen, [1, 1]);
        assert_eq!(snapshot.sim_time, Some(stamp));
        assert_eq!(snapshot.received_at, Some(now));
        assert_eq!(snapshot.sequence, 1);
        assert!(!snapshot.is_stale(Duration::from_secs(1000)));
        assert!(cache.is_ready());
    }

    #[test]
    fn a_partial_message_keeps_older_values_and_out_of_range_indices_are_ignored() {
        let cache = JointStateCache::new(2);
        cache.write(&[sample(0, 1.0), sample(1, 2.0)], None, Instant::now());
        cache.write(&[sample(1, 3.0), sample(7, 9.0)], None, Instant::now());
        let mut snapshot = JointSnapshot::new(2);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.positions, [1.0, 3.0]);
        assert_eq!(snapshot.last_seen, [1, 2]);
        assert_eq!(snapshot.sequence, 2);
        assert_eq!(snapshot.sim_time, None);
    }

    #[test]
    fn readiness_needs_every_joint_with_non_nan_limits_and_accepts_infinite_ones() {
        let cache = JointStateCache::new(2);
        cache.write(&[sample(0, 1.0)], None, Instant::now());
        assert!(!cache.is_ready());
        let mut no_limits = sample(1, 1.0);
        no_limits.limit_upper = f64::NAN;
        cache.write(&[no_limits], None, Instant::now());
        assert!(!cache.is_ready());
        let mut unbounded = sample(1, 1.0);
        unbounded.limit_lower = f64::NEG_INFINITY;
        unbounded.limit_upper = f64::INFINITY;
        cache.write(&[unbounded], None, Instant::now());
        assert!(cache.is_ready());
    }

    #[test]
    fn wait_for_sample_after_wakes_on_a_write_from_another_thread_and_times_out_without() {
        let cache = Arc::new(JointStateCache::new(1));
        assert_eq!(
            cache.wait_for_sample_after(0, Duration::from_millis(20)),
            None
        );
        let writer = {
            let cache = cache.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                cache.write(&[sample(0, 1.0)], None, Instant::now())
            })
        };
        assert_eq!(
            cache.wait_for_sample_after(0, Duration::from_secs(60)),
            Some(1)
        );
        writer.join().unwrap();
    }
}
