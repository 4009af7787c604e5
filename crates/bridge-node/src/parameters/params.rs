//! The node's parameters: the original's five (`joint_names`, `joint_positions_topic_prefix`,
//! `joint_states_topic`, `robot_name`, `thread_sampling_time_sec`) and ours, each with a
//! default that keeps the original's behaviour; the same under a group prefix for each robot
//! of a multi-robot node (`r820_sim.joint_names`, …). Every problem is reported naming the
//! parameter, what it must be and what it is.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use gz_transport::MsgsPrefix;
use rclrs::{DeclarationError, Node, ParameterValue, ParameterVariant};
use sas_robot_driver_gazebo::{
    duration_from_secs, DriverError, LimitPolicy, RobotDriverGazeboConfiguration,
    DEFAULT_COMMAND_TIMEOUT,
};

use crate::error::ParameterError;
use crate::parameters::config::DEFAULT_HEARTBEAT;
use crate::RobotDriverRosConfiguration;

/// `thread_sampling_time_sec` when the parameter is not set (500 Hz), as the original's
/// `get_ros_optional_parameter(…, 0.002)` meant it.
pub const DEFAULT_THREAD_SAMPLING_TIME_SEC: f64 = 0.002;

/// The original's spelling of an empty list in a params file (sas_common): `["EMPTY_LIST"]`.
const EMPTY_LIST: &str = "EMPTY_LIST";

/// Parameters declared on a node, kept declared (read-only, visible to `ros2 param`) for as
/// long as this lives.
#[derive(Default)]
pub struct DeclaredParameters(Vec<Box<dyn Any + Send + Sync>>);

impl DeclaredParameters {
    /// Keeps `other`'s declarations too.
    pub(crate) fn extend(&mut self, other: DeclaredParameters) {
        self.0.extend(other.0);
    }
}

impl std::fmt::Debug for DeclaredParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeclaredParameters({})", self.0.len())
    }
}

/// Declares read-only parameters on a node, one by one, and reports every problem naming the
/// parameter: missing, of another type (saying what was given), or invalid. Parameters can
/// live in a group: `ParameterReader::group(node, "r820_sim")` reads `r820_sim.joint_names`
/// (in a params file, `joint_names` nested under `r820_sim:`).
///
/// Without a node ([`for_help`](Self::for_help)) it declares nothing and records each
/// parameter with its type, default and description instead: the node's `--help` table is
/// made by the very declarations that read the parameters, so the two cannot drift apart.
pub struct ParameterReader<'a> {
    node: Option<&'a Node>,
    prefix: String,
    declared: DeclaredParameters,
    rows: Vec<HelpRow>,
}

/// One parameter as `--help` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct HelpRow {
    /// The parameter's name.
    pub name: String,
    /// Its ROS type: `string`, `double`, `int`, `bool`, `string[]`, `double[]`.
    pub kind: &'static str,
    /// Its default as `--help` prints it; `None` for a mandatory parameter.
    pub default: Option<String>,
    /// What it does.
    pub description: &'static str,
}

impl<'a> ParameterReader<'a> {
    /// Reads the node's own (ungrouped) parameters.
    pub fn new(node: &'a Node) -> Self {
        ParameterReader {
            node: Some(node),
            prefix: String::new(),
            declared: DeclaredParameters::default(),
            rows: Vec::new(),
        }
    }

    /// Reads the parameters of group `group` (`<group>.<name>`).
    pub fn group(node: &'a Node, group: &str) -> Self {
        ParameterReader {
            node: Some(node),
            prefix: format!("{group}."),
            declared: DeclaredParameters::default(),
            rows: Vec::new(),
        }
    }

