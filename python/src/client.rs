//! `RobotDriverClient`, `Functionality` and `ModeBlacklistFlag`: the controller's side of a
//! robot driver (the original's `sas::RobotDriverClient` and its Python binding), with the ROS
//! side in Rust.
//!
//! Key design decision: Python is never woken per message. The client's subscriptions run on a
//! Rust thread of its own (an rclrs worker's wait-set thread) and only write the
//! [`ClientState`] (a sequence lock for the joint state); a getter copies the latest state out
//! without waiting for anyone, and `wait_for_new_state` sleeps with the GIL released on a
//! condition the writer signals only while someone waits. rclpy instead takes every message
//! through Python, and that wake-up is most of what a subscription costs it.
//! Getters keep the GIL: the copy takes microseconds and never blocks on the writer, and
//! handing the GIL over and back could leave the caller waiting a switch interval for it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bridge_node::multi_array;
use numpy::PyArray1;
use parking_lot::{Mutex, MutexGuard};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rclrs::Publisher;
use ros_env::std_msgs::msg::rmw::Int32MultiArray;
use sas_driver_client::{ClientState, JointStateRead, Topics};
use sas_robot_driver_gazebo::Command;

use crate::arrays::{f64_array, f64_vector};
use crate::client_ros::{
    i32_message, shutdown_message, watchdog_message, Blacklist, ClientRos, JointControl,
    GET_FROM_NODE,
};
use crate::errors::{Error, Result};
use crate::gil::{released, DropReleased};

/// How long a waiting thread keeps the GIL released before it runs Python's signal handlers
/// (Ctrl-C) and waits on.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);
/// How long the interpreter's exit waits for threads still returning from a wait the exit
/// ended (they need the GIL once more to raise).
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// What a robot driver supports (the original's `sas::RobotDriver::Functionality`, as its
/// Python binding exposes it: `Watchdog` is not there). `None` is spelled
/// `getattr(Functionality, "None")` in Python.
#[pyclass(
    module = "sas_robot_driver_gazebo",
    name = "Functionality",
    eq,
    eq_int,
    hash,
    frozen,
    from_py_object
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Functionality {
    #[pyo3(name = "None")]
    Nothing = 0,
    PositionControl = 1,
    VelocityControl = 2,
    ForceControl = 3,
    Homing = 4,
    ClearPositions = 5,
}

/// What a client leaves out (the original's `RobotDriverClient::MODE_BLACKLIST_FLAG`).
#[pyclass(
    module = "sas_robot_driver_gazebo",
    name = "ModeBlacklistFlag",
    eq,
    eq_int,
    hash,
    frozen,
    from_py_object
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)] // the original's spelling
pub(crate) enum ModeBlacklistFlag {
    /// No `set/target_joint_*`, `set/homing_signal` or `set/clear_positions` publishers.
    JOINT_CONTROL = 0,
    /// No subscriptions: the client reads nothing.
    JOINT_MONITORING = 1,
    /// No `set/watchdog_trigger` publisher.
    WATCHDOG_CONTROL = 2,
}

/// One client: its state (shared with its callbacks) and its ROS side until closed.
pub(crate) struct ClientCore {
    prefix: String,
    node_name: String,
    topics: Topics,
    blacklist: Blacklist,
    state: Arc<ClientState>,
    ros: Mutex<Option<ClientRos>>,
    /// Python threads inside `wait_for_new_state` (until they hold the GIL again).
    waiting_threads: AtomicUsize,
}

/// Every client not yet dropped, so that the interpreter's exit can close them (atexit)
/// before it finalizes: their threads then end while the process is whole, not while its
/// static destructors (the DDS library's) run.
static LIVE_CLIENTS: Mutex<Vec<Weak<ClientCore>>> = Mutex::new(Vec::new());

fn live_clients() -> MutexGuard<'static, Vec<Weak<ClientCore>>> {
    LIVE_CLIENTS.lock()
}

