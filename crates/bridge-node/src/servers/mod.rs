//! The original package's two other programs, on the same process shell as the robot driver
//! ([`program_main`](crate::program_main): the same command line, logs, stop signals and
//! bounded stop), each a [`Program`](crate::Program) whose `--help` table is made by the
//! declarations that read its parameters:
//!
//! * [`simulator`]: `sas_simulator_server_gazebo_node`, SmartArmStack's simulator-server
//!   surface (`<node>/start_simulation`, `<node>/stop_simulation`, `std_srvs/Trigger`) over
//!   Gazebo's world control service;
//! * [`objects`]: `sas_object_server_gazebo_node`, SmartArmStack's object-server surface
//!   (`<entity>/get/pose`, `<entity>/set/pose`, `geometry_msgs/PoseStamped`) over Gazebo's
//!   entity poses (a `Pose_V` topic) and its `set_pose` service.
//!
//! Neither runs a periodic loop: a Gazebo call runs on a thread of its own with a bounded
//! timeout, so the ROS executor is never held by Gazebo, and poses are published as Gazebo's
//! messages arrive.

pub mod objects;
pub mod simulator;
mod world;

use std::sync::Arc;
use std::time::Duration;

use gz_transport::NodeOptions;
use rclrs::Executor;
use sas_robot_driver_gazebo::ShutdownToken;

use crate::process::program::{parameters_or_usage, while_spinning};
use crate::{
    use_sim_time_row, GzParameters, HelpRow, NodeExit, NodeRun, ParameterError, ParameterReader,
    Teardown,
};

/// `thread_sampling_time_sec` of both servers unless set (the original's 100 Hz).
pub const DEFAULT_SERVER_SAMPLING_TIME_SEC: f64 = 0.01;
/// How long a Gazebo service call may take unless `gazebo_timeout_sec` says otherwise.
pub const DEFAULT_GAZEBO_TIMEOUT_SEC: f64 = 2.0;
/// How often a server that has not found Gazebo yet says so.
const WAITING_NOTE_INTERVAL: Duration = Duration::from_secs(5);

