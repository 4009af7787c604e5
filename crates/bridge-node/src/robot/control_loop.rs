use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rclrs::{Clock, Node, Publisher};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::Float64MultiArray;
use sas_robot_driver_gazebo::{
    ErrorKind, JointSnapshot, RobotDriver, RobotDriverGazebo, ShutdownToken, TargetOutcome,
};

use crate::robot::alarm::Alarm;
use crate::robot::counters::{bump, RobotCounters, RobotCountersSnapshot};
use crate::robot::diagnostics::{Diagnostics, Phase, RobotHealth};
use crate::robot::messages::{multi_array, stamp_from_nanos, JointStateMessage};
use crate::robot::rate_limit::{suppressed_note, RateLimit};
use crate::robot::safety::{stop_safely, Safety};
use crate::robot::server::{RobotDriverServer, TargetMailbox};
use crate::robot::watchdog::Watchdog;
use crate::{
    process::realtime, BridgeError, DeadlineGrid, JointStatesPublishing,
    RobotDriverRosConfiguration, StaleJointStates, StampSource, TargetForwarding,
};

/// How often the loop reports its statistics (at debug level, or info when it overran).
const REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// At most one log line per interval for each kind of per-period failure.
const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(1);
/// How long a loop that failed waits before it returns, for DDS to deliver its last messages.
const DELIVERY_GRACE: Duration = Duration::from_millis(500);

/// What a control loop did, for its final log line and for callers that measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStatistics {
    /// Periods run (each: forward the target, read, publish).
    pub periods: u64,
    /// Deadlines skipped because a period ended after the next one.
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

/// The original's `RobotDriverROS`: the topic surface of one robot (created at construction,
/// so topics exist before the driver connects) and the loop that serves it.
///
/// Every period ([`Core::period`], the one per-period point): hand the latest target
/// received to the driver (which validates it) and forward it to Gazebo, publish
/// `get/joint_positions_min` and `…_max`, check the state's age. `get/joint_states` is
/// published, depending on [`JointStatesPublishing`]:
///
/// * `OnArrival` (default): from the driver's receive path the moment a Gazebo message is in
///   the cache, at most once per period: never two within ¾ of a period and over any n
///   periods at most n + 4; a message arriving sooner is published when its slot comes, the
///   latest one winning. The
///   period's work rides on that publication when it is due, so while Gazebo sends at the
///   loop's rate the loop thread sleeps; it wakes (on an alarm the receive path keeps moving)
///   only for a deferred publication or a period Gazebo left without a message.
/// * `Grid`: every period of an absolute-deadline grid of the monotonic clock, whatever is in
///   the cache (the original's).
///
/// A state older than the state timeout is stale: logged once per outage (and its end), and
/// never published as fresh (nothing arrives to publish on arrival; the grid withholds it
/// unless [`StaleJointStates::Republish`]). Nothing is published before the driver is
/// initialized.
///
/// Subscription callbacks run on whatever thread spins the node's executor (see
/// [`ExecutorThread`](crate::ExecutorThread)); [`control_loop`](Self::control_loop) runs on
/// the caller's. Several instances (several robots) can share one node and one executor.
///
/// It runs any [`RobotDriver`]: a [`RobotDriverGazebo`] (the default), a
/// [`RobotDriverComposite`](sas_robot_driver_gazebo::RobotDriverComposite) of robots, or a
/// `dyn RobotDriver` when one process runs several kinds.
pub struct RobotDriverRos<D: RobotDriver + ?Sized = RobotDriverGazebo> {
    driver: Arc<D>,
    config: RobotDriverRosConfiguration,
    shutdown: ShutdownToken,
    clock: Clock,
    server: RobotDriverServer,
    safety: Safety,
    health: Arc<RobotHealth>,
    diagnostics: Diagnostics,
    running: AtomicBool,
    counters: Arc<RobotCounters>,
}

