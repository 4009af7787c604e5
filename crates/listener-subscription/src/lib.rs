//! A ROS 2 subscription whose messages are taken on the middleware's listener thread.
//!
//! An rclrs subscription is served by an executor: the DDS listener thread that received
//! the sample wakes a wait-set thread, which takes it and runs the callback. On a small
//! machine that hand-off is most of what a message costs (about 130 µs of a core per target
//! at 100 Hz in `scripts/bench`). A [`ListenerSubscription`] registers rcl's
//! "on new message" callback instead and takes the message in it, on the thread that
//! received it: one wake-up per message, the one the sample itself causes. The callback
//! must therefore be short and must not block (store, forward, count). A handler that reads a
//! few fields of a large message can take it serialized ([`ListenerSubscription::new_serialized`]):
//! its CDR bytes in a reused buffer, without the C message's allocation of every string and
//! sequence, and read them with [`cdr::CdrReader`].
//!
//! The subscription is an rcl subscription of the rclrs node it is created for, so the ROS
//! graph shows it on that node like any other. rclrs keeps a node's rcl handle private, so
//! this crate learns it when rclrs creates the node: the binary is linked with
//! `--wrap=rcl_node_init`/`rcl_node_fini` (`ros_link::emit_listener_subscription_link_args`),
//! which route those calls through [`node_handles`]. A process not linked that way gets
//! [`Error::NodeHandleUnknown`], never a wrong handle.

pub mod cdr;
mod ffi;
mod node_handles;
mod subscription;

pub use subscription::{Error, ListenerSubscription, TakenInfo};
