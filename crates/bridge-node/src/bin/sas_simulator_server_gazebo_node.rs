//! `sas_simulator_server_gazebo_node`: `<node>/start_simulation` and `<node>/stop_simulation`
//! (`std_srvs/srv/Trigger`) over Gazebo's world control service, until SIGINT/SIGTERM/SIGHUP
//! (see `bridge_node::servers::simulator`). Exit codes: 0 after a signal, 2 for a bad command
//! line or parameter, 1 for any other failure.

use std::process::ExitCode;

use bridge_node::servers::simulator::{SimulatorServerParameters, SIMULATOR_SERVER_NODE_NAME};
use bridge_node::servers::{help_rows, run_server};
use bridge_node::Program;

const PROGRAM: Program = Program {
    name: "sas_simulator_server_gazebo_node",
    node_name: SIMULATOR_SERVER_NODE_NAME,
    about: "Starts and stops a Gazebo world from ROS 2: serves <node name>/start_simulation and \
            <node name>/stop_simulation (std_srvs/srv/Trigger), each one call of Gazebo's world \
            control service (WorldControl pause false / true)",
    parameters: help_rows::<SimulatorServerParameters>,
    notes:
        "Example:\n  sas_simulator_server_gazebo_node --ros-args --params-file config/config.yaml",
};

fn main() -> ExitCode {
    bridge_node::program_main(&PROGRAM, run_server::<SimulatorServerParameters>)
}
