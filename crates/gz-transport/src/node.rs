//! Public node API: [`Node`], its publishers and subscriptions.

use std::marker::PhantomData;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::{Config, NodeOptions};
use crate::discovery::Core;
use crate::io::{self, DataPath, Outbox};
use crate::msgs::{GzMessage, MsgsPrefix};
use crate::net::DiscoverySockets;
use crate::service::{Handler, ServiceError, ServiceInfo, ServiceRuntime, ServiceStats, Services};
use crate::threads::wake_pair;
use crate::types::{
    Callback, Delivery, MessageInfo, PublisherInfo, SubscriberInfo, TransportStats,
};
use crate::Error;

/// How long a stopping node may take to write what its subscribers' sockets still queue.
const PUB_LINGER: Duration = Duration::from_millis(200);

/// A gz-transport node: one discovery participant, one listening socket. Cheap to clone
/// (shared handle); the transport stops when the last clone and every publisher and
/// subscription made from it are dropped (sending BYE).
#[derive(Clone)]
pub struct Node {
    handle: Arc<NodeHandle>,
}

/// Owns the threads; dropping the last reference says BYE and stops them.
struct NodeHandle {
    core: Arc<Core>,
    threads: Vec<JoinHandle<()>>,
    /// The service side, started by the first service call of this node.
    services: parking_lot::Mutex<Option<Arc<ServiceRuntime>>>,
}

impl Drop for NodeHandle {
    fn drop(&mut self) {
        self.services.lock().take();
        self.core.bye();
        self.core.stop();
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // The last handle may be dropped inside a callback, on the receive thread itself.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

impl Node {
    /// A node configured from the environment (`GZ_*`, else `IGN_*`).
    pub fn new() -> Result<Node, Error> {
        Node::with_options(NodeOptions::default())
    }

    /// A node with explicit options; unset options fall back to the environment.
    ///
    /// # Errors
    /// Invalid partition or namespace, an invalid `GZ_*`/`IGN_*` variable, or sockets that
    /// cannot be opened (e.g. `GZ_IP` is not an address of this host).
    pub fn with_options(options: NodeOptions) -> Result<Node, Error> {
        Node::with_config(Config::resolve(&options)?)
    }

    /// A node from a resolved configuration (tests use it to give a node a discovery port of
    /// its own without touching the process environment).
    pub(crate) fn with_config(cfg: Config) -> Result<Node, Error> {
        let (outbox, address) = Outbox::bind(cfg.host_ip, usize::try_from(cfg.sndhwm).unwrap_or(0))
            .map_err(|source| Error::Bind {
                endpoint: format!("tcp://{}:*", cfg.host_ip),
                source,
            })?;

        let process_uuid = uuid::Uuid::new_v4().to_string();
        let node_uuid = uuid::Uuid::new_v4().to_string();

        let disc =
            DiscoverySockets::open_polled(cfg.multicast_group, cfg.msg_port, &cfg.interfaces)?;
        let (wake_tx, wake_rx) = wake_pair()?;
        let (io_wake_tx, io_wake_rx) = wake_pair()?;

        tracing::debug!(partition = %cfg.partition, %address, %process_uuid, "gz-transport node started");
        let data = Arc::new(DataPath::new(
            cfg.credentials.clone(),
            cfg.partition.clone(),
            outbox,
            io_wake_tx,
        ));
        let core = Arc::new(Core::new(
            cfg,
            process_uuid,
            node_uuid,
            address,
            disc,
            data,
            wake_tx,
        ));
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name.to_owned()).spawn(f)
        };
        let c = core.clone();
        let receive = spawn(
            "gz-receive",
            Box::new(move || {
                let data = c.data.clone();
                io::receive_loop(data, io_wake_rx, PUB_LINGER, || c.subscriptions_changed())
            }),
        )?;
        let c = core.clone();
        let discovery = match spawn("gz-discovery", Box::new(move || c.discovery_loop(wake_rx))) {
            Ok(t) => t,
            Err(e) => {
                core.stop();
                let _ = receive.join();
                return Err(e.into());
            }
        };
        Ok(Node {
            handle: Arc::new(NodeHandle {
                core,
                threads: vec![receive, discovery],
                services: parking_lot::Mutex::new(None),
            }),
        })
    }

