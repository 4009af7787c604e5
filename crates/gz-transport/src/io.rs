//! The data plane: gz-transport's PUB/SUB over TCP, spoken with ZMTP 3.0 ([`crate::zmtp`]) on
//! sockets of our own, all driven by the receive thread with `poll(2)`.
//!
//! * [`Outbox`] (shared, any thread publishes): the node's listening socket and one
//!   [`SubscriberLink`] per remote subscriber that connected to it, each with the topic
//!   prefixes it subscribed to. A publication is written straight to each matching link's
//!   socket from the publishing thread; only what the socket does not take is queued (up to
//!   the high-water mark, beyond which messages are dropped, as a ZeroMQ PUB does) and written
//!   by the receive thread when the socket drains.
//! * [`Inbox`] (the receive thread's alone): one [`PublisherLink`] per remote publisher we
//!   take data from, connected, greeted, subscribed to our topics and read as it comes;
//!   reconnected while wanted, disconnected after a grace.
//!
//! Why not libzmq: its I/O thread sits between the socket and the receive thread, which cost
//! one more wake-up per received message (two threads woken instead of one), and the build
//! libzmq came with had TCP keepalive compiled out. Here the thread that reads a message runs
//! its callbacks, and every connection has TCP keepalive and no Nagle delay.
//!
//! Interoperability: libzmq 4.x peers (Gazebo Harmonic's gz-transport 13, Fortress's ign-
//! transport 11) greet as ZMTP 3.1 and speak 3.0 to us, since we greet as 3.0. Security is
//! gz-transport's: the NULL mechanism, or with `GZ_TRANSPORT_USERNAME`/`PASSWORD` set, PLAIN,
//! our listening socket as its server (it checks each subscriber's user name and password)
//! and our connections to publishers as its clients. A peer of the other mechanism or with
//! other credentials is refused, saying which.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use socket2::{Domain, SockRef, Socket, TcpKeepalive, Type};

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use crate::config::Credentials;
use crate::offenders::Offenders;
use crate::types::{bump, Counters, Delivery, MessageInfo, SubEntry};
use crate::wire::DataMessage;
use crate::zmtp::{self, ZmtpError, GREETING_LEN};

/// How long a connection to a publisher outlives the discovery that made us open it. A
/// publisher often sends its last messages just before UNADVERTISE/BYE; closing at once would
/// throw away what is still in flight.
const DISCONNECT_GRACE: Duration = Duration::from_secs(2);
/// How long after a failed or lost connection to a wanted publisher we try again (libzmq's
/// default reconnect interval).
const RECONNECT_INTERVAL: Duration = Duration::from_millis(100);
/// How long after a publisher refused our security (PLAIN credentials or mechanism) we try
/// again: not a tight loop against a peer configured otherwise.
const REFUSED_RETRY_INTERVAL: Duration = Duration::from_secs(5);
/// TCP keepalive of every connection: a peer behind a dead link (a host that went away
/// without closing its sockets) is found after 10 s idle plus 5 unanswered probes 2 s apart.
/// libzmq's default (the system's: two hours) never found one in practice.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_PROBES: u32 = 5;
/// What one read takes at most, and the receive buffer's initial size.
const READ_CHUNK: usize = 64 * 1024;

/// The subscriptions of this node by fully qualified topic, as the receive thread reads them.
pub(crate) type Routes = HashMap<String, Arc<Vec<SubEntry>>>;

/// A command for the receive thread, which owns the connections to publishers.
#[derive(Debug)]
pub(crate) enum Command {
    /// Take data from the publisher at this address.
    Connect(String),
    /// No longer (after a grace).
    Disconnect(String),
    /// Subscribe every publisher connection to this topic.
    Filter(String),
    Unfilter(String),
    /// A subscriber link holds queued bytes: watch its socket for room.
    Flush,
    Stop,
}

/// What the data path shares with the threads that publish and with discovery: the publishing
/// side, the receive thread's command queue and routes, and what every connection reports to
/// (counters, the offender log). Discovery above drives it; it knows nothing of discovery.
pub(crate) struct DataPath {
    pub counters: Counters,
    /// Senders of dropped input, each named once in the log.
    pub offenders: Offenders,
    /// PLAIN credentials of both sides, `None` for the NULL mechanism.
    credentials: Option<Credentials>,
    /// `@/<partition>@`, the wire prefix of every topic of our partition.
    prefix: String,
    partition: String,
    /// Our listening socket and the subscribers connected to it, with their filters: a
    /// subscriber is reachable once its subscription arrived.
    pub outbox: Mutex<Outbox>,
    /// Commands for the receive thread, which `io_wake` wakes.
    commands: Mutex<Vec<Command>>,
    io_wake: UnixStream,
    /// The subscriptions, replaced on every (un)subscribe.
    routes: ArcSwap<Routes>,
}

impl DataPath {
    pub fn new(
        credentials: Option<Credentials>,
        partition: String,
        outbox: Outbox,
        io_wake: UnixStream,
    ) -> DataPath {
        DataPath {
            counters: Counters::default(),
            offenders: Offenders::default(),
            credentials,
            prefix: crate::names::partition_prefix(&partition),
            partition,
            outbox: Mutex::new(outbox),
            commands: Mutex::default(),
            io_wake,
            routes: ArcSwap::default(),
        }
    }

    /// Queues `cmd` for the receive thread.
    pub fn command(&self, cmd: Command) {
        let mut commands = self.commands.lock();
        commands.push(cmd);
        if commands.len() == 1 {
            // The first one since the receive thread last looked: wake it (a full pipe means
            // it is woken already).
            let _ = (&self.io_wake).write(&[1]);
        }
    }

    /// The commands queued for the receive thread, oldest first.
    fn take_commands(&self) -> Vec<Command> {
        std::mem::take(&mut *self.commands.lock())
    }

