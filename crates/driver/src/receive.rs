use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gz_transport::msgs::Model;
use parking_lot::Mutex;

use crate::{JointSample, JointStateCache, SimTime};

/// What the receive path refused or ignored, shared with the driver (its counters and the
/// joints `initialize` names as missing). Survives reconnects: the driver keeps one.
#[derive(Default)]
pub(crate) struct ReceiveHealth {
    /// Messages not written because they lacked a configured joint.
    pub incomplete: AtomicU64,
    /// Messages that named a configured joint more than once.
    pub with_duplicates: AtomicU64,
    /// Configuration indices of the joints the latest message lacked (empty: it was complete,
    /// or none arrived yet).
    pub absent: Mutex<Vec<usize>>,
}

/// The receive path: turns Gazebo `Model` messages into cache writes. Joints are matched by
/// name (their order in the message is irrelevant) and joints not configured are ignored.
///
/// The contract for a message that does not carry every configured joint (a model reloaded
/// with a joint renamed, a partial publisher, a configured joint without `axis1` data, i.e. a
/// fixed one): it is not written at all. Writing its joints alone would give the joints it
/// lacks the new stamp and sequence with their old values, a stale position published as a
/// fresh one. So the cache keeps the last complete state, whose age then grows and makes the
/// robot stale where staleness is judged (the node, the Python module, the composer all read
/// this cache). Such messages are counted, the lacking joints are named in one warning per
/// onset (a complete message ends it), and `initialize` names them while it waits.
///
/// A joint named twice in one message: the first entry wins, the message is counted and one
/// warning per onset names the joint.
///
/// The transport callback owns one; it reuses its buffers, so after the first message a
/// receive allocates nothing (only a warning does).
pub struct ModelReceiver {
    cache: Arc<JointStateCache>,
    joint_names: Vec<String>,
    index_of: HashMap<String, usize>,
    samples: Vec<JointSample>,
    /// Per joint, the number of the message (counted here) that last carried it: a second
    /// entry in the same message is a duplicate, a joint left behind is absent.
    carried: Vec<u64>,
    messages: u64,
    /// The absent joints of the latest message, as last given to `health`.
    absent: Vec<usize>,
    absent_warned: bool,
    duplicates_warned: bool,
    /// Messages refused since the last write: the next write's sequence counts them as
    /// never read, as it does the messages the transport skipped.
    refused: u64,
    health: Arc<ReceiveHealth>,
}

impl ModelReceiver {
    /// A receiver writing into `cache`, whose slot `i` is `joint_names[i]`.
    pub fn new(cache: Arc<JointStateCache>, joint_names: &[String]) -> Self {
        Self::with_health(cache, joint_names, Arc::default())
    }

    pub(crate) fn with_health(
        cache: Arc<JointStateCache>,
        joint_names: &[String],
        health: Arc<ReceiveHealth>,
    ) -> Self {
        ModelReceiver {
            index_of: joint_names
                .iter()
                .enumerate()
                .map(|(index, name)| (name.clone(), index))
                .collect(),
            joint_names: joint_names.to_vec(),
            samples: Vec::with_capacity(joint_names.len()),
            carried: vec![0; joint_names.len()],
            messages: 0,
            absent: Vec::with_capacity(joint_names.len()),
            absent_warned: false,
            duplicates_warned: false,
            refused: 0,
            health,
            cache,
        }
    }

    /// Writes `model` into the cache as one message stamped with Gazebo's header stamp and
    /// `received_at`, if it carries every configured joint; `superseded` earlier messages the
    /// transport skipped for it, and the messages refused since the last write, are counted
    /// in the sequence ([`JointStateCache::write_superseding`]). Returns the message's
    /// sequence number, or `None` if it was refused (the cache is then left untouched).
    pub fn receive(&mut self, model: &Model, received_at: Instant, superseded: u64) -> Option<u64> {
        self.messages += 1;
        let message = self.messages;
        self.samples.clear();
        let mut duplicates = false;
        for joint in &model.joint {
            let (Some(&index), Some(axis)) = (self.index_of.get(&joint.name), &joint.axis1) else {
                continue;
            };
            if self.carried[index] == message {
                duplicates = true;
                continue;
            }
            self.carried[index] = message;
            self.samples.push(JointSample {
                index,
                position: axis.position,
                velocity: axis.velocity,
                effort: axis.force,
                limit_lower: axis.limit_lower,
                limit_upper: axis.limit_upper,
            });
        }
        self.note_duplicates(model, duplicates);
        let complete = self.samples.len() == self.joint_names.len();
        self.note_absent(complete);
        if !complete {
            self.health.incomplete.fetch_add(1, Ordering::Relaxed);
            self.refused += 1 + superseded;
            return None;
        }
        let sim_time = model_stamp(model);
        let skipped = superseded + std::mem::take(&mut self.refused);
        Some(
            self.cache
                .write_superseding(&self.samples, sim_time, received_at, skipped),
        )
    }

