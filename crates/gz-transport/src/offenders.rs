//! Naming the senders of bad input once each.
//!
//! Every dropped datagram or frame is counted (see `TransportStats`); the first one of each
//! kind from each sender is also logged at WARN with the sender, later ones at debug only, so
//! a broken or hostile peer is named without flooding the log. The set of senders named is
//! bounded: invented addresses cannot grow it, or the log, without limit.

use std::collections::HashSet;
use std::fmt::Display;

use parking_lot::Mutex;

/// Senders named at WARN, at most; later ones are logged at debug only.
const NAMED_OFFENDERS: usize = 64;

#[derive(Default)]
pub(crate) struct Offenders {
    named: Mutex<HashSet<(String, &'static str)>>,
}

impl Offenders {
    /// Logs that input of kind `what` from `sender` was dropped because of `why`: at WARN
    /// the first time for this sender and kind, at debug afterwards.
    pub fn dropped(&self, sender: &str, what: &'static str, why: &dyn Display) {
        let first = {
            let mut named = self.named.lock();
            named.len() < NAMED_OFFENDERS && named.insert((sender.to_owned(), what))
        };
        if first {
            tracing::warn!(
                "gz-transport: dropped {what} from {sender}: {why} (logged once per sender; \
                 counted in the node's statistics)"
            );
        } else {
            tracing::debug!(%sender, what, %why, "dropped");
        }
    }

    #[cfg(test)]
    pub fn named_count(&self) -> usize {
        self.named.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sender_and_kind_is_named_once_and_the_set_is_bounded() {
        let offenders = Offenders::default();
        offenders.dropped("udp 127.0.0.1:1", "a discovery datagram", &"bad");
        offenders.dropped("udp 127.0.0.1:1", "a discovery datagram", &"bad");
        offenders.dropped("udp 127.0.0.1:1", "a data message", &"bad");
        assert_eq!(offenders.named_count(), 2);
        for port in 0..1000 {
            offenders.dropped(&format!("udp 127.0.0.1:{port}"), "x", &"bad");
        }
        assert_eq!(offenders.named_count(), NAMED_OFFENDERS);
    }
}
