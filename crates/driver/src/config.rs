use std::collections::HashMap;
use std::time::Duration;

use gz_transport::MsgsPrefix;

use crate::DriverError;

/// What `set_target_joint_positions` does with a value outside the joint limits captured at
/// `initialize()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitPolicy {
    /// Store the value clamped into the limits and log a rate-limited warning (at most one
    /// per second, counting the ones suppressed).
    #[default]
    Clamp,
    /// Refuse the whole target with [`DriverError::TargetOutOfLimits`]; the previous target
    /// stays in force.
    Refuse,
}

/// When `forward_targets()` publishes the latest target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ForwardMode {
    /// Every call, as the original did (Gazebo's controller keeps the last command anyway,
    /// but a re-sent command survives a restarted Gazebo).
    #[default]
    EveryPeriod,
    /// Only when the target changed since the last publication, or when the last publication
    /// is older than the keepalive.
    OnChangeWithKeepalive(Duration),
    /// Only when the target changed since the last publication (Gazebo's controllers hold the
    /// last command).
    OnChange,
}

/// The driver's configuration. Fields are public so bindings can fill them one by one (as the
/// original's Python `RobotDriverGazeboConfiguration()` does); [`RobotDriverGazebo::new`]
/// validates them.
///
/// [`RobotDriverGazebo::new`]: crate::RobotDriverGazebo::new
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RobotDriverGazeboConfiguration {
    /// Joints in the order of every vector the driver takes or returns. Non-empty, no
    /// duplicates, no empty names.
    pub joint_names: Vec<String>,
    /// Command topic prefix: joint `j` is commanded on `prefix + j + "/0/cmd_pos"`
    /// (e.g. `/model/ur3e/joint/`, trailing `/` included).
    pub joint_positions_topic_prefix: String,
    /// The JointStatePublisher's `Model` topic, used verbatim.
    pub joint_states_topic: String,
    /// Type-name prefix of the Gazebo being talked to: `gz.msgs.` (Harmonic) or
    /// `ignition.msgs.` (Fortress).
    pub msgs_prefix: MsgsPrefix,
    /// Transport partition; `None` takes the environment's (`GZ_PARTITION`, `IGN_PARTITION`).
    pub partition: Option<String>,
    /// What to do with out-of-limit targets.
    pub limit_policy: LimitPolicy,
    /// How long `initialize()` waits for every joint; `None` waits until cancelled, as the
    /// original did.
    pub initialize_timeout: Option<Duration>,
    /// When `forward_targets()` publishes.
    pub forward_mode: ForwardMode,
}

impl RobotDriverGazeboConfiguration {
    /// A configuration with the three mandatory fields and defaults elsewhere (Harmonic
    /// prefix, environment partition, clamp policy, no timeout, forward every period).
    pub fn new<I, S>(
        joint_names: I,
        joint_positions_topic_prefix: impl Into<String>,
        joint_states_topic: impl Into<String>,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RobotDriverGazeboConfiguration {
            joint_names: joint_names.into_iter().map(Into::into).collect(),
            joint_positions_topic_prefix: joint_positions_topic_prefix.into(),
            joint_states_topic: joint_states_topic.into(),
            ..Default::default()
        }
    }

    /// Checks the rules the driver relies on.
    ///
    /// # Errors
    /// Empty or duplicate joint names, an empty topic or an empty partition override.
    pub fn validate(&self) -> Result<(), DriverError> {
        if self.joint_names.is_empty() {
            return Err(DriverError::EmptyJointNames);
        }
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.joint_names.len());
        for (index, name) in self.joint_names.iter().enumerate() {
            if name.is_empty() {
                return Err(DriverError::EmptyJointName { index });
            }
            if let Some(first) = seen.insert(name, index) {
                return Err(DriverError::DuplicateJointName {
                    name: name.clone(),
                    first,
                    second: index,
                });
            }
        }
        if self.joint_positions_topic_prefix.is_empty() {
            return Err(DriverError::EmptyParameter {
                parameter: "joint_positions_topic_prefix",
            });
        }
        if self.joint_states_topic.is_empty() {
            return Err(DriverError::EmptyParameter {
                parameter: "joint_states_topic",
            });
        }
        if self.partition.as_deref() == Some("") {
            return Err(DriverError::EmptyParameter {
                parameter: "partition",
            });
        }
        Ok(())
    }

    /// The command topic of joint `joint_name`: `prefix + joint_name + "/0/cmd_pos"`.
    pub fn command_topic(&self, joint_name: &str) -> String {
        format!(
            "{}{}/0/cmd_pos",
            self.joint_positions_topic_prefix, joint_name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ur3e() -> RobotDriverGazeboConfiguration {
        RobotDriverGazeboConfiguration::new(
            ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint"],
            "/model/ur3e/joint/",
            "/world/ur3e_world/model/ur3e/joint_state",
        )
    }

    #[test]
    fn a_complete_configuration_is_valid_and_builds_the_originals_topics() {
        let config = ur3e();
        config.validate().unwrap();
        assert_eq!(
            config.command_topic("elbow_joint"),
            "/model/ur3e/joint/elbow_joint/0/cmd_pos"
        );
        assert_eq!(config.limit_policy, LimitPolicy::Clamp);
        assert_eq!(config.forward_mode, ForwardMode::EveryPeriod);
        assert_eq!(config.msgs_prefix, MsgsPrefix::Gz);
    }

    #[test]
    fn empty_joint_names_are_rejected_with_the_originals_message() {
        let mut config = ur3e();
        config.joint_names.clear();
        let err = config.validate().unwrap_err();
        assert_eq!(err.to_string(), "RobotDriverGazebo: joint_names is empty.");
    }

    #[test]
    fn a_duplicate_joint_name_is_rejected_naming_both_positions() {
        let mut config = ur3e();
        config.joint_names.push("elbow_joint".into());
        let err = config.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo: joint_names has \"elbow_joint\" twice (at 2 and 3)."
        );
    }

    #[test]
    fn an_empty_joint_name_is_rejected() {
        let mut config = ur3e();
        config.joint_names[1].clear();
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "RobotDriverGazebo: joint_names[1] is empty."
        );
    }

    #[test]
    fn empty_topics_and_partition_are_rejected_by_name() {
        let mut config = ur3e();
        config.joint_states_topic.clear();
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "RobotDriverGazebo: joint_states_topic is empty."
        );
        let mut config = ur3e();
        config.joint_positions_topic_prefix.clear();
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "RobotDriverGazebo: joint_positions_topic_prefix is empty."
        );
        let mut config = ur3e();
        config.partition = Some(String::new());
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "RobotDriverGazebo: partition is empty."
        );
    }
}
