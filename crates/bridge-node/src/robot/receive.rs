//! The per-message path, on the driver's receive thread: a Gazebo message is in the cache
//! ([`Core::on_state`]), so the new state is published if its slot has come (else by a
//! deadline the loop thread keeps), the duties run if a period passed, and the loop's alarm
//! is kept ahead. Everything a message costs is here: one snapshot read, one publication,
//! no allocation, no wake-up of the loop thread while nothing else is due.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{JointSnapshot, RobotDriver};

use crate::robot::core::{Core, PeriodFailures, Work};
use crate::robot::counters::bump;
use crate::robot::messages::stamp_from_nanos;
use crate::robot::non_finite::NonFiniteEvent;
use crate::robot::rate_limit::suppressed_note;
use crate::StampSource;

/// Weight of a new interval in the measured Gazebo message interval.
const INTERVAL_WEIGHT: f64 = 1.0 / 16.0;
/// The receive path moves the loop's alarm later only once it is about to ring this soon:
/// a few timer settings a second instead of one per message.
const ALARM_PUSH_MARGIN: Duration = Duration::from_millis(10);

impl<D: RobotDriver + ?Sized> Core<D> {
    /// On the receive thread, after a Gazebo message is in the cache.
    pub fn on_state(&self) {
        self.prioritise_once(
            &self.receive_thread_prioritised,
            "the gz-transport receive thread",
        );
        // Never wait for the loop thread (it may be descheduled holding the lock, and with
        // several robots on this thread every robot would wait): leave the arrival to it.
        match self.work.try_lock() {
            Some(mut work) => self.arrived(&mut work, Instant::now()),
            None => {
                self.arrival_waiting.store(true, Ordering::SeqCst);
                self.alarm.wake_by(Instant::now());
            }
        }
    }

    /// A new state is in the cache: publish it if its slot has come (else by its deadline),
    /// run the duties if a period passed, keep the loop's alarm ahead.
    pub fn arrived(&self, work: &mut Work, now: Instant) {
        self.driver.read_snapshot(&mut work.snapshot);
        self.note_arrival(work, now);
        // A composite's state is new once every part sent a newer message (its sequence is
        // the oldest part's); a part's message alone waits a little for the others.
        let complete = work.snapshot.sequence > work.published.0;
        if complete {
            work.state_cap.arrived(now);
        }
        if complete && work.state_cap.allows(now) && !work.staleness.is_stale() {
            self.publish_state(work, now);
        } else if !work.staleness.is_stale() {
            let grace = if complete {
                now
            } else {
                now + self.config.thread_sampling_time / 2
            };
            let by = work.state_cap.slot().max(grace);
            work.pending = Some(work.pending.map_or(by, |pending| pending.min(by)));
        }
        if now + self.config.thread_sampling_time / 2 >= work.period_due {
            self.duties(work, now, Duration::ZERO);
            work.period_due = work.period_due.max(now) + self.config.thread_sampling_time;
        }
        let next = self.next_wake(work);
        // Sooner than the alarm: bring it forward. Later: push it out only once it is about
        // to ring, so it is set a few times a second rather than per message.
        match self.alarm.armed() {
            Some(armed) if next >= armed && armed > now + ALARM_PUSH_MARGIN => {}
            _ => self.alarm.set(next),
        }
    }