impl ClientCore {
    /// Stops the executor thread and drops the topics and node (call with the GIL released).
    /// Idempotent.
    fn close(&self) {
        self.state.close();
        let ros = self.ros.lock().take();
        drop(ros);
    }

    /// Refuses `operation` once the client is closed.
    fn check_open(&self, operation: &str) -> Result<()> {
        if self.state.is_closed() {
            return Err(self.closed_error(operation));
        }
        Ok(())
    }

    fn closed_error(&self, operation: &str) -> Error {
        Error::not_available(format!(
            "RobotDriverClient({})::{operation}: the client is closed.",
            self.prefix
        ))
    }

    /// Runs `send` with the ROS side (GIL released), or says why it cannot.
    fn with_ros<T: Send>(
        &self,
        py: Python<'_>,
        operation: &str,
        send: impl Send + FnOnce(&ClientRos) -> Result<T>,
    ) -> Result<T> {
        released(py, || match self.ros.lock().as_ref() {
            Some(ros) => send(ros),
            None => Err(self.closed_error(operation)),
        })
    }

    fn is_enabled(&self, functionality: Functionality) -> Result<bool> {
        let state = &self.state;
        Ok(match functionality {
            Functionality::PositionControl => state.ready_joint_count().is_some(),
            Functionality::VelocityControl => state.has_velocities(),
            Functionality::ForceControl => state.has_efforts(),
            Functionality::Homing => state.home_states().is_some_and(|h| !h.is_empty()),
            Functionality::ClearPositions | Functionality::Nothing => {
                let name = if functionality == Functionality::Nothing {
                    "None"
                } else {
                    "ClearPositions"
                };
                return Err(Error::invalid_argument(format!(
                    "{}::is_enabled() RobotDriver::Functionality::{name} has no meaning in \
                     RobotDriverInterface::is_enabled().",
                    self.prefix
                )));
            }
        })
    }

    /// The original's "uninitialized" error for `getter` (reading `what`), with the reason.
    fn uninitialized(&self, getter: &str, what: &str, needs: Functionality) -> Error {
        let reason = if self.blacklist.joint_monitoring {
            "JOINT_MONITORING is blacklisted, so this client subscribes to nothing.".to_string()
        } else {
            match needs {
                Functionality::PositionControl => format!(
                    "nothing has arrived yet on {}.",
                    self.state.missing(&self.topics).join(", ")
                ),
                Functionality::Homing => format!(
                    "no home states have arrived on {} (a Gazebo bridge publishes none).",
                    self.topics.home_states
                ),
                _ if self.state.joint_count().is_none() => {
                    format!("nothing has arrived yet on {}.", self.topics.joint_states)
                }
                _ => format!(
                    "the latest state on {} has no {what}.",
                    self.topics.joint_states
                ),
            }
        };
        Error::not_available(format!(
            "{}::RobotDriverInterface::{getter}()::trying to get {what} but uninitialized: \
             {reason}",
            self.prefix
        ))
    }

    /// The latest joint state if `needs` is enabled (or, with `None`, once any state arrived).
    fn read(
        &self,
        getter: &str,
        what: &str,
        needs: Option<Functionality>,
    ) -> Result<JointStateRead> {
        if self.state.is_closed() {
            return Err(self.closed_error(getter));
        }
        let enabled = match needs {
            Some(functionality) => self.is_enabled(functionality)?,
            None => true,
        };
        let read = enabled.then(|| self.state.read()).flatten();
        read.ok_or_else(|| {
            self.uninitialized(
                getter,
                what,
                needs.unwrap_or(Functionality::VelocityControl),
            )
        })
    }

    fn blacklisted(&self, operation: &str, flag: &str) -> Error {
        Error::not_available(format!(
            "RobotDriverClient::{operation}::This method is blacklisted ({flag} is in \
             blacklisted_modes of the client on {}).",
            self.prefix
        ))
    }

