//! The two threads of a node.
//!
//! * Discovery: waits on the UDP socket, a wake-up pipe and the publisher socket; handles
//!   datagrams as they come, takes the subscription filters the publisher socket reports, and
//!   every [`HEARTBEAT_INTERVAL`] sends heartbeats/re-advertisements and expires silent peers.
//! * Receive: owns the ZeroMQ SUB socket (ZeroMQ sockets are not thread-safe), waits on it and
//!   on the inproc control socket that carries connect/subscribe commands, and runs the
//!   subscription callbacks. Callbacks may call any node method, `publish` included.

use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::{bump, Command, Core, HEARTBEAT_INTERVAL};
use crate::wire::DataMessage;

/// Longest sleep of the discovery thread, so expiry is checked at least this often.
const MAX_DISCOVERY_WAIT: Duration = Duration::from_millis(250);

pub(crate) fn discovery_loop(core: Arc<Core>, mut wake: UnixStream) {
    let mut buf = vec![0u8; 65536];
    let mut next_tick = Instant::now();
    let publisher_fd = core.publisher_fd();
    while !core.is_shutting_down() {
        let now = Instant::now();
        if now >= next_tick {
            core.tick(now);
            next_tick += HEARTBEAT_INTERVAL;
            if next_tick < now {
                next_tick = now + HEARTBEAT_INTERVAL; // we were stalled; don't burst
            }
        } else {
            core.expire(now);
        }
        let wait = next_tick
            .saturating_duration_since(Instant::now())
            .min(MAX_DISCOVERY_WAIT);
        let mut items = [
            zmq::PollItem::from_fd(core.disc.recv.as_raw_fd(), zmq::POLLIN),
            zmq::PollItem::from_fd(wake.as_raw_fd(), zmq::POLLIN),
            zmq::PollItem::from_fd(publisher_fd.unwrap_or(-1), zmq::POLLIN),
        ];
        let polled = if publisher_fd.is_some() { 3 } else { 2 };
        if let Err(e) = zmq::poll(&mut items[..polled], wait.as_millis() as i64) {
            tracing::warn!(error = %e, "discovery poll failed");
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if items[1].is_readable() {
            let _ = wake.read(&mut [0u8; 16]);
        }
        // Also when the fd stayed quiet: a publish on another thread may have processed the
        // socket's commands (ZMQ_FD is edge-like), leaving the filters for us to take.
        core.take_wire_filters();
        if items[0].is_readable() {
            loop {
                match core.disc.recv.recv_from(&mut buf) {
                    Ok((n, from)) => core.handle_datagram(&buf[..n], from, Instant::now()),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::debug!(error = %e, "discovery receive failed");
                        break;
                    }
                }
            }
        }
    }
}

/// How long a SUB connection outlives the publisher that made us open it. A publisher often
/// sends its last messages just before UNADVERTISE/BYE; disconnecting at once would throw
/// away what is still queued in the pipe (and libzmq 4.3 can abort when a pipe is torn down
/// mid-message).
const DISCONNECT_GRACE: Duration = Duration::from_secs(2);

pub(crate) fn receive_loop(core: Arc<Core>, sub: zmq::Socket, control: zmq::Socket) {
    // Addresses waiting for their delayed disconnect.
    let mut lingering: Vec<(String, Instant)> = Vec::new();
    loop {
        let timeout = lingering
            .iter()
            .map(|(_, at)| at.saturating_duration_since(Instant::now()).as_millis() as i64 + 1)
            .min()
            .unwrap_or(-1);
        let mut items = [
            sub.as_poll_item(zmq::POLLIN),
            control.as_poll_item(zmq::POLLIN),
        ];
        if let Err(e) = zmq::poll(&mut items, timeout) {
            if e == zmq::Error::ETERM {
                return;
            }
            tracing::warn!(error = %e, "receive poll failed");
            continue;
        }
        // Data first, so nothing already received is lost to a disconnect below.
        if items[0].is_readable() {
            while let Ok(frames) = sub.recv_multipart(zmq::DONTWAIT) {
                deliver(&core, &frames);
            }
        }
        if items[1].is_readable() {
            while let Ok(cmd) = control.recv_bytes(zmq::DONTWAIT) {
                if !apply_command(&sub, &cmd, &mut lingering) {
                    return;
                }
            }
        }
        let now = Instant::now();
        lingering.retain(|(address, at)| {
            if *at > now {
                return true;
            }
            if let Err(e) = sub.disconnect(address) {
                tracing::debug!(%address, error = %e, "SUB disconnect failed");
            }
            false
        });
    }
}

