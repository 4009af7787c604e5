//! gz-transport services: request/response calls between nodes, as Gazebo's world control
//! (`/world/<w>/control`) and `set_pose` are offered, interoperable with the C++ library.
//!
//! # The protocol (wire version 10, both Fortress and Harmonic)
//!
//! Services have a discovery of their own, on the service port (10318, or
//! `GZ_DISCOVERY_SRV_PORT`): the same datagrams as topics (HEARTBEAT, ADVERTISE answered to
//! SUBSCRIBE and repeated every heartbeat, UNADVERTISE, BYE, silence expiry), whose publisher
//! record carries a `ServicePublisher`: the responder's socket identity and its request and
//! response type names. Each participant has two listening ROUTER sockets: the *replier*
//! (its address is the one advertised) and the *response receiver*. A call is
//!
//! * request, requester → the responder's replier, 8 frames: `[service FQN, the requester's
//!   response-receiver address, that receiver's identity, requester node UUID, request UUID,
//!   request bytes, request type, response type]`;
//! * response, responder → the requester's response receiver (the responder connects to the
//!   address it was given), 5 frames: `[service FQN, node UUID, request UUID, response bytes,
//!   "1" or "0"]`, `"0"` meaning the responder's handler failed. A response type of
//!   `*.Empty` makes the call one-way: nothing comes back.
//!
//! ROUTERs address their peers by the identity announced in the ZMTP READY, so our listeners
//! announce the identities we advertise; each outgoing connection announces a fresh one
//! (libzmq drops a second connection that repeats an identity it already knows).
//!
//! # Threads and cost
//!
//! Nothing runs until a node first advertises, calls or lists a service: then one discovery
//! thread (waking for datagrams and once a second) and one thread per listener blocked in
//! `accept`, plus one per accepted connection blocked in `read`. No thread polls, so a node
//! offering services costs no wake-up between calls. Handlers run on the connection's thread;
//! calls to a service of this same node run the handler on the caller's thread.

mod discovery;
mod link;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::config::Config;
use crate::net::DiscoverySockets;
use crate::threads::wake_pair;
use crate::types::bump;
use crate::Error;
use link::Link;

/// What a service handler gets (the request's bytes) and gives: the response's bytes, or
/// `None` when the call failed (the requester is told so).
pub(crate) type Handler = Box<dyn FnMut(&[u8]) -> Option<Vec<u8>> + Send>;

/// Longest wait to open a connection to a peer's service socket.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a service call gave no response.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Transport(#[from] Error),
    #[error("no responder of service {service:?} appeared within {waited:?} (is the simulator running, in this partition?)")]
    NoResponder { service: String, waited: Duration },
    #[error("service {service:?} is offered with request/response types {offered}, not {wanted}")]
    WrongTypes {
        service: String,
        offered: String,
        wanted: String,
    },
    #[error("service {service:?} did not answer within {timeout:?}")]
    Timeout { service: String, timeout: Duration },
    #[error("service {service:?} answered that the call failed")]
    Failed { service: String },
    #[error("the response of service {service:?} is not a valid {type_name}: {reason}")]
    Decode {
        service: String,
        type_name: String,
        reason: String,
    },
    #[error("cannot reach the responder of service {service:?} at {address}: {reason}")]
    Unreachable {
        service: String,
        address: String,
        reason: String,
    },
}

/// What is known about one responder of a service ([`Node::service_info`](crate::Node)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceInfo {
    /// Its replier socket's address.
    pub address: String,
    pub request_type: String,
    pub response_type: String,
    pub process_uuid: String,
    pub node_uuid: String,
    /// True for a service of this node.
    pub local: bool,
}

