//! `sas_simulator_server_gazebo_node`: starts and stops Gazebo's world from ROS.
//!
//! Two `std_srvs/srv/Trigger` services, `<node name>/start_simulation` and
//! `<node name>/stop_simulation`, each answered by one call of Gazebo's world control service
//! (`service_name`, e.g. `/world/ur3e_world/control`: request `WorldControl` with
//! `pause: false` or `pause: true`, response `Boolean`). The Trigger answers `success: true`
//! only when Gazebo answered `data: true`; a Gazebo that is absent, answers false or does not
//! answer within `gazebo_timeout_sec` gives `success: false` and a message saying which.
//! Until Gazebo's service is discovered the node says every few seconds that it waits for it;
//! with `autostart` (default true) it then starts the simulation once.
//!
//! Beyond the original, ROS's simulator-independent `simulation_interfaces` (this repository's
//! `simulation_interfaces/` package: same names and fields): `<node name>/step_simulation`
//! (`StepSimulation`: N steps of a paused world, answered once Gazebo's clock shows them
//! done), `<node name>/reset_simulation` (`ResetSimulation`), `<node name>/get_simulation_state`
//! and `<node name>/set_simulation_state`. Whether the world runs is read off its clock
//! (`/world/<w>/clock`, which a paused gz-sim still publishes), listened to only during a call.
//!
//! The services are async: each Gazebo call runs on a thread of its own, one call at a time,
//! so the executor serves other requests meanwhile and is never held by Gazebo.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use gz_transport::msgs::{WorldControl, WorldReset};
use parking_lot::Mutex;
use rclrs::{Node, RclrsError};
use ros_env::simulation_interfaces::msg::{Result as SimResult, SimulationState};
use ros_env::simulation_interfaces::srv::{
    GetSimulationState, GetSimulationState_Response, ResetSimulation, ResetSimulation_Request,
    ResetSimulation_Response, SetSimulationState, SetSimulationState_Response, StepSimulation,
    StepSimulation_Response,
};
use ros_env::std_srvs::srv::{Trigger, Trigger_Response};
use sas_robot_driver_gazebo::ShutdownToken;

use super::world::{clock_topic_of, Running, World};
use super::{
    checked, gz_name, positive_seconds, spin_until_shutdown, ServerParameters,
    WAITING_NOTE_INTERVAL,
};
use super::{DEFAULT_GAZEBO_TIMEOUT_SEC, DEFAULT_SERVER_SAMPLING_TIME_SEC};
use crate::{GzParameters, NodeExit, NodeRun, ParameterError, ParameterReader};

/// The node's name unless remapped, as the original's launch file names it.
pub const SIMULATOR_SERVER_NODE_NAME: &str = "sas_simulator_server_gazebo_node";

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
    /// `clock_topic_name`: the world's clock (default: `/world/<w>/clock` of `service_name`).
    pub clock_topic_name: String,
    /// `gz_msgs_prefix`, `gz_partition`.
    pub gz: GzParameters,
}

