use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rclrs::{Clock, Node};
use sas_robot_driver_gazebo::{ErrorKind, RobotDriver, RobotDriverGazebo, ShutdownToken};

use crate::process::realtime;
use crate::robot::alarm::Alarm;
use crate::robot::core::Core;
use crate::robot::counters::{RobotCounters, RobotCountersSnapshot};
use crate::robot::diagnostics::{Diagnostics, Phase, RobotHealth};
use crate::robot::limits::JointLimitsTopics;
use crate::robot::safety::Safety;
use crate::robot::server::RobotDriverServer;
use crate::robot::statistics::LoopStatistics;
use crate::{
    BridgeError, DeadlineGrid, JointStatesPublishing, RobotDriverRosConfiguration, TargetForwarding,
};

/// How long a loop that failed waits before it returns, for DDS to deliver its last messages.
const DELIVERY_GRACE: Duration = Duration::from_millis(500);

/// The original's `RobotDriverROS`: the topic surface of one robot (created at construction,
/// so topics exist before the driver connects) and the loop that serves it.
///
/// What the original did every period, this does when it is due (see the `receive` module for
/// the per-message path):
///
/// * `get/joint_states` ([`JointStatesPublishing`]): by default from the driver's receive
///   path the moment a Gazebo message is in the cache; capped to one per period (with a
///   budget of n + 4 over n periods) once Gazebo is measured sending at least 4/3 as fast as
///   the loop, a message held back being published at the budget's slot or with a later one,
///   the latest winning; a composite's state once every part sent a newer message, or half a
///   period after the first did; `Grid`: every period of an absolute-deadline grid of the
///   monotonic clock, whatever is in the cache (the original's).
/// * `set/target_joint_positions` ([`TargetForwarding`]): by default validated and sent the
///   moment it arrives, and again after `target_keepalive_sec` without a new one; `Periodic`:
///   every period (the original's).
/// * `get/joint_positions_min|max` ([`LimitsPublishing`](crate::LimitsPublishing)): by
///   default at initialization, when a subscriber matches and as a heartbeat; `Periodic`:
///   every period (the original's).
/// * The watchdog and the state's age: checked once per period while Gazebo sends, and at
///   their own deadlines otherwise. A state older than the state timeout is stale: never
///   published as fresh, shown on `/diagnostics`, and logged once per outage that outlasts
///   the stall budget (shorter stalls are counted and summarised).
///
/// Nothing is published before the driver is initialized. While Gazebo sends and nothing else
/// happens, the loop's own thread never wakes; it wakes for the deadlines no message brings,
/// and every period only when some duty is periodic.
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
    /// Wakes the loop thread: its deadlines, a stop, a watchdog trigger that changed them.
    alarm: Arc<Alarm>,
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
    /// An invalid configuration; a topic rclrs refuses (e.g. an invalid `robot_name`); the
    /// loop's timer cannot be created.
    pub fn new(
        node: &Node,
        driver: Arc<D>,
        config: RobotDriverRosConfiguration,
        shutdown: ShutdownToken,
    ) -> Result<Self, BridgeError> {
        config.validate()?;
        let alarm = Arc::new(Alarm::new().map_err(|source| BridgeError::LoopTimer {
            robot_name: config.robot_name.clone(),
            source,
        })?);
        let counters = Arc::<RobotCounters>::default();
        let server = RobotDriverServer::new(node, &config.robot_name, counters.clone())?;
        let safety = Safety::new(node, &config.robot_name, &shutdown, alarm.clone())?;
        let state_age = {
            let driver = driver.clone();
            Box::new(move || state_age(&*driver))
        };
        let receive = {
            let driver = driver.clone();
            Box::new(move || driver.receive_report())
        };
        let health =
            Arc::new(RobotHealth::new(counters.clone(), state_age).with_receive_report(receive));
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
            alarm,
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

    /// Connects and initializes the driver, then serves the robot until the shutdown token is
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
            // A failure once the stop began is the stop's doing: a composite's part shared
            // with another robot of the process is disconnected by that robot's own stop.
            if err.kind() == ErrorKind::Cancelled || self.shutdown.is_triggered() {
                tracing::info!("::Stopped while initializing: {err}");
                return Ok(LoopStatistics::default());
            }
            return Err(err.into());
        }
        tracing::info!("::Robot initialized.");
        let limits = self.driver.get_joint_limits()?;
        self.health.set_phase(Phase::Running);
        match self.serve(limits) {
            (_, Some(fault)) => Err(fault),
            (statistics, None) => Ok(statistics),
        }
    }

    /// Serves the initialized robot until a stop, or until the watchdog faults (the error
    /// returned with the statistics).
    fn serve(&self, (lower, upper): (Vec<f64>, Vec<f64>)) -> (LoopStatistics, Option<BridgeError>) {
        realtime::apply(self.config.realtime_priority, "the loop thread");
        let limits = JointLimitsTopics::new(
            self.server.joint_limits.clone(),
            (&lower, &upper),
            self.config.limits_publishing,
            self.config.limits_heartbeat,
        );
        let core = Arc::new(Core::new(
            self.driver.clone(),
            self.config.clone(),
            self.server.joint_states.clone(),
            limits,
            (lower, upper),
            self.safety.watchdog(),
            self.shutdown.clone(),
            self.server.targets.clone(),
            self.clock.clone(),
            self.counters.clone(),
            self.alarm.clone(),
        ));
        let _wake_on_shutdown = {
            let alarm = self.alarm.clone();
            self.shutdown
                .on_trigger(Arc::new(move || alarm.set(Instant::now())))
        };
        let mut on_arrival =
            self.config.joint_states_publishing == JointStatesPublishing::OnArrival;
        let listener = on_arrival
            .then(|| {
                let core = Arc::downgrade(&core);
                self.driver.add_state_listener(Arc::new(move || {
                    if let Some(core) = core.upgrade() {
                        core.on_state();
                    }
                }))
            })
            .flatten();
        if on_arrival && listener.is_none() {
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
        {
            let core = Arc::downgrade(&core);
            self.server.rate_targets.forward_on_arrival(Some(Box::new(
                move |command, target: &[f64]| {
                    if let Some(core) = core.upgrade() {
                        core.rate_target_arrived(command, target);
                    }
                },
            )));
        }
        let statistics = if on_arrival {
            self.run_on_arrival(&core)
        } else {
            self.run_grid(&core)
        };
        self.server.targets.forward_on_arrival(None);
        self.server.rate_targets.forward_on_arrival(None);
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

    /// The original's loop: the duties and a publication on every point of the deadline grid.
    fn run_grid(&self, core: &Core<D>) -> LoopStatistics {
        let mut grid = DeadlineGrid::new(Instant::now(), self.config.thread_sampling_time);
        loop {
            let (deadline, skipped) = grid.next_deadline(Instant::now());
            self.alarm.set(deadline);
            self.alarm.wait();
            if self.shutdown.is_triggered() {
                break;
            }
            let woke = Instant::now();
            let lateness = woke.saturating_duration_since(deadline);
            core.grid_period(&mut core.work.lock(), woke, lateness, skipped);
        }
        core.work.lock().statistics
    }

    /// Joint states published by the receive path; this thread only does what the receive
    /// path left to it or what no message brings, when the alarm rings.
    fn run_on_arrival(&self, core: &Core<D>) -> LoopStatistics {
        // The state that completed initialization goes out now, not with the next message.
        core.arrived(&mut core.work.lock(), Instant::now());
        while !self.shutdown.is_triggered() {
            self.alarm.wait();
            if self.shutdown.is_triggered() {
                break;
            }
            core.on_alarm(&mut core.work.lock(), Instant::now());
            // An arrival the receive thread left while we held the lock, after our check.
            if core.arrival_waiting.load(Ordering::SeqCst) {
                self.alarm.wake_by(Instant::now());
            }
        }
        core.work.lock().statistics
    }
}

/// Age of the driver's latest Gazebo state (`None` before the first).
fn state_age<D: RobotDriver + ?Sized>(driver: &D) -> Option<Duration> {
    let mut snapshot = sas_robot_driver_gazebo::JointSnapshot::new(0);
    driver.read_snapshot(&mut snapshot);
    snapshot.age()
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