    /// Replaces the subscriptions the receive thread delivers to.
    pub fn set_routes(&self, routes: Routes) {
        self.routes.store(Arc::new(routes));
    }

    /// The callbacks subscribed to `fqn`, for the receive thread: wait-free, so delivery
    /// never waits for discovery work holding its state lock.
    fn subscribers_of(&self, fqn: &str) -> Option<Arc<Vec<SubEntry>>> {
        self.routes.load().get(fqn).cloned()
    }

    fn message_info(&self, msg: &DataMessage) -> MessageInfo {
        MessageInfo {
            topic: msg
                .topic
                .strip_prefix(&self.prefix)
                .unwrap_or(msg.topic)
                .to_owned(),
            type_name: msg.type_name.to_owned(),
            partition: self.partition.clone(),
            publisher_address: msg.address.to_owned(),
            superseded: 0,
        }
    }
}

/// Makes a fresh TCP socket fit for ZMTP: non-blocking, no Nagle delay, keepalive on.
fn tune(socket: SockRef<'_>) -> io::Result<()> {
    socket.set_nonblocking(true)?;
    socket.set_nodelay(true)?;
    socket.set_tcp_keepalive(
        &TcpKeepalive::new()
            .with_time(KEEPALIVE_IDLE)
            .with_interval(KEEPALIVE_INTERVAL)
            .with_retries(KEEPALIVE_PROBES),
    )
}

