use std::time::Duration;

use crate::Command;

/// A transport's own error (e.g. gz-transport's), kept as the source of a [`DriverError`]
/// without this crate depending on the transport.
pub type TransportError = Box<dyn std::error::Error + Send + Sync>;

/// Every error of a sas driver: the Gazebo driver's (its messages follow the original C++
/// driver's where it had one, e.g. `RobotDriverGazebo::set_target_joint_positions: expected 6
/// values, got 5.`), the composite's, and [`DriverError::Other`] for drivers defined
/// elsewhere.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The configuration names no joint.
    #[error("RobotDriverGazebo: joint_names is empty.")]
    EmptyJointNames,
    /// One joint name is the empty string.
    #[error("RobotDriverGazebo: joint_names[{index}] is empty.")]
    EmptyJointName {
        /// Position in `joint_names`.
        index: usize,
    },
    /// The same joint is configured twice; Gazebo's message could fill only one slot.
    #[error("RobotDriverGazebo: joint_names has {name:?} twice (at {first} and {second}).")]
    DuplicateJointName {
        /// The repeated name.
        name: String,
        /// First position in `joint_names`.
        first: usize,
        /// Second position in `joint_names`.
        second: usize,
    },
    /// A mandatory string parameter is empty.
    #[error("RobotDriverGazebo: {parameter} is empty.")]
    EmptyParameter {
        /// The configuration field, e.g. `joint_states_topic`.
        parameter: &'static str,
    },
    /// A configuration value is out of its range.
    #[error("RobotDriverGazebo: {parameter} is invalid: {problem}.")]
    InvalidParameter {
        /// The configuration field's parameter name.
        parameter: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A shared node does not match the configuration (message prefix or partition).
    #[error("RobotDriverGazebo: the shared node's {what} is {node:?} but the configuration asks for {configuration:?}.")]
    NodeMismatch {
        /// `msgs_prefix` or `partition`.
        what: &'static str,
        /// The node's value.
        node: String,
        /// The configuration's value.
        configuration: String,
    },
    /// The gz-transport node could not be created.
    #[error("RobotDriverGazebo: failed to create the gz-transport node: {0}")]
    Node(#[source] TransportError),
    /// A joint command topic could not be advertised.
    #[error("RobotDriverGazebo::connect: failed to advertise [{topic}]: {source}")]
    Advertise {
        /// The command topic.
        topic: String,
        /// The transport's reason.
        source: TransportError,
    },
    /// The joint-state topic could not be subscribed.
    #[error("RobotDriverGazebo::connect: failed to subscribe to [{topic}]: {source}")]
    Subscribe {
        /// The joint-state topic.
        topic: String,
        /// The transport's reason.
        source: TransportError,
    },
    /// A joint command could not be published.
    #[error("RobotDriverGazebo::forward_targets: failed to publish on [{topic}]: {source}")]
    Publish {
        /// The command topic.
        topic: String,
        /// The transport's reason.
        source: TransportError,
    },
    /// The operation needs `connect()` first.
    #[error("RobotDriverGazebo::{operation}: not connected; call connect() first.")]
    NotConnected {
        /// The refused operation.
        operation: &'static str,
    },
    /// A getter was called before `initialize()` (or after `deinitialize()`).
    #[error("RobotDriverGazebo: {what} not initialized.")]
    NotInitialized {
        /// What was asked for, e.g. `joint positions`.
        what: &'static str,
    },
    /// A target was given before `initialize()` captured the limits it is checked against.
    #[error("RobotDriverGazebo::{command}: not initialized; call initialize() first (it captures the joint limits targets are checked against).")]
    TargetBeforeInitialize {
        /// The refused command.
        command: Command,
    },
    /// A target has the wrong number of values.
    #[error("RobotDriverGazebo::{command}: expected {expected} values, got {got}.")]
    TargetLength {
        /// The refused command.
        command: Command,
        /// Number of configured joints.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// A target value is NaN or infinite; it is never forwarded.
    #[error(
        "RobotDriverGazebo::{command}: value {index} ({joint}) is {value}; targets must be finite."
    )]
    NonFiniteTarget {
        /// The refused command.
        command: Command,
        /// Position in the target.
        index: usize,
        /// The joint it is for.
        joint: String,
        /// The offending value.
        value: f64,
    },
    /// A target value is outside the joint's limits (position, velocity or effort, by the
    /// command) and the policy is `Refuse`.
    #[error("RobotDriverGazebo::{command}: value {index} ({joint}) = {value} is outside the {} [{lower}, {upper}].", command.limits_name())]
    TargetOutOfLimits {
        /// The refused command.
        command: Command,
        /// Position in the target.
        index: usize,
        /// The joint it is for.
        joint: String,
        /// The offending value.
        value: f64,
        /// The joint's lower limit.
        lower: f64,
        /// The joint's upper limit.
        upper: f64,
    },
    /// A velocity or effort target for joints whose command topic nothing subscribes to (no
    /// JointController / ApplyJointForce listening, or a wrong topic prefix): refused, since
    /// nothing would carry it out.
    #[error("RobotDriverGazebo::{command}: nothing subscribes to [{}]: is Gazebo's {} loaded, and {} right? The target is refused.", topics.join(", "), command.gazebo_system(), command.prefix_parameter())]
    NoController {
        /// The refused command.
        command: Command,
        /// The command topics without a subscriber, in joint order.
        topics: Vec<String>,
    },
    /// A driver that does not offer this command mode.
    #[error("{driver}::{command}: not supported by this driver.")]
    UnsupportedCommand {
        /// The driver's type, for the message.
        driver: &'static str,
        /// The refused command.
        command: Command,
    },
    /// `initialize()` was cancelled by its shutdown token.
    #[error(
        "RobotDriverGazebo::initialize: shutdown while waiting for joint states on [{topic}]."
    )]
    InitializeShutdown {
        /// The joint-state topic.
        topic: String,
    },
    /// `disconnect()` ran while `initialize()` was waiting.
    #[error(
        "RobotDriverGazebo::initialize: disconnected while waiting for joint states on [{topic}]."
    )]
    InitializeDisconnected {
        /// The joint-state topic.
        topic: String,
    },
    /// `initialize()` did not see every joint within the configured timeout.
    #[error("RobotDriverGazebo::initialize: timed out after {:.1} s waiting for joint states on [{topic}]; still missing: {}.", timeout.as_secs_f64(), missing.join(", "))]
    InitializeTimeout {
        /// The joint-state topic.
        topic: String,
        /// The configured timeout.
        timeout: Duration,
        /// Joints never seen, or seen without limits.
        missing: Vec<String>,
    },
    /// A composite of drivers is configured wrongly (no parts, a part twice, joint limits of
    /// the wrong length).
    #[error("RobotDriverComposite: {0}")]
    CompositeConfiguration(String),
    /// A composite was used before `initialize()` fixed how many joints each part has.
    #[error("RobotDriverComposite::{operation}: not initialized; call initialize() first.")]
    CompositeNotInitialized {
        /// The refused operation.
        operation: &'static str,
    },
    /// A composite target does not have one value per joint of all the parts together.
    #[error("RobotDriverComposite::{command}: expected {expected} values ({parts}), got {got}.")]
    CompositeTargetLength {
        /// The refused command.
        command: Command,
        /// Joints of all the parts.
        expected: usize,
        /// Values given.
        got: usize,
        /// How the expected count splits, e.g. `7 for r820_sim + 6 for ur3e_sim`.
        parts: String,
    },
    /// A part of a composite failed; its own error says how.
    #[error("{part}: {error}")]
    Part {
        /// The part's name.
        part: String,
        /// The part's error.
        error: Box<DriverError>,
    },
    /// An error of a driver defined outside this crate (e.g. a client of another driver over
    /// a middleware), with the category the caller should treat it as.
    #[error("{error}")]
    Other {
        /// How to treat it.
        kind: ErrorKind,
        /// The driver's own error.
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl DriverError {
    /// An error of a driver defined outside this crate.
    pub fn other(
        kind: ErrorKind,
        error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        DriverError::Other {
            kind,
            error: error.into(),
        }
    }
}

/// The category of a [`DriverError`], for bindings that map errors to exception types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The configuration is invalid (or does not match a shared node).
    Configuration,
    /// A target was refused; the previous target stays in force.
    InvalidTarget,
    /// The call is not allowed in the driver's current state.
    State,
    /// gz-transport failed.
    Transport,
    /// `initialize()` timed out.
    Timeout,
    /// `initialize()` was cancelled (shutdown token or disconnect).
    Cancelled,
}

