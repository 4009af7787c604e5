//! `/diagnostics` (`diagnostic_msgs/msg/DiagnosticArray`) once a second: one status per
//! robot, named `<node>: <robot_name>`, level OK/WARN/ERROR, and key-values for the state's
//! age, Gazebo's and our publishing rates, messages never reported, overruns, targets
//! accepted/refused/clamped and the watchdog.
//!
//! Key design decision: the loop only stores counters ([`RobotHealth`]: relaxed atomics,
//! one writer, a few stores per period, no lock, no wake-up); a 1 Hz timer on the executor
//! thread turns them into a status, so a robot is reported while it waits for Gazebo and
//! after its loop ended (a faulted robot of a multi-robot node stays ERROR). The loop also
//! publishes once when it ends, so the last status of a stopping process goes out.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rclrs::{Clock, IntoPrimitiveOptions, Node, Publisher, Timer};
use ros_env::builtin_interfaces::msg::Time;
use ros_env::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};

use crate::robot::counters::RobotCounters;
use crate::robot::watchdog::{Watchdog, WatchdogState};
use sas_robot_driver_gazebo::ReceiveReport;

use crate::{BridgeError, LoopStatistics};

/// How often the statuses are published.
pub(crate) const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);
/// Overruns are a WARN when more than this share of an interval's deadlines were skipped: a
/// few on a loaded machine are normal, and each one is counted in the key-values anyway.
const OVERRUN_WARN_SHARE: f64 = 0.1;

/// Where a robot's loop is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Phase {
    /// Topics exist; `control_loop` not called yet.
    Created = 0,
    /// Connecting, or waiting for Gazebo in `initialize`.
    Initializing = 1,
    /// Running periods.
    Running = 2,
    /// Stopped by a stop signal or `set/shutdown`.
    Stopped = 3,
    /// Stopped by the watchdog, holding the last measured position.
    Faulted = 4,
    /// Ended with an error.
    Failed = 5,
}

impl Phase {
    /// Every phase, at the index of its value.
    const ALL: [Phase; 6] = [
        Phase::Created,
        Phase::Initializing,
        Phase::Running,
        Phase::Stopped,
        Phase::Faulted,
        Phase::Failed,
    ];

    fn from_u8(value: u8) -> Phase {
        Self::ALL
            .get(usize::from(value))
            .copied()
            .unwrap_or(Phase::Created)
    }
}

/// One robot's state for the diagnostics timer: its phase and outcome (set by the loop), its
/// counters (the loop's and the receive path's [`RobotCounters`], relaxed atomics) and the age
/// of its latest Gazebo state (read from the driver's cache).
pub(crate) struct RobotHealth {
    phase: AtomicU8,
    /// Why the loop ended, once it ended with an error or a fault.
    outcome: Mutex<Option<String>>,
    counters: Arc<RobotCounters>,
    state_age: Box<dyn Fn() -> Option<Duration> + Send + Sync>,
    /// What the driver's receive path refused (incomplete messages, duplicate joints).
    receive: Box<dyn Fn() -> ReceiveReport + Send + Sync>,
}

impl RobotHealth {
    pub fn new(
        counters: Arc<RobotCounters>,
        state_age: Box<dyn Fn() -> Option<Duration> + Send + Sync>,
    ) -> Self {
        RobotHealth {
            phase: AtomicU8::new(Phase::Created as u8),
            outcome: Mutex::new(None),
            counters,
            state_age,
            receive: Box::new(ReceiveReport::default),
        }
    }

    /// Reports `receive` (the driver's [`RobotDriver::receive_report`]) too.
    ///
    /// [`RobotDriver::receive_report`]: sas_robot_driver_gazebo::RobotDriver::receive_report
    pub fn with_receive_report(
        mut self,
        receive: Box<dyn Fn() -> ReceiveReport + Send + Sync>,
    ) -> Self {
        self.receive = receive;
        self
    }

    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    /// When the loop ended: stopped, faulted or failed.
    pub fn finish(&self, outcome: &Result<LoopStatistics, BridgeError>) {
        match outcome {
            Ok(_) => self.set_phase(Phase::Stopped),
            Err(err) => {
                *self.outcome.lock() = Some(err.to_string());
                self.set_phase(match err {
                    BridgeError::Watchdog { .. } => Phase::Faulted,
                    _ => Phase::Failed,
                });
            }
        }
    }

