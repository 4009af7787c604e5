//! Pure-Rust gz-transport: talks to Gazebo (Harmonic, `gz.msgs.*`) and Ignition Fortress
//! (`ignition.msgs.*`) transport peers over the real wire protocol, version 10:
//! UDP multicast discovery (239.255.0.7:10317, services on :10318), PUB/SUB topics and
//! request/response services over ZMTP (ZeroMQ's wire protocol) with protobuf payloads.
//! It knows nothing of ROS or Python.
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
//!
//! # Design
//!
//! Each [`Node`] is its own discovery participant (own process and node UUID), so several
//! nodes in one process find each other over loopback multicast exactly as separate processes
//! do. A node runs two threads: *discovery* (UDP: handles datagrams as they arrive; every
//! second sends HEARTBEAT, re-ADVERTISEs its topics and re-SUBSCRIBEs topics nobody serves;
//! forgets peers silent for 3 s) and *receive* (owns the connections to publishers, which are not
//! thread-safe, and takes connect/subscribe commands over an inproc socket). All knowledge sits
//! in one state behind one mutex; after every change the node recomputes which publishers it
//! wants data from, and sends NEW_CONNECTION / END_CONNECTION and connect / disconnect for what
//! changed. C++ publishers only send to subscribers that announced themselves with
//! NEW_CONNECTION, so this step is what makes them talk to us. A SUBSCRIBERS_REQ (type 8,
//! gz-transport 13+, Harmonic) is answered with one SUBSCRIBERS_REP (type 9) per subscribed
//! topic and type; [`Node::request_subscribers`] asks, and the answers are kept as publishers
//! are (same partition and scope rules, forgotten with their process). Discovery types
//! beyond 9 are dropped and counted.
//!
//! Publishing locks the node's publisher socket and sends four frames; it never blocks (a slow
//! subscriber loses messages beyond the high-water mark, as with gz-transport), so a callback
//! may publish. The socket is an XPUB (a PUB to its peers) so that it reports the filters
//! subscribers set: a NEW_CONNECTION comes before the subscriber's connection is complete, and
//! [`Publisher::has_subscribers`] holds only once its filter arrived, so a message sent then
//! is not lost. Bad incoming datagrams and frames are dropped, counted in [`TransportStats`]
//! and logged at debug level; they never panic or stop the node.
//!
//! Services ([`Node::advertise_service`], [`Node::request`], [`Node::service_list`]) are the
//! `service` module's: a discovery of their own on the service port and blocking ROUTER
//! connections, started only when a node first uses them (see its module doc for the wire
//! format). A call never waits past its timeout; each failure is a [`ServiceError`] naming
//! the service and what went wrong.
//!
//! # Layers
//!
//! Each module uses only modules below it (and `error`, which every one may use); no circle:
//!
//! ```text
//! node                public Node, Publisher, Subscription, ServiceResponder
//! ├── service         services: own discovery (service::discovery), ROUTER links (service::link)
//! ├── discovery       topics: the UDP protocol, reconcile, publishing, queries
//! │   ├── threads     the discovery threads' loop (serve_discovery), shared with services
//! │   ├── registry    who offers and who wants what (plain data)
//! │   └── scope       partition, scope and address rules (topics and services)
//! ├── io              the data path: connections, handshakes, inbox/outbox, receive thread
//! │   ├── zmtp        ZMTP 3.0 framing, NULL and PLAIN mechanisms
//! │   └── offenders   rate-limited reports of bad peers
//! ├── config, names, net    environment and options, topic names, interfaces
//! └── types, wire, msgs     shared small types, discovery wire format, protobuf messages
//! ```
//!
//! # Environment
//!
//! Each variable is read under its Harmonic name first, then its Fortress name:
//! `GZ_PARTITION`/`IGN_PARTITION` (default `hostname:username`), `GZ_IP`/`IGN_IP` (the
//! interface to use and advertise; default: every multicast-capable interface, advertising the
//! first non-loopback one — never `0.0.0.0`), `GZ_DISCOVERY_MULTICAST_IP`,
//! `GZ_DISCOVERY_MSG_PORT`, `GZ_DISCOVERY_SRV_PORT`, `GZ_TRANSPORT_SNDHWM`, `GZ_TRANSPORT_RCVHWM` (and their `IGN_`
//! forms). An invalid value is an [`Error::InvalidEnv`] naming the variable.
//!
//! # Not supported
//!
//! Relays (`GZ_RELAY`), publisher throttling, and topic statistics
//! (`GZ_TRANSPORT_TOPIC_STATISTICS=1` peers speak wire version 110; their datagrams are
//! dropped and counted, as C++ peers without statistics do).

mod config;
mod discovery;
mod error;
mod io;
pub mod msgs;
mod names;
mod net;
mod node;
mod offenders;
mod proto;
mod registry;
mod scope;
mod service;
pub mod text;
mod threads;
mod types;
mod wire;
mod zmtp;

#[cfg(test)]
mod encoding_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod peer_tests;
#[cfg(test)]
mod test_support;

pub use crate::config::{Credentials, NodeOptions};
pub use crate::types::{Delivery, MessageInfo, PublisherInfo, SubscriberInfo, TransportStats};
pub use error::Error;
pub use msgs::{GzMessage, MsgsPrefix};
pub use node::{Node, Publisher, RawPublisher, ServiceResponder, Subscription};
pub use service::{ServiceError, ServiceInfo, ServiceStats};