impl<D: RobotDriver + ?Sized + 'static> RobotDriverRos<D> {
    /// Creates the topics under `<config.robot_name>/` on `node` (with `set/watchdog_trigger`
    /// and `set/shutdown`) and this robot's status on `/diagnostics`. `shutdown` ends
    /// [`control_loop`](Self::control_loop), also while it waits in `initialize`; so does
    /// `set/shutdown`, for this robot only.
    ///
    /// # Errors
    /// An invalid configuration; a topic rclrs refuses (e.g. an invalid `robot_name`).
    pub fn new(
        node: &Node,
        driver: Arc<D>,
        config: RobotDriverRosConfiguration,
        shutdown: ShutdownToken,
    ) -> Result<Self, BridgeError> {
        config.validate()?;
        let counters = Arc::<RobotCounters>::default();
        let server = RobotDriverServer::new(node, &config.robot_name, counters.clone())?;
        let safety = Safety::new(node, &config.robot_name, &shutdown)?;
        let state_age = {
            let driver = driver.clone();
            Box::new(move || state_age(&*driver))
        };
        let health = Arc::new(RobotHealth::new(counters.clone(), state_age));
        let diagnostics =
            Diagnostics::new(node, &config.robot_name, health.clone(), safety.watchdog())?;
        Ok(RobotDriverRos {
            driver,
            config,
            shutdown: safety.stop_token().clone(),
            clock: node.get_clock(),
            server,
            safety,
            health,
            diagnostics,
            running: AtomicBool::new(false),
            counters,
        })
    }

    /// The driver the loop runs.
    pub fn driver(&self) -> &Arc<D> {
        &self.driver
    }

    /// The configuration.
    pub fn configuration(&self) -> &RobotDriverRosConfiguration {
        &self.config
    }

    /// The robot's counters now (messages received, published and never reported, periods,
    /// targets, staleness), with the age of the latest state. Cheap; any thread.
    pub fn counters(&self) -> RobotCountersSnapshot {
        self.counters.snapshot(state_age(&*self.driver))
    }

    /// The token that stops this robot's loop (the process's token and `set/shutdown`
    /// trigger it).
    pub fn shutdown_token(&self) -> &ShutdownToken {
        &self.shutdown
    }

    /// Connects and initializes the driver, then runs periods until the shutdown token is
    /// triggered; always deinitializes and disconnects the driver before returning. Blocks
    /// the calling thread; needs the node's executor to be spun elsewhere for targets to
    /// arrive. A shutdown while waiting for Gazebo in `initialize` is a normal stop.
    ///
    /// # Errors
    /// Already running; `connect` failed; `initialize` failed other than by shutdown (e.g.
    /// its timeout passed); the initialized driver has no joint limits; the watchdog
    /// faulted (the robot then holds its last measured position). Per-period problems are
    /// logged (rate-limited), not returned.
    pub fn control_loop(&self) -> Result<LoopStatistics, BridgeError> {
        if self.running.swap(true, Ordering::SeqCst) {
            return Err(BridgeError::AlreadyRunning {
                robot_name: self.config.robot_name.clone(),
            });
        }
        let outcome = self.run_lifecycle();
        self.health.finish(&outcome);
        self.diagnostics.publish_now();
        if outcome.is_err() {
            // DDS delivers in the background what a failure sent last (the ERROR status;
            // after a watchdog fault the hold, to robots reached over ROS): a process exiting
            // at once would drop it. A sleep, not a wait on the stop token: a watchdog fault
            // ends the loop by triggering that token.
            std::thread::sleep(DELIVERY_GRACE);
        }
        outcome
    }

    fn run_lifecycle(&self) -> Result<LoopStatistics, BridgeError> {
        self.health.set_phase(Phase::Initializing);
        // Every line logged on this thread while the loop runs (the driver's too) carries the
        // robot, for subscribers that show spans (several robots in one process).
        let _span = tracing::info_span!("robot", name = %self.config.robot_name).entered();
        let _lifecycle = LifecycleGuard {
            driver: &*self.driver,
            running: &self.running,
        };
        tracing::info!("::Waiting to connect with robot...");
        self.driver.connect()?;
        tracing::info!("::Connected to robot.");
        tracing::info!("::Initializing robot...");
        if let Err(err) = self.driver.initialize_with(&self.shutdown) {
            if err.kind() == ErrorKind::Cancelled {
                tracing::info!("::Stopped while initializing: {err}");
                return Ok(LoopStatistics::default());
            }
            return Err(err.into());
        }
        tracing::info!("::Robot initialized.");
        let limits = self.driver.get_joint_limits()?;
        self.health.set_phase(Phase::Running);
        match self.run_periods(limits) {
            (_, Some(fault)) => Err(fault),
            (statistics, None) => Ok(statistics),
        }
    }

    /// The periods until a stop, or until the watchdog faults (the error returned with the
    /// statistics).
    fn run_periods(
        &self,
        (lower, upper): (Vec<f64>, Vec<f64>),
    ) -> (LoopStatistics, Option<BridgeError>) {
        realtime::apply(self.config.realtime_priority, "the loop thread");
        let joint_count = self.driver.joint_count();
        let core = Arc::new(Core {
            driver: self.driver.clone(),
            config: self.config.clone(),
            joint_states: self.server.joint_states.clone(),
            joint_positions_min: self.server.joint_positions_min.clone(),
            joint_positions_max: self.server.joint_positions_max.clone(),
            limits: (multi_array(&lower), multi_array(&upper)),
            limit_values: (lower, upper),
            watchdog: self.safety.watchdog(),
            stop: self.shutdown.clone(),
            faulted: AtomicBool::new(false),
            targets: self.server.targets.clone(),
            clock: self.clock.clone(),
            counters: self.counters.clone(),
            receive_thread_prioritised: AtomicBool::new(false),
            executor_thread_prioritised: AtomicBool::new(false),
            arrival_waiting: AtomicBool::new(false),
            target_logs: Mutex::new(TargetLogs {
                target: RateLimit::new(FAILURE_LOG_INTERVAL),
                forward: RateLimit::new(FAILURE_LOG_INTERVAL),
            }),
            work: Mutex::new(Work {
                message: JointStateMessage::new(&self.driver.joint_names(), joint_count),
                snapshot: JointSnapshot::new(joint_count),
                state_cap: RateCap::new(self.config.thread_sampling_time, Instant::now()),
                period_due: Instant::now() + self.config.thread_sampling_time,
                pending: false,
                fault: None,
                published_sequence: 0,
                seen_sequence: 0,
                last_arrival: None,
                stale_since: None,
                failures: PeriodFailures::new(),
                statistics: LoopStatistics::default(),
                report: Report::new(Instant::now()),
            }),
        });
        let mut on_arrival =
            self.config.joint_states_publishing == JointStatesPublishing::OnArrival;
        let alarm = if on_arrival {
            match Alarm::new() {
                Ok(alarm) => Some(Arc::new(alarm)),
                Err(err) => {
                    tracing::warn!(
                        "::Cannot create the loop's timer ({err}); publishing joint states on \
                         the grid instead."
                    );
                    on_arrival = false;
                    None
                }
            }
        } else {
            None
        };
        let listener = {
            let core = Arc::downgrade(&core);
            let alarm = alarm.clone();
            self.driver.add_state_listener(Arc::new(move || {
                if let Some(core) = core.upgrade() {
                    core.on_state(alarm.as_deref());
                }
            }))
        };
        if listener.is_none() && on_arrival {
            tracing::info!(
                "::This driver does not notify new states; publishing joint states every \
                 period instead."
            );
            on_arrival = false;
        }
        if self.config.target_forwarding == TargetForwarding::OnArrival {
            let core = Arc::downgrade(&core);
            self.server
                .targets
                .forward_on_arrival(Some(Box::new(move |target: Vec<f64>| {
                    if let Some(core) = core.upgrade() {
                        core.target_arrived(&target);
                    }
                })));
        }
        let statistics = match (&alarm, on_arrival) {
            (Some(alarm), true) => self.run_on_arrival(&core, alarm),
            _ => self.run_grid(&core),
        };
        self.server.targets.forward_on_arrival(None);
        drop(listener);
        tracing::info!(
            "::Control loop stopped after {} periods ({} overruns, largest lateness {:.3} ms, \
             {} targets accepted, {} refused, {} superseded; {} Gazebo messages, {} joint \
             states published, {} never reported).",
            statistics.periods,
            statistics.overruns,
            statistics.max_lateness.as_secs_f64() * 1e3,
            self.counters.targets_accepted.load(Ordering::Relaxed),
            self.counters.targets_refused.load(Ordering::Relaxed),
            self.counters.targets_superseded.load(Ordering::Relaxed),
            self.counters.gazebo_messages.load(Ordering::Relaxed),
            self.counters.joint_states_published.load(Ordering::Relaxed),
            self.counters.never_reported.load(Ordering::Relaxed),
        );
        let fault = core.work.lock().fault.take();
        let statistics = LoopStatistics {
            targets_accepted: self.counters.targets_accepted.load(Ordering::Relaxed),
            targets_refused: self.counters.targets_refused.load(Ordering::Relaxed),
            targets_clamped: self.counters.targets_clamped.load(Ordering::Relaxed),
            targets_superseded: self.counters.targets_superseded.load(Ordering::Relaxed),
            ..statistics
        };
        (statistics, fault)
    }

    /// The original's loop: a period on every point of the deadline grid, joint states
    /// published in it.
    fn run_grid(&self, core: &Core<D>) -> LoopStatistics {
        let mut grid = DeadlineGrid::new(Instant::now(), self.config.thread_sampling_time);
        loop {
            let (deadline, skipped) = grid.next_deadline(Instant::now());
            let timeout = deadline.saturating_duration_since(Instant::now());
            if self.shutdown.wait_timeout(timeout) {
                break;
            }
            let woke = Instant::now();
            let mut work = core.work.lock();
            core.driver.read_snapshot(&mut work.snapshot);
            core.note_arrival(&mut work);
            work.statistics.overruns += skipped;
            core.counters.overruns.fetch_add(skipped, Ordering::Relaxed);
            let lateness = woke.saturating_duration_since(deadline);
            work.statistics.max_lateness = work.statistics.max_lateness.max(lateness);
            core.period(&mut work, woke, lateness);
            let withhold = work.stale_since.is_some()
                && self.config.stale_joint_states == StaleJointStates::Withhold;
            if !withhold {
                core.publish_state(&mut work, woke);
            }
        }
        core.work.lock().statistics
    }

    /// Joint states published by the receive path; this thread only runs the periods and
    /// deferred publications the receive path left to it, on an alarm the receive path moves.
    fn run_on_arrival(&self, core: &Core<D>, alarm: &Arc<Alarm>) -> LoopStatistics {
        let _wake_on_shutdown = {
            let alarm = alarm.clone();
            self.shutdown
                .on_trigger(Arc::new(move || alarm.set(Instant::now())))
        };
        let period = self.config.thread_sampling_time;
        // The state that completed initialization goes out now, not with the next message.
        core.arrived(&mut core.work.lock(), alarm);
        while !self.shutdown.is_triggered() {
            alarm.wait();
            if self.shutdown.is_triggered() {
                break;
            }
            let mut work = core.work.lock();
            if core.arrival_waiting.swap(false, Ordering::SeqCst) {
                core.arrived(&mut work, alarm);
            }
            let now = Instant::now();
            if work.pending && now >= work.state_cap.earliest() {
                core.publish_state(&mut work, now);
            }
            let fallback = work.period_due + period / 2;
            if now >= fallback {
                // No Gazebo message did this period's work: do it here, on the grid of the
                // previous ones, skipping (and counting) periods passed meanwhile.
                let lateness = now.saturating_duration_since(fallback);
                let mut due = work.period_due;
                while due + period + period / 2 <= now {
                    due += period;
                    work.statistics.overruns += 1;
                    bump(&core.counters.overruns);
                }
                work.period_due = due;
                work.statistics.max_lateness = work.statistics.max_lateness.max(lateness);
                core.period(&mut work, now, lateness);
                work.period_due = due + period;
            }
            alarm.set(core.next_alarm(&work));
            drop(work);
            // An arrival the receive thread left while we held the lock, after our check.
            if core.arrival_waiting.load(Ordering::SeqCst) {
                alarm.set(Instant::now());
            }
        }
        core.work.lock().statistics
    }
}

