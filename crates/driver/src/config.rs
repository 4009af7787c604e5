use std::collections::HashMap;
use std::time::Duration;

use gz_transport::MsgsPrefix;

#[cfg(test)]
use crate::duration_from_secs;
use crate::{Command, DriverError, ForwardMode, LimitPolicy, LONGEST_DURATION};

/// The driver's configuration. Fields are public so bindings can fill them one by one (as the
/// original's Python `RobotDriverGazeboConfiguration()` does); [`RobotDriverGazebo::new`]
/// validates them.
///
/// [`RobotDriverGazebo::new`]: crate::RobotDriverGazebo::new
#[derive(Clone, Debug, PartialEq)]
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
    /// Velocity command topic prefix: joint `j` is commanded on `prefix + j + "/cmd_vel"`
    /// (Gazebo's JointController in velocity mode); `None` takes the positions prefix (so a
    /// world with Gazebo's default topics works).
    pub joint_velocities_topic_prefix: Option<String>,
    /// Effort command topic prefix: joint `j` is commanded on `prefix + j + "/cmd_force"`
    /// (Gazebo's ApplyJointForce); `None` takes the positions prefix.
    pub joint_forces_topic_prefix: Option<String>,
    /// Per joint, the largest velocity a target may ask for (`<limit><velocity>`, the range
    /// is ±it; +inf: none); empty: none known. Gazebo's JointStatePublisher does not send
    /// these, so they come from the configuration.
    pub velocity_limits: Vec<f64>,
    /// Per joint, the largest effort a target may ask for (`<limit><effort>`), as
    /// `velocity_limits`.
    pub effort_limits: Vec<f64>,
    /// How long a velocity or effort target stays in force without a new one: past it,
    /// `forward_targets` sends zero once (a client that died leaves nothing latched).
    pub command_timeout: Duration,
}

/// The default of [`RobotDriverGazeboConfiguration::command_timeout`]: a controller at 20 Hz
/// or faster (sas controllers run at hundreds) sends several targets within it, and a loaded
/// machine's stalls of tens of milliseconds do not cut a live client off; a joint at
/// π rad/s moves at most 0.31 rad after its client died.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_millis(100);

