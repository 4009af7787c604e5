//! Running a world: the step thread (absolute deadlines on the monotonic clock at
//! step ÷ real-time factor), the command subscriptions, and the joint-state and clock
//! publications, all over gz-transport.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gz_transport::msgs::{self, GzMessage};
use gz_transport::{
    MessageInfo, MsgsPrefix, Node, NodeOptions, RawPublisher, ServiceResponder, Subscription,
};
use parking_lot::Mutex;
use prost::Message;

use crate::messages::{pose_message, time};
use crate::plant::{JointState, Plant, Targets};
use crate::sdf::{JointStateTopicNaming, PoseSpec, World};
use crate::topics;
use crate::world_control::{self, ResetBehaviour, RunState, RunWatch};

/// What the joint states report as a joint's effort (`axis1.force`).
///
/// Real Gazebo always reports 0: its JointStatePublisher copies the `JointForce` component,
/// which it creates empty and which no system of gz-sim fills (checked in gz-sim 8, 9 and
/// main and ign-gazebo 6: ApplyJointForce and the controllers write `JointForceCmd`; the
/// Physics system reads and clears that and never writes `JointForce`), so `axis1.force` is
/// never set, for force-commanded joints too. The other modes are for tests and
/// experiments that want to see the actuator's effort, and say so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EffortReport {
    /// 0 for every joint, as Gazebo.
    #[default]
    Zero,
    /// The force (torque) applied to joints under a force command (ApplyJointForce,
    /// JointController force mode, JointPositionController PID mode), after the effort
    /// limit; 0 for the other joints. Not what Gazebo does (see above).
    ForceCommanded,
    /// The force (torque) the actuator applied to every joint during the step: the servo's
    /// torque under a velocity command, the clipped force under a force command.
    Servo,
}

/// How to run a world.
#[derive(Clone, Debug, Default)]
pub struct SimOptions {
    /// Type-name prefix on the wire: `gz.msgs.` (Harmonic, default) or `ignition.msgs.`.
    pub msgs_prefix: MsgsPrefix,
    /// gz-transport partition; `None` → `GZ_PARTITION`/`IGN_PARTITION`/default.
    pub partition: Option<String>,
    /// Overrides the world's `<real_time_factor>`.
    pub real_time_factor: Option<f64>,
    /// What the joint states carry as effort.
    pub report_effort: EffortReport,
    /// The JointStatePublisher topic naming of the Gazebo to imitate.
    pub joint_state_topic_naming: JointStateTopicNaming,
    /// Start paused (as `gz sim` without `-r`), until a world-control request unpauses.
    pub paused: bool,
    /// What a world reset puts back: the clock, joints and models (Harmonic, default) or
    /// the clock only (Fortress).
    pub reset_behaviour: ResetBehaviour,
    /// Messages per second on `/world/<world>/pose/info`; `None` → 60, the
    /// SceneBroadcaster's.
    pub pose_rate: Option<f64>,
}

/// The SceneBroadcaster's `pose/info` rate (`SetMsgsPerSec(60)`, gz-sim 8 and ign-gazebo 6).
pub const DEFAULT_POSE_RATE: f64 = 60.0;

/// How long gz-sim's run loop sleeps between the iterations of a paused world (it still
/// publishes the clock and the joint states at each one).
const PAUSED_ITERATION: Duration = Duration::from_millis(1);

/// Why a world could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the real-time factor must be a positive number, got {0}")]
    RealTimeFactor(f64),
    #[error("the pose rate must be a positive number of messages per second, got {0}")]
    PoseRate(f64),
    #[error("gz-transport: {0}")]
    Transport(gz_transport::Error),
    #[error("cannot start the simulation thread: {0}")]
    Thread(std::io::Error),
}

impl From<gz_transport::Error> for StartError {
    fn from(e: gz_transport::Error) -> StartError {
        StartError::Transport(e)
    }
}

/// One joint's state as last stepped.
#[derive(Clone, Debug, PartialEq)]
pub struct JointSnapshot {
    /// Scoped name, `model::…::joint`.
    pub name: String,
    pub position: f64,
    pub velocity: f64,
    pub force: f64,
}

