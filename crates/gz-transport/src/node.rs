//! Public node API. (Contract fixed first so dependent crates can be written against it.)

use std::marker::PhantomData;
use std::time::Duration;

use crate::msgs::{GzMessage, MsgsPrefix};
use crate::Error;

/// Options of a [`Node`]; every `None` falls back to the environment as gz-transport does.
#[derive(Clone, Debug, Default)]
pub struct NodeOptions {
    /// Partition; `None` → `GZ_PARTITION`, else `IGN_PARTITION`, else `hostname:username`.
    pub partition: Option<String>,
    /// Namespace prepended to relative topic names.
    pub namespace: Option<String>,
    /// Type-name prefix used for typed advertise/subscribe.
    pub msgs_prefix: MsgsPrefix,
}

/// Where a received message came from.
#[derive(Clone, Debug)]
pub struct MessageInfo {
    /// Topic name as the user sees it (without partition), e.g. `/x`.
    pub topic: String,
    /// Full type name from the wire, e.g. `gz.msgs.Double`.
    pub type_name: String,
    pub partition: String,
    /// The sending publisher's ZeroMQ address.
    pub publisher_address: String,
}

/// A gz-transport node: one discovery participant, one ZeroMQ context. Cheap to clone
/// (shared handle); the transport stops when the last clone and every publisher and
/// subscription made from it are dropped (sending BYE).
#[derive(Clone)]
pub struct Node {
    _private: (),
}

impl Node {
    /// A node configured from the environment (`GZ_*`, else `IGN_*`).
    pub fn new() -> Result<Node, Error> {
        Node::with_options(NodeOptions::default())
    }

    pub fn with_options(_options: NodeOptions) -> Result<Node, Error> {
        todo!()
    }

    pub fn partition(&self) -> &str {
        todo!()
    }

    pub fn msgs_prefix(&self) -> MsgsPrefix {
        todo!()
    }

    /// Advertise `topic` with type `prefix + M::SHORT_NAME`.
    pub fn advertise<M: GzMessage>(&self, _topic: &str) -> Result<Publisher<M>, Error> {
        todo!()
    }

    /// Advertise `topic` with an explicit full type name; payloads are sent as given.
    pub fn advertise_raw(&self, _topic: &str, _type_name: &str) -> Result<RawPublisher, Error> {
        todo!()
    }

    /// Subscribe with a type check: messages whose wire type name is not
    /// `prefix + M::SHORT_NAME` are dropped (and counted), as C++ typed subscribers do.
    /// The callback runs on the transport's receive thread.
    pub fn subscribe<M, F>(&self, _topic: &str, _callback: F) -> Result<Subscription, Error>
    where
        M: GzMessage,
        F: FnMut(M, &MessageInfo) + Send + 'static,
    {
        todo!()
    }

    /// Subscribe to any type; the callback gets the raw protobuf bytes.
    pub fn subscribe_raw<F>(&self, _topic: &str, _callback: F) -> Result<Subscription, Error>
    where
        F: FnMut(&[u8], &MessageInfo) + Send + 'static,
    {
        todo!()
    }

    /// Remove every subscription of this node on `topic`.
    pub fn unsubscribe(&self, _topic: &str) -> Result<(), Error> {
        todo!()
    }

    /// Topics with at least one known publisher (ours or remote) in this partition, sorted.
    pub fn topic_list(&self) -> Vec<String> {
        todo!()
    }

    /// Block until a remote publisher of `topic` is known and connected, or `timeout`.
    pub fn wait_for_publishers(&self, _topic: &str, _timeout: Duration) -> bool {
        todo!()
    }
}

/// A typed publisher. Dropping it unadvertises the topic.
pub struct Publisher<M: GzMessage> {
    raw: RawPublisher,
    _type: PhantomData<fn(M)>,
}

impl<M: GzMessage> Publisher<M> {
    pub fn publish(&self, msg: &M) -> Result<(), Error> {
        self.raw.publish_raw(&msg.encode_to_vec())
    }
    pub fn topic(&self) -> &str {
        self.raw.topic()
    }
    /// True when at least one remote subscriber is connected (sent NEW_CONNECTION).
    pub fn has_subscribers(&self) -> bool {
        self.raw.has_subscribers()
    }
    pub fn wait_for_subscribers(&self, timeout: Duration) -> bool {
        self.raw.wait_for_subscribers(timeout)
    }
}

/// An untyped publisher.
pub struct RawPublisher {
    _private: (),
}

impl RawPublisher {
    pub fn publish_raw(&self, _payload: &[u8]) -> Result<(), Error> {
        todo!()
    }
    pub fn topic(&self) -> &str {
        todo!()
    }
    pub fn type_name(&self) -> &str {
        todo!()
    }
    pub fn has_subscribers(&self) -> bool {
        todo!()
    }
    pub fn wait_for_subscribers(&self, _timeout: Duration) -> bool {
        todo!()
    }
}

/// A live subscription; dropping it unsubscribes this callback.
pub struct Subscription {
    _private: (),
}
