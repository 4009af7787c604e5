//! The node's parameters: the original's five (`joint_names`, `joint_positions_topic_prefix`,
//! `joint_states_topic`, `robot_name`, `thread_sampling_time_sec`) and ours, each with a
//! default that keeps the original's behaviour. Every problem is reported naming the
//! parameter, what it must be and what it is.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use gz_transport::MsgsPrefix;
use rclrs::{DeclarationError, Node, ParameterValue, ParameterVariant};
use sas_robot_driver_gazebo::{
    DriverError, ForwardMode, LimitPolicy, RobotDriverGazeboConfiguration,
};

use crate::{RobotDriverRosConfiguration, StampSource};

/// `thread_sampling_time_sec` when the parameter is not set (500 Hz), as the original's
/// `get_ros_optional_parameter(…, 0.002)` meant it.
pub const DEFAULT_THREAD_SAMPLING_TIME_SEC: f64 = 0.002;

/// The original's spelling of an empty list in a params file (sas_common): `["EMPTY_LIST"]`.
const EMPTY_LIST: &str = "EMPTY_LIST";

/// A parameter that is missing, has the wrong type or an unusable value.
#[derive(Debug, thiserror::Error)]
pub enum ParameterError {
    /// A mandatory parameter has no value.
    #[error(
        "parameter {name:?} is missing: node {node} needs {expected}. Set it in the params \
         file block keyed by the node name ({node}: ros__parameters: …) or with \
         `--ros-args -p {name}:=<value>`."
    )]
    Missing {
        /// The parameter.
        name: &'static str,
        /// What it must be, with an example.
        expected: &'static str,
        /// The node's fully qualified name.
        node: String,
    },
    /// The value given has another type than the parameter's.
    #[error("parameter {name:?} must be {expected}, but it is {given}.")]
    WrongType {
        /// The parameter.
        name: &'static str,
        /// What it must be, with an example.
        expected: &'static str,
        /// The type and value given.
        given: String,
    },
    /// The value has the right type but cannot be used.
    #[error("parameter {name:?} is invalid: {problem}")]
    Invalid {
        /// The parameter.
        name: &'static str,
        /// Why.
        problem: String,
    },
    /// rclrs refused the declaration for another reason (e.g. declared twice on one node).
    #[error("parameter {name:?} cannot be declared: {source}")]
    Declaration {
        /// The parameter.
        name: &'static str,
        /// rclrs' reason.
        source: DeclarationError,
    },
}

/// The configurations read from a node's parameters. Keeps the parameters declared
/// (read-only, visible to `ros2 param`) for as long as it lives.
pub struct NodeParameters {
    /// The driver's configuration.
    pub driver: RobotDriverGazeboConfiguration,
    /// The ROS side's configuration.
    pub ros: RobotDriverRosConfiguration,
    declared: Vec<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for NodeParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeParameters")
            .field("driver", &self.driver)
            .field("ros", &self.ros)
            .field("declared", &self.declared.len())
            .finish()
    }
}

