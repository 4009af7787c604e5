//! `sas_robot_driver_ros_composer_node`: composes the robot drivers named by
//! `robot_driver_client_names` (reached over their topics) into one robot published under the
//! node's name, until SIGINT/SIGTERM.
//!
//! Exit codes: 0 after a signal (also while waiting for the robots), 2 for a bad command line
//! or parameter (including an unusable robot parameter file), 1 for any other failure.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bridge_node::{ExecutorThread, RobotDriverRos, RobotDriverRosConfiguration, RosLogLayer};
use clap::Parser;
use composer::{ComposerParameters, RobotDriverClient};
use rclrs::{Context, CreateBasicExecutor, InitOptions};
use sas_robot_driver_gazebo::{
    CompositePart, PartOwnership, RobotDriver, RobotDriverComposite, ShutdownToken,
};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The node's name unless remapped (the original's).
const NODE_NAME: &str = "sas_robot_driver_ros_composer_node";

/// Composes several robot drivers into one: subscribes to <name>/get/joint_states and
/// get/joint_positions_min|max of each robot in robot_driver_client_names, publishes the
/// concatenation under the node's name (<node>/get/joint_states, ...) and splits
/// <node>/set/target_joint_positions into each robot's <name>/set/target_joint_positions.
#[derive(Parser)]
#[command(
    version,
    after_help = "Parameters (--ros-args --params-file FILE, or -p NAME:=VALUE):\n  \
    robot_driver_client_names                        string[]  mandatory\n  \
    thread_sampling_time_sec                         double    0.002\n  \
    override_joint_limits_with_robot_parameter_file  bool      false\n  \
    robot_parameter_file_path                        string    mandatory if overriding\n  \
    initialize_timeout_sec                           double    0.0 (wait until stopped)\n  \
    joint_states_stamp                               string    node_clock | gazebo\n\n\
    Example:\n  sas_robot_driver_ros_composer_node --ros-args -r __node:=longboy_sim \
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
    tracing_subscriber::registry()
        .with(RosLogLayer::new(node.logger().clone()).with_filter(LevelFilter::DEBUG))
        .init();

    tracing::info!("::Loading parameters from parameter server.");
    let parameters = ComposerParameters::declare(&node).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Usage
    })?;
    tracing::info!("::Parameters OK.");

    let mut parts = Vec::with_capacity(parameters.robot_driver_client_names.len());
    for name in &parameters.robot_driver_client_names {
        let client =
            RobotDriverClient::new(&node, name, parameters.initialize_timeout).map_err(|err| {
                tracing::error!("::Exception::{err}");
                Failure::Runtime
            })?;
        let client: Arc<dyn RobotDriver> = Arc::new(client);
        parts.push(CompositePart::new(name.clone(), client));
    }
    let mut composite = RobotDriverComposite::new(parts, PartOwnership::Owned).map_err(|err| {
        tracing::error!("::Exception::{err}");
        Failure::Usage
    })?;
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
    let bridge = RobotDriverRos::new(&node, Arc::new(composite), configuration, shutdown).map_err(
        |err| {
            tracing::error!("::Exception::{err}");
            Failure::Runtime
        },
    )?;
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
