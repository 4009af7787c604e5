//! What the in-crate tests share: how long they wait for the network, how they wait, and a
//! node on a discovery port of its own.

use std::time::Duration;

use crate::config::Config;
use crate::{Node, NodeOptions};

/// How long a test waits for what loopback delivers in milliseconds on an idle machine.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// Whether `cond` holds within [`PATIENCE`] (polled every 10 ms).
pub(crate) fn eventually(cond: impl FnMut() -> bool) -> bool {
    eventually_within(PATIENCE, cond)
}

/// Whether `cond` holds within `timeout` (polled every 10 ms): the workspace's.
pub(crate) use ::test_support::eventually as eventually_within;

/// A node in `partition` on loopback whose discovery uses `port`, whatever the environment.
pub(crate) fn node_on_own_port(partition: &str, port: u16) -> Node {
    let env = move |name: &str| match name {
        "GZ_IP" => Some("127.0.0.1".to_owned()),
        "GZ_DISCOVERY_MSG_PORT" => Some(port.to_string()),
        _ => None,
    };
    let options = NodeOptions {
        partition: Some(partition.to_owned()),
        ..Default::default()
    };
    Node::with_config(Config::resolve_with(&options, &env).unwrap()).unwrap()
}
