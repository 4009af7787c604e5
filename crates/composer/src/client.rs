//! `RobotDriverClient`: another robot driver seen through its SmartArmStack topics (the
//! original's `sas::RobotDriverClient`), as a [`RobotDriver`] a composite can hold. Works with
//! any sas driver: it reads `<prefix>/get/joint_states`, `get/joint_positions_min|max` and
//! writes `<prefix>/set/target_joint_positions`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use listener_subscription::ListenerSubscription;
use parking_lot::{Condvar, Mutex};
use rclrs::{IntoPrimitiveOptions, Node, PrimitiveOptions, Publisher, RclrsError};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::Float64MultiArray;
use sas_driver_contract::{
    Command, DriverError, ErrorKind, ForwardMode, JointSnapshot, RobotDriver, ShutdownToken,
    SimTime, StateListener, StateListenerGuard, StateListeners, TargetOutcome,
};

/// How often a waiting `initialize` says what it still waits for.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(2);
/// At most one log line per interval about messages that do not fit.
const MISFIT_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// The client's errors, as [`DriverError::Other`] with the category the loop needs.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A topic could not be created (e.g. an invalid prefix).
    #[error("RobotDriverClient({prefix}): cannot create the {kind} on {topic:?}: {source}")]
    Topic {
        /// The client's topic prefix.
        prefix: String,
        /// `publisher` or `subscription`.
        kind: &'static str,
        /// The topic.
        topic: String,
        /// rclrs' reason.
        source: RclrsError,
    },
    /// A subscription could not be created (e.g. an invalid prefix).
    #[error("RobotDriverClient({prefix}): cannot create the subscription on {topic:?}: {source}")]
    Subscription {
        /// The client's topic prefix.
        prefix: String,
        /// The topic.
        topic: String,
        /// Why.
        source: listener_subscription::Error,
    },
    /// `initialize` was cancelled.
    #[error("RobotDriverClient({prefix})::initialize: shutdown while waiting for {missing}.")]
    InitializeShutdown {
        /// The client's topic prefix.
        prefix: String,
        /// What had not arrived.
        missing: String,
    },
    /// `initialize` timed out.
    #[error("RobotDriverClient({prefix})::initialize: timed out after {:.1} s waiting for {missing}.", timeout.as_secs_f64())]
    InitializeTimeout {
        /// The client's topic prefix.
        prefix: String,
        /// The timeout.
        timeout: Duration,
        /// What had not arrived.
        missing: String,
    },
    /// An operation that needs the robot's joints before they are known.
    #[error("RobotDriverClient({prefix})::{operation}: not initialized; call initialize() first.")]
    NotInitialized {
        /// The client's topic prefix.
        prefix: String,
        /// The refused operation.
        operation: &'static str,
    },
    /// A target of the wrong length.
    #[error("RobotDriverClient({prefix})::{command}: expected {expected} values, got {got}.")]
    TargetLength {
        /// The client's topic prefix.
        prefix: String,
        /// The refused command.
        command: Command,
        /// The robot's joints.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A NaN or infinite target value.
    #[error(
        "RobotDriverClient({prefix})::{command}: value {index} is {value}; targets must be finite."
    )]
    NonFiniteTarget {
        /// The client's topic prefix.
        prefix: String,
        /// The refused command.
        command: Command,
        /// Position in the target.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Publishing the target failed.
    #[error("RobotDriverClient({prefix})::forward_targets: cannot publish on {topic:?}: {source}")]
    Publish {
        /// The client's topic prefix.
        prefix: String,
        /// The topic.
        topic: String,
        /// rclrs' reason.
        source: RclrsError,
    },
}

impl ClientError {
    fn kind(&self) -> ErrorKind {
        match self {
            ClientError::Topic { .. }
            | ClientError::Subscription { .. }
            | ClientError::Publish { .. } => ErrorKind::Transport,
            ClientError::InitializeShutdown { .. } => ErrorKind::Cancelled,
            ClientError::InitializeTimeout { .. } => ErrorKind::Timeout,
            ClientError::NotInitialized { .. } => ErrorKind::State,
            ClientError::TargetLength { .. } | ClientError::NonFiniteTarget { .. } => {
                ErrorKind::InvalidTarget
            }
        }
    }
}

impl From<ClientError> for DriverError {
    fn from(error: ClientError) -> Self {
        DriverError::other(error.kind(), error)
    }
}

