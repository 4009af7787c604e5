//! Which advertisements concern this node: gz-transport's partition and scope rules, and the
//! addresses we are willing to connect to. One rule for topics ([`crate::discovery`]) and services
//! ([`crate::service`]).

use std::net::Ipv4Addr;

use crate::net;
use crate::wire::{Publisher, Scope};

/// Why an advertisement of another process does not concern us.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotOurs {
    /// Another partition, or a scope that hides it from us: nothing wrong with it.
    Elsewhere,
    /// Its address is not one we may connect to (the reason).
    BadAddress(&'static str),
    /// A scope value gz-transport does not define.
    UnknownScope,
}

/// Whether publisher record `p` (a topic's or a service's), of another process, is visible to
/// a node of partition `prefix` (`@/<partition>@`) on `interfaces`: same partition, a valid
/// address, and a scope that reaches us (ALL; HOST from an address of this host; PROCESS never).
pub(crate) fn visible(p: &Publisher, prefix: &str, interfaces: &[Ipv4Addr]) -> Result<(), NotOurs> {
    if !p.topic.starts_with(prefix) {
        return Err(NotOurs::Elsewhere);
    }
    check_address(&p.address).map_err(NotOurs::BadAddress)?;
    match Scope::try_from(p.scope) {
        Ok(Scope::All) => Ok(()),
        Ok(Scope::Host)
            if address_host(&p.address).is_some_and(|ip| net::is_local_ip(ip, interfaces)) =>
        {
            Ok(())
        }
        Ok(Scope::Host | Scope::Process) => Err(NotOurs::Elsewhere),
        Err(_) => Err(NotOurs::UnknownScope),
    }
}

/// Whether `address` is one we may connect to: `tcp://host:port`, as gz-transport advertises,
/// with nothing a C string or an address parser chokes on (a NUL byte once made the libzmq
/// binding panic, which a hostile ADVERTISE used to kill the receive thread).
pub(crate) fn check_address(address: &str) -> Result<(), &'static str> {
    let rest = address
        .strip_prefix("tcp://")
        .ok_or("is not tcp://host:port")?;
    let (host, port) = rest.rsplit_once(':').ok_or("has no port")?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err("has no valid host and port");
    }
    if address
        .chars()
        .any(|c| c == '\0' || c.is_whitespace() || c.is_control())
    {
        return Err("holds a NUL, control or white-space character");
    }
    Ok(())
}

/// The host of a `tcp://host:port` address.
pub(crate) fn address_host(address: &str) -> Option<Ipv4Addr> {
    let rest = address.strip_prefix("tcp://")?;
    let (host, _port) = rest.rsplit_once(':')?;
    host.parse().ok()
}
