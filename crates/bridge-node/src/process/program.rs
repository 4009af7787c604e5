//! The one process shell of the workspace's four node programs (the driver node, the
//! composer, the simulator server and the object server): a [`Program`] says what a program
//! is — its names, what its `--help` says, its parameters as their declarations record them —
//! and [`program_main`] is every program's `main`: command line, logs, stop signals, the ROS
//! context and the node ([`run_ros_node`]), the bound on the stop and the exit status
//! ([`NodeExit`]). A program brings only the work it does on its node.

use std::process::ExitCode;

use rclrs::{Context, CreateBasicExecutor, Executor, InitOptions, Logger, Node};
use sas_robot_driver_gazebo::ShutdownToken;
use tracing_subscriber::EnvFilter;

use crate::process::dds_profile::DdsProfile;
use crate::{
    help_table, install_log_route, route_logs_to, ExecutorThread, HelpRow, ParameterError,
    RosLogLayer, SimTimeNotice, StopSignals, Teardown, TEARDOWN_BOUND,
};

/// How a node run ended, as the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeExit {
    /// Stopped by a signal (or its token), at whatever stage: 0.
    Stopped,
    /// A bad command line or parameter: 2.
    Usage,
    /// Anything else (with several robots: once all stopped, if any failed): 1.
    Failure,
}

impl NodeExit {
    /// The exit status.
    pub fn code(self) -> u8 {
        match self {
            NodeExit::Stopped => 0,
            NodeExit::Usage => 2,
            NodeExit::Failure => 1,
        }
    }
}

/// A program's node as the program's work gets it from the shell ([`program_main`]).
pub struct NodeRun<'a> {
    /// The node, named as [`Program::node_name`] unless remapped.
    pub node: &'a Node,
    /// Its executor, to spin while the work runs (see [`ExecutorThread`]).
    pub executor: Executor,
    /// The process's stop token: SIGINT, SIGTERM and SIGHUP trigger it.
    pub shutdown: &'a ShutdownToken,
    /// The bound on the stop, with its stages.
    pub teardown: &'a Teardown,
}

/// A node program as its shell ([`program_main`]) needs it.
pub struct Program {
    /// The binary's name, as `--version` prints it.
    pub name: &'static str,
    /// The node's name unless remapped (`--ros-args -r __node:=…`); it also starts the lines
    /// printed before the node exists and names the stop's watchdog.
    pub node_name: &'static str,
    /// What the program does: the first paragraph of `--help`.
    pub about: &'static str,
    /// Every parameter the node declares, recorded by the declarations that read them
    /// ([`ParameterReader::for_help`](crate::ParameterReader::for_help)): `--help`'s table,
    /// in which no default can be stale.
    pub parameters: fn() -> Vec<HelpRow>,
    /// What `--help` says after the table: what no table says, and examples.
    pub notes: &'static str,
}

impl Program {
    /// The command line: no options of its own but `--help` and `--version` (the node's
    /// parameters come from `--ros-args`), the parameter table after them.
    fn command(&self) -> clap::Command {
        clap::Command::new(self.name)
            .version(env!("CARGO_PKG_VERSION"))
            .about(self.about)
            .after_help(format!(
                "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n{}\n{}",
                help_table(&(self.parameters)()),
                self.notes
            ))
    }
}