    fn note_duplicates(&mut self, model: &Model, duplicates: bool) {
        if !duplicates {
            self.duplicates_warned = false;
            return;
        }
        self.health.with_duplicates.fetch_add(1, Ordering::Relaxed);
        if std::mem::replace(&mut self.duplicates_warned, true) {
            return;
        }
        let mut named: Vec<&str> = Vec::new();
        for (position, joint) in model.joint.iter().enumerate() {
            let configured = self.index_of.contains_key(&joint.name);
            let again = model.joint[..position]
                .iter()
                .any(|earlier| earlier.name == joint.name);
            if configured && again && !named.contains(&joint.name.as_str()) {
                named.push(&joint.name);
            }
        }
        tracing::warn!(
            "RobotDriverGazebo: a joint state names {} more than once; the first entry of each \
             is taken (warned once until a message without duplicates).",
            named.join(", ")
        );
    }

    /// Brings the absent joints of this message up to date, warning at the onset of
    /// incomplete messages and telling when they end.
    fn note_absent(&mut self, complete: bool) {
        let message = self.messages;
        let carried = &self.carried;
        let unchanged = if complete {
            self.absent.is_empty()
        } else {
            let mut absent = (0..carried.len()).filter(|&joint| carried[joint] != message);
            self.absent.iter().copied().eq(absent.by_ref())
        };
        if !unchanged {
            self.absent.clear();
            self.absent
                .extend((0..carried.len()).filter(|&joint| carried[joint] != message));
            self.health.absent.lock().clone_from(&self.absent);
        }
        if complete {
            if std::mem::replace(&mut self.absent_warned, false) {
                tracing::info!(
                    "RobotDriverGazebo: joint states carry every configured joint again."
                );
            }
        } else if !std::mem::replace(&mut self.absent_warned, true) {
            let names: Vec<&str> = self
                .absent
                .iter()
                .map(|&joint| self.joint_names[joint].as_str())
                .collect();
            tracing::warn!(
                "RobotDriverGazebo: a joint state lacks the configured joint(s) {}; such \
                 messages are not taken, so the last complete state ages and goes stale \
                 (warned once until a complete message).",
                names.join(", ")
            );
        }
    }
}

