//! The topics of a sas robot driver under its prefix, named once.

use sas_driver_contract::Command;

/// Every topic a client of the driver at `prefix` reads or writes (`<prefix>/get/…`,
/// `<prefix>/set/…`), as the original `sas::RobotDriverClient` names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topics {
    /// `get/joint_states` (`sensor_msgs/JointState`).
    pub joint_states: String,
    /// `get/joint_positions_min` (`std_msgs/Float64MultiArray`).
    pub joint_positions_min: String,
    /// `get/joint_positions_max`.
    pub joint_positions_max: String,
    /// `get/home_states` (`std_msgs/Int32MultiArray`).
    pub home_states: String,
    /// `set/target_joint_positions` (`std_msgs/Float64MultiArray`).
    pub target_joint_positions: String,
    /// `set/target_joint_velocities`.
    pub target_joint_velocities: String,
    /// `set/target_joint_forces`.
    pub target_joint_forces: String,
    /// `set/homing_signal` (`std_msgs/Int32MultiArray`).
    pub homing_signal: String,
    /// `set/clear_positions` (`std_msgs/Int32MultiArray`).
    pub clear_positions: String,
    /// `set/watchdog_trigger` (`sas_msgs/WatchdogTrigger`).
    pub watchdog_trigger: String,
    /// `set/shutdown` (`sas_msgs/Bool`).
    pub shutdown: String,
}

impl Topics {
    /// The topics under `prefix` (`/ur3e_1`, or relative: `r820_sim`).
    pub fn new(prefix: &str) -> Self {
        let topic = |suffix: &str| format!("{prefix}/{suffix}");
        Topics {
            joint_states: topic("get/joint_states"),
            joint_positions_min: topic("get/joint_positions_min"),
            joint_positions_max: topic("get/joint_positions_max"),
            home_states: topic("get/home_states"),
            target_joint_positions: topic("set/target_joint_positions"),
            target_joint_velocities: topic("set/target_joint_velocities"),
            target_joint_forces: topic("set/target_joint_forces"),
            homing_signal: topic("set/homing_signal"),
            // The original client publishes on `set/clear_positions_signal`, a topic no
            // server listens on (RobotDriverServer subscribes to `set/clear_positions`).
            clear_positions: topic("set/clear_positions"),
            watchdog_trigger: topic("set/watchdog_trigger"),
            shutdown: topic("set/shutdown"),
        }
    }

    /// The `set/target_joint_*` topic a target of `command` goes to.
    pub fn target(&self, command: Command) -> &str {
        match command {
            Command::Positions => &self.target_joint_positions,
            Command::Velocities => &self.target_joint_velocities,
            Command::Forces => &self.target_joint_forces,
        }
    }

    /// The `get/joint_positions_min` (`upper == false`) or `…_max` topic.
    pub fn limits(&self, upper: bool) -> &str {
        if upper {
            &self.joint_positions_max
        } else {
            &self.joint_positions_min
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_the_originals_under_the_prefix_and_targets_follow_the_command() {
        let topics = Topics::new("/ur3e_1");
        assert_eq!(topics.joint_states, "/ur3e_1/get/joint_states");
        assert_eq!(topics.limits(true), "/ur3e_1/get/joint_positions_max");
        assert_eq!(topics.clear_positions, "/ur3e_1/set/clear_positions");
        assert_eq!(
            topics.target(Command::Forces),
            "/ur3e_1/set/target_joint_forces"
        );
        assert_eq!(
            Topics::new("r820_sim").target(Command::Positions),
            "r820_sim/set/target_joint_positions"
        );
    }
}