    /// Which joint values are non-finite now, if any.
    fn non_finite(&self) -> Option<String> {
        self.counters.non_finite.lock().clone()
    }

    fn counters(&self, now: Instant) -> Counters {
        let c = self.counters.snapshot((self.state_age)());
        let receive = (self.receive)();
        Counters {
            incomplete_joint_states: receive.incomplete,
            joint_states_with_duplicates: receive.with_duplicates,
            missing_joints: receive.missing,
            connections_refused: receive.connections_refused,
            at: now,
            state_age: c.state_age,
            stale: c.stale,
            stale_episodes: c.stale_episodes,
            short_stalls: c.short_stalls,
            non_finite_messages: c.non_finite_messages,
            periods: c.periods,
            overruns: c.overruns,
            targets_accepted: c.targets_accepted,
            targets_refused: c.targets_refused,
            targets_clamped: c.targets_clamped,
            targets_superseded: c.targets_superseded,
            gazebo_messages: c.gazebo_messages,
            joint_states_published: c.joint_states_published,
            never_reported: c.never_reported,
        }
    }
}

/// The counters read at one time.
#[derive(Clone, Debug)]
struct Counters {
    at: Instant,
    /// Gazebo messages not taken for lacking a configured joint, and the joints the latest
    /// one lacked.
    incomplete_joint_states: u64,
    missing_joints: Vec<String>,
    joint_states_with_duplicates: u64,
    /// Transport connections refused for their security, both ways.
    connections_refused: u64,
    state_age: Option<Duration>,
    /// Older than the robot's state timeout (see `state_timeout_sec`).
    stale: bool,
    /// Outages so far, and how many of them ended within the stall budget.
    stale_episodes: u64,
    short_stalls: u64,
    non_finite_messages: u64,
    periods: u64,
    overruns: u64,
    targets_accepted: u64,
    targets_refused: u64,
    targets_clamped: u64,
    targets_superseded: u64,
    gazebo_messages: u64,
    joint_states_published: u64,
    never_reported: u64,
}

/// A robot's level and message from its phase, the counters of the last interval and the
/// watchdog.
fn level_and_message(
    phase: Phase,
    outcome: Option<&str>,
    non_finite: Option<&str>,
    now: &Counters,
    before: Option<&Counters>,
) -> (u8, String) {
    match phase {
        Phase::Created => (
            DiagnosticStatus::WARN,
            "not running: control_loop() not started".into(),
        ),
        Phase::Initializing => (
            DiagnosticStatus::WARN,
            "waiting for the robot (connecting, initializing)".into(),
        ),
        Phase::Stopped => (DiagnosticStatus::WARN, "stopped".into()),
        Phase::Faulted => (
            DiagnosticStatus::ERROR,
            format!(
                "stopped by the watchdog, holding the last measured position: {}",
                outcome.unwrap_or("")
            ),
        ),
        Phase::Failed => (
            DiagnosticStatus::ERROR,
            format!("failed: {}", outcome.unwrap_or("")),
        ),
        Phase::Running if non_finite.is_some() => (
            DiagnosticStatus::ERROR,
            format!(
                "Gazebo sends non-finite joint values (passed on as received): {}",
                non_finite.unwrap_or("")
            ),
        ),
        Phase::Running => {
            let mut problems = Vec::new();
            if !now.missing_joints.is_empty() {
                problems.push(format!(
                    "Gazebo's joint states lack the configured joint(s) {}: they are not taken",
                    now.missing_joints.join(", ")
                ));
            }
            match now.state_age {
                Some(age) if now.stale => problems.push(format!(
                    "stale: no joint states from Gazebo for {:.1} s",
                    age.as_secs_f64()
                )),
                None => problems.push("no joint states from Gazebo yet".into()),
                Some(_) => {}
            }
            if let Some(before) = before {
                let overruns = now.overruns - before.overruns;
                let deadlines = overruns + (now.periods - before.periods);
                if overruns as f64 > OVERRUN_WARN_SHARE * deadlines as f64 {
                    problems.push(format!(
                        "{overruns} of {deadlines} deadlines skipped (overruns) in the last \
                         interval"
                    ));
                }
                let refused = now.targets_refused - before.targets_refused;
                if refused > 0 {
                    problems.push(format!("{refused} targets refused in the last interval"));
                }
            }
            if problems.is_empty() {
                (DiagnosticStatus::OK, "running".into())
            } else {
                (DiagnosticStatus::WARN, problems.join("; "))
            }
        }
    }
}

