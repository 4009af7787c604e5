//! The topic surface under `<robot_name>/` (the original's `RobotDriverServer`): what exists,
//! with which QoS, and what the callbacks do. The `set/*` subscriptions are
//! [`ListenerSubscription`]s: a target is taken and handled on the DDS listener thread that
//! received it, so it costs no wake-up of an executor thread (an rclrs subscription costs one
//! more, about half of what receiving a target costs here). Callbacks store, forward or log,
//! and never block; the control loop does everything else.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use listener_subscription::{ListenerSubscription, TakenInfo};
use parking_lot::Mutex;
use rclrs::{IntoPrimitiveOptions, Node, NodeState, PrimitiveOptions, Publisher, Timer};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::{
    Float64MultiArray as RmwFloat64MultiArray, Int32MultiArray as RmwInt32MultiArray,
};
use ros_env::std_msgs::msg::{Float64MultiArray, Int32MultiArray};

use sas_robot_driver_gazebo::{Command, RateLimitedWarning};

use crate::robot::counters::RobotCounters;
use crate::robot::mailbox::TargetMailbox;
use crate::robot::messages::read_float64_multi_array;
use crate::robot::rate_limit::{suppressed_note, RateLimit, FAILURE_LOG_INTERVAL};
use crate::BridgeError;

/// How often the number of publishers on each `set/*` topic is checked.
const EXCLUSIVITY_CHECK_PERIOD: Duration = Duration::from_secs(1);

/// Velocity and effort targets (`set/target_joint_velocities`, `set/target_joint_forces`):
/// validated and sent on arrival, on the DDS listener thread, whatever
/// `target_forwarding` says (a rate command is sent once; the command timeout, not a
/// period, bounds it). Before the loop serves the robot, they are dropped with an error.
pub(crate) struct RateTargets {
    forwarder: Mutex<Option<RateForwarder>>,
    early_log: RateLimitedWarning,
}

pub(crate) type RateForwarder = Box<dyn Fn(Command, &[f64]) + Send>;

impl RateTargets {
    fn new() -> Self {
        RateTargets {
            forwarder: Mutex::default(),
            early_log: RateLimitedWarning::new(FAILURE_LOG_INTERVAL),
        }
    }

    fn receive(&self, command: Command, target: &[f64]) {
        if let Some(forward) = self.forwarder.lock().as_ref() {
            return forward(command, target);
        }
        if let Some(suppressed) = self.early_log.permit(Instant::now()) {
            tracing::error!(
                "::Target refused::{command}: the robot is not initialized yet (waiting for \
                 Gazebo); the target is dropped.{}",
                suppressed_note(suppressed)
            );
        }
    }

    /// Sets (or with `None` removes) where targets go while the loop serves the robot.
    pub fn forward_on_arrival(&self, forwarder: Option<RateForwarder>) {
        *self.forwarder.lock() = forwarder;
    }
}

/// QoS of every topic of the surface: KeepLast(1), reliable, volatile (rclcpp's defaults with
/// depth 1, as the original created them).
fn depth_one(topic: &str) -> PrimitiveOptions<'_> {
    topic.keep_last(1).reliable().volatile()
}

/// The publishers, the subscriptions that must stay alive, and the target mailbox.
pub(crate) struct RobotDriverServer {
    pub joint_states: Publisher<JointState>,
    /// `get/joint_positions_min` and `…_max`.
    pub joint_limits: (
        Publisher<RmwFloat64MultiArray>,
        Publisher<RmwFloat64MultiArray>,
    ),
    pub targets: Arc<TargetMailbox>,
    pub rate_targets: Arc<RateTargets>,
    _home_states: Publisher<RmwInt32MultiArray>,
    _target_joint_positions: ListenerSubscription<Float64MultiArray>,
    _target_joint_velocities: ListenerSubscription<Float64MultiArray>,
    _target_joint_forces: ListenerSubscription<Float64MultiArray>,
    _homing_signal: ListenerSubscription<Int32MultiArray>,
    _clear_positions: ListenerSubscription<Int32MultiArray>,
    _exclusivity_check: Timer,
}

