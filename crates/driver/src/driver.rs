use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gz_transport::msgs::{Double, Model};
use gz_transport::{
    Delivery, GzMessage, MessageInfo, Node, NodeOptions, Publisher, RawPublisher, Subscription,
};
use parking_lot::{Mutex, RwLock};

use crate::rate_commands::{RateCommands, RateSend};
use crate::receive::{model_stamp, ReceiveHealth};
use crate::reset::{ResetWatch, Resets, ANNOUNCEMENTS};
use crate::source::SourceGate;
use crate::Interest;
use crate::{apply_limits, check_limits, check_shape, Clamp, RateLimitedWarning};
use crate::{
    Command, DriverError, ForwardMode, JointSnapshot, JointStateCache, ModelReceiver,
    RobotDriverGazeboConfiguration, ShutdownToken, TargetOutcome, WorldReset,
};
use crate::{StateListener, StateListenerGuard, StateListeners};

/// How often a waiting `initialize()` logs which joints are still missing.
const INITIALIZE_PROGRESS_INTERVAL: Duration = Duration::from_secs(2);
/// How long `initialize()` waits, once every joint was seen, for each command topic's
/// subscriber (Gazebo's JointPositionController) to be connected, so that the first target
/// reaches Gazebo. Controllers subscribe when the world loads, before joint states flow; past
/// this, a warning names the topics nobody subscribes to.
const COMMAND_SUBSCRIBERS_WAIT: Duration = Duration::from_secs(2);
/// The slice of that wait between looks at shutdown and disconnect.
const COMMAND_SUBSCRIBERS_SLICE: Duration = Duration::from_millis(100);
/// At most one clamp warning per this interval.
const CLAMP_WARNING_INTERVAL: Duration = Duration::from_secs(1);

/// Where the driver is in its lifecycle (the original's connect → initialize → deinitialize →
/// disconnect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DriverState {
    /// No transport endpoints. Snapshots can be read (they hold whatever was received
    /// before).
    Disconnected = 0,
    /// Command topics advertised, joint states flowing into the cache; getters and targets
    /// not yet available.
    Connected = 1,
    /// Every joint seen, limits captured: getters work, targets are accepted and forwarded.
    Initialized = 2,
}

impl DriverState {
    fn from_u8(value: u8) -> DriverState {
        match value {
            0 => DriverState::Disconnected,
            1 => DriverState::Connected,
            _ => DriverState::Initialized,
        }
    }
}

/// The transport endpoints that exist while connected.
struct Links {
    /// One per joint, in configuration order: positions (`cmd_pos`).
    publishers: Vec<Publisher<Double>>,
    /// Velocities (`cmd_vel`), one per joint.
    velocities: Vec<Publisher<Double>>,
    /// Efforts (`cmd_force`), one per joint.
    forces: Vec<Publisher<Double>>,
    _joint_states: Subscription,
}

impl Links {
    fn publishers_of(&self, command: Command) -> &[Publisher<Double>] {
        match command {
            Command::Positions => &self.publishers,
            Command::Velocities => &self.velocities,
            Command::Forces => &self.forces,
        }
    }

    /// The command publishers a message sent now would reach no subscriber of.
    fn unsubscribed(&self) -> Vec<&Publisher<Double>> {
        self.publishers
            .iter()
            .filter(|publisher| !publisher.has_subscribers())
            .collect()
    }
}

fn topics(publishers: &[&Publisher<Double>]) -> Vec<String> {
    publishers
        .iter()
        .map(|publisher| publisher.topic().to_string())
        .collect()
}

/// The latest accepted target and what was forwarded of it.
struct Target {
    values: Vec<f64>,
    present: bool,
    /// Bumped on every accepted target.
    generation: u64,
    /// Generation and instant of the last publication.
    forwarded: Option<(u64, Instant)>,
    /// Per joint, its command topic's count of subscriptions when the target was last sent
    /// on it: a subscription since (a restarted simulator, a new listener) gets the target.
    reached: Vec<u64>,
    /// The node's count of subscriptions to any topic when `reached` was last brought up to
    /// date: while it stands, no joint's count moved and none needs asking.
    reached_total: u64,
    /// The latest mode, and the velocity or effort target with its timeout.
    rates: RateCommands,
    /// The world resets already applied to `rates` (see [`RobotDriverGazebo::world_resets`]).
    resets_applied: u64,
}

/// A robot simulated in Gazebo, seen through gz-transport: joint states in from a
/// JointStatePublisher, position targets out to one JointPositionController topic per joint.
///
/// All methods take `&self`; the driver is `Send + Sync`, so it can be shared in an `Arc` by
/// a control loop, a ROS executor and Python threads. Joint states are written on the
/// transport's receive thread and never wait for any of them.
pub struct RobotDriverGazebo {
    config: RobotDriverGazeboConfiguration,
    node: Node,
    cache: Arc<JointStateCache>,
    /// Run on the receive thread after each message is in the cache.
    listeners: Arc<StateListeners>,
    state: AtomicU8,
    /// Serialises lifecycle transitions (never held while `initialize` waits).
    lifecycle: Mutex<()>,
    links: Mutex<Option<Links>>,
    /// (lower, upper), captured at `initialize()`.
    limits: RwLock<(Vec<f64>, Vec<f64>)>,
    target: Mutex<Target>,
    clamp_warning: RateLimitedWarning,
    /// Joint-state messages dropped because another publisher held the stream.
    foreign_joint_states: Arc<AtomicU64>,
    /// What the receive path refused (incomplete messages, duplicate joints).
    receive_health: Arc<ReceiveHealth>,
    /// World resets seen on the joint-state stream (its sim time going back).
    resets: Arc<Resets>,
}