/// Bytes received and not yet taken: `buffer[start..end]`. Reads go to the end; decoding takes
/// from the start; the two meet again at zero when everything was taken.
struct ReceiveBuffer {
    buffer: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReceiveBuffer {
    fn new() -> Self {
        ReceiveBuffer {
            buffer: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
        }
    }

    fn data(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads what `stream` has (until it would block, at most a few chunks, so that one busy
    /// peer does not starve the others); `Ok(false)` once the peer closed.
    fn fill(&mut self, stream: &mut TcpStream) -> io::Result<bool> {
        for _ in 0..4 {
            if self.end == self.buffer.len() {
                if self.start > 0 {
                    self.buffer.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    // A message larger than the buffer: grow it.
                    self.buffer.resize(self.buffer.len() * 2, 0);
                }
            }
            match stream.read(&mut self.buffer[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    if self.end < self.buffer.len() {
                        return Ok(true); // the socket had no more
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// Bytes to send that the socket did not take yet, and how many messages they hold.
#[derive(Default)]
struct SendQueue {
    bytes: Vec<u8>,
    start: usize,
    messages: usize,
}

impl SendQueue {
    fn is_empty(&self) -> bool {
        self.start == self.bytes.len()
    }

    /// Writes what the socket takes; `Ok(true)` once everything went.
    fn flush(&mut self, stream: &mut TcpStream) -> io::Result<bool> {
        while !self.is_empty() {
            match stream.write(&self.bytes[self.start..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.start += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.bytes.clear();
        self.start = 0;
        self.messages = 0;
        Ok(true)
    }

    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.messages += 1;
    }
}

/// Where a connection's handshake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handshake {
    /// Waiting for the peer's greeting.
    Greeting,
    /// NULL: greeted; waiting for the peer's READY.
    Ready,
    /// PLAIN server: waiting for the client's HELLO.
    Hello,
    /// PLAIN client: HELLO sent, waiting for WELCOME.
    Welcome,
    /// PLAIN server: WELCOME sent, waiting for the client's INITIATE.
    Initiate,
    /// PLAIN client: INITIATE sent, waiting for READY.
    PlainReady,
    /// Both READY: messages flow.
    Done,
}

/// One side of a connection's handshake: our socket type, our mechanism's credentials, and
/// whether we are the mechanism's server (our listening socket) or client.
#[derive(Clone, Copy)]
struct Side<'a> {
    socket_type: &'static str,
    credentials: Option<&'a Credentials>,
    server: bool,
}

impl Side<'_> {
    fn mechanism(&self) -> &'static str {
        if self.credentials.is_some() {
            zmtp::PLAIN
        } else {
            zmtp::NULL
        }
    }

    /// What we send as soon as the connection is open: the greeting, and with NULL our READY.
    fn opening(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&zmtp::greeting_with(
            self.mechanism(),
            self.server && self.credentials.is_some(),
        ));
        if self.credentials.is_none() {
            zmtp::encode_ready(out, self.socket_type);
        }
    }
}

/// Takes the peer's greeting and commands off `buffer` until data messages start or the
/// buffer runs dry; our answers (PLAIN's WELCOME, INITIATE, READY, PONGs) go to `reply`.
/// `Err` closes the connection (after `reply` is sent, when it holds an ERROR).
fn handshake(
    state: &mut Handshake,
    buffer: &mut ReceiveBuffer,
    side: Side<'_>,
    reply: &mut Vec<u8>,
) -> Result<(), ZmtpError> {
    if *state == Handshake::Greeting {
        let Some(greeting) = buffer.data().get(..GREETING_LEN) else {
            // A greeting starts with 0xFF: anything else is refused at its first byte.
            if buffer.data().first().is_some_and(|&b| b != 0xFF) {
                return Err(ZmtpError::NotZmtp);
            }
            return Ok(());
        };
        // The greeting's as-server flag is not checked: libzmq decides a PLAIN connection's
        // roles by its own socket's options, and gz-transport's publishers greet as clients
        // (as-server 0) while they act as PLAIN servers.
        zmtp::check_greeting(greeting.try_into().expect("64 bytes"), side.mechanism())?;
        buffer.consume(GREETING_LEN);
        *state = match side.credentials {
            None => Handshake::Ready,
            Some(_) if side.server => Handshake::Hello,
            Some(c) => {
                zmtp::encode_hello(reply, c.username.as_bytes(), c.password.as_bytes());
                Handshake::Welcome
            }
        };
    }
    while *state != Handshake::Done {
        let Some((frame, len)) = zmtp::decode_frame(buffer.data())? else {
            return Ok(());
        };
        if !frame.command {
            return Err(ZmtpError::Command(
                "a message before the peer's READY".into(),
            ));
        }
        let ours = side.socket_type;
        let check_type = |theirs: String| {
            if zmtp::compatible(ours, &theirs) {
                Ok(())
            } else {
                Err(ZmtpError::SocketType { ours, theirs })
            }
        };
        match (zmtp::decode_command(frame.body)?, *state) {
            (zmtp::Command::Ready { socket_type }, Handshake::Ready | Handshake::PlainReady) => {
                check_type(socket_type)?;
                *state = Handshake::Done;
            }
            (zmtp::Command::Hello { username, password }, Handshake::Hello) => {
                let ours = side.credentials.expect("a PLAIN server has credentials");
                // Compared in full whatever the first difference: no timing hint either.
                let same = |a: &[u8], b: &[u8]| {
                    a.len() == b.len() && a.iter().zip(b).fold(0, |d, (x, y)| d | (x ^ y)) == 0
                };
                if !(same(username, ours.username.as_bytes())
                    & same(password, ours.password.as_bytes()))
                {
                    zmtp::encode_error(reply, "invalid username or password");
                    return Err(ZmtpError::Credentials);
                }
                zmtp::encode_welcome(reply);
                *state = Handshake::Initiate;
            }
            (zmtp::Command::Welcome, Handshake::Welcome) => {
                zmtp::encode_initiate(reply, side.socket_type);
                *state = Handshake::PlainReady;
            }
            (zmtp::Command::Initiate { socket_type }, Handshake::Initiate) => {
                check_type(socket_type)?;
                zmtp::encode_ready(reply, side.socket_type);
                *state = Handshake::Done;
            }
            // A PLAIN server says ERROR to credentials it does not take.
            (zmtp::Command::Error(why), Handshake::Welcome) => return Err(ZmtpError::Refused(why)),
            (zmtp::Command::Error(why), _) => return Err(ZmtpError::Peer(why)),
            (zmtp::Command::Ping { context }, _) => zmtp::encode_pong(reply, context),
            (other, state) => {
                return Err(ZmtpError::Command(format!(
                    "{other:?} while the handshake waits for {state:?}"
                )))
            }
        }
        buffer.consume(len);
    }
    Ok(())
}

// ---- publishing: remote subscribers of ours ------------------------------------------------

/// A remote subscriber connected to our listening socket.
pub(crate) struct SubscriberLink {
    stream: TcpStream,
    peer: SocketAddr,
    handshake: Handshake,
    received: ReceiveBuffer,
    queue: SendQueue,
    /// The topic prefixes it subscribed to (a ZeroMQ filter matches a prefix of the topic).
    filters: Vec<Vec<u8>>,
}

impl SubscriberLink {
    fn accepts(&self, topic: &[u8]) -> bool {
        self.handshake == Handshake::Done
            && self.filters.iter().any(|filter| topic.starts_with(filter))
    }
}

/// The publishing side of a node, shared by every thread that publishes and the receive
/// thread.
pub(crate) struct Outbox {
    listener: TcpListener,
    links: Vec<SubscriberLink>,
    /// Per filter, how many times a subscriber subscribed with it: a connection completed.
    subscriptions: HashMap<Vec<u8>, u64>,
    /// Messages a link may hold queued before newer ones are dropped.
    hwm: usize,
    /// Reused encoding of the message being published.
    scratch: Vec<u8>,
}

/// What a publication did.
pub(crate) struct Published {
    /// Links that matched.
    pub sent: usize,
    /// Links whose queue was full: the message was dropped for them.
    pub dropped: usize,
    /// A link holds bytes the receive thread must write once its socket drains.
    pub queued: bool,
}

impl Outbox {
    /// A listening socket on `host`'s ephemeral port; its `tcp://host:port` address.
    pub fn bind(host: std::net::Ipv4Addr, hwm: usize) -> io::Result<(Outbox, String)> {
        let listener = TcpListener::bind((host, 0))?;
        listener.set_nonblocking(true)?;
        let address = format!("tcp://{}", listener.local_addr()?);
        Ok((
            Outbox {
                listener,
                links: Vec::new(),
                subscriptions: HashMap::new(),
                hwm: hwm.max(1),
                scratch: Vec::new(),
            },
            address,
        ))
    }

    /// Sends each message's `frames` (topic first) to every subscriber whose filter matches its
    /// topic: queued on each link, then written with one write per link (the joints of one
    /// target reach a simulator in one segment, read with one wake-up).
    pub fn publish(&mut self, messages: &[[&[u8]; 4]]) -> Published {
        let mut published = Published {
            sent: 0,
            dropped: 0,
            queued: false,
        };
        let mut touched = vec![None; self.links.len()];
        for frames in messages {
            let topic = frames[0];
            // Encoded for the first link that takes it: each link's filters are matched once.
            let mut encoded = false;
            for (link, was_empty) in self.links.iter_mut().zip(touched.iter_mut()) {
                if !link.accepts(topic) {
                    continue;
                }
                if !encoded {
                    self.scratch.clear();
                    zmtp::encode_message(&mut self.scratch, frames);
                    encoded = true;
                }
                if link.queue.messages >= self.hwm {
                    published.dropped += 1;
                    continue;
                }
                published.sent += 1;
                was_empty.get_or_insert(link.queue.is_empty());
                link.queue.push(&self.scratch);
            }
        }
        for (link, was_empty) in self.links.iter_mut().zip(touched) {
            let Some(was_empty) = was_empty else { continue };
            // A broken link is found and closed by the receive thread (it reads EOF or an
            // error there); here it only keeps its queue.
            let drained = link.queue.flush(&mut link.stream).unwrap_or(false);
            published.queued |= was_empty && !drained;
        }
        published
    }

    /// Whether a subscriber subscribed with a filter matching `fqn`.
    pub fn has_subscriber(&self, fqn: &str) -> bool {
        self.links.iter().any(|link| link.accepts(fqn.as_bytes()))
    }

    /// How many subscriptions matching `fqn` reached us so far (each a subscriber whose
    /// connection completed): it changes when a (re)started subscriber can first be reached.
    pub fn subscriptions(&self, fqn: &str) -> u64 {
        self.subscriptions
            .iter()
            .filter(|(filter, _)| fqn.as_bytes().starts_with(filter))
            .map(|(_, count)| count)
            .sum()
    }

    /// Accepts every pending connection; greets each.
    fn accept(&mut self, core: &DataPath) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if let Err(e) = tune(SockRef::from(&stream)) {
                        tracing::debug!(%peer, error = %e, "subscriber connection refused");
                        continue;
                    }
                    let mut link = SubscriberLink {
                        stream,
                        peer,
                        handshake: Handshake::Greeting,
                        received: ReceiveBuffer::new(),
                        queue: SendQueue::default(),
                        filters: Vec::new(),
                    };
                    publisher_side(core).opening(&mut link.queue.bytes);
                    let _ = link.queue.flush(&mut link.stream);
                    self.links.push(link);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    return;
                }
            }
        }
    }

    /// Reads what link `index` sent (its greeting, READY, subscriptions) and writes what it
    /// has queued; false if the link is closed and must go. `changed` is set when its
    /// subscriptions changed.
    fn service(
        &mut self,
        index: usize,
        readable: bool,
        core: &DataPath,
        changed: &mut bool,
    ) -> bool {
        let mut subscribed = Vec::new();
        let alive = Self::service_link(&mut self.links[index], readable, core, &mut subscribed);
        for prefix in subscribed {
            *self.subscriptions.entry(prefix).or_default() += 1;
            // After the count it announces: a reader that sees the new total finds the count.
            core.counters
                .subscriptions_reached
                .fetch_add(1, std::sync::atomic::Ordering::Release);
            *changed = true;
        }
        alive
    }

    /// [`service`](Self::service) of one link; the prefixes it newly subscribed to go to
    /// `subscribed`.
    fn service_link(
        link: &mut SubscriberLink,
        readable: bool,
        core: &DataPath,
        subscribed: &mut Vec<Vec<u8>>,
    ) -> bool {
        if readable {
            match link.received.fill(&mut link.stream) {
                Ok(true) => {}
                Ok(false) | Err(_) => return false,
            }
            let mut reply = Vec::new();
            let side = publisher_side(core);
            if let Err(e) = handshake(&mut link.handshake, &mut link.received, side, &mut reply) {
                if e.is_refusal() {
                    bump(&core.counters.connections_refused);
                }
                // Best effort: the ERROR that says why, before the connection closes.
                link.queue.bytes.extend_from_slice(&reply);
                let _ = link.queue.flush(&mut link.stream);
                core.offenders.dropped(
                    &format!("subscriber {}", link.peer),
                    "a ZMTP connection",
                    &e,
                );
                return false;
            }
            while link.handshake == Handshake::Done {
                let frame = match zmtp::decode_frame(link.received.data()) {
                    Ok(Some(frame)) => frame,
                    Ok(None) => break,
                    Err(e) => {
                        core.offenders.dropped(
                            &format!("subscriber {}", link.peer),
                            "a ZMTP frame",
                            &e,
                        );
                        return false;
                    }
                };
                let (frame, len) = frame;
                let subscription = if frame.command {
                    match zmtp::decode_command(frame.body) {
                        Ok(zmtp::Command::Subscription { prefix, subscribe }) => {
                            Some((prefix.to_vec(), subscribe))
                        }
                        Ok(zmtp::Command::Ping { context }) => {
                            zmtp::encode_pong(&mut reply, context);
                            None
                        }
                        Ok(zmtp::Command::Error(why)) => {
                            tracing::debug!(peer = %link.peer, %why, "subscriber gave up");
                            return false;
                        }
                        _ => None,
                    }
                } else {
                    // ZMTP 3.0: a one-frame message, 1 + prefix subscribes, 0 + prefix cancels.
                    match frame.body.split_first() {
                        Some((&kind @ (0 | 1), prefix)) if !frame.more => {
                            Some((prefix.to_vec(), kind == 1))
                        }
                        _ => None,
                    }
                };
                link.received.consume(len);
                match subscription {
                    Some((prefix, true)) if !link.filters.contains(&prefix) => {
                        link.filters.push(prefix.clone());
                        subscribed.push(prefix);
                    }
                    Some((_, true)) => {}
                    Some((prefix, false)) => link.filters.retain(|filter| *filter != prefix),
                    None => {}
                }
            }
            if !reply.is_empty() {
                link.queue.bytes.extend_from_slice(&reply);
            }
        }
        link.queue.flush(&mut link.stream).is_ok()
    }

    /// Writes the queues until they are empty or `deadline` (a stopping node's last
    /// publications).
    fn drain(&mut self, deadline: Instant) {
        while Instant::now() < deadline {
            let mut fds: Vec<libc::pollfd> = Vec::new();
            for link in &mut self.links {
                if matches!(link.queue.flush(&mut link.stream), Ok(false)) {
                    fds.push(pollfd(link.stream.as_raw_fd(), libc::POLLOUT));
                }
            }
            if fds.is_empty() {
                return;
            }
            poll(
                &mut fds,
                Some(deadline.saturating_duration_since(Instant::now())),
            );
        }
    }
}

// ---- receiving: remote publishers we take data from ----------------------------------------

/// A remote publisher's address and our connection to it.
struct PublisherLink {
    address: String,
    connection: Option<Connection>,
    /// When to try again after a failed or lost connection.
    retry_at: Option<Instant>,
    /// Set when discovery no longer wants it: closed at this instant unless wanted again.
    close_at: Option<Instant>,
}

struct Connection {
    stream: TcpStream,
    /// The non-blocking connect has completed.
    connected: bool,
    handshake: Handshake,
    received: ReceiveBuffer,
    /// The messages of the current read, and the topics seen while marking the superseded
    /// ones (both reused: a read allocates nothing).
    batch: Vec<Found>,
    /// Per topic of the current read: its range in the data, its newest message's and its
    /// last visited message's places in the batch.
    newer_topics: Vec<(usize, usize, usize, usize)>,
    queue: SendQueue,
    /// The handshake failed on security: retried after [`REFUSED_RETRY_INTERVAL`].
    refused: bool,
}

/// The receiving side of a node: the receive thread's alone.
pub(crate) struct Inbox {
    links: Vec<PublisherLink>,
    /// The topics we subscribe to (each a ZeroMQ filter sent to every publisher).
    filters: Vec<Vec<u8>>,
}

impl Inbox {
    pub fn new() -> Self {
        Inbox {
            links: Vec::new(),
            filters: Vec::new(),
        }
    }

    fn apply(&mut self, command: Command, now: Instant) {
        match command {
            Command::Connect(address) => {
                match self.links.iter_mut().find(|link| link.address == address) {
                    // Still connected: the delayed disconnect is simply cancelled.
                    Some(link) => link.close_at = None,
                    None => self.links.push(PublisherLink {
                        address,
                        connection: None,
                        retry_at: Some(now),
                        close_at: None,
                    }),
                }
            }
            Command::Disconnect(address) => {
                if let Some(link) = self.links.iter_mut().find(|link| link.address == address) {
                    link.close_at.get_or_insert(now + DISCONNECT_GRACE);
                }
            }
            Command::Filter(topic) => {
                let filter = topic.into_bytes();
                if !self.filters.contains(&filter) {
                    self.send_to_all(&filter, true);
                    self.filters.push(filter);
                }
            }
            Command::Unfilter(topic) => {
                let filter = topic.into_bytes();
                if self.filters.contains(&filter) {
                    self.filters.retain(|f| *f != filter);
                    self.send_to_all(&filter, false);
                }
            }
            Command::Flush | Command::Stop => {}
        }
    }

    fn send_to_all(&mut self, filter: &[u8], subscribe: bool) {
        for connection in self.links.iter_mut().filter_map(|l| l.connection.as_mut()) {
            if connection.handshake == Handshake::Done {
                zmtp::encode_subscription(&mut connection.queue.bytes, filter, subscribe);
                let _ = connection.queue.flush(&mut connection.stream);
            }
        }
    }

    /// Opens the connections whose retry came, closes the ones whose grace ended.
    fn maintain(&mut self, now: Instant, core: &DataPath) {
        self.links
            .retain(|link| link.close_at.is_none_or(|at| now < at));
        for link in &mut self.links {
            if link.connection.is_some() || link.retry_at.is_none_or(|at| now < at) {
                continue;
            }
            link.retry_at = None;
            match connect(&link.address) {
                Ok(stream) => {
                    let mut queue = SendQueue::default();
                    subscriber_side(core).opening(&mut queue.bytes);
                    link.connection = Some(Connection {
                        stream,
                        connected: false,
                        handshake: Handshake::Greeting,
                        received: ReceiveBuffer::new(),
                        batch: Vec::new(),
                        newer_topics: Vec::new(),
                        queue,
                        refused: false,
                    });
                }
                Err(e) => {
                    core.offenders.dropped(&link.address, "a connection", &e);
                    link.retry_at = Some(now + RECONNECT_INTERVAL);
                }
            }
        }
    }

    /// The next instant [`maintain`](Self::maintain) has work.
    fn next_deadline(&self) -> Option<Instant> {
        self.links
            .iter()
            .flat_map(|link| [link.retry_at, link.close_at])
            .flatten()
            .min()
    }

    /// Services link `index` after `poll` said `events`: completes its connect, greets,
    /// reads and delivers its messages. A failure drops the connection and schedules a retry.
    fn service(&mut self, index: usize, events: libc::c_short, core: &DataPath) {
        let filters = &self.filters;
        let link = &mut self.links[index];
        let Some(connection) = link.connection.as_mut() else {
            return;
        };
        let result = service_connection(connection, events, filters, core, &link.address);
        if let Err(why) = result {
            match why {
                // Said at every refusal: the retry interval already spaces them 5 s apart.
                Some(why) if connection.refused => tracing::warn!(
                    "gz-transport: {} refused our subscription to {}: {why} (asked again every \
                     {} s; counted as connections_refused)",
                    link.address,
                    topic_list(filters),
                    REFUSED_RETRY_INTERVAL.as_secs()
                ),
                Some(why) => core
                    .offenders
                    .dropped(&link.address, "a ZMTP connection", &why),
                None => {}
            }
            let _ = connection.stream.shutdown(Shutdown::Both);
            // Refused for its security (another mechanism, other credentials): it will not
            // change its mind at once, so ask again only now and then.
            let retry = if connection.refused {
                REFUSED_RETRY_INTERVAL
            } else {
                RECONNECT_INTERVAL
            };
            link.connection = None;
            link.retry_at = Some(Instant::now() + retry);
        }
    }
}

/// The topics of subscription filters (`@partition@topic`), for a log line.
fn topic_list(filters: &[Vec<u8>]) -> String {
    let topics: Vec<String> = filters
        .iter()
        .map(|filter| {
            let filter = String::from_utf8_lossy(filter);
            filter.rsplit('@').next().unwrap_or_default().to_owned()
        })
        .collect();
    match topics.is_empty() {
        true => "no topic yet".to_owned(),
        false => topics.join(", "),
    }
}

/// Our listening socket's side of a handshake: the PUB, PLAIN's server when credentials are set.
fn publisher_side(core: &DataPath) -> Side<'_> {
    Side {
        socket_type: "PUB",
        credentials: core.credentials.as_ref(),
        server: true,
    }
}

/// Our connections' side: the SUB, PLAIN's client when credentials are set.
fn subscriber_side(core: &DataPath) -> Side<'_> {
    Side {
        socket_type: "SUB",
        credentials: core.credentials.as_ref(),
        server: false,
    }
}

