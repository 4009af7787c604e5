//! `sas_robot_driver_ros_composer_node`: composes the robot drivers named by
//! `robot_driver_client_names` (reached over their topics) into one robot published under the
//! node's name, until SIGINT/SIGTERM/SIGHUP.
//!
//! Exit codes: 0 after a signal (any number of them, at any stage), 2 for a bad command line
//! or parameter (including an unusable robot parameter file), 1 for any other failure or a
//! stop that hung for 3 s.

use std::process::ExitCode;
use std::sync::Arc;

use bridge_node::{
    route_logs_to, ExecutorThread, NodeExit, RobotDriverRos, RobotDriverRosConfiguration,
    RosLogLayer, StopSignals, Teardown, TEARDOWN_BOUND,
};
use clap::Parser;
use composer::{ComposerParameters, RobotDriverClient};
use rclrs::{Context, CreateBasicExecutor, Executor, InitOptions, Node};
use sas_robot_driver_gazebo::{
    CompositePart, PartOwnership, RobotDriver, RobotDriverComposite, ShutdownToken,
};
use tracing_subscriber::EnvFilter;

/// The node's name unless remapped (the original's).
const NODE_NAME: &str = "sas_robot_driver_ros_composer_node";

/// Composes several robot drivers into one: subscribes to <name>/get/joint_states and
/// get/joint_positions_min|max of each robot in robot_driver_client_names, publishes the
/// concatenation under the node's name (<node>/get/joint_states, ...) and splits
/// <node>/set/target_joint_positions into each robot's <name>/set/target_joint_positions.
#[derive(Parser)]
#[command(
    version,
    after_help = "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n  \
    robot_driver_client_names                        string[]  mandatory\n  \
    thread_sampling_time_sec                         double    0.002\n  \
    override_joint_limits_with_robot_parameter_file  bool      false\n  \
    robot_parameter_file_path                        string    mandatory if overriding\n  \
    initialize_timeout_sec                           double    0.0 (wait until stopped)\n  \
    joint_states_stamp                               string    node_clock | gazebo\n\n\
    Example:\n  sas_robot_driver_ros_composer_node --ros-args -r __node:=longboy_sim \
    --params-file config/longboy.yaml"
)]
struct Cli {}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match rclrs::extract_non_ros_args(args.clone()) {
        Ok(own_args) => drop(Cli::parse_from(own_args)),
        Err(err) => {
            eprintln!("{NODE_NAME}: invalid ROS arguments: {err}");
            return ExitCode::from(NodeExit::Usage.code());
        }
    }
    bridge_node::install_log_route(EnvFilter::new("info"));
    let shutdown = ShutdownToken::new();
    match StopSignals::install(shutdown.clone()) {
        Ok(signals) => signals.keep_until_exit(),
        Err(err) => {
            eprintln!("{NODE_NAME}: cannot install the SIGINT/SIGTERM/SIGHUP handlers: {err}");
            return ExitCode::FAILURE;
        }
    }
    let teardown = match Teardown::spawn(NODE_NAME, TEARDOWN_BOUND) {
        Ok(teardown) => teardown,
        Err(err) => {
            eprintln!("{NODE_NAME}: cannot start the stop watchdog: {err}");
            return ExitCode::FAILURE;
        }
    };
    let exit = run(args, &shutdown, &teardown);
    // Still watched: the exit handlers (DDS's among them) run after this.
    teardown.stage("exiting (the process's exit handlers)");
    ExitCode::from(exit.code())
}

/// The composer node until `shutdown`, stopped like the bridge node (`bridge_node::run_node`):
/// any number of SIGINT/SIGTERM/SIGHUP at any stage, the stop bounded by `teardown`.
fn run(args: Vec<String>, shutdown: &ShutdownToken, teardown: &Teardown) -> NodeExit {
    let _countdown = teardown.begin_on(shutdown);
    teardown.stage("initialising ROS");
    let context = match Context::new(args, InitOptions::new()) {
        Ok(context) => context,
        Err(err) => {
            eprintln!("{NODE_NAME}: cannot initialise ROS (check --ros-args): {err}");
            return NodeExit::Usage;
        }
    };
    let executor = context.create_basic_executor();
    teardown.stage("creating the node");
    let node = match executor.create_node(NODE_NAME) {
        Ok(node) => node,
        Err(err) => {
            eprintln!("{NODE_NAME}: cannot create the node: {err}");
            return NodeExit::Failure;
        }
    };
    let log_route = route_logs_to(RosLogLayer::new(node.logger().clone()));
    let exit = compose(&node, executor, shutdown, teardown);
    teardown.begin();
    drop(log_route);
    teardown.stage("destroying the node");
    drop(node);
    teardown.stage("shutting down the ROS context");
    drop(context);
    teardown.stage("returning from the node");
    exit
}

fn compose(
    node: &Node,
    executor: Executor,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    tracing::info!("::Loading parameters from parameter server.");
    teardown.stage("reading the parameters");
    let parameters = match ComposerParameters::declare(node) {
        Ok(parameters) => parameters,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Usage;
        }
    };
    tracing::info!("::Parameters OK.");

    teardown.stage("creating the robot driver clients and the topics");
    let mut parts = Vec::with_capacity(parameters.robot_driver_client_names.len());
    for name in &parameters.robot_driver_client_names {
        match RobotDriverClient::new(node, name, parameters.initialize_timeout) {
            Ok(client) => {
                let client: Arc<dyn RobotDriver> = Arc::new(client);
                parts.push(CompositePart::new(name.clone(), client));
            }
            Err(err) => {
                tracing::error!("::Exception::{err}");
                return NodeExit::Failure;
            }
        }
    }
    let mut composite = match RobotDriverComposite::new(parts, PartOwnership::Owned) {
        Ok(composite) => composite,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Usage;
        }
    };
    if let Some(limits) = &parameters.joint_limits {
        composite = composite.with_joint_limits(limits.lower.clone(), limits.upper.clone());
    }
    // The composite's topics are under the node's name, as the original's.
    let configuration = RobotDriverRosConfiguration {
        thread_sampling_time: parameters.thread_sampling_time,
        stamp_source: parameters.stamp_source,
        ..parameters.ros_options.clone()
    };
    tracing::info!(
        "::Composing {} as {}.",
        parameters.robot_driver_client_names.join(" + "),
        configuration.robot_name
    );
    let bridge =
        match RobotDriverRos::new(node, Arc::new(composite), configuration, shutdown.clone()) {
            Ok(bridge) => bridge,
            Err(err) => {
                tracing::error!("::Exception::{err}");
                return NodeExit::Failure;
            }
        };
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
    teardown.stage("destroying the composite's topics and clients");
    drop(bridge);
    match outcome {
        Ok(_) => NodeExit::Stopped,
        Err(err) => {
            tracing::error!("::Exception caught::{err}");
            NodeExit::Failure
        }
    }
}