/// What the loop thread and the receive path share: the publishers, the driver, and the state
/// of the periods under one lock (they take it at different moments, so it is not contended).
struct Core<D: RobotDriver + ?Sized> {
    driver: Arc<D>,
    config: RobotDriverRosConfiguration,
    joint_states: Publisher<JointState>,
    joint_positions_min: Publisher<Float64MultiArray>,
    joint_positions_max: Publisher<Float64MultiArray>,
    limits: (Float64MultiArray, Float64MultiArray),
    /// The limits as values, for the watchdog's hold.
    limit_values: (Vec<f64>, Vec<f64>),
    /// Armed by `set/watchdog_trigger`; checked every period.
    watchdog: Arc<Mutex<Watchdog>>,
    /// The robot's stop token: a watchdog fault triggers it to end the loop.
    stop: ShutdownToken,
    /// Set on a watchdog fault: the hold stays the target, nothing else is forwarded.
    faulted: AtomicBool,
    targets: Arc<TargetMailbox>,
    clock: Clock,
    counters: Arc<RobotCounters>,
    receive_thread_prioritised: AtomicBool,
    executor_thread_prioritised: AtomicBool,
    /// An arrival the receive thread could not handle (the loop thread held the lock).
    arrival_waiting: AtomicBool,
    /// Rate limits of the target logs (the executor's thread logs them too).
    target_logs: Mutex<TargetLogs>,
    work: Mutex<Work>,
}

