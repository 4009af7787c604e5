//! Host facts (interfaces, hostname, user), the UDP multicast sockets of discovery, and the
//! socket address of a peer's `tcp://host:port`.

use std::ffi::CStr;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, ToSocketAddrs, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

/// The (first) socket address of `tcp://host:port` (or of `host:port`).
pub(crate) fn tcp_target(address: &str) -> io::Result<SocketAddr> {
    address
        .strip_prefix("tcp://")
        .unwrap_or(address)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no address for {address}")))
}

/// IPv4 addresses of the interfaces that are up and multicast-capable, non-loopback first;
/// `[127.0.0.1]` when there is none (a host without network still talks to itself).
pub(crate) fn multicast_interfaces() -> Vec<Ipv4Addr> {
    let mut found = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we only read and then free exactly once.
    unsafe {
        if libc::getifaddrs(&mut head) == 0 {
            let mut cur = head;
            while !cur.is_null() {
                let ifa = &*cur;
                let flags = ifa.ifa_flags;
                let up = flags & libc::IFF_UP as u32 != 0;
                let multicast = flags & libc::IFF_MULTICAST as u32 != 0;
                if up && multicast && !ifa.ifa_addr.is_null() {
                    let sa = &*ifa.ifa_addr;
                    if i32::from(sa.sa_family) == libc::AF_INET {
                        let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                        let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                        if !ip.is_loopback() && !found.contains(&ip) {
                            found.push(ip);
                        }
                    }
                }
                cur = ifa.ifa_next;
            }
            libc::freeifaddrs(head);
        }
    }
    if found.is_empty() {
        found.push(Ipv4Addr::LOCALHOST);
    }
    found
}

/// True if `ip` belongs to this host (any interface, or loopback).
pub(crate) fn is_local_ip(ip: Ipv4Addr, interfaces: &[Ipv4Addr]) -> bool {
    ip.is_loopback() || interfaces.contains(&ip) || multicast_interfaces().contains(&ip)
}

pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let name = ok
        .then(|| CStr::from_bytes_until_nul(&buf).ok())
        .flatten()
        .map(|c| c.to_string_lossy().into_owned());
    name.filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The login name of the effective user, as gz-transport's default partition uses it.
pub(crate) fn username() -> String {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; `result` is null or points at `pwd`,
    // whose string fields point into `buf`, which outlives their use here.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
        // SAFETY: pw_name is a NUL-terminated string inside `buf`.
        return unsafe { CStr::from_ptr(pwd.pw_name) }
            .to_string_lossy()
            .into_owned();
    }
    std::env::var("USER").unwrap_or_else(|_| "unknown".to_owned())
}

/// The discovery sockets of one participant: one receive socket bound to the discovery port
/// (shared with every other participant on the host through SO_REUSEADDR/SO_REUSEPORT) and
/// joined to the group on each interface, and one send socket per interface.
pub(crate) struct DiscoverySockets {
    pub recv: UdpSocket,
    send: Vec<UdpSocket>,
    dest: SocketAddrV4,
}

impl DiscoverySockets {
    pub fn open(group: Ipv4Addr, port: u16, interfaces: &[Ipv4Addr]) -> io::Result<Self> {
        let recv = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
        recv.set_reuse_address(true)?;
        recv.set_reuse_port(true)?;
        recv.bind(&SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port).into())?;
        let mut joined = 0;
        let mut last_err = None;
        for iface in interfaces {
            match recv.join_multicast_v4(&group, iface) {
                Ok(()) => joined += 1,
                Err(e) => {
                    tracing::debug!(%iface, %group, error = %e, "cannot join discovery group");
                    last_err = Some(e);
                }
            }
        }
        if joined == 0 {
            return Err(last_err.unwrap_or_else(|| io::Error::other("no interface to join")));
        }
        let mut send = Vec::new();
        for iface in interfaces {
            let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
            s.set_multicast_if_v4(iface)?;
            // TTL 1: discovery stays on the local network, as in gz-transport.
            s.set_multicast_ttl_v4(1)?;
            // Loop on: other participants on this host (and our other nodes) must hear us.
            s.set_multicast_loop_v4(true)?;
            s.bind(&SocketAddrV4::new(*iface, 0).into())?;
            send.push(s.into());
        }
        Ok(DiscoverySockets {
            recv: recv.into(),
            send,
            dest: SocketAddrV4::new(group, port),
        })
    }

    /// [`open`](Self::open) for a discovery thread, which polls: the receive socket
    /// non-blocking, a failure as [`Error::Discovery`](crate::Error::Discovery).
    pub fn open_polled(
        group: Ipv4Addr,
        port: u16,
        interfaces: &[Ipv4Addr],
    ) -> Result<Self, crate::Error> {
        let sockets =
            Self::open(group, port, interfaces).map_err(|source| crate::Error::Discovery {
                group: group.to_string(),
                port,
                source,
            })?;
        sockets.recv.set_nonblocking(true)?;
        Ok(sockets)
    }

    /// Send one datagram on every interface; failures are logged, not fatal (a later
    /// heartbeat repeats what matters).
    pub fn send(&self, datagram: &[u8]) {
        for s in &self.send {
            if let Err(e) = s.send_to(datagram, self.dest) {
                tracing::debug!(error = %e, "discovery send failed");
            }
        }
    }
}