fn watchdog_text(state: &WatchdogState, now: Instant) -> String {
    match state {
        WatchdogState::Disarmed => "disarmed (no trigger received)".into(),
        WatchdogState::Armed {
            period_sec,
            maximum_delay_sec,
            last,
        } => format!(
            "armed: period {period_sec} s, maximum delay {maximum_delay_sec} s, last trigger \
             {:.3} s ago",
            now.saturating_duration_since(*last).as_secs_f64()
        ),
        WatchdogState::Faulted(fault) => format!("fault: {fault}"),
    }
}

fn rate(now: u64, before: u64, interval: Duration) -> f64 {
    if interval.is_zero() {
        0.0
    } else {
        now.saturating_sub(before) as f64 / interval.as_secs_f64()
    }
}

fn key_values(now: &Counters, before: Option<&Counters>, watchdog: String) -> Vec<KeyValue> {
    let (gazebo_rate, ros_rate) = before.map_or((0.0, 0.0), |before| {
        let interval = now.at.saturating_duration_since(before.at);
        (
            rate(now.gazebo_messages, before.gazebo_messages, interval),
            rate(
                now.joint_states_published,
                before.joint_states_published,
                interval,
            ),
        )
    });
    let pair = |key: &str, value: String| KeyValue {
        key: key.into(),
        value,
    };
    vec![
        pair(
            "state_age_sec",
            now.state_age
                .map_or("none".into(), |age| format!("{:.4}", age.as_secs_f64())),
        ),
        pair("gazebo_rate_hz", format!("{gazebo_rate:.1}")),
        pair("ros_publish_rate_hz", format!("{ros_rate:.1}")),
        pair("gazebo_messages", now.gazebo_messages.to_string()),
        pair("messages_never_reported", now.never_reported.to_string()),
        pair("stale_episodes", now.stale_episodes.to_string()),
        pair("short_stalls", now.short_stalls.to_string()),
        pair("non_finite_messages", now.non_finite_messages.to_string()),
        pair(
            "incomplete_joint_states",
            now.incomplete_joint_states.to_string(),
        ),
        pair(
            "joint_states_with_duplicates",
            now.joint_states_with_duplicates.to_string(),
        ),
        pair(
            "gz_connections_refused",
            now.connections_refused.to_string(),
        ),
        pair("periods", now.periods.to_string()),
        pair("overruns", now.overruns.to_string()),
        pair("targets_accepted", now.targets_accepted.to_string()),
        pair("targets_refused", now.targets_refused.to_string()),
        pair("targets_clamped", now.targets_clamped.to_string()),
        pair("targets_superseded", now.targets_superseded.to_string()),
        pair("watchdog", watchdog),
    ]
}

/// Builds and publishes one robot's status.
struct Reporter {
    name: String,
    robot_name: String,
    health: Arc<RobotHealth>,
    watchdog: Arc<Mutex<Watchdog>>,
    publisher: Publisher<DiagnosticArray>,
    clock: Clock,
    /// The counters of the previous publication, for the rates.
    before: Mutex<Option<Counters>>,
}

impl Reporter {
    fn status(&self) -> DiagnosticStatus {
        let now = Instant::now();
        let counters = self.health.counters(now);
        let mut before = self.before.lock();
        let outcome = self.health.outcome.lock().clone();
        let (level, message) = level_and_message(
            self.health.phase(),
            outcome.as_deref(),
            self.health.non_finite().as_deref(),
            &counters,
            before.as_ref(),
        );
        let watchdog = watchdog_text(self.watchdog.lock().state(), now);
        let values = key_values(&counters, before.as_ref(), watchdog);
        *before = Some(counters);
        DiagnosticStatus {
            level,
            name: self.name.clone(),
            message,
            hardware_id: self.robot_name.clone(),
            values,
        }
    }

