//! The discovery thread of a node: waits on the UDP socket and a wake-up pipe, handles
//! datagrams as they come, and every [`HEARTBEAT_INTERVAL`] sends heartbeats and
//! re-advertisements and expires silent peers. (The other thread, the receive thread, is the
//! data plane's: [`crate::io::receive_loop`].)

use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::{Core, HEARTBEAT_INTERVAL};

/// Longest sleep of the discovery thread, so expiry is checked at least this often.
const MAX_DISCOVERY_WAIT: Duration = Duration::from_millis(250);

pub(crate) fn discovery_loop(core: Arc<Core>, mut wake: UnixStream) {
    let mut buf = vec![0u8; 65536];
    let mut next_tick = Instant::now();
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
        let mut fds = [
            libc::pollfd {
                fd: core.disc.recv.as_raw_fd(),
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
