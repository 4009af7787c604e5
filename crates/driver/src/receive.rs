use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use gz_transport::msgs::Model;

use crate::{JointSample, JointStateCache};

/// The receive path: turns Gazebo `Model` messages into cache writes. Joints are matched by
/// name (their order in the message is irrelevant), joints not configured are ignored, and a
/// configured joint without `axis1` data (a fixed joint) is skipped rather than read as zeros.
/// The transport callback owns one; it reuses its buffer, so after the first message a
/// receive allocates nothing.
pub struct ModelReceiver {
    cache: Arc<JointStateCache>,
    index_of: HashMap<String, usize>,
    samples: Vec<JointSample>,
}

impl ModelReceiver {
    /// A receiver writing into `cache`, whose slot `i` is `joint_names[i]`.
    pub fn new(cache: Arc<JointStateCache>, joint_names: &[String]) -> Self {
        ModelReceiver {
            index_of: joint_names
                .iter()
                .enumerate()
                .map(|(index, name)| (name.clone(), index))
                .collect(),
            samples: Vec::with_capacity(joint_names.len()),
            cache,
        }
    }

    /// Writes the configured joints of `model` into the cache as one message stamped with
    /// Gazebo's header stamp and `received_at`; `superseded` earlier messages the transport
    /// skipped for it are counted in the sequence ([`JointStateCache::write_superseding`]).
    /// Returns the message's sequence number, or `None` if the message carried none of our
    /// joints (the cache is then left untouched).
    pub fn receive(&mut self, model: &Model, received_at: Instant, superseded: u64) -> Option<u64> {
        self.samples.clear();
        for joint in &model.joint {
            let (Some(&index), Some(axis)) = (self.index_of.get(&joint.name), &joint.axis1) else {
                continue;
            };
            self.samples.push(JointSample {
                index,
                position: axis.position,
                velocity: axis.velocity,
                effort: axis.force,
                limit_lower: axis.limit_lower,
                limit_upper: axis.limit_upper,
            });
        }
        if self.samples.is_empty() {
            return None;
        }
        let sim_time = model.header.as_ref().and_then(|header| header.stamp);
        Some(
            self.cache
                .write_superseding(&self.samples, sim_time, received_at, superseded),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                stamp: Some(SimTime { sec: 3, nsec: 4 }),
                data: vec![],
            }),
            joint: vec![joint("unknown", 9.0), joint("b", 2.0), joint("a", 1.0)],
            ..Default::default()
        };
        let at = Instant::now();
        assert_eq!(receiver.receive(&model, at, 0), Some(1));
        let mut snapshot = JointSnapshot::new(2);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.positions, [1.0, 2.0]);
        assert_eq!(snapshot.velocities, [10.0, 20.0]);
        assert_eq!(snapshot.efforts, [100.0, 200.0]);
        assert_eq!(snapshot.limits_lower, [-1.0, -2.0]);
        assert_eq!(snapshot.limits_upper, [1.0, 2.0]);
        assert_eq!(snapshot.sim_time, Some(SimTime { sec: 3, nsec: 4 }));
        assert_eq!(snapshot.received_at, Some(at));
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
    fn a_message_lacking_a_configured_joint_leaves_it_unseen() {
        let cache = Arc::new(JointStateCache::new(3));
        let mut receiver = ModelReceiver::new(cache.clone(), &names(&["a", "b", "c"]));
        let model = Model {
            joint: vec![joint("a", 1.0), joint("c", 3.0)],
            ..Default::default()
        };
        receiver.receive(&model, Instant::now(), 0);
        let mut snapshot = JointSnapshot::new(3);
        cache.read(&mut snapshot);
        assert_eq!(snapshot.last_seen, [1, 0, 1]);
        assert!(snapshot.positions[1].is_nan());
        assert!(!cache.is_ready());
    }
}
