//! `run_node`, `RobotDriverROS` and `RobotDriverROSConfiguration`: the node (crates/
//! bridge-node) run from Python. `run_node` is the whole node `sas_robot_driver_ros_gazebo_node`
//! (`bridge_node::run_node`: its parameters, topics, logs and stop), which the legacy script
//! runs, so ROS sees one node, the native one. `RobotDriverROS` is the original's class: the
//! control loop over a driver built in Python. rclrs lives inside the extension with its own
//! context, initialised from the arguments given (`--ros-args …`); every run holds no GIL.

use bridge_node::{
    route_logs_to, ClockBridge, ClockParameters, DdsProfile, ExecutorThread, GzParameters,
    LoopStatistics, RobotDriverRos as Core, RobotDriverRosConfiguration as CoreConfiguration,
    RosLogLayer, SimTimeNotice, StampSource, StopSignals, Teardown, TEARDOWN_BOUND,
};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rclrs::{Context, CreateBasicExecutor, InitOptions, Node};
use sas_robot_driver_gazebo::ShutdownToken;

use crate::config::checked_seconds;
use crate::driver::{RobotDriverGazebo, ShutdownSignaler};
use crate::errors::{Error, Result};
use crate::gil::{released, released_interruptible, DropReleased, Interruption};

/// The node's name unless remapped (`--ros-args -r __node:=ur3e_1`), as the C++ node's.
const DEFAULT_NODE_NAME: &str = "sas_robot_driver_ros_gazebo";
/// The legacy script's node name unless remapped (the original script's rclpy node).
const SCRIPT_NODE_NAME: &str = "sas_robot_driver_ros_gazebo_py";
const SCRIPT: &str = "sas_robot_driver_ros_gazebo.py";
const NODE_CLOCK: &str = "node_clock";
const GAZEBO: &str = "gazebo";

/// The ROS side's configuration (the original's `RobotDriverROSConfiguration`).
#[pyclass(
    module = "sas_robot_driver_gazebo",
    name = "RobotDriverROSConfiguration",
    eq
)]
#[derive(Clone, PartialEq)]
pub(crate) struct RosConfiguration {
    inner: CoreConfiguration,
    /// `publish_clock`, `gazebo_clock_topic`: the node's process-level parameters.
    clock: ClockParameters,
}