    /// Counts the new message(s), measures Gazebo's rate, notes a state fresh again.
    pub(super) fn note_arrival(&self, work: &mut Work, now: Instant) {
        let (sequence, received_at) = (work.snapshot.sequence, work.snapshot.received_at);
        let new = sequence.saturating_sub(work.seen.0);
        self.counters
            .gazebo_messages
            .fetch_add(new, Ordering::Relaxed);
        if let (Some(arrival), Some(previous), true) = (received_at, work.seen.1, new > 0) {
            // Per message, also when several arrived since the last look (grid publishing).
            let interval =
                arrival.saturating_duration_since(previous).as_nanos() as f64 / new as f64;
            let average = self.counters.gazebo_interval_ns.load(Ordering::Relaxed) as f64;
            // Outages are not intervals of Gazebo's rate.
            if average == 0.0 || interval < 10.0 * average {
                let updated = if average == 0.0 {
                    interval
                } else {
                    average + INTERVAL_WEIGHT * (interval - average)
                };
                self.counters
                    .gazebo_interval_ns
                    .store(updated.max(1.0) as u64, Ordering::Relaxed);
            }
        }
        work.seen = (sequence, received_at);
        if work.staleness.is_stale() {
            self.check_staleness(work, now);
        }
        if new > 0 {
            self.check_finite(work, now);
        }
    }

    /// Tells when Gazebo's states carry NaN or infinite values (passed on as received).
    pub(super) fn check_finite(&self, work: &mut Work, now: Instant) {
        let event = work
            .non_finite
            .check(&work.snapshot, &self.joint_names, now);
        let Some(event) = event else {
            if self.counters.non_finite.lock().is_some() {
                bump(&self.counters.non_finite_messages);
            }
            return;
        };
        let robot = &self.config.robot_name;
        let topic = self.driver.state_source();
        let _span = tracing::info_span!("robot", name = %robot).entered();
        match event {
            NonFiniteEvent::Started(joints) => {
                bump(&self.counters.non_finite_messages);
                let first = self
                    .counters
                    .non_finite
                    .lock()
                    .replace(joints.clone())
                    .is_none();
                if first {
                    tracing::error!(
                        "::Robot {robot}: Gazebo's joint states on [{topic}] carry non-finite \
                         values: {joints}. They are passed on as received (a physics blow-up?); \
                         /diagnostics shows ERROR while it lasts."
                    );
                }
            }
            NonFiniteEvent::Ended { messages, lasted } => {
                *self.counters.non_finite.lock() = None;
                tracing::info!(
                    "::Robot {robot}: Gazebo's joint states on [{topic}] are finite again after \
                     {messages} message(s) with non-finite values over {:.1} ms.",
                    lasted.as_secs_f64() * 1e3
                );
            }
        }
    }

    /// Publishes `work.snapshot` as `get/joint_states`: the caller read it from the cache (the
    /// receive path just did; the loop thread reads it first).
    pub(super) fn publish_state(&self, work: &mut Work, now: Instant) {
        let Work {
            message,
            snapshot,
            failures,
            ..
        } = work;
        message.fill(snapshot, self.stamp(snapshot, failures));
        work.pending = None;
        work.state_cap.take(now);
        if let Err(err) = self.joint_states.publish(&work.message.message) {
            if let Some(suppressed) = work.failures.publish.permit(now) {
                self.in_span(|| {
                    tracing::error!(
                        "::Publishing the joint states failed: {err}{}",
                        suppressed_note(suppressed)
                    )
                });
            }
            return;
        }
        bump(&self.counters.joint_states_published);
        let sequence = work.snapshot.sequence;
        if sequence > work.published.0 {
            self.counters
                .never_reported
                .fetch_add(sequence - work.published.0 - 1, Ordering::Relaxed);
            work.published = (sequence, work.snapshot.received_at);
        }
    }

    pub(super) fn stamp(
        &self,
        snapshot: &JointSnapshot,
        failures: &mut PeriodFailures,
    ) -> ros_env::builtin_interfaces::msg::rmw::Time {
        if self.config.stamp_source == StampSource::Gazebo {
            if let Some(sim_time) = snapshot.sim_time {
                return stamp_from_nanos(sim_time.as_nanos());
            }
            if !failures.warned_no_sim_time {
                failures.warned_no_sim_time = true;
                self.in_span(|| {
                    tracing::warn!(
                        "::Gazebo's joint states carry no stamp; get/joint_states is stamped \
                         with the node clock until they do (logged once)."
                    )
                });
            }
        }
        stamp_from_nanos(i128::from(self.clock.now().nsec))
    }
}