/// A non-blocking connect to `tcp://host:port`.
fn connect(address: &str) -> io::Result<TcpStream> {
    let target = crate::net::tcp_target(address)?;
    let socket = Socket::new(Domain::for_address(target), Type::STREAM, None)?;
    tune(SockRef::from(&socket))?;
    match socket.connect(&target.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(socket.into())
}

/// `Err(Some(why))`: the peer broke the protocol; `Err(None)`: the connection ended.
fn service_connection(
    connection: &mut Connection,
    events: libc::c_short,
    filters: &[Vec<u8>],
    core: &DataPath,
    address: &str,
) -> Result<(), Option<String>> {
    if !connection.connected {
        if events & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) == 0 {
            return Ok(());
        }
        if let Some(e) = connection.stream.take_error().ok().flatten() {
            tracing::debug!(%address, error = %e, "connect failed");
            return Err(None);
        }
        connection.connected = true;
    }
    if events & libc::POLLIN != 0 || events & (libc::POLLERR | libc::POLLHUP) != 0 {
        match connection.received.fill(&mut connection.stream) {
            Ok(true) => {}
            Ok(false) | Err(_) => {
                if connection.handshake == Handshake::Welcome {
                    // A PLAIN server may close on credentials it does not take, without ERROR.
                    connection.refused = true;
                    bump(&core.counters.connections_refused);
                    return Err(Some(
                        ZmtpError::Refused("closed the connection".into()).to_string(),
                    ));
                }
                deliver_all(connection, core, address).map_err(Some)?;
                return Err(None);
            }
        }
        let was_done = connection.handshake == Handshake::Done;
        let mut reply = Vec::new();
        if let Err(e) = handshake(
            &mut connection.handshake,
            &mut connection.received,
            subscriber_side(core),
            &mut reply,
        ) {
            if e.is_refusal() {
                connection.refused = true;
                bump(&core.counters.connections_refused);
            }
            return Err(Some(e.to_string()));
        }
        connection.queue.bytes.extend_from_slice(&reply);
        if !was_done && connection.handshake == Handshake::Done {
            // Subscribed once the publisher is READY, as a libzmq SUB does.
            for filter in filters {
                zmtp::encode_subscription(&mut connection.queue.bytes, filter, true);
            }
        }
        deliver_all(connection, core, address).map_err(Some)?;
    }
    connection
        .queue
        .flush(&mut connection.stream)
        .map_err(|_| None)?;
    Ok(())
}

