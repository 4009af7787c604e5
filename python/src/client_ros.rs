//! The ROS side of a `RobotDriverClient`: its node in the process's ROS context, the
//! subscriptions that fill its [`ClientState`] and the publishers it sends with, the
//! original client's topics and QoS. The client's executor spins on a thread of its own
//! (bridge-node's [`ExecutorThread`]); the subscriptions are [`ListenerSubscription`]s: each
//! state is taken into the cache on the DDS listener thread that received it (no executor
//! thread wakes for it), and never touches Python.

use std::sync::{Arc, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use bridge_node::{stamp_from_nanos, DdsProfile, ExecutorThread};
use listener_subscription::ListenerSubscription;
use parking_lot::Mutex;
use rclrs::{
    Context, CreateBasicExecutor, InitOptions, IntoNodeOptions, IntoPrimitiveOptions, Node,
    PrimitiveOptions, Publisher, RclrsError,
};
use ros_env::sas_msgs::msg::rmw::{Bool as ShutdownSignal, WatchdogTrigger};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::{Float64MultiArray, Int32MultiArray};

use crate::client_state::ClientState;
use crate::joint_state_cdr::{read_joint_state, JointStateArrays};

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

/// The topics under a prefix, named once.
#[derive(Clone, Debug)]
pub(crate) struct Topics {
    pub joint_states: String,
    pub joint_positions_min: String,
    pub joint_positions_max: String,
    pub home_states: String,
    pub target_joint_positions: String,
    pub target_joint_velocities: String,
    pub target_joint_forces: String,
    pub homing_signal: String,
    pub clear_positions: String,
    pub watchdog_trigger: String,
    pub shutdown: String,
}

impl Topics {
    pub fn new(prefix: &str) -> Self {
        let topic = |suffix: &str| format!("{prefix}/{suffix}");
        Topics {
            joint_states: topic("get/joint_states"),
            joint_positions_min: topic("get/joint_positions_min"),
            joint_positions_max: topic("get/joint_positions_max"),
            home_states: topic("get/home_states"),
            target_joint_positions: topic("set/target_joint_positions"),
            target_joint_velocities: topic("set/target_joint_velocities"),
            target_joint_forces: topic("set/target_joint_forces"),
            homing_signal: topic("set/homing_signal"),
            // The original client publishes on `set/clear_positions_signal`, a topic no
            // server listens on (RobotDriverServer subscribes to `set/clear_positions`).
            clear_positions: topic("set/clear_positions"),
            watchdog_trigger: topic("set/watchdog_trigger"),
            shutdown: topic("set/shutdown"),
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

/// KeepLast(1), reliable, volatile: every topic of the original client (depth 1).
fn depth_one(topic: &str) -> PrimitiveOptions<'_> {
    topic.keep_last(1).reliable().volatile()
}

/// The publishers a client has (those of blacklisted modes are absent).
pub(crate) struct Publishers {
    pub joint_control: Option<JointControl>,
    pub watchdog_trigger: Option<Publisher<WatchdogTrigger>>,
    pub shutdown: Publisher<ShutdownSignal>,
}

pub(crate) struct JointControl {
    pub target_joint_positions: Publisher<Float64MultiArray>,
    pub target_joint_velocities: Publisher<Float64MultiArray>,
    pub target_joint_forces: Publisher<Float64MultiArray>,
    pub homing_signal: Publisher<Int32MultiArray>,
    pub clear_positions: Publisher<Int32MultiArray>,
}

struct Subscriptions {
    _joint_states: ListenerSubscription<JointState>,
    _joint_positions_min: ListenerSubscription<Float64MultiArray>,
    _joint_positions_max: ListenerSubscription<Float64MultiArray>,
    _home_states: ListenerSubscription<Int32MultiArray>,
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
            .then(|| subscribe_all(&node, &topics, state))
            .transpose()?;
        let joint_control = (!blacklist.joint_control)
            .then(|| {
                Ok::<_, ClientRosError>(JointControl {
                    target_joint_positions: advertise(&node, &topics.target_joint_positions)?,
                    target_joint_velocities: advertise(&node, &topics.target_joint_velocities)?,
                    target_joint_forces: advertise(&node, &topics.target_joint_forces)?,
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

/// Subscribes the client's topics on `node`, each message taken into `state` on the DDS
/// listener thread.
fn subscribe_all(
    node: &Node,
    topics: &Topics,
    state: &Arc<ClientState>,
) -> Result<Subscriptions, ClientRosError> {
    // Taken as CDR and read without the C message's allocations (see joint_state_cdr).
    let (receiver, name) = (state.clone(), topics.joint_states.clone());
    let mut arrays = JointStateArrays::default();
    let joint_states = ListenerSubscription::<JointState>::new_serialized(
        node,
        &topics.joint_states,
        1,
        move |bytes, _| match read_joint_state(bytes, &mut arrays) {
            Ok(message) => receiver.receive_joint_state(message, &name),
            Err(error) => receiver.misfit(&name, &format!("an unreadable body ({error})"), None),
        },
    )
    .map_err(|source| ClientRosError::Subscription {
        topic: topics.joint_states.clone(),
        source,
    })?;
    let limits = |topic: &str, upper: bool| {
        let (receiver, name) = (state.clone(), topic.to_owned());
        subscribe(node, topic, move |m: Float64MultiArray| {
            receiver.receive_limits(m.data.as_slice(), upper, &name)
        })
    };
    let joint_positions_min = limits(&topics.joint_positions_min, false)?;
    let joint_positions_max = limits(&topics.joint_positions_max, true)?;
    let receiver = state.clone();
    let home_states = subscribe(node, &topics.home_states, move |m: Int32MultiArray| {
        receiver.receive_home_states(m.data.as_slice())
    })?;
    Ok(Subscriptions {
        _joint_states: joint_states,
        _joint_positions_min: joint_positions_min,
        _joint_positions_max: joint_positions_max,
        _home_states: home_states,
    })
}

/// A subscription with the sas topics' QoS (KeepLast(1), reliable, volatile).
fn subscribe<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
    mut receive: impl FnMut(T) + Send + 'static,
) -> Result<ListenerSubscription<T>, ClientRosError> {
    ListenerSubscription::new(node, topic, 1, move |message, _| receive(message)).map_err(
        |source| ClientRosError::Subscription {
            topic: topic.to_string(),
            source,
        },
    )
}

fn advertise<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
) -> Result<Publisher<T>, ClientRosError> {
    node.create_publisher::<T>(depth_one(topic))
        .map_err(|source| ClientRosError::Topic {
            kind: "publisher",
            topic: topic.to_string(),
            source,
        })
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
