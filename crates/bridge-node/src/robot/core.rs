//! The per-message path of one robot, and its duties.
//!
//! Three threads act on a robot, each for what reaches it first:
//!
//! * the driver's receive thread, on every Gazebo message ([`Core::on_state`]): publishes the
//!   new state (rate-capped to the loop's period, latest wins) and, at most once per period,
//!   runs the robot's duties ([`Core::duties`]: the watchdog, the limits, the target's
//!   keepalive or resending, the state's age) — all cheap checks that rarely send anything;
//! * the DDS listener thread that received a target ([`Core::target_arrived`]): validates it
//!   and sends it to Gazebo at once;
//! * the robot's loop thread, sleeping on an [`Alarm`] set to the next instant something is
//!   due that no message may bring: a deferred publication, the state going stale, the
//!   watchdog's deadline, the target's keepalive, the limits' heartbeat — and, only when some
//!   duty is periodic (the original's contracts), the next period Gazebo leaves without a
//!   message. While Gazebo sends and nothing else happens, the loop thread never wakes.
//!
//! All of it shares [`Work`] under one lock; the receive thread never waits for it (if the
//! loop thread holds it, the arrival is left to the loop thread).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rclrs::{Clock, Publisher};
use ros_env::sensor_msgs::msg::rmw::JointState;
use sas_robot_driver_gazebo::{Command, JointSnapshot, RobotDriver, ShutdownToken, TargetOutcome};

use crate::process::realtime;
use crate::robot::alarm::Alarm;
use crate::robot::counters::{bump, RobotCounters};
use crate::robot::limits::JointLimitsTopics;
use crate::robot::messages::{stamp_from_nanos, JointStateMessage};
use crate::robot::non_finite::{NonFiniteEvent, NonFiniteStates};
use crate::robot::rate_limit::{suppressed_note, RateLimit};
use crate::robot::safety::stop_safely;
use crate::robot::server::TargetMailbox;
use crate::robot::staleness::{StaleEvent, Staleness};
use crate::robot::watchdog::Watchdog;
use crate::{
    BridgeError, JointStatesPublishing, LoopStatistics, RobotDriverRosConfiguration,
    StaleJointStates, StampSource, TargetForwarding,
};

/// How often the loop reports its statistics (at debug level, or info when it overran).
const REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// At most one log line per interval for each kind of per-period failure.
pub(crate) const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(1);
/// Weight of a new interval in the measured Gazebo message interval.
const INTERVAL_WEIGHT: f64 = 1.0 / 16.0;
/// The automatic state timeout, in Gazebo message intervals and at least in loop periods …
const STALE_AFTER_INTERVALS: u32 = 10;
/// … and at least this long: a loaded machine stalls a thread (Gazebo's, ours) for tens of
/// milliseconds without anything being wrong.
const STALE_AFTER_AT_LEAST: Duration = Duration::from_millis(50);
/// The receive path moves the loop's alarm later only once it is about to ring this soon:
/// a few timer settings a second instead of one per message.
const ALARM_PUSH_MARGIN: Duration = Duration::from_millis(10);

/// What the receive thread, the loop thread and the DDS listener thread share for one robot.
pub(crate) struct Core<D: RobotDriver + ?Sized> {
    pub driver: Arc<D>,
    pub config: RobotDriverRosConfiguration,
    /// The driver's joint names (empty if it does not name them), for log lines.
    joint_names: Vec<String>,
    joint_states: Publisher<JointState>,
    /// Armed by `set/watchdog_trigger`; checked in the duties and at its deadline.
    watchdog: Arc<Mutex<Watchdog>>,
    /// The robot's stop token: a watchdog fault triggers it to end the loop.
    stop: ShutdownToken,
    /// Set on a watchdog fault: the hold stays the target, nothing else is forwarded.
    faulted: AtomicBool,
    targets: Arc<TargetMailbox>,
    clock: Clock,
    counters: Arc<RobotCounters>,
    /// Wakes the loop thread.
    pub alarm: Arc<Alarm>,
    receive_thread_prioritised: AtomicBool,
    listener_thread_prioritised: AtomicBool,
    /// An arrival the receive thread could not handle (the loop thread held the lock).
    pub arrival_waiting: AtomicBool,
    /// The target logs' rate limits (the DDS listener thread forwards and refuses too).
    forwarding: Mutex<Forwarding>,
    pub work: Mutex<Work>,
}

/// The rate limits of the target's logs (when it is due again is the driver's to say).
struct Forwarding {
    refused_log: RateLimit,
    failed_log: RateLimit,
}