impl NodeParameters {
    /// Declares every parameter on `node` (values from its params file and `-p` overrides)
    /// and builds the two configurations.
    ///
    /// # Errors
    /// The first parameter that is missing, mistyped or invalid, by name.
    pub fn declare(node: &Node) -> Result<Self, ParameterError> {
        let mut declarer = Declarer {
            node,
            declared: Vec::new(),
        };
        let joint_names = declarer.mandatory::<Arc<[Arc<str>]>>(
            "joint_names",
            "a string array, e.g. [\"shoulder_pan_joint\", \"elbow_joint\"]",
            "Gazebo joint names; the order of every vector on the ROS topics",
        )?;
        let joint_positions_topic_prefix = declarer.mandatory::<Arc<str>>(
            "joint_positions_topic_prefix",
            "a string, e.g. \"/model/ur3e/joint/\"",
            "joint j is commanded on <prefix><j>/0/cmd_pos (gz.msgs.Double)",
        )?;
        let joint_states_topic = declarer.mandatory::<Arc<str>>(
            "joint_states_topic",
            "a string, e.g. \"/world/ur3e_world/model/ur3e/joint_state\"",
            "the JointStatePublisher's gz.msgs.Model topic",
        )?;
        let robot_name = declarer.mandatory::<Arc<str>>(
            "robot_name",
            "a string, e.g. \"ur3e_1\"",
            "prefix of the ROS topics: <robot_name>/get/joint_states, ...",
        )?;
        let thread_sampling_time_sec = declarer.optional(
            "thread_sampling_time_sec",
            "a double in seconds, e.g. 0.002 (write 1.0, not 1)",
            "control loop period in seconds",
            DEFAULT_THREAD_SAMPLING_TIME_SEC,
        )?;
        let gz_msgs_prefix = declarer.optional::<Arc<str>>(
            "gz_msgs_prefix",
            "a string, \"gz.msgs.\" or \"ignition.msgs.\"",
            "gz message type prefix: gz.msgs. (Harmonic) or ignition.msgs. (Fortress)",
            "gz.msgs.".into(),
        )?;
        let gz_partition = declarer.optional::<Arc<str>>(
            "gz_partition",
            "a string (empty: from GZ_PARTITION/IGN_PARTITION)",
            "gz-transport partition; empty takes GZ_PARTITION, then IGN_PARTITION",
            "".into(),
        )?;
        let stamp = declarer.optional::<Arc<str>>(
            "joint_states_stamp",
            "a string, \"node_clock\" or \"gazebo\"",
            "stamp of get/joint_states: node_clock (publication time) or gazebo (sim time)",
            "node_clock".into(),
        )?;
        let limit_policy = declarer.optional::<Arc<str>>(
            "target_limit_policy",
            "a string, \"clamp\" or \"refuse\"",
            "targets outside the joint limits: clamp (with a warning) or refuse",
            "clamp".into(),
        )?;
        let keepalive = declarer.optional(
            "target_keepalive_sec",
            "a double in seconds, e.g. 0.0 or 0.1",
            "0: send the target to Gazebo every period (as the original); > 0: only when it \
             changed or after this many seconds",
            0.0,
        )?;
        let initialize_timeout = declarer.optional(
            "initialize_timeout_sec",
            "a double in seconds, e.g. 0.0 or 30.0",
            "how long to wait for Gazebo's joint states; 0 waits until stopped (as the original)",
            0.0,
        )?;

        let driver = RobotDriverGazeboConfiguration {
            joint_names: joint_name_list(&joint_names),
            joint_positions_topic_prefix: joint_positions_topic_prefix.to_string(),
            joint_states_topic: joint_states_topic.to_string(),
            msgs_prefix: gz_msgs_prefix
                .parse::<MsgsPrefix>()
                .map_err(|problem| invalid("gz_msgs_prefix", problem))?,
            partition: (!gz_partition.is_empty()).then(|| gz_partition.to_string()),
            limit_policy: parse_limit_policy(&limit_policy)?,
            initialize_timeout: seconds("initialize_timeout_sec", initialize_timeout, true)?,
            forward_mode: match seconds("target_keepalive_sec", keepalive, true)? {
                None => ForwardMode::EveryPeriod,
                Some(keepalive) => ForwardMode::OnChangeWithKeepalive(keepalive),
            },
        };
        driver.validate().map_err(driver_parameter_error)?;

        if robot_name.is_empty() {
            return Err(invalid(
                "robot_name",
                "it is empty; it is the prefix of every topic".into(),
            ));
        }
        let ros = RobotDriverRosConfiguration {
            robot_name: robot_name.to_string(),
            thread_sampling_time: seconds(
                "thread_sampling_time_sec",
                thread_sampling_time_sec,
                false,
            )?
            .expect("a period is never zero"),
            stamp_source: stamp
                .parse::<StampSource>()
                .map_err(|problem| invalid("joint_states_stamp", problem))?,
        };
        Ok(NodeParameters {
            driver,
            ros,
            declared: declarer.declared,
        })
    }
}

struct Declarer<'a> {
    node: &'a Node,
    declared: Vec<Box<dyn Any + Send + Sync>>,
}