/// Apply one control command to the SUB socket; false means stop.
fn apply_command(sub: &zmq::Socket, cmd: &[u8], lingering: &mut Vec<(String, Instant)>) -> bool {
    let Some((&op, arg)) = cmd.split_first() else {
        return true;
    };
    // The zmq binding panics on an endpoint with a NUL byte; discovery never lets one through,
    // and the receive thread must not die if it did.
    if matches!(op, Command::CONNECT | Command::DISCONNECT) && arg.contains(&0) {
        tracing::debug!(op = %(op as char), "SUB socket command with a NUL byte ignored");
        return true;
    }
    let arg_str = String::from_utf8_lossy(arg);
    let result = match op {
        Command::CONNECT => {
            let before = lingering.len();
            lingering.retain(|(a, _)| *a != arg_str);
            if lingering.len() < before {
                Ok(()) // still connected: the delayed disconnect is simply cancelled
            } else {
                sub.connect(&arg_str)
            }
        }
        Command::DISCONNECT => {
            lingering.push((arg_str.to_string(), Instant::now() + DISCONNECT_GRACE));
            Ok(())
        }
        Command::FILTER => sub.set_subscribe(arg),
        Command::UNFILTER => sub.set_unsubscribe(arg),
        Command::STOP => return false,
        _ => Ok(()),
    };
    if let Err(e) = result {
        tracing::debug!(op = %(op as char), arg = %arg_str, error = %e, "SUB socket command failed");
    }
    true
}

fn deliver(core: &Core, frames: &[Vec<u8>]) {
    let msg = match DataMessage::decode(frames) {
        Ok(m) => m,
        Err(e) => {
            bump(&core.counters.messages_dropped);
            // The second frame names the publisher, when it is there and readable.
            let sender = frames
                .get(1)
                .and_then(|address| std::str::from_utf8(address).ok())
                .filter(|address| !address.is_empty())
                .unwrap_or("an unnamed publisher");
            core.offenders.dropped(sender, "a data message", &e);
            return;
        }
    };
    // The SUB filter is a prefix match: `/x` also lets `/x2` through. Exact topics only.
    let Some(entries) = core.subscribers_of(msg.topic) else {
        return;
    };
    bump(&core.counters.messages_received);
    let info = core.message_info(&msg);
    for entry in entries.iter() {
        if !entry.accepts(msg.type_name) {
            bump(&core.counters.type_mismatches);
            let why = format!(
                "type {} on {}, subscribed as another type",
                msg.type_name, info.topic
            );
            core.offenders
                .dropped(msg.address, "a message of the wrong type", &why);
            continue;
        }
        let mut callback = entry.callback.lock();
        match catch_unwind(AssertUnwindSafe(|| (*callback)(msg.payload, &info))) {
            Ok(true) => {}
            Ok(false) => {
                bump(&core.counters.decode_errors);
                let why = format!(
                    "the payload on {} does not decode as {}",
                    info.topic, msg.type_name
                );
                core.offenders.dropped(msg.address, "a message", &why);
            }
            Err(_) => {
                bump(&core.counters.callback_panics);
                tracing::error!(topic = %info.topic, "subscription callback panicked");
            }
        }
    }
}
