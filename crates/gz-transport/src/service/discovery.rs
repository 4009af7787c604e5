//! Discovery on the service port: what other participants offer, and telling them what we
//! offer. The rules are the topic discovery's ([`crate::discovery`]): same datagrams, partition
//! and scope checks, silence expiry; only the publisher record differs (a
//! `ServicePublisher` with socket identity and request/response types).

use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::{RemoteService, Services, State};
use crate::scope::{self, NotOurs};
use crate::threads::{silent_peers, HEARTBEAT_INTERVAL};
use crate::wire::{
    self, DiscContents, Discovery, DiscoveryType, PubType, Publisher, Scope, ServicePublisher,
    Subscriber,
};

/// ADVERTISE or UNADVERTISE of a service of ours.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Advertise,
    Unadvertise,
}

impl Services {
    fn send_discovery(&self, kind: DiscoveryType, contents: Option<DiscContents>) {
        let msg = Discovery::new(kind, &self.process_uuid, contents);
        match wire::encode_discovery(&msg) {
            Ok(datagram) => self.disc.send(&datagram),
            Err(e) => tracing::warn!(?kind, error = %e, "service discovery message not sent"),
        }
    }

    pub(super) fn send_advertise(&self, kind: Kind, fqn: &str, service: &super::LocalService) {
        let record = Publisher {
            topic: fqn.to_owned(),
            address: self.replier_address.clone(),
            process_uuid: self.process_uuid.clone(),
            node_uuid: self.node_uuid.clone(),
            scope: Scope::All as i32,
            pub_type: Some(PubType::SrvPub(ServicePublisher {
                socket_id: self.replier_id.clone(),
                request_type: service.request_type.clone(),
                response_type: service.response_type.clone(),
            })),
        };
        let kind = match kind {
            Kind::Advertise => DiscoveryType::Advertise,
            Kind::Unadvertise => DiscoveryType::Unadvertise,
        };
        self.send_discovery(kind, Some(DiscContents::Pub(record)));
    }

    pub(super) fn send_subscribe(&self, fqn: &str) {
        self.send_discovery(
            DiscoveryType::Subscribe,
            Some(DiscContents::Sub(Subscriber {
                topic: fqn.to_owned(),
            })),
        );
    }

    /// Handle one datagram of the service port.
    fn handle_datagram(&self, datagram: &[u8], now: Instant) {
        let msg = match wire::decode_discovery(datagram) {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(error = %e, "service discovery datagram dropped");
                return;
            }
        };
        if msg.process_uuid == self.process_uuid {
            return; // our own, looped back
        }
        let mut st = self.state.lock();
        if let Some(seen) = st.peers.get_mut(&msg.process_uuid) {
            *seen = now;
        }
        match msg.kind() {
            DiscoveryType::Advertise => {
                if let Some((p, sp)) = self.service_publisher(&msg) {
                    st.peers.insert(msg.process_uuid.clone(), now);
                    let list = st.remote.entry(p.topic.clone()).or_default();
                    let record = RemoteService {
                        process_uuid: p.process_uuid.clone(),
                        node_uuid: p.node_uuid.clone(),
                        address: p.address.clone(),
                        request_type: sp.request_type.clone(),
                        response_type: sp.response_type.clone(),
                    };
                    let same_node = |r: &RemoteService| {
                        r.process_uuid == p.process_uuid && r.node_uuid == p.node_uuid
                    };
                    match list.iter_mut().find(|r| same_node(r)) {
                        Some(known) => *known = record,
                        None => {
                            tracing::debug!(service = %p.topic, address = %p.address, "service discovered");
                            list.push(record);
                        }
                    }
                    self.changed.notify_all();
                }
            }
            DiscoveryType::Unadvertise => {
                if let Some((p, _)) = self.service_publisher(&msg) {
                    if let Some(list) = st.remote.get_mut(&p.topic) {
                        list.retain(|r| {
                            !(r.process_uuid == p.process_uuid && r.node_uuid == p.node_uuid)
                        });
                        if list.is_empty() {
                            st.remote.remove(&p.topic);
                        }
                    }
                    self.changed.notify_all();
                }
            }
            DiscoveryType::Subscribe => {
                if let Some(service) = msg.subscriber().and_then(|s| st.local.get(&s.topic)) {
                    let fqn = &msg.subscriber().expect("checked above").topic;
                    self.send_advertise(Kind::Advertise, fqn, service);
                }
            }
            DiscoveryType::Bye => forget_process(&mut st, &msg.process_uuid),
            // Heartbeats only refresh (above); connections and subscriber lists are topics'.
            _ => {}
        }
        self.changed.notify_all();
    }

    /// The service publisher in an ADVERTISE/UNADVERTISE, if it is of our partition and
    /// visible under its scope.
    fn service_publisher<'m>(
        &self,
        msg: &'m Discovery,
    ) -> Option<(&'m Publisher, &'m ServicePublisher)> {
        let p = msg.publisher()?;
        let Some(PubType::SrvPub(sp)) = &p.pub_type else {
            return None;
        };
        match scope::visible(p, &self.prefix, &self.cfg.interfaces) {
            Ok(()) => Some((p, sp)),
            Err(NotOurs::BadAddress(why)) => {
                tracing::debug!(address = %p.address, why, "service advertisement dropped");
                None
            }
            Err(NotOurs::Elsewhere | NotOurs::UnknownScope) => None,
        }
    }

    /// Every heartbeat: HEARTBEAT, re-ADVERTISE ours, ask again for services calls wait for,
    /// forget silent peers.
    fn tick(&self, now: Instant) {
        self.send_discovery(DiscoveryType::Heartbeat, None);
        let mut st = self.state.lock();
        for (fqn, service) in &st.local {
            self.send_advertise(Kind::Advertise, fqn, service);
        }
        for fqn in &st.sought {
            self.send_subscribe(fqn);
        }
        let silent = silent_peers(&st.peers, now);
        for process_uuid in silent {
            tracing::debug!(%process_uuid, "service peer silent for too long, forgotten");
            forget_process(&mut st, &process_uuid);
        }
        self.changed.notify_all();
    }

    /// Say goodbye on the service port: peers forget our services at once.
    pub(super) fn bye(&self) {
        let st = self.state.lock();
        for (fqn, service) in &st.local {
            self.send_advertise(Kind::Unadvertise, fqn, service);
        }
        self.send_discovery(DiscoveryType::Bye, None);
    }
}

fn forget_process(st: &mut State, process_uuid: &str) {
    st.peers.remove(process_uuid);
    st.remote.retain(|_, list| {
        list.retain(|r| r.process_uuid != process_uuid);
        !list.is_empty()
    });
}

/// The service discovery thread: datagrams as they come, a tick every heartbeat and
/// nothing between (expiry is checked at the tick), so it wakes once a second plus once per
/// peer datagram.
pub(super) fn discovery_loop(services: &Services, wake: UnixStream) {
    crate::threads::serve_discovery(
        &services.disc.recv,
        wake,
        HEARTBEAT_INTERVAL,
        || services.is_shutting_down(),
        |now| services.tick(now),
        |_| {},
        |datagram, _from, now| services.handle_datagram(datagram, now),
    );
}
