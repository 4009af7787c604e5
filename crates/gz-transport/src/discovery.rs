//! The shared heart of a node: its sockets, what it knows about the partition, and the
//! discovery logic that keeps data connections matching that knowledge.
//!
//! All knowledge lives in one [`State`] behind one mutex. Every change (a local call, a
//! discovery datagram, a tick) ends in [`Core::reconcile`], which derives from the state which
//! remote publishers we want data from and which publisher addresses the receive thread must be
//! connected to, and sends the NEW_CONNECTION/END_CONNECTION and connect/disconnect commands
//! for whatever changed. Lock order: `state` before `outbox` before `commands`.

use std::collections::HashSet;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::config::Config;
use crate::io::{Command, DataPath};
use crate::net::DiscoverySockets;
use crate::registry::{advertised_rate, LocalPub, RemotePub, RemoteSub, State};
use crate::scope::{self, NotOurs};
use crate::threads;
use crate::types::{
    bump, Callback, Delivery, PublisherInfo, SubEntry, SubscriberInfo, TransportStats,
};
use crate::wire::{
    self, DataMessage, DiscContents, Discovery, DiscoveryType, MessagePublisher, PubType,
    Publisher, Scope, Subscriber, GENERIC_MSG_TYPE,
};
use crate::Error;

/// Longest sleep of the topic discovery thread, so expiry is checked at least this often.
const MAX_DISCOVERY_WAIT: Duration = Duration::from_millis(250);

pub(crate) struct Core {
    pub cfg: Config,
    pub process_uuid: String,
    pub node_uuid: String,
    /// `@/<partition>@`, the wire prefix of every topic of our partition.
    pub prefix: String,
    /// Our PUB socket's address as advertised, e.g. `tcp://127.0.0.1:40123`.
    pub address: String,
    pub disc: DiscoverySockets,
    /// The data path this discovery drives: its connections follow the registry.
    pub data: Arc<DataPath>,
    state: Mutex<State>,
    changed: Condvar,
    shutdown: AtomicBool,
    wake: UnixStream,
}

impl Core {
    #[allow(clippy::too_many_arguments)] // plain constructor of the one shared struct
    pub fn new(
        cfg: Config,
        process_uuid: String,
        node_uuid: String,
        address: String,
        disc: DiscoverySockets,
        data: Arc<DataPath>,
        wake: UnixStream,
    ) -> Core {
        let prefix = crate::names::partition_prefix(&cfg.partition);
        Core {
            cfg,
            process_uuid,
            node_uuid,
            prefix,
            address,
            disc,
            data,
            state: Mutex::new(State {
                next_id: 1,
                ..State::default()
            }),
            changed: Condvar::new(),
            shutdown: AtomicBool::new(false),
            wake,
        }
    }

    /// The topic discovery thread: until [`stop`](Self::stop).
    pub fn discovery_loop(&self, wake: UnixStream) {
        threads::serve_discovery(
            &self.disc.recv,
            wake,
            MAX_DISCOVERY_WAIT,
            || self.is_shutting_down(),
            |now| self.tick(now),
            |now| self.expire(now),
            |datagram, from, now| self.handle_datagram(datagram, from, now),
        );
    }