impl Default for RobotDriverGazeboConfiguration {
    /// Empty names and topics (to be filled), and the defaults of [`new`](Self::new).
    fn default() -> Self {
        RobotDriverGazeboConfiguration {
            joint_names: Vec::new(),
            joint_positions_topic_prefix: String::new(),
            joint_states_topic: String::new(),
            msgs_prefix: MsgsPrefix::default(),
            partition: None,
            limit_policy: LimitPolicy::default(),
            initialize_timeout: None,
            forward_mode: ForwardMode::default(),
            joint_velocities_topic_prefix: None,
            joint_forces_topic_prefix: None,
            velocity_limits: Vec::new(),
            effort_limits: Vec::new(),
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }
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
        for (prefix, parameter) in [
            (
                &self.joint_velocities_topic_prefix,
                "joint_velocities_topic_prefix",
            ),
            (&self.joint_forces_topic_prefix, "joint_forces_topic_prefix"),
        ] {
            if prefix.as_deref() == Some("") {
                return Err(DriverError::EmptyParameter { parameter });
            }
        }
        for (limits, parameter) in [
            (&self.velocity_limits, "joint_velocity_limits"),
            (&self.effort_limits, "joint_effort_limits"),
        ] {
            if !limits.is_empty() && limits.len() != self.joint_names.len() {
                return Err(DriverError::InvalidParameter {
                    parameter,
                    problem: format!(
                        "it has {} values for {} joints (one per joint, or none)",
                        limits.len(),
                        self.joint_names.len()
                    ),
                });
            }
            if let Some(index) = limits
                .iter()
                .position(|&limit| limit.is_nan() || limit <= 0.0)
            {
                return Err(DriverError::InvalidParameter {
                    parameter,
                    problem: format!(
                        "value {index} ({}) is {}; a limit is positive (inf: none)",
                        self.joint_names[index], limits[index]
                    ),
                });
            }
        }
        let durations = [
            ("command_timeout", Some(self.command_timeout)),
            ("initialize_timeout", self.initialize_timeout),
            (
                "forward_mode",
                match self.forward_mode {
                    ForwardMode::OnChangeWithKeepalive(keepalive) => Some(keepalive),
                    _ => None,
                },
            ),
        ];
        for (parameter, duration) in durations {
            if let Some(duration) = duration.filter(|&duration| duration > LONGEST_DURATION) {
                return Err(DriverError::InvalidParameter {
                    parameter,
                    problem: format!(
                        "{} s is longer than the longest accepted duration, {} s",
                        duration.as_secs_f64(),
                        LONGEST_DURATION.as_secs()
                    ),
                });
            }
        }
        if self.command_timeout.is_zero() {
            return Err(DriverError::InvalidParameter {
                parameter: "command_timeout",
                problem: "it is zero; a velocity or effort command must time out".into(),
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
        self.command_topic_of(Command::Positions, joint_name)
    }

    /// The topic prefix of `command`'s topics.
    pub fn topic_prefix(&self, command: Command) -> &str {
        let positions = &self.joint_positions_topic_prefix;
        match command {
            Command::Positions => positions,
            Command::Velocities => self
                .joint_velocities_topic_prefix
                .as_ref()
                .unwrap_or(positions),
            Command::Forces => self.joint_forces_topic_prefix.as_ref().unwrap_or(positions),
        }
    }

    /// The topic joint `joint_name` takes `command`'s targets on: `prefix + joint_name +`
    /// `/0/cmd_pos`, `/cmd_vel` or `/cmd_force` (Gazebo's default topics).
    pub fn command_topic_of(&self, command: Command, joint_name: &str) -> String {
        format!(
            "{}{joint_name}{}",
            self.topic_prefix(command),
            command.topic_suffix()
        )
    }

    /// `(lower, upper)` of `command`'s targets for `joint_count` joints: ±the configured
    /// velocity/effort limits, ±inf where none is known (never for positions: those come
    /// from Gazebo).
    pub(crate) fn rate_limits(&self, command: Command) -> (Vec<f64>, Vec<f64>) {
        let limits = match command {
            Command::Velocities => &self.velocity_limits,
            _ => &self.effort_limits,
        };
        let upper: Vec<f64> = if limits.is_empty() {
            vec![f64::INFINITY; self.joint_names.len()]
        } else {
            limits.clone()
        };
        (upper.iter().map(|limit| -limit).collect(), upper)
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
        assert_eq!(config.command_timeout, DEFAULT_COMMAND_TIMEOUT);
    }

    #[test]
    fn velocity_and_effort_topics_default_to_the_positions_prefix() {
        let mut config = ur3e();
        assert_eq!(
            config.command_topic_of(Command::Velocities, "elbow_joint"),
            "/model/ur3e/joint/elbow_joint/cmd_vel"
        );
        config.joint_forces_topic_prefix = Some("/arm/".into());
        assert_eq!(
            config.command_topic_of(Command::Forces, "elbow_joint"),
            "/arm/elbow_joint/cmd_force"
        );
        assert_eq!(
            config.rate_limits(Command::Forces),
            (vec![f64::NEG_INFINITY; 3], vec![f64::INFINITY; 3])
        );
        config.velocity_limits = vec![3.0, 3.0, f64::INFINITY];
        assert_eq!(
            config.rate_limits(Command::Velocities),
            (
                vec![-3.0, -3.0, f64::NEG_INFINITY],
                vec![3.0, 3.0, f64::INFINITY]
            )
        );
    }

    #[test]
    fn rate_limits_and_the_command_timeout_are_checked() {
        let mut config = ur3e();
        config.velocity_limits = vec![1.0, 2.0];
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "RobotDriverGazebo: joint_velocity_limits is invalid: it has 2 values for 3 joints (one per joint, or none)."
        );
        config.velocity_limits = vec![1.0, f64::NAN, 1.0];
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("value 1 (shoulder_lift_joint) is NaN"));
        let mut config = ur3e();
        config.command_timeout = Duration::ZERO;
        assert!(config.validate().is_err());
    }

    #[test]
    fn durations_past_the_longest_accepted_are_refused_naming_the_limit() {
        // 1e18 s is finite; as a deadline (`Instant + Duration`) it panics.
        let huge = Duration::from_secs_f64(1e18);
        for set in [
            |c: &mut RobotDriverGazeboConfiguration, d| c.command_timeout = d,
            |c: &mut RobotDriverGazeboConfiguration, d| c.initialize_timeout = Some(d),
            |c: &mut RobotDriverGazeboConfiguration, d| {
                c.forward_mode = ForwardMode::OnChangeWithKeepalive(d)
            },
        ] {
            let mut config = ur3e();
            set(&mut config, huge);
            let err = config.validate().unwrap_err().to_string();
            assert!(
                err.contains("longest accepted duration, 1000000000 s"),
                "{err}"
            );
            set(&mut config, LONGEST_DURATION);
            config.validate().unwrap();
        }
        assert_eq!(duration_from_secs(1e9), Ok(LONGEST_DURATION));
        let err = duration_from_secs(1e18).unwrap_err();
        assert!(
            err.contains(
                "1000000000000000000 s is longer than the longest accepted duration, 1000000000 s"
            ),
            "{err}"
        );
        assert!(duration_from_secs(f64::INFINITY)
            .unwrap_err()
            .contains("not a finite"));
        assert!(duration_from_secs(-1.0)
            .unwrap_err()
            .contains("non-negative"));
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
