//! The rate cap of `get/joint_states` on the per-message path (see [`RateCap`]).

use std::time::{Duration, Instant};

/// The rate cap of joint-state publications: at most one per period in the long run (with a
/// budget of n + [`RATE_CAP_BURST`] over any n periods) — once Gazebo is measured sending at
/// least 4/3 as fast as the loop's period. Slower than that, every message goes out as it
/// arrives: messages at the loop's rate only jitter (two a little closer than a period on a
/// loaded machine), and a burst of them (Gazebo catching up after a stall) is short. A held
/// back state waits for the budget's slot, or for a later one that may go out, the latest
/// winning.
///
/// Why the cap engages only then: capped at exactly the loop's rate, a Gazebo at that same
/// rate, once a catch-up burst had used the budget, had every later message held back by the
/// same offset (each published by a wake-up of the loop thread) for as long as it kept the
/// rate; a minimum spacing between publications instead held back every message that
/// followed a late one.
pub(super) struct RateCap {
    period: Duration,
    /// Advances one period per publication (from the publication, if later): the budget.
    schedule: Instant,
    /// Gazebo's message interval, measured over the last [`RATE_CAP_WINDOW`] arrivals: by
    /// counting, so that messages handled in batches (several robots on one receive thread,
    /// a thread catching up) do not read as a fast Gazebo.
    interval: Option<Duration>,
    /// The first arrival of the window being counted, and the arrivals since.
    window: Option<(Instant, u32)>,
}

/// Publications the budget lets through ahead of the loop's rate.
const RATE_CAP_BURST: u32 = 4;
/// Arrivals Gazebo's interval is measured over: enough that a catch-up burst barely moves it.
const RATE_CAP_WINDOW: u32 = 64;

impl RateCap {
    pub(super) fn new(period: Duration, now: Instant) -> Self {
        RateCap {
            period,
            schedule: now,
            interval: None,
            window: None,
        }
    }

    /// Measures Gazebo's rate from a message arriving at `at`.
    pub(super) fn arrived(&mut self, at: Instant) {
        let Some((start, count)) = &mut self.window else {
            self.window = Some((at, 0));
            return;
        };
        *count += 1;
        let interval = at.saturating_duration_since(*start) / *count;
        // A first estimate from the first few messages, then one per window.
        if *count == RATE_CAP_WINDOW || (self.interval.is_none() && *count >= 4) {
            self.interval = Some(interval);
        }
        if *count == RATE_CAP_WINDOW {
            self.window = Some((at, 0));
        }
    }

    /// Whether Gazebo sends fast enough for the cap to apply (unknown: it applies).
    pub(super) fn engaged(&self) -> bool {
        self.interval
            .is_none_or(|interval| interval * 4 < self.period * 3)
    }

    /// Whether a state arriving at `now` may go out at once.
    pub(super) fn allows(&self, now: Instant) -> bool {
        !self.engaged() || now >= self.slot()
    }

    /// When the budget lets a held-back state out.
    pub(super) fn slot(&self) -> Instant {
        self.schedule
            .checked_sub(self.period * RATE_CAP_BURST)
            .unwrap_or(self.schedule)
    }

    pub(super) fn take(&mut self, now: Instant) {
        // Not engaged, no debt is kept: the budget starts full when it engages.
        let from = if self.engaged() {
            self.schedule.max(now)
        } else {
            now
        };
        self.schedule = from + self.period;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Publishes each arrival as soon as the cap lets it (a burst as its latest); returns
    /// when each was published.
    fn publish(period: Duration, arrivals: &[Duration]) -> Vec<Duration> {
        let t0 = Instant::now();
        let mut cap = RateCap::new(period, t0);
        let mut published = Vec::new();
        let mut i = 0;
        while i < arrivals.len() {
            let arrival = t0 + arrivals[i];
            cap.arrived(arrival);
            // Held back until the slot, or a later arrival the cap lets out at once.
            let mut at = arrival;
            if !cap.allows(arrival) {
                at = cap.slot();
                while let Some(&next) = arrivals.get(i + 1) {
                    if t0 + next > at {
                        break;
                    }
                    i += 1;
                    cap.arrived(t0 + next);
                    if cap.allows(t0 + next) {
                        at = t0 + next;
                        break;
                    }
                }
            }
            while arrivals.get(i + 1).is_some_and(|&next| t0 + next <= at) {
                i += 1;
                cap.arrived(t0 + arrivals[i]);
            }
            cap.take(at);
            published.push(at - t0);
            i += 1;
        }
        published
    }

    #[test]
    fn after_a_catch_up_burst_messages_at_the_loops_rate_go_out_on_arrival() {
        // Gazebo sent every 2 ms, stalled 20 ms, sent the ten steps it owed at once, then
        // every 2 ms again.
        let mut arrivals: Vec<Duration> = (0..100).map(|k| k * 2 * MS).collect();
        arrivals.extend((0..10).map(|_| 220 * MS));
        arrivals.extend((1..100).map(|k| 220 * MS + k * 2 * MS));
        let published = publish(2 * MS, &arrivals);
        let held: Vec<_> = arrivals
            .iter()
            .filter(|&&a| a > 220 * MS && !published.contains(&a))
            .collect();
        assert!(held.is_empty(), "held back after the burst: {held:?}");
    }

    #[test]
    fn a_faster_gazebo_gets_one_publication_per_period_and_a_slower_one_all() {
        // 500 Hz Gazebo, 50 ms loop: 20 a second, and the burst.
        let fast: Vec<Duration> = (0..2000).map(|k| k * 2 * MS).collect();
        let published = publish(50 * MS, &fast);
        assert!(
            (80..=86).contains(&published.len()),
            "{} publications in 4 s",
            published.len()
        );
        // A Gazebo 1.2 times as fast as the loop: every message, as it arrives.
        let close: Vec<Duration> = (0..1000).map(|k| k * 5 * MS / 3).collect();
        assert_eq!(publish(2 * MS, &close), close);
    }

    #[test]
    fn messages_handled_in_batches_at_the_loops_rate_are_never_held_back() {
        // Several robots on one receive thread: two messages of this robot taken together
        // every 4 ms.
        let arrivals: Vec<Duration> = (0..1000).map(|k| (k / 2) * 4 * MS).collect();
        let published = publish(2 * MS, &arrivals);
        assert_eq!(
            published.len(),
            500,
            "one per batch (the latest of it), none held back"
        );
        assert!(published
            .iter()
            .zip(arrivals.iter().step_by(2))
            .all(|(p, a)| p == a));
    }

    #[test]
    fn jittered_messages_at_the_loops_rate_are_never_held_back() {
        let arrivals: Vec<Duration> = (0..1000)
            .map(|k| k * 2 * MS + if k % 3 == 1 { MS } else { Duration::ZERO })
            .collect();
        assert_eq!(publish(2 * MS, &arrivals), arrivals);
    }
}