/// Counters of a node's service traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceStats {
    /// Requests our handlers answered (successfully or not).
    pub requests_served: u64,
    /// Requests our handlers said failed (or whose bytes did not decode).
    pub requests_failed: u64,
    /// Requests for a service or types we do not offer, and malformed messages: dropped.
    pub requests_dropped: u64,
    /// Calls we made that got a response.
    pub responses_received: u64,
    /// Responses that matched no call waiting for one (late, after a timeout): dropped.
    pub responses_unmatched: u64,
}

#[derive(Default)]
struct Counters {
    requests_served: AtomicU64,
    requests_failed: AtomicU64,
    requests_dropped: AtomicU64,
    responses_received: AtomicU64,
    responses_unmatched: AtomicU64,
}

/// A service this node offers.
struct LocalService {
    id: u64,
    request_type: String,
    response_type: String,
    handler: Arc<Mutex<Handler>>,
}

/// A service another participant offers.
#[derive(Clone)]
struct RemoteService {
    process_uuid: String,
    node_uuid: String,
    address: String,
    request_type: String,
    response_type: String,
}

#[derive(Default)]
struct State {
    local: HashMap<String, LocalService>,
    remote: HashMap<String, Vec<RemoteService>>,
    /// Last time we heard from each process that offers services in our partition.
    peers: HashMap<String, Instant>,
    /// Calls waiting for their response, by request UUID: `Some((bytes, ok))` once it came.
    pending: HashMap<String, Option<(Vec<u8>, bool)>>,
    /// Services a call waits to discover: asked for again at every heartbeat.
    sought: HashSet<String>,
    next_id: u64,
}

/// The service side of one node: discovery on the service port, the two listeners, and
/// what is known. Shared by its threads and the node's API.
pub(crate) struct Services {
    cfg: Config,
    process_uuid: String,
    node_uuid: String,
    prefix: String,
    disc: DiscoverySockets,
    replier_address: String,
    replier_id: String,
    response_address: String,
    response_id: String,
    state: Mutex<State>,
    changed: Condvar,
    /// Outgoing connections by address, each taken out while in use.
    links: Mutex<HashMap<String, Link>>,
    /// Accepted connections by number, shut down on stop so their threads end.
    accepted: Mutex<HashMap<u64, TcpStream>>,
    counters: Counters,
    shutdown: AtomicBool,
    wake: UnixStream,
}

/// Owns the service threads; dropping it says BYE on the service port and stops them.
pub(crate) struct ServiceRuntime {
    pub services: Arc<Services>,
    threads: Vec<JoinHandle<()>>,
}

impl ServiceRuntime {
    /// Opens discovery on the service port and both listeners, and starts the threads.
    pub fn start(cfg: Config, process_uuid: String, node_uuid: String) -> Result<Self, Error> {
        let bind = |what: &str| {
            TcpListener::bind((cfg.host_ip, 0)).map_err(|source| Error::Bind {
                endpoint: format!("tcp://{}:* ({what})", cfg.host_ip),
                source,
            })
        };
        let replier = bind("service replier")?;
        let responses = bind("service responses")?;
        let address =
            |l: &TcpListener| -> Result<String, Error> { Ok(format!("tcp://{}", l.local_addr()?)) };
        let disc =
            DiscoverySockets::open_polled(cfg.multicast_group, cfg.srv_port, &cfg.interfaces)?;
        let (wake_tx, wake_rx) = wake_pair()?;
        let prefix = crate::names::partition_prefix(&cfg.partition);
        let services = Arc::new(Services {
            replier_address: address(&replier)?,
            replier_id: uuid::Uuid::new_v4().to_string(),
            response_address: address(&responses)?,
            response_id: uuid::Uuid::new_v4().to_string(),
            cfg,
            process_uuid,
            node_uuid,
            prefix,
            disc,
            state: Mutex::new(State {
                next_id: 1,
                ..State::default()
            }),
            changed: Condvar::new(),
            links: Mutex::default(),
            accepted: Mutex::default(),
            counters: Counters::default(),
            shutdown: AtomicBool::new(false),
            wake: wake_tx,
        });
        let mut runtime = ServiceRuntime {
            services: services.clone(),
            threads: Vec::new(),
        };
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name.to_owned()).spawn(f)
        };
        let s = services.clone();
        runtime.threads.push(spawn(
            "gz-srv-discovery",
            Box::new(move || discovery::discovery_loop(&s, wake_rx)),
        )?);
        let s = services.clone();
        runtime.threads.push(spawn(
            "gz-srv-replier",
            Box::new(move || s.accept_loop(&replier, Role::Replier)),
        )?);
        let s = services;
        runtime.threads.push(spawn(
            "gz-srv-responses",
            Box::new(move || s.accept_loop(&responses, Role::ResponseReceiver)),
        )?);
        tracing::debug!(replier = %runtime.services.replier_address, "gz-transport services started");
        Ok(runtime)
    }
}