    fn publish(&self) {
        let nanos = i128::from(self.clock.now().nsec);
        let stamp = crate::robot::messages::stamp_from_nanos(nanos);
        let mut array = DiagnosticArray::default();
        array.header.stamp = Time {
            sec: stamp.sec,
            nanosec: stamp.nanosec,
        };
        array.status.push(self.status());
        if let Err(err) = self.publisher.publish(array) {
            tracing::debug!("::Publishing /diagnostics failed: {err}");
        }
    }
}

/// One robot's `/diagnostics` publisher and its 1 Hz timer.
pub(crate) struct Diagnostics {
    reporter: Arc<Reporter>,
    _timer: Timer,
}

impl Diagnostics {
    /// Publishes the status `<node name>: <robot_name>` of `health` and `watchdog` every
    /// [`DIAGNOSTICS_PERIOD`] on the node's executor.
    pub fn new(
        node: &Node,
        robot_name: &str,
        health: Arc<RobotHealth>,
        watchdog: Arc<Mutex<Watchdog>>,
    ) -> Result<Self, BridgeError> {
        let topic_error = |kind, source| BridgeError::Topic {
            kind,
            topic: "/diagnostics".into(),
            source,
        };
        let publisher = node
            .create_publisher::<DiagnosticArray>("/diagnostics".keep_last(10).reliable().volatile())
            .map_err(|source| topic_error("publisher", source))?;
        let reporter = Arc::new(Reporter {
            name: format!("{}: {robot_name}", node.name()),
            robot_name: robot_name.to_string(),
            health,
            watchdog,
            publisher,
            clock: node.get_clock(),
            before: Mutex::new(None),
        });
        let timed = reporter.clone();
        let timer = node
            .create_timer_repeating(DIAGNOSTICS_PERIOD, move || timed.publish())
            .map_err(|source| topic_error("diagnostics timer", source))?;
        Ok(Diagnostics {
            reporter,
            _timer: timer,
        })
    }

