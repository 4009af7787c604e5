//! The Python client's own ROS side: its node in the process's ROS context (shared by the
//! clients that ask alike), the topics `sas-driver-client` creates on it and the publishers
//! only a controller has (homing, clearing, watchdog, shutdown) — all but the blacklisted
//! ones —, and the executor thread (bridge-node's [`ExecutorThread`]) that serves the node.
//! The subscriptions take each state into the [`ClientState`] on the DDS listener thread that
//! received it (no executor thread wakes for it), and never touch Python.

use std::sync::{Arc, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use bridge_node::{stamp_from_nanos, DdsProfile, ExecutorThread};
use parking_lot::Mutex;
use rclrs::{
    Context, CreateBasicExecutor, InitOptions, IntoNodeOptions, Node, Publisher, RclrsError,
};
use ros_env::sas_msgs::msg::rmw::{Bool as ShutdownSignal, WatchdogTrigger};
use ros_env::std_msgs::msg::rmw::Int32MultiArray;
use sas_driver_client::{
    advertise, ClientState, RosError, Subscriptions, TargetPublishers, Topics,
};

/// The original's default topic prefix: the node's name.
pub(crate) const GET_FROM_NODE: &str = "GET_FROM_NODE";

/// What a client leaves out (the original's `MODE_BLACKLIST_FLAG`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Blacklist {
    /// No `set/target_joint_*`, `set/homing_signal`, `set/clear_positions` publishers.
    pub joint_control: bool,
    /// No subscriptions: nothing is read.
    pub joint_monitoring: bool,
    /// No `set/watchdog_trigger` publisher.
    pub watchdog_control: bool,
}

/// Why the ROS side could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientRosError {
    #[error(
        "RobotDriverClient: cannot initialise ROS from the arguments given (check --ros-args): {0}"
    )]
    Init(RclrsError),
    #[error("RobotDriverClient: cannot create the node {name:?}: {source}")]
    Node { name: String, source: RclrsError },
    #[error("RobotDriverClient: cannot create the {kind} on {topic:?}: {source}")]
    Topic {
        kind: &'static str,
        topic: String,
        source: RclrsError,
    },
    #[error("RobotDriverClient: cannot create the subscription on {topic:?}: {source}")]
    Subscription {
        topic: String,
        source: listener_subscription::Error,
    },
    #[error("RobotDriverClient: cannot start the executor thread: {0}")]
    Executor(bridge_node::BridgeError),
}

impl From<RosError> for ClientRosError {
    fn from(error: RosError) -> Self {
        match error {
            RosError::Publisher { topic, source } => ClientRosError::Topic {
                kind: "publisher",
                topic,
                source,
            },
            RosError::Subscription { topic, source } => {
                ClientRosError::Subscription { topic, source }
            }
        }
    }
}

/// How the process's ROS context was asked for: clients asking alike share one.
#[derive(Clone, PartialEq)]
struct ContextKey {
    args: Vec<String>,
    domain_id: Option<usize>,
}

/// The live contexts of this process's clients (dropped with their last client).
static CONTEXTS: Mutex<Vec<(ContextKey, Weak<Context>)>> = Mutex::new(Vec::new());

/// The process's ROS context for `args` and `domain_id`: the one another client already
/// uses, or a new one.
fn shared_context(args: Vec<String>, domain_id: Option<usize>) -> Result<Arc<Context>, RclrsError> {
    let key = ContextKey { args, domain_id };
    let mut contexts = CONTEXTS.lock();
    contexts.retain(|(_, context)| context.strong_count() > 0);
    if let Some(context) = contexts
        .iter()
        .find(|(existing, _)| *existing == key)
        .and_then(|(_, context)| context.upgrade())
    {
        return Ok(context);
    }
    let context = Arc::new(Context::new(
        key.args.clone(),
        InitOptions::new().with_domain_id(domain_id),
    )?);
    contexts.push((key, Arc::downgrade(&context)));
    Ok(context)
}

/// The publishers a client has (those of blacklisted modes are absent).
pub(crate) struct Publishers {
    pub joint_control: Option<JointControl>,
    pub watchdog_trigger: Option<Publisher<WatchdogTrigger>>,
    pub shutdown: Publisher<ShutdownSignal>,
}

