use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rclrs::{Clock, Node};
use sas_robot_driver_gazebo::{
    ErrorKind, JointSnapshot, RobotDriver, RobotDriverGazebo, ShutdownToken, TargetOutcome,
};

use crate::diagnostics::{Diagnostics, Phase, RobotHealth};
use crate::messages::{multi_array, stamp_from_nanos, JointStateMessage};
use crate::rate_limit::{suppressed_note, RateLimit};
use crate::safety::{stop_safely, Safety};
use crate::server::RobotDriverServer;
use crate::{BridgeError, DeadlineGrid, RobotDriverRosConfiguration, StampSource};

/// How often the loop reports its statistics (at debug level, or info when it overran).
const REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// How long a loop that failed waits before it returns, for DDS to deliver its last messages.
const DELIVERY_GRACE: Duration = Duration::from_millis(500);
/// At most one log line per interval for each kind of per-period failure.
const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(1);

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
}

/// The original's `RobotDriverROS`: the topic surface of one robot (created at construction,
/// so topics exist before the driver connects) and the loop that serves it.
///
/// Per period, on an absolute-deadline grid of the monotonic clock: hand the latest target
/// received to the driver (which validates it) and forward it to Gazebo, read one consistent
/// snapshot, publish `get/joint_states`, `get/joint_positions_min` and `…_max`. Nothing is
/// published before the driver is initialized.
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
}

impl<D: RobotDriver + ?Sized> RobotDriverRos<D> {
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
        let server = RobotDriverServer::new(node, &config.robot_name)?;
        let safety = Safety::new(node, &config.robot_name, &shutdown)?;
        let health = Arc::new(RobotHealth::new());
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
            // at once would drop it.
            self.shutdown.wait_timeout(DELIVERY_GRACE);
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
        let joint_positions_min = multi_array(&lower);
        let joint_positions_max = multi_array(&upper);
        let joint_count = self.driver.joint_count();
        let mut joint_states = JointStateMessage::new(&self.driver.joint_names(), joint_count);
        let mut snapshot = JointSnapshot::new(joint_count);
        let mut failures = PeriodFailures::new();
        let mut statistics = LoopStatistics::default();
        let mut report = Report::new(Instant::now());
        let mut grid = DeadlineGrid::new(Instant::now(), self.config.thread_sampling_time);
        let fault = loop {
            let (deadline, skipped) = grid.next_deadline(Instant::now());
            statistics.overruns += skipped;
            let timeout = deadline.saturating_duration_since(Instant::now());
            if self.shutdown.wait_timeout(timeout) {
                break None;
            }
            let woke = Instant::now();
            let lateness = woke.saturating_duration_since(deadline);
            statistics.max_lateness = statistics.max_lateness.max(lateness);
            statistics.periods += 1;
            if let Some(fault) = self.safety.check(woke) {
                let limits = (lower.as_slice(), upper.as_slice());
                let name = &self.config.robot_name;
                break Some(stop_safely(
                    &*self.driver,
                    name,
                    fault,
                    limits,
                    &mut snapshot,
                ));
            }

            self.forward_target(&mut statistics, &mut failures, woke);
            self.driver.read_snapshot(&mut snapshot);
            joint_states.fill(&snapshot, self.stamp(&snapshot, &mut failures));
            let published = self
                .server
                .joint_states
                .publish(&joint_states.message)
                .and_then(|()| {
                    self.server
                        .joint_positions_min
                        .publish(&joint_positions_min)
                })
                .and_then(|()| {
                    self.server
                        .joint_positions_max
                        .publish(&joint_positions_max)
                });
            self.health
                .after_period(&statistics, &snapshot, published.is_ok());
            if let Err(err) = published {
                if let Some(suppressed) = failures.publish.permit(woke) {
                    tracing::error!(
                        "::Publishing the joint states failed: {err}{}",
                        suppressed_note(suppressed)
                    );
                }
            }
            report.after_period(woke, lateness, &statistics);
        };
        tracing::info!(
            "::Control loop stopped after {} periods ({} overruns, largest lateness {:.3} ms, \
             {} targets accepted, {} refused).",
            statistics.periods,
            statistics.overruns,
            statistics.max_lateness.as_secs_f64() * 1e3,
            statistics.targets_accepted,
            statistics.targets_refused
        );
        (statistics, fault)
    }

    /// Hands a newly received target to the driver, then lets the driver forward whatever
    /// target it holds (its forward mode decides whether that publishes now).
    fn forward_target(
        &self,
        statistics: &mut LoopStatistics,
        failures: &mut PeriodFailures,
        now: Instant,
    ) {
        if let Some(target) = self.server.targets.take() {
            match self.driver.set_target_joint_positions(&target) {
                Ok(outcome) => {
                    statistics.targets_accepted += 1;
                    if let TargetOutcome::Clamped { .. } = outcome {
                        statistics.targets_clamped += 1;
                    }
                }
                Err(err) => {
                    statistics.targets_refused += 1;
                    if let Some(suppressed) = failures.target.permit(now) {
                        tracing::error!(
                            "::Target refused::{err} The previous target stays in force.{}",
                            suppressed_note(suppressed)
                        );
                    }
                }
            }
        }
        if let Err(err) = self.driver.forward_targets() {
            if let Some(suppressed) = failures.forward.permit(now) {
                tracing::error!(
                    "::Forwarding the target to Gazebo failed::{err}{}",
                    suppressed_note(suppressed)
                );
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

/// Rate limits of the per-period failure logs, owned by the loop.
struct PeriodFailures {
    target: RateLimit,
    forward: RateLimit,
    publish: RateLimit,
    warned_no_sim_time: bool,
}

impl PeriodFailures {
    fn new() -> Self {
        PeriodFailures {
            target: RateLimit::new(FAILURE_LOG_INTERVAL),
            forward: RateLimit::new(FAILURE_LOG_INTERVAL),
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