/// What the robot last published. Written by the subscription callbacks (on the executor's
/// thread), read by the loop; both hold the lock only to copy.
#[derive(Default)]
struct Latest {
    positions: Vec<f64>,
    velocities: Vec<f64>,
    efforts: Vec<f64>,
    names: Vec<String>,
    lower: Option<Vec<f64>>,
    upper: Option<Vec<f64>>,
    /// Joint-state messages taken so far.
    sequence: u64,
    received_at: Option<Instant>,
    stamp: Option<SimTime>,
    /// Fixed by `initialize`: later messages of another length are dropped.
    joint_count: Option<usize>,
    misfits: Misfits,
}

/// Messages dropped because their length differs from the robot's joints, and when that was
/// last logged.
#[derive(Default)]
struct Misfits {
    dropped: u64,
    logged_at: Option<Instant>,
}

impl Latest {
    /// True once states and both limits have arrived with one length.
    fn ready(&self) -> bool {
        let n = self.positions.len();
        n > 0
            && self.lower.as_ref().is_some_and(|l| l.len() == n)
            && self.upper.as_ref().is_some_and(|u| u.len() == n)
    }

    fn missing(&self, prefix: &str) -> String {
        let mut missing = Vec::new();
        if self.positions.is_empty() {
            missing.push(format!("{prefix}/get/joint_states"));
        }
        for (limits, topic) in [(&self.lower, "min"), (&self.upper, "max")] {
            match limits {
                None => missing.push(format!("{prefix}/get/joint_positions_{topic}")),
                Some(l) if !self.positions.is_empty() && l.len() != self.positions.len() => missing
                    .push(format!(
                        "{prefix}/get/joint_positions_{topic} with {} values (it has {})",
                        self.positions.len(),
                        l.len()
                    )),
                Some(_) => {}
            }
        }
        missing.join(", ")
    }

    /// Whether a message of `len` values fits the joints fixed at initialization.
    fn fits(&mut self, len: usize, topic: &str, prefix: &str) -> bool {
        match self.joint_count {
            Some(count) if count != len => {
                self.misfits.dropped += 1;
                let now = Instant::now();
                if self
                    .misfits
                    .logged_at
                    .is_none_or(|at| now.duration_since(at) >= MISFIT_LOG_INTERVAL)
                {
                    tracing::error!(
                        "RobotDriverClient({prefix}): dropped a message on {topic} with {len} \
                         values; the robot had {count} joints at initialization ({} dropped so \
                         far).",
                        self.misfits.dropped
                    );
                    self.misfits.logged_at = Some(now);
                }
                false
            }
            _ => true,
        }
    }
}

/// `latest` and the condition variable `initialize` waits on.
#[derive(Default)]
struct Shared {
    latest: Mutex<Latest>,
    changed: Condvar,
    /// Run after each joint-state message is taken (on the executor's thread).
    listeners: Arc<StateListeners>,
}

/// The latest accepted target, kept in the message that carries it, and what was sent of it.
struct Target {
    message: Float64MultiArray,
    present: bool,
    /// Accepted since the last send.
    fresh: bool,
    sent_at: Option<Instant>,
}

/// A robot driver reached over its topics under `prefix` (`r820_sim` → `/r820_sim/get/…` in
/// the node's namespace). Topics exist from construction; `initialize_with` waits (on a
/// condition variable, no polling) until joint states and both limits have arrived with one
/// length, which then fixes the robot's joint count.
///
/// Velocities and efforts are passed on when the robot publishes one per joint (NaN
/// otherwise). `forward_targets` sends the target as the [`ForwardMode`] says: on every call
/// (`EveryPeriod`, as the original composer did by calling `send_target_joint_positions`
/// every period), or only a new one and after the keepalive; the robot's own driver checks
/// it against its limits.
pub struct RobotDriverClient {
    prefix: String,
    shared: Arc<Shared>,
    initialize_timeout: Option<Duration>,
    forward_mode: ForwardMode,
    target: Mutex<Target>,
    publisher: Publisher<Float64MultiArray>,
    /// `set/target_joint_velocities` and `set/target_joint_forces`.
    rate_publishers: [Publisher<Float64MultiArray>; 2],
    _joint_states: ListenerSubscription<JointState>,
    _lower: ListenerSubscription<Float64MultiArray>,
    _upper: ListenerSubscription<Float64MultiArray>,
}

/// The robot's velocity and effort topics under `set/`, by [`Command`]'s rate index.
const RATE_TOPICS: [&str; 2] = ["target_joint_velocities", "target_joint_forces"];