impl RobotDriverGazebo {
    /// Validates `config` and creates the driver, in state `Disconnected`.
    ///
    /// `node` lets several drivers share one gz-transport node (one discovery participant,
    /// one set of sockets); its message prefix, and its partition if the configuration sets
    /// one, must match the configuration. With `None` the driver creates its own node from
    /// the configuration (partition override, else the environment).
    ///
    /// # Errors
    /// An invalid configuration, a mismatching shared node, or a node that cannot be created.
    pub fn new(
        config: RobotDriverGazeboConfiguration,
        node: Option<Node>,
    ) -> Result<Self, DriverError> {
        config.validate()?;
        let node = match node {
            Some(node) => {
                if node.msgs_prefix() != config.msgs_prefix {
                    return Err(DriverError::NodeMismatch {
                        what: "msgs_prefix",
                        node: node.msgs_prefix().to_string(),
                        configuration: config.msgs_prefix.to_string(),
                    });
                }
                if let Some(partition) = &config.partition {
                    if node.partition() != partition {
                        return Err(DriverError::NodeMismatch {
                            what: "partition",
                            node: node.partition().to_string(),
                            configuration: partition.clone(),
                        });
                    }
                }
                node
            }
            None => Node::with_options(NodeOptions {
                partition: config.partition.clone(),
                namespace: None,
                msgs_prefix: config.msgs_prefix,
                ..Default::default()
            })
            .map_err(|source| DriverError::Node(source.into()))?,
        };
        let joint_count = config.joint_names.len();
        Ok(RobotDriverGazebo {
            node,
            cache: Arc::new(JointStateCache::new(joint_count)),
            listeners: Arc::default(),
            state: AtomicU8::new(DriverState::Disconnected as u8),
            lifecycle: Mutex::new(()),
            links: Mutex::new(None),
            limits: RwLock::new((Vec::new(), Vec::new())),
            target: Mutex::new(Target {
                values: vec![0.0; joint_count],
                present: false,
                generation: 0,
                forwarded: None,
                reached: vec![0; joint_count],
                reached_total: 0,
                rates: RateCommands::new(joint_count, config.command_timeout),
                resets_applied: 0,
            }),
            clamp_warning: RateLimitedWarning::new(CLAMP_WARNING_INTERVAL),
            foreign_joint_states: Arc::new(AtomicU64::new(0)),
            receive_health: Arc::default(),
            resets: Arc::default(),
            config,
        })
    }

    /// The configuration the driver was built with.
    pub fn configuration(&self) -> &RobotDriverGazeboConfiguration {
        &self.config
    }

    /// The gz-transport node the driver uses (its own or the shared one).
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The current lifecycle state.
    pub fn state(&self) -> DriverState {
        DriverState::from_u8(self.state.load(Ordering::SeqCst))
    }

    fn set_state(&self, state: DriverState) {
        self.state.store(state as u8, Ordering::SeqCst);
    }

    /// Number of configured joints.
    pub fn joint_count(&self) -> usize {
        self.config.joint_names.len()
    }