struct TargetLogs {
    target: RateLimit,
    forward: RateLimit,
}

struct Work {
    message: JointStateMessage,
    snapshot: JointSnapshot,
    /// The rate cap of joint-state publications.
    state_cap: RateCap,
    /// When the next period is due (the receive path may do it up to ½ period earlier, the
    /// loop thread does it ½ period later if nobody did).
    period_due: Instant,
    /// A Gazebo message waits for its publication slot.
    pending: bool,
    /// The watchdog fault that ended the loop (the robot holds its last measured position).
    fault: Option<BridgeError>,
    /// Cache sequence of the last state published.
    published_sequence: u64,
    /// Cache sequence of the last state the receive path saw.
    seen_sequence: u64,
    last_arrival: Option<Instant>,
    /// Arrival of the last state before the outage, while stale.
    stale_since: Option<Instant>,
    failures: PeriodFailures,
    statistics: LoopStatistics,
    report: Report,
}

/// At most one publication per period: never two within ¾ of a period, and, over any
/// stretch of n periods, at most n + [`RATE_CAP_BURST`] of them. The spacing tolerance lets a
/// message that follows a late one out at once (Gazebo's messages jitter on a loaded machine,
/// and at Gazebo's own rate a strict one-period spacing would delay every message after a
/// late one); the budget keeps the long-run rate at the loop's when Gazebo sends faster.
struct RateCap {
    period: Duration,
    last: Option<Instant>,
    /// Advances one period per publication (from the publication, if later): the budget.
    schedule: Instant,
}

