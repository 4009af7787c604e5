//! When a robot's state is stale, and when that is worth a warning.
//!
//! The state is stale once it is older than the state timeout (`state_timeout_sec`, by default
//! ten of Gazebo's own message intervals and at least 50 ms): from then on it is never
//! published as fresh, and `/diagnostics` says so. But a loaded machine stalls a thread —
//! Gazebo's, ours, a composite's part — for tens of milliseconds now and then, and a warning
//! for each such stall is one a user learns to ignore. So the warning waits for a stall budget:
//! an outage is logged once it lasted [`STALL_BUDGET`] (or the timeout, if longer), once, with
//! its end; shorter ones are counted and summarised at most once per
//! [`SHORT_STALL_SUMMARY_INTERVAL`].
//!
//! The state's age is its own: for a composite, the age of its oldest part's state. An outage
//! ends when the state is fresh again, not when any message arrives (a composite whose other
//! part still sends is still stale).

use std::time::{Duration, Instant};

/// How long an outage lasts before it is logged as a warning. Longer than the stalls a
/// loaded machine makes (a 2-core machine under a build stalls threads for up to ~200 ms),
/// shorter than a paused or stopped Gazebo (seconds, or for good).
pub(crate) const STALL_BUDGET: Duration = Duration::from_millis(500);
/// At most one line about short stalls per this interval.
pub(crate) const SHORT_STALL_SUMMARY_INTERVAL: Duration = Duration::from_secs(60);

/// What the state's age changed, for the caller to log and count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StaleEvent {
    /// The state just went stale (counted, shown on `/diagnostics`; not logged yet).
    Stale,
    /// The outage outlasted the stall budget: worth one warning.
    Outage { age: Duration },
    /// Fresh again after an outage that was warned about.
    Resumed { outage: Duration },
    /// Fresh again after a stall shorter than the budget; `summary` is set when the short
    /// stalls since the last summary are due to be logged.
    ShortStall { summary: Option<ShortStalls> },
}

/// Short stalls counted since the last summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ShortStalls {
    pub count: u64,
    pub longest: Duration,
}

/// The stale state of one robot.
#[derive(Debug)]
pub(crate) struct Staleness {
    /// Set while stale: when the state was last fresh (the arrival it is as old as), and
    /// whether the outage was logged.
    outage: Option<(Instant, bool)>,
    short: ShortStalls,
    next_summary: Option<Instant>,
}

impl Staleness {
    pub fn new() -> Self {
        Staleness {
            outage: None,
            short: ShortStalls::default(),
            next_summary: None,
        }
    }

    pub fn is_stale(&self) -> bool {
        self.outage.is_some()
    }

    /// The budget an outage must outlast to be logged, for a state timeout `timeout`.
    pub fn budget(timeout: Duration) -> Duration {
        timeout.max(STALL_BUDGET)
    }

    /// Looks at the state's age at `now`: `received_at` is when the state (for a composite,
    /// its oldest part's) arrived, `None` before the first one.
    pub fn check(
        &mut self,
        now: Instant,
        received_at: Option<Instant>,
        timeout: Duration,
    ) -> Option<StaleEvent> {
        let received_at = received_at?;
        let age = now.saturating_duration_since(received_at);
        match &mut self.outage {
            None if age > timeout => {
                self.outage = Some((received_at, false));
                Some(StaleEvent::Stale)
            }
            None => None,
            Some((since, warned)) if received_at > *since => {
                // Fresh again (a newer state arrived): the outage ends whatever its length.
                let outage = received_at.saturating_duration_since(*since);
                let warned = *warned;
                self.outage = None;
                if warned {
                    return Some(StaleEvent::Resumed { outage });
                }
                self.short.count += 1;
                self.short.longest = self.short.longest.max(outage);
                let summary = match self.next_summary {
                    Some(at) if now < at => None,
                    _ => {
                        self.next_summary = Some(now + SHORT_STALL_SUMMARY_INTERVAL);
                        Some(std::mem::take(&mut self.short))
                    }
                };
                Some(StaleEvent::ShortStall { summary })
            }
            Some((since, warned)) => {
                let age = now.saturating_duration_since(*since);
                if !*warned && age > Self::budget(timeout) {
                    *warned = true;
                    Some(StaleEvent::Outage { age })
                } else {
                    None
                }
            }
        }
    }