/// KeepLast(1), reliable, volatile: the sas topics' QoS.
fn depth_one(topic: &str) -> PrimitiveOptions<'_> {
    topic.keep_last(1).reliable().volatile()
}

impl RobotDriverClient {
    /// Subscribes to `<prefix>/get/joint_states`, `get/joint_positions_min` and `…_max`
    /// (taken on the DDS listener thread that received them: a robot's state reaches the
    /// composite with no executor thread woken) and advertises `<prefix>/set/target_joint_positions` on `node`. `initialize_timeout`
    /// bounds the wait for them (`None`: until cancelled, as the original); `forward_mode`
    /// says when a target is sent again.
    ///
    /// # Errors
    /// A topic rclrs refuses (e.g. an invalid prefix).
    pub fn new(
        node: &Node,
        prefix: &str,
        initialize_timeout: Option<Duration>,
        forward_mode: ForwardMode,
    ) -> Result<Self, ClientError> {
        let shared = Arc::new(Shared::default());
        let topic_error = |kind, topic: &str, source| ClientError::Topic {
            prefix: prefix.to_string(),
            kind,
            topic: topic.to_string(),
            source,
        };
        let subscription_error = |topic: &str, source| ClientError::Subscription {
            prefix: prefix.to_string(),
            topic: topic.to_string(),
            source,
        };

        let topic = format!("{prefix}/get/joint_states");
        let (state, name) = (shared.clone(), prefix.to_string());
        let joint_states =
            ListenerSubscription::new(node, &topic, 1, move |message: JointState, _| {
                state.receive_joint_states(&message, &name);
            })
            .map_err(|source| subscription_error(&topic, source))?;

        let limits = |suffix: &str, upper: bool| {
            let topic = format!("{prefix}/get/joint_positions_{suffix}");
            let (state, name) = (shared.clone(), prefix.to_string());
            ListenerSubscription::new(node, &topic, 1, move |message: Float64MultiArray, _| {
                state.receive_limits(&message, upper, &name);
            })
            .map_err(|source| subscription_error(&topic, source))
        };
        let lower = limits("min", false)?;
        let upper = limits("max", true)?;

        let advertise = |suffix: &str| {
            let topic = format!("{prefix}/set/{suffix}");
            node.create_publisher(depth_one(&topic))
                .map_err(|source| topic_error("publisher", &topic, source))
        };
        let publisher = advertise("target_joint_positions")?;
        let rate_publishers = [advertise(RATE_TOPICS[0])?, advertise(RATE_TOPICS[1])?];

        Ok(RobotDriverClient {
            prefix: prefix.to_string(),
            shared,
            initialize_timeout,
            forward_mode,
            target: Mutex::new(Target {
                message: Float64MultiArray::default(),
                present: false,
                fresh: false,
                sent_at: None,
            }),
            publisher,
            rate_publishers,
            _joint_states: joint_states,
            _lower: lower,
            _upper: upper,
        })
    }

    /// The topic prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn initialized_count(&self, operation: &'static str) -> Result<usize, ClientError> {
        self.shared
            .latest
            .lock()
            .joint_count
            .ok_or_else(|| ClientError::NotInitialized {
                prefix: self.prefix.clone(),
                operation,
            })
    }

    fn check(&self, command: Command, target: &[f64]) -> Result<(), ClientError> {
        let expected = self.initialized_count(command.method())?;
        if target.len() != expected {
            return Err(ClientError::TargetLength {
                prefix: self.prefix.clone(),
                command,
                expected,
                got: target.len(),
            });
        }
        match target.iter().position(|value| !value.is_finite()) {
            Some(index) => Err(ClientError::NonFiniteTarget {
                prefix: self.prefix.clone(),
                command,
                index,
                value: target[index],
            }),
            None => Ok(()),
        }
    }
}

impl Shared {
    /// Takes the message, then (the lock released: they read the state) runs the listeners.
    fn receive_joint_states(&self, message: &JointState, prefix: &str) {
        if self.take_joint_states(message, prefix) {
            self.listeners.notify();
        }
    }

