//! `RobotDriverGazeboConfiguration`: the original's three fields plus our options, the core
//! configuration's fields, so there is one set of rules (the core's, checked when a driver is
//! built from `to_core()`).

use std::time::Duration;

use gz_transport::MsgsPrefix;
use pyo3::prelude::*;
use sas_robot_driver_gazebo::{
    duration_from_secs, ForwardMode, LimitPolicy, RobotDriverGazeboConfiguration as Core,
    DEFAULT_COMMAND_TIMEOUT,
};

use crate::errors::{Error, Result};

/// The configuration of a `RobotDriverGazebo`. Every field can be given to the constructor
/// or set afterwards, as with the original's `RobotDriverGazeboConfiguration()`; the driver
/// checks the whole configuration when it is built.
#[pyclass(
    module = "sas_robot_driver_gazebo",
    name = "RobotDriverGazeboConfiguration",
    eq
)]
// The core's fields, one by one: those Python sets as they are are plain properties; the
// others (a name to parse, a number of seconds to check) have a getter and a setter below.
// `to_core` and `From<Core>` name every field, so a field the core gains does not compile
// until it is given to Python here.
#[derive(Clone, PartialEq)]
pub(crate) struct Configuration {
    /// Joints, in the order of every array the driver takes or returns.
    #[pyo3(get, set)]
    joint_names: Vec<String>,
    /// Command topic prefix: joint `j` is commanded on `prefix + j + "/0/cmd_pos"`.
    #[pyo3(get, set)]
    joint_positions_topic_prefix: String,
    /// The JointStatePublisher's `Model` topic, used verbatim.
    #[pyo3(get, set)]
    joint_states_topic: String,
    msgs_prefix: MsgsPrefix,
    /// gz-transport partition; None takes GZ_PARTITION / IGN_PARTITION.
    #[pyo3(get, set)]
    partition: Option<String>,
    limit_policy: LimitPolicy,
    initialize_timeout: Option<Duration>,
    forward_mode: ForwardMode,
    /// Velocity topics' prefix: joint `j` takes velocity targets on `<prefix><j>/cmd_vel`;
    /// None: `joint_positions_topic_prefix`.
    #[pyo3(get, set)]
    joint_velocities_topic_prefix: Option<String>,
    /// Effort topics' prefix: joint `j` takes effort targets on `<prefix><j>/cmd_force`;
    /// None: `joint_positions_topic_prefix`.
    #[pyo3(get, set)]
    joint_forces_topic_prefix: Option<String>,
    /// Per joint, the largest velocity a target may ask for (±; the SDF's
    /// `<limit><velocity>`); empty: not checked (Gazebo does not send them).
    #[pyo3(get, set)]
    velocity_limits: Vec<f64>,
    /// Per joint, the largest effort a target may ask for (±; the SDF's `<limit><effort>`);
    /// empty: not checked.
    #[pyo3(get, set)]
    effort_limits: Vec<f64>,
    command_timeout: Duration,
}

impl From<Core> for Configuration {
    fn from(core: Core) -> Self {
        Configuration {
            joint_names: core.joint_names,
            joint_positions_topic_prefix: core.joint_positions_topic_prefix,
            joint_states_topic: core.joint_states_topic,
            msgs_prefix: core.msgs_prefix,
            partition: core.partition,
            limit_policy: core.limit_policy,
            initialize_timeout: core.initialize_timeout,
            forward_mode: core.forward_mode,
            joint_velocities_topic_prefix: core.joint_velocities_topic_prefix,
            joint_forces_topic_prefix: core.joint_forces_topic_prefix,
            velocity_limits: core.velocity_limits,
            effort_limits: core.effort_limits,
            command_timeout: core.command_timeout,
        }
    }
}