impl ServerParameters for SimulatorServerParameters {
    fn declare(reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError> {
        let service_name = gz_name(
            reader,
            "service_name",
            "a string, Gazebo's world control service, e.g. \"/world/ur3e_world/control\"",
            "Gazebo's world control service (WorldControl -> Boolean), e.g. \
             /world/ur3e_world/control",
        )?;
        let autostart = reader.optional::<bool>(
            "autostart",
            "true or false",
            "start the simulation once Gazebo's world control service is found",
            true,
        )?;
        let thread_sampling_time = positive_seconds(
            reader,
            "thread_sampling_time_sec",
            "the original's loop period (this node waits on events and has no loop)",
            DEFAULT_SERVER_SAMPLING_TIME_SEC,
        )?;
        let gazebo_timeout = positive_seconds(
            reader,
            "gazebo_timeout_sec",
            "how long a call of Gazebo's world control service may take (then success: false)",
            DEFAULT_GAZEBO_TIMEOUT_SEC,
        )?;
        let clock_topic_name = reader.optional::<Arc<str>>(
            "clock_topic_name",
            "a string, a Clock topic (empty: /world/<world>/clock of service_name)",
            "the world's clock (empty: /world/<world>/clock of service_name), read to tell a \
             running world from a paused one and a step's end",
            "".into(),
        )?;
        let clock_topic_name = checked(
            reader,
            "clock_topic_name",
            clock_topic_name.to_string(),
            |topic| {
                if topic.is_empty() {
                    clock_topic_of(&service_name).ok_or_else(|| {
                        format!(
                            "service_name {service_name:?} is not /world/<world>/control: name \
                             the world's clock topic"
                        )
                    })
                } else if topic.starts_with('/') {
                    Ok(topic)
                } else {
                    Err(format!(
                        "{topic:?} is not a Gazebo topic (it must start with '/')"
                    ))
                }
            },
        )?;
        let gz = GzParameters::declare(reader)?;
        Ok(SimulatorServerParameters {
            service_name,
            autostart,
            thread_sampling_time,
            gazebo_timeout,
            clock_topic_name,
            gz,
        })
    }

    fn serve(&self, run: NodeRun<'_>, gz: gz_transport::Node) -> NodeExit {
        run.teardown.stage("creating the services");
        let server = Arc::new(SimulatorServer {
            world: World {
                gz,
                control: self.service_name.clone(),
                clock: self.clock_topic_name.clone(),
                timeout: self.gazebo_timeout,
            },
            one_call: Mutex::new(()),
        });
        let prefix = run.node.name();
        let services = match create_services(run.node, &prefix, &server) {
            Ok(services) => services,
            Err((name, err)) => {
                tracing::error!("::Exception::cannot create the service {name:?}: {err}");
                return NodeExit::Failure;
            }
        };
        tracing::info!(
            "::Serving {prefix}/start_simulation and {prefix}/stop_simulation (and \
             step_simulation, reset_simulation, get_simulation_state, set_simulation_state) over \
             Gazebo's {}.",
            self.service_name
        );
        let started = spin_until_shutdown(run.executor, run.shutdown, run.teardown, || {
            look_for_gazebo(&server, self.autostart, run.shutdown);
        });
        if let Err(exit) = started {
            return exit;
        }
        run.teardown.stage("destroying the services");
        drop(services);
        NodeExit::Stopped
    }

    fn gz(&self) -> &GzParameters {
        &self.gz
    }
}

/// The services, each kept alive by the returned handles.
type Services = (
    Vec<rclrs::Service<Trigger>>,
    rclrs::Service<StepSimulation>,
    rclrs::Service<ResetSimulation>,
    rclrs::Service<GetSimulationState>,
    rclrs::Service<SetSimulationState>,
);

fn create_services(
    node: &Node,
    prefix: &str,
    server: &Arc<SimulatorServer>,
) -> Result<Services, (String, RclrsError)> {
    let service = ServiceMaker::new(node, prefix, server);
    let triggers = vec![
        service.off_the_executor::<Trigger>(
            "start_simulation",
            |s, _| s.trigger(false),
            trigger_lost,
        )?,
        service.off_the_executor::<Trigger>(
            "stop_simulation",
            |s, _| s.trigger(true),
            trigger_lost,
        )?,
    ];
    let step = service.off_the_executor::<StepSimulation>(
        "step_simulation",
        |s, request| StepSimulation_Response {
            result: s.step(request.steps),
        },
        |why| StepSimulation_Response { result: lost(why) },
    )?;
    let reset = service.off_the_executor::<ResetSimulation>(
        "reset_simulation",
        |s, request| ResetSimulation_Response {
            result: s.reset(request.scope),
        },
        |why| ResetSimulation_Response { result: lost(why) },
    )?;
    let get = service.off_the_executor::<GetSimulationState>(
        "get_simulation_state",
        |s, _| s.state(),
        |why| GetSimulationState_Response {
            state: SimulationState::default(),
            result: lost(why),
        },
    )?;
    let set = service.off_the_executor::<SetSimulationState>(
        "set_simulation_state",
        |s, request| SetSimulationState_Response {
            result: s.set_state(request.state.state),
        },
        |why| SetSimulationState_Response { result: lost(why) },
    )?;
    Ok((triggers, step, reset, get, set))
}

fn trigger_lost(why: String) -> Trigger_Response {
    Trigger_Response {
        success: false,
        message: why,
    }
}

fn lost(why: String) -> SimResult {
    failed(SimResult::RESULT_OPERATION_FAILED, why)
}

/// What the services are made on: the node, their names' prefix and the server.
struct ServiceMaker<'a> {
    node: &'a Node,
    prefix: &'a str,
    server: &'a Arc<SimulatorServer>,
}

impl<'a> ServiceMaker<'a> {
    fn new(node: &'a Node, prefix: &'a str, server: &'a Arc<SimulatorServer>) -> Self {
        ServiceMaker {
            node,
            prefix,
            server,
        }
    }