    /// Advertises one `Double` publisher per joint on `prefix + joint + "/0/cmd_pos"` (and
    /// on the velocity and effort topics, `…/cmd_vel` and `…/cmd_force`) and subscribes to the joint-state topic. Needs no Gazebo: the subscription connects to
    /// Gazebo whenever it appears. Does nothing if already connected.
    ///
    /// # Errors
    /// A topic the transport refuses (e.g. already advertised on a shared node by another
    /// driver); the driver then stays disconnected.
    pub fn connect(&self) -> Result<(), DriverError> {
        let _transition = self.lifecycle.lock();
        if self.state() != DriverState::Disconnected {
            return Ok(());
        }
        let advertise = |command: Command| {
            self.config
                .joint_names
                .iter()
                .map(|joint| {
                    let topic = self.config.command_topic_of(command, joint);
                    self.node
                        .advertise::<Double>(&topic)
                        .map_err(|source| DriverError::Advertise {
                            topic,
                            source: source.into(),
                        })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let publishers = advertise(Command::Positions)?;
        let velocities = advertise(Command::Velocities)?;
        let forces = advertise(Command::Forces)?;
        let mut receiver = ModelReceiver::with_health(
            self.cache.clone(),
            &self.config.joint_names,
            self.receive_health.clone(),
        );
        let mut source = SourceGate::new(
            &self.config.joint_states_topic,
            self.foreign_joint_states.clone(),
        );
        let listeners = self.listeners.clone();
        let mut reset_watch = ResetWatch::new();
        let resets = self.resets.clone();
        let topic = self.config.joint_states_topic.clone();
        let partition = self.node.partition().to_string();
        // The newest state of each read: a receive thread held back (a busy machine, many
        // robots) catches up at once instead of publishing a backlog of old states late.
        let joint_states = self
            .node
            .subscribe_with(
                &self.config.joint_states_topic,
                Delivery::Latest,
                move |model: Model, info: &MessageInfo| {
                    let now = Instant::now();
                    if source.admit(&info.publisher_address, now)
                        && receiver.receive(&model, now, info.superseded).is_some()
                    {
                        // Before the listeners: the sends they trigger apply the reset.
                        let stamp = model_stamp(&model);
                        if let Some(reset) = reset_watch.observe(&info.publisher_address, stamp) {
                            resets.record(reset);
                            log_reset(&partition, &topic, reset);
                        }
                        listeners.notify();
                    }
                },
            )
            .map_err(|source| DriverError::Subscribe {
                topic: self.config.joint_states_topic.clone(),
                source: source.into(),
            })?;
        *self.links.lock() = Some(Links {
            publishers,
            velocities,
            forces,
            _joint_states: joint_states,
        });
        self.set_state(DriverState::Connected);
        Ok(())
    }

    /// [`initialize_with`](Self::initialize_with) with a token nobody triggers: waits until
    /// every joint was seen, or the configured timeout.
    pub fn initialize(&self) -> Result<(), DriverError> {
        self.initialize_with(&ShutdownToken::new())
    }

    /// Waits until every configured joint has been seen with non-NaN limits (±inf accepted)
    /// and, for up to 2 s more, until every command topic's subscriber is connected (else a
    /// warning names the topics), then captures the limits and enters `Initialized`. Blocks
    /// without polling for joint states: it wakes when the cache becomes ready, when
    /// `shutdown` is triggered, on `disconnect()`, and every 2 s to log which joints are still
    /// missing. Does nothing if already initialized;
    /// callers waiting at the same time (a robot's loop and a composite of it) all return
    /// `Ok` once one of them initialized the driver.
    ///
    /// # Errors
    /// Not connected; `shutdown` triggered ([`DriverError::InitializeShutdown`]);
    /// disconnected meanwhile; the configured timeout passed
    /// ([`DriverError::InitializeTimeout`], naming the missing joints).
    pub fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError> {
        match self.state() {
            DriverState::Disconnected => {
                return Err(DriverError::NotConnected {
                    operation: "initialize",
                })
            }
            DriverState::Initialized => return Ok(()),
            DriverState::Connected => {}
        }
        let topic = &self.config.joint_states_topic;
        tracing::info!("RobotDriverGazebo::initialize: waiting for joint states on [{topic}].");
        let cache = self.cache.clone();
        let _wake_on_shutdown = shutdown.on_trigger(Arc::new(move || cache.wake_waiters()));
        let start = Instant::now();
        let timeout_at = self
            .config
            .initialize_timeout
            .and_then(|timeout| start.checked_add(timeout));
        let mut next_progress_log = start + INITIALIZE_PROGRESS_INTERVAL;
        let mut snapshot = JointSnapshot::new(self.joint_count());
        let all_ready = |snapshot: &JointSnapshot| {
            (0..snapshot.joint_count()).all(|joint| snapshot.joint_is_ready(joint))
        };
        loop {
            let cancelled = || shutdown.is_triggered() || self.state() != DriverState::Connected;
            // Once the cache latched ready but a later message lost the limits (a misbehaving
            // publisher), only new samples can help.
            let interest = if self.cache.is_ready() {
                Interest::Sample
            } else {
                Interest::Ready
            };
            let wake_at = timeout_at.map_or(next_progress_log, |t| t.min(next_progress_log));
            self.cache.wait_until(interest, Some(wake_at), || {
                cancelled() || {
                    self.cache.read(&mut snapshot);
                    all_ready(&snapshot)
                }
            });
            if shutdown.is_triggered() {
                return Err(DriverError::InitializeShutdown {
                    topic: topic.clone(),
                });
            }
            match self.state() {
                // Another caller (a composite of this robot, the robot's own loop) finished.
                DriverState::Initialized => return Ok(()),
                DriverState::Disconnected => {
                    return Err(DriverError::InitializeDisconnected {
                        topic: topic.clone(),
                    })
                }
                DriverState::Connected => {}
            }
            self.cache.read(&mut snapshot);
            if all_ready(&snapshot) {
                break;
            }
            let now = Instant::now();
            if timeout_at.is_some_and(|t| now >= t) {
                return Err(DriverError::InitializeTimeout {
                    topic: topic.clone(),
                    timeout: self.config.initialize_timeout.unwrap_or_default(),
                    missing: self.missing_in(&snapshot),
                });
            }
            if now >= next_progress_log {
                tracing::warn!(
                    "RobotDriverGazebo::initialize: still waiting for joint states on [{topic}] \
                     after {:.0} s ({} complete messages, {} lacking a joint); missing: {}.",
                    start.elapsed().as_secs_f64(),
                    snapshot.sequence,
                    self.incomplete_joint_states(),
                    self.missing_in(&snapshot).join(", ")
                );
                next_progress_log = now + INITIALIZE_PROGRESS_INTERVAL;
            }
        }
        let unsubscribed = self.wait_for_command_subscribers(shutdown);
        if shutdown.is_triggered() {
            return Err(DriverError::InitializeShutdown {
                topic: topic.clone(),
            });
        }
        let _transition = self.lifecycle.lock();
        match self.state() {
            DriverState::Disconnected => {
                return Err(DriverError::InitializeDisconnected {
                    topic: topic.clone(),
                })
            }
            DriverState::Initialized => return Ok(()),
            DriverState::Connected => {}
        }
        if !unsubscribed.is_empty() {
            tracing::warn!(
                "RobotDriverGazebo::initialize: nothing subscribes to [{}] after {} s (is \
                 Gazebo's JointPositionController loaded, and joint_positions_topic_prefix \
                 right?); targets sent before a controller subscribes are lost.",
                unsubscribed.join(", "),
                COMMAND_SUBSCRIBERS_WAIT.as_secs()
            );
        }
        *self.limits.write() = (snapshot.limits_lower.clone(), snapshot.limits_upper.clone());
        self.set_state(DriverState::Initialized);
        tracing::info!(
            "RobotDriverGazebo::initialize: all {} joints seen on [{topic}]; limits captured.",
            self.joint_count()
        );
        Ok(())
    }

    /// Waits up to [`COMMAND_SUBSCRIBERS_WAIT`] until every command topic has a subscriber
    /// whose connection is complete (a message sent now reaches it), in slices so shutdown and
    /// disconnect are seen; returns the topics still without one.
    fn wait_for_command_subscribers(&self, shutdown: &ShutdownToken) -> Vec<String> {
        let deadline = Instant::now() + COMMAND_SUBSCRIBERS_WAIT;
        loop {
            let links = self.links.lock();
            let Some(links) = links.as_ref() else {
                return Vec::new(); // disconnected: the caller reports it
            };
            let unsubscribed = links.unsubscribed();
            let now = Instant::now();
            let cancelled = shutdown.is_triggered() || self.state() != DriverState::Connected;
            if unsubscribed.is_empty() || cancelled || now >= deadline {
                return topics(&unsubscribed);
            }
            unsubscribed[0].wait_for_subscribers(
                COMMAND_SUBSCRIBERS_SLICE.min(deadline.saturating_duration_since(now)),
            );
        }
    }

    /// The command topics a target sent now would reach no subscriber on (no
    /// JointPositionController, or its connection not complete yet), in joint order; empty
    /// while disconnected.
    pub fn unsubscribed_command_topics(&self) -> Vec<String> {
        self.links
            .lock()
            .as_ref()
            .map_or_else(Vec::new, |links| topics(&links.unsubscribed()))
    }

    /// Leaves `Initialized` for `Connected`: getters and targets are refused again and the
    /// stored target is dropped (Gazebo keeps the last command it got). Safe in any state.
    /// A velocity or effort command in force is set to zero first.
    pub fn deinitialize(&self) {
        let _transition = self.lifecycle.lock();
        if self.state() == DriverState::Initialized {
            self.stop_on_leaving("deinitialize");
            self.set_state(DriverState::Connected);
            self.target.lock().present = false;
        }
    }

    /// Unsubscribes, unadvertises the command topics and drops the stored target; wakes a
    /// waiting `initialize()`, which then fails. Idempotent, safe in any state.
    /// A velocity or effort command in force is set to zero first.
    pub fn disconnect(&self) {
        let _transition = self.lifecycle.lock();
        if self.state() == DriverState::Initialized {
            self.stop_on_leaving("disconnect");
        }
        let links = self.links.lock().take();
        drop(links);
        self.set_state(DriverState::Disconnected);
        self.target.lock().present = false;
        self.cache.wake_waiters();
    }

    fn stop_on_leaving(&self, operation: &str) {
        if let Err(err) = self.stop_rate_commands() {
            tracing::error!(
                "RobotDriverGazebo::{operation}: could not set the velocity/effort command in \
                 force to zero: {err}"
            );
        }
    }

    /// Joint-state messages dropped because another publisher of the joint-state topic held
    /// the stream (see the crate documentation, "One source of joint states").
    pub fn foreign_joint_states(&self) -> u64 {
        self.foreign_joint_states.load(Ordering::Relaxed)
    }

    /// Joint-state messages not taken because they lacked a configured joint (see
    /// [`ModelReceiver`]: the last complete state stays, and ages).
    pub fn incomplete_joint_states(&self) -> u64 {
        self.receive_health.incomplete.load(Ordering::Relaxed)
    }

    /// Joint-state messages that named a configured joint more than once (the first entry
    /// was taken).
    pub fn joint_states_with_duplicates(&self) -> u64 {
        self.receive_health.with_duplicates.load(Ordering::Relaxed)
    }

    /// Names of the configured joints the latest Gazebo message lacked (empty if it carried
    /// all, or none arrived yet), in configuration order.
    pub fn absent_joints(&self) -> Vec<String> {
        let absent = self.receive_health.absent.lock();
        absent
            .iter()
            .map(|&joint| self.config.joint_names[joint].clone())
            .collect()
    }

    /// Names of the joints the latest Gazebo message lacked, and of those not yet seen with
    /// non-NaN limits, in configuration order.
    pub fn missing_joints(&self) -> Vec<String> {
        self.missing_in(&self.snapshot())
    }

    fn missing_in(&self, snapshot: &JointSnapshot) -> Vec<String> {
        let absent = self.receive_health.absent.lock();
        // Before the first complete message the cache holds nothing: then the latest
        // message says which joints are missing, if one arrived.
        let judge_cache = snapshot.sequence > 0 || absent.is_empty();
        self.config
            .joint_names
            .iter()
            .enumerate()
            .filter(|&(joint, _)| {
                absent.contains(&joint) || (judge_cache && !snapshot.joint_is_ready(joint))
            })
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// Copies the cache into `out` without allocating (once `out` has the joint count) and
    /// without blocking the receive thread. Works in every state; before any message the
    /// values are NaN and `sequence` is 0. The consistent way to read positions, velocities
    /// and efforts of one Gazebo message together.
    pub fn read_snapshot(&self, out: &mut JointSnapshot) {
        self.cache.read(out);
    }

    /// Runs `listener` on the receive thread after every message that carried one of our
    /// joints is in the cache, until the guard is dropped. A binding publishes from it the
    /// moment Gazebo's state arrives, without a thread of its own waking to poll the cache.
    pub fn add_state_listener(&self, listener: StateListener) -> StateListenerGuard {
        self.listeners.add(listener)
    }

    /// A freshly allocated [`read_snapshot`](Self::read_snapshot).
    pub fn snapshot(&self) -> JointSnapshot {
        let mut snapshot = JointSnapshot::new(self.joint_count());
        self.cache.read(&mut snapshot);
        snapshot
    }

    /// Blocks until a Gazebo message newer than `sequence` (a snapshot's `sequence`) has been
    /// received, or `timeout`; returns the newest sequence number if one arrived.
    pub fn wait_for_sample_after(&self, sequence: u64, timeout: Duration) -> Option<u64> {
        self.cache.wait_for_sample_after(sequence, timeout)
    }

    fn initialized_field(
        &self,
        what: &'static str,
        field: fn(JointSnapshot) -> Vec<f64>,
    ) -> Result<Vec<f64>, DriverError> {
        if self.state() != DriverState::Initialized {
            return Err(DriverError::NotInitialized { what });
        }
        Ok(field(self.snapshot()))
    }

    /// The joints whose latest state from Gazebo has a NaN or infinite position, velocity or
    /// effort, with what (`elbow_joint position NaN`): the getters pass such values on as
    /// Gazebo sent them (a physics blow-up), and this says so. Empty while all are finite.
    pub fn non_finite_joints(&self) -> Vec<String> {
        let snapshot = self.snapshot();
        let mut found = Vec::new();
        for (joint, name) in self.config.joint_names.iter().enumerate() {
            for (what, value) in [
                ("position", snapshot.positions[joint]),
                ("velocity", snapshot.velocities[joint]),
                ("effort", snapshot.efforts[joint]),
            ] {
                // A joint never seen is NaN too: not Gazebo's doing, not reported here.
                if !value.is_finite() && snapshot.last_seen[joint] > 0 {
                    found.push(format!("{name} {what} {value}"));
                }
            }
        }
        found
    }

    /// Latest joint positions, in configuration order.
    ///
    /// # Errors
    /// `RobotDriverGazebo: joint positions not initialized.` before `initialize()`.
    pub fn get_joint_positions(&self) -> Result<Vec<f64>, DriverError> {
        self.initialized_field("joint positions", |s| s.positions)
    }

    /// Latest joint velocities, in configuration order.
    ///
    /// # Errors
    /// `RobotDriverGazebo: joint velocities not initialized.` before `initialize()`.
    pub fn get_joint_velocities(&self) -> Result<Vec<f64>, DriverError> {
        self.initialized_field("joint velocities", |s| s.velocities)
    }

    /// Latest joint efforts (Gazebo's `axis1.force`), in configuration order.
    ///
    /// # Errors
    /// `RobotDriverGazebo: joint torques not initialized.` before `initialize()`.
    pub fn get_joint_torques(&self) -> Result<Vec<f64>, DriverError> {
        self.initialized_field("joint torques", |s| s.efforts)
    }

    /// `(lower, upper)` limits captured at `initialize()` (±inf for unbounded joints).
    ///
    /// # Errors
    /// `RobotDriverGazebo: joint limits not initialized.` before `initialize()`.
    pub fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError> {
        if self.state() != DriverState::Initialized {
            return Err(DriverError::NotInitialized {
                what: "joint limits",
            });
        }
        Ok(self.limits.read().clone())
    }

    /// Checks `target` as [`set_target_joint_positions`](Self::set_target_joint_positions)
    /// does, without storing it (a composite checks every part before setting any).
    ///
    /// # Errors
    /// The error `set_target_joint_positions` would return.
    pub fn check_target_joint_positions(&self, target: &[f64]) -> Result<(), DriverError> {
        let command = Command::Positions;
        check_shape(command, &self.config.joint_names, target)?;
        let limits = self.limits.read();
        if self.state() != DriverState::Initialized {
            return Err(DriverError::TargetBeforeInitialize { command });
        }
        check_limits(
            command,
            &self.config.joint_names,
            target,
            (&limits.0, &limits.1),
            self.config.limit_policy,
        )
    }

    /// Validates and stores the target that [`forward_targets`](Self::forward_targets)
    /// publishes. Checks, in order: the length, that every value is finite (NaN/inf are
    /// never forwarded), that the driver is initialized, and the limits captured at
    /// `initialize()` under the configured [`LimitPolicy`](crate::LimitPolicy): `Clamp`
    /// stores clamped values and logs a warning at most once per second; `Refuse` refuses.
    /// A refused target leaves the previous one in force.
    ///
    /// # Errors
    /// [`DriverError::TargetLength`], [`DriverError::NonFiniteTarget`],
    /// [`DriverError::TargetBeforeInitialize`], [`DriverError::TargetOutOfLimits`].
    pub fn set_target_joint_positions(&self, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        let command = Command::Positions;
        check_shape(command, &self.config.joint_names, target)?;
        let limits = self.limits.read();
        if self.state() != DriverState::Initialized {
            return Err(DriverError::TargetBeforeInitialize { command });
        }
        let mut stored = self.target.lock();
        self.apply_resets(&mut stored);
        let (outcome, first_clamp) = apply_limits(
            command,
            &self.config.joint_names,
            target,
            (&limits.0, &limits.1),
            self.config.limit_policy,
            &mut stored.values,
        )?;
        stored.present = true;
        stored.generation += 1;
        stored.rates.accepted(command, Instant::now());
        drop(stored);
        self.warn_clamped(command, outcome, first_clamp);
        Ok(outcome)
    }

    fn warn_clamped(&self, command: Command, outcome: TargetOutcome, first_clamp: Option<Clamp>) {
        if let (TargetOutcome::Clamped { joints }, Some(clamp)) = (outcome, first_clamp) {
            if let Some(suppressed) = self.clamp_warning.permit(Instant::now()) {
                tracing::warn!(
                    "RobotDriverGazebo::{command}: clamped {joints} value(s) into the {}, first \
                     {} ({}) = {} into [{}, {}] ({suppressed} similar warnings suppressed).",
                    command.limits_name(),
                    clamp.index,
                    self.config.joint_names[clamp.index],
                    clamp.value,
                    clamp.lower,
                    clamp.upper
                );
            }
        }
    }

    /// Validates and stores a velocity target (rad/s or m/s per joint) that
    /// [`forward_targets`](Self::forward_targets) sends to Gazebo's JointControllers
    /// (`<joint_velocities_topic_prefix><joint>/cmd_vel`). Checks, in order: the length,
    /// that every value is finite, that the driver is initialized, that every joint's
    /// command topic has a subscriber (else [`DriverError::NoController`] names the topics),
    /// and the configured velocity limits under the [`LimitPolicy`](crate::LimitPolicy).
    /// The target becomes the mode in force: an effort command in force is set to zero, a
    /// position target is no longer re-sent (Gazebo's position controller, if the world has
    /// one, keeps its last target). Without a new one within the configured command
    /// timeout, `forward_targets` sends zero velocity once.
    ///
    /// # Errors
    /// [`DriverError::TargetLength`], [`DriverError::NonFiniteTarget`],
    /// [`DriverError::TargetBeforeInitialize`], [`DriverError::NoController`],
    /// [`DriverError::TargetOutOfLimits`].
    pub fn set_target_joint_velocities(
        &self,
        target: &[f64],
    ) -> Result<TargetOutcome, DriverError> {
        self.set_rate_target(Command::Velocities, target)
    }

    /// Validates and stores an effort target (N·m or N per joint) for Gazebo's ApplyJointForce
    /// systems (`<joint_forces_topic_prefix><joint>/cmd_force`), as
    /// [`set_target_joint_velocities`](Self::set_target_joint_velocities) does for
    /// velocities (checked against the configured effort limits; zero effort at the
    /// timeout).
    ///
    /// # Errors
    /// As `set_target_joint_velocities`.
    pub fn set_target_joint_forces(&self, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        self.set_rate_target(Command::Forces, target)
    }

    /// Checks and stores a target of `command`, the one entry point of the three modes.
    ///
    /// # Errors
    /// As the mode's own method.
    pub fn set_target(
        &self,
        command: Command,
        target: &[f64],
    ) -> Result<TargetOutcome, DriverError> {
        match command {
            Command::Positions => self.set_target_joint_positions(target),
            rate => self.set_rate_target(rate, target),
        }
    }

    /// Checks a target of `command` without storing it.
    ///
    /// # Errors
    /// As the mode's own method.
    pub fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        match command {
            Command::Positions => self.check_target_joint_positions(target),
            rate => self.check_rate_target(rate, target),
        }
    }

    /// The checks of a velocity or effort target that need no stored state.
    fn check_rate_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        check_shape(command, &self.config.joint_names, target)?;
        if self.state() != DriverState::Initialized {
            return Err(DriverError::TargetBeforeInitialize { command });
        }
        self.check_controllers(command)?;
        let (lower, upper) = self.config.rate_limits(command);
        check_limits(
            command,
            &self.config.joint_names,
            target,
            (&lower, &upper),
            self.config.limit_policy,
        )
    }

    /// Refuses a target of `command` when a joint's command topic has no subscriber.
    fn check_controllers(&self, command: Command) -> Result<(), DriverError> {
        let links = self.links.lock();
        let Some(links) = links.as_ref() else {
            return Err(DriverError::NotConnected {
                operation: command.method(),
            });
        };
        let missing: Vec<String> = links
            .publishers_of(command)
            .iter()
            .filter(|publisher| !publisher.has_subscribers())
            .map(|publisher| publisher.topic().to_string())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(DriverError::NoController {
                command,
                topics: missing,
            })
        }
    }

    fn set_rate_target(
        &self,
        command: Command,
        target: &[f64],
    ) -> Result<TargetOutcome, DriverError> {
        check_shape(command, &self.config.joint_names, target)?;
        if self.state() != DriverState::Initialized {
            return Err(DriverError::TargetBeforeInitialize { command });
        }
        self.check_controllers(command)?;
        let (lower, upper) = self.config.rate_limits(command);
        let mut stored = self.target.lock();
        // A reset seen before this target zeroes the old one, not this one.
        self.apply_resets(&mut stored);
        // Validated into a copy: a refused target leaves the one in force untouched.
        let mut values = stored.rates.values.clone();
        let (outcome, first_clamp) = apply_limits(
            command,
            &self.config.joint_names,
            target,
            (&lower, &upper),
            self.config.limit_policy,
            &mut values,
        )?;
        stored.rates.values = values;
        stored.rates.accepted(command, Instant::now());
        drop(stored);
        self.warn_clamped(command, outcome, first_clamp);
        Ok(outcome)
    }

    /// When the velocity or effort target in force times out, if one is: the control loop
    /// calls [`forward_targets`](Self::forward_targets) then (it sends zero once).
    pub fn command_deadline(&self) -> Option<Instant> {
        let mut target = self.target.lock();
        self.apply_resets(&mut target);
        target.rates.deadline()
    }

    /// How many world resets the joint states showed so far: Gazebo's sim time went back on
    /// the stream of one publisher (`reset { all }` or `{ time_only }`). Each is logged once,
    /// and sets a velocity or effort command in force to zero: the next
    /// [`forward_targets`](Self::forward_targets) sends zero, and the stored velocity/effort
    /// target is dropped until the client sends a new one (a position target stays: a place,
    /// not a motion). A simulator restarted (a new publisher) is not counted.
    pub fn world_resets(&self) -> u64 {
        self.resets.count()
    }

    /// The latest world reset seen, if any (see [`world_resets`](Self::world_resets)).
    pub fn last_world_reset(&self) -> Option<WorldReset> {
        self.resets.last()
    }

    /// Applies the world resets the receive thread saw since the last call: the velocity or
    /// effort command in force is owed a zero and its target dropped. Called wherever the
    /// target is taken to be sent or replaced, so that no send after a reset is of the old
    /// world's command, and a target accepted after it is kept.
    fn apply_resets(&self, target: &mut Target) {
        let resets = self.resets.count();
        if resets != target.resets_applied {
            target.resets_applied = resets;
            target.rates.stop();
        }
    }

    /// When [`forward_targets`](Self::forward_targets) sends the position target again as its
    /// keepalive (`ForwardMode::OnChangeWithKeepalive`): the last send of this target, by any
    /// caller (a composite forwards its parts' targets too), plus the keepalive.
    pub fn keepalive_deadline(&self) -> Option<Instant> {
        let ForwardMode::OnChangeWithKeepalive(keepalive) = self.config.forward_mode else {
            return None;
        };
        let target = self.target.lock();
        if !(target.present && target.rates.positions_in_force()) {
            return None;
        }
        target.forwarded.map(|(_, at)| at + keepalive)
    }

    /// Sets a velocity or effort command in force to zero now (a watchdog fault, a stop);
    /// returns whether it sent. The stored velocity/effort target is dropped.
    ///
    /// # Errors
    /// Not connected; the transport has shut down.
    pub fn stop_rate_commands(&self) -> Result<bool, DriverError> {
        let mut target = self.target.lock();
        target.rates.stop();
        let links = self.links.lock();
        let Some(links) = links.as_ref() else {
            return Err(DriverError::NotConnected {
                operation: "stop_rate_commands",
            });
        };
        let sends = self.rate_payloads(&mut target, links, Instant::now());
        self.publish(&sends)
    }

    /// The messages the rate modes are due at `now`.
    fn rate_payloads<'l>(
        &self,
        target: &mut Target,
        links: &'l Links,
        now: Instant,
    ) -> Vec<(&'l RawPublisher, Vec<u8>)> {
        let every_call = self.config.forward_mode == ForwardMode::EveryPeriod;
        let mut sends = Vec::new();
        for due in target.rates.due(now, every_call) {
            let (command, zero) = match due {
                RateSend::Target(command) => (command, false),
                RateSend::Zero(command) => (command, true),
            };
            for (publisher, &value) in links
                .publishers_of(command)
                .iter()
                .zip(&target.rates.values)
            {
                let data = if zero { 0.0 } else { value };
                sends.push((publisher.raw(), Double { header: None, data }.to_payload()));
            }
        }
        if let Some(command) = target.rates.timed_out {
            tracing::info!(
                "RobotDriverGazebo::{command}: no new target within the command timeout ({:.0} \
                 ms); zero sent to Gazebo.",
                self.config.command_timeout.as_secs_f64() * 1e3
            );
        }
        sends
    }