    pub fn fqn(&self, topic: &str) -> String {
        format!("{}{}", self.prefix, topic)
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    // ---- sending ---------------------------------------------------------------------------

    fn send_discovery(&self, kind: DiscoveryType, contents: Option<DiscContents>) {
        let msg = Discovery::new(kind, &self.process_uuid, contents);
        match wire::encode_discovery(&msg) {
            Ok(datagram) => self.disc.send(&datagram),
            Err(e) => tracing::warn!(?kind, error = %e, "discovery message not sent"),
        }
    }

    /// A message publisher record naming this node (our process and node UUIDs) as
    /// gz-transport fills one: `address`, `ctrl` and the type depend on the message (see the
    /// callers), the rest is an unthrottled publisher of scope ALL unless `advertised` says
    /// otherwise.
    fn our_publisher_msg(
        &self,
        fqn: &str,
        address: &str,
        ctrl: &str,
        msg_type: &str,
        advertised: Option<(i32, Option<u64>)>,
    ) -> Publisher {
        let (scope, msgs_per_sec) = advertised.unwrap_or((Scope::All as i32, None));
        Publisher {
            topic: fqn.to_owned(),
            address: address.to_owned(),
            process_uuid: self.process_uuid.clone(),
            node_uuid: self.node_uuid.clone(),
            scope,
            pub_type: Some(PubType::MsgPub(MessagePublisher {
                ctrl: ctrl.to_owned(),
                msg_type: msg_type.to_owned(),
                throttled: msgs_per_sec.is_some(),
                msgs_per_sec: msgs_per_sec.unwrap_or(u64::MAX),
            })),
        }
    }

    /// ADVERTISE or UNADVERTISE of a topic of ours: gz-transport's `ctrl` there is "unused".
    fn advertise_msg(&self, kind: DiscoveryType, fqn: &str, lp: &LocalPub) {
        let p = self.our_publisher_msg(fqn, &self.address, "unused", &lp.type_name, None);
        self.send_discovery(kind, Some(DiscContents::Pub(p)));
    }

    /// NEW_CONNECTION to a remote publisher, as gz-transport sends it: the publisher's record
    /// as advertised (its address, type, scope and rate) with our process and node, and the
    /// publisher's process in `ctrl` (which publisher process it is for).
    fn new_connection_msg(&self, fqn: &str, rp: &RemotePub) {
        let advertised = Some((rp.scope, rp.msgs_per_sec));
        let p = self.our_publisher_msg(
            fqn,
            &rp.address,
            &rp.process_uuid,
            &rp.type_name,
            advertised,
        );
        self.send_discovery(DiscoveryType::NewConnection, Some(DiscContents::Pub(p)));
    }

    /// END_CONNECTION, as gz-transport sends it when a node unsubscribes: our own address,
    /// any type, and in `ctrl` the publisher process it is for, or nothing: every publisher
    /// process then forgets this node's subscription.
    fn end_connection_msg(&self, fqn: &str, publisher_process: &str) {
        let p = self.our_publisher_msg(
            fqn,
            &self.address,
            publisher_process,
            GENERIC_MSG_TYPE,
            None,
        );
        self.send_discovery(DiscoveryType::EndConnection, Some(DiscContents::Pub(p)));
    }

    // ---- local API -------------------------------------------------------------------------

    pub fn advertise(&self, fqn: &str, type_name: &str) -> Result<u64, Error> {
        let mut st = self.state.lock();
        if let Some(existing) = st.local.get(fqn) {
            return Err(Error::AlreadyAdvertised {
                topic: fqn.strip_prefix(&self.prefix).unwrap_or(fqn).to_owned(),
                existing: existing.type_name.clone(),
            });
        }
        let id = st.next_id;
        st.next_id += 1;
        let lp = LocalPub {
            id,
            type_name: type_name.to_owned(),
            remote_subs: HashSet::new(),
        };
        self.advertise_msg(DiscoveryType::Advertise, fqn, &lp);
        st.local.insert(fqn.to_owned(), lp);
        self.reconcile(&mut st);
        self.changed.notify_all();
        Ok(id)
    }

    pub fn unadvertise(&self, fqn: &str, id: u64) {
        let mut st = self.state.lock();
        if st.local.get(fqn).is_some_and(|lp| lp.id == id) {
            let lp = st.local.remove(fqn).expect("checked above");
            self.advertise_msg(DiscoveryType::Unadvertise, fqn, &lp);
            self.reconcile(&mut st);
            self.changed.notify_all();
        }
    }

    /// Sends each `(fqn, type name, payload)` to its subscribers; the messages to one
    /// subscriber go out together.
    pub fn publish(&self, messages: &[(&str, &str, &[u8])]) -> Result<(), Error> {
        if self.is_shutting_down() {
            return Err(Error::Closed);
        }
        let frames: Vec<[&[u8]; 4]> = messages
            .iter()
            .map(|&(topic, type_name, payload)| {
                DataMessage {
                    topic,
                    address: &self.address,
                    payload,
                    type_name,
                }
                .frames()
            })
            .collect();
        // Written to each subscriber's socket here, on the publishing thread; only what a
        // socket does not take is left to the receive thread. Beyond the high-water mark a
        // slow subscriber loses messages, as from gz-transport's (libzmq's) PUB.
        let published = self.data.outbox.lock().publish(&frames);
        if published.queued {
            self.data.command(Command::Flush);
        }
        self.data
            .counters
            .messages_not_sent
            .fetch_add(published.dropped as u64, Ordering::Relaxed);
        self.data
            .counters
            .messages_published
            .fetch_add(messages.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// The receive thread saw a subscriber subscribe, cancel or leave.
    pub fn subscriptions_changed(&self) {
        let _st = self.state.lock();
        self.changed.notify_all();
    }

    /// True when a subscriber of `fqn` announced itself (NEW_CONNECTION) or is a subscription
    /// of this node, and its subscription reached our socket: a message published now gets
    /// to it. The announcement alone is not enough: the subscriber connects and subscribes
    /// after it, and until its subscription arrives nothing sent reaches it.
    pub fn has_subscribers(&self, fqn: &str) -> bool {
        let st = self.state.lock();
        self.has_subscribers_locked(&st, fqn)
    }

    /// How many subscriptions to `fqn` reached our socket so far (see
    /// [`Outbox::subscriptions`]).
    pub fn subscriptions(&self, fqn: &str) -> u64 {
        self.data.outbox.lock().subscriptions(fqn)
    }

    /// How many subscriptions to any topic reached our socket so far: read without a lock,
    /// it tells whether [`subscriptions`](Self::subscriptions) of some topic may have changed.
    pub fn subscriptions_reached(&self) -> u64 {
        self.data
            .counters
            .subscriptions_reached
            .load(Ordering::Acquire)
    }

    fn has_subscribers_locked(&self, st: &State, fqn: &str) -> bool {
        let Some(lp) = st.local.get(fqn) else {
            return false;
        };
        let announced = !lp.remote_subs.is_empty()
            || st
                .subs
                .get(fqn)
                .is_some_and(|s| s.iter().any(|e| e.accepts(&lp.type_name)));
        announced && self.data.outbox.lock().has_subscriber(fqn)
    }

    pub fn remote_subscriber_count(&self, fqn: &str) -> usize {
        self.state
            .lock()
            .local
            .get(fqn)
            .map_or(0, |lp| lp.remote_subs.len())
    }

    pub fn wait_for_subscribers(&self, fqn: &str, timeout: Duration) -> bool {
        self.wait_until(timeout, |st| self.has_subscribers_locked(st, fqn))
    }

    pub fn subscribe(
        &self,
        fqn: &str,
        type_name: Option<String>,
        delivery: Delivery,
        callback: Callback,
    ) -> u64 {
        let mut st = self.state.lock();
        let id = st.next_id;
        st.next_id += 1;
        let entry = SubEntry {
            id,
            type_name,
            delivery,
            callback: Arc::new(Mutex::new(callback)),
        };
        let first = !st.subs.contains_key(fqn);
        let list = st.subs.entry(fqn.to_owned()).or_default();
        let mut new_list = Vec::clone(list);
        new_list.push(entry);
        *list = Arc::new(new_list);
        self.data.set_routes(st.subs.clone());
        if first {
            self.data.command(Command::Filter(fqn.to_owned()));
        }
        // Always ask: publishers answer SUBSCRIBE with ADVERTISE, so we learn about them now
        // instead of at their next heartbeat.
        self.send_discovery(
            DiscoveryType::Subscribe,
            Some(DiscContents::Sub(Subscriber {
                topic: fqn.to_owned(),
            })),
        );
        self.reconcile(&mut st);
        self.changed.notify_all();
        id
    }

    /// Remove subscription `id` on `fqn`, or every subscription on it when `id` is `None`.
    pub fn unsubscribe(&self, fqn: &str, id: Option<u64>) {
        let mut st = self.state.lock();
        let Some(list) = st.subs.get_mut(fqn) else {
            return;
        };
        let kept: Vec<SubEntry> = list
            .iter()
            .filter(|e| id.is_some_and(|id| e.id != id))
            .cloned()
            .collect();
        if kept.len() == list.len() {
            return;
        }
        let last = kept.is_empty();
        if last {
            st.subs.remove(fqn);
            self.data.command(Command::Unfilter(fqn.to_owned()));
        } else {
            *list = Arc::new(kept);
        }
        self.data.set_routes(st.subs.clone());
        self.reconcile(&mut st);
        if last {
            // As gz-transport does after the END_CONNECTION to each publisher process it
            // knows: one addressed to none, so publishers we never heard of forget us too.
            self.end_connection_msg(fqn, "");
        }
        self.changed.notify_all();
    }

    pub fn topic_list(&self) -> Vec<String> {
        let st = self.state.lock();
        crate::names::offered_in_partition(&self.prefix, &st.local, &st.remote)
    }

    pub fn publishers_of(&self, fqn: &str) -> Vec<PublisherInfo> {
        let st = self.state.lock();
        let mut out = Vec::new();
        if let Some(lp) = st.local.get(fqn) {
            out.push(PublisherInfo {
                address: self.address.clone(),
                type_name: lp.type_name.clone(),
                process_uuid: self.process_uuid.clone(),
                node_uuid: self.node_uuid.clone(),
                local: true,
            });
        }
        for rp in st.remote.get(fqn).into_iter().flatten() {
            out.push(PublisherInfo {
                address: rp.address.clone(),
                type_name: rp.type_name.clone(),
                process_uuid: rp.process_uuid.clone(),
                node_uuid: rp.node_uuid.clone(),
                local: false,
            });
        }
        out
    }

    pub fn wait_for_publishers(&self, fqn: &str, timeout: Duration) -> bool {
        self.wait_until(timeout, |st| {
            st.remote.get(fqn).is_some_and(|v| !v.is_empty())
        })
    }

    /// Ask every participant for its subscriptions (SUBSCRIBERS_REQ); the answers arrive as
    /// SUBSCRIBERS_REP datagrams and fill [`Core::subscriber_infos`]. gz-transport 13's
    /// request carries a publisher record naming only its process (scope ALL); so does ours.
    pub fn request_subscribers(&self) {
        let requester = Publisher {
            process_uuid: self.process_uuid.clone(),
            scope: Scope::All as i32,
            ..Publisher::default()
        };
        self.send_discovery(
            DiscoveryType::SubscribersReq,
            Some(DiscContents::Pub(requester)),
        );
    }

    /// The subscribers known for `fqn`: this node's own subscriptions first (one per
    /// subscribed type), then the remote ones that answered a SUBSCRIBERS_REQ.
    pub fn subscriber_infos(&self, fqn: &str) -> Vec<SubscriberInfo> {
        let st = self.state.lock();
        let mut out: Vec<SubscriberInfo> = st
            .local_subscribed_types(fqn)
            .into_iter()
            .map(|type_name| SubscriberInfo {
                address: self.address.clone(),
                type_name,
                process_uuid: self.process_uuid.clone(),
                node_uuid: self.node_uuid.clone(),
                local: true,
            })
            .collect();
        for rs in st.remote_subscriptions.get(fqn).into_iter().flatten() {
            out.push(SubscriberInfo {
                address: rs.address.clone(),
                type_name: rs.type_name.clone(),
                process_uuid: rs.process_uuid.clone(),
                node_uuid: rs.node_uuid.clone(),
                local: false,
            });
        }
        out
    }

    /// Topics of this partition with a known subscriber (ours or remote), sorted.
    pub fn subscribed_topic_list(&self) -> Vec<String> {
        let st = self.state.lock();
        crate::names::names_in_partition(
            &self.prefix,
            st.subs.keys().chain(st.remote_subscriptions.keys()),
        )
    }

    /// Block until a remote subscriber of `fqn` is known, or `timeout`; true if one is.
    pub fn wait_for_remote_subscriptions(&self, fqn: &str, timeout: Duration) -> bool {
        self.wait_until(timeout, |st| st.remote_subscriptions.contains_key(fqn))
    }

    /// Answer a SUBSCRIBERS_REQ: one SUBSCRIBERS_REP per subscribed topic and type, shaped
    /// as gz-transport 13 shapes it: our address, process and node, the subscribed type, and
    /// an empty `ctrl` (unlike ADVERTISE's "unused").
    fn answer_subscribers_req(&self, st: &State) {
        for fqn in st.subs.keys() {
            for type_name in st.local_subscribed_types(fqn) {
                let p = self.our_publisher_msg(fqn, &self.address, "", &type_name, None);
                self.send_discovery(DiscoveryType::SubscribersRep, Some(DiscContents::Pub(p)));
            }
        }
    }

    fn on_subscribers_rep(&self, st: &mut State, p: &Publisher) {
        let Some(mp) = p.msg_pub() else { return };
        let list = st.remote_subscriptions.entry(p.topic.clone()).or_default();
        let known = list.iter_mut().find(|rs| {
            rs.process_uuid == p.process_uuid
                && rs.node_uuid == p.node_uuid
                && rs.type_name == mp.msg_type
        });
        match known {
            Some(rs) => rs.address = p.address.clone(),
            None => list.push(RemoteSub {
                process_uuid: p.process_uuid.clone(),
                node_uuid: p.node_uuid.clone(),
                address: p.address.clone(),
                type_name: mp.msg_type.clone(),
            }),
        }
        self.changed.notify_all();
    }

    fn wait_until(&self, timeout: Duration, cond: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        loop {
            if cond(&st) {
                return true;
            }
            if self.is_shutting_down() || self.changed.wait_until(&mut st, deadline).timed_out() {
                return cond(&st);
            }
        }
    }

    // ---- discovery -------------------------------------------------------------------------

    /// Handle one datagram received by the discovery thread from `from`.
    pub fn handle_datagram(&self, datagram: &[u8], from: SocketAddr, now: Instant) {
        let msg = match wire::decode_discovery(datagram) {
            Ok(m) => m,
            Err(e) => {
                bump(&self.data.counters.discovery_dropped);
                let sender = format!("udp {from}");
                self.data
                    .offenders
                    .dropped(&sender, "a discovery datagram", &e);
                return;
            }
        };
        if msg.process_uuid == self.process_uuid {
            return; // our own datagram, looped back
        }
        bump(&self.data.counters.discovery_received);
        let mut st = self.state.lock();
        if let Some(seen) = st.peers.get_mut(&msg.process_uuid) {
            *seen = now;
        }
        match msg.kind() {
            DiscoveryType::Advertise => {
                if let Some(p) = self.topic_publisher(&msg) {
                    st.peers.insert(msg.process_uuid.clone(), now);
                    self.on_advertise(&mut st, p);
                }
            }
            DiscoveryType::Unadvertise => {
                if let Some(p) = self.topic_publisher(&msg) {
                    if let Some(list) = st.remote.get_mut(&p.topic) {
                        list.retain(|rp| {
                            !(rp.process_uuid == p.process_uuid && rp.node_uuid == p.node_uuid)
                        });
                        if list.is_empty() {
                            st.remote.remove(&p.topic);
                        }
                    }
                    self.reconcile(&mut st);
                    self.changed.notify_all();
                }
            }
            DiscoveryType::Subscribe => {
                if let Some(lp) = msg
                    .subscriber()
                    .and_then(|s| st.local.get(&s.topic).map(|lp| (s, lp)))
                {
                    self.advertise_msg(DiscoveryType::Advertise, &lp.0.topic, lp.1);
                }
            }
            DiscoveryType::NewConnection | DiscoveryType::EndConnection => {
                let Some(p) = msg.publisher() else {
                    return self.dropped("connection without publisher");
                };
                let Some(mp) = p.msg_pub() else { return };
                // NEW_CONNECTION names its publisher process; END_CONNECTION may name none,
                // meaning every publisher process (what gz-transport sends on unsubscribe).
                let for_every_publisher =
                    msg.kind() == DiscoveryType::EndConnection && mp.ctrl.is_empty();
                if mp.ctrl != self.process_uuid && !for_every_publisher {
                    return; // addressed to another publisher process
                }
                let Some(lp) = st.local.get_mut(&p.topic) else {
                    return;
                };
                let key = (p.process_uuid.clone(), p.node_uuid.clone());
                if msg.kind() == DiscoveryType::NewConnection {
                    if mp.msg_type != lp.type_name && mp.msg_type != GENERIC_MSG_TYPE {
                        tracing::debug!(topic = %p.topic, theirs = %mp.msg_type, ours = %lp.type_name,
                            "NEW_CONNECTION with another type ignored");
                        return;
                    }
                    if lp.remote_subs.insert(key) {
                        bump(&self.data.counters.subscribers_connected);
                    }
                    st.peers.insert(msg.process_uuid.clone(), now);
                } else {
                    lp.remote_subs.remove(&key);
                }
                self.changed.notify_all();
            }
            DiscoveryType::SubscribersReq => self.answer_subscribers_req(&st),
            DiscoveryType::SubscribersRep => {
                // Same partition and scope rules as an ADVERTISE; the answering process is
                // then tracked, so its subscriptions go with it (BYE or silence).
                if let Some(p) = self.topic_publisher(&msg) {
                    st.peers.insert(msg.process_uuid.clone(), now);
                    self.on_subscribers_rep(&mut st, p);
                }
            }
            DiscoveryType::Bye => {
                self.forget_process(&mut st, &msg.process_uuid);
            }
            DiscoveryType::Heartbeat => {}
            DiscoveryType::Uninitialized => self.dropped("unknown or uninitialized discovery type"),
        }
    }

    fn dropped(&self, why: &str) {
        bump(&self.data.counters.discovery_dropped);
        tracing::debug!(why, "discovery message dropped");
    }

    /// The topic publisher in an ADVERTISE/UNADVERTISE/SUBSCRIBERS_REP, if it concerns our
    /// partition and is visible to us under its scope.
    fn topic_publisher<'m>(&self, msg: &'m Discovery) -> Option<&'m Publisher> {
        let Some(p) = msg.publisher() else {
            self.dropped("advertisement without publisher");
            return None;
        };
        p.msg_pub()?; // a service publisher: not ours to track
        match scope::visible(p, &self.prefix, &self.cfg.interfaces) {
            Ok(()) => Some(p),
            Err(NotOurs::Elsewhere) => None,
            Err(NotOurs::BadAddress(why)) => {
                bump(&self.data.counters.discovery_dropped);
                let sender = format!("process {}", msg.process_uuid);
                let why = format!("publisher address {:?} {why}", p.address);
                self.data
                    .offenders
                    .dropped(&sender, "an advertisement", &why);
                None
            }
            Err(NotOurs::UnknownScope) => {
                self.dropped("unknown scope");
                None
            }
        }
    }

    fn on_advertise(&self, st: &mut State, p: &Publisher) {
        let Some(mp) = p.msg_pub() else { return };
        let list = st.remote.entry(p.topic.clone()).or_default();
        match list
            .iter_mut()
            .find(|rp| rp.process_uuid == p.process_uuid && rp.node_uuid == p.node_uuid)
        {
            Some(rp) if rp.address == p.address && rp.type_name == mp.msg_type => return,
            Some(rp) => {
                // Same node, new address or type: forget the old one, take the new one.
                rp.address = p.address.clone();
                rp.type_name = mp.msg_type.clone();
                rp.scope = p.scope;
                rp.msgs_per_sec = advertised_rate(mp);
                rp.wanted = false;
            }
            None => list.push(RemotePub {
                process_uuid: p.process_uuid.clone(),
                node_uuid: p.node_uuid.clone(),
                address: p.address.clone(),
                type_name: mp.msg_type.clone(),
                scope: p.scope,
                msgs_per_sec: advertised_rate(mp),
                wanted: false,
            }),
        }
        tracing::debug!(topic = %p.topic, address = %p.address, "publisher discovered");
        let wrong_type = st
            .subs
            .get(&p.topic)
            .is_some_and(|subs| !subs.iter().any(|e| e.accepts(&mp.msg_type)));
        if wrong_type {
            let why = format!(
                "it advertises {} as {}, which no subscription of ours takes; not connected",
                p.topic, mp.msg_type
            );
            self.data
                .offenders
                .dropped(&p.address, "an advertisement", &why);
        }
        self.reconcile(st);
        self.changed.notify_all();
    }

    fn forget_process(&self, st: &mut State, process_uuid: &str) {
        st.forget_process(process_uuid);
        self.reconcile(st);
        self.changed.notify_all();
    }

    /// Periodic work: heartbeat, re-advertise our topics (as C++ peers do, so late listeners
    /// like `gz topic -l` see them), re-subscribe topics nobody serves yet (so restarted
    /// publishers are found even if their ADVERTISE was lost), expire silent peers.
    pub fn tick(&self, now: Instant) {
        self.send_discovery(DiscoveryType::Heartbeat, None);
        let mut st = self.state.lock();
        for (fqn, lp) in &st.local {
            self.advertise_msg(DiscoveryType::Advertise, fqn, lp);
        }
        for fqn in st.subs.keys() {
            if !st.remote.contains_key(fqn) && !st.local.contains_key(fqn) {
                self.send_discovery(
                    DiscoveryType::Subscribe,
                    Some(DiscContents::Sub(Subscriber { topic: fqn.clone() })),
                );
            }
        }
        self.expire_locked(&mut st, now);
    }

    /// Drop every peer that has been silent for longer than [`threads::SILENCE_INTERVAL`].
    pub fn expire(&self, now: Instant) {
        let mut st = self.state.lock();
        self.expire_locked(&mut st, now);
    }

    fn expire_locked(&self, st: &mut State, now: Instant) {
        let silent = threads::silent_peers(&st.peers, now);
        for process_uuid in silent {
            bump(&self.data.counters.peers_expired);
            tracing::debug!(%process_uuid, "peer silent for too long, forgotten");
            self.forget_process(st, &process_uuid);
        }
    }

    /// Say goodbye: peers drop everything they know about us at once.
    pub fn bye(&self) {
        let st = self.state.lock();
        for (fqn, lp) in &st.local {
            self.advertise_msg(DiscoveryType::Unadvertise, fqn, lp);
        }
        self.send_discovery(DiscoveryType::Bye, None);
    }

    /// Stop the threads: set the flag, wake the discovery thread, tell the receive thread.
    pub fn stop(&self) {
        self.shutdown.store(true, Ordering::Release);
        let _ = (&self.wake).write_all(&[1]);
        self.data.command(Command::Stop);
        let _st = self.state.lock();
        self.changed.notify_all();
    }

    /// Bring connections and NEW/END_CONNECTION announcements in line with the state.
    fn reconcile(&self, st: &mut State) {
        let State {
            local,
            remote,
            subs,
            connected,
            ..
        } = st;
        let accepts = |fqn: &str, type_name: &str| {
            subs.get(fqn)
                .is_some_and(|s| s.iter().any(|e| e.accepts(type_name)))
        };
        let mut desired: HashSet<&str> = HashSet::new();
        for (fqn, list) in remote.iter_mut() {
            // END_CONNECTION goes to a publisher process, once for all its publishers.
            let mut ended: HashSet<&str> = HashSet::new();
            for rp in list.iter_mut() {
                let want = accepts(fqn, &rp.type_name);
                if want != rp.wanted {
                    if want {
                        self.new_connection_msg(fqn, rp);
                    } else if ended.insert(&rp.process_uuid) {
                        self.end_connection_msg(fqn, &rp.process_uuid);
                    }
                    rp.wanted = want;
                }
            }
        }
        for list in remote.values() {
            desired.extend(
                list.iter()
                    .filter(|rp| rp.wanted)
                    .map(|rp| rp.address.as_str()),
            );
        }
        // Our own publishers reach our own subscriptions through the same SUB socket, so
        // callbacks always run on the receive thread.
        if local.iter().any(|(fqn, lp)| accepts(fqn, &lp.type_name)) {
            desired.insert(self.address.as_str());
        }
        let to_connect: Vec<String> = desired
            .iter()
            .filter(|a| !connected.contains(**a))
            .map(|a| a.to_string())
            .collect();
        let to_disconnect: Vec<String> = connected
            .iter()
            .filter(|a| !desired.contains(a.as_str()))
            .cloned()
            .collect();
        for a in to_disconnect {
            self.data.command(Command::Disconnect(a.clone()));
            connected.remove(&a);
        }
        for a in to_connect {
            tracing::debug!(address = %a, "connecting");
            self.data.command(Command::Connect(a.clone()));
            connected.insert(a);
        }
    }

    pub fn stats(&self) -> TransportStats {
        self.data.counters.stats()
    }
}