    /// How long a silent peer is remembered (gz-transport's silence interval).
    pub const SILENCE_INTERVAL: Duration = crate::threads::SILENCE_INTERVAL;

    pub(crate) fn core(&self) -> &Core {
        &self.handle.core
    }

    fn fqn(&self, topic: &str) -> Result<(String, String), Error> {
        let topic = crate::names::resolve_topic(&self.core().cfg.namespace, topic)?;
        let fqn = self.core().fqn(&topic);
        Ok((topic, fqn))
    }

    pub fn partition(&self) -> &str {
        &self.core().cfg.partition
    }

    pub fn msgs_prefix(&self) -> MsgsPrefix {
        self.core().cfg.msgs_prefix
    }

    /// The address this node's publishers send from, e.g. `tcp://127.0.0.1:40123`.
    pub fn address(&self) -> &str {
        &self.core().address
    }

    /// This node's discovery identity (a fresh UUID per node).
    pub fn process_uuid(&self) -> &str {
        &self.core().process_uuid
    }

    /// Advertise `topic` with type `prefix + M::SHORT_NAME`.
    pub fn advertise<M: GzMessage>(&self, topic: &str) -> Result<Publisher<M>, Error> {
        let type_name = self.msgs_prefix().type_name(M::SHORT_NAME);
        Ok(Publisher {
            raw: self.advertise_raw(topic, &type_name)?,
            _type: PhantomData,
        })
    }

    /// Advertise `topic` with an explicit full type name; payloads are sent as given.
    ///
    /// # Errors
    /// An invalid topic name, or the topic is already advertised by this node.
    pub fn advertise_raw(&self, topic: &str, type_name: &str) -> Result<RawPublisher, Error> {
        crate::names::check_type_name(type_name)?;
        let (topic, fqn) = self.fqn(topic)?;
        let id = self.core().advertise(&fqn, type_name)?;
        Ok(RawPublisher {
            handle: self.handle.clone(),
            topic,
            fqn,
            type_name: type_name.to_owned(),
            id,
        })
    }

    /// Subscribe with a type check: messages whose wire type name is not
    /// `prefix + M::SHORT_NAME` are dropped (and counted), as C++ typed subscribers do.
    /// The callback runs on the transport's receive thread.
    pub fn subscribe<M, F>(&self, topic: &str, callback: F) -> Result<Subscription, Error>
    where
        M: GzMessage,
        F: FnMut(M, &MessageInfo) + Send + 'static,
    {
        self.subscribe_with(topic, Delivery::Every, callback)
    }

    /// [`subscribe`](Self::subscribe) with a choice of which messages the callback gets
    /// ([`Delivery::Latest`]: the newest of each read, for a subscriber of states).
    pub fn subscribe_with<M, F>(
        &self,
        topic: &str,
        delivery: Delivery,
        mut callback: F,
    ) -> Result<Subscription, Error>
    where
        M: GzMessage,
        F: FnMut(M, &MessageInfo) + Send + 'static,
    {
        let type_name = self.msgs_prefix().type_name(M::SHORT_NAME);
        let decode: Callback = Box::new(move |bytes, info| match M::decode(bytes) {
            Ok(msg) => {
                callback(msg, info);
                true
            }
            Err(_) => false,
        });
        self.subscribe_inner(topic, Some(type_name), delivery, decode)
    }

    /// Subscribe to any type; the callback gets the raw protobuf bytes.
    pub fn subscribe_raw<F>(&self, topic: &str, mut callback: F) -> Result<Subscription, Error>
    where
        F: FnMut(&[u8], &MessageInfo) + Send + 'static,
    {
        self.subscribe_inner(
            topic,
            None,
            Delivery::Every,
            Box::new(move |bytes, info| {
                callback(bytes, info);
                true
            }),
        )
    }

    fn subscribe_inner(
        &self,
        topic: &str,
        type_name: Option<String>,
        delivery: Delivery,
        callback: Callback,
    ) -> Result<Subscription, Error> {
        let (_, fqn) = self.fqn(topic)?;
        let id = self.core().subscribe(&fqn, type_name, delivery, callback);
        Ok(Subscription {
            handle: self.handle.clone(),
            fqn,
            id,
        })
    }

