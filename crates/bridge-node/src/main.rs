//! `sas_robot_driver_ros_gazebo_node`: bridges one Gazebo robot to the SmartArmStack topic
//! surface, until SIGINT/SIGTERM/SIGHUP — or several robots, and composites of them, when the
//! `robots` parameter names their parameter groups. Parameters come from `--ros-args`
//! (params file, `-p`). The node itself is `bridge_node::run_node`, which the Python module
//! runs too; this adds `--help` and bounds the process's exit.
//!
//! Exit codes: 0 after a signal (any number of them, at any stage), 2 for a bad command line
//! or parameter, 1 for any other failure (with several robots: once all have stopped, if any
//! of them failed; the others keep running meanwhile), or when the stop hung for 3 s.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// The node's name unless remapped (`--ros-args -r __node:=ur3e_1`), as the original's.
const NODE_NAME: &str = "sas_robot_driver_ros_gazebo";

/// Bridges one robot simulated in Gazebo to ROS 2: publishes <robot_name>/get/joint_states,
/// get/joint_positions_min|max and forwards <robot_name>/set/target_joint_positions,
/// …_velocities and …_forces to Gazebo's joint position controllers, JointControllers and
/// ApplyJointForce systems.
#[derive(Parser)]
#[command(version)]
struct Cli {}

/// What `--help` prints after the options: the parameter table, made by the declarations that
/// read the parameters (so no default here can be stale), then what no table says.
fn after_help() -> String {
    format!(
        "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n{}\n\
         With `robots` set, each robot's parameters live in its group (<robot>.joint_names, \
         ...); one executor,\none gz-transport node and a loop per robot serve them all.\n\n\
         Examples:\n  sas_robot_driver_ros_gazebo_node --ros-args -r __node:=ur3e_1 \
         --params-file config/config.yaml\n  \
         sas_robot_driver_ros_gazebo_node --ros-args -r __node:=longboy_robots \
         --params-file config/longboy.yaml",
        bridge_node::parameters_help()
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
            bridge_node::run_node(args, NODE_NAME, NODE_NAME, shutdown, teardown)
        },
    )
}
