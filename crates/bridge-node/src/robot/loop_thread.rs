//! The robot's loop thread: what it does when its alarm rings ([`Core::on_alarm`]), or, under
//! `joint_states_publishing: grid`, at each point of the deadline grid
//! ([`Core::grid_period`]). It does only what no Gazebo message did: an arrival the receive
//! thread left to it, a deferred publication, the duties whose deadline came.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::RobotDriver;

use crate::robot::core::{Core, Work};
use crate::robot::counters::bump;
use crate::StaleJointStates;

impl<D: RobotDriver + ?Sized> Core<D> {
    /// What the loop thread does when its alarm rings: an arrival the receive thread left to
    /// it, a deferred publication, the duties whose deadline came (or a period Gazebo left
    /// without a message, when a duty is periodic); then it sets the alarm again.
    pub fn on_alarm(&self, work: &mut Work, now: Instant) {
        if self.arrival_waiting.swap(false, Ordering::SeqCst) {
            self.arrived(work, now);
        }
        if work.pending.is_some_and(|by| now >= by) && !work.staleness.is_stale() {
            self.driver.read_snapshot(&mut work.snapshot);
            self.publish_state(work, now);
        }
        let period = self.config.thread_sampling_time;
        if self.config.has_periodic_duty() {
            let fallback = work.period_due + period / 2;
            if now >= fallback {
                // No Gazebo message did this period's duties: do them here, on the grid of the
                // previous ones, skipping (and counting) periods passed meanwhile.
                let lateness = now.saturating_duration_since(fallback);
                let mut due = work.period_due;
                while due + period + period / 2 <= now {
                    due += period;
                    work.statistics.overruns += 1;
                    bump(&self.counters.overruns);
                }
                work.statistics.max_lateness = work.statistics.max_lateness.max(lateness);
                self.duties(work, now, lateness);
                work.period_due = due + period;
            }
        } else if self.duty_deadline(work).is_some_and(|at| now >= at) {
            self.duties(work, now, Duration::ZERO);
        }
        self.alarm.set(self.next_wake(work));
    }

    /// The original's loop (`joint_states_publishing: grid`): at each point of the deadline
    /// grid, the duties and a publication of whatever the cache holds. `lateness` is how late
    /// the loop woke for it, `skipped` the grid points it missed.
    pub fn grid_period(&self, work: &mut Work, now: Instant, lateness: Duration, skipped: u64) {
        self.driver.read_snapshot(&mut work.snapshot);
        self.note_arrival(work, now);
        work.statistics.overruns += skipped;
        self.counters.overruns.fetch_add(skipped, Ordering::Relaxed);
        work.statistics.max_lateness = work.statistics.max_lateness.max(lateness);
        self.duties(work, now, lateness);
        let withhold = work.staleness.is_stale()
            && self.config.stale_joint_states == StaleJointStates::Withhold;
        if !withhold {
            self.publish_state(work, now);
        }
    }
}
