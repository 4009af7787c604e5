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

use clap::Parser;

/// The node's name unless remapped (`--ros-args -r __node:=ur3e_1`), as the original's.
const NODE_NAME: &str = "sas_robot_driver_ros_gazebo";

/// Bridges one robot simulated in Gazebo to ROS 2: publishes <robot_name>/get/joint_states,
/// get/joint_positions_min|max and forwards <robot_name>/set/target_joint_positions,
/// …_velocities and …_forces to Gazebo's joint position controllers, JointControllers and
/// ApplyJointForce systems.
#[derive(Parser)]
#[command(
    version,
    after_help = "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n  \
    joint_names                   string[]  mandatory\n  \
    joint_positions_topic_prefix  string    mandatory\n  \
    joint_states_topic            string    mandatory\n  \
    robot_name                    string    mandatory\n  \
    thread_sampling_time_sec      double    0.002\n  \
    gz_msgs_prefix                string    gz.msgs. (Harmonic) | ignition.msgs. (Fortress)\n  \
    gz_partition                  string    \"\" (GZ_PARTITION, then IGN_PARTITION)\n  \
    joint_states_stamp            string    node_clock | gazebo\n  \
    target_limit_policy           string    clamp | refuse\n  \
    joint_velocities_topic_prefix string    \"\" (joint_positions_topic_prefix): <prefix><j>/cmd_vel\n  \
    joint_forces_topic_prefix     string    \"\" (joint_positions_topic_prefix): <prefix><j>/cmd_force\n  \
    joint_velocity_limits         double[]  [] (not checked) | one per joint, ±\n  \
    joint_effort_limits           double[]  [] (not checked) | one per joint, ±\n  \
    command_timeout_sec           double    0.1 (a velocity/effort target is then set to zero)\n  \
    target_keepalive_sec          double    0.0 (send the target every period)\n  \
    initialize_timeout_sec        double    0.0 (wait for Gazebo until stopped)\n  \
    joint_states_publishing       string    on_arrival | grid (every period, as the original)\n  \
    target_forwarding             string    periodic (every period) | on_arrival\n  \
    state_timeout_sec             double    0.0 (10 Gazebo intervals, >= 50 ms)\n  \
    stale_joint_states            string    withhold | republish (grid publishing)\n  \
    realtime_priority             int       0 (off) | SCHED_FIFO 1..99 for loop and receive\n  \
    publish_clock                 bool      false | true: Gazebo's clock on ROS /clock (once\n  \
                                            per process; ungrouped with several robots)\n  \
    gazebo_clock_topic            string    /clock (or /world/<world>/clock)\n  \
    use_sim_time                  bool      false | true: every stamp from ROS /clock\n\n\
    Several robots in one process (one executor, one gz-transport node, a loop each):\n  \
    robots                        string[]  parameter groups, one per robot: <robot>.joint_names,\n  \
                                            <robot>.robot_name (default <robot>), ...; the node's\n  \
                                            own optional parameters are every robot's defaults\n  \
    composites                    string[]  groups <c>.robots (robots composed, in joint order),\n  \
                                            <c>.robot_name, <c>.thread_sampling_time_sec, ...\n\n\
    Examples:\n  sas_robot_driver_ros_gazebo_node --ros-args -r __node:=ur3e_1 \
    --params-file config/config.yaml\n  \
    sas_robot_driver_ros_gazebo_node --ros-args -r __node:=longboy_robots \
    --params-file config/longboy.yaml"
)]
struct Cli {}

fn main() -> ExitCode {
    bridge_node::node_binary_main(
        NODE_NAME,
        |own_args| {
            Cli::parse_from(own_args);
        },
        |args, shutdown, teardown| {
            bridge_node::run_node(args, NODE_NAME, NODE_NAME, shutdown, teardown)
        },
    )
}