/// Gazebo's header stamp of `model`, as the contract's simulation time.
pub(crate) fn model_stamp(model: &Model) -> Option<SimTime> {
    let stamp = model.header.as_ref()?.stamp?;
    Some(SimTime {
        sec: stamp.sec,
        nsec: stamp.nsec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_capture::capture_logs;
    use crate::{JointSnapshot, SimTime};
    use gz_transport::msgs::{Axis, Header, Joint};

    fn joint(name: &str, position: f64) -> Joint {
        Joint {
            name: name.into(),
            axis1: Some(Axis {
                position,
                velocity: 10.0 * position,
                force: 100.0 * position,
                limit_lower: -position,
                limit_upper: position,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn joints_are_matched_by_name_in_any_order_and_unknown_ones_ignored() {
        let cache = Arc::new(JointStateCache::new(2));
        let mut receiver = ModelReceiver::new(cache.clone(), &names(&["a", "b"]));
        let model = Model {
            header: Some(Header {
                stamp: Some(gz_transport::msgs::Time { sec: 3, nsec: 4 }),
                data: vec![],
            }),
            joint: vec![joint("unknown", 9.0), joint("b", 2.0), joint("a", 1.0)],
            ..Default::default()
        };
        let at = Instant::now();
        assert_eq!(receiver.receive(&model, at, 0), Some(1));
        let mut snapshot = JointSnapshot::new(2);
        cache.read(&mut snapshot);
        // Every field: the joints' values in configuration order, the stamp, arrival and sequence.
        let expected = JointSnapshot {
            positions: vec![1.0, 2.0],
            velocities: vec![10.0, 20.0],
            efforts: vec![100.0, 200.0],
            limits_lower: vec![-1.0, -2.0],
            limits_upper: vec![1.0, 2.0],
            last_seen: vec![1, 1],
            sim_time: Some(SimTime { sec: 3, nsec: 4 }),
            received_at: Some(at),
            sequence: 1,
        };
        assert_eq!(snapshot, expected);
        assert!(cache.is_ready());
    }

    #[test]
    fn a_message_without_our_joints_or_axis_data_leaves_the_cache_untouched() {
        let cache = Arc::new(JointStateCache::new(1));
        let mut receiver = ModelReceiver::new(cache.clone(), &names(&["a"]));
        let fixed = Joint {
            name: "a".into(),
            axis1: None,
            ..Default::default()
        };
        let model = Model {
            joint: vec![joint("other", 1.0), fixed],
            ..Default::default()
        };
        assert_eq!(receiver.receive(&model, Instant::now(), 0), None);
        assert_eq!(receiver.receive(&Model::default(), Instant::now(), 0), None);
        assert_eq!(cache.sequence(), 0);
    }

    #[test]
    fn a_message_lacking_a_configured_joint_is_not_taken_as_a_fresh_state() {
        let cache = Arc::new(JointStateCache::new(3));
        let health = Arc::new(ReceiveHealth::default());
        let mut receiver =
            ModelReceiver::with_health(cache.clone(), &names(&["a", "b", "c"]), health.clone());
        let complete = Model {
            joint: vec![joint("a", 1.0), joint("b", 2.0), joint("c", 3.0)],
            ..Default::default()
        };
        let first = Instant::now();
        assert_eq!(receiver.receive(&complete, first, 0), Some(1));
        // "b" renamed away: its old value must not come out with a new stamp and sequence.
        let partial = Model {
            joint: vec![joint("a", 10.0), joint("c", 30.0)],
            ..Default::default()
        };
        let later = first + std::time::Duration::from_millis(5);
        assert_eq!(receiver.receive(&partial, later, 0), None);
        assert_eq!(receiver.receive(&partial, later, 2), None);
        let mut snapshot = JointSnapshot::new(3);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.sequence, 1);
        assert_eq!(
            snapshot.received_at,
            Some(first),
            "the last complete state ages"
        );
        assert_eq!(snapshot.positions, [1.0, 2.0, 3.0]);
        assert_eq!(health.incomplete.load(Ordering::Relaxed), 2);
        assert_eq!(*health.absent.lock(), [1]);
        // Complete again: taken, and the sequence counts the two refused messages and the
        // two the transport skipped for the second one.
        assert_eq!(receiver.receive(&complete, later, 0), Some(6));
        assert!(health.absent.lock().is_empty());
    }

    #[test]
    fn the_first_of_duplicate_entries_wins_and_the_message_is_counted() {
        let cache = Arc::new(JointStateCache::new(2));
        let health = Arc::new(ReceiveHealth::default());
        let mut receiver =
            ModelReceiver::with_health(cache.clone(), &names(&["a", "b"]), health.clone());
        let model = Model {
            joint: vec![joint("a", 1.0), joint("b", 2.0), joint("a", 7.0)],
            ..Default::default()
        };
        let (written, logs) = capture_logs(|| {
            let written = receiver.receive(&model, Instant::now(), 0);
            receiver.receive(&model, Instant::now(), 0);
            written
        });
        assert_eq!(written, Some(1));
        let mut snapshot = JointSnapshot::new(2);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.positions, [1.0, 2.0]);
        assert_eq!(health.with_duplicates.load(Ordering::Relaxed), 2);
        assert_eq!(
            logs.matches("names a more than once").count(),
            1,
            "one warning per onset:\n{logs}"
        );
        // A joint named twice does not stand in for a missing one.
        let twice = Model {
            joint: vec![joint("a", 1.0), joint("a", 1.0)],
            ..Default::default()
        };
        assert_eq!(receiver.receive(&twice, Instant::now(), 0), None);
    }

    #[test]
    fn a_simulation_clock_going_backwards_leaves_the_state_fresh_by_the_monotonic_clock() {
        // Staleness is the age of the receive instant (a monotonic clock), never of Gazebo's
        // stamp: a world reset that restarts simulation time from zero is not a stale state.
        let cache = Arc::new(JointStateCache::new(1));
        let mut receiver = ModelReceiver::new(cache.clone(), &names(&["a"]));
        let stamped = |sec| Model {
            header: Some(Header {
                stamp: Some(gz_transport::msgs::Time { sec, nsec: 0 }),
                data: vec![],
            }),
            joint: vec![joint("a", 1.0)],
            ..Default::default()
        };
        receiver.receive(&stamped(1000), Instant::now(), 0);
        let reset_at = Instant::now();
        assert_eq!(receiver.receive(&stamped(0), reset_at, 0), Some(2));
        let mut snapshot = JointSnapshot::new(1);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.sim_time, Some(SimTime { sec: 0, nsec: 0 }));
        assert_eq!(snapshot.received_at, Some(reset_at));
        assert!(!snapshot.is_stale(std::time::Duration::from_secs(3600)));
    }
}