#[pymethods]
impl RosConfiguration {
    #[new]
    #[pyo3(signature = (
        robot_driver_provider_prefix = String::new(),
        thread_sampling_time_sec = bridge_node::DEFAULT_THREAD_SAMPLING_TIME_SEC,
        *,
        joint_states_stamp = NODE_CLOCK,
        joint_states_publishing = "on_arrival",
        target_forwarding = "on_arrival",
        target_keepalive_sec = bridge_node::DEFAULT_HEARTBEAT.as_secs_f64(),
        joint_limits_publishing = "on_change",
        joint_limits_heartbeat_sec = bridge_node::DEFAULT_HEARTBEAT.as_secs_f64(),
        state_timeout_sec = None,
        stale_joint_states = "withhold",
        realtime_priority = None,
        publish_clock = false,
        gazebo_clock_topic = "/clock".to_string(),
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        robot_driver_provider_prefix: String,
        thread_sampling_time_sec: f64,
        joint_states_stamp: &str,
        joint_states_publishing: &str,
        target_forwarding: &str,
        target_keepalive_sec: f64,
        joint_limits_publishing: &str,
        joint_limits_heartbeat_sec: f64,
        state_timeout_sec: Option<f64>,
        stale_joint_states: &str,
        realtime_priority: Option<i64>,
        publish_clock: bool,
        gazebo_clock_topic: String,
    ) -> Result<Self> {
        if publish_clock && gazebo_clock_topic.is_empty() {
            return Err(Error::invalid_argument(
                "RobotDriverROSConfiguration: gazebo_clock_topic: it is empty; name Gazebo's \
                 clock topic, e.g. \"/clock\"",
            ));
        }
        let mut configuration = RosConfiguration {
            inner: CoreConfiguration::new(robot_driver_provider_prefix),
            clock: ClockParameters {
                publish_clock,
                gazebo_clock_topic,
            },
        };
        configuration.set_thread_sampling_time_sec(thread_sampling_time_sec)?;
        configuration.set_joint_states_stamp(joint_states_stamp)?;
        let invalid = |field: &str, problem: String| {
            Error::invalid_argument(format!("RobotDriverROSConfiguration: {field}: {problem}"))
        };
        let inner = &mut configuration.inner;
        inner.joint_states_publishing = joint_states_publishing
            .parse()
            .map_err(|problem| invalid("joint_states_publishing", problem))?;
        inner.target_forwarding = target_forwarding
            .parse()
            .map_err(|problem| invalid("target_forwarding", problem))?;
        inner.stale_joint_states = stale_joint_states
            .parse()
            .map_err(|problem| invalid("stale_joint_states", problem))?;
        inner.limits_publishing = joint_limits_publishing
            .parse()
            .map_err(|problem| invalid("joint_limits_publishing", problem))?;
        let heartbeat = |field: &str, seconds: f64| {
            checked_seconds(seconds, || {
                format!(
                    "RobotDriverROSConfiguration: {field}: must be a non-negative number of \
                     seconds (0: none), got {seconds}"
                )
            })
            .map(|d| (!d.is_zero()).then_some(d))
        };
        inner.target_keepalive = heartbeat("target_keepalive_sec", target_keepalive_sec)?;
        inner.limits_heartbeat =
            heartbeat("joint_limits_heartbeat_sec", joint_limits_heartbeat_sec)?;
        inner.state_timeout = state_timeout_sec
            .map(|seconds| {
                let problem =
                    format!("must be a positive number of seconds or None, got {seconds}");
                match checked_seconds(seconds, || {
                    format!("RobotDriverROSConfiguration: state_timeout_sec: {problem}")
                })? {
                    timeout if timeout.is_zero() => Err(invalid("state_timeout_sec", problem)),
                    timeout => Ok(timeout),
                }
            })
            .transpose()?;
        inner.realtime_priority = realtime_priority
            .map(|priority| {
                u8::try_from(priority)
                    .ok()
                    .filter(|p| (1..=99).contains(p))
                    .ok_or_else(|| {
                        invalid(
                            "realtime_priority",
                            format!("must be a SCHED_FIFO priority 1..99 or None, got {priority}"),
                        )
                    })
            })
            .transpose()?;
        Ok(configuration)
    }

    /// When `get/joint_states` is published: "on_arrival" (default) or "grid".
    #[getter]
    fn joint_states_publishing(&self) -> &'static str {
        self.inner.joint_states_publishing.name()
    }

    /// When targets reach Gazebo: "on_arrival" (default) or "periodic".
    #[getter]
    fn target_forwarding(&self) -> &'static str {
        self.inner.target_forwarding.name()
    }

    /// Seconds after which an unchanged target is sent again (on_arrival); 0: never.
    #[getter]
    fn target_keepalive_sec(&self) -> f64 {
        self.inner.target_keepalive.map_or(0.0, |d| d.as_secs_f64())
    }

    /// When the limits are published: "on_change" (default) or "periodic".
    #[getter]
    fn joint_limits_publishing(&self) -> &'static str {
        self.inner.limits_publishing.name()
    }

    /// Seconds after which the limits are published again (on_change); 0: never.
    #[getter]
    fn joint_limits_heartbeat_sec(&self) -> f64 {
        self.inner.limits_heartbeat.map_or(0.0, |d| d.as_secs_f64())
    }

    /// Age in seconds past which the state is stale; None: automatic.
    #[getter]
    fn state_timeout_sec(&self) -> Option<f64> {
        self.inner
            .state_timeout
            .map(|timeout| timeout.as_secs_f64())
    }

    /// Grid publishing while stale: "withhold" (default) or "republish".
    #[getter]
    fn stale_joint_states(&self) -> &'static str {
        self.inner.stale_joint_states.name()
    }

    /// SCHED_FIFO priority of the loop and receive threads; None: normal scheduling.
    #[getter]
    fn realtime_priority(&self) -> Option<u8> {
        self.inner.realtime_priority
    }

    /// Whether `RobotDriverROS` publishes Gazebo's clock on ROS `/clock`.
    #[getter]
    fn publish_clock(&self) -> bool {
        self.clock.publish_clock
    }

    /// The Gazebo `Clock` topic `publish_clock` reads (`/clock`, or `/world/<world>/clock`).
    #[getter]
    fn gazebo_clock_topic(&self) -> String {
        self.clock.gazebo_clock_topic.clone()
    }

    /// Prefix of every topic: `<prefix>/get/joint_states`, … (the robot name).
    #[getter]
    fn robot_driver_provider_prefix(&self) -> String {
        self.inner.robot_name.clone()
    }

    #[setter]
    fn set_robot_driver_provider_prefix(&mut self, prefix: String) {
        self.inner.robot_name = prefix;
    }

    /// Period of the control loop in seconds (0.002: 500 Hz).
    #[getter]
    fn thread_sampling_time_sec(&self) -> f64 {
        self.inner.thread_sampling_time.as_secs_f64()
    }

    #[setter]
    fn set_thread_sampling_time_sec(&mut self, seconds: f64) -> Result<()> {
        let what = || {
            format!(
                "RobotDriverROSConfiguration: thread_sampling_time_sec must be a positive \
                 number of seconds, got {seconds}."
            )
        };
        let period = checked_seconds(seconds, what)?;
        if period.is_zero() {
            return Err(Error::invalid_argument(what()));
        }
        self.inner.thread_sampling_time = period;
        Ok(())
    }

    /// Stamp of `get/joint_states`: "node_clock" (publication time, as the original) or
    /// "gazebo" (simulation time of the Gazebo message the state came from).
    #[getter]
    fn joint_states_stamp(&self) -> &'static str {
        match self.inner.stamp_source {
            StampSource::NodeClock => NODE_CLOCK,
            StampSource::Gazebo => GAZEBO,
        }
    }

    #[setter]
    fn set_joint_states_stamp(&mut self, stamp: &str) -> Result<()> {
        self.inner.stamp_source = stamp.parse().map_err(|_| {
            Error::invalid_argument(format!(
                "RobotDriverROSConfiguration: joint_states_stamp must be {NODE_CLOCK:?} or \
                 {GAZEBO:?}, got {stamp:?}."
            ))
        })?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "RobotDriverROSConfiguration(robot_driver_provider_prefix={:?}, \
             thread_sampling_time_sec={}, joint_states_stamp={:?})",
            self.inner.robot_name,
            self.thread_sampling_time_sec(),
            self.joint_states_stamp()
        )
    }
}

