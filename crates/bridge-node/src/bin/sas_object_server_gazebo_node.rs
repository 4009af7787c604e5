//! `sas_object_server_gazebo_node`: `<entity>/get/pose` and `<entity>/set/pose`
//! (`geometry_msgs/msg/PoseStamped`) over Gazebo's entity poses and its `set_pose` service,
//! until SIGINT/SIGTERM/SIGHUP (see `bridge_node::servers::objects`). Exit codes: 0 after a
//! signal, 2 for a bad command line or parameter, 1 for any other failure.

use std::process::ExitCode;

use bridge_node::servers::objects::{run_object_server, OBJECT_SERVER_NODE_NAME};
use clap::Parser;

/// Keeps Gazebo entities' poses in step with ROS 2: publishes <entity>/get/pose as Gazebo
/// reports it and sends each <entity>/set/pose to Gazebo's set_pose service.
#[derive(Parser)]
#[command(
    version,
    after_help = "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n  \
    set_pose_service_name     string    mandatory, e.g. /world/ur3e_world/set_pose\n  \
    get_pose_topic_name       string    mandatory, a Pose_V topic, e.g. /world/ur3e_world/pose/info\n  \
    entity_names              string[]  mandatory, e.g. [frame_x, frame_xd]\n  \
    thread_sampling_time_sec  double    0.01 (shortest interval between two poses of an entity)\n  \
    publish_unchanged_poses   bool      false (changes + 1 s heartbeat) | true (every message)\n  \
    gazebo_timeout_sec        double    2.0 (longest set_pose call)\n  \
    gz_msgs_prefix            string    gz.msgs. (Harmonic) | ignition.msgs. (Fortress)\n  \
    gz_partition              string    \"\" (GZ_PARTITION, then IGN_PARTITION)\n\n\
    Example:\n  sas_object_server_gazebo_node --ros-args --params-file config/config.yaml"
)]
struct Cli {}

fn main() -> ExitCode {
    bridge_node::node_binary_main(
        OBJECT_SERVER_NODE_NAME,
        |own_args| {
            Cli::parse_from(own_args);
        },
        |args, shutdown, teardown| {
            run_object_server(
                args,
                OBJECT_SERVER_NODE_NAME,
                OBJECT_SERVER_NODE_NAME,
                shutdown,
                teardown,
            )
        },
    )
}
