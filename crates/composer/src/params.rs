//! The composer's parameters: the original's four (`robot_driver_client_names`,
//! `thread_sampling_time_sec`, `override_joint_limits_with_robot_parameter_file`,
//! `robot_parameter_file_path`) and two of the bridge's (`initialize_timeout_sec`,
//! `joint_states_stamp`). Every problem names its parameter.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bridge_node::{
    DeclaredParameters, HelpRow, ParameterError, ParameterReader, RobotDefaults,
    RobotDriverRosConfiguration, StampSource, DEFAULT_THREAD_SAMPLING_TIME_SEC,
};
use rclrs::Node;

use crate::{read_joint_limits, JointLimits};

/// The composer's configuration, read from its node's parameters. Keeps them declared for
/// as long as it lives.
#[derive(Debug)]
pub struct ComposerParameters {
    /// The topic prefixes of the robots composed, in joint order.
    pub robot_driver_client_names: Vec<String>,
    /// The composite's loop period.
    pub thread_sampling_time: Duration,
    /// The limits to report instead of the robots' (from the robot parameter file).
    pub joint_limits: Option<JointLimits>,
    /// How long to wait for the robots' topics (`None`: until stopped).
    pub initialize_timeout: Option<Duration>,
    /// Stamp of the composite's joint states.
    pub stamp_source: StampSource,
    /// The bridge's publishing options (`joint_states_publishing`, `target_forwarding`,
    /// `state_timeout_sec`, `stale_joint_states`, `realtime_priority`), with the node's name.
    pub ros_options: RobotDriverRosConfiguration,
    _declared: DeclaredParameters,
}

impl ComposerParameters {
    /// Declares the parameters on `node` and reads the robot parameter file if asked to.
    ///
    /// # Errors
    /// The first parameter that is missing, mistyped or invalid, by name; an unreadable or
    /// unusable robot parameter file (named by `robot_parameter_file_path`).
    pub fn declare(node: &Node) -> Result<Self, ParameterError> {
        let mut reader = ParameterReader::new(node);
        let declared = declare_all(&mut reader)?;
        let joint_limits = match declared.robot_parameter_file_path {
            Some(path) => Some(
                read_joint_limits(&PathBuf::from(&*path))
                    .map_err(|err| reader.invalid("robot_parameter_file_path", err.to_string()))?,
            ),
            None => None,
        };
        let ros_options = declared.options.ros_configuration(&reader, node.name())?;

        let mut robot_driver_client_names: Vec<String> = Vec::with_capacity(declared.names.len());
        for name in declared.names.iter() {
            if name.is_empty() {
                return Err(reader.invalid(
                    "robot_driver_client_names",
                    "it has an empty name; each is a robot's topic prefix".into(),
                ));
            }
            if robot_driver_client_names.iter().any(|n| n == &**name) {
                return Err(reader.invalid(
                    "robot_driver_client_names",
                    format!("{name:?} is listed twice; each robot can be composed once"),
                ));
            }
            robot_driver_client_names.push(name.to_string());
        }
        if robot_driver_client_names.is_empty() {
            return Err(reader.invalid(
                "robot_driver_client_names",
                "it is empty; compose at least one robot".into(),
            ));
        }
        let period = declared.period;
        let thread_sampling_time = seconds(&reader, "thread_sampling_time_sec", period)?
            .ok_or_else(|| {
                reader.invalid(
                    "thread_sampling_time_sec",
                    format!("{period} s; it must be greater than zero (at least 1 ns)"),
                )
            })?;
        let initialize_timeout = seconds(
            &reader,
            "initialize_timeout_sec",
            declared.initialize_timeout,
        )?;
        let stamp_source = declared
            .stamp
            .parse::<StampSource>()
            .map_err(|problem| reader.invalid("joint_states_stamp", problem))?;
        Ok(ComposerParameters {
            robot_driver_client_names,
            thread_sampling_time,
            joint_limits,
            initialize_timeout,
            stamp_source,
            ros_options,
            _declared: reader.into_declared(),
        })
    }
}

/// The composer's parameters as declared, before they are checked.
struct Declared {
    names: Arc<[Arc<str>]>,
    period: f64,
    /// Set when the limits are overridden from the file.
    robot_parameter_file_path: Option<Arc<str>>,
    initialize_timeout: f64,
    stamp: Arc<str>,
    options: RobotDefaults,
}

/// Declares every parameter of the composer with `reader` (on its node, or for `--help`).
fn declare_all(reader: &mut ParameterReader<'_>) -> Result<Declared, ParameterError> {
    let names = reader.mandatory::<Arc<[Arc<str>]>>(
        "robot_driver_client_names",
        "a string array of robot topic prefixes, e.g. [\"r820_sim\", \"ur3e_sim\"]",
        "the robots composed, by the prefix of their topics, in joint order",
    )?;
    let period = reader.optional(
        "thread_sampling_time_sec",
        "a double in seconds, e.g. 0.002 (write 1.0, not 1)",
        "control loop period in seconds",
        DEFAULT_THREAD_SAMPLING_TIME_SEC,
    )?;
    let override_limits = reader.optional(
        "override_joint_limits_with_robot_parameter_file",
        "a bool",
        "report the joint limits of robot_parameter_file_path instead of the robots'",
        false,
    )?;
    // Declared only when it is used; `--help` lists it anyway.
    let robot_parameter_file_path = if override_limits || reader.is_for_help() {
        Some(reader.mandatory::<Arc<str>>(
            "robot_parameter_file_path",
            "a string, the path of a DQ_SerialManipulatorDH JSON file",
            "DQ Robotics robot parameter file whose lower/upper_q_limit are reported (mandatory \
             when override_joint_limits_with_robot_parameter_file is true)",
        )?)
        .filter(|_| override_limits)
    } else {
        None
    };
    let initialize_timeout = reader.optional(
        "initialize_timeout_sec",
        "a double in seconds, e.g. 0.0 or 30.0",
        "how long to wait for the robots' topics; 0 waits until stopped (as the original)",
        0.0,
    )?;
    let stamp = reader.optional::<Arc<str>>(
        "joint_states_stamp",
        "a string, \"node_clock\" or \"gazebo\"",
        "stamp of get/joint_states: node_clock (publication time) or gazebo (the oldest \
         robot's stamp)",
        "node_clock".into(),
    )?;
    let options = RobotDefaults::default().declare_publishing_options(reader)?;
    Ok(Declared {
        names,
        period,
        robot_parameter_file_path,
        initialize_timeout,
        stamp,
        options,
    })
}

/// The composer's parameters as its `--help` lists them: recorded by the declarations that
/// read them (see [`ParameterReader::for_help`]), so no default in the help can be stale.
pub fn help_rows() -> Vec<HelpRow> {
    let mut reader = ParameterReader::for_help();
    declare_all(&mut reader).expect("a help reader fails nothing");
    let mut rows = reader.help_rows().to_vec();
    rows.push(bridge_node::use_sim_time_row());
    rows
}

/// A finite, non-negative number of seconds, at most
/// [`LONGEST_DURATION`](sas_driver_contract::LONGEST_DURATION) (a deadline past what the
/// clock holds would panic); `None` for 0.
fn seconds(
    reader: &ParameterReader<'_>,
    name: &str,
    value: f64,
) -> Result<Option<Duration>, ParameterError> {
    let duration = sas_driver_contract::duration_from_secs(value)
        .map_err(|problem| reader.invalid(name, problem))?;
    Ok((!duration.is_zero()).then_some(duration))
}
