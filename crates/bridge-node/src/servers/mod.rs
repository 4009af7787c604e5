//! The original package's two other programs, on the same process shell as the robot driver
//! ([`run_ros_node`](crate::run_ros_node): the same command line, logs, stop signals and
//! bounded stop):
//!
//! * [`simulator`]: `sas_simulator_server_gazebo_node`, SmartArmStack's simulator-server
//!   surface (`<node>/start_simulation`, `<node>/stop_simulation`, `std_srvs/Trigger`) over
//!   Gazebo's world control service;
//! * [`objects`]: `sas_object_server_gazebo_node`, SmartArmStack's object-server surface
//!   (`<entity>/get/pose`, `<entity>/set/pose`, `geometry_msgs/PoseStamped`) over Gazebo's
//!   entity poses (a `Pose_V` topic) and its `set_pose` service.
//!
//! Neither runs a periodic loop: a Gazebo call runs on a thread of its own with a bounded
//! timeout, so the ROS executor is never held by Gazebo, and poses are published as Gazebo's
//! messages arrive.

pub mod objects;
pub mod simulator;
mod world;

use std::sync::Arc;
use std::time::Duration;

use gz_transport::NodeOptions;
use rclrs::{Executor, Node};
use sas_robot_driver_gazebo::ShutdownToken;

use crate::{
    run_ros_node, ExecutorThread, GzParameters, NodeExit, ParameterError, ParameterReader, Teardown,
};

/// `thread_sampling_time_sec` of both servers unless set (the original's 100 Hz).
pub const DEFAULT_SERVER_SAMPLING_TIME_SEC: f64 = 0.01;
/// How long a Gazebo service call may take unless `gazebo_timeout_sec` says otherwise.
pub const DEFAULT_GAZEBO_TIMEOUT_SEC: f64 = 2.0;

/// A server node until `shutdown`: ROS and the node as the driver's ([`run_ros_node`]), its
/// parameters read by `declare` (a bad one is a usage error), then `serve` with them.
fn run_server<P>(
    args: Vec<String>,
    default_node_name: &str,
    program: &str,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
    declare: fn(&Node) -> Result<P, ParameterError>,
    serve: fn(&Node, Executor, &P, &ShutdownToken, &Teardown) -> NodeExit,
) -> NodeExit {
    run_ros_node(
        args,
        default_node_name,
        program,
        shutdown,
        teardown,
        |node, executor| {
            teardown.stage("reading the parameters");
            let parameters = match declare(node) {
                Ok(parameters) => parameters,
                Err(err) => {
                    tracing::error!("::Exception::{err}");
                    return NodeExit::Usage;
                }
            };
            tracing::info!("::Parameters OK.");
            serve(node, executor, &parameters, shutdown, teardown)
        },
    )
}

/// Spins `executor` on its own thread until `shutdown`, then stops it (the servers' callbacks
/// do their work; the caller's thread has nothing else to do meanwhile but `meanwhile`).
fn spin_until_shutdown(
    executor: Executor,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
    meanwhile: impl FnOnce(),
) -> Result<(), NodeExit> {
    let spinner = match ExecutorThread::spawn(executor) {
        Ok(spinner) => spinner,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return Err(NodeExit::Failure);
        }
    };
    teardown.stage("serving (until stopped)");
    meanwhile();
    shutdown.wait_timeout(Duration::MAX);
    teardown.begin();
    teardown.stage("stopping the ROS executor");
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    Ok(())
}

/// A gz-transport node for a server, with the node's `gz_msgs_prefix` and `gz_partition`.
fn gz_node(gz: &GzParameters) -> Result<gz_transport::Node, gz_transport::Error> {
    gz_transport::Node::with_options(NodeOptions {
        partition: gz.partition.clone(),
        msgs_prefix: gz.msgs_prefix,
        ..NodeOptions::default()
    })
}

/// Declares a positive, finite number of seconds.
fn positive_seconds(
    reader: &mut ParameterReader<'_>,
    name: &str,
    description: &'static str,
    default: f64,
) -> Result<Duration, ParameterError> {
    let value = reader.optional::<f64>(name, "a number of seconds > 0", description, default)?;
    if !(value.is_finite() && value > 0.0 && value <= 3600.0) {
        return Err(reader.invalid(
            name,
            format!("{value} is not a number of seconds in (0, 3600]"),
        ));
    }
    Ok(Duration::from_secs_f64(value))
}

/// Declares a mandatory gz-transport service or topic name (absolute, as Gazebo's are).
fn gz_name(
    reader: &mut ParameterReader<'_>,
    name: &str,
    expected: &'static str,
    description: &'static str,
) -> Result<String, ParameterError> {
    let value = reader.mandatory::<Arc<str>>(name, expected, description)?;
    if !value.starts_with('/') || value.len() < 2 || value.chars().any(char::is_whitespace) {
        return Err(reader.invalid(
            name,
            format!("{value:?} is not a Gazebo name: it must start with '/' and hold no spaces"),
        ));
    }
    Ok(value.to_string())
}
