//! Small types every layer shares: what a subscriber is told about a message, what is known
//! of a topic's publishers and subscribers, the node's counters, and a subscription as stored.
//! They depend on nothing else of the crate, so the data path below and the discovery above
//! both use them without depending on each other.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Where a received message came from.
#[derive(Clone, Debug)]
pub struct MessageInfo {
    /// Topic name as the user sees it (without partition), e.g. `/x`.
    pub topic: String,
    /// Full type name from the wire, e.g. `gz.msgs.Double`.
    pub type_name: String,
    pub partition: String,
    /// The sending publisher's `tcp://host:port` address.
    pub publisher_address: String,
    /// Messages on this topic from this publisher that arrived in the same read before this
    /// one, superseded by it: a [`Delivery::Latest`](crate::Delivery) subscription never got
    /// them (an `Every` subscription got each of them before this one). Counting them keeps a
    /// Latest subscriber's tally of what the publisher sent whole.
    pub superseded: u64,
}

/// What is known about one publisher of a topic ([`Node::topic_info`](crate::Node::topic_info)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublisherInfo {
    /// The `tcp://host:port` address of its PUB socket.
    pub address: String,
    /// Advertised full type name.
    pub type_name: String,
    pub process_uuid: String,
    pub node_uuid: String,
    /// True for a publisher of this node.
    pub local: bool,
}

/// What is known about one subscriber of a topic ([`Node::topic_subscribers`](crate::Node::topic_subscribers)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriberInfo {
    /// The subscribing node's PUB address (gz-transport's way to name a node).
    pub address: String,
    /// Subscribed full type name; `google.protobuf.Message` when any type is accepted.
    pub type_name: String,
    pub process_uuid: String,
    pub node_uuid: String,
    /// True for a subscription of this node.
    pub local: bool,
}

/// Counters of a node since it started. Bad incoming data is dropped and counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Valid discovery datagrams from other participants (any partition).
    pub discovery_received: u64,
    /// Discovery datagrams dropped: malformed, wrong wire version, unknown type or scope.
    pub discovery_dropped: u64,
    /// Data messages received on a subscribed topic.
    pub messages_received: u64,
    /// Messages a [`Delivery::Latest`] subscription skipped: a newer one on the same topic came
    /// in the same read.
    pub messages_superseded: u64,
    /// Data messages dropped because their frames were malformed.
    pub messages_dropped: u64,
    /// Deliveries skipped because the wire type differs from a typed subscription's type.
    pub type_mismatches: u64,
    /// Payloads that did not decode as the subscribed type.
    pub decode_errors: u64,
    /// Callbacks that panicked (the panic is caught; the transport keeps running).
    pub callback_panics: u64,
    pub messages_published: u64,
    /// Messages not sent to a subscriber whose queue was full (its high-water mark).
    pub messages_not_sent: u64,
    /// Peers forgotten after [`SILENCE_INTERVAL`](crate::Node::SILENCE_INTERVAL) without a datagram.
    pub peers_expired: u64,
    /// Remote subscribers that connected to one of this node's topics (NEW_CONNECTION from a
    /// subscriber not yet known): a restarted simulator shows up here.
    pub subscribers_connected: u64,
    /// Connections refused for their security (PLAIN credentials, or another mechanism):
    /// subscribers we refused, and publishers that refused us.
    pub connections_refused: u64,
}

/// A subscription callback as stored: gets the raw payload, returns false if the payload could
/// not be decoded into the subscriber's type (counted by the receive thread).
pub(crate) type Callback = Box<dyn FnMut(&[u8], &MessageInfo) -> bool + Send>;

/// One callback subscribed to a topic.
#[derive(Clone)]
pub(crate) struct SubEntry {
    pub id: u64,
    /// `None` accepts any type (raw subscription).
    pub type_name: Option<String>,
    pub delivery: Delivery,
    pub callback: Arc<Mutex<Callback>>,
}

/// Which of a topic's messages a subscription's callback gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// Every message, in order.
    #[default]
    Every,
    /// Of the messages on the topic that one read from a publisher's connection brought, only
    /// the newest: older ones queued behind it are skipped (and counted in
    /// [`TransportStats::messages_superseded`](crate::TransportStats)). Nothing is skipped while
    /// messages arrive apart and the receive thread keeps up (each read then brings one message
    /// per topic); when it was held back, it catches up at once instead of working through the
    /// backlog, and of a burst the publisher sent at once only the newest is taken — for a
    /// subscriber that wants the current state, not every state.
    Latest,
}

impl SubEntry {
    pub fn accepts(&self, type_name: &str) -> bool {
        self.type_name.as_deref().is_none_or(|t| t == type_name)
    }
}

/// Counters of everything that happened; read through [`TransportStats`].
#[derive(Default)]
pub(crate) struct Counters {
    pub discovery_received: AtomicU64,
    pub discovery_dropped: AtomicU64,
    pub messages_received: AtomicU64,
    pub messages_superseded: AtomicU64,
    pub messages_dropped: AtomicU64,
    pub type_mismatches: AtomicU64,
    pub decode_errors: AtomicU64,
    pub callback_panics: AtomicU64,
    pub messages_published: AtomicU64,
    pub messages_not_sent: AtomicU64,
    pub peers_expired: AtomicU64,
    pub subscribers_connected: AtomicU64,
    /// Connections refused for their security, either way (see [`TransportStats`]).
    pub connections_refused: AtomicU64,
    /// Subscriptions that reached our socket, to any topic: while unchanged, no topic's
    /// count (`Core::subscriptions`) changed.
    pub subscriptions_reached: AtomicU64,
}

pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    /// A snapshot of every counter.
    pub fn stats(&self) -> TransportStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TransportStats {
            discovery_received: get(&self.discovery_received),
            discovery_dropped: get(&self.discovery_dropped),
            messages_received: get(&self.messages_received),
            messages_superseded: get(&self.messages_superseded),
            messages_dropped: get(&self.messages_dropped),
            type_mismatches: get(&self.type_mismatches),
            decode_errors: get(&self.decode_errors),
            callback_panics: get(&self.callback_panics),
            messages_published: get(&self.messages_published),
            messages_not_sent: get(&self.messages_not_sent),
            peers_expired: get(&self.peers_expired),
            subscribers_connected: get(&self.subscribers_connected),
            connections_refused: get(&self.connections_refused),
        }
    }
}