/// The original's `RobotDriverROS`: the topic surface of one robot (created at once) and the
/// control loop that serves it.
#[pyclass(module = "sas_robot_driver_gazebo", name = "RobotDriverROS", frozen)]
pub(crate) struct RobotDriverRos {
    ros: DropReleased<Ros>,
    /// The bridge's shutdown token: `shutdown()`, the signaler given, SIGINT/SIGTERM.
    stop: ShutdownToken,
}

/// The ROS side, dropped in field order: the executor first (stopped and joined), then the
/// topics, then the node.
struct Ros {
    /// Spins the node's subscriptions from construction on.
    _executor: ExecutorThread,
    core: Core,
    _clock: Option<ClockBridge>,
    _sim_time: SimTimeNotice,
    node: Node,
}

#[pymethods]
impl RobotDriverRos {
    #[new]
    #[pyo3(signature = (driver, configuration, shutdown_signaler = None, *, node_name = DEFAULT_NODE_NAME.to_string(), args = None))]
    fn new(
        py: Python<'_>,
        driver: &Bound<'_, RobotDriverGazebo>,
        configuration: &Bound<'_, RosConfiguration>,
        shutdown_signaler: Option<&Bound<'_, ShutdownSignaler>>,
        node_name: String,
        args: Option<Vec<String>>,
    ) -> Result<Self> {
        let args = match args {
            Some(args) => args,
            None => py.import("sys")?.getattr("argv")?.extract()?,
        };
        let driver = driver.get().core.clone();
        let (configuration, clock) = {
            let configuration = configuration.borrow();
            (configuration.inner.clone(), configuration.clock.clone())
        };
        let stop = shutdown_signaler.map_or_else(ShutdownToken::new, |s| s.get().token.clone());
        let bridge_stop = stop.clone();
        released(py, move || {
            // The bridge's Fast DDS settings, as for the node (kept until the node exists).
            let dds_profile = DdsProfile::apply();
            let context = Context::new(args, InitOptions::new())
                .map_err(|source| Error::RosInit { source })?;
            let executor = context.create_basic_executor();
            let node =
                executor
                    .create_node(node_name.as_str())
                    .map_err(|source| Error::RosNode {
                        name: node_name.clone(),
                        source,
                    })?;
            rclrs::log_info!(node.logger(), "::DDS: {}.", dds_profile.note());
            drop(dds_profile);
            let gz = GzParameters {
                msgs_prefix: driver.configuration().msgs_prefix,
                partition: driver.configuration().partition.clone(),
            };
            let clock = ClockBridge::start(&node, &clock, &gz, configuration.realtime_priority)?;
            let sim_time = SimTimeNotice::start(&node);
            let core = Core::new(&node, driver, configuration, bridge_stop)?;
            let executor = ExecutorThread::spawn(executor)?;
            Ok(RobotDriverRos {
                ros: DropReleased::new(Ros {
                    _executor: executor,
                    core,
                    _clock: clock,
                    _sim_time: sim_time,
                    node,
                }),
                stop,
            })
        })
    }

    /// The node's fully qualified name (after `--ros-args` remapping), e.g. "/ur3e_1".
    #[getter]
    fn node_name(&self) -> String {
        self.ros.node.fully_qualified_name()
    }

