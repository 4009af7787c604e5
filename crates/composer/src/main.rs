//! `sas_robot_driver_ros_composer_node`: composes the robot drivers named by
//! `robot_driver_client_names` (reached over their topics) into one robot published under the
//! node's name, until SIGINT/SIGTERM/SIGHUP.
//!
//! Exit codes: 0 after a signal (any number of them, at any stage), 2 for a bad command line
//! or parameter (including an unusable robot parameter file), 1 for any other failure or a
//! stop that hung for 3 s.

use std::process::ExitCode;
use std::sync::Arc;

use bridge_node::{serve_robot, NodeExit, RobotDriverRos, RobotDriverRosConfiguration, Teardown};
use clap::{CommandFactory, Parser};
use composer::{ComposerParameters, RobotDriverClient};
use rclrs::{Executor, Node};
use sas_driver_contract::{
    CompositePart, PartOwnership, RobotDriver, RobotDriverComposite, ShutdownToken,
};

/// The node's name unless remapped (the original's).
const NODE_NAME: &str = "sas_robot_driver_ros_composer_node";

/// Composes several robot drivers into one: subscribes to <name>/get/joint_states and
/// get/joint_positions_min|max of each robot in robot_driver_client_names, publishes the
/// concatenation under the node's name (<node>/get/joint_states, ...) and splits
/// <node>/set/target_joint_positions into each robot's <name>/set/target_joint_positions.
#[derive(Parser)]
#[command(version)]
struct Cli {}

/// What `--help` prints after the options: the parameter table, made by the declarations that
/// read the parameters (no default here can be stale), then an example.
fn after_help() -> String {
    format!(
        "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n{}\n\
         Example:\n  sas_robot_driver_ros_composer_node --ros-args -r __node:=longboy_sim \
         --params-file config/longboy.yaml",
        bridge_node::help_table(&composer::parameter_help_rows())
    )
}

fn main() -> ExitCode {
    bridge_node::node_binary_main(
        NODE_NAME,
        |own_args| {
            Cli::command()
                .after_help(after_help())
                .get_matches_from(own_args);
        },
        |args, shutdown, teardown| {
            bridge_node::run_ros_node(
                args,
                NODE_NAME,
                NODE_NAME,
                shutdown,
                teardown,
                |node, executor| compose(node, executor, shutdown, teardown),
            )
        },
    )
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
        match RobotDriverClient::new(
            node,
            name,
            parameters.initialize_timeout,
            parameters.ros_options.driver_forward_mode(),
        ) {
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
    serve_robot(
        bridge,
        executor,
        teardown,
        "destroying the composite's topics and clients",
    )
}
