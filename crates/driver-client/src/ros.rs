//! The client's topics on a caller's node: the subscriptions that fill a [`ClientState`] and
//! the target publishers, with the sas topics' QoS (KeepLast(1), reliable, volatile). The
//! subscriptions are [`ListenerSubscription`]s: each message is taken into the state on the
//! DDS listener thread that received it, and no executor thread wakes for it.

use std::sync::Arc;

use listener_subscription::ListenerSubscription;
use rclrs::{IntoPrimitiveOptions, Node, Publisher, RclrsError};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::{Float64MultiArray, Int32MultiArray};
use sas_driver_contract::Command;

use crate::joint_state_cdr::{read_joint_state, JointStateArrays};
use crate::{ClientState, Topics};

/// A topic the node refused.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// rclrs refused a publisher (e.g. an invalid topic name).
    #[error("cannot create the publisher on {topic:?}: {source}")]
    Publisher {
        /// The topic.
        topic: String,
        /// rclrs' reason.
        source: RclrsError,
    },
    /// A subscription could not be created (e.g. an invalid topic name).
    #[error("cannot create the subscription on {topic:?}: {source}")]
    Subscription {
        /// The topic.
        topic: String,
        /// Why.
        source: listener_subscription::Error,
    },
}

/// A robot's `get/joint_states`, `get/joint_positions_min|max` and `get/home_states`
/// subscriptions; they feed their state until dropped.
pub struct Subscriptions {
    _joint_states: ListenerSubscription<JointState>,
    _joint_positions_min: ListenerSubscription<Float64MultiArray>,
    _joint_positions_max: ListenerSubscription<Float64MultiArray>,
    _home_states: ListenerSubscription<Int32MultiArray>,
}

impl Subscriptions {
    /// Subscribes `node` to `topics`' robot state, each message taken into `state` on the
    /// DDS listener thread.
    ///
    /// # Errors
    /// A subscription rcl refused (an invalid topic), or a binary linked without
    /// `ros_link::emit_listener_subscription_link_args`.
    pub fn new(node: &Node, topics: &Topics, state: &Arc<ClientState>) -> Result<Self, RosError> {
        // Taken as CDR and read without the C message's allocations (see joint_state_cdr).
        let (receiver, name) = (state.clone(), topics.joint_states.clone());
        let mut arrays = JointStateArrays::default();
        let joint_states = ListenerSubscription::<JointState>::new_serialized(
            node,
            &topics.joint_states,
            1,
            move |bytes, _| {
                let with_names = receiver.wants_joint_names();
                match read_joint_state(bytes, &mut arrays, with_names) {
                    Ok(message) => receiver.receive_joint_state(message, &name),
                    Err(error) => {
                        receiver.misfit(&name, &format!("an unreadable body ({error})"), None)
                    }
                }
            },
        )
        .map_err(|source| RosError::Subscription {
            topic: topics.joint_states.clone(),
            source,
        })?;
        let limits = |upper: bool| {
            let topic = topics.limits(upper);
            let (receiver, name) = (state.clone(), topic.to_owned());
            subscribe(node, topic, move |m: Float64MultiArray| {
                receiver.receive_limits(m.data.as_slice(), upper, &name)
            })
        };
        let joint_positions_min = limits(false)?;
        let joint_positions_max = limits(true)?;
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
}

/// A subscription with the sas topics' QoS, taken on the listener thread.
fn subscribe<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
    mut receive: impl FnMut(T) + Send + 'static,
) -> Result<ListenerSubscription<T>, RosError> {
    ListenerSubscription::new(node, topic, 1, move |message, _| receive(message)).map_err(
        |source| RosError::Subscription {
            topic: topic.to_string(),
            source,
        },
    )
}

/// A publisher on `topic` of `node` with the sas topics' QoS (KeepLast(1), reliable,
/// volatile).
///
/// # Errors
/// rclrs refused it (an invalid topic).
pub fn advertise<T: rosidl_runtime_rs::Message>(
    node: &Node,
    topic: &str,
) -> Result<Publisher<T>, RosError> {
    node.create_publisher::<T>(topic.keep_last(1).reliable().volatile())
        .map_err(|source| RosError::Publisher {
            topic: topic.to_string(),
            source,
        })
}

/// The robot's `set/target_joint_positions|velocities|forces` publishers.
pub struct TargetPublishers {
    positions: Publisher<Float64MultiArray>,
    velocities: Publisher<Float64MultiArray>,
    forces: Publisher<Float64MultiArray>,
}

impl TargetPublishers {
    /// Advertises the three target topics of `topics` on `node`.
    ///
    /// # Errors
    /// rclrs refused one (an invalid topic).
    pub fn new(node: &Node, topics: &Topics) -> Result<Self, RosError> {
        Ok(TargetPublishers {
            positions: advertise(node, &topics.target_joint_positions)?,
            velocities: advertise(node, &topics.target_joint_velocities)?,
            forces: advertise(node, &topics.target_joint_forces)?,
        })
    }

    /// The publisher of `command`'s targets.
    pub fn of(&self, command: Command) -> &Publisher<Float64MultiArray> {
        match command {
            Command::Positions => &self.positions,
            Command::Velocities => &self.velocities,
            Command::Forces => &self.forces,
        }
    }
}