    /// Checks a vector to send: one value per joint (once the joint count is known) and,
    /// for floats, finite.
    fn check_length(&self, operation: &str, length: usize) -> Result<()> {
        match self.state.joint_count() {
            Some(joints) if joints != length => Err(Error::invalid_argument(format!(
                "RobotDriverClient({})::{operation}: expected {joints} values (one per joint), \
                 got {length}; nothing was sent.",
                self.prefix
            ))),
            Some(_) => Ok(()),
            None if self.blacklist.joint_monitoring => Ok(()),
            None => Err(Error::not_available(format!(
                "RobotDriverClient({})::{operation}: the robot's joint count is unknown until \
                 a state arrives on {}; nothing was sent.",
                self.prefix, self.topics.joint_states
            ))),
        }
    }

    fn check_finite(&self, operation: &str, values: &[f64]) -> Result<()> {
        match values.iter().position(|value| !value.is_finite()) {
            Some(index) => Err(Error::invalid_argument(format!(
                "RobotDriverClient({})::{operation}: value {index} is {}; every value must be \
                 finite. Nothing was sent.",
                self.prefix, values[index]
            ))),
            None => Ok(()),
        }
    }
}

/// The joint-control publishers, which exist unless JOINT_CONTROL is blacklisted (checked
/// before).
fn joint_control(ros: &ClientRos) -> &JointControl {
    ros.publishers
        .joint_control
        .as_ref()
        .expect("checked: JOINT_CONTROL is not blacklisted")
}

/// Publishes `message` on `publisher`, naming `topic` if it fails.
fn publish<T: rosidl_runtime_rs::Message>(
    publisher: &Publisher<T>,
    message: &T,
    operation: &str,
    topic: &str,
) -> Result<()> {
    publisher.publish(message).map_err(|source| {
        Error::not_available(format!(
            "RobotDriverClient::{operation}: cannot publish on {topic}: {source}"
        ))
    })
}

/// The controller's side of a robot driver: reads `<topic_prefix>/get/joint_states`, the joint
/// limits and home states, sends targets, watchdog triggers and the shutdown signal — the
/// original `sas::RobotDriverClient`'s topics and semantics, on a node of its own whose
/// subscriptions run on a Rust thread. Getters return the latest state; Python is woken only
/// by the calls it makes.
#[pyclass(module = "sas_robot_driver_gazebo", name = "RobotDriverClient", frozen)]
pub(crate) struct RobotDriverClient {
    core: DropReleased<Arc<ClientCore>>,
}