impl Configuration {
    /// The core's configuration, which a driver is built from (and checks).
    pub(crate) fn to_core(&self) -> Core {
        Core {
            joint_names: self.joint_names.clone(),
            joint_positions_topic_prefix: self.joint_positions_topic_prefix.clone(),
            joint_states_topic: self.joint_states_topic.clone(),
            msgs_prefix: self.msgs_prefix,
            partition: self.partition.clone(),
            limit_policy: self.limit_policy,
            initialize_timeout: self.initialize_timeout,
            forward_mode: self.forward_mode,
            joint_velocities_topic_prefix: self.joint_velocities_topic_prefix.clone(),
            joint_forces_topic_prefix: self.joint_forces_topic_prefix.clone(),
            velocity_limits: self.velocity_limits.clone(),
            effort_limits: self.effort_limits.clone(),
            command_timeout: self.command_timeout,
        }
    }
}

const CLAMP: &str = "clamp";
const REFUSE: &str = "refuse";

/// `seconds` checked as every time field of the module is: finite, not negative, at most
/// [`LONGEST_DURATION`](sas_robot_driver_gazebo::LONGEST_DURATION) (a deadline past what the
/// clock holds would panic later). `what` is the caller's message for a bad value, naming
/// the field; the rule broken follows it.
pub(crate) fn checked_seconds(seconds: f64, what: impl Fn() -> String) -> Result<Duration> {
    duration_from_secs(seconds)
        .map_err(|problem| Error::invalid_argument(format!("{} ({problem})", what())))
}

fn positive_seconds(field: &str, seconds: Option<f64>) -> Result<Option<Duration>> {
    seconds
        .map(|seconds| {
            let what = || {
                format!(
                    "RobotDriverGazeboConfiguration: {field} must be a positive number of \
                     seconds or None, got {seconds}."
                )
            };
            let duration = checked_seconds(seconds, what)?;
            if duration.is_zero() {
                return Err(Error::invalid_argument(what()));
            }
            Ok(duration)
        })
        .transpose()
}