    /// Connects and initializes the driver, then publishes the joint states and forwards the
    /// targets every period until `shutdown()` (from any thread), the shutdown signaler,
    /// SIGINT, SIGTERM or SIGHUP (handled as the node binaries do while the loop runs, from
    /// any thread); always deinitializes and disconnects the driver before returning. Its
    /// lines go to the node's logger meanwhile. Returns the loop's statistics. The GIL is
    /// released throughout.
    fn control_loop<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        // The node binaries' stop: SIGINT/SIGTERM/SIGHUP stop the loop in order (Python's and
        // rclpy's handlers are back once it returned); its lines go to the node's logger.
        let signals = StopSignals::install(self.stop.clone())
            .map_err(|err| pyo3::exceptions::PyRuntimeError::new_err(err.to_string()))?;
        let log_route = route_logs_to(RosLogLayer::new(self.ros.node.logger().clone()));
        let (outcome, interruption) =
            released_interruptible(py, &self.stop, None, || self.ros.core.control_loop());
        drop(log_route);
        drop(signals);
        if let Interruption::Raised(raised) = interruption {
            if !raised.is_instance_of::<PyKeyboardInterrupt>(py) {
                return Err(raised.into());
            }
        }
        Ok(statistics_dict(py, &outcome?)?)
    }

    /// Ends a running `control_loop()` within one period (or its wait for Gazebo). Permanent,
    /// as a shutdown signaler is.
    fn shutdown(&self) {
        self.stop.trigger();
    }

    /// True once `shutdown()` was called (or the signaler fired, or a signal arrived).
    fn should_shutdown(&self) -> bool {
        self.stop.is_triggered()
    }

    fn __repr__(&self) -> String {
        format!(
            "RobotDriverROS(node={:?}, robot_driver_provider_prefix={:?})",
            self.ros.node.fully_qualified_name(),
            self.ros.core.configuration().robot_name
        )
    }
}

fn statistics_dict<'py>(py: Python<'py>, s: &LoopStatistics) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("periods", s.periods)?;
    dict.set_item("overruns", s.overruns)?;
    dict.set_item("max_lateness_sec", s.max_lateness.as_secs_f64())?;
    dict.set_item("targets_accepted", s.targets_accepted)?;
    dict.set_item("targets_refused", s.targets_refused)?;
    dict.set_item("targets_clamped", s.targets_clamped)?;
    dict.set_item("targets_superseded", s.targets_superseded)?;
    Ok(dict)
}

/// The node `sas_robot_driver_ros_gazebo_node` run in this process, as the legacy script runs
/// it: ROS initialised from `args` (default `sys.argv`), a node named `node_name` unless
/// remapped, its parameters, topics and log lines (to the node's logger, `/rosout`), until
/// SIGINT, SIGTERM or SIGHUP — which the node handles while it runs, any number of them, at
/// any stage, replacing Python's handlers meanwhile. Returns the node's exit status: 0 after
/// a signal, 2 for bad `--ros-args` or a bad parameter, 1 for any other failure. The GIL is
/// released throughout. With `ignore_signals_after_stop` (a script that exits next), those
/// signals are ignored once the node stopped, so one arriving late (launch forwards one
/// more) neither raises KeyboardInterrupt nor kills the exiting interpreter; otherwise the
/// previous handlers come back.
#[pyfunction]
#[pyo3(signature = (
    args = None,
    *,
    node_name = SCRIPT_NODE_NAME.to_string(),
    program = SCRIPT.to_string(),
    ignore_signals_after_stop = false,
))]
pub(crate) fn run_node(
    py: Python<'_>,
    args: Option<Vec<String>>,
    node_name: String,
    program: String,
    ignore_signals_after_stop: bool,
) -> PyResult<u8> {
    let args = match args {
        Some(args) => args,
        None => py.import("sys")?.getattr("argv")?.extract()?,
    };
    let exit = released(py, move || {
        let shutdown = ShutdownToken::new();
        let signals = StopSignals::install(shutdown.clone())?;
        let teardown = Teardown::spawn(&program, TEARDOWN_BOUND)?;
        let exit = bridge_node::run_node(args, &node_name, &program, &shutdown, &teardown);
        teardown.finish();
        if ignore_signals_after_stop {
            // Replaced by SIG_IGN below, with no moment where Python's handler is back.
            signals.keep_until_exit();
        }
        Ok::<_, std::io::Error>(exit)
    })
    .map_err(|err| {
        pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start the node: {err}"))
    })?;
    if ignore_signals_after_stop {
        // Through Python's signal module: its exit restores SIG_DFL for any signal it holds
        // a Python handler for, which would let a late SIGINT kill the interpreter.
        let signal = py.import("signal")?;
        let ignore = signal.getattr("SIG_IGN")?;
        for name in ["SIGINT", "SIGTERM", "SIGHUP"] {
            signal.call_method1("signal", (signal.getattr(name)?, &ignore))?;
        }
    }
    Ok(exit.code())
}