/// Publications the budget lets through ahead of the loop's rate.
const RATE_CAP_BURST: u32 = 4;

impl RateCap {
    fn new(period: Duration, now: Instant) -> Self {
        RateCap {
            period,
            last: None,
            schedule: now,
        }
    }

    /// The earliest instant the next publication may happen.
    fn earliest(&self) -> Instant {
        let budget = self
            .schedule
            .checked_sub(self.period * RATE_CAP_BURST)
            .unwrap_or(self.schedule);
        match self.last {
            Some(last) => budget.max(last + self.period * 3 / 4),
            None => budget,
        }
    }

    fn take(&mut self, now: Instant) {
        self.last = Some(now);
        self.schedule = self.schedule.max(now) + self.period;
    }
}

/// Weight of a new interval in the measured Gazebo message interval.
const INTERVAL_WEIGHT: f64 = 1.0 / 16.0;
/// The automatic state timeout, in Gazebo message intervals and at least in loop periods …
const STALE_AFTER_INTERVALS: u32 = 10;
/// … and at least this long: a loaded machine stalls a thread (Gazebo's, ours) for tens of
/// milliseconds without anything being wrong.
const STALE_AFTER_AT_LEAST: Duration = Duration::from_millis(50);

impl<D: RobotDriver + ?Sized> Core<D> {
    /// On the receive thread, after a Gazebo message is in the cache.
    fn on_state(&self, alarm: Option<&Alarm>) {
        if !self
            .receive_thread_prioritised
            .swap(true, Ordering::Relaxed)
        {
            realtime::apply(
                self.config.realtime_priority,
                "the gz-transport receive thread",
            );
        }
        let Some(alarm) = alarm else {
            return; // grid publishing: the loop reads and publishes the cache every period
        };
        if !self.config.work_on_receive_thread {
            // Handed to the loop thread: one flag and, if not rung already, its alarm.
            if !self.arrival_waiting.swap(true, Ordering::SeqCst) {
                alarm.set(Instant::now());
            }
            return;
        }
        // Never wait for the loop thread (it may be descheduled holding the lock, and with
        // several robots on this thread every robot would wait): leave the arrival to it.
        match self.work.try_lock() {
            Some(mut work) => self.arrived(&mut work, alarm),
            None => {
                self.arrival_waiting.store(true, Ordering::SeqCst);
                alarm.set(Instant::now());
            }
        }
    }

