//! The node `sas_robot_driver_ros_gazebo_node` as a function, [`run_node`]: the binary and
//! the Python module (the legacy script's `implementation:=python` path) both run it, so
//! the two paths are one node as ROS sees it — the same parameters, declared by the same
//! code, the same topics, the same log lines on the same logger, the same stop. Its work on
//! the node is [`run_bridge`], which the binary gives the process shell
//! ([`program_main`](crate::program_main)); and [`serve_robot`] is one robot's loop beside
//! the executor's thread, the composer's too.

use std::sync::Arc;

use rclrs::Node;
use sas_robot_driver_gazebo::{RobotDriver, RobotDriverGazebo, ShutdownToken};

use crate::process::clock::{ClockBridge, ClockParameters};
use crate::process::program::{parameters_or_usage, while_spinning};
use crate::{
    route_logs_to, run_ros_node, BridgeError, GzParameters, MultiRobot, MultiRobotParameters,
    NodeExit, NodeParameters, NodeRun, ParameterReader, RobotDriverRos,
    RobotDriverRosConfiguration, RobotLoop, RosLogLayer, Teardown,
};

/// Serves one robot on `run`'s node: `driver` on the SmartArmStack topics of
/// `configuration`, its control loop on this thread while the executor spins on its own,
/// until the stop; then the stop in order (executor, then the robot's topics and driver,
/// `what`).
pub fn serve_robot<D: RobotDriver + ?Sized + 'static>(
    run: NodeRun<'_>,
    driver: Arc<D>,
    configuration: RobotDriverRosConfiguration,
    what: &'static str,
) -> NodeExit {
    let bridge = match RobotDriverRos::new(run.node, driver, configuration, run.shutdown.clone()) {
        Ok(bridge) => bridge,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    let outcome = while_spinning(
        run.executor,
        run.teardown,
        "in the control loop (connect, initialize, periods, deinitialize, disconnect)",
        || bridge.control_loop(),
    );
    run.teardown.stage(what);
    drop(bridge);
    match outcome {
        Ok(Ok(_)) => NodeExit::Stopped,
        Ok(Err(err)) => {
            tracing::error!("::Exception caught::{err}");
            NodeExit::Failure
        }
        Err(exit) => exit,
    }
}

/// Runs the bridge node until `shutdown` is triggered (by [`StopSignals`]: SIGINT, SIGTERM,
/// SIGHUP): ROS initialised from `args` (`--ros-args …`), a node named `default_node_name`
/// unless remapped, then [`run_bridge`] on it. `program` starts the lines printed before the
/// node exists. The stop is bounded by `teardown` from the trigger (or the loops' end) on;
/// the caller may keep it running past the return (a binary, to bound its exit too) or
/// [`finish`](Teardown::finish) it.
///
/// [`StopSignals`]: crate::StopSignals
pub fn run_node(
    args: Vec<String>,
    default_node_name: &str,
    program: &str,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    run_ros_node(
        args,
        default_node_name,
        program,
        shutdown,
        teardown,
        run_bridge,
    )
}

/// The bridge node's work on its node until the stop: one robot from its parameters, or
/// several when `robots` names parameter groups (a bad parameter is a usage error).
pub fn run_bridge(run: NodeRun<'_>) -> NodeExit {
    run.teardown.stage("reading the parameters");
    // Read first: with several robots, every log line names its robot.
    let multi = MultiRobotParameters::declare(run.node);
    if matches!(multi, Ok(Some(_))) {
        route_logs_to(RosLogLayer::new(run.node.logger().clone()).with_robot_prefix()).keep();
    }

    tracing::info!("::Loading parameters from parameter server.");
    // The process's own: one clock whatever the number of robots.
    let mut reader = ParameterReader::new(run.node);
    let clock = match (multi, ClockParameters::declare(&mut reader)) {
        (Err(err), _) | (_, Err(err)) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Usage;
        }
        (Ok(multi), Ok(clock)) => (multi, clock),
    };
    let _clock_declared = reader.into_declared();
    match clock {
        (Some(parameters), clock) => run_robots(run, &parameters, &clock),
        (None, clock) => run_robot(run, &clock),
    }
}