/// Step timing over a window (see [`SimHandle::take_timing`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    /// Steps taken in the window.
    pub steps: u64,
    /// Sim time at the end of the window.
    pub sim_time: Duration,
    /// Sim time advanced ÷ wall time elapsed, between the window's first and last step.
    pub real_time_factor: f64,
    /// How late steps started after their deadline: mean, 99th percentile, maximum.
    pub lateness_mean: Duration,
    pub lateness_p99: Duration,
    pub lateness_max: Duration,
    /// Times the step thread fell so far behind that it gave up catching up (slowing sim
    /// time down, as Gazebo does when it cannot keep up).
    pub resyncs: u64,
}

/// A running world. Stops (and joins its thread) on [`SimHandle::stop`] or drop.
pub struct SimHandle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    joint_names: Vec<String>,
    real_time_factor: f64,
    node: Node,
    model_names: Vec<String>,
    _subscriptions: Vec<Subscription>,
    _services: Vec<ServiceResponder>,
}

struct Shared {
    stop: AtomicBool,
    /// The latest command of every controller, as `f64` bits (written by the transport
    /// threads), in [`Targets`] order.
    positions: Vec<AtomicU64>,
    velocities: Vec<AtomicU64>,
    forces: Vec<AtomicU64>,
    /// Non-finite position targets refused (the previous target stays).
    refused: AtomicU64,
    /// Non-finite velocity and force commands received (taken as Gazebo takes them, see
    /// [`SimHandle::non_finite_commands`]).
    non_finite: AtomicU64,
    status: Mutex<Status>,
    /// World-control requests not yet applied, in arrival order (the step thread applies
    /// them at the end of its iteration, as gz-sim).
    controls: Mutex<Vec<msgs::WorldControl>>,
    /// The top-level models' world poses, in [`World::models`] order (`set_pose` writes
    /// them, a Harmonic reset puts them back).
    model_poses: Mutex<Vec<PoseSpec>>,
    /// `set_pose` requests refused.
    refused_poses: AtomicU64,
}

fn atomics(values: &[f64]) -> Vec<AtomicU64> {
    values.iter().map(|v| AtomicU64::new(v.to_bits())).collect()
}

fn load(from: &[AtomicU64], into: &mut [f64]) {
    for (t, shared) in into.iter_mut().zip(from) {
        *t = f64::from_bits(shared.load(Ordering::Relaxed));
    }
}

struct Status {
    sim_time: Duration,
    paused: bool,
    joints: Vec<JointState>,
    window: TimingWindow,
}

