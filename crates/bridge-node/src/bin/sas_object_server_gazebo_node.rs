//! `sas_object_server_gazebo_node`: `<entity>/get/pose` and `<entity>/set/pose`
//! (`geometry_msgs/msg/PoseStamped`) over Gazebo's entity poses and its `set_pose` service,
//! until SIGINT/SIGTERM/SIGHUP (see `bridge_node::servers::objects`). Exit codes: 0 after a
//! signal, 2 for a bad command line or parameter, 1 for any other failure.

use std::process::ExitCode;

use bridge_node::servers::objects::{ObjectServerParameters, OBJECT_SERVER_NODE_NAME};
use bridge_node::servers::{help_rows, run_server};
use bridge_node::Program;

const PROGRAM: Program = Program {
    name: "sas_object_server_gazebo_node",
    node_name: OBJECT_SERVER_NODE_NAME,
    about: "Keeps Gazebo entities' poses in step with ROS 2: publishes <entity>/get/pose as \
            Gazebo reports it and sends each <entity>/set/pose to Gazebo's set_pose service",
    parameters: help_rows::<ObjectServerParameters>,
    notes: "Example:\n  sas_object_server_gazebo_node --ros-args --params-file config/config.yaml",
};

fn main() -> ExitCode {
    bridge_node::program_main(&PROGRAM, run_server::<ObjectServerParameters>)
}
