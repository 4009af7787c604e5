//! The robot's duties (the watchdog, the target, the limits, the state's age) and when they
//! fall due without a Gazebo message. The receive path runs them at most once per period,
//! the loop thread at their deadlines; every check that must not wait for a message belongs
//! here, with its deadline in [`Core::duty_deadline`].

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{Command, RobotDriver};

use crate::robot::core::{Core, Work};
use crate::robot::counters::bump;
use crate::robot::rate_limit::suppressed_note;
use crate::robot::safe_stop::stop_safely;
use crate::robot::staleness::{StaleEvent, Staleness};
use crate::{JointStatesPublishing, StaleJointStates, TargetForwarding};

/// The automatic state timeout, in Gazebo message intervals and at least in loop periods …
const STALE_AFTER_INTERVALS: u32 = 10;
/// … and at least this long: a loaded machine stalls a thread (Gazebo's, ours) for tens of
/// milliseconds without anything being wrong.
const STALE_AFTER_AT_LEAST: Duration = Duration::from_millis(50);

impl<D: RobotDriver + ?Sized> Core<D> {
    /// When the loop thread must wake next.
    pub(super) fn next_wake(&self, work: &Work) -> Instant {
        let mut next = self.duty_deadline(work).unwrap_or_else(far_future);
        if self.config.has_periodic_duty() {
            next = next.min(work.period_due + self.config.thread_sampling_time / 2);
        }
        if let Some(by) = work.pending {
            next = next.min(by);
        }
        next
    }

    /// The earliest instant a duty falls due without a Gazebo message: the state going stale
    /// (or its outage outlasting the stall budget), the watchdog's deadline, the target's
    /// keepalive, the limits' heartbeat, a velocity or effort target's timeout.
    pub(super) fn duty_deadline(&self, work: &Work) -> Option<Instant> {
        let stale = work.staleness.deadline(work.seen.1, self.state_timeout());
        let watchdog = self.watchdog.lock().deadline();
        // The driver's own record: a composite sharing this robot's driver sends its target too.
        let keepalive = match self.config.target_forwarding {
            TargetForwarding::OnArrival => self.driver.keepalive_deadline(),
            TargetForwarding::Periodic => None,
        };
        let heartbeat = work.limits.heartbeat_at();
        // A velocity or effort target's timeout: zero is sent then.
        let command_timeout = self.driver.command_deadline();
        [stale, watchdog, keepalive, heartbeat, command_timeout]
            .into_iter()
            .flatten()
            .min()
    }

    /// The robot's duties at `now` (on the receive path at most once per period, on the loop
    /// thread at their deadlines): the watchdog, the target (every period under `periodic`,
    /// else the driver's keepalive and resending), the limits, the state's age. Every check
    /// that must not wait for a message belongs here, with its deadline in
    /// [`duty_deadline`](Self::duty_deadline).
    pub(super) fn duties(&self, work: &mut Work, now: Instant, lateness: Duration) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // holding still until the loop ends
        }
        // The watchdog's lock is released before the hold is sent (the trigger
        // callback takes it on the DDS listener thread, the diagnostics on the executor's).
        let fault = self.watchdog.lock().check(now);
        if let Some(fault) = fault {
            self.faulted.store(true, Ordering::SeqCst);
            let (lower, upper) = &work.limit_values;
            work.fault = Some(stop_safely(
                &*self.driver,
                &self.config.robot_name,
                fault,
                (lower, upper),
                &mut work.snapshot,
            ));
            self.stop.trigger();
            return;
        }
        work.statistics.periods += 1;
        bump(&self.counters.periods);
        if self.config.target_forwarding == TargetForwarding::Periodic {
            if let Some(target) = self.targets.take() {
                self.apply_target(Command::Positions, &target, now);
            }
        }
        // Under `periodic` this sends every period; otherwise the driver sends only what is
        // due (the keepalive, or the target again to a Gazebo that just connected).
        self.forward_target(now);
        match work.limits.publish_if_due(now) {
            Ok(false) => {}
            Ok(true) => self.in_span(|| {
                tracing::info!(
                    "::A new subscriber of {}/get/joint_positions_min|max matched: the limits \
                     are sent to it.",
                    self.config.robot_name
                )
            }),
            Err(err) => {
                if let Some(suppressed) = work.failures.publish.permit(now) {
                    self.in_span(|| {
                        tracing::error!(
                            "::Publishing the joint limits failed: {err}{}",
                            suppressed_note(suppressed)
                        )
                    });
                }
            }
        }
        self.check_staleness(work, now);
        let statistics = work.statistics;
        if let Some((line, overran)) = work.report.after_period(now, lateness, &statistics) {
            self.in_span(|| {
                if overran {
                    tracing::info!("{line}")
                } else {
                    tracing::debug!("{line}")
                }
            });
        }
    }

    /// The state timeout: configured, or a few of Gazebo's intervals (at least a few periods).
    pub(super) fn state_timeout(&self) -> Duration {
        self.config.state_timeout.unwrap_or_else(|| {
            let interval =
                Duration::from_nanos(self.counters.gazebo_interval_ns.load(Ordering::Relaxed));
            (interval.max(self.config.thread_sampling_time) * STALE_AFTER_INTERVALS)
                .max(STALE_AFTER_AT_LEAST)
        })
    }

    pub(super) fn check_staleness(&self, work: &mut Work, now: Instant) {
        let timeout = self.state_timeout();
        let Some(event) = work.staleness.check(now, work.seen.1, timeout) else {
            return;
        };
        let robot = &self.config.robot_name;
        let topic = self.driver.state_source();
        let _span = tracing::info_span!("robot", name = %robot).entered();
        match event {
            StaleEvent::Stale => {
                work.pending = None;
                self.counters.stale.store(true, Ordering::Relaxed);
                bump(&self.counters.stale_episodes);
            }
            StaleEvent::Outage { age } => {
                let effect = match (
                    self.config.joint_states_publishing,
                    self.config.stale_joint_states,
                ) {
                    (JointStatesPublishing::Grid, StaleJointStates::Republish) => {
                        "the last state is republished every period (stale_joint_states: \
                         republish)"
                    }
                    _ => "nothing is published until Gazebo sends again",
                };
                tracing::warn!(
                    "::Robot {robot} is stale: no joint states on [{topic}] for {:.1} ms (state \
                     timeout {:.1} ms); {effect}.",
                    age.as_secs_f64() * 1e3,
                    timeout.as_secs_f64() * 1e3
                );
            }
            StaleEvent::Resumed { outage } => {
                self.counters.stale.store(false, Ordering::Relaxed);
                tracing::info!(
                    "::Robot {robot}: joint states on [{topic}] again after an outage of {:.1} \
                     ms; get/joint_states resumes.",
                    outage.as_secs_f64() * 1e3
                );
            }
            StaleEvent::ShortStall { summary } => {
                self.counters.stale.store(false, Ordering::Relaxed);
                bump(&self.counters.short_stalls);
                if let Some(stalls) = summary {
                    tracing::info!(
                        "::Robot {robot}: {} short stall(s) of the joint states on [{topic}] \
                         (longest {:.1} ms; state timeout {:.1} ms): nothing was published \
                         while stale. Outages longer than {:.0} ms are warned about.",
                        stalls.count,
                        stalls.longest.as_secs_f64() * 1e3,
                        timeout.as_secs_f64() * 1e3,
                        Staleness::budget(timeout).as_secs_f64() * 1e3
                    );
                }
            }
        }
    }
}

/// An instant no deadline reaches (a year ahead).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}
