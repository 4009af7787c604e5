//! Several robots in one node: the `robots` parameter names parameter groups, one per robot
//! (`r820_sim.joint_names`, …), and `composites` names groups that compose some of them into
//! one more robot. All share the node (one rclrs executor) and one gz-transport node (one
//! discovery participant, one set of sockets); each robot has its own topics, its own control
//! loop (thread and deadline grid) and its own errors. This reads and checks the groups;
//! [`MultiRobot`](crate::MultiRobot) starts them.

use std::collections::HashMap;
use std::sync::Arc;

use rclrs::Node;

use crate::error::ParameterError;
use crate::parameters::config::RobotDriverRosConfiguration;
use crate::parameters::params::{
    DeclaredParameters, GzParameters, NodeParameters, ParameterReader, RobotDefaults,
};

/// A composite's parameters (group `<name>`).
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeParameters {
    /// The group name.
    pub name: String,
    /// The robots composed (groups of `robots`), in joint order.
    pub robots: Vec<String>,
    /// Its ROS side: `robot_name` (default: the group name), `thread_sampling_time_sec` and
    /// `joint_states_stamp` (default: the node's).
    pub ros: RobotDriverRosConfiguration,
}

/// The parameters of a multi-robot node. Keeps them declared for as long as it lives.
#[derive(Debug)]
pub struct MultiRobotParameters {
    /// The node's gz-transport settings (`gz_msgs_prefix`, `gz_partition`), for every robot.
    pub gz: GzParameters,
    /// Each robot's group name and configurations, in `robots` order.
    pub robots: Vec<(String, NodeParameters)>,
    /// The composites, in `composites` order.
    pub composites: Vec<CompositeParameters>,
    _declared: DeclaredParameters,
}

const GROUP_LIST: &str =
    "a string array of parameter group names, e.g. [\"r820_sim\", \"ur3e_sim\"]";

impl MultiRobotParameters {
    /// Reads `robots` (and `composites`); `None` when `robots` is not set, i.e. the node runs
    /// one robot from its ungrouped parameters ([`NodeParameters::declare`]).
    ///
    /// The node's own `thread_sampling_time_sec`, `joint_states_stamp`,
    /// `target_limit_policy`, `target_keepalive_sec` and `initialize_timeout_sec` are the
    /// defaults of every robot's; `gz_msgs_prefix` and `gz_partition` apply to all.
    ///
    /// # Errors
    /// The first parameter that is missing, mistyped or invalid, by name; a group listed
    /// twice; a composite of unknown robots; two robots with the same topics.
    pub fn declare(node: &Node) -> Result<Option<Self>, ParameterError> {
        let mut reader = ParameterReader::new(node);
        let (robots, composites) = declare_group_lists(&mut reader)?;
        if robots.is_empty() {
            if !composites.is_empty() {
                return Err(reader.invalid(
                    "composites",
                    format!("{composites:?} compose robots of this node, but `robots` names none"),
                ));
            }
            return Ok(None);
        }
        let defaults = RobotDefaults::default().declare(&mut reader)?;
        let gz = GzParameters::declare(&mut reader)?;

        let mut groups: HashMap<&str, &'static str> = HashMap::new();
        for (list, group) in robots
            .iter()
            .map(|g| ("robots", g))
            .chain(composites.iter().map(|g| ("composites", g)))
        {
            if let Some(first) = groups.insert(group, list) {
                return Err(reader.invalid(
                    list,
                    format!("{group:?} is also in `{first}`; every group must be distinct"),
                ));
            }
        }

        let robots = robots
            .iter()
            .map(|group| {
                Ok((
                    group.clone(),
                    NodeParameters::declare_robot(node, group, &defaults, &gz)?,
                ))
            })
            .collect::<Result<Vec<_>, ParameterError>>()?;
        let mut declared = reader.into_declared();
        let composites = composites
            .iter()
            .map(|group| {
                let (composite, group_declared) =
                    CompositeParameters::declare(node, group, &robots, &defaults)?;
                declared.extend(group_declared);
                Ok(composite)
            })
            .collect::<Result<Vec<_>, ParameterError>>()?;

        let mut topics: HashMap<&str, &str> = HashMap::new();
        let prefixes = robots
            .iter()
            .map(|(group, p)| (group.as_str(), p.ros.robot_name.as_str()))
            .chain(
                composites
                    .iter()
                    .map(|c| (c.name.as_str(), c.ros.robot_name.as_str())),
            );
        for (group, robot_name) in prefixes {
            if let Some(other) = topics.insert(robot_name, group) {
                return Err(ParameterError::Invalid {
                    name: format!("{group}.robot_name"),
                    problem: format!(
                        "{robot_name:?} is also the robot_name of {other:?}; each robot needs \
                         its own topics"
                    ),
                });
            }
        }
        Ok(Some(MultiRobotParameters {
            gz,
            robots,
            composites,
            _declared: declared,
        }))
    }
}