#[pymethods]
impl RobotDriverClient {
    #[new]
    #[pyo3(signature = (
        node_name,
        topic_prefix = GET_FROM_NODE.to_string(),
        blacklisted_modes = Vec::new(),
        *,
        args = None,
        domain_id = None,
    ))]
    fn new(
        py: Python<'_>,
        node_name: String,
        topic_prefix: String,
        blacklisted_modes: Vec<ModeBlacklistFlag>,
        args: Option<Vec<String>>,
        domain_id: Option<usize>,
    ) -> Result<Self> {
        let args = match args {
            Some(args) => args,
            None => py.import("sys")?.getattr("argv")?.extract()?,
        };
        let blacklist = Blacklist {
            joint_control: blacklisted_modes.contains(&ModeBlacklistFlag::JOINT_CONTROL),
            joint_monitoring: blacklisted_modes.contains(&ModeBlacklistFlag::JOINT_MONITORING),
            watchdog_control: blacklisted_modes.contains(&ModeBlacklistFlag::WATCHDOG_CONTROL),
        };
        let core = released(py, move || {
            let state = Arc::new(ClientState::new());
            let ros = ClientRos::new(
                args,
                domain_id,
                &node_name,
                &topic_prefix,
                blacklist,
                &state,
            )?;
            let core = Arc::new(ClientCore {
                prefix: ros.prefix.clone(),
                node_name: ros.node.fully_qualified_name(),
                topics: ros.topics.clone(),
                blacklist,
                state,
                ros: Mutex::new(Some(ros)),
                waiting_threads: AtomicUsize::new(0),
            });
            let mut live = live_clients();
            live.retain(|client| client.strong_count() > 0);
            live.push(Arc::downgrade(&core));
            Ok::<_, Error>(core)
        })?;
        Ok(RobotDriverClient {
            core: DropReleased::new(core),
        })
    }

    /// The topic prefix (`topic_prefix`, or the node's name for "GET_FROM_NODE").
    fn get_topic_prefix(&self) -> String {
        self.core.prefix.clone()
    }

    /// The client node's fully qualified name, e.g. "/controller".
    #[getter]
    fn node_name(&self) -> String {
        self.core.node_name.clone()
    }

    /// Whether `supported_functionality` can be used: PositionControl once joint states and
    /// both limits arrived; VelocityControl / ForceControl while the latest state has
    /// velocities / efforts; Homing once home states arrived.
    #[pyo3(signature = (supported_functionality = Functionality::PositionControl))]
    fn is_enabled(&self, supported_functionality: Functionality) -> Result<bool> {
        let core = &self.core;
        if core.state.is_closed() {
            return Ok(false);
        }
        core.is_enabled(supported_functionality)
    }

    /// The latest joint positions, float64, one per joint.
    fn get_joint_positions<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        self.joint_values(py, JointValues::Positions)
    }

    /// The latest joint velocities, float64, one per joint.
    fn get_joint_velocities<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        self.joint_values(py, JointValues::Velocities)
    }

    /// The latest joint forces (efforts), float64, one per joint.
    fn get_joint_forces<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<f64>>> {
        self.joint_values(py, JointValues::Efforts)
    }

    /// `(lower, upper)` joint limits as last received.
    #[allow(clippy::type_complexity)]
    fn get_joint_limits<'py>(
        &self,
        py: Python<'py>,
    ) -> Result<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let core = &self.core;
        let uninitialized = || {
            core.uninitialized(
                "get_joint_limits",
                "joint limits",
                Functionality::PositionControl,
            )
        };
        if core.state.is_closed() {
            return Err(core.closed_error("get_joint_limits"));
        }
        if !core.is_enabled(Functionality::PositionControl)? {
            return Err(uninitialized());
        }
        match core.state.limits() {
            (Some(lower), Some(upper)) => Ok((f64_array(py, &lower), f64_array(py, &upper))),
            _ => Err(uninitialized()),
        }
    }

    /// The home states as last received, int32.
    fn get_home_states<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<i32>>> {
        let core = &self.core;
        if core.state.is_closed() {
            return Err(core.closed_error("get_home_states"));
        }
        let home = core.state.home_states().filter(|home| !home.is_empty());
        match home {
            Some(home) => Ok(PyArray1::from_slice(py, &home)),
            None => {
                Err(core.uninitialized("get_home_states", "home states", Functionality::Homing))
            }
        }
    }

    /// The latest joint state in one consistent read: positions, velocities and efforts
    /// (empty if the state had none), its header stamp in nanoseconds, its age in seconds
    /// and its sequence number (joint states received so far). Needs no limits.
    fn snapshot<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let state = self.core.read("snapshot", "the joint state", None)?;
        let dict = PyDict::new(py);
        dict.set_item("positions", f64_array(py, &state.positions))?;
        dict.set_item("velocities", f64_array(py, &state.velocities))?;
        dict.set_item("efforts", f64_array(py, &state.efforts))?;
        dict.set_item("stamp_ns", state.stamp_ns)?;
        dict.set_item("age_sec", state.received_at.elapsed().as_secs_f64())?;
        dict.set_item("sequence", state.sequence)?;
        Ok(dict)
    }

    /// Seconds since the latest joint state arrived: how stale what the getters return is.
    fn get_state_age(&self) -> Result<f64> {
        let state = self.core.read("get_state_age", "the state's age", None)?;
        Ok(state.received_at.elapsed().as_secs_f64())
    }

    /// Waits, with the GIL released, for a joint state newer than the newest one this
    /// client's getters or waits returned; returns at once if one already arrived. Returns
    /// its sequence number.
    #[pyo3(signature = (timeout = None))]
    fn wait_for_new_state(&self, py: Python<'_>, timeout: Option<f64>) -> Result<u64> {
        let core = &self.core;
        core.check_open("wait_for_new_state")?;
        if core.blacklist.joint_monitoring {
            return Err(core.blacklisted("wait_for_new_state", "JOINT_MONITORING"));
        }
        let timeout = timeout
            .map(|seconds| {
                Duration::try_from_secs_f64(seconds).map_err(|_| {
                    Error::invalid_argument(format!(
                        "RobotDriverClient({})::wait_for_new_state: timeout must be a \
                         non-negative number of seconds or None, got {seconds}.",
                        core.prefix
                    ))
                })
            })
            .transpose()?;
        let start = Instant::now();
        // A state already there is taken without handing the GIL over and back.
        if let Some(sequence) = core.state.wait_for_new_state(start) {
            return Ok(sequence);
        }
        let deadline = timeout.and_then(|timeout| start.checked_add(timeout));
        core.waiting_threads.fetch_add(1, Ordering::SeqCst);
        let outcome = (|| loop {
            let slice_end = Instant::now() + SIGNAL_CHECK_INTERVAL;
            let until = deadline.map_or(slice_end, |deadline| deadline.min(slice_end));
            if let Some(sequence) = released(py, || core.state.wait_for_new_state(until)) {
                return Ok(sequence);
            }
            if core.state.is_closed() {
                return Err(core.closed_error("wait_for_new_state"));
            }
            if let (Some(timeout), Some(deadline)) = (timeout, deadline) {
                if Instant::now() >= deadline {
                    return Err(self.timed_out(timeout));
                }
            }
            py.check_signals()?;
        })();
        core.waiting_threads.fetch_sub(1, Ordering::SeqCst);
        outcome
    }

    /// Sends target joint positions on `<prefix>/set/target_joint_positions`.
    fn send_target_joint_positions(&self, target_joint_positions: &Bound<'_, PyAny>) -> Result<()> {
        self.send_floats(Command::Positions, target_joint_positions)
    }

    /// Sends target joint velocities on `<prefix>/set/target_joint_velocities`.
    fn send_target_joint_velocities(
        &self,
        target_joint_velocities: &Bound<'_, PyAny>,
    ) -> Result<()> {
        self.send_floats(Command::Velocities, target_joint_velocities)
    }

    /// Sends target joint forces on `<prefix>/set/target_joint_forces`.
    fn send_target_joint_forces(&self, target_joint_forces: &Bound<'_, PyAny>) -> Result<()> {
        self.send_floats(Command::Forces, target_joint_forces)
    }

    /// Sends a homing signal (one int per joint) on `<prefix>/set/homing_signal`.
    fn send_homing_signal(&self, py: Python<'_>, homing_signal: Vec<i32>) -> Result<()> {
        self.send_ints(py, IntSignal::Homing, homing_signal)
    }

    /// Sends a clear-positions signal (one int per joint) on `<prefix>/set/clear_positions`.
    fn send_clear_positions_signal(
        &self,
        py: Python<'_>,
        clear_positions_signal: Vec<i32>,
    ) -> Result<()> {
        self.send_ints(py, IntSignal::ClearPositions, clear_positions_signal)
    }

    /// Sends a watchdog trigger on `<prefix>/set/watchdog_trigger`, stamped with the system
    /// clock: the first arms the server's watchdog, which then expects the next within
    /// `period` seconds; `max_delay` bounds how far the stamp may lag the server's clock;
    /// `status=False` faults it deliberately.
    #[pyo3(signature = (status, period = 1.0, max_delay = 0.5))]
    fn send_watchdog_trigger(
        &self,
        py: Python<'_>,
        status: bool,
        period: f64,
        max_delay: f64,
    ) -> Result<()> {
        let core = &self.core;
        let operation = "send_watchdog_trigger";
        core.check_open(operation)?;
        if core.blacklist.watchdog_control {
            return Err(core.blacklisted(operation, "WATCHDOG_CONTROL"));
        }
        let valid = period.is_finite() && period > 0.0 && max_delay.is_finite() && max_delay >= 0.0;
        if !valid {
            return Err(Error::invalid_argument(format!(
                "RobotDriverClient({})::{operation}: period must be a positive and max_delay a \
                 non-negative number of seconds, got period={period}, max_delay={max_delay}; \
                 nothing was sent.",
                core.prefix
            )));
        }
        let topic = &core.topics.watchdog_trigger;
        core.with_ros(py, operation, |ros| {
            let publisher = ros
                .publishers
                .watchdog_trigger
                .as_ref()
                .expect("checked: WATCHDOG_CONTROL is not blacklisted");
            publish(
                publisher,
                &watchdog_message(status, period, max_delay),
                operation,
                topic,
            )
        })
    }

    /// Sends `data: true` on `<prefix>/set/shutdown`: the server's loop stops.
    fn send_shutdown(&self, py: Python<'_>) -> Result<()> {
        let core = &self.core;
        let topic = &core.topics.shutdown;
        core.with_ros(py, "send_shutdown", |ros| {
            publish(
                &ros.publishers.shutdown,
                &shutdown_message(),
                "send_shutdown",
                topic,
            )
        })
    }

    /// Stops the client's thread and removes its node and topics; getters and senders raise
    /// RuntimeError afterwards, a waiting `wait_for_new_state` returns with it. Idempotent;
    /// also done when the client is garbage-collected and at interpreter exit.
    fn close(&self, py: Python<'_>) {
        released(py, || self.core.close());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let core = &self.core;
        let status = if core.state.is_closed() {
            "closed".to_string()
        } else {
            format!(
                "enabled={}",
                core.is_enabled(Functionality::PositionControl)
                    .unwrap_or(false)
            )
        };
        format!(
            "RobotDriverClient(node={:?}, topic_prefix={:?}, {status})",
            core.node_name, core.prefix
        )
    }
}