impl Drop for ServiceRuntime {
    fn drop(&mut self) {
        let s = &self.services;
        s.bye();
        s.shutdown.store(true, Ordering::Release);
        let _ = (&s.wake).write_all(&[1]);
        // Wake the listeners out of accept().
        for address in [&s.replier_address, &s.response_address] {
            if let Some(a) = address.strip_prefix("tcp://").and_then(|a| a.parse().ok()) {
                let _ = TcpStream::connect_timeout(&a, Duration::from_millis(200));
            }
        }
        for (_, stream) in s.accepted.lock().drain() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        s.links.lock().clear();
        {
            let _st = s.state.lock();
            s.changed.notify_all();
        }
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// Which listener a connection came in on.
#[derive(Clone, Copy)]
enum Role {
    Replier,
    ResponseReceiver,
}

impl Services {
    fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    // ---- the node's API --------------------------------------------------------------------

    pub fn advertise(
        &self,
        fqn: &str,
        request_type: &str,
        response_type: &str,
        handler: Handler,
    ) -> Result<u64, Error> {
        let mut st = self.state.lock();
        if let Some(existing) = st.local.get(fqn) {
            return Err(Error::AlreadyAdvertised {
                topic: fqn.strip_prefix(&self.prefix).unwrap_or(fqn).to_owned(),
                existing: format!("{} -> {}", existing.request_type, existing.response_type),
            });
        }
        let id = st.next_id;
        st.next_id += 1;
        let service = LocalService {
            id,
            request_type: request_type.to_owned(),
            response_type: response_type.to_owned(),
            handler: Arc::new(Mutex::new(handler)),
        };
        self.send_advertise(discovery::Kind::Advertise, fqn, &service);
        st.local.insert(fqn.to_owned(), service);
        self.changed.notify_all();
        Ok(id)
    }

    pub fn unadvertise(&self, fqn: &str, id: u64) {
        let mut st = self.state.lock();
        if st.local.get(fqn).is_some_and(|s| s.id == id) {
            let service = st.local.remove(fqn).expect("checked above");
            self.send_advertise(discovery::Kind::Unadvertise, fqn, &service);
            self.changed.notify_all();
        }
    }

    /// Calls service `fqn` (shown to the user as `service`) and waits up to `timeout` in all
    /// for a responder to be discovered and to answer.
    pub fn request(
        &self,
        service: &str,
        fqn: &str,
        request_type: &str,
        request: &[u8],
        response_type: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>, ServiceError> {
        let deadline = Instant::now() + timeout;
        let wanted = || format!("{request_type} -> {response_type}");
        // A service of this node: its handler runs here, on the caller's thread.
        let local = {
            let st = self.state.lock();
            st.local.get(fqn).map(|s| {
                (
                    s.request_type == request_type && s.response_type == response_type,
                    format!("{} -> {}", s.request_type, s.response_type),
                    s.handler.clone(),
                )
            })
        };
        if let Some((types_match, offered, handler)) = local {
            if !types_match {
                return Err(ServiceError::WrongTypes {
                    service: service.to_owned(),
                    offered,
                    wanted: wanted(),
                });
            }
            let answer = (handler.lock())(request);
            return answer.ok_or_else(|| ServiceError::Failed {
                service: service.to_owned(),
            });
        }
        let responder = self.find_responder(service, fqn, request_type, response_type, deadline)?;
        let request_uuid = uuid::Uuid::new_v4().to_string();
        let one_way = is_empty_type(response_type);
        if !one_way {
            self.state.lock().pending.insert(request_uuid.clone(), None);
        }
        let frames: [&[u8]; 8] = [
            fqn.as_bytes(),
            self.response_address.as_bytes(),
            self.response_id.as_bytes(),
            self.node_uuid.as_bytes(),
            request_uuid.as_bytes(),
            request,
            request_type.as_bytes(),
            response_type.as_bytes(),
        ];
        if let Err(reason) = self.send_to(&responder.address, &frames) {
            self.state.lock().pending.remove(&request_uuid);
            return Err(ServiceError::Unreachable {
                service: service.to_owned(),
                address: responder.address,
                reason,
            });
        }
        if one_way {
            return Ok(Vec::new());
        }
        let mut st = self.state.lock();
        loop {
            if let Some(Some(_)) = st.pending.get(&request_uuid) {
                let (bytes, ok) = st
                    .pending
                    .remove(&request_uuid)
                    .flatten()
                    .expect("checked above");
                return if ok {
                    Ok(bytes)
                } else {
                    Err(ServiceError::Failed {
                        service: service.to_owned(),
                    })
                };
            }
            if self.is_shutting_down() {
                st.pending.remove(&request_uuid);
                return Err(Error::Closed.into());
            }
            if self.changed.wait_until(&mut st, deadline).timed_out() {
                let answered = st.pending.remove(&request_uuid).flatten();
                return match answered {
                    Some((bytes, true)) => Ok(bytes),
                    Some((_, false)) => Err(ServiceError::Failed {
                        service: service.to_owned(),
                    }),
                    None => Err(ServiceError::Timeout {
                        service: service.to_owned(),
                        timeout,
                    }),
                };
            }
        }
    }

    /// A remote responder of `fqn` with these types, discovered by `deadline`.
    fn find_responder(
        &self,
        service: &str,
        fqn: &str,
        request_type: &str,
        response_type: &str,
        deadline: Instant,
    ) -> Result<RemoteService, ServiceError> {
        let started = Instant::now();
        let mut st = self.state.lock();
        let mut asked = false;
        loop {
            let offered = st.remote.get(fqn).filter(|v| !v.is_empty());
            if let Some(list) = offered {
                if let Some(r) = list
                    .iter()
                    .find(|r| r.request_type == request_type && r.response_type == response_type)
                {
                    let r = r.clone();
                    st.sought.remove(fqn);
                    return Ok(r);
                }
                let offered: Vec<String> = list
                    .iter()
                    .map(|r| format!("{} -> {}", r.request_type, r.response_type))
                    .collect();
                st.sought.remove(fqn);
                return Err(ServiceError::WrongTypes {
                    service: service.to_owned(),
                    offered: offered.join(", "),
                    wanted: format!("{request_type} -> {response_type}"),
                });
            }
            if !asked {
                // Responders answer SUBSCRIBE with ADVERTISE: ask now, and again at every
                // heartbeat while we wait (a datagram may be lost).
                st.sought.insert(fqn.to_owned());
                self.send_subscribe(fqn);
                asked = true;
            }
            if self.is_shutting_down() {
                return Err(Error::Closed.into());
            }
            if self.changed.wait_until(&mut st, deadline).timed_out()
                && st.remote.get(fqn).is_none_or(|v| v.is_empty())
            {
                st.sought.remove(fqn);
                return Err(ServiceError::NoResponder {
                    service: service.to_owned(),
                    waited: started.elapsed(),
                });
            }
        }
    }

    /// Sends `frames` on our connection to `address`, opening it if needed; a connection
    /// that broke since its last use is opened again once.
    fn send_to(&self, address: &str, frames: &[&[u8]]) -> Result<(), String> {
        let kept = self.links.lock().remove(address);
        let mut reused = kept.is_some();
        let mut link = match kept {
            Some(link) => link,
            None => self.open_link(address)?,
        };
        loop {
            match link.send(frames) {
                Ok(()) => {
                    if !self.is_shutting_down() {
                        self.links.lock().insert(address.to_owned(), link);
                    }
                    return Ok(());
                }
                Err(e) if reused => {
                    tracing::debug!(%address, error = %e, "service connection broke; reconnecting");
                    reused = false;
                    link = self.open_link(address)?;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    fn open_link(&self, address: &str) -> Result<Link, String> {
        let identity = uuid::Uuid::new_v4().to_string();
        Link::connect(address, &identity, CONNECT_TIMEOUT).map_err(|e| e.to_string())
    }

    /// Service names of this partition with a known responder (ours or remote), sorted.
    pub fn list(&self) -> Vec<String> {
        let st = self.state.lock();
        crate::names::offered_in_partition(&self.prefix, &st.local, &st.remote)
    }

    pub fn info(&self, fqn: &str) -> Vec<ServiceInfo> {
        let st = self.state.lock();
        let mut out = Vec::new();
        if let Some(s) = st.local.get(fqn) {
            out.push(ServiceInfo {
                address: self.replier_address.clone(),
                request_type: s.request_type.clone(),
                response_type: s.response_type.clone(),
                process_uuid: self.process_uuid.clone(),
                node_uuid: self.node_uuid.clone(),
                local: true,
            });
        }
        for r in st.remote.get(fqn).into_iter().flatten() {
            out.push(ServiceInfo {
                address: r.address.clone(),
                request_type: r.request_type.clone(),
                response_type: r.response_type.clone(),
                process_uuid: r.process_uuid.clone(),
                node_uuid: r.node_uuid.clone(),
                local: false,
            });
        }
        out
    }

    /// Blocks until a remote responder of `fqn` is known, or `timeout`.
    pub fn wait_for_responder(&self, fqn: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        let known = |st: &State| st.remote.get(fqn).is_some_and(|v| !v.is_empty());
        if !known(&st) {
            st.sought.insert(fqn.to_owned());
            self.send_subscribe(fqn);
        }
        while !known(&st) && !self.is_shutting_down() {
            if self.changed.wait_until(&mut st, deadline).timed_out() {
                break;
            }
        }
        st.sought.remove(fqn);
        known(&st)
    }

    pub fn stats(&self) -> ServiceStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ServiceStats {
            requests_served: get(&c.requests_served),
            requests_failed: get(&c.requests_failed),
            requests_dropped: get(&c.requests_dropped),
            responses_received: get(&c.responses_received),
            responses_unmatched: get(&c.responses_unmatched),
        }
    }

    // ---- the listeners ---------------------------------------------------------------------

    fn accept_loop(self: &Arc<Self>, listener: &TcpListener, role: Role) {
        let mut next_number = 0u64;
        while !self.is_shutting_down() {
            let (stream, from) = match listener.accept() {
                Ok(accepted) => accepted,
                Err(e) => {
                    if !self.is_shutting_down() {
                        tracing::debug!(error = %e, "service accept failed");
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    continue;
                }
            };
            if self.is_shutting_down() {
                break;
            }
            next_number += 1;
            let number = next_number;
            if let Ok(clone) = stream.try_clone() {
                self.accepted.lock().insert(number, clone);
            }
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name("gz-srv-conn".into())
                .spawn(move || {
                    me.serve_connection(stream, from, role);
                    me.accepted.lock().remove(&number);
                });
            if let Err(e) = spawned {
                self.accepted.lock().remove(&number);
                tracing::warn!(error = %e, "cannot start a service connection thread");
            }
        }
    }

    fn serve_connection(&self, stream: TcpStream, from: SocketAddr, role: Role) {
        let identity = match role {
            Role::Replier => &self.replier_id,
            Role::ResponseReceiver => &self.response_id,
        };
        let mut link = match Link::handshake(stream, identity) {
            Ok(link) => link,
            Err(e) => {
                tracing::debug!(%from, error = %e, "service connection refused");
                return;
            }
        };
        loop {
            match link.receive() {
                Ok(Some(frames)) => match role {
                    Role::Replier => self.serve_request(&frames, from),
                    Role::ResponseReceiver => self.take_response(&frames, from),
                },
                Ok(None) => return,
                Err(e) => {
                    if !self.is_shutting_down() {
                        tracing::debug!(%from, error = %e, "service connection ended");
                    }
                    return;
                }
            }
        }
    }

    /// A request from a requester (8 frames, see the module doc): run the handler, answer.
    fn serve_request(&self, frames: &[Vec<u8>], from: SocketAddr) {
        let [fqn, sender, destination, node_uuid, request_uuid, request, request_type, response_type] =
            frames
        else {
            bump(&self.counters.requests_dropped);
            tracing::debug!(%from, frames = frames.len(), "service request of the wrong shape dropped");
            return;
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let (fqn, request_type, response_type) =
            (text(fqn), text(request_type), text(response_type));
        let handler = {
            let st = self.state.lock();
            st.local
                .get(&fqn)
                .filter(|s| s.request_type == request_type && s.response_type == response_type)
                .map(|s| s.handler.clone())
        };
        let Some(handler) = handler else {
            // gz-transport stays silent too: the requester times out.
            bump(&self.counters.requests_dropped);
            tracing::debug!(service = %fqn, %request_type, %response_type, "request for a service or types we do not offer dropped");
            return;
        };
        let answer = (handler.lock())(request);
        bump(&self.counters.requests_served);
        if answer.is_none() {
            bump(&self.counters.requests_failed);
        }
        if is_empty_type(&response_type) {
            return; // one-way
        }
        let _ = destination; // the requester's identity: its ROUTER's business, not the wire's
        let (response, ok): (&[u8], &[u8]) = match &answer {
            Some(bytes) => (bytes, b"1"),
            None => (b"", b"0"),
        };
        let reply: [&[u8]; 5] = [fqn.as_bytes(), node_uuid, request_uuid, response, ok];
        let address = text(sender);
        if let Err(e) = check_reply_address(&address).and_then(|()| self.send_to(&address, &reply))
        {
            tracing::debug!(%address, error = %e, "service response not sent");
        }
    }

    /// A response to one of our calls (5 frames): hand it to the waiting call.
    fn take_response(&self, frames: &[Vec<u8>], from: SocketAddr) {
        let [_fqn, _node_uuid, request_uuid, response, ok] = frames else {
            bump(&self.counters.responses_unmatched);
            tracing::debug!(%from, frames = frames.len(), "service response of the wrong shape dropped");
            return;
        };
        let request_uuid = String::from_utf8_lossy(request_uuid);
        let mut st = self.state.lock();
        match st.pending.get_mut(request_uuid.as_ref()) {
            Some(slot @ None) => {
                *slot = Some((response.clone(), ok.as_slice() == b"1"));
                bump(&self.counters.responses_received);
                self.changed.notify_all();
            }
            _ => bump(&self.counters.responses_unmatched),
        }
    }
}

/// gz-transport's one-way calls: a response type of `Empty` (either prefix).
fn is_empty_type(type_name: &str) -> bool {
    type_name.rsplit('.').next() == Some("Empty")
}

/// A requester's response address must be a `tcp://` address we would connect to.
fn check_reply_address(address: &str) -> Result<(), String> {
    crate::scope::check_address(address).map_err(|why| format!("address {address:?} {why}"))
}
