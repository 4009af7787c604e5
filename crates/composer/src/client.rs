//! `RobotDriverClient`: another robot driver seen through its SmartArmStack topics (the
//! original's `sas::RobotDriverClient`), as a [`RobotDriver`] a composite can hold. Works with
//! any sas driver: it reads `<prefix>/get/joint_states`, `get/joint_positions_min|max` and
//! writes `<prefix>/set/target_joint_positions|velocities|forces`. The topics and what they
//! deliver are `sas-driver-client`'s; this is the contract on top: initialization, target
//! checks and when a target is sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rclrs::{Node, RclrsError};
use ros_env::std_msgs::msg::rmw::Float64MultiArray;
use sas_driver_client::{ClientState, NotReady, RosError, Subscriptions, TargetPublishers, Topics};
use sas_driver_contract::{
    Command, DriverError, ErrorKind, ForwardMode, JointSnapshot, RobotDriver, ShutdownToken,
    StateListener, StateListenerGuard, TargetOutcome,
};

/// How often a waiting `initialize` says what it still waits for.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(2);

/// The client's errors, as [`DriverError::Other`] with the category the loop needs.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A topic could not be created (e.g. an invalid prefix).
    #[error("RobotDriverClient({prefix}): {source}")]
    Topic {
        /// The client's topic prefix.
        prefix: String,
        /// Which topic, and why.
        source: RosError,
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
            ClientError::Topic { .. } | ClientError::Publish { .. } => ErrorKind::Transport,
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
/// length (the first state fixes the robot's joint count and names).
///
/// Velocities and efforts are passed on when the robot publishes one per joint (NaN
/// otherwise). `forward_targets` sends the target as the [`ForwardMode`] says: on every call
/// (`EveryPeriod`, as the original composer did by calling `send_target_joint_positions`
/// every period), or only a new one and after the keepalive; the robot's own driver checks
/// it against its limits.
pub struct RobotDriverClient {
    prefix: String,
    topics: Topics,
    state: Arc<ClientState>,
    initialize_timeout: Option<Duration>,
    forward_mode: ForwardMode,
    /// Between `initialize_with` and `deinitialize`: targets are taken.
    initialized: AtomicBool,
    target: Mutex<Target>,
    publishers: TargetPublishers,
    _subscriptions: Subscriptions,
}

impl RobotDriverClient {
    /// Subscribes to `<prefix>/get/joint_states`, `get/joint_positions_min`, `…_max` and
    /// `get/home_states` (taken on the DDS listener thread that received them: a robot's
    /// state reaches the composite with no executor thread woken) and advertises
    /// `<prefix>/set/target_joint_positions|velocities|forces` on `node`.
    /// `initialize_timeout` bounds the wait for them (`None`: until cancelled, as the
    /// original); `forward_mode` says when a target is sent again.
    ///
    /// # Errors
    /// A topic rclrs refuses (e.g. an invalid prefix).
    pub fn new(
        node: &Node,
        prefix: &str,
        initialize_timeout: Option<Duration>,
        forward_mode: ForwardMode,
    ) -> Result<Self, ClientError> {
        let topic_error = |source| ClientError::Topic {
            prefix: prefix.to_string(),
            source,
        };
        let topics = Topics::new(prefix);
        let state = Arc::new(ClientState::new());
        let subscriptions = Subscriptions::new(node, &topics, &state).map_err(topic_error)?;
        let publishers = TargetPublishers::new(node, &topics).map_err(topic_error)?;
        Ok(RobotDriverClient {
            prefix: prefix.to_string(),
            topics,
            state,
            initialize_timeout,
            forward_mode,
            initialized: AtomicBool::new(false),
            target: Mutex::new(Target {
                message: Float64MultiArray::default(),
                present: false,
                fresh: false,
                sent_at: None,
            }),
            publishers,
            _subscriptions: subscriptions,
        })
    }

    /// The topic prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn initialized_count(&self, operation: &'static str) -> Result<usize, ClientError> {
        let not_initialized = || ClientError::NotInitialized {
            prefix: self.prefix.clone(),
            operation,
        };
        if !self.initialized.load(Ordering::SeqCst) {
            return Err(not_initialized());
        }
        self.state.joint_count().ok_or_else(not_initialized)
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

    fn missing(&self) -> String {
        self.state.missing(&self.topics).join(", ")
    }

    fn publish(&self, command: Command, message: &Float64MultiArray) -> Result<(), ClientError> {
        self.publishers
            .of(command)
            .publish(message)
            .map_err(|source| ClientError::Publish {
                prefix: self.prefix.clone(),
                topic: self.topics.target(command).to_string(),
                source,
            })
    }
}

impl RobotDriver for RobotDriverClient {
    fn joint_names(&self) -> Vec<String> {
        self.state.joint_names().to_vec()
    }

    fn joint_count(&self) -> usize {
        self.state.joint_count().unwrap_or(0)
    }

    /// The topics exist from construction: nothing to do.
    fn connect(&self) -> Result<(), DriverError> {
        Ok(())
    }

    fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError> {
        if self.initialized.load(Ordering::SeqCst) {
            return Ok(());
        }
        let start = Instant::now();
        let timeout_at = self.initialize_timeout.and_then(|t| start.checked_add(t));
        loop {
            let progress_at = Instant::now() + PROGRESS_INTERVAL;
            let wake_at = timeout_at.map_or(progress_at, |t| t.min(progress_at));
            match self.state.wait_until_ready(Some(wake_at), shutdown) {
                Ok(count) => {
                    self.initialized.store(true, Ordering::SeqCst);
                    tracing::info!(
                        "RobotDriverClient({})::initialize: {count} joints; states and limits \
                         received.",
                        self.prefix
                    );
                    return Ok(());
                }
                Err(NotReady::Shutdown | NotReady::Closed) => {
                    return Err(ClientError::InitializeShutdown {
                        prefix: self.prefix.clone(),
                        missing: self.missing(),
                    }
                    .into());
                }
                Err(NotReady::TimedOut) => {}
            }
            if let Some(timeout_at) = timeout_at.filter(|&t| Instant::now() >= t) {
                return Err(ClientError::InitializeTimeout {
                    prefix: self.prefix.clone(),
                    timeout: timeout_at.duration_since(start),
                    missing: self.missing(),
                }
                .into());
            }
            tracing::warn!(
                "RobotDriverClient({})::initialize: still waiting after {:.0} s for {}.",
                self.prefix,
                start.elapsed().as_secs_f64(),
                self.missing()
            );
        }
    }

    fn deinitialize(&self) {
        self.initialized.store(false, Ordering::SeqCst);
        self.target.lock().present = false;
    }

    /// The subscriptions live as long as the client: nothing to do.
    fn disconnect(&self) {}

    fn read_snapshot(&self, out: &mut JointSnapshot) {
        self.state.read_snapshot(out);
    }

    fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        Ok(self.check(command, target)?)
    }

    /// A position target is stored for `forward_targets`. A velocity or effort target is
    /// published at once on the robot's `set/target_joint_velocities|forces`: the robot's own
    /// driver validates it against its limits and controllers and sets it to zero at its
    /// command timeout. The position target is then no longer re-sent (it would switch the
    /// robot back to positions).
    fn set_target(&self, command: Command, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        self.check(command, target)?;
        let mut stored = self.target.lock();
        if command == Command::Positions {
            if stored.message.data.len() == target.len() {
                stored.message.data.as_mut_slice().copy_from_slice(target);
            } else {
                stored.message.data = rosidl_runtime_rs::Sequence::from(target);
            }
            stored.present = true;
            stored.fresh = true;
            return Ok(TargetOutcome::Accepted);
        }
        stored.present = false;
        let message = Float64MultiArray {
            data: rosidl_runtime_rs::Sequence::from(target),
            ..Default::default()
        };
        self.publish(command, &message)?;
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
        self.publish(Command::Positions, &stored.message)?;
        stored.fresh = false;
        stored.sent_at = Some(now);
        Ok(true)
    }

    fn add_state_listener(&self, listener: StateListener) -> Option<StateListenerGuard> {
        Some(self.state.add_state_listener(listener))
    }

    fn state_source(&self) -> String {
        self.topics.joint_states.clone()
    }

    /// The limits the robot publishes, as last received.
    fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError> {
        let not_initialized = || ClientError::NotInitialized {
            prefix: self.prefix.clone(),
            operation: "get_joint_limits",
        };
        if !self.initialized.load(Ordering::SeqCst) {
            return Err(not_initialized().into());
        }
        match self.state.limits() {
            (Some(lower), Some(upper)) => Ok((lower.to_vec(), upper.to_vec())),
            _ => Err(not_initialized().into()),
        }
    }
}