    /// When [`check`](Self::check) next has something to say if no newer state arrives.
    pub fn deadline(&self, received_at: Option<Instant>, timeout: Duration) -> Option<Instant> {
        match self.outage {
            None => received_at.map(|at| just_past(at + timeout)),
            Some((since, false)) => Some(just_past(since + Self::budget(timeout))),
            Some((_, true)) => None,
        }
    }
}

/// The first instant after `limit`: [`Staleness::check`] compares ages with `>`, so an age
/// of exactly the timeout (or budget) is not past it yet.
fn just_past(limit: Instant) -> Instant {
    limit + Duration::from_nanos(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const TIMEOUT: Duration = Duration::from_millis(50);

    #[test]
    fn a_state_older_than_the_timeout_is_stale_and_warned_only_past_the_budget() {
        let t0 = Instant::now();
        let mut staleness = Staleness::new();
        // At t0 + ms, with the state of t0 still the latest: what `check` says, whether the
        // state is stale then, and when `check` next has something to say.
        let past_budget = Some(just_past(t0 + STALL_BUDGET));
        let steps = [
            (40, None, false, Some(just_past(t0 + TIMEOUT))),
            (51, Some(StaleEvent::Stale), true, past_budget),
            (400, None, true, past_budget),
            (501, Some(StaleEvent::Outage { age: 501 * MS }), true, None),
            // Warned once per outage.
            (900, None, true, None),
        ];
        for (ms, event, stale, deadline) in steps {
            let said = staleness.check(t0 + ms * MS, Some(t0), TIMEOUT);
            let then = (
                said,
                staleness.is_stale(),
                staleness.deadline(Some(t0), TIMEOUT),
            );
            assert_eq!(then, (event, stale, deadline), "at {ms} ms");
        }
        let back = t0 + 1200 * MS;
        assert_eq!(
            staleness.check(back, Some(back), TIMEOUT),
            Some(StaleEvent::Resumed { outage: 1200 * MS })
        );
        assert!(!staleness.is_stale());
    }

    #[test]
    fn short_stalls_are_counted_and_summarised_at_most_once_a_minute() {
        let t0 = Instant::now();
        let mut staleness = Staleness::new();
        let mut summaries = Vec::new();
        let mut now = t0;
        for stall in 0..5u32 {
            let last = now;
            now += (60 + stall * 10) * MS;
            assert_eq!(
                staleness.check(now, Some(last), TIMEOUT),
                Some(StaleEvent::Stale)
            );
            now += MS;
            match staleness.check(now, Some(now), TIMEOUT) {
                Some(StaleEvent::ShortStall { summary }) => summaries.push(summary),
                other => panic!("{other:?}"),
            }
        }
        // The first stall is summarised at once, the next four wait for the interval.
        assert_eq!(
            summaries[0],
            Some(ShortStalls {
                count: 1,
                longest: 61 * MS
            })
        );
        assert!(summaries[1..].iter().all(Option::is_none));
        let later = now + SHORT_STALL_SUMMARY_INTERVAL;
        staleness.check(later + 60 * MS, Some(later), TIMEOUT);
        let summary = staleness.check(later + 61 * MS, Some(later + 61 * MS), TIMEOUT);
        assert_eq!(
            summary,
            Some(StaleEvent::ShortStall {
                summary: Some(ShortStalls {
                    count: 5,
                    longest: 101 * MS
                })
            })
        );
    }

    #[test]
    fn a_timeout_beyond_the_budget_warns_at_the_timeout_and_nothing_before_the_first_state() {
        let t0 = Instant::now();
        let mut staleness = Staleness::new();
        assert_eq!(staleness.check(t0, None, TIMEOUT), None);
        assert_eq!(staleness.deadline(None, TIMEOUT), None);
        let timeout = Duration::from_secs(2);
        assert_eq!(Staleness::budget(timeout), timeout);
        assert_eq!(
            staleness.check(t0 + timeout + MS, Some(t0), timeout),
            Some(StaleEvent::Stale)
        );
        assert_eq!(
            staleness.check(t0 + timeout + 2 * MS, Some(t0), timeout),
            Some(StaleEvent::Outage {
                age: timeout + 2 * MS
            })
        );
    }
}