impl CompositeParameters {
    fn declare(
        node: &Node,
        group: &str,
        robots: &[(String, NodeParameters)],
        defaults: &RobotDefaults,
    ) -> Result<(Self, DeclaredParameters), ParameterError> {
        let mut reader = ParameterReader::group(node, group);
        let parts = reader.mandatory::<Arc<[Arc<str>]>>(
            "robots",
            GROUP_LIST,
            "the robots composed (groups of the node's `robots`), in joint order",
        )?;
        let robot_name = reader.optional::<Arc<str>>(
            "robot_name",
            "a string, e.g. \"longboy_sim\"",
            "prefix of the composite's ROS topics (default: the group name)",
            group.into(),
        )?;
        let period = reader.optional(
            "thread_sampling_time_sec",
            "a double in seconds, e.g. 0.002 (write 1.0, not 1)",
            "the composite's control loop period in seconds",
            defaults.thread_sampling_time_sec,
        )?;
        let stamp = reader.optional(
            "joint_states_stamp",
            "a string, \"node_clock\" or \"gazebo\"",
            "stamp of get/joint_states: node_clock or gazebo (the oldest part's sim time)",
            defaults.joint_states_stamp.clone(),
        )?;
        if parts.is_empty() {
            return Err(reader.invalid("robots", "it is empty; compose at least one robot".into()));
        }
        let mut composed: Vec<String> = Vec::with_capacity(parts.len());
        for part in parts.iter() {
            if !robots.iter().any(|(name, _)| name == &**part) {
                let known: Vec<&str> = robots.iter().map(|(name, _)| name.as_str()).collect();
                return Err(reader.invalid(
                    "robots",
                    format!("{part:?} is not a robot of this node (robots: {known:?})"),
                ));
            }
            if composed.iter().any(|name| name == &**part) {
                return Err(reader.invalid("robots", format!("{part:?} is listed twice")));
            }
            composed.push(part.to_string());
        }
        if robot_name.is_empty() {
            return Err(reader.invalid(
                "robot_name",
                "it is empty; it is the prefix of every topic".into(),
            ));
        }
        // The composite's own period and stamp; the node's values for the other options.
        let ros = RobotDefaults {
            thread_sampling_time_sec: period,
            joint_states_stamp: stamp,
            ..defaults.clone()
        }
        .ros_configuration(&reader, robot_name.to_string())?;
        Ok((
            CompositeParameters {
                name: group.to_string(),
                robots: composed,
                ros,
            },
            reader.into_declared(),
        ))
    }
}

/// `robots` and `composites`, the lists that make a node run several robots.
pub(crate) fn declare_group_lists(
    reader: &mut ParameterReader<'_>,
) -> Result<(Vec<String>, Vec<String>), ParameterError> {
    let robots = group_list(
        reader,
        "robots",
        "robots run by this node, each configured by its group: <robot>.joint_names, \
         <robot>.robot_name (default <robot>), ...; the node's own optional parameters are \
         every robot's defaults",
    )?;
    let composites = group_list(
        reader,
        "composites",
        "composite robots of this node, each composing robots of `robots`: groups <c>.robots \
         (robots composed, in joint order), <c>.robot_name, <c>.thread_sampling_time_sec, ...",
    )?;
    Ok((robots, composites))
}

fn group_list(
    reader: &mut ParameterReader<'_>,
    name: &'static str,
    description: &'static str,
) -> Result<Vec<String>, ParameterError> {
    let groups =
        reader.optional::<Arc<[Arc<str>]>>(name, GROUP_LIST, description, Arc::from([]))?;
    if let Some(bad) = groups.iter().find(|group| !valid_group_name(group)) {
        return Err(reader.invalid(
            name,
            format!(
                "{bad:?} is not a parameter group name: use letters, digits and '_', \
                 starting with a letter"
            ),
        ));
    }
    Ok(groups.iter().map(|group| group.to_string()).collect())
}

fn valid_group_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl MultiRobotParameters {
    /// The topic prefix of robot group `group`.
    pub(crate) fn robot_name(&self, group: &str) -> String {
        self.robots
            .iter()
            .find(|(name, _)| name == group)
            .map_or_else(
                || group.to_string(),
                |(_, robot)| robot.ros.robot_name.clone(),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_are_parameter_name_segments() {
        assert!(valid_group_name("r820_sim"));
        assert!(valid_group_name("ur3e1"));
        for bad in ["", "1robot", "r820.sim", "r820/sim", "r 820", "_x"] {
            assert!(!valid_group_name(bad), "{bad:?}");
        }
    }
}