/// The state of the publications and duties, under one lock (the receive path and the loop
/// thread take it at different moments, so it is not contended).
pub(crate) struct Work {
    message: JointStateMessage,
    snapshot: JointSnapshot,
    /// The rate cap of joint-state publications.
    state_cap: RateCap,
    /// A state not yet published, and by when it is published.
    pending: Option<Instant>,
    /// When the duties are next due on the receive path (at most once per period; the loop
    /// thread does them only at their own deadlines, or ½ period late when one is periodic).
    period_due: Instant,
    limits: JointLimitsTopics,
    /// The limits as values, for the watchdog's hold.
    limit_values: (Vec<f64>, Vec<f64>),
    staleness: Staleness,
    non_finite: NonFiniteStates,
    /// The watchdog fault that ended the loop (the robot holds its last measured position).
    pub fault: Option<BridgeError>,
    /// Sequence and arrival of the last state published.
    published: (u64, Option<Instant>),
    /// Sequence and arrival of the last state the receive path saw.
    seen: (u64, Option<Instant>),
    failures: PeriodFailures,
    pub statistics: LoopStatistics,
    report: Report,
}

impl<D: RobotDriver + ?Sized> Core<D> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        driver: Arc<D>,
        config: RobotDriverRosConfiguration,
        joint_states: Publisher<JointState>,
        limits: JointLimitsTopics,
        limit_values: (Vec<f64>, Vec<f64>),
        watchdog: Arc<Mutex<Watchdog>>,
        stop: ShutdownToken,
        targets: Arc<TargetMailbox>,
        clock: Clock,
        counters: Arc<RobotCounters>,
        alarm: Arc<Alarm>,
    ) -> Self {
        let now = Instant::now();
        let joint_count = driver.joint_count();
        let joint_names = driver.joint_names();
        let work = Work {
            message: JointStateMessage::new(&joint_names, joint_count),
            snapshot: JointSnapshot::new(joint_count),
            state_cap: RateCap::new(config.thread_sampling_time, now),
            pending: None,
            period_due: now,
            limits,
            limit_values,
            staleness: Staleness::new(),
            non_finite: NonFiniteStates::default(),
            fault: None,
            published: (0, None),
            seen: (0, None),
            failures: PeriodFailures::new(),
            statistics: LoopStatistics::default(),
            report: Report::new(now),
        };
        Core {
            driver,
            config,
            joint_names,
            joint_states,
            watchdog,
            stop,
            faulted: AtomicBool::new(false),
            targets,
            clock,
            counters,
            alarm,
            receive_thread_prioritised: AtomicBool::new(false),
            listener_thread_prioritised: AtomicBool::new(false),
            arrival_waiting: AtomicBool::new(false),
            forwarding: Mutex::new(Forwarding {
                refused_log: RateLimit::new(FAILURE_LOG_INTERVAL),
                failed_log: RateLimit::new(FAILURE_LOG_INTERVAL),
            }),
            work: Mutex::new(work),
        }
    }

    /// Runs `log` in the robot's span, so that its lines name the robot whatever thread
    /// they are logged on (several robots in one process share the receive and executor
    /// threads). Only around logging: a span per message would cost more than the message.
    fn in_span<T>(&self, log: impl FnOnce() -> T) -> T {
        let _span = tracing::info_span!("robot", name = %self.config.robot_name).entered();
        log()
    }

    // --- The per-message path (the receive thread) -------------------------------------

    /// On the receive thread, after a Gazebo message is in the cache.
    pub fn on_state(&self) {
        if !self
            .receive_thread_prioritised
            .swap(true, Ordering::Relaxed)
        {
            realtime::apply(
                self.config.realtime_priority,
                "the gz-transport receive thread",
            );
        }
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
    fn note_arrival(&self, work: &mut Work, now: Instant) {
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
    fn check_finite(&self, work: &mut Work, now: Instant) {
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
    fn publish_state(&self, work: &mut Work, now: Instant) {
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

    // --- The loop thread ---------------------------------------------------------------

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

    /// When the loop thread must wake next.
    fn next_wake(&self, work: &Work) -> Instant {
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
    fn duty_deadline(&self, work: &Work) -> Option<Instant> {
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

    // --- The duties --------------------------------------------------------------------

    /// The robot's duties at `now` (on the receive path at most once per period, on the loop
    /// thread at their deadlines): the watchdog, the target (every period under `periodic`,
    /// else the driver's keepalive and resending), the limits, the state's age. Every check
    /// that must not wait for a message belongs here, with its deadline in
    /// [`duty_deadline`](Self::duty_deadline).
    fn duties(&self, work: &mut Work, now: Instant, lateness: Duration) {
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
    fn state_timeout(&self) -> Duration {
        self.config.state_timeout.unwrap_or_else(|| {
            let interval =
                Duration::from_nanos(self.counters.gazebo_interval_ns.load(Ordering::Relaxed));
            (interval.max(self.config.thread_sampling_time) * STALE_AFTER_INTERVALS)
                .max(STALE_AFTER_AT_LEAST)
        })
    }

    fn check_staleness(&self, work: &mut Work, now: Instant) {
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

    // --- Targets (the DDS listener thread, and the duties) ------------------------------

    /// A target from `set/target_joint_positions` under [`TargetForwarding::OnArrival`]:
    /// validated and sent to Gazebo now, on the DDS listener thread that took it.
    pub fn target_arrived(&self, target: &[f64]) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // the watchdog's hold stays the target
        }
        if !self
            .listener_thread_prioritised
            .swap(true, Ordering::Relaxed)
        {
            // On the command path now: the same priority as the loop and receive threads.
            realtime::apply(
                self.config.realtime_priority,
                "the DDS listener thread (targets forwarded on arrival)",
            );
        }
        let now = Instant::now();
        // The driver's own lines (a clamp warning) name the robot too.
        self.in_span(|| {
            if self.apply_target(Command::Positions, target, now) {
                self.forward_target(now);
            }
        });
    }

    /// A target from `set/target_joint_velocities` or `set/target_joint_forces`: validated
    /// and sent to Gazebo now, on the DDS listener thread that took it; the loop's alarm is set to
    /// its timeout, when zero is sent unless a newer target came.
    pub fn rate_target_arrived(&self, command: Command, target: &[f64]) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // zero stays in force
        }
        let now = Instant::now();
        self.in_span(|| {
            if self.apply_target(command, target, now) {
                self.forward_target(now);
            }
        });
        if let Some(deadline) = self.driver.command_deadline() {
            self.alarm.wake_by(deadline);
        }
    }

    /// Lets the driver send the target if its rule says so; a send starts the keepalive.
    fn forward_target(&self, now: Instant) {
        match self.driver.forward_targets() {
            Ok(false) => {}
            Ok(true) => {
                if self.config.target_forwarding == TargetForwarding::OnArrival {
                    if let Some(at) = self.driver.keepalive_deadline() {
                        self.alarm.wake_by(at);
                    }
                }
            }
            Err(err) => {
                let permit = self.forwarding.lock().failed_log.permit(now);
                if let Some(suppressed) = permit {
                    self.in_span(|| {
                        tracing::error!(
                            "::Forwarding the target to Gazebo failed::{err}{}",
                            suppressed_note(suppressed)
                        )
                    });
                }
            }
        }
    }

    /// Hands a target to the driver (which validates it); true if accepted.
    fn apply_target(&self, command: Command, target: &[f64], now: Instant) -> bool {
        match self.driver.set_target(command, target) {
            Ok(outcome) => {
                bump(&self.counters.targets_accepted);
                if matches!(outcome, TargetOutcome::Clamped { .. }) {
                    bump(&self.counters.targets_clamped);
                }
                true
            }
            Err(err) => {
                bump(&self.counters.targets_refused);
                if let Some(suppressed) = self.forwarding.lock().refused_log.permit(now) {
                    self.in_span(|| {
                        tracing::error!(
                            "::Target refused::{err} The previous target stays in force.{}",
                            suppressed_note(suppressed)
                        )
                    });
                }
                false
            }
        }
    }

    fn stamp(
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

/// An instant no deadline reaches (a year ahead).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// Rate limits of the per-period failure logs, owned by the loop.
struct PeriodFailures {
    publish: RateLimit,
    warned_no_sim_time: bool,
}

impl PeriodFailures {
    fn new() -> Self {
        PeriodFailures {
            publish: RateLimit::new(FAILURE_LOG_INTERVAL),
            warned_no_sim_time: false,
        }
    }
}

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
struct RateCap {
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
    fn new(period: Duration, now: Instant) -> Self {
        RateCap {
            period,
            schedule: now,
            interval: None,
            window: None,
        }
    }

    /// Measures Gazebo's rate from a message arriving at `at`.
    fn arrived(&mut self, at: Instant) {
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
    fn engaged(&self) -> bool {
        self.interval
            .is_none_or(|interval| interval * 4 < self.period * 3)
    }

    /// Whether a state arriving at `now` may go out at once.
    fn allows(&self, now: Instant) -> bool {
        !self.engaged() || now >= self.slot()
    }

    /// When the budget lets a held-back state out.
    fn slot(&self) -> Instant {
        self.schedule
            .checked_sub(self.period * RATE_CAP_BURST)
            .unwrap_or(self.schedule)
    }

    fn take(&mut self, now: Instant) {
        // Not engaged, no debt is kept: the budget starts full when it engages.
        let from = if self.engaged() {
            self.schedule.max(now)
        } else {
            now
        };
        self.schedule = from + self.period;
    }
}

/// The periodic statistics line: rate, overruns and lateness of the last interval.
struct Report {
    since: Instant,
    periods_before: u64,
    overruns_before: u64,
    max_lateness: Duration,
}

impl Report {
    fn new(now: Instant) -> Self {
        Report {
            since: now,
            periods_before: 0,
            overruns_before: 0,
            max_lateness: Duration::ZERO,
        }
    }

    /// Notes a period; every [`REPORT_INTERVAL`], the line to log and whether it overran.
    fn after_period(
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
