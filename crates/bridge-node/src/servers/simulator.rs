//! `sas_simulator_server_gazebo_node`: starts and stops Gazebo's world from ROS.
//!
//! Two `std_srvs/srv/Trigger` services, `<node name>/start_simulation` and
//! `<node name>/stop_simulation`, each answered by one call of Gazebo's world control service
//! (`service_name`, e.g. `/world/ur3e_world/control`: request `WorldControl` with
//! `pause: false` or `pause: true`, response `Boolean`). The Trigger answers `success: true`
//! only when Gazebo answered `data: true`; a Gazebo that is absent, answers false or does not
//! answer within `gazebo_timeout_sec` gives `success: false` and a message saying which.
//! With `autostart` (default true) the node starts the simulation once, as soon as Gazebo's
//! service is discovered, saying meanwhile that it waits for it.
//!
//! The services are async: each Gazebo call runs on a thread of its own, so the executor
//! serves other calls meanwhile and never waits longer than nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use gz_transport::msgs::{Boolean, WorldControl};
use gz_transport::ServiceError;
use rclrs::{Executor, Node};
use ros_env::std_srvs::srv::{Trigger, Trigger_Request, Trigger_Response};
use sas_robot_driver_gazebo::ShutdownToken;

use super::{gz_name, gz_node, positive_seconds};
use super::{DEFAULT_GAZEBO_TIMEOUT_SEC, DEFAULT_SERVER_SAMPLING_TIME_SEC};
use crate::{
    run_ros_node, DeclaredParameters, ExecutorThread, GzParameters, NodeExit, ParameterError,
    ParameterReader, Teardown,
};

/// The node's name unless remapped, as the original's launch file names it.
pub const SIMULATOR_SERVER_NODE_NAME: &str = "sas_simulator_server_gazebo_node";

/// How often a node waiting for Gazebo says so.
const WAITING_NOTE_INTERVAL: Duration = Duration::from_secs(5);

/// The parameters of the simulator server.
#[derive(Debug)]
pub struct SimulatorServerParameters {
    /// `service_name`: Gazebo's world control service.
    pub service_name: String,
    /// `autostart`: start the simulation once Gazebo is found.
    pub autostart: bool,
    /// `thread_sampling_time_sec`: the original's loop period; accepted (and checked) for
    /// its configuration files, but this node has no loop to pace.
    pub thread_sampling_time: Duration,
    /// `gazebo_timeout_sec`: the longest a Gazebo call may take.
    pub gazebo_timeout: Duration,
    /// `gz_msgs_prefix`, `gz_partition`.
    pub gz: GzParameters,
    _declared: DeclaredParameters,
}

impl SimulatorServerParameters {
    /// Declares and reads the parameters of `node`.
    ///
    /// # Errors
    /// A parameter missing, mistyped or invalid, by name.
    pub fn declare(node: &Node) -> Result<Self, ParameterError> {
        let mut reader = ParameterReader::new(node);
        let service_name = gz_name(
            &mut reader,
            "service_name",
            "a string, Gazebo's world control service, e.g. \"/world/ur3e_world/control\"",
            "Gazebo's world control service (WorldControl -> Boolean)",
        )?;
        let autostart = reader.optional::<bool>(
            "autostart",
            "true or false",
            "start the simulation once Gazebo's world control service is found",
            true,
        )?;
        let thread_sampling_time = positive_seconds(
            &mut reader,
            "thread_sampling_time_sec",
            "the original's loop period (this node waits on events and has no loop)",
            DEFAULT_SERVER_SAMPLING_TIME_SEC,
        )?;
        let gazebo_timeout = positive_seconds(
            &mut reader,
            "gazebo_timeout_sec",
            "how long a call of Gazebo's world control service may take",
            DEFAULT_GAZEBO_TIMEOUT_SEC,
        )?;
        let gz = GzParameters::declare(&mut reader)?;
        Ok(SimulatorServerParameters {
            service_name,
            autostart,
            thread_sampling_time,
            gazebo_timeout,
            gz,
            _declared: reader.into_declared(),
        })
    }
}