    /// Remove every subscription of this node on `topic`.
    pub fn unsubscribe(&self, topic: &str) -> Result<(), Error> {
        let (_, fqn) = self.fqn(topic)?;
        self.core().unsubscribe(&fqn, None);
        Ok(())
    }

    /// Topics with at least one known publisher (ours or remote) in this partition, sorted.
    pub fn topic_list(&self) -> Vec<String> {
        self.core().topic_list()
    }

    /// The publishers known for `topic` (this node's first, if any).
    pub fn topic_info(&self, topic: &str) -> Result<Vec<PublisherInfo>, Error> {
        let (_, fqn) = self.fqn(topic)?;
        Ok(self.core().publishers_of(&fqn))
    }

    /// Ask every participant for its subscriptions (a SUBSCRIBERS_REQ datagram, which
    /// gz-transport 13+ (Harmonic and later) peers and this crate answer; Fortress peers
    /// ignore it). The answers
    /// arrive over the next milliseconds and show in [`topic_subscribers`](Self::topic_subscribers)
    /// and [`subscribed_topic_list`](Self::subscribed_topic_list).
    pub fn request_subscribers(&self) {
        self.core().request_subscribers();
    }

    /// Calls `done` about every 20 ms until it returns `true` (then returns `true`) or
    /// `deadline` passes (then `false`), with a [`request_subscribers`](Self::request_subscribers)
    /// first and every second after: one lost datagram costs a round, not the answers.
    pub fn watch_subscribers(&self, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
        const ASK_EVERY: Duration = Duration::from_secs(1);
        let mut next_ask = Instant::now();
        loop {
            let now = Instant::now();
            if now >= next_ask {
                self.request_subscribers();
                next_ask = now + ASK_EVERY;
            }
            if done() {
                return true;
            }
            if now >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20).min(deadline - now));
        }
    }

    /// The subscribers known for `topic`: this node's own first, then the remote ones that
    /// answered a [`request_subscribers`](Self::request_subscribers).
    pub fn topic_subscribers(&self, topic: &str) -> Result<Vec<SubscriberInfo>, Error> {
        let (_, fqn) = self.fqn(topic)?;
        Ok(self.core().subscriber_infos(&fqn))
    }

    /// Topics of this partition with a known subscriber (this node's or a remote one), sorted.
    pub fn subscribed_topic_list(&self) -> Vec<String> {
        self.core().subscribed_topic_list()
    }

    /// Block until a remote subscriber of `topic` has answered, or `timeout`; true if one has.
    pub fn wait_for_remote_subscribers(&self, topic: &str, timeout: Duration) -> bool {
        match self.fqn(topic) {
            Ok((_, fqn)) => self.core().wait_for_remote_subscriptions(&fqn, timeout),
            Err(_) => false,
        }
    }

    /// Block until a remote publisher of `topic` is known, or `timeout`; true if one is.
    /// If this node subscribes to the topic with a matching type, the connection to it has
    /// been requested by then; the receive thread completes it in the background (typically well under a
    /// millisecond on one host), so the very first message may still be missed.
    pub fn wait_for_publishers(&self, topic: &str, timeout: Duration) -> bool {
        match self.fqn(topic) {
            Ok((_, fqn)) => self.core().wait_for_publishers(&fqn, timeout),
            Err(_) => false,
        }
    }

    /// Publishes each `(publisher, payload)` as [`RawPublisher::publish_raw`] does, the
    /// messages to one subscriber together: one write per subscriber (the joints of one
    /// target reach a simulator in one segment). The publishers must be this node's.
    ///
    /// # Errors
    /// The node has shut down.
    pub fn publish_together(&self, messages: &[(&RawPublisher, &[u8])]) -> Result<(), Error> {
        let messages: Vec<(&str, &str, &[u8])> = messages
            .iter()
            .map(|(publisher, payload)| {
                (
                    publisher.fqn.as_str(),
                    publisher.type_name.as_str(),
                    *payload,
                )
            })
            .collect();
        self.core().publish(&messages)
    }

    /// How many subscriptions, to any topic, reached this node's socket so far. While it is
    /// unchanged no publisher's [`Publisher::subscriptions`] changed: one atomic load where
    /// asking every publisher scans every subscriber's filters for each.
    pub fn subscriptions_reached(&self) -> u64 {
        self.core().subscriptions_reached()
    }

    /// Counters of received, dropped and published traffic.
    pub fn stats(&self) -> TransportStats {
        self.core().stats()
    }

    // ---- services ----------------------------------------------------------------------------

    /// The service side, started on first use (discovery on the service port and two
    /// listening sockets): a node that never touches services pays nothing for them.
    fn services(&self) -> Result<Arc<Services>, Error> {
        let mut slot = self.handle.services.lock();
        if let Some(runtime) = &*slot {
            return Ok(runtime.services.clone());
        }
        let core = self.core();
        let runtime = ServiceRuntime::start(
            core.cfg.clone(),
            core.process_uuid.clone(),
            core.node_uuid.clone(),
        )?;
        let services = runtime.services.clone();
        *slot = Some(Arc::new(runtime));
        Ok(services)
    }

    /// Offer service `service`: each request is decoded as `Req` and given to `handler`, whose
    /// `Some(response)` is sent back; `None` tells the requester the call failed (so does a
    /// request that does not decode as `Req`). Dropping the returned handle withdraws it.
    pub fn advertise_service<Req, Rep, F>(
        &self,
        service: &str,
        mut handler: F,
    ) -> Result<ServiceResponder, Error>
    where
        Req: GzMessage,
        Rep: GzMessage,
        F: FnMut(Req) -> Option<Rep> + Send + 'static,
    {
        let prefix = self.msgs_prefix();
        let name = service.to_owned();
        let raw: Handler = Box::new(move |bytes: &[u8]| match Req::decode(bytes) {
            Ok(request) => handler(request).map(|r| r.encode_to_vec()),
            Err(e) => {
                tracing::warn!(service = %name, error = %e, "a request that is not a valid {} refused", Req::SHORT_NAME);
                None
            }
        });
        self.advertise_service_raw(
            service,
            &prefix.type_name(Req::SHORT_NAME),
            &prefix.type_name(Rep::SHORT_NAME),
            raw,
        )
    }

    /// [`advertise_service`](Self::advertise_service) on bytes, with full type names.
    pub fn advertise_service_raw(
        &self,
        service: &str,
        request_type: &str,
        response_type: &str,
        handler: Handler,
    ) -> Result<ServiceResponder, Error> {
        for t in [request_type, response_type] {
            crate::names::check_type_name(t)?;
        }
        let (name, fqn) = self.fqn(service)?;
        let services = self.services()?;
        let id = services.advertise(&fqn, request_type, response_type, handler)?;
        Ok(ServiceResponder {
            node: self.clone(),
            services,
            service: name,
            fqn,
            id,
        })
    }

    /// Call service `service` with `request` and wait for its response: at most `timeout` in
    /// all, for a responder to be discovered and to answer. Never hangs past `timeout`.
    pub fn request<Req: GzMessage, Rep: GzMessage>(
        &self,
        service: &str,
        request: &Req,
        timeout: Duration,
    ) -> Result<Rep, ServiceError> {
        let prefix = self.msgs_prefix();
        let response_type = prefix.type_name(Rep::SHORT_NAME);
        let bytes = self.request_raw(
            service,
            &prefix.type_name(Req::SHORT_NAME),
            &request.encode_to_vec(),
            &response_type,
            timeout,
        )?;
        Rep::decode(bytes.as_slice()).map_err(|e| ServiceError::Decode {
            service: service.to_owned(),
            type_name: response_type,
            reason: e.to_string(),
        })
    }

    /// [`request`](Self::request) on bytes, with full type names. A response type ending in
    /// `Empty` makes the call one-way: it returns once the request is sent.
    pub fn request_raw(
        &self,
        service: &str,
        request_type: &str,
        request: &[u8],
        response_type: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>, ServiceError> {
        for t in [request_type, response_type] {
            crate::names::check_type_name(t)?;
        }
        let (name, fqn) = self.fqn(service)?;
        self.services()?
            .request(&name, &fqn, request_type, request, response_type, timeout)
    }

    /// Services of this partition with a known responder, sorted. Listening starts at the
    /// first call: responders re-advertise every second, so a fresh node needs that long.
    pub fn service_list(&self) -> Result<Vec<String>, Error> {
        Ok(self.services()?.list())
    }

    /// The responders known for `service`.
    pub fn service_info(&self, service: &str) -> Result<Vec<ServiceInfo>, Error> {
        let (_, fqn) = self.fqn(service)?;
        Ok(self.services()?.info(&fqn))
    }

    /// Block until a responder of `service` in another node is known, or `timeout`.
    pub fn wait_for_service(&self, service: &str, timeout: Duration) -> Result<bool, Error> {
        let (_, fqn) = self.fqn(service)?;
        Ok(self.services()?.wait_for_responder(&fqn, timeout))
    }

    /// Counters of this node's service traffic (zero until services are first used).
    pub fn service_stats(&self) -> ServiceStats {
        self.handle
            .services
            .lock()
            .as_ref()
            .map(|r| r.services.stats())
            .unwrap_or_default()
    }
}