impl Declarer<'_> {
    fn mandatory<T: ParameterVariant + Send + Sync>(
        &mut self,
        name: &'static str,
        expected: &'static str,
        description: &'static str,
    ) -> Result<T, ParameterError> {
        self.declare(name, expected, description, None)
    }

    fn optional<T: ParameterVariant + Send + Sync>(
        &mut self,
        name: &'static str,
        expected: &'static str,
        description: &'static str,
        default: T,
    ) -> Result<T, ParameterError> {
        self.declare(name, expected, description, Some(default))
    }

    fn declare<T: ParameterVariant + Send + Sync>(
        &mut self,
        name: &'static str,
        expected: &'static str,
        description: &'static str,
        default: Option<T>,
    ) -> Result<T, ParameterError> {
        let mut builder = self
            .node
            .declare_parameter::<T>(name)
            .description(description);
        if let Some(default) = default {
            builder = builder.default(default);
        }
        match builder.read_only() {
            Ok(parameter) => {
                let value = parameter.get();
                self.declared.push(Box::new(parameter));
                Ok(value)
            }
            Err(DeclarationError::NoValueAvailable) => Err(ParameterError::Missing {
                name,
                expected,
                node: self.node.fully_qualified_name(),
            }),
            Err(DeclarationError::OverrideValueTypeMismatch) => Err(ParameterError::WrongType {
                name,
                expected,
                given: self.describe_override(name),
            }),
            Err(source) => Err(ParameterError::Declaration { name, source }),
        }
    }

    /// What was given for `name`, read through a short-lived dynamically typed declaration.
    fn describe_override(&self, name: &'static str) -> String {
        match self
            .node
            .declare_parameter::<ParameterValue>(name)
            .optional()
            .map(|parameter| parameter.get())
        {
            Ok(Some(value)) => describe(&value),
            _ => "of another type".into(),
        }
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

fn invalid(name: &'static str, problem: String) -> ParameterError {
    ParameterError::Invalid { name, problem }
}

fn joint_name_list(names: &[Arc<str>]) -> Vec<String> {
    if names.len() == 1 && &*names[0] == EMPTY_LIST {
        return Vec::new();
    }
    names.iter().map(|name| name.to_string()).collect()
}

fn parse_limit_policy(value: &str) -> Result<LimitPolicy, ParameterError> {
    match value {
        "clamp" => Ok(LimitPolicy::Clamp),
        "refuse" => Ok(LimitPolicy::Refuse),
        other => Err(invalid(
            "target_limit_policy",
            format!("unknown policy {other:?}: expected \"clamp\" or \"refuse\""),
        )),
    }
}

/// A non-negative finite number of seconds; `Ok(None)` for 0 when `zero_means_none`, an error
/// for 0 otherwise.
fn seconds(
    name: &'static str,
    value: f64,
    zero_means_none: bool,
) -> Result<Option<Duration>, ParameterError> {
    let duration = Duration::try_from_secs_f64(value).map_err(|_| {
        invalid(
            name,
            format!("{value} is not a finite, non-negative number of seconds"),
        )
    })?;
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
fn driver_parameter_error(err: DriverError) -> ParameterError {
    let name = match &err {
        DriverError::EmptyParameter { parameter } => match *parameter {
            "partition" => "gz_partition",
            other => other,
        },
        _ => "joint_names",
    };
    invalid(name, err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_accept_positive_values_and_zero_only_where_it_means_none() {
        assert_eq!(
            seconds("p", 0.002, false).unwrap(),
            Some(Duration::from_millis(2))
        );
        assert_eq!(seconds("p", 0.0, true).unwrap(), None);
        let err = seconds("thread_sampling_time_sec", 0.0, false).unwrap_err();
        assert!(err.to_string().contains("greater than zero"), "{err}");
        for bad in [-0.5, f64::NAN, f64::INFINITY] {
            let err = seconds("initialize_timeout_sec", bad, true).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("parameter \"initialize_timeout_sec\" is invalid"),
                "{err}"
            );
        }
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
        assert_eq!(parse_limit_policy("refuse").unwrap(), LimitPolicy::Refuse);
        let err = parse_limit_policy("wrap").unwrap_err();
        assert!(err.to_string().contains("\"target_limit_policy\""), "{err}");
        let err = driver_parameter_error(DriverError::EmptyJointNames);
        assert_eq!(
            err.to_string(),
            "parameter \"joint_names\" is invalid: RobotDriverGazebo: joint_names is empty."
        );
        let err = driver_parameter_error(DriverError::EmptyParameter {
            parameter: "joint_states_topic",
        });
        assert!(err
            .to_string()
            .starts_with("parameter \"joint_states_topic\""));
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