/// Runs the simulator server until `shutdown`: see the module doc.
pub fn run_simulator_server(
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
        |node, executor| {
            teardown.stage("reading the parameters");
            let parameters = match SimulatorServerParameters::declare(node) {
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

fn serve(
    node: &Node,
    executor: Executor,
    parameters: &SimulatorServerParameters,
    shutdown: &ShutdownToken,
    teardown: &Teardown,
) -> NodeExit {
    teardown.stage("creating the gz-transport node and the services");
    let gz = match gz_node(&parameters.gz) {
        Ok(gz) => gz,
        Err(err) => {
            tracing::error!("::Exception::cannot start gz-transport: {err}");
            return NodeExit::Failure;
        }
    };
    let world = Arc::new(WorldControlClient {
        gz,
        service: parameters.service_name.clone(),
        timeout: parameters.gazebo_timeout,
    });
    let prefix = node.name();
    let mut services = Vec::new();
    for (suffix, pause) in [("start_simulation", false), ("stop_simulation", true)] {
        let name = format!("{prefix}/{suffix}");
        let world = world.clone();
        let created =
            node.create_async_service::<Trigger, _>(name.as_str(), move |_: Trigger_Request| {
                let (answer, answered) = oneshot::channel();
                let world = world.clone();
                // The Gazebo call blocks (bounded by its timeout): not on the executor.
                let spawned = std::thread::Builder::new()
                    .name("world-control".into())
                    .spawn(move || {
                        let _ = answer.send(world.trigger(pause));
                    });
                async move {
                    match spawned {
                        Ok(_) => answered.await.unwrap_or_else(|_| Trigger_Response {
                            success: false,
                            message: "the world control call was lost".into(),
                        }),
                        Err(err) => Trigger_Response {
                            success: false,
                            message: format!("cannot start the world control call: {err}"),
                        },
                    }
                }
            });
        match created {
            Ok(service) => services.push(service),
            Err(err) => {
                tracing::error!("::Exception::cannot create the service {name:?}: {err}");
                return NodeExit::Failure;
            }
        }
    }
    tracing::info!(
        "::Serving {prefix}/start_simulation and {prefix}/stop_simulation over Gazebo's {}.",
        parameters.service_name
    );
    let spinner = match ExecutorThread::spawn(executor) {
        Ok(spinner) => spinner,
        Err(err) => {
            tracing::error!("::Exception::{err}");
            return NodeExit::Failure;
        }
    };
    teardown.stage("serving (until stopped)");
    if parameters.autostart {
        autostart(&world, shutdown);
    }
    shutdown.wait_timeout(Duration::MAX);
    teardown.begin();
    teardown.stage("stopping the ROS executor");
    for err in spinner.stop() {
        tracing::error!("::The ROS executor reported: {err}");
    }
    teardown.stage("destroying the services");
    drop(services);
    NodeExit::Stopped
}

/// Starts the simulation once Gazebo's world control service is found, saying every few
/// seconds that it waits; gives up on shutdown.
fn autostart(world: &WorldControlClient, shutdown: &ShutdownToken) {
    let started = Instant::now();
    let mut next_note = started;
    loop {
        if shutdown.is_triggered() {
            return;
        }
        // Short waits, so a stop is not held up by the search.
        match world
            .gz
            .wait_for_service(&world.service, Duration::from_millis(500))
        {
            Ok(true) => break,
            Ok(false) => {}
            Err(err) => {
                tracing::error!("::Cannot look for {}: {err}", world.service);
                return;
            }
        }
        if Instant::now() >= next_note {
            tracing::warn!(
                "::autostart: waiting for Gazebo's world control service {} (partition {:?}) \
                 for {:.0} s; is Gazebo running?",
                world.service,
                world.gz.partition(),
                started.elapsed().as_secs_f64()
            );
            next_note += WAITING_NOTE_INTERVAL;
        }
    }
    let response = world.trigger(false);
    if response.success {
        tracing::info!("::autostart: {}", response.message);
    } else {
        tracing::error!("::autostart: {}", response.message);
    }
}

/// Calls Gazebo's world control service.
struct WorldControlClient {
    gz: gz_transport::Node,
    service: String,
    timeout: Duration,
}

impl WorldControlClient {
    /// Pauses (`pause`) or runs the world; the answer as a Trigger response.
    fn trigger(&self, pause: bool) -> Trigger_Response {
        let (verb, done) = if pause {
            ("stop", "Simulation stopped")
        } else {
            ("start", "Simulation started")
        };
        let request = WorldControl {
            pause,
            ..WorldControl::default()
        };
        let outcome =
            self.gz
                .request::<WorldControl, Boolean>(&self.service, &request, self.timeout);
        let (success, message) = match outcome {
            Ok(Boolean { data: true, .. }) => (true, format!("{done} ({}).", self.service)),
            Ok(Boolean { data: false, .. }) => (
                false,
                format!(
                    "Gazebo's {} answered false to {verb} the simulation.",
                    self.service
                ),
            ),
            Err(ServiceError::NoResponder { .. }) => (
                false,
                format!(
                    "Gazebo's {} was not found within {:?}: is Gazebo running, in partition {:?}?",
                    self.service,
                    self.timeout,
                    self.gz.partition()
                ),
            ),
            Err(err) => (false, format!("cannot {verb} the simulation: {err}")),
        };
        if success {
            tracing::info!("::{message}");
        } else {
            tracing::warn!("::{message}");
        }
        Trigger_Response { success, message }
    }
}
