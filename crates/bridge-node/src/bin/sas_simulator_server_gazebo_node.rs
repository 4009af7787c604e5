//! `sas_simulator_server_gazebo_node`: `<node>/start_simulation` and `<node>/stop_simulation`
//! (`std_srvs/srv/Trigger`) over Gazebo's world control service, until SIGINT/SIGTERM/SIGHUP
//! (see `bridge_node::servers::simulator`). Exit codes: 0 after a signal, 2 for a bad command
//! line or parameter, 1 for any other failure.

use std::process::ExitCode;

use bridge_node::servers::simulator::{run_simulator_server, SIMULATOR_SERVER_NODE_NAME};
use clap::Parser;

/// Starts and stops a Gazebo world from ROS 2: serves <node name>/start_simulation and
/// <node name>/stop_simulation (std_srvs/srv/Trigger), each one call of Gazebo's world control
/// service (WorldControl pause false / true).
#[derive(Parser)]
#[command(
    version,
    after_help = "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n  \
    service_name              string  mandatory, e.g. /world/ur3e_world/control\n  \
    autostart                 bool    true (start the simulation once Gazebo is found)\n  \
    thread_sampling_time_sec  double  0.01 (accepted; this node has no loop)\n  \
    gazebo_timeout_sec        double  2.0 (longest Gazebo call; then success: false)\n  \
    clock_topic_name          string  \"\" (/world/<world>/clock of service_name)\n  \
    gz_msgs_prefix            string  gz.msgs. (Harmonic) | ignition.msgs. (Fortress)\n  \
    gz_partition              string  \"\" (GZ_PARTITION, then IGN_PARTITION)\n\n\
    Example:\n  sas_simulator_server_gazebo_node --ros-args --params-file config/config.yaml"
)]
struct Cli {}

fn main() -> ExitCode {
    bridge_node::node_binary_main(
        SIMULATOR_SERVER_NODE_NAME,
        |own_args| {
            Cli::parse_from(own_args);
        },
        |args, shutdown, teardown| {
            run_simulator_server(
                args,
                SIMULATOR_SERVER_NODE_NAME,
                SIMULATOR_SERVER_NODE_NAME,
                shutdown,
                teardown,
            )
        },
    )
}
