//! The three command modes of a sas robot driver (positions, velocities, efforts), with the
//! names errors and messages give them.

use std::fmt;

/// A command mode of a sas driver: what a target's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Joint positions, to Gazebo's JointPositionController (`<prefix><joint>/0/cmd_pos`).
    Positions,
    /// Joint velocities, to Gazebo's JointController in velocity mode
    /// (`<prefix><joint>/cmd_vel`).
    Velocities,
    /// Joint efforts (torques/forces), to Gazebo's ApplyJointForce
    /// (`<prefix><joint>/cmd_force`).
    Forces,
}

impl Command {
    /// The driver method that takes this mode's targets, as errors name it.
    pub fn method(self) -> &'static str {
        match self {
            Command::Positions => "set_target_joint_positions",
            Command::Velocities => "set_target_joint_velocities",
            Command::Forces => "set_target_joint_forces",
        }
    }

    /// What follows `<prefix><joint>` in the command topic (Gazebo's default topics).
    pub fn topic_suffix(self) -> &'static str {
        match self {
            Command::Positions => "/0/cmd_pos",
            Command::Velocities => "/cmd_vel",
            Command::Forces => "/cmd_force",
        }
    }

    /// The parameter naming this mode's topic prefix.
    pub fn prefix_parameter(self) -> &'static str {
        match self {
            Command::Positions => "joint_positions_topic_prefix",
            Command::Velocities => "joint_velocities_topic_prefix",
            Command::Forces => "joint_forces_topic_prefix",
        }
    }

    /// The Gazebo system that listens to this mode's topic.
    pub fn gazebo_system(self) -> &'static str {
        match self {
            Command::Positions => "JointPositionController",
            Command::Velocities => "JointController (velocity mode)",
            Command::Forces => "ApplyJointForce",
        }
    }

    /// The limits this mode's targets are checked against, for messages.
    pub fn limits_name(self) -> &'static str {
        match self {
            Command::Positions => "joint limits",
            Command::Velocities => "velocity limits",
            Command::Forces => "effort limits",
        }
    }

    /// The two rate modes (velocities, efforts) by index; `None` for positions.
    pub fn rate_index(self) -> Option<usize> {
        match self {
            Command::Positions => None,
            Command::Velocities => Some(0),
            Command::Forces => Some(1),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}
