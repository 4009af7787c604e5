//! What a robot's loop did ([`LoopStatistics`], returned by its control loop) and the periodic
//! line that reports it.

use std::time::{Duration, Instant};

/// How often the loop reports its statistics (at debug level, or info when it overran).
const REPORT_INTERVAL: Duration = Duration::from_secs(10);

/// What a control loop did, for its final log line and for callers that measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStatistics {
    /// Times the robot's duties ran (watchdog, target, limits, staleness): once per period
    /// while Gazebo sends, and at their deadlines otherwise.
    pub periods: u64,
    /// Deadlines skipped because a period ended after the next one (periodic duties).
    pub overruns: u64,
    /// Largest delay between a deadline and the loop waking for it.
    pub max_lateness: Duration,
    /// Targets the driver accepted (possibly clamped).
    pub targets_accepted: u64,
    /// Targets refused (wrong length, NaN/inf, out of limits under `refuse`).
    pub targets_refused: u64,
    /// Targets accepted with values clamped into the limits (policy `clamp`).
    pub targets_clamped: u64,
    /// Targets replaced by a newer one before the loop took them (latest wins).
    pub targets_superseded: u64,
}

/// The periodic statistics line: rate, overruns and lateness of the last interval.
pub(super) struct Report {
    since: Instant,
    periods_before: u64,
    overruns_before: u64,
    max_lateness: Duration,
}

impl Report {
    pub(super) fn new(now: Instant) -> Self {
        Report {
            since: now,
            periods_before: 0,
            overruns_before: 0,
            max_lateness: Duration::ZERO,
        }
    }

    /// Notes a period; every [`REPORT_INTERVAL`], the line to log and whether it overran.
    pub(super) fn after_period(
        &mut self,
        now: Instant,
        lateness: Duration,
        statistics: &LoopStatistics,
    ) -> Option<(String, bool)> {
        self.max_lateness = self.max_lateness.max(lateness);
        let elapsed = now.saturating_duration_since(self.since);
        if elapsed < REPORT_INTERVAL {
            return None;
        }
        let periods = statistics.periods - self.periods_before;
        let overruns = statistics.overruns - self.overruns_before;
        let line = format!(
            "::Control loop: {periods} periods in {:.1} s ({:.1} Hz), {overruns} overruns \
             skipped, largest lateness {:.3} ms.",
            elapsed.as_secs_f64(),
            periods as f64 / elapsed.as_secs_f64(),
            self.max_lateness.as_secs_f64() * 1e3
        );
        *self = Report {
            since: now,
            periods_before: statistics.periods,
            overruns_before: statistics.overruns,
            max_lateness: Duration::ZERO,
        };
        Some((line, overruns > 0))
    }
}
