//! `sas_robot_driver_ros_gazebo_node`: bridges one Gazebo robot to the SmartArmStack topic
//! surface, until SIGINT/SIGTERM/SIGHUP — or several robots, and composites of them, when the
//! `robots` parameter names their parameter groups. Parameters come from `--ros-args`
//! (params file, `-p`). The node's work is `bridge_node::run_bridge`, which the Python module
//! runs too (`run_node`); the process around it is the shell of every node program,
//! `bridge_node::program_main`.
//!
//! Exit codes: 0 after a signal (any number of them, at any stage), 2 for a bad command line
//! or parameter, 1 for any other failure (with several robots: once all have stopped, if any
//! of them failed; the others keep running meanwhile), or when the stop hung for 3 s.

use std::process::ExitCode;

use bridge_node::Program;

const PROGRAM: Program = Program {
    name: "sas_robot_driver_ros_gazebo_node",
    // The original's, unless remapped (`--ros-args -r __node:=ur3e_1`).
    node_name: "sas_robot_driver_ros_gazebo",
    about:
        "Bridges one robot simulated in Gazebo to ROS 2: publishes <robot_name>/get/joint_states, \
            get/joint_positions_min|max and forwards <robot_name>/set/target_joint_positions, \
            …_velocities and …_forces to Gazebo's joint position controllers, JointControllers \
            and ApplyJointForce systems",
    parameters: bridge_node::parameter_help_rows,
    notes: "With `robots` set, each robot's parameters live in its group (<robot>.joint_names, \
            ...); one executor,\none gz-transport node and a loop per robot serve them all.\n\n\
            Examples:\n  \
            sas_robot_driver_ros_gazebo_node --ros-args -r __node:=ur3e_1 \
            --params-file config/config.yaml\n  \
            sas_robot_driver_ros_gazebo_node --ros-args -r __node:=longboy_robots \
            --params-file config/longboy.yaml",
};

fn main() -> ExitCode {
    bridge_node::program_main(&PROGRAM, bridge_node::run_bridge)
}