    /// A reader that declares nothing: every parameter takes its default (a mandatory one
    /// its type's empty value) and is recorded for [`help_rows`](Self::help_rows).
    pub fn for_help() -> ParameterReader<'static> {
        ParameterReader {
            node: None,
            prefix: String::new(),
            declared: DeclaredParameters::default(),
            rows: Vec::new(),
        }
    }

    /// The parameters a [`for_help`](Self::for_help) reader was asked for, in order.
    pub fn help_rows(&self) -> &[HelpRow] {
        &self.rows
    }

    /// True for a [`for_help`](Self::for_help) reader: a caller that declares a parameter
    /// only under a condition declares it anyway, so that `--help` lists it.
    pub fn is_for_help(&self) -> bool {
        self.node.is_none()
    }

    /// The full name of parameter `name` of this reader's group.
    pub fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// An [`ParameterError::Invalid`] for parameter `name` of this reader's group.
    pub fn invalid(&self, name: &str, problem: String) -> ParameterError {
        ParameterError::Invalid {
            name: self.name(name),
            problem,
        }
    }

    /// Declares a parameter that must be given.
    ///
    /// # Errors
    /// It is missing, or has another type.
    pub fn mandatory<T: ParameterVariant + Send + Sync + Default>(
        &mut self,
        name: &str,
        expected: &'static str,
        description: &'static str,
    ) -> Result<T, ParameterError> {
        self.declare(name, expected, description, None)
    }

    /// Declares a parameter that takes `default` when not given.
    ///
    /// # Errors
    /// It has another type.
    pub fn optional<T: ParameterVariant + Send + Sync + Default>(
        &mut self,
        name: &str,
        expected: &'static str,
        description: &'static str,
        default: T,
    ) -> Result<T, ParameterError> {
        self.declare(name, expected, description, Some(default))
    }

    /// The declarations made, to keep alive.
    pub fn into_declared(self) -> DeclaredParameters {
        self.declared
    }

    fn declare<T: ParameterVariant + Send + Sync + Default>(
        &mut self,
        name: &str,
        expected: &'static str,
        description: &'static str,
        default: Option<T>,
    ) -> Result<T, ParameterError> {
        let name = self.name(name);
        let Some(node) = self.node else {
            let value = default.clone().unwrap_or_default();
            self.rows.push(HelpRow {
                name,
                kind: kind_name(&value.clone().into()),
                default: default.map(|default| help_value(&default.into())),
                description,
            });
            return Ok(value);
        };
        let mut builder = node
            .declare_parameter::<T>(name.as_str())
            .description(description);
        if let Some(default) = default {
            builder = builder.default(default);
        }
        match builder.read_only() {
            Ok(parameter) => {
                let value = parameter.get();
                self.declared.0.push(Box::new(parameter));
                Ok(value)
            }
            Err(DeclarationError::NoValueAvailable) => Err(ParameterError::Missing {
                name,
                expected,
                node: node.fully_qualified_name(),
            }),
            Err(DeclarationError::OverrideValueTypeMismatch) => Err(ParameterError::WrongType {
                given: describe_override(node, &name),
                name,
                expected,
            }),
            Err(source) => Err(ParameterError::Declaration { name, source }),
        }
    }
}

/// What was given for `name`, read through a short-lived dynamically typed declaration.
fn describe_override(node: &Node, name: &str) -> String {
    match node
        .declare_parameter::<ParameterValue>(name)
        .optional()
        .map(|parameter| parameter.get())
    {
        Ok(Some(value)) => describe(&value),
        _ => "of another type".into(),
    }
}

/// The ROS type name of `value`, as `--help` prints it.
fn kind_name(value: &ParameterValue) -> &'static str {
    match value {
        ParameterValue::Bool(_) => "bool",
        ParameterValue::Integer(_) => "int",
        ParameterValue::Double(_) => "double",
        ParameterValue::String(_) => "string",
        ParameterValue::ByteArray(_) => "byte[]",
        ParameterValue::BoolArray(_) => "bool[]",
        ParameterValue::IntegerArray(_) => "int[]",
        ParameterValue::DoubleArray(_) => "double[]",
        ParameterValue::StringArray(_) => "string[]",
    }
}

/// `value` as `--help` prints a default: a double always with its point (`1.0`, as a params
/// file must write it), an empty string as `""`, an array as `[a, b]`.
pub fn help_value(value: &ParameterValue) -> String {
    fn list<T>(values: &[T], item: impl Fn(&T) -> String) -> String {
        format!(
            "[{}]",
            values.iter().map(item).collect::<Vec<_>>().join(", ")
        )
    }
    let string = |text: &str| {
        if text.is_empty() {
            "\"\"".to_string()
        } else {
            text.to_string()
        }
    };
    match value {
        ParameterValue::Bool(v) => v.to_string(),
        ParameterValue::Integer(v) => v.to_string(),
        ParameterValue::Double(v) => format!("{v:?}"),
        ParameterValue::String(v) => string(v),
        ParameterValue::ByteArray(v) => list(v, |b| b.to_string()),
        ParameterValue::BoolArray(v) => list(v, |b| b.to_string()),
        ParameterValue::IntegerArray(v) => list(v, |i| i.to_string()),
        ParameterValue::DoubleArray(v) => list(v, |d| format!("{d:?}")),
        ParameterValue::StringArray(v) => list(v, |t| string(t)),
    }
}