#[pymethods]
impl Configuration {
    #[new]
    #[pyo3(signature = (
        joint_names = Vec::new(),
        joint_positions_topic_prefix = String::new(),
        joint_states_topic = String::new(),
        *,
        msgs_prefix = "gz.msgs.",
        partition = None,
        limit_policy = CLAMP,
        initialize_timeout_sec = None,
        forward_keepalive_sec = None,
        joint_velocities_topic_prefix = None,
        joint_forces_topic_prefix = None,
        velocity_limits = Vec::new(),
        effort_limits = Vec::new(),
        command_timeout_sec = DEFAULT_COMMAND_TIMEOUT.as_secs_f64(),
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        joint_names: Vec<String>,
        joint_positions_topic_prefix: String,
        joint_states_topic: String,
        msgs_prefix: &str,
        partition: Option<String>,
        limit_policy: &str,
        initialize_timeout_sec: Option<f64>,
        forward_keepalive_sec: Option<f64>,
        joint_velocities_topic_prefix: Option<String>,
        joint_forces_topic_prefix: Option<String>,
        velocity_limits: Vec<f64>,
        effort_limits: Vec<f64>,
        command_timeout_sec: f64,
    ) -> Result<Self> {
        let mut configuration = Configuration {
            partition,
            joint_velocities_topic_prefix,
            joint_forces_topic_prefix,
            velocity_limits,
            effort_limits,
            ..Core::new(
                joint_names,
                joint_positions_topic_prefix,
                joint_states_topic,
            )
            .into()
        };
        configuration.set_msgs_prefix(msgs_prefix)?;
        configuration.set_limit_policy(limit_policy)?;
        configuration.set_initialize_timeout_sec(initialize_timeout_sec)?;
        configuration.set_forward_keepalive_sec(forward_keepalive_sec)?;
        configuration.set_command_timeout_sec(command_timeout_sec)?;
        Ok(configuration)
    }

    /// Message type prefix of the Gazebo talked to: "gz.msgs." or "ignition.msgs.".
    #[getter]
    fn msgs_prefix(&self) -> &'static str {
        self.msgs_prefix.as_str()
    }

    #[setter]
    fn set_msgs_prefix(&mut self, prefix: &str) -> Result<()> {
        self.msgs_prefix = prefix.parse().map_err(|_| {
            Error::invalid_argument(format!(
                "RobotDriverGazeboConfiguration: msgs_prefix must be {:?} or {:?}, got {prefix:?}.",
                MsgsPrefix::Gz.as_str(),
                MsgsPrefix::Ignition.as_str()
            ))
        })?;
        Ok(())
    }

    /// "clamp" (store out-of-limit targets clamped, with a warning) or "refuse" (raise
    /// ValueError, the previous target stays in force).
    #[getter]
    fn limit_policy(&self) -> &'static str {
        match self.limit_policy {
            LimitPolicy::Clamp => CLAMP,
            LimitPolicy::Refuse => REFUSE,
        }
    }

    #[setter]
    fn set_limit_policy(&mut self, policy: &str) -> Result<()> {
        self.limit_policy = match policy {
            CLAMP => LimitPolicy::Clamp,
            REFUSE => LimitPolicy::Refuse,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "RobotDriverGazeboConfiguration: limit_policy must be {CLAMP:?} or \
                     {REFUSE:?}, got {policy:?}."
                )))
            }
        };
        Ok(())
    }

    /// Seconds `initialize()` waits for every joint before raising TimeoutError; None waits
    /// until cancelled, as the original did.
    #[getter]
    fn initialize_timeout_sec(&self) -> Option<f64> {
        self.initialize_timeout.map(|t| t.as_secs_f64())
    }

    #[setter]
    fn set_initialize_timeout_sec(&mut self, seconds: Option<f64>) -> Result<()> {
        self.initialize_timeout = positive_seconds("initialize_timeout_sec", seconds)?;
        Ok(())
    }

    /// None: the control loop re-sends the target every period, as the original did. A
    /// number: it sends only a changed target, and re-sends an unchanged one after this many
    /// seconds.
    #[getter]
    fn forward_keepalive_sec(&self) -> Option<f64> {
        match self.forward_mode {
            ForwardMode::EveryPeriod => None,
            ForwardMode::OnChangeWithKeepalive(keepalive) => Some(keepalive.as_secs_f64()),
            // Never re-sent (not settable from Python, but a Rust caller may have set it).
            ForwardMode::OnChange => Some(f64::INFINITY),
        }
    }

    #[setter]
    fn set_forward_keepalive_sec(&mut self, seconds: Option<f64>) -> Result<()> {
        self.forward_mode = positive_seconds("forward_keepalive_sec", seconds)?
            .map_or(ForwardMode::EveryPeriod, ForwardMode::OnChangeWithKeepalive);
        Ok(())
    }

    /// Seconds a velocity or effort target stays in force without a new one; then zero is
    /// sent (default 0.1).
    #[getter]
    fn command_timeout_sec(&self) -> f64 {
        self.command_timeout.as_secs_f64()
    }

    #[setter]
    fn set_command_timeout_sec(&mut self, seconds: f64) -> Result<()> {
        self.command_timeout =
            positive_seconds("command_timeout_sec", Some(seconds))?.expect("a value was given");
        Ok(())
    }

    fn __repr__(&self) -> String {
        let text =
            |value: &Option<String>| value.as_ref().map_or("None".into(), |v| format!("{v:?}"));
        let seconds = |value: Option<f64>| value.map_or("None".into(), |v| v.to_string());
        format!(
            "RobotDriverGazeboConfiguration(joint_names={:?}, joint_positions_topic_prefix={:?}, \
             joint_states_topic={:?}, msgs_prefix={:?}, partition={}, limit_policy={:?}, \
             initialize_timeout_sec={}, forward_keepalive_sec={})",
            self.joint_names,
            self.joint_positions_topic_prefix,
            self.joint_states_topic,
            self.msgs_prefix(),
            text(&self.partition),
            self.limit_policy(),
            seconds(self.initialize_timeout_sec()),
            seconds(self.forward_keepalive_sec()),
        )
    }
}