/// The `main` of `program`: clap's `--help`/`--version` (which exit there) on the arguments
/// without the ROS ones, log lines to stderr until a node's logger takes them,
/// SIGINT/SIGTERM/SIGHUP triggering the stop token for the whole process, then the node
/// ([`run_ros_node`]) with `run` doing the program's work on it until the token; the stop is
/// bounded by [`TEARDOWN_BOUND`] up to and including the process's exit handlers (DDS's
/// among them). Exits with `run`'s [`NodeExit`].
pub fn program_main(program: &Program, run: impl FnOnce(NodeRun<'_>) -> NodeExit) -> ExitCode {
    let name = program.node_name;
    let args: Vec<String> = std::env::args().collect();
    match rclrs::extract_non_ros_args(args.clone()) {
        Ok(own_args) => {
            program.command().get_matches_from(own_args);
        }
        Err(err) => {
            eprintln!("{name}: invalid ROS arguments: {err}");
            return ExitCode::from(NodeExit::Usage.code());
        }
    }
    install_log_route(EnvFilter::new("info"));
    let shutdown = ShutdownToken::new();
    match StopSignals::install(shutdown.clone()) {
        Ok(signals) => signals.keep_until_exit(),
        Err(err) => {
            eprintln!("{name}: cannot install the SIGINT/SIGTERM/SIGHUP handlers: {err}");
            return ExitCode::FAILURE;
        }
    }
    let teardown = match Teardown::spawn(name, TEARDOWN_BOUND) {
        Ok(teardown) => teardown,
        Err(err) => {
            eprintln!("{name}: cannot start the stop watchdog: {err}");
            return ExitCode::FAILURE;
        }
    };
    let exit = run_ros_node(args, name, name, &shutdown, &teardown, run);
    // Still watched: the exit handlers (DDS's among them) run after this.
    teardown.stage("exiting (the process's exit handlers)");
    ExitCode::from(exit.code())
}

/// ROS initialised from `args` (`--ros-args …`), a node named `default_node_name` unless
/// remapped, `body` run on it (with its executor, `shutdown` and `teardown`), then the node
/// and the context dropped in order. Every line logged meanwhile and after goes to the
/// node's logger ([`LogRoute::keep`]; before the node exists, to a logger of the name it will
/// have), so all of them are in the ROS console format. `program` starts the lines printed when ROS cannot start. The stop is bounded by
/// `teardown` from the trigger of `shutdown` (or the end of `body`) on.
///
/// [`LogRoute::keep`]: crate::LogRoute::keep
pub fn run_ros_node(
    args: Vec<String>,
    default_node_name: &str,
    program: &str,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
    body: impl FnOnce(NodeRun<'_>) -> NodeExit,
) -> NodeExit {
    let _countdown = teardown.begin_on(shutdown);
    if let Ok(logger) = Logger::new(node_logger_name(&args, default_node_name)) {
        route_logs_to(RosLogLayer::new(logger)).keep();
    }
    // Opt-in: the parent's exit stops the node as a signal does.
    if let Err(err) = StopSignals::stop_with_parent_from_env() {
        tracing::error!("::Exception::{err}");
        return NodeExit::Usage;
    }

    teardown.stage("initialising ROS");
    // Read by Fast DDS when the node's participant is created; restored once the node exists.
    let dds_profile = DdsProfile::apply();
    let context = match Context::new(args, InitOptions::new()) {
        Ok(context) => context,
        Err(err) => {
            eprintln!("{program}: cannot initialise ROS (check --ros-args): {err}");
            return NodeExit::Usage;
        }
    };
    let executor = context.create_basic_executor();
    teardown.stage("creating the node");
    let node = match executor.create_node(default_node_name) {
        Ok(node) => node,
        Err(err) => {
            eprintln!("{program}: cannot create the node: {err}");
            return NodeExit::Failure;
        }
    };
    rclrs::log_info!(node.logger(), "::DDS: {}.", dds_profile.note());
    drop(dds_profile);
    route_logs_to(RosLogLayer::new(node.logger().clone())).keep();
    let sim_time = SimTimeNotice::start(&node);
    let exit = body(NodeRun {
        node: &node,
        executor,
        shutdown,
        teardown,
    });
    drop(sim_time);
    teardown.begin();
    teardown.stage("destroying the node");
    drop(node);
    teardown.stage("shutting down the ROS context");
    drop(context);
    teardown.stage("returning from the node");
    exit
}

/// The parameters just read, said OK in the log; or, for a bad one (logged), the run's end as
/// a usage error.
pub fn parameters_or_usage<P>(read: Result<P, ParameterError>) -> Result<P, NodeExit> {
    match read {
        Ok(parameters) => {
            tracing::info!("::Parameters OK.");
            Ok(parameters)
        }
        Err(err) => {
            tracing::error!("::Exception::{err}");
            Err(NodeExit::Usage)
        }
    }
}

/// `work` on this thread while `executor` spins on a thread of its own (the node's callbacks
/// served meanwhile), then the executor stopped, the stop bounded by `teardown` from then on.
/// `stage` names the work for the stop's watchdog.
///
/// # Errors
/// [`NodeExit::Failure`] (logged) if the executor's thread cannot start; `work` did not run.
pub(crate) fn while_spinning<T>(
    executor: Executor,
    teardown: &Teardown,
    stage: &'static str,
    work: impl FnOnce() -> T,
) -> Result<T, NodeExit> {
    let spinner = ExecutorThread::spawn(executor).map_err(|err| {
        tracing::error!("::Exception::{err}");
        NodeExit::Failure
    })?;
    teardown.stage(stage);
    let outcome = work();
    teardown.begin();
    teardown.stage("stopping the ROS executor");
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    Ok(outcome)
}

/// The name of the logger rcl gives the node `args` create (`-r __node:=…`, `-r __ns:=…`
/// of `--ros-args`): its fully qualified name without the leading `/`, with `.` for `/`.
fn node_logger_name(args: &[String], default_node_name: &str) -> String {
    let mut name = default_node_name.to_string();
    let mut namespace = String::new();
    let mut in_ros_args = false;
    let mut remaps = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ros-args" => in_ros_args = true,
            "--" => in_ros_args = false,
            "-r" | "--remap" if in_ros_args => remaps.extend(args.next()),
            _ => {}
        }
    }
    for remap in remaps {
        // `node:__node:=x` applies to the node named `node` only; ours is the one node.
        let rule = remap.rsplit_once(":__").map_or(remap.as_str(), |(_, r)| r);
        let rule = rule.strip_prefix("__").unwrap_or(rule);
        if let Some(value) = rule.strip_prefix("node:=").or(rule.strip_prefix("name:=")) {
            name = value.to_string();
        } else if let Some(value) = rule.strip_prefix("ns:=") {
            namespace = value.trim_matches('/').replace('/', ".");
        }
    }
    if namespace.is_empty() {
        name
    } else {
        format!("{namespace}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logger_name(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        node_logger_name(&args, "default")
    }

    #[test]
    fn the_logger_name_follows_the_node_and_namespace_remaps() {
        assert_eq!(logger_name(&["node"]), "default");
        assert_eq!(
            logger_name(&["node", "--ros-args", "-r", "__node:=ur3e_1"]),
            "ur3e_1"
        );
        assert_eq!(
            logger_name(&[
                "node",
                "--ros-args",
                "--params-file",
                "f.yaml",
                "--remap",
                "__ns:=/robots/left",
                "-r",
                "default:__node:=ur3e_1",
            ]),
            "robots.left.ur3e_1"
        );
        assert_eq!(
            logger_name(&[
                "node",
                "-r",
                "__node:=not_ros_args",
                "--ros-args",
                "--",
                "-r",
                "__node:=x"
            ]),
            "default"
        );
        assert_eq!(
            logger_name(&["node", "--ros-args", "-r", "/chatter:=/talk"]),
            "default"
        );
    }
}
