//! Node configuration resolved from [`NodeOptions`](crate::NodeOptions) and the environment.
//!
//! Every setting reads the Harmonic name (`GZ_*`) first, then the Fortress name (`IGN_*`),
//! then a default, so one binary works with both.

use std::net::Ipv4Addr;

use crate::msgs::MsgsPrefix;
use crate::names;
use crate::net;
use crate::{Error, NodeOptions};

/// Default multicast group of gz-transport discovery.
pub(crate) const DEFAULT_MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 7);
/// Default UDP port of topic discovery (services use 10318; we host none).
pub(crate) const DEFAULT_MSG_PORT: u16 = 10317;
pub(crate) const DEFAULT_SRV_PORT: u16 = 10318;
/// ZeroMQ's and gz-transport's default high-water mark (messages queued per peer).
pub(crate) const DEFAULT_HWM: i32 = 1000;

/// Everything a node needs to know before opening sockets.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub partition: String,
    pub namespace: String,
    pub msgs_prefix: MsgsPrefix,
    /// The address our PUB socket binds to and advertises; never `0.0.0.0`.
    pub host_ip: Ipv4Addr,
    /// Interfaces discovery sends on and listens on.
    pub interfaces: Vec<Ipv4Addr>,
    pub multicast_group: Ipv4Addr,
    pub msg_port: u16,
    /// The discovery port of services (`GZ_DISCOVERY_SRV_PORT`, default 10318).
    pub srv_port: u16,
    /// Messages a subscriber's queue holds before newer ones are dropped for it.
    pub sndhwm: i32,
}

