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
    parameters_or_usage, serve_robot, NodeExit, NodeRun, Program, RobotDriverRosConfiguration,
};
use composer::{ComposerParameters, RobotDriverClient};
use sas_driver_contract::{CompositePart, PartOwnership, RobotDriver, RobotDriverComposite};

const PROGRAM: Program = Program {
    name: "sas_robot_driver_ros_composer_node",
    // The original's, unless remapped.
    node_name: "sas_robot_driver_ros_composer_node",
    about: "Composes several robot drivers into one: subscribes to <name>/get/joint_states and \
            get/joint_positions_min|max of each robot in robot_driver_client_names, publishes the \
            concatenation under the node's name (<node>/get/joint_states, ...) and splits \
            <node>/set/target_joint_positions into each robot's <name>/set/target_joint_positions",
    parameters: composer::parameter_help_rows,
    notes: "Example:\n  sas_robot_driver_ros_composer_node --ros-args -r __node:=longboy_sim \
            --params-file config/longboy.yaml",
};

fn main() -> ExitCode {
    bridge_node::program_main(&PROGRAM, compose)
}

fn compose(run: NodeRun<'_>) -> NodeExit {
    let node = run.node;
    tracing::info!("::Loading parameters from parameter server.");
    run.teardown.stage("reading the parameters");
    let parameters = match parameters_or_usage(ComposerParameters::declare(node)) {
        Ok(parameters) => parameters,
        Err(exit) => return exit,
    };

    run.teardown
        .stage("creating the robot driver clients and the topics");
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
    serve_robot(
        run,
        Arc::new(composite),
        configuration,
        "destroying the composite's topics and clients",
    )
}
