//! The node `sas_robot_driver_ros_gazebo_node` as a function, [`run_node`]: the binary and
//! the Python module (the legacy script's `implementation:=python` path) both run it, so
//! the two paths are one node as ROS sees it — the same parameters, declared by the same
//! code, the same topics, the same log lines on the same logger, the same stop.
//!
//! And the pieces every node process of the workspace is made of (the bridge node, the
//! composer, the Python module): [`node_binary_main`] (command line, logs, stop signals, the
//! bound on the stop), [`run_ros_node`] (the ROS context and the node, dropped in order) and
//! [`serve_robot`] (one robot's loop beside the executor's thread).

use std::process::ExitCode;
use std::sync::Arc;

use rclrs::{Context, CreateBasicExecutor, Executor, InitOptions, Logger, Node};
use sas_robot_driver_gazebo::{RobotDriver, RobotDriverGazebo, ShutdownToken};
use tracing_subscriber::EnvFilter;

use crate::process::clock::{ClockBridge, ClockParameters, SimTimeNotice};
use crate::process::dds_profile::DdsProfile;
use crate::{
    install_log_route, route_logs_to, BridgeError, ExecutorThread, GzParameters, MultiRobot,
    MultiRobotParameters, NodeParameters, ParameterReader, RobotDriverRos, RobotLoop, RosLogLayer,
    StopSignals, Teardown, TEARDOWN_BOUND,
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

/// The `main` of a node binary named `program`: `check_cli` sees the arguments without the
/// ROS ones (clap's `--help`/`--version` exit there), log lines go to stderr until a node's
/// logger takes them, SIGINT/SIGTERM/SIGHUP trigger the stop token for the whole process, and
/// the stop is bounded by [`TEARDOWN_BOUND`] up to and including the process's exit handlers
/// (DDS's among them). `run` gets the full arguments, the token and the bound.
pub fn node_binary_main(
    program: &str,
    check_cli: impl FnOnce(Vec<String>),
    run: impl FnOnce(Vec<String>, &ShutdownToken, &Teardown) -> NodeExit,
) -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match rclrs::extract_non_ros_args(args.clone()) {
        Ok(own_args) => check_cli(own_args),
        Err(err) => {
            eprintln!("{program}: invalid ROS arguments: {err}");
            return ExitCode::from(NodeExit::Usage.code());
        }
    }
    install_log_route(EnvFilter::new("info"));
    let shutdown = ShutdownToken::new();
    match StopSignals::install(shutdown.clone()) {
        Ok(signals) => signals.keep_until_exit(),
        Err(err) => {
            eprintln!("{program}: cannot install the SIGINT/SIGTERM/SIGHUP handlers: {err}");
            return ExitCode::FAILURE;
        }
    }
    let teardown = match Teardown::spawn(program, TEARDOWN_BOUND) {
        Ok(teardown) => teardown,
        Err(err) => {
            eprintln!("{program}: cannot start the stop watchdog: {err}");
            return ExitCode::FAILURE;
        }
    };
    let exit = run(args, &shutdown, &teardown);
    // Still watched: the exit handlers (DDS's among them) run after this.
    teardown.stage("exiting (the process's exit handlers)");
    ExitCode::from(exit.code())
}

/// ROS initialised from `args` (`--ros-args …`), a node named `default_node_name` unless
/// remapped, `body` run on it, then the node and the context dropped in order. Every line
/// logged meanwhile and after goes to the node's logger ([`LogRoute::keep`]; before the node
/// exists, to a logger of the name it will have), so all of them are in the ROS console
/// format. `program` starts the lines printed when ROS cannot start. The stop is bounded by
/// `teardown` from the trigger of `shutdown` (or the end of `body`) on.
///
/// [`LogRoute::keep`]: crate::LogRoute::keep
pub fn run_ros_node(
    args: Vec<String>,
    default_node_name: &str,
    program: &str,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
    body: impl FnOnce(&Node, Executor) -> NodeExit,
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
    let exit = body(&node, executor);
    drop(sim_time);
    teardown.begin();
    teardown.stage("destroying the node");
    drop(node);
    teardown.stage("shutting down the ROS context");
    drop(context);
    teardown.stage("returning from the node");
    exit
}

