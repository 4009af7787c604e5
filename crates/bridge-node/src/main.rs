//! `sas_robot_driver_ros_gazebo_node`: bridges one Gazebo robot to the SmartArmStack topic
//! surface, until SIGINT/SIGTERM — or several robots, and composites of them, when the
//! `robots` parameter names their parameter groups. Parameters come from `--ros-args`
//! (params file, `-p`).
//!
//! Exit codes: 0 after a signal (also while waiting for Gazebo), 2 for a bad command line or
//! parameter, 1 for any other failure (with several robots: once all have stopped, if any
//! of them failed; the others keep running meanwhile).

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bridge_node::{
    ExecutorThread, MultiRobot, MultiRobotParameters, NodeParameters, RobotDriverRos, RobotLoop,
    RosLogLayer,
};
use clap::Parser;
use rclrs::{Context, CreateBasicExecutor, Executor, InitOptions, Node};
use sas_robot_driver_gazebo::{RobotDriverGazebo, ShutdownToken};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The node's name unless remapped (`--ros-args -r __node:=ur3e_1`), as the original's.
const NODE_NAME: &str = "sas_robot_driver_ros_gazebo";

/// Bridges one robot simulated in Gazebo to ROS 2: publishes <robot_name>/get/joint_states,
/// get/joint_positions_min|max and forwards <robot_name>/set/target_joint_positions to
/// Gazebo's joint position controllers.
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
    target_keepalive_sec          double    0.0 (send the target every period)\n  \
    initialize_timeout_sec        double    0.0 (wait for Gazebo until stopped)\n  \
    joint_states_publishing       string    on_arrival | grid (every period, as the original)\n  \
    target_forwarding             string    periodic (every period) | on_arrival\n  \
    state_timeout_sec             double    0.0 (10 Gazebo intervals, >= 50 ms)\n  \
    stale_joint_states            string    withhold | republish (grid publishing)\n  \
    realtime_priority             int       0 (off) | SCHED_FIFO 1..99 for loop and receive\n\n\
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

/// Why the node stops with a non-zero status.
enum Failure {
    /// Bad command line or parameters.
    Usage,
    /// Anything else.
    Runtime,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage) => ExitCode::from(2),
        Err(Failure::Runtime) => ExitCode::from(1),
    }
}

fn run() -> Result<(), Failure> {
    let shutdown = ShutdownToken::new();
    install_signal_handler(shutdown.clone())?;

    let args: Vec<String> = std::env::args().collect();
    let own_args = rclrs::extract_non_ros_args(args.clone()).map_err(|err| {
        eprintln!("{NODE_NAME}: invalid ROS arguments: {err}");
        Failure::Usage
    })?;
    Cli::parse_from(own_args);
    let context = Context::new(args, InitOptions::new()).map_err(|err| {
        eprintln!("{NODE_NAME}: cannot initialise ROS (check --ros-args): {err}");
        Failure::Usage
    })?;
    let executor = context.create_basic_executor();
    let node = executor.create_node(NODE_NAME).map_err(|err| {
        eprintln!("{NODE_NAME}: cannot create the node: {err}");
        Failure::Runtime
    })?;
    // Read first: with several robots, every log line names its robot.
    let multi = MultiRobotParameters::declare(&node);
    let mut log = RosLogLayer::new(node.logger().clone());
    if matches!(multi, Ok(Some(_))) {
        log = log.with_robot_prefix();
    }
    tracing_subscriber::registry()
        .with(log.with_filter(LevelFilter::DEBUG))
        .init();

    tracing::info!("::Loading parameters from parameter server.");
    match multi {
        Err(err) => {
            tracing::error!("::Exception::{err}");
            Err(Failure::Usage)
        }
        Ok(Some(parameters)) => run_robots(&node, executor, &parameters, &shutdown),
        Ok(None) => run_robot(&node, executor, &shutdown),
    }
}

/// One robot, from the node's own parameters (the original's node).
fn run_robot(node: &Node, executor: Executor, shutdown: &ShutdownToken) -> Result<(), Failure> {
    let parameters = NodeParameters::declare(node).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Usage
    })?;
    tracing::info!("::Parameters OK.");

    let driver = RobotDriverGazebo::new(parameters.driver.clone(), None).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Runtime
    })?;
    let bridge = RobotDriverRos::new(
        node,
        Arc::new(driver),
        parameters.ros.clone(),
        shutdown.clone(),
    )
    .map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Runtime
    })?;
    let spinner = ExecutorThread::spawn(executor).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Runtime
    })?;

    let outcome = bridge.control_loop();
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    outcome.map(drop).map_err(|err| {
        tracing::error!("::Exception caught::{err}");
        Failure::Runtime
    })
}

/// Several robots (and composites), one loop thread each, until the shutdown token; one
/// robot's failure is logged and leaves the others running.
fn run_robots(
    node: &Node,
    executor: Executor,
    parameters: &MultiRobotParameters,
    shutdown: &ShutdownToken,
) -> Result<(), Failure> {
    tracing::info!("::Parameters OK.");
    let robots = MultiRobot::new(node, parameters, shutdown).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Runtime
    })?;
    let names: Vec<&str> = robots.loops().iter().map(|l| l.name.as_str()).collect();
    tracing::info!(
        "::Running {} robots in one process ({} composed): {}.",
        parameters.robots.len(),
        parameters.composites.len(),
        names.join(", ")
    );
    let spinner = ExecutorThread::spawn(executor).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Runtime
    })?;
    let all_ok = std::thread::scope(|scope| {
        let mut threads = Vec::new();
        let mut started = true;
        for robot in robots.loops() {
            let thread = std::thread::Builder::new()
                .name(format!("loop-{}", robot.name))
                .spawn_scoped(scope, || run_loop(robot));
            match thread {
                Ok(thread) => threads.push(thread),
                Err(err) => {
                    tracing::error!("::Cannot start the loop thread of {}: {err}", robot.name);
                    started = false;
                    shutdown.trigger();
                    break;
                }
            }
        }
        threads.into_iter().fold(started, |all_ok, thread| {
            thread.join().unwrap_or(false) && all_ok
        })
    });
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    if all_ok {
        Ok(())
    } else {
        Err(Failure::Runtime)
    }
}

/// Runs one robot's loop; false if it failed (logged, naming the robot).
fn run_loop(robot: &RobotLoop) -> bool {
    let outcome = robot.bridge.control_loop();
    let _span = tracing::info_span!("robot", name = %robot.name).entered();
    match outcome {
        Ok(_) => true,
        Err(err) => {
            tracing::error!("::Exception caught::{err}");
            false
        }
    }
}

/// SIGINT, SIGTERM (and SIGHUP) trigger `shutdown`: the loop ends within one period, or
/// `initialize` stops waiting. A second signal while stopping exits at once.
fn install_signal_handler(shutdown: ShutdownToken) -> Result<(), Failure> {
    let signals = AtomicUsize::new(0);
    ctrlc::set_handler(move || {
        if signals.fetch_add(1, Ordering::SeqCst) > 0 {
            eprintln!("{NODE_NAME}: second signal while stopping; exiting now.");
            std::process::exit(1);
        }
        shutdown.trigger();
    })
    .map_err(|err| {
        eprintln!("{NODE_NAME}: cannot install the SIGINT/SIGTERM handler: {err}");
        Failure::Runtime
    })
}