impl DriverError {
    /// The error's category.
    pub fn kind(&self) -> ErrorKind {
        match self {
            DriverError::EmptyJointNames
            | DriverError::EmptyJointName { .. }
            | DriverError::DuplicateJointName { .. }
            | DriverError::EmptyParameter { .. }
            | DriverError::InvalidParameter { .. }
            | DriverError::NodeMismatch { .. }
            | DriverError::CompositeConfiguration(_) => ErrorKind::Configuration,
            DriverError::Node(_)
            | DriverError::Advertise { .. }
            | DriverError::Subscribe { .. }
            | DriverError::Publish { .. } => ErrorKind::Transport,
            DriverError::NotConnected { .. }
            | DriverError::NotInitialized { .. }
            | DriverError::TargetBeforeInitialize { .. }
            | DriverError::NoController { .. }
            | DriverError::UnsupportedCommand { .. }
            | DriverError::CompositeNotInitialized { .. } => ErrorKind::State,
            DriverError::TargetLength { .. }
            | DriverError::CompositeTargetLength { .. }
            | DriverError::NonFiniteTarget { .. }
            | DriverError::TargetOutOfLimits { .. } => ErrorKind::InvalidTarget,
            DriverError::InitializeShutdown { .. } | DriverError::InitializeDisconnected { .. } => {
                ErrorKind::Cancelled
            }
            DriverError::InitializeTimeout { .. } => ErrorKind::Timeout,
            DriverError::Part { error, .. } => error.kind(),
            DriverError::Other { kind, .. } => *kind,
        }
    }
}