    fn take_joint_states(&self, message: &JointState, prefix: &str) -> bool {
        let positions = message.position.as_slice();
        let mut latest = self.latest.lock();
        if !latest.fits(positions.len(), "get/joint_states", prefix) {
            return false;
        }
        let n = positions.len();
        let latest = &mut *latest;
        copy_into(&mut latest.positions, positions);
        copy_or_nan(&mut latest.velocities, message.velocity.as_slice(), n);
        copy_or_nan(&mut latest.efforts, message.effort.as_slice(), n);
        if latest.joint_count.is_none() {
            // Names are fixed with the joint count; before that they follow the robot.
            latest.names = if message.name.len() == n {
                message.name.iter().map(|name| name.to_string()).collect()
            } else {
                Vec::new()
            };
        }
        latest.sequence += 1;
        latest.received_at = Some(Instant::now());
        let stamp = &message.header.stamp;
        latest.stamp = (stamp.sec != 0 || stamp.nanosec != 0).then_some(SimTime {
            sec: i64::from(stamp.sec),
            nsec: stamp.nanosec as i32,
        });
        self.changed.notify_all();
        true
    }

    fn receive_limits(&self, message: &Float64MultiArray, upper: bool, prefix: &str) {
        let values = message.data.as_slice();
        let topic = if upper {
            "get/joint_positions_max"
        } else {
            "get/joint_positions_min"
        };
        let mut latest = self.latest.lock();
        if !latest.fits(values.len(), topic, prefix) {
            return;
        }
        let slot = if upper {
            &mut latest.upper
        } else {
            &mut latest.lower
        };
        copy_into(slot.get_or_insert_with(Vec::new), values);
        self.changed.notify_all();
    }
}

/// `to` becomes a copy of `from` (no allocation once it has the capacity).
fn copy_into(to: &mut Vec<f64>, from: &[f64]) {
    to.clear();
    to.extend_from_slice(from);
}

/// `to` becomes a copy of `from` if it has `n` values, else `n` NaN.
fn copy_or_nan(to: &mut Vec<f64>, from: &[f64], n: usize) {
    if from.len() == n {
        copy_into(to, from);
    } else {
        to.clear();
        to.resize(n, f64::NAN);
    }
}

impl RobotDriver for RobotDriverClient {
    fn joint_names(&self) -> Vec<String> {
        self.shared.latest.lock().names.clone()
    }

    fn joint_count(&self) -> usize {
        let latest = self.shared.latest.lock();
        latest.joint_count.unwrap_or(latest.positions.len())
    }

    /// The topics exist from construction: nothing to do.
    fn connect(&self) -> Result<(), DriverError> {
        Ok(())
    }

    fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError> {
        let shared = self.shared.clone();
        let _wake = shutdown.on_trigger(Arc::new(move || {
            // Under the lock, so a waiter between its check and its wait is not missed.
            let _latest = shared.latest.lock();
            shared.changed.notify_all();
        }));
        let start = Instant::now();
        let timeout_at = self.initialize_timeout.and_then(|t| start.checked_add(t));
        let mut next_progress = start + PROGRESS_INTERVAL;
        let mut latest = self.shared.latest.lock();
        loop {
            if latest.joint_count.is_some() {
                return Ok(());
            }
            if shutdown.is_triggered() {
                return Err(ClientError::InitializeShutdown {
                    prefix: self.prefix.clone(),
                    missing: latest.missing(&self.prefix),
                }
                .into());
            }
            if latest.ready() {
                let count = latest.positions.len();
                latest.joint_count = Some(count);
                if latest.names.len() != count {
                    latest.names.clear();
                }
                tracing::info!(
                    "RobotDriverClient({})::initialize: {count} joints; states and limits \
                     received.",
                    self.prefix
                );
                return Ok(());
            }
            let now = Instant::now();
            if let Some(timeout_at) = timeout_at.filter(|&t| now >= t) {
                return Err(ClientError::InitializeTimeout {
                    prefix: self.prefix.clone(),
                    timeout: timeout_at.duration_since(start),
                    missing: latest.missing(&self.prefix),
                }
                .into());
            }
            if now >= next_progress {
                tracing::warn!(
                    "RobotDriverClient({})::initialize: still waiting after {:.0} s for {}.",
                    self.prefix,
                    start.elapsed().as_secs_f64(),
                    latest.missing(&self.prefix)
                );
                next_progress = now + PROGRESS_INTERVAL;
            }
            let wake_at = timeout_at.map_or(next_progress, |t| t.min(next_progress));
            self.shared.changed.wait_until(&mut latest, wake_at);
        }
    }

    fn deinitialize(&self) {
        self.shared.latest.lock().joint_count = None;
        self.target.lock().present = false;
    }