impl World {
    /// Starts the world: subscribes to every controller's command topic, advertises every
    /// joint-state topic and the clock, and steps until stopped.
    pub fn start(&self, options: SimOptions) -> Result<SimHandle, StartError> {
        let rtf = options.real_time_factor.unwrap_or(self.real_time_factor);
        if !(rtf.is_finite() && rtf > 0.0) {
            return Err(StartError::RealTimeFactor(rtf));
        }
        let pose_rate = options.pose_rate.unwrap_or(DEFAULT_POSE_RATE);
        if !(pose_rate.is_finite() && pose_rate > 0.0) {
            return Err(StartError::PoseRate(pose_rate));
        }
        let prefix = options.msgs_prefix;
        let node = Node::with_options(NodeOptions {
            partition: options.partition.clone(),
            namespace: None,
            msgs_prefix: prefix,
            ..Default::default()
        })?;

        let initial = Targets::initial(self);
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            refused: AtomicU64::new(0),
            non_finite: AtomicU64::new(0),
            positions: atomics(&initial.positions),
            velocities: atomics(&initial.velocities),
            forces: atomics(&initial.forces),
            status: Mutex::new(Status {
                sim_time: Duration::ZERO,
                paused: options.paused,
                joints: vec![JointState::default(); self.joints.len()],
                window: TimingWindow::new(),
            }),
            controls: Mutex::new(Vec::new()),
            model_poses: Mutex::new(self.models.iter().map(|m| m.pose).collect()),
            refused_poses: AtomicU64::new(0),
        });

        let mut subscriptions = Vec::new();
        for (i, c) in self.position_controllers.iter().enumerate() {
            let shared = shared.clone();
            let mut refusals = Refusals::default();
            let topic = c.topic.clone();
            subscriptions.push(node.subscribe(
                &c.topic,
                move |m: msgs::Double, info: &MessageInfo| {
                    if m.data.is_finite() {
                        shared.positions[i].store(m.data.to_bits(), Ordering::Relaxed);
                    } else {
                        shared.refused.fetch_add(1, Ordering::Relaxed);
                        refusals.warn(
                            &topic,
                            m.data,
                            info,
                            "refused; the position target is unchanged",
                        );
                    }
                },
            )?);
        }
        // The JointController and ApplyJointForce keep whatever arrived, NaN included, as
        // gz-sim's do; physics then ignores a non-finite command (see `Plant::step`). That
        // is matched here, loudly.
        let latched = [
            (
                self.joint_controllers
                    .iter()
                    .map(|c| c.topic.clone())
                    .collect::<Vec<_>>(),
                Latched::Velocity,
            ),
            (
                self.force_appliers
                    .iter()
                    .map(|a| a.topic.clone())
                    .collect(),
                Latched::Force,
            ),
        ];
        for (topics, kind) in latched {
            for (i, topic) in topics.into_iter().enumerate() {
                let shared = shared.clone();
                let mut refusals = Refusals::default();
                let consequence = match kind {
                    Latched::Velocity => "taken as Gazebo takes it: physics ignores it, so the joint is servoed to rest until a finite velocity arrives",
                    Latched::Force => "taken as Gazebo takes it: physics ignores it, so the joint gets no force until a finite force arrives",
                };
                subscriptions.push(node.subscribe(
                    &topic.clone(),
                    move |m: msgs::Double, info: &MessageInfo| {
                        let slot = match kind {
                            Latched::Velocity => &shared.velocities[i],
                            Latched::Force => &shared.forces[i],
                        };
                        slot.store(m.data.to_bits(), Ordering::Relaxed);
                        if !m.data.is_finite() {
                            shared.non_finite.fetch_add(1, Ordering::Relaxed);
                            refusals.warn(&topic, m.data, info, consequence);
                        }
                    },
                )?);
            }
        }

        let state_publishers = self
            .state_publishers
            .iter()
            .map(|p| {
                StatePublication::new(
                    self,
                    p,
                    p.topic_for(options.joint_state_topic_naming),
                    &node,
                    prefix,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let clock_type = prefix.type_name(msgs::Clock::SHORT_NAME);
        let mut clock_publishers = vec![node.advertise_raw("/clock", &clock_type)?];
        if let Some(world_clock) = topics::world_clock(&self.name) {
            clock_publishers.push(node.advertise_raw(&world_clock, &clock_type)?);
        }

        let services = self.advertise_world_services(&node, &shared)?;
        let pose_publisher = match topics::world_pose_info(&self.name) {
            Some(topic) => {
                Some(node.advertise_raw(&topic, &prefix.type_name(msgs::PoseV::SHORT_NAME))?)
            }
            None => None,
        };

        let stepper = Stepper {
            world: self.clone(),
            node: node.clone(),
            plant: Plant::new(self),
            shared: shared.clone(),
            targets: initial,
            state_publishers,
            clock_publishers,
            clock: msgs::Clock::default(),
            buffer: Vec::with_capacity(1024),
            step: self.step,
            period: self.step.div_f64(rtf),
            publish_errors: 0,
            report_effort: options.report_effort,
            reset_behaviour: options.reset_behaviour,
            run: RunState::new(options.paused),
            pose_publisher,
            pose_interval: Duration::from_secs_f64(1.0 / pose_rate),
            last_pose_publish: None,
        };
        let thread = std::thread::Builder::new()
            .name(format!("gz-joint-sim {}", self.name))
            .spawn(move || stepper.run())
            .map_err(StartError::Thread)?;
        tracing::info!(
            "world {:?} running{}: step {:?}, real-time factor {rtf}, partition {:?}, {} joints, {} controllers",
            self.name,
            if options.paused { " (paused)" } else { "" },
            self.step,
            node.partition(),
            self.joints.len(),
            self.position_controllers.len()
                + self.joint_controllers.len()
                + self.force_appliers.len()
        );
        Ok(SimHandle {
            shared,
            thread: Some(thread),
            joint_names: self.joints.iter().map(|j| j.scoped_name.clone()).collect(),
            real_time_factor: rtf,
            node,
            model_names: self.models.iter().map(|m| m.name.clone()).collect(),
            _subscriptions: subscriptions,
            _services: services,
        })
    }

    /// `/world/<world>/control` and `/world/<world>/set_pose`. The handlers run on
    /// transport threads: they only queue the request (control) or check and store the pose
    /// (set_pose) for the step thread, and answer.
    fn advertise_world_services(
        &self,
        node: &Node,
        shared: &Arc<Shared>,
    ) -> Result<Vec<ServiceResponder>, StartError> {
        let mut services = Vec::new();
        let (Some(control), Some(set_pose)) = (
            topics::world_control(&self.name),
            topics::world_set_pose(&self.name),
        ) else {
            // gz-sim logs an error and offers neither for a world name no topic can carry.
            tracing::error!(
                "world name {:?} makes no valid service name: no world control, no set_pose",
                self.name
            );
            return Ok(services);
        };
        let queue = shared.clone();
        services.push(
            node.advertise_service(&control, move |request: msgs::WorldControl| {
                tracing::debug!("world control: {request:?}");
                queue.controls.lock().push(request);
                // gz-sim answers true to every request, before applying it.
                Some(msgs::Boolean {
                    header: None,
                    data: true,
                })
            })?,
        );
        let shared = shared.clone();
        let models = self.models.clone();
        let service = set_pose.clone();
        services.push(
            node.advertise_service(&service, move |request: msgs::Pose| {
                let data = match world_control::pose_request(&models, &request) {
                    Ok((index, pose)) => {
                        shared.model_poses.lock()[index] = pose;
                        true
                    }
                    Err(e) => {
                        let refused = shared.refused_poses.fetch_add(1, Ordering::Relaxed) + 1;
                        tracing::warn!(
                            "{set_pose}: request refused ({refused} so far), nothing moved: {e}"
                        );
                        false
                    }
                };
                Some(msgs::Boolean { header: None, data })
            })?,
        );
        Ok(services)
    }
}

impl SimHandle {
    /// Sim time of the last completed step.
    pub fn sim_time(&self) -> Duration {
        self.shared.status.lock().sim_time
    }

    /// Whether the world is paused (as of the last iteration).
    pub fn paused(&self) -> bool {
        self.shared.status.lock().paused
    }

    /// A top-level model's world pose, by name.
    pub fn model_pose(&self, name: &str) -> Option<PoseSpec> {
        let index = self.model_names.iter().position(|n| n == name)?;
        Some(self.shared.model_poses.lock()[index])
    }

    /// How many `set_pose` requests were refused (unknown entity, bad numbers).
    pub fn refused_poses(&self) -> u64 {
        self.shared.refused_poses.load(Ordering::Relaxed)
    }

    /// Every joint of the world, in [`World::joints`] order.
    pub fn joints(&self) -> Vec<JointSnapshot> {
        let status = self.shared.status.lock();
        self.joint_names
            .iter()
            .zip(&status.joints)
            .map(|(name, s)| JointSnapshot {
                name: name.clone(),
                position: s.position,
                velocity: s.velocity,
                force: s.force,
            })
            .collect()
    }

    /// A joint's position by scoped name, or by plain name if that is unique.
    pub fn joint_position(&self, name: &str) -> Option<f64> {
        let index = self
            .joint_names
            .iter()
            .position(|n| n == name)
            .or_else(|| {
                let suffix = format!("::{name}");
                let mut found = self
                    .joint_names
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.ends_with(&suffix));
                match (found.next(), found.next()) {
                    (Some((i, _)), None) => Some(i),
                    _ => None,
                }
            })?;
        Some(self.shared.status.lock().joints[index].position)
    }

    /// How many NaN/inf position targets were refused so far.
    pub fn refused_commands(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// How many NaN/inf velocity (`cmd_vel`) and force (`cmd_force`) commands arrived so
    /// far. Unlike position targets they are not refused: as in Gazebo the latest command
    /// stands and physics ignores it, step after step (a warning says so on receipt).
    pub fn non_finite_commands(&self) -> u64 {
        self.shared.non_finite.load(Ordering::Relaxed)
    }

    /// The real-time factor the world runs at.
    pub fn target_real_time_factor(&self) -> f64 {
        self.real_time_factor
    }

    /// The gz-transport partition the world talks on.
    pub fn partition(&self) -> &str {
        self.node.partition()
    }

    /// Step timing since the previous call (or the start), and starts a new window.
    pub fn take_timing(&self) -> Timing {
        let mut status = self.shared.status.lock();
        let sim_time = status.sim_time;
        std::mem::replace(&mut status.window, TimingWindow::new()).report(sim_time)
    }

    /// Stops stepping and joins the step thread; publishers and subscriptions go with it.
    pub fn stop(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            if thread.join().is_err() {
                tracing::error!("the simulation thread panicked");
            }
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

#[derive(Clone, Copy)]
enum Latched {
    Velocity,
    Force,
}

/// Warns about non-finite commands without flooding the log at the command rate.
#[derive(Default)]
struct Refusals {
    count: u64,
    last_warning: Option<Instant>,
}

impl Refusals {
    fn warn(&mut self, topic: &str, value: f64, info: &MessageInfo, consequence: &str) {
        self.count += 1;
        if self
            .last_warning
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            tracing::warn!(
                "{topic}: non-finite command {value} from {} ({} on this topic so far): {consequence}",
                info.publisher_address,
                self.count
            );
            self.last_warning = Some(Instant::now());
        }
    }
}

/// One JointStatePublisher: its topic and a `Model` message built once and updated in place.
struct StatePublication {
    publisher: RawPublisher,
    message: msgs::Model,
    /// `(index into world joints, index into message.joint)` of joints with an axis.
    moving: Vec<(usize, usize)>,
    min_interval: Option<Duration>,
    last_published: Option<Duration>,
    /// Whether the message is due this step.
    due: bool,
    /// The message of the step that last published it, encoded.
    encoded: Vec<u8>,
}

impl StatePublication {
    fn new(
        world: &World,
        spec: &crate::sdf::StatePublisherSpec,
        topic: &str,
        node: &Node,
        prefix: MsgsPrefix,
    ) -> Result<StatePublication, StartError> {
        let publisher = node.advertise_raw(topic, &prefix.type_name(msgs::Model::SHORT_NAME))?;
        let mut message = msgs::Model {
            header: Some(msgs::Header {
                stamp: Some(msgs::Time::default()),
                data: Vec::new(),
            }),
            name: spec.model_name.clone(),
            id: spec.model_id,
            pose: Some(pose_message(&spec.model_pose)),
            ..Default::default()
        };
        let mut moving = Vec::new();
        for &j in &spec.joints {
            let joint = &world.joints[j];
            // As gz-sim's JointStatePublisher: axis1 only for joints with a position (fixed
            // joints have none), with the SDF axis direction, limits and damping.
            let axis1 = joint
                .axis
                .filter(|_| joint.kind.dof() > 0)
                .map(|a| msgs::Axis {
                    xyz: Some(a.xyz.into()),
                    limit_lower: a.lower,
                    limit_upper: a.upper,
                    damping: a.damping,
                    ..Default::default()
                });
            if axis1.is_some() {
                moving.push((j, message.joint.len()));
            }
            message.joint.push(msgs::Joint {
                name: joint.name.clone(),
                id: joint.id,
                parent: joint.parent.clone(),
                child: joint.child.clone(),
                pose: Some(pose_message(&joint.pose)),
                axis1,
                ..Default::default()
            });
        }
        Ok(StatePublication {
            publisher,
            message,
            moving,
            min_interval: spec.update_rate.map(|hz| Duration::from_secs_f64(1.0 / hz)),
            last_published: None,
            due: false,
            encoded: Vec::with_capacity(1024),
        })
    }
}

/// The step thread's state.
struct Stepper {
    /// What a Harmonic reset puts back.
    world: World,
    node: Node,
    plant: Plant,
    shared: Arc<Shared>,
    targets: Targets,
    state_publishers: Vec<StatePublication>,
    clock_publishers: Vec<RawPublisher>,
    clock: msgs::Clock,
    buffer: Vec<u8>,
    step: Duration,
    period: Duration,
    publish_errors: u64,
    report_effort: EffortReport,
    reset_behaviour: ResetBehaviour,
    run: RunState,
    /// `/world/<world>/pose/info`, unless the world's name makes no valid topic.
    pose_publisher: Option<RawPublisher>,
    /// At most one pose message per interval of wall time (gz-transport's throttle).
    pose_interval: Duration,
    last_pose_publish: Option<Instant>,
}

/// Falling further behind than this stops catching up (a stall, not jitter).
fn max_lag(period: Duration) -> Duration {
    (period * 25).max(Duration::from_millis(50))
}

impl Stepper {
    /// gz-sim's run loop (`SimulationRunner::Run`/`Step`): each iteration advances sim time
    /// by a step unless paused, publishes the clock, runs the controllers and physics
    /// (only when not paused) and the publishers (always), then applies the world-control
    /// requests that arrived. A running world iterates on absolute deadlines; a paused one
    /// every [`PAUSED_ITERATION`], still publishing the clock and joint states with the
    /// same sim time.
    fn run(mut self) {
        tighten_timer_slack();
        let start = Instant::now();
        let mut watch = RunWatch::new(!self.run.paused, start);
        let mut anchor = start;
        let mut steps_since_anchor: u32 = 0;
        let mut sim_time = Duration::ZERO;
        loop {
            let paused = self.run.paused;
            let deadline = if paused {
                Instant::now() + PAUSED_ITERATION
            } else {
                steps_since_anchor += 1;
                anchor + self.period * steps_since_anchor
            };
            while !self.shared.stop.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                std::thread::park_timeout(deadline - now);
            }
            if self.shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let woke = Instant::now();
            let lateness = woke - deadline;
            let resync = !paused && lateness > max_lag(self.period);
            if resync {
                anchor = woke;
                steps_since_anchor = 0;
            }

            // A Harmonic reset's iteration only resets the systems: no controller, physics
            // or JointStatePublisher runs in it (`SimulationRunner::UpdateSystems`).
            let mut systems_run = true;
            if std::mem::take(&mut self.run.rewind) {
                sim_time = Duration::ZERO;
                watch = RunWatch::new(!paused, woke);
                if self.reset_behaviour == ResetBehaviour::Harmonic {
                    self.reset_entities();
                    systems_run = false;
                }
                tracing::info!(
                    "world reset: sim time back to 0{}",
                    match self.reset_behaviour {
                        ResetBehaviour::Harmonic => ", joints, controllers and models as loaded",
                        ResetBehaviour::Fortress => " (the clock only, as Fortress)",
                    }
                );
            } else if !paused {
                sim_time += self.step;
            }
            // gz-sim publishes the clock at the start of an iteration, with that iteration's
            // sim time, before its systems run (`SimulationRunner::Step` → `PublishStats`);
            // the joint states of the same sim time follow from PostUpdate.
            self.publish_clock(sim_time, watch.elapsed(woke));
            if systems_run && !paused {
                load(&self.shared.positions, &mut self.targets.positions);
                load(&self.shared.velocities, &mut self.targets.velocities);
                load(&self.shared.forces, &mut self.targets.forces);
                self.plant.step(&self.targets);
            }
            // The run state after this iteration: past a run-to time or a multi-step's end
            // the world pauses, then the requests that arrived apply.
            self.run.after_iteration(sim_time);
            for request in std::mem::take(&mut *self.shared.controls.lock()) {
                self.run.apply(&request, sim_time);
            }
            if paused && !self.run.paused {
                // Unpaused: the first step is due a period from now, not in the past.
                anchor = woke;
                steps_since_anchor = 0;
            }
            watch.set_running(!self.run.paused, woke);
            // The status first: whoever saw a published state must find it (or a later one)
            // in `joints()`, never the step before.
            {
                let mut status = self.shared.status.lock();
                status.sim_time = sim_time;
                status.paused = self.run.paused;
                status.joints.copy_from_slice(self.plant.joints());
                if !paused {
                    status.window.record(woke, sim_time, lateness, resync);
                }
            }
            if systems_run {
                self.publish_joint_states(sim_time);
            }
            // The SceneBroadcaster has a `Reset`, which publishes: its poses go out at a
            // Harmonic reset's iteration too.
            self.publish_poses(sim_time, woke);
        }
        tracing::debug!(
            "step thread stopped after {} steps",
            self.plant.iterations()
        );
    }

    /// Harmonic's reset: the entities as loaded (`ResetTo` the initial ECM: joints at rest
    /// where they started, models at their SDF poses) and the controllers reloaded (their
    /// SDF initial targets; a fresh controller waits one iteration again).
    fn reset_entities(&mut self) {
        self.plant = Plant::new(&self.world);
        self.targets = Targets::initial(&self.world);
        for (from, into) in [
            (&self.targets.positions, &self.shared.positions),
            (&self.targets.velocities, &self.shared.velocities),
            (&self.targets.forces, &self.shared.forces),
        ] {
            for (value, slot) in from.iter().zip(into) {
                slot.store(value.to_bits(), Ordering::Relaxed);
            }
        }
        let mut poses = self.shared.model_poses.lock();
        for (pose, model) in poses.iter_mut().zip(&self.world.models) {
            *pose = model.pose;
        }
        for p in &mut self.state_publishers {
            p.last_published = None;
        }
    }

    /// The SceneBroadcaster's `pose/info`: built only when someone listens (it checks
    /// `HasConnections`), at most once per [`Stepper::pose_interval`] of wall time, paused
    /// or not.
    fn publish_poses(&mut self, sim_time: Duration, now: Instant) {
        let Some(publisher) = &self.pose_publisher else {
            return;
        };
        if !publisher.has_subscribers()
            || self
                .last_pose_publish
                .is_some_and(|last| now - last < self.pose_interval)
        {
            return;
        }
        self.last_pose_publish = Some(now);
        let message = {
            let poses = self.shared.model_poses.lock();
            world_control::pose_info(&self.world.models, &poses, sim_time)
        };
        self.buffer.clear();
        message
            .encode(&mut self.buffer)
            .expect("a Vec grows as needed");
        if let Err(e) = publisher.publish_raw(&self.buffer) {
            report_publish_error(&mut self.publish_errors, publisher.topic(), &e);
        }
    }

    /// Gazebo's publishers run one after another in PostUpdate, each handing its message to
    /// ZeroMQ; libzmq's I/O thread then writes whatever is queued for a subscriber together,
    /// up to [`ZMQ_OUT_BATCH_SIZE`] bytes a write (`stream_engine_base_t::out_event`). So a
    /// step's states reach each subscriber in a few segments, not one per robot: written
    /// here the same way.
    fn publish_joint_states(&mut self, sim_time: Duration) {
        self.encode_due_states(sim_time);
        let due: Vec<(&RawPublisher, &[u8])> = self
            .state_publishers
            .iter()
            .filter(|p| p.due)
            .map(|p| (&p.publisher, p.encoded.as_slice()))
            .collect();
        // A message's frames: topic, sender address, payload, type (the address and the
        // frame headers take under 64 bytes).
        let sizes: Vec<usize> = due
            .iter()
            .map(|(publisher, payload)| {
                publisher.topic().len() + publisher.type_name().len() + payload.len() + 64
            })
            .collect();
        for run in write_runs(&sizes, ZMQ_OUT_BATCH_SIZE) {
            if let Err(e) = self.node.publish_together(&due[run.clone()]) {
                report_publish_error(&mut self.publish_errors, due[run.start].0.topic(), &e);
            }
        }
    }

    /// Marks the messages due this step and updates and encodes them.
    fn encode_due_states(&mut self, sim_time: Duration) {
        let stamp = time(sim_time);
        for p in &mut self.state_publishers {
            // As gz-sim's JointStatePublisher: skipped only while less than its period after
            // the last one; so a paused world (same sim time) and one gone back in time
            // (after a reset) publish at every iteration.
            p.due = match (p.min_interval, p.last_published) {
                (Some(min), Some(last)) => !(sim_time > last && sim_time - last < min),
                _ => true,
            };
            if !p.due {
                continue;
            }
            p.last_published = Some(sim_time);
            if let Some(header) = p.message.header.as_mut() {
                header.stamp = Some(stamp);
            }
            for &(j, m) in &p.moving {
                let s = self.plant.joints()[j];
                if let Some(axis) = p.message.joint[m].axis1.as_mut() {
                    axis.position = s.position;
                    axis.velocity = s.velocity;
                    axis.force = match self.report_effort {
                        EffortReport::Zero => 0.0,
                        EffortReport::ForceCommanded if self.plant.force_driven(j) => s.force,
                        EffortReport::ForceCommanded => 0.0,
                        EffortReport::Servo => s.force,
                    };
                }
            }
            p.encoded.clear();
            p.message
                .encode(&mut p.encoded)
                .expect("a Vec grows as needed");
        }
    }

    /// `gz.msgs.Clock` as gz-sim fills it: `sim`, `real` (wall time the world has run) and
    /// `system` (wall clock since the epoch); no header, not throttled: once per step.
    fn publish_clock(&mut self, sim_time: Duration, real_time: Duration) {
        self.clock.sim = Some(time(sim_time));
        self.clock.real = Some(time(real_time));
        self.clock.system = Some(time(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
        ));
        self.buffer.clear();
        self.clock
            .encode(&mut self.buffer)
            .expect("a Vec grows as needed");
        for publisher in &self.clock_publishers {
            if let Err(e) = publisher.publish_raw(&self.buffer) {
                report_publish_error(&mut self.publish_errors, publisher.topic(), &e);
            }
        }
    }
}

/// Linux lets a sleeping thread wake up to 50 µs late by default (timer slack), a quarter
/// of the typical lateness budget at a 2 ms step; ask for 1 µs on the step thread.
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only affects this thread.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
    if rc != 0 {
        tracing::debug!(
            "cannot tighten the timer slack: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// libzmq's `ZMQ_OUT_BATCH_SIZE` default: what its I/O thread writes to a socket at most at once.
const ZMQ_OUT_BATCH_SIZE: usize = 8192;

/// Splits messages of `sizes` bytes, in order, into the runs libzmq writes together: as many
/// as fit in `limit` bytes, a larger message alone.
fn write_runs(sizes: &[usize], limit: usize) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (index, &size) in sizes.iter().enumerate() {
        if index > start && bytes + size > limit {
            runs.push(start..index);
            (start, bytes) = (index, 0);
        }
        bytes += size;
    }
    if start < sizes.len() {
        runs.push(start..sizes.len());
    }
    runs
}

fn report_publish_error(count: &mut u64, topic: &str, e: &gz_transport::Error) {
    *count += 1;
    if count.is_power_of_two() {
        tracing::warn!("{topic}: publish failed ({count} failures so far): {e}");
    }
}

/// Lateness statistics of a window of steps, with a fixed histogram (no allocation per step).
struct TimingWindow {
    steps: u64,
    first: Option<(Instant, Duration)>,
    last: Option<(Instant, Duration)>,
    lateness_sum: Duration,
    lateness_max: Duration,
    /// 10 µs buckets up to 20 ms; the last bucket takes everything later.
    histogram: Box<[u32; HISTOGRAM_BUCKETS]>,
    resyncs: u64,
}

const HISTOGRAM_BUCKETS: usize = 2000;
const BUCKET: Duration = Duration::from_micros(10);

impl TimingWindow {
    fn new() -> TimingWindow {
        TimingWindow {
            steps: 0,
            first: None,
            last: None,
            lateness_sum: Duration::ZERO,
            lateness_max: Duration::ZERO,
            histogram: Box::new([0; HISTOGRAM_BUCKETS]),
            resyncs: 0,
        }
    }

    fn record(&mut self, wall: Instant, sim: Duration, lateness: Duration, resync: bool) {
        self.steps += 1;
        self.first.get_or_insert((wall, sim));
        self.last = Some((wall, sim));
        self.lateness_sum += lateness;
        self.lateness_max = self.lateness_max.max(lateness);
        let bucket =
            ((lateness.as_nanos() / BUCKET.as_nanos()) as usize).min(HISTOGRAM_BUCKETS - 1);
        self.histogram[bucket] += 1;
        self.resyncs += u64::from(resync);
    }

    fn report(&self, sim_time: Duration) -> Timing {
        let real_time_factor = match (self.first, self.last) {
            (Some((w0, s0)), Some((w1, s1))) if w1 > w0 => {
                (s1 - s0).as_secs_f64() / (w1 - w0).as_secs_f64()
            }
            _ => 0.0,
        };
        let mut p99 = Duration::ZERO;
        let wanted = (self.steps as f64 * 0.99).ceil() as u64;
        let mut seen = 0u64;
        for (i, &n) in self.histogram.iter().enumerate() {
            seen += u64::from(n);
            if seen >= wanted && n > 0 {
                p99 = BUCKET * (i as u32 + 1);
                break;
            }
        }
        Timing {
            steps: self.steps,
            sim_time,
            real_time_factor,
            lateness_mean: if self.steps > 0 {
                Duration::from_nanos((self.lateness_sum.as_nanos() / u128::from(self.steps)) as u64)
            } else {
                Duration::ZERO
            },
            lateness_p99: p99.min(self.lateness_max),
            lateness_max: self.lateness_max,
            resyncs: self.resyncs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_messages_are_written_in_runs_of_at_most_the_batch_size() {
        // Sixteen robots' states of 700 bytes: eleven fit in 8 192 bytes, the rest follow.
        assert_eq!(write_runs(&[700; 16], 8192), vec![0..11, 11..16]);
        // Exactly full, then one more.
        assert_eq!(write_runs(&[4096, 4096, 1], 8192), vec![0..2, 2..3]);
        // A message larger than a batch goes alone, between its neighbours' runs.
        assert_eq!(
            write_runs(&[100, 9000, 100, 100], 8192),
            vec![0..1, 1..2, 2..4]
        );
        assert_eq!(write_runs(&[9000], 8192), vec![0..1]);
        assert!(write_runs(&[], 8192).is_empty());
    }
}
