//! Pure-Rust gz-transport: talks to Gazebo (Harmonic, `gz.msgs.*`) and Ignition Fortress
//! (`ignition.msgs.*`) transport peers over the real wire protocol, version 10:
//! UDP multicast discovery (239.255.0.7:10317) and ZeroMQ PUB/SUB with protobuf payloads.
//!
//! ```no_run
//! use gz_transport::{msgs, Node};
//! let node = Node::new()?;
//! let cmd = node.advertise::<msgs::Double>("/model/ur3e/joint/elbow_joint/0/cmd_pos")?;
//! let _sub = node.subscribe("/world/w/model/ur3e/joint_state", |m: msgs::Model, _info: &gz_transport::MessageInfo| {
//!     println!("{} joints", m.joint.len());
//! })?;
//! cmd.publish(&msgs::Double { header: None, data: 0.5 })?;
//! # Ok::<(), gz_transport::Error>(())
//! ```
//!
//! Callbacks run on the transport's own receive thread, never on a caller's thread, and never
//! need Python's GIL. A subscription made before any publisher exists waits quietly; publishers
//! that appear later, or restart, are connected to.

mod config;
mod core;
mod error;
pub mod msgs;
mod names;
mod net;
mod node;
pub mod text;
mod threads;
mod wire;

#[cfg(test)]
mod peer_tests;

pub use error::Error;
pub use msgs::{GzMessage, MsgsPrefix};
pub use node::{
    MessageInfo, Node, NodeOptions, Publisher, PublisherInfo, RawPublisher, Subscription,
    TransportStats,
};