/// The per-joint values of a state a getter returns.
#[derive(Clone, Copy)]
enum JointValues {
    Positions,
    Velocities,
    Efforts,
}

impl JointValues {
    /// The getter, what it reads (for its errors) and what must be enabled for it.
    fn getter(self) -> (&'static str, &'static str, Functionality) {
        match self {
            JointValues::Positions => (
                "get_joint_positions",
                "joint positions",
                Functionality::PositionControl,
            ),
            JointValues::Velocities => (
                "get_joint_velocities",
                "joint velocities",
                Functionality::VelocityControl,
            ),
            JointValues::Efforts => (
                "get_joint_efforts",
                "joint efforts",
                Functionality::ForceControl,
            ),
        }
    }

    fn of(self, state: &JointStateRead) -> &[f64] {
        match self {
            JointValues::Positions => &state.positions,
            JointValues::Velocities => &state.velocities,
            JointValues::Efforts => &state.efforts,
        }
    }
}

/// The Python method that sends a target of `command`.
fn send_operation(command: Command) -> &'static str {
    match command {
        Command::Positions => "send_target_joint_positions",
        Command::Velocities => "send_target_joint_velocities",
        Command::Forces => "send_target_joint_forces",
    }
}

/// The int vectors a client sends.
#[derive(Clone, Copy)]
enum IntSignal {
    Homing,
    ClearPositions,
}

