//! The loop's schedule: an absolute-deadline grid on the monotonic clock (the original's
//! `sas::Clock`, without its wall clock, its busy loop on a zero period and its truncation).

use std::time::{Duration, Instant};

/// Deadlines `anchor + k·period` for k = 1, 2, …. A period that ends late does not shift the
/// grid: the deadlines already passed are skipped (and counted), never caught up, so the loop
/// keeps its rate and phase however long one period took.
#[derive(Clone, Debug)]
pub struct DeadlineGrid {
    anchor: Instant,
    period_ns: u128,
    /// Index of the next deadline to hand out.
    next: u128,
}

impl DeadlineGrid {
    /// A grid whose first deadline is `anchor + period`.
    ///
    /// # Panics
    /// If `period` is zero.
    pub fn new(anchor: Instant, period: Duration) -> Self {
        assert!(!period.is_zero(), "a deadline grid needs a non-zero period");
        DeadlineGrid {
            anchor,
            period_ns: period.as_nanos(),
            next: 1,
        }
    }

    /// The grid's period.
    pub fn period(&self) -> Duration {
        duration_from_nanos(self.period_ns)
    }

    fn deadline(&self, index: u128) -> Instant {
        self.anchor + duration_from_nanos(index * self.period_ns)
    }

    /// The next deadline not yet passed at `now`, and how many grid points were skipped to
    /// reach it (0 when the previous period ended in time). A deadline equal to `now` counts
    /// as not passed.
    pub fn next_deadline(&mut self, now: Instant) -> (Instant, u64) {
        let mut index = self.next;
        if self.deadline(index) < now {
            let elapsed = now.duration_since(self.anchor).as_nanos();
            index = elapsed.div_ceil(self.period_ns);
        }
        let skipped = u64::try_from(index - self.next).unwrap_or(u64::MAX);
        self.next = index + 1;
        (self.deadline(index), skipped)
    }
}

fn duration_from_nanos(nanos: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).unwrap_or(u64::MAX);
    Duration::new(secs, (nanos % NANOS_PER_SEC) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn deadlines_follow_the_grid_when_periods_end_in_time() {
        let t0 = Instant::now();
        let mut grid = DeadlineGrid::new(t0, 2 * MS);
        assert_eq!(grid.next_deadline(t0), (t0 + 2 * MS, 0));
        // Work ended 0.5 ms after the deadline it woke at: the next point is still ahead.
        assert_eq!(grid.next_deadline(t0 + 2 * MS + MS / 2), (t0 + 4 * MS, 0));
        // Ending exactly on a deadline does not skip it.
        assert_eq!(grid.next_deadline(t0 + 6 * MS), (t0 + 6 * MS, 0));
    }

    #[test]
    fn an_overrun_skips_the_passed_deadlines_without_shifting_the_grid() {
        let t0 = Instant::now();
        let mut grid = DeadlineGrid::new(t0, 2 * MS);
        assert_eq!(grid.next_deadline(t0).0, t0 + 2 * MS);
        // The period that started at 2 ms took until 7.1 ms: 4 and 6 ms are gone.
        assert_eq!(grid.next_deadline(t0 + 7 * MS + MS / 10), (t0 + 8 * MS, 2));
        assert_eq!(grid.next_deadline(t0 + 8 * MS + MS / 10), (t0 + 10 * MS, 0));
    }

    #[test]
    fn a_long_stall_is_counted_and_the_phase_kept() {
        let t0 = Instant::now();
        let mut grid = DeadlineGrid::new(t0, 3 * MS);
        let (deadline, skipped) = grid.next_deadline(t0 + Duration::from_secs(1));
        assert_eq!(skipped, 333);
        assert_eq!(deadline, t0 + 334 * 3 * MS);
    }

    #[test]
    fn sub_millisecond_periods_are_exact_in_nanoseconds() {
        let t0 = Instant::now();
        let period = Duration::from_nanos(333_333);
        let mut grid = DeadlineGrid::new(t0, period);
        for k in 1..=3000u32 {
            assert_eq!(grid.next_deadline(t0).0, t0 + period * k);
        }
        assert_eq!(grid.period(), period);
    }

    #[test]
    #[should_panic(expected = "non-zero period")]
    fn a_zero_period_is_refused() {
        DeadlineGrid::new(Instant::now(), Duration::ZERO);
    }
}
