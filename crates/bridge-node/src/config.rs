use std::str::FromStr;
use std::time::Duration;

use crate::BridgeError;

/// Where the `header.stamp` of `get/joint_states` comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StampSource {
    /// The node's clock when the state is published (the original's behaviour; ROS time, so
    /// `use_sim_time` applies).
    #[default]
    NodeClock,
    /// Gazebo's simulation time of the message the state came from: a stale state keeps its
    /// old stamp, so consumers can see staleness. Falls back to the node clock (with one
    /// warning) while Gazebo's messages carry no stamp.
    Gazebo,
}

impl FromStr for StampSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "node_clock" => Ok(StampSource::NodeClock),
            "gazebo" => Ok(StampSource::Gazebo),
            other => Err(format!(
                "unknown stamp source {other:?}: expected \"node_clock\" or \"gazebo\""
            )),
        }
    }
}

/// The ROS side's configuration (the original's `RobotDriverROSConfiguration`).
#[derive(Clone, Debug, PartialEq)]
pub struct RobotDriverRosConfiguration {
    /// Topic prefix: topics are `<robot_name>/get/joint_states`, …; a relative name resolves
    /// in the node's namespace (the original's `robot_driver_provider_prefix`).
    pub robot_name: String,
    /// Period of the control loop (`thread_sampling_time_sec`).
    pub thread_sampling_time: Duration,
    /// Stamp of the published joint states.
    pub stamp_source: StampSource,
}

impl RobotDriverRosConfiguration {
    /// A configuration with the original's defaults: 2 ms period, node-clock stamps.
    pub fn new(robot_name: impl Into<String>) -> Self {
        RobotDriverRosConfiguration {
            robot_name: robot_name.into(),
            thread_sampling_time: Duration::from_millis(2),
            stamp_source: StampSource::NodeClock,
        }
    }

    /// Checks what the loop relies on.
    ///
    /// # Errors
    /// An empty `robot_name` or a zero period (the original's clock spun forever on it).
    pub fn validate(&self) -> Result<(), BridgeError> {
        if self.robot_name.is_empty() {
            return Err(BridgeError::Configuration(
                "robot_name is empty; it is the prefix of every topic".into(),
            ));
        }
        if self.thread_sampling_time.is_zero() {
            return Err(BridgeError::Configuration(
                "thread_sampling_time must be greater than zero".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_sources_parse_by_their_parameter_names() {
        assert_eq!("node_clock".parse(), Ok(StampSource::NodeClock));
        assert_eq!("gazebo".parse(), Ok(StampSource::Gazebo));
        assert!("wall"
            .parse::<StampSource>()
            .unwrap_err()
            .contains("\"wall\""));
    }

    #[test]
    fn an_empty_robot_name_and_a_zero_period_are_refused() {
        RobotDriverRosConfiguration::new("ur3e_1")
            .validate()
            .unwrap();
        let err = RobotDriverRosConfiguration::new("").validate().unwrap_err();
        assert!(err.to_string().contains("robot_name is empty"), "{err}");
        let mut config = RobotDriverRosConfiguration::new("ur3e_1");
        config.thread_sampling_time = Duration::ZERO;
        let err = config.validate().unwrap_err();
        assert!(err.to_string().contains("greater than zero"), "{err}");
    }
}
