//! A world reset, as the joint states show it: Gazebo's sim time going back.
//!
//! Why the driver watches for it: after a reset (`reset { all }` or `{ time_only }` on
//! `/world/<world>/control`) sim time restarts from 0 and, on Harmonic, every joint is put
//! back where it was loaded. Nothing else on the joint-state stream says so. The states
//! themselves need nothing special (their freshness is judged on the monotonic receive
//! instant and their order on the driver's sequence, never on sim time), but a velocity or
//! effort command in force must not outlive the world it was given in: Fortress keeps it in
//! its JointController, and under `ForwardMode::EveryPeriod` the driver itself would send it
//! again into the new world. So on a reset the driver sets it to zero until the client sends a
//! new one (see [`RobotDriverGazebo`](crate::RobotDriverGazebo)), and says so once.
//!
//! A message from another publisher than the previous one (a restarted simulator, which the
//! source gate logs itself) starts a new timeline, not a reset. A sim time that stands still
//! (a paused world) is no reset either.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::SimTime;

/// One world reset: the sim time of the last state before it and of the first one after.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldReset {
    /// The stamp of the last state before the reset.
    pub from: SimTime,
    /// The stamp of the first state after it (earlier than `from`).
    pub to: SimTime,
}

impl WorldReset {
    /// `from` and `to` in seconds, for messages.
    pub fn seconds(&self) -> (f64, f64) {
        let seconds = |time: SimTime| time.as_nanos() as f64 * 1e-9;
        (seconds(self.from), seconds(self.to))
    }
}

/// The receive thread's watch over one joint-state stream's stamps.
pub(crate) struct ResetWatch {
    /// The publisher of the last stamped state and its stamp.
    last: Option<(String, SimTime)>,
}

impl ResetWatch {
    pub fn new() -> Self {
        ResetWatch { last: None }
    }

    /// Looks at a state of `publisher` stamped `stamp`; the reset it shows, if it does. A
    /// state without a stamp changes nothing (there is nothing to compare).
    pub fn observe(&mut self, publisher: &str, stamp: Option<SimTime>) -> Option<WorldReset> {
        let stamp = stamp?;
        let key = |time: SimTime| (time.sec, time.nsec);
        match &mut self.last {
            Some((last_publisher, last)) if last_publisher == publisher => {
                let went_back = key(stamp) < key(*last);
                let reset = went_back.then_some(WorldReset {
                    from: *last,
                    to: stamp,
                });
                *last = stamp;
                reset
            }
            // The first state, or one from a new publisher: a timeline of its own. Allocates
            // only here, never per message.
            _ => {
                self.last = Some((publisher.to_owned(), stamp));
                None
            }
        }
    }
}

/// The resets seen so far: written by the receive thread, read by whoever sends targets.
#[derive(Default)]
pub(crate) struct Resets {
    count: AtomicU64,
    last: Mutex<Option<WorldReset>>,
}

impl Resets {
    /// Records `reset` (last before counted, so that a reader seeing the count finds it).
    pub fn record(&self, reset: WorldReset) {
        *self.last.lock() = Some(reset);
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// How many resets were seen.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// The latest one.
    pub fn last(&self) -> Option<WorldReset> {
        *self.last.lock()
    }
}

/// Two resets seen this close together (wall time) in one partition, from sim times this
/// close, are the same world's: several robots of one world, each with its stream, see it.
const SAME_RESET_WITHIN: Duration = Duration::from_secs(2);
const SAME_RESET_FROM_S: f64 = 1.0;

/// The resets announced in this process, by partition: one line per reset of a world, not
/// one per robot of it.
pub(crate) struct Announcements {
    recent: Vec<(String, Instant, f64)>,
}

impl Announcements {
    pub const fn new() -> Self {
        Announcements { recent: Vec::new() }
    }

    /// Whether `reset`, seen at `now` in `partition`, is news (else another stream of the same
    /// world announced it already).
    pub fn is_news(&mut self, partition: &str, reset: WorldReset, now: Instant) -> bool {
        let (from, _) = reset.seconds();
        self.recent
            .retain(|(_, at, _)| now.saturating_duration_since(*at) < SAME_RESET_WITHIN);
        let known = self.recent.iter().any(|(other, _, other_from)| {
            other == partition && (other_from - from).abs() < SAME_RESET_FROM_S
        });
        if !known {
            self.recent.push((partition.to_owned(), now, from));
        }
        !known
    }
}

/// The process's announcements (drivers of several robots share a process).
pub(crate) static ANNOUNCEMENTS: Mutex<Announcements> = Mutex::new(Announcements::new());

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sec: i64, nsec: i32) -> Option<SimTime> {
        Some(SimTime { sec, nsec })
    }

    #[test]
    fn sim_time_going_back_on_one_publisher_is_a_reset_standing_still_is_not() {
        let mut watch = ResetWatch::new();
        assert_eq!(watch.observe("tcp://a:1", at(12, 300_000_000)), None);
        assert_eq!(watch.observe("tcp://a:1", at(12, 302_000_000)), None);
        // Paused: the same stamp again and again.
        assert_eq!(watch.observe("tcp://a:1", at(12, 302_000_000)), None);
        assert_eq!(watch.observe("tcp://a:1", None), None);
        assert_eq!(
            watch.observe("tcp://a:1", at(0, 2_000_000)),
            Some(WorldReset {
                from: SimTime {
                    sec: 12,
                    nsec: 302_000_000
                },
                to: SimTime {
                    sec: 0,
                    nsec: 2_000_000
                },
            })
        );
        // Once: the new timeline goes forward again.
        assert_eq!(watch.observe("tcp://a:1", at(0, 4_000_000)), None);
        // Back by less than a second, nanoseconds only.
        assert!(watch.observe("tcp://a:1", at(0, 3_000_000)).is_some());
    }

    #[test]
    fn a_new_publisher_starts_a_timeline_of_its_own() {
        let mut watch = ResetWatch::new();
        watch.observe("tcp://a:1", at(50, 0));
        assert_eq!(watch.observe("tcp://b:2", at(0, 2_000_000)), None);
        assert_eq!(watch.observe("tcp://b:2", at(0, 4_000_000)), None);
    }

    #[test]
    fn one_worlds_reset_seen_by_several_streams_is_news_once() {
        let reset = |from: i64| WorldReset {
            from: SimTime { sec: from, nsec: 0 },
            to: SimTime { sec: 0, nsec: 0 },
        };
        let mut announcements = Announcements::new();
        let t0 = Instant::now();
        assert!(announcements.is_news("p", reset(12), t0));
        assert!(!announcements.is_news("p", reset(12), t0 + Duration::from_millis(5)));
        // Another partition's world, or the same world reset again later: news.
        assert!(announcements.is_news("q", reset(12), t0 + Duration::from_millis(5)));
        assert!(announcements.is_news("p", reset(3), t0 + Duration::from_millis(10)));
        assert!(announcements.is_news("p", reset(12), t0 + SAME_RESET_WITHIN));
    }

    #[test]
    fn the_reset_in_seconds() {
        let reset = WorldReset {
            from: SimTime {
                sec: 12,
                nsec: 300_000_000,
            },
            to: SimTime { sec: 0, nsec: 0 },
        };
        let (from, to) = reset.seconds();
        assert!((from - 12.3).abs() < 1e-9 && to == 0.0);
    }
}