/// A `--help` table: per row its name, type and default (or `mandatory`), then the
/// description on the lines below, wrapped.
pub fn help_table(rows: &[HelpRow]) -> String {
    const WIDTH: usize = 100;
    let name_width = rows
        .iter()
        .map(|row| row.name.len())
        .max()
        .unwrap_or(0)
        .max(29);
    let indent = 2 + name_width + 1 + 10;
    let mut text = String::new();
    for row in rows {
        let default = row.default.as_deref().unwrap_or("mandatory");
        text.push_str(&format!(
            "  {:<name_width$} {:<9} {default}\n",
            row.name, row.kind
        ));
        let mut line = String::new();
        for word in row.description.split_whitespace() {
            if !line.is_empty() && indent + line.len() + 1 + word.len() > WIDTH {
                text.push_str(&format!("{:indent$}{line}\n", ""));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            text.push_str(&format!("{:indent$}{line}\n", ""));
        }
    }
    text
}

/// The configurations read from a node's parameters. Keeps the parameters declared
/// (read-only, visible to `ros2 param`) for as long as it lives.
#[derive(Debug)]
pub struct NodeParameters {
    /// The driver's configuration.
    pub driver: RobotDriverGazeboConfiguration,
    /// The ROS side's configuration.
    pub ros: RobotDriverRosConfiguration,
    _declared: DeclaredParameters,
}

/// The gz-transport settings of a node: one transport node serves every robot of a process.
#[derive(Clone, Debug, PartialEq)]
pub struct GzParameters {
    /// `gz_msgs_prefix`.
    pub msgs_prefix: MsgsPrefix,
    /// `gz_partition` (`None`: from the environment).
    pub partition: Option<String>,
}

impl GzParameters {
    /// Declares `gz_msgs_prefix` and `gz_partition` with `reader`.
    ///
    /// # Errors
    /// A mistyped or unknown value, by name.
    pub fn declare(reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError> {
        let gz_msgs_prefix = reader.optional::<Arc<str>>(
            "gz_msgs_prefix",
            "a string, \"gz.msgs.\" or \"ignition.msgs.\"",
            "gz message type prefix: gz.msgs. (Harmonic) or ignition.msgs. (Fortress)",
            "gz.msgs.".into(),
        )?;
        let gz_partition = reader.optional::<Arc<str>>(
            "gz_partition",
            "a string (empty: from GZ_PARTITION/IGN_PARTITION)",
            "gz-transport partition; empty takes GZ_PARTITION, then IGN_PARTITION",
            "".into(),
        )?;
        Ok(GzParameters {
            msgs_prefix: gz_msgs_prefix
                .parse::<MsgsPrefix>()
                .map_err(|problem| reader.invalid("gz_msgs_prefix", problem))?,
            partition: (!gz_partition.is_empty()).then(|| gz_partition.to_string()),
        })
    }
}

/// What a robot's optional parameters are when its block does not set them: the original's
/// defaults for a single robot; a multi-robot node's own values for the robots it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotDefaults {
    /// `thread_sampling_time_sec`.
    pub thread_sampling_time_sec: f64,
    /// `joint_states_stamp`.
    pub joint_states_stamp: Arc<str>,
    /// `target_limit_policy`.
    pub target_limit_policy: Arc<str>,
    /// `target_keepalive_sec`.
    pub target_keepalive_sec: f64,
    /// `initialize_timeout_sec`.
    pub initialize_timeout_sec: f64,
    /// `command_timeout_sec`.
    pub command_timeout_sec: f64,
    /// `joint_states_publishing`.
    pub joint_states_publishing: Arc<str>,
    /// `target_forwarding`.
    pub target_forwarding: Arc<str>,
    /// `joint_limits_publishing`.
    pub joint_limits_publishing: Arc<str>,
    /// `joint_limits_heartbeat_sec` (0: none).
    pub joint_limits_heartbeat_sec: f64,
    /// `state_timeout_sec` (0: automatic).
    pub state_timeout_sec: f64,
    /// `stale_joint_states`.
    pub stale_joint_states: Arc<str>,
    /// `realtime_priority` (0: off).
    pub realtime_priority: i64,
}

impl Default for RobotDefaults {
    /// The original's 2 ms, node-clock stamps, clamp and no initialize timeout; ours for
    /// what the original re-sent every period although it had not changed: targets on
    /// arrival and limits on change, each with a one-second heartbeat.
    fn default() -> Self {
        let heartbeat = DEFAULT_HEARTBEAT.as_secs_f64();
        RobotDefaults {
            thread_sampling_time_sec: DEFAULT_THREAD_SAMPLING_TIME_SEC,
            joint_states_stamp: "node_clock".into(),
            target_limit_policy: "clamp".into(),
            target_keepalive_sec: heartbeat,
            initialize_timeout_sec: 0.0,
            command_timeout_sec: DEFAULT_COMMAND_TIMEOUT.as_secs_f64(),
            joint_states_publishing: "on_arrival".into(),
            target_forwarding: "on_arrival".into(),
            joint_limits_publishing: "on_change".into(),
            joint_limits_heartbeat_sec: heartbeat,
            state_timeout_sec: 0.0,
            stale_joint_states: "withhold".into(),
            realtime_priority: 0,
        }
    }
}

impl RobotDefaults {
    /// Declares the robots' optional parameters with `reader` (a multi-robot node's own,
    /// applying to every robot that does not set them), defaulting to `self`.
    ///
    /// # Errors
    /// A mistyped value, by name.
    pub fn declare(&self, reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError> {
        Ok(RobotDefaults {
            thread_sampling_time_sec: reader.optional(
                "thread_sampling_time_sec",
                "a double in seconds, e.g. 0.002 (write 1.0, not 1)",
                "control loop period in seconds",
                self.thread_sampling_time_sec,
            )?,
            joint_states_stamp: reader.optional(
                "joint_states_stamp",
                "a string, \"node_clock\" or \"gazebo\"",
                "stamp of get/joint_states: node_clock (publication time) or gazebo (sim time)",
                self.joint_states_stamp.clone(),
            )?,
            target_limit_policy: reader.optional(
                "target_limit_policy",
                "a string, \"clamp\" or \"refuse\"",
                "targets outside the joint limits: clamp (with a warning) or refuse",
                self.target_limit_policy.clone(),
            )?,
            initialize_timeout_sec: reader.optional(
                "initialize_timeout_sec",
                "a double in seconds, e.g. 0.0 or 30.0",
                "how long to wait for Gazebo's joint states; 0 waits until stopped (as the \
                 original)",
                self.initialize_timeout_sec,
            )?,
            command_timeout_sec: reader.optional(
                "command_timeout_sec",
                "a double in seconds, e.g. 0.1 (greater than zero)",
                "a velocity or effort target without a new one for this long is set to zero in \
                 Gazebo",
                self.command_timeout_sec,
            )?,
            ..self.declare_publishing_options(reader)?
        })
    }

    /// Declares only the options of how a robot's state, limits and targets flow
    /// (`joint_states_publishing`, `target_forwarding`, `target_keepalive_sec`,
    /// `joint_limits_publishing`,
    /// `joint_limits_heartbeat_sec`, `state_timeout_sec`, `stale_joint_states`,
    /// `realtime_priority`): the composer node's share of them.
    ///
    /// # Errors
    /// A mistyped value, by name.
    pub fn declare_publishing_options(
        &self,
        reader: &mut ParameterReader<'_>,
    ) -> Result<Self, ParameterError> {
        Ok(RobotDefaults {
            joint_states_publishing: reader.optional(
                "joint_states_publishing",
                "a string, \"on_arrival\" or \"grid\"",
                "on_arrival: get/joint_states as soon as Gazebo's message is in, at most once per \
                 period; grid: every period (as the original)",
                self.joint_states_publishing.clone(),
            )?,
            target_forwarding: reader.optional(
                "target_forwarding",
                "a string, \"on_arrival\" or \"periodic\"",
                "on_arrival: a target is sent to Gazebo the moment it arrives, re-sent after \
                 target_keepalive_sec; periodic: the latest target every period (as the original)",
                self.target_forwarding.clone(),
            )?,
            target_keepalive_sec: reader.optional(
                "target_keepalive_sec",
                "a double in seconds, e.g. 1.0 or 0.0",
                "target_forwarding on_arrival: an unchanged target is re-sent to Gazebo after \
                 this many seconds; 0: never",
                self.target_keepalive_sec,
            )?,
            joint_limits_publishing: reader.optional(
                "joint_limits_publishing",
                "a string, \"on_change\" or \"periodic\"",
                "on_change: get/joint_positions_min|max when they change, when a subscriber \
                 matches and every joint_limits_heartbeat_sec; periodic: every period (as the \
                 original)",
                self.joint_limits_publishing.clone(),
            )?,
            joint_limits_heartbeat_sec: reader.optional(
                "joint_limits_heartbeat_sec",
                "a double in seconds, e.g. 1.0 or 0.0",
                "joint_limits_publishing on_change: the limits are published again after this \
                 many seconds; 0: never",
                self.joint_limits_heartbeat_sec,
            )?,
            state_timeout_sec: reader.optional(
                "state_timeout_sec",
                "a double in seconds, e.g. 0.0 or 0.05",
                "age past which the robot's state is stale; 0: ten of Gazebo's message intervals \
                 (at least ten periods and 50 ms)",
                self.state_timeout_sec,
            )?,
            stale_joint_states: reader.optional(
                "stale_joint_states",
                "a string, \"withhold\" or \"republish\"",
                "grid publishing while stale: withhold (nothing) or republish the last state (as \
                 the original)",
                self.stale_joint_states.clone(),
            )?,
            realtime_priority: reader.optional(
                "realtime_priority",
                "an integer, 0 (off) or a SCHED_FIFO priority 1..99",
                "SCHED_FIFO priority of the loop and receive threads; 0: normal scheduling",
                self.realtime_priority,
            )?,
            ..self.clone()
        })
    }

    /// The ROS-side options for a robot named `robot_name` with these values; problems are
    /// named with `reader`'s group.
    ///
    /// # Errors
    /// An unknown mode, a bad duration or priority, by name.
    pub fn ros_configuration(
        &self,
        reader: &ParameterReader<'_>,
        robot_name: String,
    ) -> Result<RobotDriverRosConfiguration, ParameterError> {
        fn parse<T: std::str::FromStr<Err = String>>(
            reader: &ParameterReader<'_>,
            name: &str,
            value: &str,
        ) -> Result<T, ParameterError> {
            value
                .parse()
                .map_err(|problem| reader.invalid(name, problem))
        }
        Ok(RobotDriverRosConfiguration {
            robot_name,
            thread_sampling_time: seconds(
                reader.name("thread_sampling_time_sec"),
                self.thread_sampling_time_sec,
                false,
            )?
            .expect("a period is never zero"),
            stamp_source: parse(reader, "joint_states_stamp", &self.joint_states_stamp)?,
            joint_states_publishing: parse(
                reader,
                "joint_states_publishing",
                &self.joint_states_publishing,
            )?,
            target_forwarding: parse(reader, "target_forwarding", &self.target_forwarding)?,
            target_keepalive: seconds(
                reader.name("target_keepalive_sec"),
                self.target_keepalive_sec,
                true,
            )?,
            limits_publishing: parse(
                reader,
                "joint_limits_publishing",
                &self.joint_limits_publishing,
            )?,
            limits_heartbeat: seconds(
                reader.name("joint_limits_heartbeat_sec"),
                self.joint_limits_heartbeat_sec,
                true,
            )?,
            state_timeout: seconds(
                reader.name("state_timeout_sec"),
                self.state_timeout_sec,
                true,
            )?,
            stale_joint_states: parse(reader, "stale_joint_states", &self.stale_joint_states)?,
            realtime_priority: match self.realtime_priority {
                0 => None,
                priority @ 1..=99 => Some(priority as u8),
                other => {
                    return Err(reader.invalid(
                        "realtime_priority",
                        format!("{other} is not 0 (off) or a SCHED_FIFO priority in 1..99"),
                    ))
                }
            },
        })
    }
}

impl NodeParameters {
    /// Declares every parameter of a single-robot node on `node` (values from its params file
    /// and `-p` overrides) and builds the two configurations.
    ///
    /// # Errors
    /// The first parameter that is missing, mistyped or invalid, by name.
    pub fn declare(node: &Node) -> Result<Self, ParameterError> {
        let mut reader = ParameterReader::new(node);
        let robot = RobotBlock::declare(&mut reader, None)?;
        let options = RobotDefaults::default().declare(&mut reader)?;
        let gz = GzParameters::declare(&mut reader)?;
        robot.configure(reader, &options, &gz)
    }

    /// Declares the parameters of robot `group` of a multi-robot node: `<group>.joint_names`,
    /// `<group>.joint_positions_topic_prefix`, `<group>.joint_states_topic` (mandatory),
    /// `<group>.robot_name` (default: `group`) and the optional ones, which default to
    /// `defaults`. The gz-transport settings are the node's, `gz`.
    ///
    /// # Errors
    /// The first parameter that is missing, mistyped or invalid, by name.
    pub fn declare_robot(
        node: &Node,
        group: &str,
        defaults: &RobotDefaults,
        gz: &GzParameters,
    ) -> Result<Self, ParameterError> {
        let mut reader = ParameterReader::group(node, group);
        let robot = RobotBlock::declare(&mut reader, Some(group))?;
        let options = defaults.declare(&mut reader)?;
        robot.configure(reader, &options, gz)
    }
}

/// The topic prefix of one kind of rate target (velocities, efforts); empty, the default,
/// stands for `joint_positions_topic_prefix`.
fn declare_target_prefix(
    reader: &mut ParameterReader<'_>,
    name: &str,
    description: &'static str,
) -> Result<Arc<str>, ParameterError> {
    reader.optional::<Arc<str>>(
        name,
        "a string, e.g. \"/model/ur3e/joint/\" (empty: joint_positions_topic_prefix)",
        description,
        "".into(),
    )
}

/// The ± limits of one kind of rate target, one per joint; empty, the default, checks none.
fn declare_target_limits(
    reader: &mut ParameterReader<'_>,
    name: &str,
    expected: &'static str,
    description: &'static str,
) -> Result<Arc<[f64]>, ParameterError> {
    reader.optional::<Arc<[f64]>>(name, expected, description, Arc::from([]))
}

/// The parameters that name a robot and its Gazebo topics.
pub(crate) struct RobotBlock {
    joint_names: Arc<[Arc<str>]>,
    joint_positions_topic_prefix: Arc<str>,
    /// Empty: the positions prefix.
    joint_velocities_topic_prefix: Arc<str>,
    joint_forces_topic_prefix: Arc<str>,
    /// Empty: none known.
    joint_velocity_limits: Arc<[f64]>,
    joint_effort_limits: Arc<[f64]>,
    joint_states_topic: Arc<str>,
    robot_name: Arc<str>,
}

impl RobotBlock {
    /// `robot_name` is mandatory when `robot_name_default` is `None`.
    pub(crate) fn declare(
        reader: &mut ParameterReader<'_>,
        robot_name_default: Option<&str>,
    ) -> Result<Self, ParameterError> {
        let joint_names = reader.mandatory::<Arc<[Arc<str>]>>(
            "joint_names",
            "a string array, e.g. [\"shoulder_pan_joint\", \"elbow_joint\"]",
            "Gazebo joint names; the order of every vector on the ROS topics",
        )?;
        let joint_positions_topic_prefix = reader.mandatory::<Arc<str>>(
            "joint_positions_topic_prefix",
            "a string, e.g. \"/model/ur3e/joint/\"",
            "joint j is commanded on <prefix><j>/0/cmd_pos (gz.msgs.Double)",
        )?;
        let joint_velocities_topic_prefix = declare_target_prefix(
            reader,
            "joint_velocities_topic_prefix",
            "joint j takes velocity targets on <prefix><j>/cmd_vel (gz.msgs.Double; Gazebo's \
             JointController); empty: joint_positions_topic_prefix",
        )?;
        let joint_forces_topic_prefix = declare_target_prefix(
            reader,
            "joint_forces_topic_prefix",
            "joint j takes effort targets on <prefix><j>/cmd_force (gz.msgs.Double; Gazebo's \
             ApplyJointForce); empty: joint_positions_topic_prefix",
        )?;
        let joint_velocity_limits = declare_target_limits(
            reader,
            "joint_velocity_limits",
            "a double array, one per joint, e.g. [3.14, 3.14, 3.14] (empty: none)",
            "velocity targets outside ±these are clamped or refused (target_limit_policy); the \
             SDF's <limit><velocity>; empty: not checked",
        )?;
        let joint_effort_limits = declare_target_limits(
            reader,
            "joint_effort_limits",
            "a double array, one per joint, e.g. [54.0, 54.0, 28.0] (empty: none)",
            "effort targets outside ±these are clamped or refused (target_limit_policy); the \
             SDF's <limit><effort>; empty: not checked",
        )?;
        let joint_states_topic = reader.mandatory::<Arc<str>>(
            "joint_states_topic",
            "a string, e.g. \"/world/ur3e_world/model/ur3e/joint_state\"",
            "the JointStatePublisher's gz.msgs.Model topic",
        )?;
        const ROBOT_NAME: &str = "a string, e.g. \"ur3e_1\"";
        const ROBOT_NAME_DESCRIPTION: &str =
            "prefix of the ROS topics: <robot_name>/get/joint_states, ...";
        let robot_name = match robot_name_default {
            None => {
                reader.mandatory::<Arc<str>>("robot_name", ROBOT_NAME, ROBOT_NAME_DESCRIPTION)?
            }
            Some(default) => reader.optional::<Arc<str>>(
                "robot_name",
                ROBOT_NAME,
                ROBOT_NAME_DESCRIPTION,
                default.into(),
            )?,
        };
        Ok(RobotBlock {
            joint_names,
            joint_positions_topic_prefix,
            joint_velocities_topic_prefix,
            joint_forces_topic_prefix,
            joint_velocity_limits,
            joint_effort_limits,
            joint_states_topic,
            robot_name,
        })
    }

    fn configure(
        self,
        reader: ParameterReader<'_>,
        options: &RobotDefaults,
        gz: &GzParameters,
    ) -> Result<NodeParameters, ParameterError> {
        if self.robot_name.is_empty() {
            return Err(reader.invalid(
                "robot_name",
                "it is empty; it is the prefix of every topic".into(),
            ));
        }
        let ros = options.ros_configuration(&reader, self.robot_name.to_string())?;
        let driver = RobotDriverGazeboConfiguration {
            joint_names: joint_name_list(&self.joint_names),
            joint_positions_topic_prefix: self.joint_positions_topic_prefix.to_string(),
            joint_states_topic: self.joint_states_topic.to_string(),
            msgs_prefix: gz.msgs_prefix,
            partition: gz.partition.clone(),
            limit_policy: parse_limit_policy(
                reader.name("target_limit_policy"),
                &options.target_limit_policy,
            )?,
            initialize_timeout: seconds(
                reader.name("initialize_timeout_sec"),
                options.initialize_timeout_sec,
                true,
            )?,
            forward_mode: ros.driver_forward_mode(),
            joint_velocities_topic_prefix: non_empty(&self.joint_velocities_topic_prefix),
            joint_forces_topic_prefix: non_empty(&self.joint_forces_topic_prefix),
            velocity_limits: self.joint_velocity_limits.to_vec(),
            effort_limits: self.joint_effort_limits.to_vec(),
            command_timeout: seconds(
                reader.name("command_timeout_sec"),
                options.command_timeout_sec,
                false,
            )?
            .expect("zero is refused"),
        };
        driver
            .validate()
            .map_err(|err| driver_parameter_error(err, |name| reader.name(name)))?;
        Ok(NodeParameters {
            driver,
            ros,
            _declared: reader.into_declared(),
        })
    }
}

fn describe(value: &ParameterValue) -> String {
    match value {
        ParameterValue::Bool(v) => format!("a bool ({v})"),
        ParameterValue::Integer(v) => format!("an integer ({v})"),
        ParameterValue::Double(v) => format!("a double ({v})"),
        ParameterValue::String(v) => format!("a string ({v:?})"),
        ParameterValue::ByteArray(v) => format!("a byte array ({v:?})"),
        ParameterValue::BoolArray(v) => format!("a bool array ({v:?})"),
        ParameterValue::IntegerArray(v) => format!("an integer array ({v:?})"),
        ParameterValue::DoubleArray(v) => format!("a double array ({v:?})"),
        ParameterValue::StringArray(v) => format!("a string array ({v:?})"),
    }
}

fn joint_name_list(names: &[Arc<str>]) -> Vec<String> {
    if names.len() == 1 && &*names[0] == EMPTY_LIST {
        return Vec::new();
    }
    names.iter().map(|name| name.to_string()).collect()
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

fn invalid(name: String, problem: String) -> ParameterError {
    ParameterError::Invalid { name, problem }
}

fn parse_limit_policy(name: String, value: &str) -> Result<LimitPolicy, ParameterError> {
    match value {
        "clamp" => Ok(LimitPolicy::Clamp),
        "refuse" => Ok(LimitPolicy::Refuse),
        other => Err(invalid(
            name,
            format!("unknown policy {other:?}: expected \"clamp\" or \"refuse\""),
        )),
    }
}

/// A non-negative finite number of seconds, at most [`LONGEST_DURATION`] (a deadline past what
/// the clock holds would panic); `Ok(None)` for 0 when `zero_means_none`, an error for 0
/// otherwise.
pub(crate) fn seconds(
    name: String,
    value: f64,
    zero_means_none: bool,
) -> Result<Option<Duration>, ParameterError> {
    let duration = duration_from_secs(value).map_err(|problem| invalid(name.clone(), problem))?;
    match (duration.is_zero(), zero_means_none) {
        (false, _) => Ok(Some(duration)),
        (true, true) => Ok(None),
        (true, false) => Err(invalid(
            name,
            format!("{value} s; it must be greater than zero (at least 1 ns)"),
        )),
    }
}

/// The driver's configuration errors, named by the parameter they came from.
/// `qualify` turns a parameter name into its full name (with the robot's group).
fn driver_parameter_error(err: DriverError, qualify: impl Fn(&str) -> String) -> ParameterError {
    let name = match &err {
        DriverError::EmptyParameter { parameter } => match *parameter {
            "partition" => "gz_partition",
            other => other,
        },
        DriverError::InvalidParameter { parameter, .. } => parameter,
        _ => "joint_names",
    };
    invalid(qualify(name), err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_accept_positive_values_and_zero_only_where_it_means_none() {
        assert_eq!(
            seconds("p".into(), 0.002, false).unwrap(),
            Some(Duration::from_millis(2))
        );
        assert_eq!(seconds("p".into(), 0.0, true).unwrap(), None);
        let err = seconds("thread_sampling_time_sec".into(), 0.0, false).unwrap_err();
        assert!(err.to_string().contains("greater than zero"), "{err}");
        for bad in [-0.5, f64::NAN, f64::INFINITY, 1e18] {
            let err = seconds("initialize_timeout_sec".into(), bad, true).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("parameter \"initialize_timeout_sec\" is invalid"),
                "{err}"
            );
        }
        // Finite but past what a deadline (`Instant + Duration`) can hold: refused at
        // start-up, naming the largest accepted value, instead of a panic later.
        let err = seconds("state_timeout_sec".into(), 1e18, true).unwrap_err();
        assert!(
            err.to_string()
                .contains("is longer than the longest accepted duration, 1000000000 s"),
            "{err}"
        );
        assert!(seconds("state_timeout_sec".into(), 1e9, true).is_ok());
    }

    #[test]
    fn the_originals_empty_list_spelling_is_an_empty_list() {
        assert!(joint_name_list(&[Arc::from(EMPTY_LIST)]).is_empty());
        assert_eq!(
            joint_name_list(&[Arc::from("a"), Arc::from(EMPTY_LIST)]),
            ["a", EMPTY_LIST]
        );
    }

    #[test]
    fn policies_and_driver_errors_name_their_parameter() {
        let policy = || "target_limit_policy".to_string();
        assert_eq!(
            parse_limit_policy(policy(), "refuse").unwrap(),
            LimitPolicy::Refuse
        );
        let err = parse_limit_policy(policy(), "wrap").unwrap_err();
        assert!(err.to_string().contains("\"target_limit_policy\""), "{err}");
        let err = driver_parameter_error(DriverError::EmptyJointNames, str::to_string);
        assert_eq!(
            err.to_string(),
            "parameter \"joint_names\" is invalid: RobotDriverGazebo: joint_names is empty."
        );
        let err = driver_parameter_error(
            DriverError::EmptyParameter {
                parameter: "joint_states_topic",
            },
            str::to_string,
        );
        assert!(err
            .to_string()
            .starts_with("parameter \"joint_states_topic\""));
        let err = driver_parameter_error(
            DriverError::EmptyParameter {
                parameter: "joint_states_topic",
            },
            |name| format!("r820_sim.{name}"),
        );
        assert!(err
            .to_string()
            .starts_with("parameter \"r820_sim.joint_states_topic\""));
    }

    #[test]
    fn given_values_are_described_with_their_type() {
        assert_eq!(describe(&ParameterValue::Integer(1)), "an integer (1)");
        assert_eq!(
            describe(&ParameterValue::String("x".into())),
            "a string (\"x\")"
        );
    }
}