    /// A new state is in the cache: publish it if its slot has come, else leave it to the
    /// loop thread's alarm; do the period's work if it is due.
    fn arrived(&self, work: &mut Work, alarm: &Alarm) {
        let now = Instant::now();
        let period = self.config.thread_sampling_time;
        self.driver.read_snapshot(&mut work.snapshot);
        self.note_arrival(work);
        if now >= work.state_cap.earliest() {
            self.publish_state(work, now);
        } else {
            work.pending = true;
        }
        if self.config.work_on_receive_thread && now + period / 2 >= work.period_due {
            let lateness = now.saturating_duration_since(work.period_due);
            self.period(work, now, lateness);
            work.period_due = work.period_due.max(now) + period;
        }
        alarm.set(self.next_alarm(work));
    }

    /// Counts the new message(s), measures Gazebo's rate, logs the end of an outage.
    fn note_arrival(&self, work: &mut Work) {
        let sequence = work.snapshot.sequence;
        let new = sequence.saturating_sub(work.seen_sequence);
        work.seen_sequence = sequence;
        self.counters
            .gazebo_messages
            .fetch_add(new, Ordering::Relaxed);
        let (Some(arrival), true) = (work.snapshot.received_at, new > 0) else {
            return;
        };
        if let Some(previous) = work.last_arrival {
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
        work.last_arrival = Some(arrival);
        if let Some(since) = work.stale_since.take() {
            self.counters.stale.store(false, Ordering::Relaxed);
            tracing::info!(
                "::Robot {}: joint states on [{}] again after an outage of {:.1} ms; \
                 get/joint_states resumes.",
                self.config.robot_name,
                self.driver_topic(),
                arrival.saturating_duration_since(since).as_secs_f64() * 1e3
            );
        }
    }

    fn driver_topic(&self) -> String {
        self.driver.state_source()
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

    /// When the loop thread must wake next: a deferred publication's slot, or the end of the
    /// grace a period's work has to be done by the receive path.
    fn next_alarm(&self, work: &Work) -> Instant {
        let period = self.config.thread_sampling_time;
        let fallback = work.period_due + period / 2;
        if work.pending {
            fallback.min(work.state_cap.earliest())
        } else {
            fallback
        }
    }

    /// Publishes the cache's latest state as `get/joint_states`.
    fn publish_state(&self, work: &mut Work, now: Instant) {
        let Work {
            message,
            snapshot,
            failures,
            ..
        } = work;
        self.driver.read_snapshot(snapshot);
        message.fill(snapshot, self.stamp(snapshot, failures));
        work.pending = false;
        work.state_cap.take(now);
        if let Err(err) = self.joint_states.publish(&work.message.message) {
            if let Some(suppressed) = work.failures.publish.permit(now) {
                tracing::error!(
                    "::Publishing the joint states failed: {err}{}",
                    suppressed_note(suppressed)
                );
            }
            return;
        }
        bump(&self.counters.joint_states_published);
        let sequence = work.snapshot.sequence;
        if sequence > work.published_sequence {
            self.counters
                .never_reported
                .fetch_add(sequence - work.published_sequence - 1, Ordering::Relaxed);
            work.published_sequence = sequence;
        }
    }

    /// One period: the per-period point of the loop (on the loop thread, or on the receive
    /// path when a Gazebo message came in time). Forwards the target, publishes the limits,
    /// checks the state's age. Every check that must run once per period belongs here.
    fn period(&self, work: &mut Work, now: Instant, lateness: Duration) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // holding still until the loop ends
        }
        // The watchdog's lock is released before the hold is sent (the trigger callback and
        // the diagnostics take it on the executor's thread).
        let fault = self.watchdog.lock().check(now);
        if let Some(fault) = fault {
            self.faulted.store(true, Ordering::SeqCst);
            let (lower, upper) = &self.limit_values;
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
                self.apply_target(&target, now);
            }
        }
        self.forward_target(now);
        let limits = self
            .joint_positions_min
            .publish(&self.limits.0)
            .and_then(|()| self.joint_positions_max.publish(&self.limits.1));
        if let Err(err) = limits {
            if let Some(suppressed) = work.failures.publish.permit(now) {
                tracing::error!(
                    "::Publishing the joint limits failed: {err}{}",
                    suppressed_note(suppressed)
                );
            }
        }
        self.check_staleness(work, now);
        let statistics = work.statistics;
        work.report.after_period(now, lateness, &statistics);
    }

    fn check_staleness(&self, work: &mut Work, now: Instant) {
        if work.stale_since.is_some() {
            return;
        }
        let Some(arrival) = work.last_arrival else {
            return;
        };
        let age = now.saturating_duration_since(arrival);
        let timeout = self.state_timeout();
        if age <= timeout {
            return;
        }
        work.stale_since = Some(arrival);
        work.pending = false;
        self.counters.stale.store(true, Ordering::Relaxed);
        bump(&self.counters.stale_episodes);
        let effect = match (
            self.config.joint_states_publishing,
            self.config.stale_joint_states,
        ) {
            (JointStatesPublishing::Grid, StaleJointStates::Republish) => {
                "the last state is republished every period (stale_joint_states: republish)"
            }
            _ => "nothing is published until Gazebo sends again",
        };
        tracing::warn!(
            "::Robot {} is stale: no joint states on [{}] for {:.1} ms (state timeout {:.1} ms); \
             {effect}.",
            self.config.robot_name,
            self.driver_topic(),
            age.as_secs_f64() * 1e3,
            timeout.as_secs_f64() * 1e3
        );
    }

    /// A target from `set/target_joint_positions` in `TargetForwarding::OnArrival`: validated
    /// and sent to Gazebo now, on the executor's thread.
    fn target_arrived(&self, target: &[f64]) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // the watchdog's hold stays the target
        }
        if !self
            .executor_thread_prioritised
            .swap(true, Ordering::Relaxed)
        {
            // On the command path now: the same priority as the loop and receive threads.
            realtime::apply(
                self.config.realtime_priority,
                "the ROS executor thread (targets forwarded on arrival)",
            );
        }
        let now = Instant::now();
        if self.apply_target(target, now) {
            self.forward_target(now);
        }
    }

    fn forward_target(&self, now: Instant) {
        if let Err(err) = self.driver.forward_targets() {
            if let Some(suppressed) = self.target_logs.lock().forward.permit(now) {
                tracing::error!(
                    "::Forwarding the target to Gazebo failed::{err}{}",
                    suppressed_note(suppressed)
                );
            }
        }
    }

    /// Hands a target to the driver (which validates it); true if accepted.
    fn apply_target(&self, target: &[f64], now: Instant) -> bool {
        match self.driver.set_target_joint_positions(target) {
            Ok(outcome) => {
                bump(&self.counters.targets_accepted);
                if matches!(outcome, TargetOutcome::Clamped { .. }) {
                    bump(&self.counters.targets_clamped);
                }
                true
            }
            Err(err) => {
                bump(&self.counters.targets_refused);
                if let Some(suppressed) = self.target_logs.lock().target.permit(now) {
                    tracing::error!(
                        "::Target refused::{err} The previous target stays in force.{}",
                        suppressed_note(suppressed)
                    );
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
                tracing::warn!(
                    "::Gazebo's joint states carry no stamp; get/joint_states is stamped with \
                     the node clock until they do (logged once)."
                );
            }
        }
        stamp_from_nanos(i128::from(self.clock.now().nsec))
    }
}