    /// Sends `sends` in one write per simulator; false if there was nothing to send.
    fn publish(&self, sends: &[(&RawPublisher, Vec<u8>)]) -> Result<bool, DriverError> {
        if sends.is_empty() {
            return Ok(false);
        }
        let together: Vec<(&RawPublisher, &[u8])> = sends
            .iter()
            .map(|(publisher, payload)| (*publisher, payload.as_slice()))
            .collect();
        self.node
            .publish_together(&together)
            .map_err(|source| DriverError::Publish {
                topic: together[0].0.topic().to_string(),
                source: source.into(),
            })?;
        Ok(true)
    }

    /// Publishes the stored target, one `Double` per joint, according to the configured
    /// [`ForwardMode`]. The control loop calls this on every new target, every period Gazebo
    /// sends a state, and at the keepalive. Returns whether it published (false: no target
    /// yet, or unchanged within the keepalive). Whatever the mode, a joint whose command topic
    /// got a new subscription since the target was last sent on it (a restarted simulator
    /// whose controller's connection just completed) is sent the target now, once.
    ///
    /// # Errors
    /// Not connected; the transport has shut down.
    pub fn forward_targets(&self) -> Result<bool, DriverError> {
        let mut target = self.target.lock();
        self.apply_resets(&mut target);
        let links = self.links.lock();
        let Some(links) = links.as_ref() else {
            return Err(DriverError::NotConnected {
                operation: "forward_targets",
            });
        };
        let now = Instant::now();
        let mut sends = self.rate_payloads(&mut target, links, now);
        // A position target is re-sent only while it is the mode in force: after a switch to
        // velocities or efforts, Gazebo's position controller keeps its last one.
        if target.present && target.rates.positions_in_force() {
            let all = match (target.forwarded, self.config.forward_mode) {
                (None, _) | (_, ForwardMode::EveryPeriod) => true,
                (Some((generation, at)), mode) => {
                    generation != target.generation
                        || matches!(mode, ForwardMode::OnChangeWithKeepalive(keepalive)
                            if now.saturating_duration_since(at) >= keepalive)
                }
            };
            // Read before the joints' counts: a subscription landing while they are read
            // moves it again, and the next call looks.
            let reached_total = self.node.subscriptions_reached();
            let Target {
                values,
                reached,
                reached_total: seen_total,
                ..
            } = &mut *target;
            let recount = reached_total != *seen_total;
            for ((publisher, &data), reached) in
                links.publishers.iter().zip(values.iter()).zip(reached)
            {
                let newly_reached = recount && {
                    let subscriptions = publisher.subscriptions();
                    std::mem::replace(reached, subscriptions) != subscriptions
                };
                if all || newly_reached {
                    sends.push((publisher.raw(), Double { header: None, data }.to_payload()));
                }
            }
            *seen_total = reached_total;
            if all {
                target.forwarded = Some((target.generation, now));
            }
        }
        // One write per simulator for all joints.
        self.publish(&sends)
    }
}

/// The one line a world reset gets (on the receive thread, as it is seen); the other robots
/// of the same world say it at debug level only.
fn log_reset(partition: &str, topic: &str, reset: WorldReset) {
    let (from, to) = reset.seconds();
    if !ANNOUNCEMENTS
        .lock()
        .is_news(partition, reset, Instant::now())
    {
        tracing::debug!(
            "RobotDriverGazebo: the world reset is seen on [{topic}] too (sim time {from:.3} s \
             to {to:.3} s)."
        );
        return;
    }
    tracing::info!(
        "RobotDriverGazebo: Gazebo's sim time on [{topic}] went back from {from:.3} s to {to:.3} \
         s: the world was reset. A velocity or effort command in force is set to zero until a \
         new target arrives."
    );
}

impl Drop for RobotDriverGazebo {
    /// A driver dropped while initialized (a script that ends without `deinitialize`) leaves
    /// no velocity or effort command latched in Gazebo.
    fn drop(&mut self) {
        if self.state() == DriverState::Initialized {
            self.stop_on_leaving("drop");
        }
    }
}