    /// The subscriptions live as long as the client: nothing to do.
    fn disconnect(&self) {}

    fn read_snapshot(&self, out: &mut JointSnapshot) {
        let latest = self.shared.latest.lock();
        let n = latest.joint_count.unwrap_or(latest.positions.len());
        out.resize(n);
        if latest.positions.len() == n {
            out.positions.copy_from_slice(&latest.positions);
            out.velocities.copy_from_slice(&latest.velocities);
            out.efforts.copy_from_slice(&latest.efforts);
        }
        for (out, limits) in [
            (&mut out.limits_lower, &latest.lower),
            (&mut out.limits_upper, &latest.upper),
        ] {
            match limits {
                Some(limits) if limits.len() == n => out.copy_from_slice(limits),
                _ => out.fill(f64::NAN),
            }
        }
        out.last_seen.fill(latest.sequence);
        out.sequence = latest.sequence;
        out.received_at = latest.received_at;
        out.sim_time = latest.stamp;
    }

    fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        Ok(self.check(command, target)?)
    }

    /// A velocity or effort target is published at once on the robot's
    /// `set/target_joint_velocities|forces`: the robot's own driver validates it against its
    /// limits and controllers and sets it to zero at its command timeout. The position
    /// target is then no longer re-sent (it would switch the robot back to positions).
    fn set_target(&self, command: Command, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        let index = match command {
            Command::Positions => return self.set_positions_target(target),
            Command::Velocities => 0,
            Command::Forces => 1,
        };
        self.check(command, target)?;
        let mut stored = self.target.lock();
        stored.present = false;
        let message = Float64MultiArray {
            data: rosidl_runtime_rs::Sequence::from(target),
            ..Default::default()
        };
        self.rate_publishers[index]
            .publish(&message)
            .map_err(|source| ClientError::Publish {
                prefix: self.prefix.clone(),
                topic: format!("{}/set/{}", self.prefix, RATE_TOPICS[index]),
                source,
            })?;
        Ok(TargetOutcome::Accepted)
    }

    fn keepalive_deadline(&self) -> Option<Instant> {
        let ForwardMode::OnChangeWithKeepalive(keepalive) = self.forward_mode else {
            return None;
        };
        let stored = self.target.lock();
        stored
            .present
            .then_some(stored.sent_at?)
            .map(|at| at + keepalive)
    }

    fn forward_targets(&self) -> Result<bool, DriverError> {
        let mut stored = self.target.lock();
        if !stored.present {
            return Ok(false);
        }
        let now = Instant::now();
        let quiet = match (self.forward_mode, stored.sent_at) {
            (ForwardMode::EveryPeriod, _) | (_, None) => false,
            (ForwardMode::OnChangeWithKeepalive(keepalive), Some(at)) => {
                now.saturating_duration_since(at) < keepalive
            }
            (ForwardMode::OnChange, Some(_)) => true,
        };
        if quiet && !stored.fresh {
            return Ok(false);
        }
        self.publisher
            .publish(&stored.message)
            .map_err(|source| ClientError::Publish {
                prefix: self.prefix.clone(),
                topic: format!("{}/set/target_joint_positions", self.prefix),
                source,
            })?;
        stored.fresh = false;
        stored.sent_at = Some(now);
        Ok(true)
    }

    fn add_state_listener(&self, listener: StateListener) -> Option<StateListenerGuard> {
        Some(self.shared.listeners.add(listener))
    }

    fn state_source(&self) -> String {
        format!("{}/get/joint_states", self.prefix)
    }

    /// The limits the robot publishes, as last received.
    fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError> {
        let latest = self.shared.latest.lock();
        match (latest.joint_count, &latest.lower, &latest.upper) {
            (Some(_), Some(lower), Some(upper)) => Ok((lower.clone(), upper.clone())),
            _ => Err(ClientError::NotInitialized {
                prefix: self.prefix.clone(),
                operation: "get_joint_limits",
            }
            .into()),
        }
    }
}

impl RobotDriverClient {
    /// Stores a position target for `forward_targets` (after the same checks).
    fn set_positions_target(&self, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        self.check(Command::Positions, target)?;
        let mut stored = self.target.lock();
        if stored.message.data.len() == target.len() {
            stored.message.data.as_mut_slice().copy_from_slice(target);
        } else {
            stored.message.data = rosidl_runtime_rs::Sequence::from(target);
        }
        stored.present = true;
        stored.fresh = true;
        Ok(TargetOutcome::Accepted)
    }
}
