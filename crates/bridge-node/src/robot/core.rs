//! What the three threads acting on a robot share: [`Core`] (the driver, the topics, the
//! stop token, the alarm) and, under one lock, [`Work`] (the publication, the duties' state,
//! the statistics). Its methods live by role, one module each:
//!
//! * the per-message path, on the driver's receive thread ([`receive`](super::receive)): on
//!   every Gazebo message, publish the new state (rate-capped to the loop's period, latest
//!   wins) and, at most once per period, run the duties;
//! * a target, on the DDS listener thread that received it ([`targets`](super::targets)):
//!   validated and sent to Gazebo at once;
//! * the duties ([`duties`](super::duties)): the watchdog, the limits, the target's keepalive
//!   or resending, the state's age, all cheap checks that rarely send anything, and the next
//!   instant one falls due without a message;
//! * the robot's loop thread ([`loop_thread`](super::loop_thread)), sleeping on an
//!   [`Alarm`] set to the next instant something is due that no message may bring: a
//!   deferred publication, the state going stale, the watchdog's deadline, the target's
//!   keepalive, the limits' heartbeat, and, only when some duty is periodic (the original's
//!   contracts), the next period Gazebo leaves without a message. While Gazebo sends and
//!   nothing else happens, the loop thread never wakes.
//!
//! The receive thread never waits for [`Work`]'s lock (if the loop thread holds it, the
//! arrival is left to the loop thread).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rclrs::{Clock, Publisher};
use ros_env::sensor_msgs::msg::rmw::JointState;
use sas_robot_driver_gazebo::{JointSnapshot, RobotDriver, ShutdownToken};

use crate::process::realtime;
use crate::robot::alarm::Alarm;
use crate::robot::counters::RobotCounters;
use crate::robot::limits::JointLimitsTopics;
use crate::robot::mailbox::TargetMailbox;
use crate::robot::messages::JointStateMessage;
use crate::robot::non_finite::NonFiniteStates;
use crate::robot::rate_cap::RateCap;
use crate::robot::rate_limit::{RateLimit, FAILURE_LOG_INTERVAL};
use crate::robot::staleness::Staleness;
use crate::robot::statistics::{LoopStatistics, Report};
use crate::robot::watchdog::Watchdog;
use crate::{BridgeError, RobotDriverRosConfiguration};

/// What the receive thread, the loop thread and the DDS listener thread share for one robot.
pub(crate) struct Core<D: RobotDriver + ?Sized> {
    pub(super) driver: Arc<D>,
    pub(super) config: RobotDriverRosConfiguration,
    /// The driver's joint names (empty if it does not name them), for log lines.
    pub(super) joint_names: Vec<String>,
    pub(super) joint_states: Publisher<JointState>,
    /// Armed by `set/watchdog_trigger`; checked in the duties and at its deadline.
    pub(super) watchdog: Arc<Mutex<Watchdog>>,
    /// The robot's stop token: a watchdog fault triggers it to end the loop.
    pub(super) stop: ShutdownToken,
    /// Set on a watchdog fault: the hold stays the target, nothing else is forwarded.
    pub(super) faulted: AtomicBool,
    pub(super) targets: Arc<TargetMailbox>,
    pub(super) clock: Clock,
    pub(super) counters: Arc<RobotCounters>,
    /// Wakes the loop thread.
    pub(super) alarm: Arc<Alarm>,
    pub(super) receive_thread_prioritised: AtomicBool,
    pub(super) listener_thread_prioritised: AtomicBool,
    /// An arrival the receive thread could not handle (the loop thread held the lock).
    pub(super) arrival_waiting: AtomicBool,
    /// The target logs' rate limits (the DDS listener thread forwards and refuses too).
    pub(super) forwarding: Mutex<Forwarding>,
    pub(super) work: Mutex<Work>,
}

/// The rate limits of the target's logs (when it is due again is the driver's to say).
pub(super) struct Forwarding {
    pub(super) refused_log: RateLimit,
    pub(super) failed_log: RateLimit,
}

/// The state of the publications and duties, under one lock (the receive path and the loop
/// thread take it at different moments, so it is not contended).
pub(crate) struct Work {
    pub(super) message: JointStateMessage,
    pub(super) snapshot: JointSnapshot,
    /// The rate cap of joint-state publications.
    pub(super) state_cap: RateCap,
    /// A state not yet published, and by when it is published.
    pub(super) pending: Option<Instant>,
    /// When the duties are next due on the receive path (at most once per period; the loop
    /// thread does them only at their own deadlines, or ½ period late when one is periodic).
    pub(super) period_due: Instant,
    pub(super) limits: JointLimitsTopics,
    /// The limits as values, for the watchdog's hold.
    pub(super) limit_values: (Vec<f64>, Vec<f64>),
    pub(super) staleness: Staleness,
    pub(super) non_finite: NonFiniteStates,
    /// The watchdog fault that ended the loop (the robot holds its last measured position).
    pub(super) fault: Option<BridgeError>,
    /// Sequence and arrival of the last state published.
    pub(super) published: (u64, Option<Instant>),
    /// Sequence and arrival of the last state the receive path saw.
    pub(super) seen: (u64, Option<Instant>),
    pub(super) failures: PeriodFailures,
    pub(super) statistics: LoopStatistics,
    pub(super) report: Report,
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
    pub(super) fn in_span<T>(&self, log: impl FnOnce() -> T) -> T {
        let _span = tracing::info_span!("robot", name = %self.config.robot_name).entered();
        log()
    }

    /// Gives the calling thread the robot's `realtime_priority` the first time it comes by
    /// (`done` unset): the receive and DDS listener threads are not ours to set up when
    /// they start.
    pub(super) fn prioritise_once(&self, done: &AtomicBool, thread: &str) {
        // A load first: every message comes by here, and only the first needs the swap.
        if !done.load(Ordering::Relaxed) && !done.swap(true, Ordering::Relaxed) {
            realtime::apply(self.config.realtime_priority, thread);
        }
    }
}

/// Rate limits of the per-period failure logs, owned by the loop.
pub(super) struct PeriodFailures {
    pub(super) publish: RateLimit,
    pub(super) warned_no_sim_time: bool,
}

impl PeriodFailures {
    pub(super) fn new() -> Self {
        PeriodFailures {
            publish: RateLimit::new(FAILURE_LOG_INTERVAL),
            warned_no_sim_time: false,
        }
    }
}
