//! Node configuration resolved from [`NodeOptions`] and the environment.
//!
//! Every setting reads the Harmonic name (`GZ_*`) first, then the Fortress name (`IGN_*`),
//! then a default, so one binary works with both.

use std::net::Ipv4Addr;

use crate::msgs::MsgsPrefix;
use crate::names;
use crate::net;
use crate::Error;

/// Options of a [`Node`](crate::Node); every `None` falls back to the environment as gz-transport does.
#[derive(Clone, Debug, Default)]
pub struct NodeOptions {
    /// Partition; `None` → `GZ_PARTITION`, else `IGN_PARTITION`, else `hostname:username`.
    pub partition: Option<String>,
    /// Namespace prepended to relative topic names.
    pub namespace: Option<String>,
    /// Type-name prefix used for typed advertise/subscribe.
    pub msgs_prefix: MsgsPrefix,
    /// PLAIN credentials; `None` → `GZ_TRANSPORT_USERNAME`/`PASSWORD`, else `IGN_TRANSPORT_*`,
    /// else none (the NULL mechanism).
    pub credentials: Option<Credentials>,
}

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
    /// PLAIN credentials of our PUB (as the mechanism's server) and SUB (as its client)
    /// connections; `None`: the NULL mechanism.
    pub credentials: Option<Credentials>,
}

/// A user name and password for ZMTP's PLAIN mechanism, as gz-transport takes them from
/// `GZ_TRANSPORT_USERNAME` and `GZ_TRANSPORT_PASSWORD` (`IGN_TRANSPORT_*` on Fortress): with
/// them, a publisher accepts only subscribers that present the same pair, and a subscriber
/// presents it. Services are not authenticated (as in gz-transport).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password, in a log or an error.
        write!(
            f,
            "Credentials {{ username: {:?}, password: <hidden> }}",
            self.username
        )
    }
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

        let credentials = match &options.credentials {
            Some(c) => Some(c.clone()),
            None => credentials_from(env)?,
        };
        if let Some(c) = &credentials {
            for (name, value) in [("username", &c.username), ("password", &c.password)] {
                if value.is_empty() || value.len() > 255 {
                    return Err(Error::InvalidEnv {
                        name: if name == "username" {
                            "GZ_TRANSPORT_USERNAME"
                        } else {
                            "GZ_TRANSPORT_PASSWORD"
                        },
                        value: if name == "username" {
                            value.clone()
                        } else {
                            "<hidden>".into()
                        },
                        reason: format!("the PLAIN {name} must be 1 to 255 bytes"),
                    });
                }
            }
        }

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
            credentials,
        })
    }
}

/// gz-transport's default partition: `<hostname>:<username>`.
/// The PLAIN credentials of the environment: both variables of one family (`GZ_`, else
/// `IGN_`), or none; one without the other runs without authentication, as gz-transport's
/// `userPass` does, with a warning naming the missing one.
fn credentials_from(env: Env) -> Result<Option<Credentials>, Error> {
    for family in ["GZ", "IGN"] {
        let user_var: &'static str = if family == "GZ" {
            "GZ_TRANSPORT_USERNAME"
        } else {
            "IGN_TRANSPORT_USERNAME"
        };
        let pass_var: &'static str = if family == "GZ" {
            "GZ_TRANSPORT_PASSWORD"
        } else {
            "IGN_TRANSPORT_PASSWORD"
        };
        let set = |name: &str| env(name).filter(|v| !v.is_empty());
        match (set(user_var), set(pass_var)) {
            (Some(username), Some(password)) => {
                return Ok(Some(Credentials { username, password }))
            }
            // gz-transport then runs without authentication: so do we, but say so.
            (Some(_), None) | (None, Some(_)) => {
                let (set, unset) = if set(user_var).is_some() {
                    (user_var, pass_var)
                } else {
                    (pass_var, user_var)
                };
                tracing::warn!(
                    "{set} is set but {unset} is not: PLAIN authentication needs both; running \
                     without it, as gz-transport does"
                );
                return Ok(None);
            }
            (None, None) => {}
        }
    }
    Ok(None)
}

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

    #[test]
    fn plain_credentials_come_in_pairs_from_gz_then_ign_and_are_never_shown() {
        let none = resolve(&[], NodeOptions::default()).unwrap();
        assert_eq!(none.credentials, None);
        let ign = resolve(
            &[
                ("IGN_TRANSPORT_USERNAME", "u"),
                ("IGN_TRANSPORT_PASSWORD", "p"),
            ],
            NodeOptions::default(),
        )
        .unwrap();
        assert_eq!(ign.credentials.as_ref().unwrap().username, "u");
        let gz_first = resolve(
            &[
                ("GZ_TRANSPORT_USERNAME", "gz"),
                ("GZ_TRANSPORT_PASSWORD", "pw"),
                ("IGN_TRANSPORT_USERNAME", "ign"),
                ("IGN_TRANSPORT_PASSWORD", "pw"),
            ],
            NodeOptions::default(),
        )
        .unwrap();
        assert_eq!(gz_first.credentials.as_ref().unwrap().username, "gz");
        assert!(
            !format!("{gz_first:?}").contains("pw"),
            "the password is hidden"
        );
        let half = resolve(&[("GZ_TRANSPORT_PASSWORD", "p")], NodeOptions::default()).unwrap();
        assert_eq!(
            half.credentials, None,
            "as gz-transport: no authentication (and a warning)"
        );
        let long = "x".repeat(256);
        assert!(resolve(
            &[
                ("GZ_TRANSPORT_USERNAME", &long),
                ("GZ_TRANSPORT_PASSWORD", "p")
            ],
            NodeOptions::default()
        )
        .is_err());
        // NodeOptions win over the environment.
        let given = resolve(
            &[
                ("GZ_TRANSPORT_USERNAME", "env"),
                ("GZ_TRANSPORT_PASSWORD", "env"),
            ],
            NodeOptions {
                credentials: Some(Credentials {
                    username: "opt".into(),
                    password: "opt".into(),
                }),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(given.credentials.unwrap().username, "opt");
    }
}