/// Serves one robot: `bridge`'s control loop on this thread while the executor spins on its
/// own, then the stop in order (executor, then the robot's topics and driver, `what`).
pub fn serve_robot<D: RobotDriver + ?Sized + 'static>(
    bridge: RobotDriverRos<D>,
    executor: Executor,
    teardown: &Teardown,
    what: &'static str,
) -> NodeExit {
    let spinner = match ExecutorThread::spawn(executor) {
        Ok(spinner) => spinner,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    teardown.stage("in the control loop (connect, initialize, periods, deinitialize, disconnect)");
    let outcome = bridge.control_loop();
    teardown.begin();
    teardown.stage("stopping the ROS executor");
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    teardown.stage(what);
    drop(bridge);
    match outcome {
        Ok(_) => NodeExit::Stopped,
        Err(err) => {
            tracing::error!("::Exception caught::{err}");
            NodeExit::Failure
        }
    }
}

/// Runs the bridge node until `shutdown` is triggered (by [`StopSignals`]: SIGINT, SIGTERM,
/// SIGHUP): ROS initialised from `args` (`--ros-args …`), a node named `default_node_name`
/// unless remapped, one robot from its parameters, or several when `robots` names parameter
/// groups. `program` starts the lines printed before the node exists. The stop is bounded by
/// `teardown` from the trigger (or the loops' end) on; the caller may keep it running past
/// the return (a binary, to bound its exit too) or [`finish`](Teardown::finish) it.
pub fn run_node(
    args: Vec<String>,
    default_node_name: &str,
    program: &str,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    run_ros_node(
        args,
        default_node_name,
        program,
        shutdown,
        teardown,
        |node, executor| {
            teardown.stage("reading the parameters");
            // Read first: with several robots, every log line names its robot.
            let multi = MultiRobotParameters::declare(node);
            if matches!(multi, Ok(Some(_))) {
                route_logs_to(RosLogLayer::new(node.logger().clone()).with_robot_prefix()).keep();
            }

            tracing::info!("::Loading parameters from parameter server.");
            // The process's own: one clock whatever the number of robots.
            let mut reader = ParameterReader::new(node);
            let clock = match (multi, ClockParameters::declare(&mut reader)) {
                (Err(err), _) | (_, Err(err)) => {
                    tracing::error!("::Exception::{err}");
                    return NodeExit::Usage;
                }
                (Ok(multi), Ok(clock)) => (multi, clock),
            };
            let _clock_declared = reader.into_declared();
            match clock {
                (Some(parameters), clock) => {
                    run_robots(node, executor, &parameters, &clock, shutdown, teardown)
                }
                (None, clock) => run_robot(node, executor, &clock, shutdown, teardown),
            }
        },
    )
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

/// One robot, from the node's own parameters (the original's node).
fn run_robot(
    node: &Node,
    executor: Executor,
    clock: &ClockParameters,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    let parameters = match NodeParameters::declare(node) {
        Ok(parameters) => parameters,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Usage;
        }
    };
    tracing::info!("::Parameters OK.");

    let gz = GzParameters {
        msgs_prefix: parameters.driver.msgs_prefix,
        partition: parameters.driver.partition.clone(),
    };
    let _clock = match start_clock(node, clock, &gz, parameters.ros.realtime_priority) {
        Ok(clock) => clock,
        Err(exit) => return exit,
    };
    teardown.stage("creating the driver and its topics");
    let driver = match RobotDriverGazebo::new(parameters.driver.clone(), None) {
        Ok(driver) => driver,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    let bridge = match RobotDriverRos::new(
        node,
        Arc::new(driver),
        parameters.ros.clone(),
        shutdown.clone(),
    ) {
        Ok(bridge) => bridge,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    serve_robot(
        bridge,
        executor,
        teardown,
        "destroying the robot's topics and driver",
    )
}

/// Several robots (and composites), one loop thread each, until the shutdown token; one
/// robot's failure is logged and leaves the others running.
fn run_robots(
    node: &Node,
    executor: Executor,
    parameters: &MultiRobotParameters,
    clock: &ClockParameters,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    tracing::info!("::Parameters OK.");
    let priority = parameters
        .robots
        .iter()
        .filter_map(|(_, robot)| robot.ros.realtime_priority)
        .max();
    let _clock = match start_clock(node, clock, &parameters.gz, priority) {
        Ok(clock) => clock,
        Err(exit) => return exit,
    };
    teardown.stage("creating the drivers and their topics");
    let robots = match MultiRobot::new(node, parameters, shutdown) {
        Ok(robots) => robots,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    let names: Vec<&str> = robots.loops().iter().map(|l| l.name.as_str()).collect();
    tracing::info!(
        "::Running {} robots in one process ({} composed): {}.",
        parameters.robots.len(),
        parameters.composites.len(),
        names.join(", ")
    );
    let spinner = match ExecutorThread::spawn(executor) {
        Ok(spinner) => spinner,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    teardown.stage("in the robots' control loops");
    let all_ok = std::thread::scope(|scope| {
        let mut threads = Vec::new();
        let mut started = true;
        for robot in robots.loops() {
            let thread = std::thread::Builder::new()
                .name(format!("loop-{}", robot.name))
                .spawn_scoped(scope, || run_loop(robot));
            match thread {
                Ok(thread) => threads.push(thread),
                Err(err) => {
                    tracing::error!("::Cannot start the loop thread of {}: {err}", robot.name);
                    started = false;
                    shutdown.trigger();
                    break;
                }
            }
        }
        threads.into_iter().fold(started, |all_ok, thread| {
            thread.join().unwrap_or(false) && all_ok
        })
    });
    teardown.begin();
    teardown.stage("stopping the ROS executor");
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    teardown.stage("destroying the robots' topics and drivers");
    drop(robots);
    if all_ok {
        NodeExit::Stopped
    } else {
        NodeExit::Failure
    }
}

/// The process's clock bridge, if `publish_clock`; a bad `gazebo_clock_topic` is a usage
/// error, anything else a failure (logged).
fn start_clock(
    node: &Node,
    clock: &ClockParameters,
    gz: &GzParameters,
    realtime_priority: Option<u8>,
) -> Result<Option<ClockBridge>, NodeExit> {
    ClockBridge::start(node, clock, gz, realtime_priority).map_err(|err| {
        tracing::error!("::Exception::{err}");
        match err {
            BridgeError::Parameter(_) => NodeExit::Usage,
            _ => NodeExit::Failure,
        }
    })
}

/// Runs one robot's loop; false if it failed (logged, naming the robot).
fn run_loop(robot: &RobotLoop) -> bool {
    let outcome = robot.bridge.control_loop();
    let _span = tracing::info_span!("robot", name = %robot.name).entered();
    match outcome {
        Ok(_) => true,
        Err(err) => {
            tracing::error!("::Exception caught::{err}");
            false
        }
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
