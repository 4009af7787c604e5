//! The discovery threads of a node — topics' ([`crate::discovery`]) and, once services are used,
//! services' (`service::discovery`) — both run [`serve_discovery`]: wait on a UDP socket and a
//! wake-up pipe, handle datagrams as they come, and every [`HEARTBEAT_INTERVAL`] send
//! heartbeats and re-advertisements and expire silent peers. (The other thread, the receive
//! thread, is the data plane's: [`crate::io::receive_loop`].)

use std::collections::HashMap;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A thread's wake-up pipe, both ends non-blocking: (the end written to, the end the thread
/// polls).
pub(crate) fn wake_pair() -> std::io::Result<(UnixStream, UnixStream)> {
    let (waker, woken) = UnixStream::pair()?;
    waker.set_nonblocking(true)?;
    woken.set_nonblocking(true)?;
    Ok((waker, woken))
}

/// A peer that sent nothing for this long is considered gone (gz-transport's silence interval).
pub(crate) const SILENCE_INTERVAL: Duration = Duration::from_secs(3);

/// The processes of `peers` (process UUID → last heard from) silent for longer than
/// [`SILENCE_INTERVAL`] at `now`: to forget, for topics and services alike.
pub(crate) fn silent_peers(peers: &HashMap<String, Instant>, now: Instant) -> Vec<String> {
    peers
        .iter()
        .filter(|(_, seen)| now.saturating_duration_since(**seen) > SILENCE_INTERVAL)
        .map(|(process_uuid, _)| process_uuid.clone())
        .collect()
}
/// Period of HEARTBEAT, re-ADVERTISE of our topics and re-SUBSCRIBE of unserved topics.
pub(crate) const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// One discovery thread until `stopped`: `tick` every [`HEARTBEAT_INTERVAL`], `between` at
/// most every `max_wait` in between (and once after each wake-up), `datagram` for each one
/// received on `socket` (non-blocking). It sleeps in `poll` otherwise.
pub(crate) fn serve_discovery(
    socket: &UdpSocket,
    mut wake: UnixStream,
    max_wait: Duration,
    stopped: impl Fn() -> bool,
    mut tick: impl FnMut(Instant),
    mut between: impl FnMut(Instant),
    mut datagram: impl FnMut(&[u8], SocketAddr, Instant),
) {
    let mut buf = vec![0u8; 65536];
    let mut next_tick = Instant::now();
    while !stopped() {
        let now = Instant::now();
        if now >= next_tick {
            tick(now);
            next_tick += HEARTBEAT_INTERVAL;
            if next_tick < now {
                next_tick = now + HEARTBEAT_INTERVAL; // we were stalled; don't burst
            }
        } else {
            between(now);
        }
        let wait = next_tick
            .saturating_duration_since(Instant::now())
            .min(max_wait);
        let mut fds = [
            libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfd; the timeout is bounded.
        let polled = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait.as_millis() as i32 + 1) };
        if polled < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                tracing::warn!(error = %e, "discovery poll failed");
                std::thread::sleep(Duration::from_millis(10));
            }
            continue;
        }
        if fds[1].revents != 0 {
            let _ = wake.read(&mut [0u8; 16]);
        }
        if fds[0].revents != 0 {
            loop {
                match socket.recv_from(&mut buf) {
                    Ok((n, from)) => datagram(&buf[..n], from, Instant::now()),
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