    /// The async service `<prefix>/<name>` whose `handle` runs on a thread of its own, so a
    /// Gazebo call never holds the executor; `lost` answers when that thread cannot run.
    fn off_the_executor<T>(
        &self,
        name: &str,
        handle: fn(&SimulatorServer, T::Request) -> T::Response,
        lost: fn(String) -> T::Response,
    ) -> Result<rclrs::Service<T>, (String, RclrsError)>
    where
        T: rosidl_runtime_rs::Service,
        T::Request: Send + 'static,
        T::Response: Send + 'static,
    {
        let name = format!("{}/{name}", self.prefix);
        let server = self.server.clone();
        self.node
            .create_async_service::<T, _>(&name, move |request: T::Request| {
                let (answer, answered) = oneshot::channel();
                let server = server.clone();
                let spawned =
                    std::thread::Builder::new()
                        .name("world-call".into())
                        .spawn(move || {
                            let _ = answer.send(handle(&server, request));
                        });
                async move {
                    match spawned {
                        Ok(_) => answered
                            .await
                            .unwrap_or_else(|_| lost("the call to Gazebo was lost".into())),
                        Err(err) => lost(format!("cannot start the call to Gazebo: {err}")),
                    }
                }
            })
            .map_err(|err| (name, err))
    }
}

fn ok() -> SimResult {
    SimResult {
        result: SimResult::RESULT_OK,
        error_message: String::new(),
    }
}

fn failed(result: u8, why: String) -> SimResult {
    tracing::warn!("::{why}");
    SimResult {
        result,
        error_message: why,
    }
}

/// Waits until Gazebo's world control service is found, saying every few seconds that it
/// waits, then (with `autostart`) starts the simulation once; gives up on shutdown.
fn look_for_gazebo(server: &SimulatorServer, autostart: bool, shutdown: &ShutdownToken) {
    let world = &server.world;
    let what = if autostart { "autostart: " } else { "" };
    let started = Instant::now();
    let mut next_note = started;
    loop {
        if shutdown.is_triggered() {
            return;
        }
        // Short waits, so a stop is not held up by the search.
        match world
            .gz
            .wait_for_service(&world.control, Duration::from_millis(500))
        {
            Ok(true) => break,
            Ok(false) => {}
            Err(err) => {
                tracing::error!("::Cannot look for {}: {err}", world.control);
                return;
            }
        }
        if Instant::now() >= next_note {
            tracing::warn!(
                "::{what}waiting for Gazebo's world control service {} (partition {:?}) \
                 for {:.0} s; is Gazebo running?",
                world.control,
                world.gz.partition(),
                started.elapsed().as_secs_f64()
            );
            next_note += WAITING_NOTE_INTERVAL;
        }
    }
    if !autostart {
        tracing::info!("::Found Gazebo's world control service {}.", world.control);
        return;
    }
    let response = server.trigger(false);
    if response.success {
        tracing::info!("::autostart: {}", response.message);
    } else {
        tracing::error!("::autostart: {}", response.message);
    }
}

/// What the services do, one call at a time.
struct SimulatorServer {
    world: World,
    /// Held by each call: two calls interleaved (a step during a reset) would each read the
    /// other's effect on the clock.
    one_call: Mutex<()>,
}

impl SimulatorServer {
    /// Pauses (`pause`) or runs the world; the answer as a Trigger response.
    fn trigger(&self, pause: bool) -> Trigger_Response {
        let _one = self.one_call.lock();
        let (verb, done) = if pause {
            ("stop", "Simulation stopped")
        } else {
            ("start", "Simulation started")
        };
        let request = WorldControl {
            pause,
            ..WorldControl::default()
        };
        let (success, message) = match self.world.control(&request) {
            Ok(()) => (true, format!("{done} ({}).", self.world.control)),
            Err(why) => (false, format!("cannot {verb} the simulation: {why}.")),
        };
        if success {
            tracing::info!("::{message}");
        } else {
            tracing::warn!("::{message}");
        }
        Trigger_Response { success, message }
    }