/// One robot, from the node's own parameters (the original's node).
fn run_robot(run: NodeRun<'_>, clock: &ClockParameters) -> NodeExit {
    let parameters = match parameters_or_usage(NodeParameters::declare(run.node)) {
        Ok(parameters) => parameters,
        Err(exit) => return exit,
    };

    let gz = GzParameters {
        msgs_prefix: parameters.driver.msgs_prefix,
        partition: parameters.driver.partition.clone(),
    };
    let _clock = match start_clock(run.node, clock, &gz, parameters.ros.realtime_priority) {
        Ok(clock) => clock,
        Err(exit) => return exit,
    };
    run.teardown.stage("creating the driver and its topics");
    let driver = match RobotDriverGazebo::new(parameters.driver.clone(), None) {
        Ok(driver) => driver,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    serve_robot(
        run,
        Arc::new(driver),
        parameters.ros.clone(),
        "destroying the robot's topics and driver",
    )
}

/// Several robots (and composites), one loop thread each, until the shutdown token; one
/// robot's failure is logged and leaves the others running.
fn run_robots(
    run: NodeRun<'_>,
    parameters: &MultiRobotParameters,
    clock: &ClockParameters,
) -> NodeExit {
    tracing::info!("::Parameters OK.");
    let priority = parameters
        .robots
        .iter()
        .filter_map(|(_, robot)| robot.ros.realtime_priority)
        .max();
    let _clock = match start_clock(run.node, clock, &parameters.gz, priority) {
        Ok(clock) => clock,
        Err(exit) => return exit,
    };
    run.teardown.stage("creating the drivers and their topics");
    let robots = match MultiRobot::new(run.node, parameters, run.shutdown) {
        Ok(robots) => robots,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    let names: Vec<&str> = robots.loops().iter().map(|l| l.name.as_str()).collect();
    tracing::info!(
        "::Running {} robots in one process ({} composed): {}.",
        parameters.robots.len(),
        parameters.composites.len(),
        names.join(", ")
    );
    let all_ok = while_spinning(
        run.executor,
        run.teardown,
        "in the robots' control loops",
        || {
            std::thread::scope(|scope| {
                let mut threads = Vec::new();
                let mut started = true;
                for robot in robots.loops() {
                    let thread = std::thread::Builder::new()
                        .name(format!("loop-{}", robot.name))
                        .spawn_scoped(scope, || run_loop(robot));
                    match thread {
                        Ok(thread) => threads.push(thread),
                        Err(err) => {
                            tracing::error!(
                                "::Cannot start the loop thread of {}: {err}",
                                robot.name
                            );
                            started = false;
                            run.shutdown.trigger();
                            break;
                        }
                    }
                }
                threads.into_iter().fold(started, |all_ok, thread| {
                    thread.join().unwrap_or(false) && all_ok
                })
            })
        },
    );
    run.teardown
        .stage("destroying the robots' topics and drivers");
    drop(robots);
    match all_ok {
        Ok(true) => NodeExit::Stopped,
        Ok(false) => NodeExit::Failure,
        Err(exit) => exit,
    }
}

/// The process's clock bridge, if `publish_clock`; a bad `gazebo_clock_topic` is a usage
/// error, anything else a failure (logged).
fn start_clock(
    node: &Node,
    clock: &ClockParameters,
    gz: &GzParameters,
    realtime_priority: Option<u8>,
) -> Result<Option<ClockBridge>, NodeExit> {
    ClockBridge::start(node, clock, gz, realtime_priority).map_err(|err| {
        tracing::error!("::Exception::{err}");
        match err {
            BridgeError::Parameter(_) => NodeExit::Usage,
            _ => NodeExit::Failure,
        }
    })
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