/// Delivers every complete message in the connection's buffer, in order, and answers its
/// PINGs. All of them are found first, so that a message followed in the same read by a newer
/// one on its topic is known as superseded ([`Delivery::Latest`] subscriptions skip it).
fn deliver_all(connection: &mut Connection, core: &DataPath, address: &str) -> Result<(), String> {
    if connection.handshake != Handshake::Done {
        return Ok(());
    }
    let data = connection.received.data();
    let batch = &mut connection.batch;
    batch.clear();
    let mut at = 0;
    // A malformed message closes the connection, after the complete ones before it.
    let outcome = loop {
        match next_message(data, at, &mut connection.queue.bytes) {
            Ok(Some(found)) => {
                at = found.end;
                batch.push(found);
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if batch.len() > 1 {
        // The newest message of each topic after this one (its topic as a range of `data`,
        // its place in the batch, and the place of the one visited last, which gets this
        // one as its `older`; the list is kept from read to read).
        let newer = &mut connection.newer_topics;
        newer.clear();
        for index in (0..batch.len()).rev() {
            if batch[index].count == 0 {
                continue;
            }
            let (start, end) = batch[index].frames[0];
            let topic = &data[start..end];
            match newer.iter_mut().find(|(s, e, _, _)| &data[*s..*e] == topic) {
                Some((_, _, newest, visited)) => {
                    batch[index].superseded = true;
                    batch[*newest].supersedes += 1;
                    batch[*visited].older = Some(index);
                    *visited = index;
                }
                None => newer.push((start, end, index, index)),
            }
        }
    }
    for index in 0..batch.len() {
        if batch[index].count > 0 {
            deliver(core, data, batch, index, address);
        }
    }
    connection.received.consume(at);
    outcome
}

/// A complete message (or a command between messages) found in a connection's buffer.
#[derive(Clone, Copy, Debug)]
struct Found {
    /// Where it ends in the buffer's data.
    end: usize,
    /// Its first four frames' bodies, as ranges of the buffer's data.
    frames: [(usize, usize); 4],
    /// How many frames it had (gz-transport's have four; more are counted, not kept); zero
    /// for a command.
    count: usize,
    /// A newer message on the same topic follows it in the buffer.
    superseded: bool,
    /// How many messages before it in the buffer it supersedes.
    supersedes: u64,
    /// The message before it on the same topic in the buffer (the newest one it supersedes).
    older: Option<usize>,
}

/// The message starting at `data[at..]`, `None` while it is incomplete; a PING is answered into
/// `pong`.
fn next_message(data: &[u8], at: usize, pong: &mut Vec<u8>) -> Result<Option<Found>, String> {
    let mut found = Found {
        end: at,
        frames: [(0, 0); 4],
        count: 0,
        superseded: false,
        supersedes: 0,
        older: None,
    };
    loop {
        let Some((frame, len)) =
            zmtp::decode_frame(&data[found.end..]).map_err(|e| e.to_string())?
        else {
            return Ok(None);
        };
        // The body is the frame's tail.
        let body_end = found.end + len;
        let body = (body_end - frame.body.len(), body_end);
        found.end = body_end;
        if frame.command {
            if let zmtp::Command::Ping { context } =
                zmtp::decode_command(frame.body).map_err(|e| e.to_string())?
            {
                zmtp::encode_pong(pong, context);
            }
            if found.count == 0 {
                return Ok(Some(found)); // a command between messages: taken on its own
            }
            return Err("a command inside a multipart message".into());
        }
        if let Some(slot) = found.frames.get_mut(found.count) {
            *slot = body;
        }
        found.count += 1;
        if !frame.more {
            return Ok(Some(found));
        }
    }
}

/// The first four frames of the message at `found`, in the buffer's `data`.
fn frames_of<'d>(data: &'d [u8], found: &Found) -> [&'d [u8]; 4] {
    found.frames.map(|(start, end)| &data[start..end])
}

/// Decodes a message of `count` frames whose first four are `frames`.
fn decode<'f>(
    frames: &'f [&[u8]; 4],
    count: usize,
) -> Result<DataMessage<'f>, crate::wire::WireError> {
    if count == frames.len() {
        DataMessage::decode(frames)
    } else {
        Err(crate::wire::WireError::FrameCount(count))
    }
}