    /// `steps` steps of a paused world, answered once its clock shows them done.
    fn step(&self, steps: u64) -> SimResult {
        let _one = self.one_call.lock();
        let Ok(multi_step) = u32::try_from(steps) else {
            return failed(
                SimResult::RESULT_OPERATION_FAILED,
                format!("{steps} steps: Gazebo takes at most {} at once", u32::MAX),
            );
        };
        if steps == 0 {
            return ok();
        }
        let clock = match self.world.watch_clock() {
            Ok(clock) => clock,
            Err(why) => return failed(SimResult::RESULT_OPERATION_FAILED, why),
        };
        let from = match clock.observe() {
            Ok((Running::Paused, at)) => at,
            Ok((Running::Playing, _)) => {
                return failed(
                    SimResult::RESULT_OPERATION_FAILED,
                    "the simulation is running: stepping needs it paused (stop_simulation, or \
                     set_simulation_state PAUSED)"
                        .into(),
                )
            }
            Err(why) => return failed(SimResult::RESULT_OPERATION_FAILED, why),
        };
        let request = WorldControl {
            pause: true,
            multi_step,
            ..WorldControl::default()
        };
        if let Err(why) = self.world.control(&request) {
            return failed(SimResult::RESULT_OPERATION_FAILED, why);
        }
        match clock.wait_until_paused_after(from) {
            Ok(at) => {
                tracing::info!(
                    "::Stepped {steps} steps: sim time {:.3} s -> {:.3} s.",
                    from.as_secs_f64(),
                    at.as_secs_f64()
                );
                ok()
            }
            Err(why) => failed(SimResult::RESULT_OPERATION_FAILED, why),
        }
    }

    /// A reset of `scope` (`ResetSimulation`'s bits), leaving the world running or paused as
    /// it was (gz-sim takes every request's `pause` as the state to be in).
    fn reset(&self, scope: u8) -> SimResult {
        let _one = self.one_call.lock();
        let reset = match scope {
            ResetSimulation_Request::SCOPE_TIME => WorldReset {
                time_only: true,
                ..WorldReset::default()
            },
            // gz-sim answers model_only with "Model only reset is not supported".
            ResetSimulation_Request::SCOPE_STATE => {
                return failed(
                    SimResult::RESULT_FEATURE_UNSUPPORTED,
                    "Gazebo does not reset the state without the time (model_only); use \
                     SCOPE_ALL"
                        .into(),
                )
            }
            _ => WorldReset {
                all: true,
                ..WorldReset::default()
            },
        };
        let paused = match self.world.observe() {
            Ok((running, _)) => running == Running::Paused,
            Err(why) => return failed(SimResult::RESULT_OPERATION_FAILED, why),
        };
        let request = WorldControl {
            pause: paused,
            reset: Some(reset),
            ..WorldControl::default()
        };
        match self.world.control(&request) {
            Ok(()) => {
                tracing::info!("::Simulation reset (scope {scope}).");
                ok()
            }
            Err(why) => failed(SimResult::RESULT_OPERATION_FAILED, why),
        }
    }

    fn state(&self) -> GetSimulationState_Response {
        let _one = self.one_call.lock();
        match self.world.observe() {
            Ok((running, _)) => GetSimulationState_Response {
                state: SimulationState {
                    state: match running {
                        Running::Playing => SimulationState::STATE_PLAYING,
                        Running::Paused => SimulationState::STATE_PAUSED,
                    },
                },
                result: ok(),
            },
            Err(why) => GetSimulationState_Response {
                state: SimulationState::default(),
                result: failed(SimResult::RESULT_OPERATION_FAILED, why),
            },
        }
    }

    /// PLAYING and PAUSED run and pause the world; STOPPED pauses and resets it.
    fn set_state(&self, state: u8) -> SimResult {
        let _one = self.one_call.lock();
        let (pause, reset) = match state {
            SimulationState::STATE_PLAYING => (false, false),
            SimulationState::STATE_PAUSED => (true, false),
            SimulationState::STATE_STOPPED => (true, true),
            other => {
                return failed(
                    SimResult::RESULT_FEATURE_UNSUPPORTED,
                    format!("state {other}: Gazebo's world can be played, paused or stopped"),
                )
            }
        };
        let running = match self.world.observe() {
            Ok((running, _)) => running,
            Err(why) => return failed(SimResult::RESULT_OPERATION_FAILED, why),
        };
        if !reset && (running == Running::Paused) == pause {
            return SimResult {
                result: SetSimulationState_Response::ALREADY_IN_TARGET_STATE,
                error_message: String::new(),
            };
        }
        let request = WorldControl {
            pause,
            reset: reset.then(|| WorldReset {
                all: true,
                ..WorldReset::default()
            }),
            ..WorldControl::default()
        };
        match self.world.control(&request) {
            Ok(()) => ok(),
            Err(why) => failed(SetSimulationState_Response::STATE_TRANSITION_ERROR, why),
        }
    }
}