/// A source of environment variables (the process environment, or a table in tests).
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The first set variable among `names` (empty counts as unset), with its name.
fn env_first(env: Env, names: [&'static str; 2]) -> Option<(&'static str, String)> {
    names.into_iter().find_map(|name| match env(name) {
        Some(v) if !v.trim().is_empty() => Some((name, v.trim().to_owned())),
        _ => None,
    })
}

fn parse_env<T: std::str::FromStr>(
    env: Env,
    names: [&'static str; 2],
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<Option<T>, Error>
where
    T::Err: std::fmt::Display,
{
    let Some((name, value)) = env_first(env, names) else {
        return Ok(None);
    };
    let parsed = value
        .parse::<T>()
        .map_err(|e| e.to_string())
        .and_then(|v| check(&v).map(|()| v))
        .map_err(|reason| Error::InvalidEnv {
            name,
            value: value.clone(),
            reason,
        })?;
    Ok(Some(parsed))
}

impl Config {
    pub fn resolve(options: &NodeOptions) -> Result<Config, Error> {
        Config::resolve_with(options, &|name| std::env::var(name).ok())
    }

    pub fn resolve_with(options: &NodeOptions, env: Env) -> Result<Config, Error> {
        let partition = match &options.partition {
            Some(p) => p.clone(),
            None => env_first(env, ["GZ_PARTITION", "IGN_PARTITION"])
                .map(|(_, v)| v)
                .unwrap_or_else(default_partition),
        };
        names::check_partition(&partition)?;
        let namespace = options.namespace.clone().unwrap_or_default();
        names::check_namespace(&namespace)?;

        let ip = parse_env::<Ipv4Addr>(env, ["GZ_IP", "IGN_IP"], |ip| {
            if ip.is_unspecified() || ip.is_multicast() || ip.is_broadcast() {
                Err("must be a unicast address of this host".into())
            } else {
                Ok(())
            }
        })?;
        let (host_ip, interfaces) = match ip {
            Some(ip) => (ip, vec![ip]),
            None => {
                let ifaces = net::multicast_interfaces();
                (ifaces[0], ifaces)
            }
        };
        let multicast_group = parse_env::<Ipv4Addr>(
            env,
            ["GZ_DISCOVERY_MULTICAST_IP", "IGN_DISCOVERY_MULTICAST_IP"],
            |ip| {
                if ip.is_multicast() {
                    Ok(())
                } else {
                    Err("not a multicast address".into())
                }
            },
        )?
        .unwrap_or(DEFAULT_MULTICAST_GROUP);
        let port_check = |p: &u16| {
            if *p == 0 {
                Err("port 0 is not allowed".to_string())
            } else {
                Ok(())
            }
        };
        let msg_port = parse_env::<u16>(
            env,
            ["GZ_DISCOVERY_MSG_PORT", "IGN_DISCOVERY_MSG_PORT"],
            port_check,
        )?
        .unwrap_or(DEFAULT_MSG_PORT);
        let srv_port = parse_env::<u16>(
            env,
            ["GZ_DISCOVERY_SRV_PORT", "IGN_DISCOVERY_SRV_PORT"],
            port_check,
        )?
        .unwrap_or(DEFAULT_SRV_PORT);
        let hwm_check = |v: &i32| {
            if *v >= 0 {
                Ok(())
            } else {
                Err("must be >= 0".to_string())
            }
        };
        let sndhwm = parse_env::<i32>(
            env,
            ["GZ_TRANSPORT_SNDHWM", "IGN_TRANSPORT_SNDHWM"],
            hwm_check,
        )?
        .unwrap_or(DEFAULT_HWM);
        // GZ_TRANSPORT_RCVHWM bounds libzmq's queue between its I/O thread and the reader;
        // our receive thread reads the socket itself and queues nothing, so it has no use.

        Ok(Config {
            partition,
            namespace,
            msgs_prefix: options.msgs_prefix,
            host_ip,
            interfaces,
            multicast_group,
            msg_port,
            srv_port,
            sndhwm,
        })
    }
}

/// gz-transport's default partition: `<hostname>:<username>`.
pub(crate) fn default_partition() -> String {
    format!("{}:{}", net::hostname(), net::username())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(vars: &[(&str, &str)], options: NodeOptions) -> Result<Config, Error> {
        let table: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::resolve_with(&options, &move |name| table.get(name).cloned())
    }

    #[test]
    fn gz_names_win_over_ign_names() {
        let c = resolve(
            &[
                ("GZ_PARTITION", "gzp"),
                ("IGN_PARTITION", "ignp"),
                ("GZ_IP", "127.0.0.1"),
                ("IGN_IP", "10.0.0.1"),
                ("GZ_DISCOVERY_MULTICAST_IP", "239.1.2.3"),
                ("IGN_DISCOVERY_MSG_PORT", "11317"),
                ("GZ_TRANSPORT_SNDHWM", "5"),
            ],
            NodeOptions::default(),
        )
        .unwrap();
        assert_eq!(c.partition, "gzp");
        assert_eq!(c.host_ip, Ipv4Addr::LOCALHOST);
        assert_eq!(c.interfaces, vec![Ipv4Addr::LOCALHOST]);
        assert_eq!(c.multicast_group, Ipv4Addr::new(239, 1, 2, 3));
        assert_eq!(c.msg_port, 11317);
        assert_eq!(c.sndhwm, 5);
    }

    #[test]
    fn ign_names_are_read_and_options_win() {
        let c = resolve(
            &[("IGN_PARTITION", "ignp"), ("IGN_IP", "127.0.0.1")],
            NodeOptions::default(),
        )
        .unwrap();
        assert_eq!(c.partition, "ignp");
        let opts = NodeOptions {
            partition: Some("mine".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve(&[("GZ_PARTITION", "gzp")], opts).unwrap().partition,
            "mine"
        );
    }

    #[test]
    fn defaults_never_advertise_the_unspecified_address() {
        let c = resolve(&[], NodeOptions::default()).unwrap();
        assert_eq!(c.partition, default_partition());
        assert!(!c.host_ip.is_unspecified());
        assert_eq!(c.multicast_group, DEFAULT_MULTICAST_GROUP);
        assert_eq!(c.msg_port, DEFAULT_MSG_PORT);
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (name, value) in [
            ("GZ_IP", "0.0.0.0"),
            ("IGN_IP", "not-an-ip"),
            ("GZ_DISCOVERY_MULTICAST_IP", "10.0.0.1"),
            ("GZ_DISCOVERY_MSG_PORT", "70000"),
            ("IGN_TRANSPORT_SNDHWM", "-1"),
        ] {
            match resolve(&[(name, value)], NodeOptions::default()) {
                Err(Error::InvalidEnv {
                    name: n, value: v, ..
                }) => assert_eq!((n, v.as_str()), (name, value)),
                other => panic!("{name}={value}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve(&[("GZ_PARTITION", "a@b")], NodeOptions::default()),
            Err(Error::InvalidPartition { .. })
        ));
    }
}