impl IntSignal {
    fn operation(self) -> &'static str {
        match self {
            IntSignal::Homing => "send_homing_signal",
            IntSignal::ClearPositions => "send_clear_positions_signal",
        }
    }

    fn topic(self, topics: &Topics) -> &str {
        match self {
            IntSignal::Homing => &topics.homing_signal,
            IntSignal::ClearPositions => &topics.clear_positions,
        }
    }

    fn publisher(self, control: &JointControl) -> &Publisher<Int32MultiArray> {
        match self {
            IntSignal::Homing => &control.homing_signal,
            IntSignal::ClearPositions => &control.clear_positions,
        }
    }
}

impl RobotDriverClient {
    /// The latest state's `values`, if what they need is enabled.
    fn joint_values<'py>(
        &self,
        py: Python<'py>,
        values: JointValues,
    ) -> Result<Bound<'py, PyArray1<f64>>> {
        let (getter, what, needs) = values.getter();
        let state = self.core.read(getter, what, Some(needs))?;
        Ok(f64_array(py, values.of(&state)))
    }

    fn send_floats(&self, command: Command, values: &Bound<'_, PyAny>) -> Result<()> {
        let py = values.py();
        let core = &self.core;
        let operation = send_operation(command);
        core.check_open(operation)?;
        if core.blacklist.joint_control {
            return Err(core.blacklisted(operation, "JOINT_CONTROL"));
        }
        let values = f64_vector(values, &format!("RobotDriverClient::{operation}"))?;
        core.check_length(operation, values.len())?;
        core.check_finite(operation, &values)?;
        core.with_ros(py, operation, |ros| {
            publish(
                joint_control(ros).targets.of(command),
                &multi_array(&values),
                operation,
                core.topics.target(command),
            )
        })
    }

    fn send_ints(&self, py: Python<'_>, signal: IntSignal, values: Vec<i32>) -> Result<()> {
        let core = &self.core;
        let operation = signal.operation();
        core.check_open(operation)?;
        if core.blacklist.joint_control {
            return Err(core.blacklisted(operation, "JOINT_CONTROL"));
        }
        core.check_length(operation, values.len())?;
        core.with_ros(py, operation, |ros| {
            publish(
                signal.publisher(joint_control(ros)),
                &i32_message(&values),
                operation,
                signal.topic(&core.topics),
            )
        })
    }

    /// The error of a wait that timed out after `timeout` (the one asked for: a loaded machine
    /// wakes the waiter a little later, which says nothing about the bridge).
    fn timed_out(&self, timeout: Duration) -> Error {
        let core = &self.core;
        let received = core.state.sequence();
        let news = match core.state.read() {
            Some(latest) if received > 0 => format!(
                "{received} received so far, the latest {:.3} s ago: the bridge or its \
                 simulator has stopped publishing",
                latest.received_at.elapsed().as_secs_f64()
            ),
            _ => format!(
                "none at all since the client started: is a bridge serving {} in this ROS \
                 domain?",
                core.prefix
            ),
        };
        let mut message = format!(
            "RobotDriverClient({})::wait_for_new_state: no new joint state on {} within {:.3} \
             s ({news}).",
            core.prefix,
            core.topics.joint_states,
            timeout.as_secs_f64()
        );
        let missing: Vec<String> = core
            .state
            .missing(&core.topics)
            .into_iter()
            .filter(|topic| *topic != core.topics.joint_states)
            .collect();
        if !missing.is_empty() {
            message.push_str(&format!(
                " Nothing has arrived on {} either.",
                missing.join(", ")
            ));
        }
        Error::timed_out(message)
    }
}

/// Closes every client still alive (registered with `atexit` by the module): their threads
/// end before the interpreter finalizes. Threads waiting in `wait_for_new_state` are woken
/// and given up to a second to return (they raise RuntimeError, the client being closed).
#[pyfunction]
pub(crate) fn _close_all_clients(py: Python<'_>) {
    let clients: Vec<Arc<ClientCore>> = live_clients()
        .drain(..)
        .filter_map(|client| client.upgrade())
        .collect();
    released(py, || {
        for client in &clients {
            client.close();
        }
        let deadline = Instant::now() + EXIT_WAIT;
        while clients
            .iter()
            .any(|client| client.waiting_threads.load(Ordering::SeqCst) > 0)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