pub(crate) struct JointControl {
    pub targets: TargetPublishers,
    pub homing_signal: Publisher<Int32MultiArray>,
    pub clear_positions: Publisher<Int32MultiArray>,
}

/// A client's node, topics and executor thread. Dropped in field order: the executor thread
/// first (stopped and joined, so no callback runs after), then the topics, the node, the
/// context.
pub(crate) struct ClientRos {
    _executor: ExecutorThread,
    pub publishers: Publishers,
    _subscriptions: Option<Subscriptions>,
    /// The topic prefix, resolved.
    pub prefix: String,
    pub topics: Topics,
    pub node: Node,
    _context: Arc<Context>,
}

impl ClientRos {
    /// Creates the node `node_name` in the process's context for `args`/`domain_id`, the
    /// topics under `topic_prefix` (the node's name for `"GET_FROM_NODE"`, as the original)
    /// that `blacklist` leaves, and the executor thread serving them.
    pub fn new(
        args: Vec<String>,
        domain_id: Option<usize>,
        node_name: &str,
        topic_prefix: &str,
        blacklist: Blacklist,
        state: &Arc<ClientState>,
    ) -> Result<Self, ClientRosError> {
        // The bridge's Fast DDS settings (fewer wake-ups per sample), as for the node: they
        // apply if this process's first participant is made here; kept until the node exists.
        let dds_profile = DdsProfile::apply();
        let context = shared_context(args, domain_id).map_err(ClientRosError::Init)?;
        let executor = context.create_basic_executor();
        // The node declares no parameters: without their six services its wait set holds
        // only the client's topics (rclrs tries to take from every service it holds each time
        // the wait set wakes, on every message).
        let node = executor
            .create_node(node_name.start_parameter_services(false))
            .map_err(|source| ClientRosError::Node {
                name: node_name.to_string(),
                source,
            })?;
        tracing::debug!("::DDS: {}.", dds_profile.note());
        drop(dds_profile);
        let prefix = if topic_prefix == GET_FROM_NODE {
            node.name()
        } else {
            topic_prefix.to_string()
        };
        tracing::info!("::Initializing RobotDriverClient with prefix {prefix}");
        let topics = Topics::new(&prefix);
        let subscriptions = (!blacklist.joint_monitoring)
            .then(|| Subscriptions::new(&node, &topics, state))
            .transpose()?;
        let joint_control = (!blacklist.joint_control)
            .then(|| {
                Ok::<_, RosError>(JointControl {
                    targets: TargetPublishers::new(&node, &topics)?,
                    homing_signal: advertise(&node, &topics.homing_signal)?,
                    clear_positions: advertise(&node, &topics.clear_positions)?,
                })
            })
            .transpose()?;
        let watchdog_trigger = (!blacklist.watchdog_control)
            .then(|| advertise(&node, &topics.watchdog_trigger))
            .transpose()?;
        let publishers = Publishers {
            joint_control,
            watchdog_trigger,
            shutdown: advertise(&node, &topics.shutdown)?,
        };
        let executor = ExecutorThread::spawn(executor).map_err(ClientRosError::Executor)?;
        Ok(ClientRos {
            _executor: executor,
            publishers,
            _subscriptions: subscriptions,
            prefix,
            topics,
            node,
            _context: context,
        })
    }
}

/// A `std_msgs/Int32MultiArray` of `values` (layout left empty, as the original).
pub(crate) fn i32_message(values: &[i32]) -> Int32MultiArray {
    Int32MultiArray {
        data: rosidl_runtime_rs::Sequence::from(values),
        ..Default::default()
    }
}

/// A `sas_msgs/WatchdogTrigger` stamped with the system clock now, as the original client
/// stamps it (`rclcpp::Clock().now()`): the server compares the stamp with its own clock.
pub(crate) fn watchdog_message(
    status: bool,
    period_in_seconds: f64,
    maximum_acceptable_delay_in_seconds: f64,
) -> WatchdogTrigger {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as i128);
    let mut message = WatchdogTrigger {
        status,
        period_in_seconds,
        maximum_acceptable_delay_in_seconds,
        ..Default::default()
    };
    message.header.stamp = stamp_from_nanos(nanos);
    message
}

/// `sas_msgs/Bool` with `data: true`: the server's loop stops.
pub(crate) fn shutdown_message() -> ShutdownSignal {
    ShutdownSignal { data: true }
}
