use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the publisher the joint states come from must be silent before another
/// publisher's messages are taken instead. Far above any JointStatePublisher's period, far
/// below the 1 s in which a restarted simulator must be followed.
pub(crate) const SOURCE_SILENCE: Duration = Duration::from_millis(250);

/// At most this many other publishers are named in the log; a flood of invented addresses
/// cannot grow the set (or the log) without bound.
const NAMED_OFFENDERS: usize = 16;

/// Which publisher the joint states are taken from: one at a time. Two simulators on the same
/// topic (a restarted one while the killed one is not yet forgotten, or a second one started
/// by mistake) would otherwise interleave two robots' states in one stream. The current
/// publisher keeps the stream while it sends; when it has been silent for
/// [`SOURCE_SILENCE`], the next publisher that sends takes over (logged). Messages of other
/// publishers meanwhile are dropped, counted, and each such publisher is named once.
pub(crate) struct SourceGate {
    topic: String,
    current: Option<(String, Instant)>,
    /// Messages dropped because another publisher held the stream.
    dropped: Arc<AtomicU64>,
    named: HashSet<String>,
}

impl SourceGate {
    pub fn new(topic: &str, dropped: Arc<AtomicU64>) -> Self {
        SourceGate {
            topic: topic.to_owned(),
            current: None,
            dropped,
            named: HashSet::new(),
        }
    }

    /// Whether a message of `publisher` (its ZeroMQ address) received at `now` is taken.
    pub fn admit(&mut self, publisher: &str, now: Instant) -> bool {
        let topic = &self.topic;
        match &mut self.current {
            Some((current, last)) if current == publisher => {
                *last = now;
                return true;
            }
            Some((current, last)) if now.saturating_duration_since(*last) < SOURCE_SILENCE => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                if self.named.len() < NAMED_OFFENDERS && self.named.insert(publisher.to_owned()) {
                    tracing::warn!(
                        "RobotDriverGazebo: a second publisher ({publisher}) sends joint states \
                         on [{topic}]; its messages are dropped while {current} sends \
                         (logged once per publisher)."
                    );
                }
                return false;
            }
            Some((current, last)) => tracing::warn!(
                "RobotDriverGazebo: joint states on [{topic}] now come from {publisher}; \
                 {current} has been silent for {:.3} s.",
                now.saturating_duration_since(*last).as_secs_f64()
            ),
            None => {}
        }
        self.current = Some((publisher.to_owned(), now));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_publisher_at_a_time_and_a_silent_one_is_replaced() {
        let dropped = Arc::new(AtomicU64::new(0));
        let mut gate = SourceGate::new("/states", dropped.clone());
        let t0 = Instant::now();
        assert!(gate.admit("tcp://a:1", t0));
        assert!(!gate.admit("tcp://b:2", t0 + Duration::from_millis(1)));
        assert!(gate.admit("tcp://a:1", t0 + Duration::from_millis(200)));
        assert!(!gate.admit("tcp://b:2", t0 + Duration::from_millis(400)));
        assert_eq!(dropped.load(Ordering::Relaxed), 2);
        // a is silent for longer than SOURCE_SILENCE: b takes over, and a is now the other one.
        let later = t0 + Duration::from_millis(200) + SOURCE_SILENCE;
        assert!(gate.admit("tcp://b:2", later));
        assert!(!gate.admit("tcp://a:1", later + Duration::from_millis(1)));
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn offenders_named_are_bounded() {
        let mut gate = SourceGate::new("/states", Arc::new(AtomicU64::new(0)));
        let t0 = Instant::now();
        gate.admit("tcp://a:1", t0);
        for port in 0..1000 {
            gate.admit(&format!("tcp://b:{port}"), t0);
        }
        assert_eq!(gate.named.len(), NAMED_OFFENDERS);
    }
}