/// Hands message `index` of the read (`batch`, in the buffer's `data`) to the subscriptions of
/// its topic. A [`Delivery::Latest`] subscription skips it if a newer one on its topic follows;
/// if the newest is not taken (it does not decode, or has the wrong type) it gets the newest
/// older one that is, so a bad message never hides a good one.
fn deliver(core: &DataPath, data: &[u8], batch: &[Found], index: usize, sender: &str) {
    let found = &batch[index];
    let superseded = found.superseded;
    let frames = frames_of(data, found);
    let msg = match decode(&frames, found.count) {
        Ok(m) => m,
        Err(e) => {
            bump(&core.counters.messages_dropped);
            core.offenders.dropped(sender, "a data message", &e);
            if found.older.is_some() {
                deliver_older_to_latest(core, data, batch, found.older);
            }
            return;
        }
    };
    // A ZeroMQ filter is a prefix match: `/x` also lets `/x2` through. Exact topics only.
    let Some(entries) = core.subscribers_of(msg.topic) else {
        return;
    };
    bump(&core.counters.messages_received);
    if superseded
        && entries
            .iter()
            .all(|entry| entry.delivery == Delivery::Latest)
    {
        // Nobody takes it: not even its MessageInfo is made.
        core.counters
            .messages_superseded
            .fetch_add(entries.len() as u64, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    let mut info = core.message_info(&msg);
    info.superseded = found.supersedes;
    for entry in entries.iter() {
        if superseded && entry.delivery == Delivery::Latest {
            bump(&core.counters.messages_superseded);
            continue;
        }
        if !hand_over(core, entry, &msg, &info) && entry.delivery == Delivery::Latest {
            take_older(core, data, batch, found.older, entry);
        }
    }
}

/// The newest message of a topic in a read did not decode at all: every Latest subscription
/// of the topic of the newest older one that does gets that one (or an older one it takes).
fn deliver_older_to_latest(
    core: &DataPath,
    data: &[u8],
    batch: &[Found],
    mut older: Option<usize>,
) {
    while let Some(index) = older {
        let frames = frames_of(data, &batch[index]);
        if let Ok(msg) = decode(&frames, batch[index].count) {
            let Some(entries) = core.subscribers_of(msg.topic) else {
                return;
            };
            for entry in entries.iter().filter(|e| e.delivery == Delivery::Latest) {
                take_older(core, data, batch, Some(index), entry);
            }
            return;
        }
        older = batch[index].older;
    }
}

/// For a Latest subscription (`entry`) that did not take a newer message of its topic: hands
/// it `older`, the newest message it skipped, then the next older one, until it takes one.
/// Each handed over is no longer counted as superseded.
fn take_older(
    core: &DataPath,
    data: &[u8],
    batch: &[Found],
    mut older: Option<usize>,
    entry: &SubEntry,
) {
    while let Some(index) = older {
        older = batch[index].older;
        // Undecodable ones were counted when they were met.
        let frames = frames_of(data, &batch[index]);
        let Ok(msg) = decode(&frames, batch[index].count) else {
            continue;
        };
        core.counters
            .messages_superseded
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        let mut info = core.message_info(&msg);
        // What it supersedes: the messages of its topic still before it.
        info.superseded = std::iter::successors(older, |&i| batch[i].older).count() as u64;
        if hand_over(core, entry, &msg, &info) {
            return;
        }
    }
}

/// Calls `entry`'s callback with `msg`, counting what goes wrong; whether it took the message
/// (a callback that panicked did).
fn hand_over(core: &DataPath, entry: &SubEntry, msg: &DataMessage<'_>, info: &MessageInfo) -> bool {
    if !entry.accepts(msg.type_name) {
        bump(&core.counters.type_mismatches);
        let why = format!(
            "type {} on {}, subscribed as another type",
            msg.type_name, info.topic
        );
        core.offenders
            .dropped(msg.address, "a message of the wrong type", &why);
        return false;
    }
    let mut callback = entry.callback.lock();
    match catch_unwind(AssertUnwindSafe(|| (*callback)(msg.payload, info))) {
        Ok(true) => true,
        Ok(false) => {
            bump(&core.counters.decode_errors);
            let why = format!(
                "the payload on {} does not decode as {}",
                info.topic, msg.type_name
            );
            core.offenders.dropped(msg.address, "a message", &why);
            false
        }
        Err(_) => {
            bump(&core.counters.callback_panics);
            tracing::error!(topic = %info.topic, "subscription callback panicked");
            true
        }
    }
}

// ---- the receive thread ----------------------------------------------------------------------

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// `poll(2)` on `fds` for at most `timeout` (`None`: no limit); EINTR is a return.
fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) {
    let ms = timeout.map_or(-1, |t| {
        // Rounded up: a deadline is never woken for early.
        i32::try_from(t.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
    });
    // SAFETY: `fds` is a valid, exclusively borrowed array of pollfd.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
}

/// What the receive thread watches, by position in its poll set.
enum Watched {
    Wake,
    Listener,
    Subscriber(usize),
    Publisher(usize),
}

/// The receive thread: runs until a `Stop` command, then writes what publishers still queue
/// (for at most `linger`).
pub(crate) fn receive_loop(
    core: Arc<DataPath>,
    mut wake: UnixStream,
    linger: Duration,
    subscriptions_changed: impl Fn(),
) {
    let mut inbox = Inbox::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let mut watched: Vec<Watched> = Vec::new();
    loop {
        let now = Instant::now();
        for command in core.take_commands() {
            if matches!(command, Command::Stop) {
                core.outbox.lock().drain(Instant::now() + linger);
                return;
            }
            inbox.apply(command, now);
        }
        inbox.maintain(now, &core);

        fds.clear();
        watched.clear();
        fds.push(pollfd(wake.as_raw_fd(), libc::POLLIN));
        watched.push(Watched::Wake);
        {
            let outbox = core.outbox.lock();
            fds.push(pollfd(outbox.listener.as_raw_fd(), libc::POLLIN));
            watched.push(Watched::Listener);
            for (k, link) in outbox.links.iter().enumerate() {
                let out = if link.queue.is_empty() {
                    0
                } else {
                    libc::POLLOUT
                };
                fds.push(pollfd(link.stream.as_raw_fd(), libc::POLLIN | out));
                watched.push(Watched::Subscriber(k));
            }
        }
        for (k, link) in inbox.links.iter().enumerate() {
            if let Some(connection) = &link.connection {
                let out = if !connection.connected || !connection.queue.is_empty() {
                    libc::POLLOUT
                } else {
                    0
                };
                fds.push(pollfd(connection.stream.as_raw_fd(), libc::POLLIN | out));
                watched.push(Watched::Publisher(k));
            }
        }
        let timeout = inbox
            .next_deadline()
            .map(|at| at.saturating_duration_since(Instant::now()));
        poll(&mut fds, timeout);

        // Data first: what publishers sent is delivered before anything else changes.
        for (fd, what) in fds.iter().zip(&watched) {
            if let (Watched::Publisher(k), events) = (what, fd.revents) {
                if events != 0 {
                    inbox.service(*k, events, &core);
                }
            }
        }
        let mut changed = false;
        {
            let mut outbox = core.outbox.lock();
            let mut keep = vec![true; outbox.links.len()];
            let mut accept = false;
            for (fd, what) in fds.iter().zip(&watched) {
                match what {
                    Watched::Subscriber(k) if fd.revents != 0 => {
                        let readable =
                            fd.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0;
                        keep[*k] = outbox.service(*k, readable, &core, &mut changed);
                    }
                    Watched::Listener => accept = fd.revents != 0,
                    _ => {}
                }
            }
            let mut kept = keep.iter();
            outbox.links.retain(|_| *kept.next().unwrap_or(&true));
            changed |= keep.contains(&false);
            if accept {
                outbox.accept(&core);
            }
        }
        if changed {
            subscriptions_changed();
        }
        if fds[0].revents != 0 {
            let _ = wake.read(&mut [0u8; 64]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receive_buffer_compacts_and_grows_for_a_large_message() {
        let (mut a, b) = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            (listener.accept().unwrap().0, a)
        };
        let mut b = b;
        a.set_nonblocking(true).unwrap();
        let mut buffer = ReceiveBuffer::new();
        let big = vec![9u8; 3 * READ_CHUNK + 5];
        b.write_all(&big).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while buffer.data().len() < big.len() && Instant::now() < deadline {
            assert!(buffer.fill(&mut a).unwrap());
        }
        assert_eq!(buffer.data(), &big[..]);
        buffer.consume(big.len() - 1);
        assert_eq!(buffer.data(), &[9]);
        buffer.consume(1);
        assert_eq!((buffer.start, buffer.end), (0, 0));
        drop(b);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match buffer.fill(&mut a) {
                Ok(false) => break,
                Ok(true) if Instant::now() < deadline => continue,
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn every_connection_gets_keepalive_and_no_nagle_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = connect(&format!("tcp://{}", listener.local_addr().unwrap())).unwrap();
        let socket = SockRef::from(&stream);
        assert!(socket.keepalive().unwrap());
        assert!(socket.nodelay().unwrap());
        assert_eq!(socket.keepalive_time().unwrap(), KEEPALIVE_IDLE);
        assert_eq!(socket.keepalive_interval().unwrap(), KEEPALIVE_INTERVAL);
        assert_eq!(socket.keepalive_retries().unwrap(), KEEPALIVE_PROBES);
    }
}