/// Age of the driver's latest Gazebo state (`None` before the first).
fn state_age<D: RobotDriver + ?Sized>(driver: &D) -> Option<Duration> {
    let mut snapshot = JointSnapshot::new(0);
    driver.read_snapshot(&mut snapshot);
    snapshot.age()
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

    fn after_period(&mut self, now: Instant, lateness: Duration, statistics: &LoopStatistics) {
        self.max_lateness = self.max_lateness.max(lateness);
        let elapsed = now.saturating_duration_since(self.since);
        if elapsed < REPORT_INTERVAL {
            return;
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
        if overruns > 0 {
            tracing::info!("{line}");
        } else {
            tracing::debug!("{line}");
        }
        *self = Report {
            since: now,
            periods_before: statistics.periods,
            overruns_before: statistics.overruns,
            max_lateness: Duration::ZERO,
        };
    }
}

/// Deinitializes and disconnects the driver however the loop ends (the original's
/// destructor), and marks the loop as not running.
struct LifecycleGuard<'a, D: RobotDriver + ?Sized> {
    driver: &'a D,
    running: &'a AtomicBool,
}

impl<D: RobotDriver + ?Sized> Drop for LifecycleGuard<'_, D> {
    fn drop(&mut self) {
        self.driver.deinitialize();
        self.driver.disconnect();
        self.running.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Python module runs `control_loop` with the interpreter lock released and a
    /// multi-robot process runs one loop per thread: the type must cross threads.
    #[test]
    fn robot_driver_ros_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<RobotDriverRos>();
        assert_send_sync::<RobotDriverRos<dyn RobotDriver>>();
        assert_send_sync::<crate::ExecutorThread>();
    }
}