/// A server's parameters, and the server's work with them: with its `--help` text, all a
/// server program is ([`run_server`] and [`help_rows`] make the rest).
pub trait ServerParameters: Sized {
    /// Declares and reads the parameters with `reader`: on the node (which keeps them
    /// declared as long as the reader's declarations live), or for `--help`.
    ///
    /// # Errors
    /// A parameter missing, mistyped or invalid, by name.
    fn declare(reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError>;

    /// The server's work on its node with these parameters and `gz`, its gz-transport node,
    /// until the stop.
    fn serve(&self, run: NodeRun<'_>, gz: gz_transport::Node) -> NodeExit;

    /// `gz_msgs_prefix` and `gz_partition`: the settings of the server's gz-transport node.
    fn gz(&self) -> &GzParameters;
}

/// The work of the server of parameters `P` on its node until the stop: its parameters read
/// (a bad one is a usage error) and kept declared meanwhile, its gz-transport node started,
/// then [`ServerParameters::serve`].
pub fn run_server<P: ServerParameters>(run: NodeRun<'_>) -> NodeExit {
    run.teardown.stage("reading the parameters");
    let mut reader = ParameterReader::new(run.node);
    let parameters = match parameters_or_usage(P::declare(&mut reader)) {
        Ok(parameters) => parameters,
        Err(exit) => return exit,
    };
    let _declared = reader.into_declared();
    run.teardown.stage("creating the gz-transport node");
    let gz = match gz_node(parameters.gz()) {
        Ok(gz) => gz,
        Err(exit) => return exit,
    };
    parameters.serve(run, gz)
}

/// The parameters of the server of parameters `P` as its `--help` lists them: recorded by
/// [`ServerParameters::declare`] itself, with `use_sim_time`, which the node declares too.
pub fn help_rows<P: ServerParameters>() -> Vec<HelpRow> {
    let mut reader = ParameterReader::for_help();
    // Without a node nothing fails: every value is a default, and no check runs.
    P::declare(&mut reader).expect("a help reader fails nothing");
    let mut rows = reader.help_rows().to_vec();
    rows.push(use_sim_time_row());
    rows
}

/// `value`, just declared as parameter `name`, through `check` (which says what is wrong with
/// it, or makes of it what the server uses). A help reader's values are stand-ins (a
/// mandatory parameter's is empty), not given ones: they pass unchecked.
fn checked<T>(
    reader: &ParameterReader<'_>,
    name: &str,
    value: T,
    check: impl FnOnce(T) -> Result<T, String>,
) -> Result<T, ParameterError> {
    if reader.is_for_help() {
        return Ok(value);
    }
    check(value).map_err(|problem| reader.invalid(name, problem))
}

/// Spins `executor` on its own thread until `shutdown`, then stops it (the servers' callbacks
/// do their work; the caller's thread has nothing else to do meanwhile but `meanwhile`).
fn spin_until_shutdown(
    executor: Executor,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
    meanwhile: impl FnOnce(),
) -> Result<(), NodeExit> {
    while_spinning(executor, teardown, "serving (until stopped)", || {
        meanwhile();
        shutdown.wait_timeout(Duration::MAX);
    })
}

/// A gz-transport node for a server, with the node's `gz_msgs_prefix` and `gz_partition`;
/// if it cannot start, the server's end (logged).
fn gz_node(gz: &GzParameters) -> Result<gz_transport::Node, NodeExit> {
    gz_transport::Node::with_options(NodeOptions {
        partition: gz.partition.clone(),
        msgs_prefix: gz.msgs_prefix,
        ..NodeOptions::default()
    })
    .map_err(|err| {
        tracing::error!("::Exception::cannot start gz-transport: {err}");
        NodeExit::Failure
    })
}

/// Declares a positive, finite number of seconds.
fn positive_seconds(
    reader: &mut ParameterReader<'_>,
    name: &str,
    description: &'static str,
    default: f64,
) -> Result<Duration, ParameterError> {
    let value = reader.optional::<f64>(name, "a number of seconds > 0", description, default)?;
    let value = checked(reader, name, value, |value| {
        if !(value.is_finite() && value > 0.0 && value <= 3600.0) {
            return Err(format!("{value} is not a number of seconds in (0, 3600]"));
        }
        Ok(value)
    })?;
    Ok(Duration::from_secs_f64(value))
}

/// Declares a mandatory gz-transport service or topic name (absolute, as Gazebo's are).
fn gz_name(
    reader: &mut ParameterReader<'_>,
    name: &str,
    expected: &'static str,
    description: &'static str,
) -> Result<String, ParameterError> {
    let value = reader.mandatory::<Arc<str>>(name, expected, description)?;
    checked(reader, name, value.to_string(), |value| {
        if !value.starts_with('/') || value.len() < 2 || value.chars().any(char::is_whitespace) {
            return Err(format!(
                "{value:?} is not a Gazebo name: it must start with '/' and hold no spaces"
            ));
        }
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    use super::objects::ObjectServerParameters;
    use super::simulator::SimulatorServerParameters;
    use super::*;

    /// The rows' names, one space between two.
    fn names(rows: &[HelpRow]) -> String {
        let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
        names.join(" ")
    }

    fn default_of<'a>(rows: &'a [HelpRow], name: &str) -> Option<&'a str> {
        let row = rows.iter().find(|row| row.name == name);
        row.unwrap_or_else(|| panic!("no row {name}"))
            .default
            .as_deref()
    }

    #[test]
    fn a_servers_help_rows_are_its_declarations_in_order_with_their_defaults() {
        let simulator = help_rows::<SimulatorServerParameters>();
        assert_eq!(
            names(&simulator),
            "service_name autostart thread_sampling_time_sec gazebo_timeout_sec \
             clock_topic_name gz_msgs_prefix gz_partition use_sim_time"
        );
        assert_eq!(default_of(&simulator, "service_name"), None, "mandatory");
        assert_eq!(default_of(&simulator, "clock_topic_name"), Some("\"\""));
        assert_eq!(
            default_of(&simulator, "thread_sampling_time_sec"),
            Some("0.01")
        );

        let objects = help_rows::<ObjectServerParameters>();
        assert_eq!(
            names(&objects),
            "set_pose_service_name get_pose_topic_name entity_names thread_sampling_time_sec \
             publish_unchanged_poses gazebo_timeout_sec gz_msgs_prefix gz_partition use_sim_time"
        );
        assert_eq!(default_of(&objects, "entity_names"), None, "mandatory");
        assert_eq!(default_of(&objects, "gazebo_timeout_sec"), Some("2.0"));
        assert_eq!(
            default_of(&objects, "publish_unchanged_poses"),
            Some("false")
        );
    }
}