impl RobotDriverServer {
    /// Creates every topic under `<prefix>/`. Logs the original's
    /// `::Initializing RobotDriverServer with prefix <prefix>`.
    pub fn new(
        node: &Node,
        prefix: &str,
        counters: Arc<RobotCounters>,
    ) -> Result<Self, BridgeError> {
        tracing::info!("::Initializing RobotDriverServer with prefix {prefix}");
        let topic = |suffix: &str| format!("{prefix}/{suffix}");
        let targets = Arc::new(TargetMailbox::new(counters));

        let mailbox = targets.clone();
        let target_joint_positions = subscribe_targets(
            node,
            &topic("set/target_joint_positions"),
            move |values, info| mailbox.receive(values, info),
        )?;
        let rate_targets = Arc::new(RateTargets::new());
        let rate_subscription = |suffix: &str, command: Command| {
            let rates = rate_targets.clone();
            let mailbox = targets.clone();
            subscribe_targets(node, &topic(suffix), move |values, info| {
                mailbox.count_reader_gap(info.publisher_gid, info.publication_sequence_number);
                rates.receive(command, &values)
            })
        };
        let target_joint_velocities =
            rate_subscription("set/target_joint_velocities", Command::Velocities)?;
        let target_joint_forces = rate_subscription("set/target_joint_forces", Command::Forces)?;
        let homing_signal = subscribe(
            node,
            &topic("set/homing_signal"),
            ignored_once::<Int32MultiArray>(
                "set/homing_signal",
                "homing is not supported by RobotDriverGazebo",
            ),
        )?;
        let clear_positions = subscribe(
            node,
            &topic("set/clear_positions"),
            ignored_once::<Int32MultiArray>(
                "set/clear_positions",
                "clearing positions is not supported by RobotDriverGazebo",
            ),
        )?;

        let set_topics = [
            target_joint_positions.topic_name().to_owned(),
            target_joint_velocities.topic_name().to_owned(),
            target_joint_forces.topic_name().to_owned(),
            homing_signal.topic_name().to_owned(),
            clear_positions.topic_name().to_owned(),
        ];
        let exclusivity_check = node
            .create_timer_repeating(
                EXCLUSIVITY_CHECK_PERIOD,
                exclusivity_check(Arc::downgrade(node), set_topics),
            )
            .map_err(|source| BridgeError::Topic {
                kind: "exclusivity check timer",
                topic: topic("set/*"),
                source,
            })?;

        Ok(RobotDriverServer {
            joint_states: advertise(node, &topic("get/joint_states"))?,
            joint_limits: (
                advertise(node, &topic("get/joint_positions_min"))?,
                advertise(node, &topic("get/joint_positions_max"))?,
            ),
            _home_states: advertise(node, &topic("get/home_states"))?,
            targets,
            rate_targets,
            _target_joint_positions: target_joint_positions,
            _target_joint_velocities: target_joint_velocities,
            _target_joint_forces: target_joint_forces,
            _homing_signal: homing_signal,
            _clear_positions: clear_positions,
            _exclusivity_check: exclusivity_check,
        })
    }
}

fn advertise<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
) -> Result<Publisher<T>, BridgeError> {
    node.create_publisher::<T>(depth_one(topic))
        .map_err(|source| BridgeError::Topic {
            kind: "publisher",
            topic: topic.to_string(),
            source,
        })
}

/// A `set/*` subscription of `node` with the surface's QoS (KeepLast(1), reliable, volatile),
/// `callback` run on the DDS listener thread for each message.
pub(crate) fn subscribe<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
    callback: impl FnMut(T, TakenInfo<'_>) + Send + 'static,
) -> Result<ListenerSubscription<T>, BridgeError> {
    ListenerSubscription::new(node, topic, 1, callback).map_err(|source| {
        BridgeError::Subscription {
            topic: topic.to_string(),
            source,
        }
    })
}

/// A `set/*` subscription whose `Float64MultiArray`s are taken as CDR and read by
/// [`read_float64_multi_array`] (no C message allocated per target): `callback` gets the
/// values. A message that cannot be read is dropped with an error naming the topic, at most
/// once per [`FAILURE_LOG_INTERVAL`] with the count held back.
fn subscribe_targets(
    node: &Node,
    topic: &str,
    mut callback: impl FnMut(Vec<f64>, TakenInfo<'_>) + Send + 'static,
) -> Result<ListenerSubscription<Float64MultiArray>, BridgeError> {
    let name = topic.to_owned();
    let mut log = RateLimit::new(FAILURE_LOG_INTERVAL);
    ListenerSubscription::new_serialized(node, topic, 1, move |bytes, info| {
        match read_float64_multi_array(bytes) {
            Ok(values) => callback(values, info),
            Err(error) => {
                if let Some(suppressed) = log.permit(Instant::now()) {
                    tracing::error!(
                        "::{name}: a message that is not a readable Float64MultiArray was \
                         dropped ({error}).{}",
                        suppressed_note(suppressed)
                    );
                }
            }
        }
    })
    .map_err(|source| BridgeError::Subscription {
        topic: topic.to_string(),
        source,
    })
}

/// A callback that accepts messages of an unsupported mode and says so once.
fn ignored_once<T>(
    topic: &'static str,
    why: &'static str,
) -> impl FnMut(T, TakenInfo<'_>) + Send + 'static {
    let logged = AtomicBool::new(false);
    move |_: T, _: TakenInfo<'_>| {
        if !logged.swap(true, Ordering::Relaxed) {
            tracing::warn!("::{topic}: {why}; messages are accepted and ignored (logged once).");
        }
    }
}

/// Logs when a `set/*` topic gets a second publisher, and when it is back to one. The
/// original threw from the callback and so ended the driver; a second controller is a
/// mistake worth a warning, not a reason to stop the robot.
fn exclusivity_check(node: Weak<NodeState>, topics: [String; 5]) -> impl FnMut() + Send {
    let mut crowded = [false; 5];
    move || {
        let Some(node) = node.upgrade() else {
            return;
        };
        for (topic, crowded) in topics.iter().zip(crowded.iter_mut()) {
            let Ok(publishers) = node.count_publishers(topic) else {
                continue;
            };
            if publishers > 1 && !*crowded {
                tracing::warn!(
                    "::{topic} has {publishers} publishers; messages from all of them are \
                     applied, the latest wins. Only one controller should command a robot."
                );
            } else if publishers <= 1 && *crowded {
                tracing::info!("::{topic} has a single publisher again.");
            }
            *crowded = publishers > 1;
        }
    }
}