/// A service this node offers; dropping it withdraws the service (UNADVERTISE).
pub struct ServiceResponder {
    node: Node,
    services: Arc<Services>,
    service: String,
    fqn: String,
    id: u64,
}

impl ServiceResponder {
    /// The service name, e.g. `/world/w/control`.
    pub fn service(&self) -> &str {
        &self.service
    }
    /// The node offering it.
    pub fn node(&self) -> &Node {
        &self.node
    }
}

impl Drop for ServiceResponder {
    fn drop(&mut self) {
        self.services.unadvertise(&self.fqn, self.id);
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
    /// True when a message published now reaches a subscriber: one announced itself
    /// (NEW_CONNECTION) or a subscription of this node accepts the type, and its subscription
    /// filter has reached our socket.
    pub fn has_subscribers(&self) -> bool {
        self.raw.has_subscribers()
    }
    /// Block until [`has_subscribers`](Self::has_subscribers) or `timeout`; true if it holds.
    pub fn wait_for_subscribers(&self, timeout: Duration) -> bool {
        self.raw.wait_for_subscribers(timeout)
    }
    /// Number of remote subscribing nodes that announced themselves with NEW_CONNECTION.
    pub fn subscriber_count(&self) -> usize {
        self.raw.subscriber_count()
    }
    /// How many subscriptions to this topic have reached our socket so far: it changes when
    /// a subscriber (a restarted simulator, a second listener) can first be reached.
    pub fn subscriptions(&self) -> u64 {
        self.raw.subscriptions()
    }
    /// The untyped publisher underneath (e.g. to send pre-encoded payloads).
    pub fn raw(&self) -> &RawPublisher {
        &self.raw
    }
}

/// An untyped publisher. Dropping it unadvertises the topic.
pub struct RawPublisher {
    handle: Arc<NodeHandle>,
    topic: String,
    fqn: String,
    type_name: String,
    id: u64,
}

impl RawPublisher {
    /// Send one message. Never blocks: beyond the high-water mark a slow subscriber loses
    /// messages, as with gz-transport.
    pub fn publish_raw(&self, payload: &[u8]) -> Result<(), Error> {
        self.handle
            .core
            .publish(&[(&self.fqn, &self.type_name, payload)])
    }
    pub fn topic(&self) -> &str {
        &self.topic
    }
    pub fn type_name(&self) -> &str {
        &self.type_name
    }
    /// See [`Publisher::has_subscribers`].
    pub fn has_subscribers(&self) -> bool {
        self.handle.core.has_subscribers(&self.fqn)
    }
    /// Number of remote subscribing nodes that announced themselves with NEW_CONNECTION.
    pub fn subscriber_count(&self) -> usize {
        self.handle.core.remote_subscriber_count(&self.fqn)
    }
    /// Block until [`has_subscribers`](Self::has_subscribers) or `timeout`; true if it holds.
    pub fn wait_for_subscribers(&self, timeout: Duration) -> bool {
        self.handle.core.wait_for_subscribers(&self.fqn, timeout)
    }
    /// See [`Publisher::subscriptions`].
    pub fn subscriptions(&self) -> u64 {
        self.handle.core.subscriptions(&self.fqn)
    }
}

impl Drop for RawPublisher {
    fn drop(&mut self) {
        self.handle.core.unadvertise(&self.fqn, self.id);
    }
}

/// A live subscription; dropping it unsubscribes this callback.
pub struct Subscription {
    handle: Arc<NodeHandle>,
    fqn: String,
    id: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.handle.core.unsubscribe(&self.fqn, Some(self.id));
    }
}
