//! The registry: who offers and who wants what. This node's topics and subscriptions, the
//! publishers and subscriptions of other processes that concern us, the addresses the receive
//! thread is connected to, and when each peer was last heard from. Plain data: discovery
//! ([`crate::discovery`]) changes it and sends what follows from each change.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use crate::types::SubEntry;
use crate::wire::{MessagePublisher, GENERIC_MSG_TYPE};

/// A topic this node advertises.
pub(crate) struct LocalPub {
    pub id: u64,
    pub type_name: String,
    /// Remote subscribers that announced themselves with NEW_CONNECTION: (process, node) UUIDs.
    pub remote_subs: HashSet<(String, String)>,
}

/// A publisher of another participant.
pub(crate) struct RemotePub {
    pub process_uuid: String,
    pub node_uuid: String,
    pub address: String,
    pub type_name: String,
    /// Its advertised scope and rate, which gz-transport echoes in NEW_CONNECTION.
    pub scope: i32,
    pub msgs_per_sec: Option<u64>,
    /// We have sent NEW_CONNECTION for it (a subscription of ours accepts its type).
    pub wanted: bool,
}

/// A subscription of another participant, learned from its SUBSCRIBERS_REP.
pub(crate) struct RemoteSub {
    pub process_uuid: String,
    pub node_uuid: String,
    /// The subscribing node's own PUB address (what gz-transport reports for it).
    pub address: String,
    /// The subscribed type, `google.protobuf.Message` for a subscription to any type.
    pub type_name: String,
}

#[derive(Default)]
pub(crate) struct State {
    pub local: HashMap<String, LocalPub>,
    pub remote: HashMap<String, Vec<RemotePub>>,
    pub subs: HashMap<String, Arc<Vec<SubEntry>>>,
    /// Remote subscriptions per topic, as answered to our SUBSCRIBERS_REQ; forgotten with
    /// their process (BYE or silence), like remote publishers.
    pub remote_subscriptions: HashMap<String, Vec<RemoteSub>>,
    /// Addresses the receive thread's SUB socket is connected to.
    pub connected: HashSet<String>,
    /// Last time we heard from each peer process that matters to us (publishes in our
    /// partition, or subscribes to our topics). Other processes are not tracked at all.
    pub peers: HashMap<String, Instant>,
    pub next_id: u64,
}

impl State {
    /// Forgets everything process `process_uuid` offered or wanted.
    pub fn forget_process(&mut self, process_uuid: &str) {
        self.peers.remove(process_uuid);
        self.remote.retain(|_, list| {
            list.retain(|rp| rp.process_uuid != process_uuid);
            !list.is_empty()
        });
        self.remote_subscriptions.retain(|_, list| {
            list.retain(|rs| rs.process_uuid != process_uuid);
            !list.is_empty()
        });
        for lp in self.local.values_mut() {
            lp.remote_subs.retain(|(p, _)| p != process_uuid);
        }
    }

    /// The distinct types this node subscribes `fqn` with (`google.protobuf.Message` for a
    /// subscription to any type), sorted.
    pub fn local_subscribed_types(&self, fqn: &str) -> Vec<String> {
        let mut types: Vec<String> = self
            .subs
            .get(fqn)
            .into_iter()
            .flat_map(|list| list.iter())
            .map(|e| {
                e.type_name
                    .clone()
                    .unwrap_or_else(|| GENERIC_MSG_TYPE.to_owned())
            })
            .collect();
        types.sort();
        types.dedup();
        types
    }
}

/// The rate limit a publisher advertised, `None` when unthrottled: gz-transport reads
/// `msgs_per_sec` only when `throttled` is set, and takes `u64::MAX` for no limit.
pub(crate) fn advertised_rate(mp: &MessagePublisher) -> Option<u64> {
    (mp.throttled && mp.msgs_per_sec != u64::MAX).then_some(mp.msgs_per_sec)
}