    /// Publishes the status now (the loop, when it ends).
    pub fn publish_now(&self) {
        self.reporter.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(at: Instant) -> Counters {
        Counters {
            at,
            state_age: Some(Duration::from_millis(2)),
            stale: false,
            stale_episodes: 0,
            short_stalls: 0,
            non_finite_messages: 0,
            periods: 500,
            overruns: 0,
            targets_accepted: 3,
            targets_refused: 0,
            targets_clamped: 1,
            targets_superseded: 2,
            gazebo_messages: 500,
            joint_states_published: 500,
            never_reported: 4,
            incomplete_joint_states: 0,
            missing_joints: Vec::new(),
            joint_states_with_duplicates: 0,
            connections_refused: 0,
        }
    }

    /// `before`'s counters read `seconds` later, unchanged (to be changed with `..`).
    fn later(before: &Counters, seconds: u64) -> Counters {
        Counters {
            at: before.at + Duration::from_secs(seconds),
            ..before.clone()
        }
    }

    /// The level and message of a running robot, over the interval from `before` to `now`.
    fn running(now: &Counters, before: &Counters) -> (u8, String) {
        level_and_message(Phase::Running, None, None, now, Some(before))
    }

    /// The message of a running robot whose status over the interval must be a warning.
    fn warning(now: &Counters, before: &Counters) -> String {
        let (level, message) = running(now, before);
        assert_eq!(level, DiagnosticStatus::WARN, "{message}");
        message
    }

    fn value<'a>(values: &'a [KeyValue], key: &str) -> &'a str {
        &values.iter().find(|kv| kv.key == key).expect(key).value
    }

    #[test]
    fn a_running_robot_is_ok_with_rates_over_the_last_interval() {
        let before = counters(Instant::now());
        let now = Counters {
            periods: 1500,
            gazebo_messages: 1500,
            joint_states_published: 1498,
            ..later(&before, 2)
        };
        let (level, message) = running(&now, &before);
        assert_eq!((level, message.as_str()), (DiagnosticStatus::OK, "running"));
        let values = key_values(&now, Some(&before), "disarmed".into());
        assert_eq!(value(&values, "gazebo_rate_hz"), "500.0");
        assert_eq!(value(&values, "ros_publish_rate_hz"), "499.0");
        assert_eq!(value(&values, "state_age_sec"), "0.0020");
        assert_eq!(value(&values, "messages_never_reported"), "4");
        assert_eq!(value(&values, "targets_clamped"), "1");
        assert_eq!(value(&values, "watchdog"), "disarmed");
    }

    #[test]
    fn stale_state_overruns_and_refused_targets_warn_naming_each() {
        let before = counters(Instant::now());
        let now = Counters {
            state_age: Some(Duration::from_secs(3)),
            stale: true,
            periods: before.periods + 400,
            overruns: 101,
            targets_refused: 5,
            ..later(&before, 1)
        };
        assert_eq!(
            warning(&now, &before),
            "stale: no joint states from Gazebo for 3.0 s; 101 of 501 deadlines skipped (overruns) \
             in the last interval; 5 targets refused in the last interval"
        );
        let few_overruns = Counters {
            state_age: Some(Duration::ZERO),
            stale: false,
            periods: before.periods + 480,
            overruns: 20,
            targets_refused: 0,
            ..now
        };
        let (level, _) = running(&few_overruns, &before);
        assert_eq!(level, DiagnosticStatus::OK);
    }

    #[test]
    fn joint_states_lacking_a_joint_warn_naming_it_and_are_counted() {
        let before = counters(Instant::now());
        let now = Counters {
            incomplete_joint_states: 7,
            missing_joints: vec!["elbow_joint".into()],
            joint_states_with_duplicates: 2,
            ..later(&before, 1)
        };
        assert_eq!(
            warning(&now, &before),
            "Gazebo's joint states lack the configured joint(s) elbow_joint: they are not taken"
        );
        let values = key_values(&now, Some(&before), "disarmed".into());
        assert_eq!(value(&values, "incomplete_joint_states"), "7");
        assert_eq!(value(&values, "joint_states_with_duplicates"), "2");
    }

    #[test]
    fn health_reports_what_the_drivers_receive_path_refused() {
        let health = RobotHealth::new(Arc::default(), Box::new(|| None)).with_receive_report(
            Box::new(|| ReceiveReport {
                incomplete: 3,
                with_duplicates: 1,
                missing: vec!["a".into()],
                connections_refused: 2,
            }),
        );
        let read = health.counters(Instant::now());
        let values = key_values(&read, None, "disarmed".into());
        assert_eq!(value(&values, "gz_connections_refused"), "2");
        assert_eq!(read.incomplete_joint_states, 3);
        assert_eq!(read.joint_states_with_duplicates, 1);
        assert_eq!(read.missing_joints, ["a"]);
    }

    #[test]
    fn a_fault_or_failure_is_an_error_with_its_reason_and_waiting_is_a_warning() {
        let now = counters(Instant::now());
        let (level, message) = level_and_message(
            Phase::Faulted,
            Some("The watchdog status is false!"),
            None,
            &now,
            None,
        );
        assert_eq!(level, DiagnosticStatus::ERROR);
        assert!(
            message.ends_with("The watchdog status is false!"),
            "{message}"
        );
        let (level, _) = level_and_message(Phase::Failed, Some("boom"), None, &now, None);
        assert_eq!(level, DiagnosticStatus::ERROR);
        for phase in [Phase::Created, Phase::Initializing, Phase::Stopped] {
            assert_eq!(
                level_and_message(phase, None, None, &now, None).0,
                DiagnosticStatus::WARN
            );
        }
    }

    #[test]
    fn health_reads_the_loops_counters_and_the_state_age() {
        let counters = Arc::new(RobotCounters::default());
        let health = RobotHealth::new(
            counters.clone(),
            Box::new(|| Some(Duration::from_millis(3))),
        );
        counters.gazebo_messages.store(6, Ordering::Relaxed);
        counters.never_reported.store(2, Ordering::Relaxed);
        counters.joint_states_published.store(4, Ordering::Relaxed);
        counters.periods.store(5, Ordering::Relaxed);
        counters.stale.store(true, Ordering::Relaxed);
        let read = health.counters(Instant::now());
        assert_eq!(read.gazebo_messages, 6);
        assert_eq!(read.never_reported, 2);
        assert_eq!(read.joint_states_published, 4);
        assert_eq!(read.periods, 5);
        assert!(read.stale);
        assert_eq!(read.state_age, Some(Duration::from_millis(3)));
        for phase in Phase::ALL {
            assert_eq!(Phase::from_u8(phase as u8), phase);
        }
    }
}
