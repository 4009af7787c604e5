//! The one-slot mailbox of `set/target_joint_positions` (see [`TargetMailbox`]): the DDS
//! listener thread puts, the loop's duties take (`target_forwarding: periodic`), or a
//! forwarder takes each target on arrival.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use listener_subscription::TakenInfo;
use parking_lot::Mutex;

use crate::robot::counters::{bump, RobotCounters};

/// The latest target received and not yet taken by the loop. A newer message replaces an
/// older one: only the latest target matters. While a forwarder is set (targets forwarded on
/// arrival), targets go to it instead, on the DDS listener thread.
///
/// Latest wins, and the mailbox counts how often it won (`targets_superseded`): targets
/// replaced here before the loop took them, and targets the topic's depth-1 reader replaced
/// before the executor took them (gaps in a publisher's sequence numbers, from its first
/// target taken on). A target the controller sent after that which reached neither the loop
/// nor this count was lost.
pub(crate) struct TargetMailbox {
    latest: Mutex<Option<Vec<f64>>>,
    forwarder: Mutex<Option<TargetForwarder>>,
    /// The last publication sequence number taken from each publisher (by GID).
    sequences: Mutex<HashMap<Vec<u8>, u64>>,
    counters: Arc<RobotCounters>,
}

pub(crate) type TargetForwarder = Box<dyn Fn(Vec<f64>) + Send>;

/// Publishers remembered for their sequence numbers; controllers come and go, and forgetting
/// them all now and then only misses the gap before each one's next target.
const REMEMBERED_PUBLISHERS: usize = 64;

impl TargetMailbox {
    pub fn new(counters: Arc<RobotCounters>) -> Self {
        TargetMailbox {
            latest: Mutex::default(),
            forwarder: Mutex::default(),
            sequences: Mutex::default(),
            counters,
        }
    }

    /// A target from `set/target_joint_positions`, with what DDS said of it.
    pub fn receive(&self, target: Vec<f64>, info: TakenInfo<'_>) {
        self.count_reader_gap(info.publisher_gid, info.publication_sequence_number);
        self.put(target);
    }

    pub(super) fn count_reader_gap(&self, publisher: &[u8], sequence: u64) {
        if sequence == u64::MAX {
            return; // the RMW gives no sequence numbers
        }
        let mut sequences = self.sequences.lock();
        let gap = match sequences.get_mut(publisher) {
            Some(last) => {
                let gap = sequence.saturating_sub(*last).saturating_sub(1);
                *last = sequence;
                gap
            }
            None => {
                if sequences.len() >= REMEMBERED_PUBLISHERS {
                    sequences.clear();
                }
                sequences.insert(publisher.to_vec(), sequence);
                0
            }
        };
        if gap > 0 {
            self.counters
                .targets_superseded
                .fetch_add(gap, Ordering::Relaxed);
        }
    }

    pub fn put(&self, target: Vec<f64>) {
        if let Some(forward) = self.forwarder.lock().as_ref() {
            return forward(target);
        }
        if self.latest.lock().replace(target).is_some() {
            bump(&self.counters.targets_superseded);
        }
    }

    /// Sets (or with `None` removes) the forwarder targets go to on arrival.
    pub fn forward_on_arrival(&self, forwarder: Option<TargetForwarder>) {
        *self.forwarder.lock() = forwarder;
    }

    pub fn take(&self) -> Option<Vec<f64>> {
        self.latest.lock().take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn superseded(mailbox: &TargetMailbox) -> u64 {
        mailbox.counters.targets_superseded.load(Ordering::Relaxed)
    }

    #[test]
    fn a_target_replaced_before_the_loop_took_it_is_counted_superseded() {
        let mailbox = TargetMailbox::new(Arc::default());
        mailbox.put(vec![1.0]);
        mailbox.put(vec![2.0]);
        assert_eq!(mailbox.take(), Some(vec![2.0]));
        mailbox.put(vec![3.0]);
        assert_eq!(mailbox.take(), Some(vec![3.0]));
        assert_eq!(superseded(&mailbox), 1);
    }

    #[test]
    fn gaps_in_a_publishers_sequence_numbers_are_counted_from_its_first_target_on() {
        let mailbox = TargetMailbox::new(Arc::default());
        let (a, b) = ([1u8; 16], [2u8; 16]);
        mailbox.count_reader_gap(&a, 40); // before it: not ours to count
        mailbox.count_reader_gap(&b, 7);
        mailbox.count_reader_gap(&a, 41);
        mailbox.count_reader_gap(&a, 45); // 42, 43, 44 replaced in the reader
        mailbox.count_reader_gap(&b, 9); // 8
        mailbox.count_reader_gap(&b, u64::MAX); // no sequence numbers: nothing known
        assert_eq!(superseded(&mailbox), 4);
    }
}
