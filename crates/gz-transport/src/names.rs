//! Topic, namespace and partition names, and the fully qualified name that travels on the
//! wire: `@/<partition>@<namespace/topic>` (the rules of gz-transport's `TopicUtils`).

use std::collections::HashMap;

use crate::Error;

/// Longest name gz-transport accepts.
const MAX_NAME_LENGTH: usize = 65535;

/// Why `name` is not a valid namespace, partition or topic, if it is not.
fn invalid_reason(name: &str) -> Option<&'static str> {
    if name.len() > MAX_NAME_LENGTH {
        Some("longer than 65535 bytes")
    } else if name.contains('@') {
        Some("contains '@'")
    } else if name.contains('~') {
        Some("contains '~'")
    } else if name.contains("//") {
        Some("contains '//'")
    } else if name.contains(":=") {
        Some("contains ':='")
    } else if name.chars().any(char::is_whitespace) {
        Some("contains whitespace")
    } else {
        None
    }
}

/// The names of `fqns` that are in the partition of `prefix` (`@/<partition>@`), without it,
/// sorted and each once: what a topic or service list shows.
pub(crate) fn names_in_partition<'a>(
    prefix: &str,
    fqns: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    let mut names: Vec<String> = fqns
        .filter_map(|fqn| fqn.strip_prefix(prefix).map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The names, in the partition of `prefix`, of what this node offers (`local`) or a peer does
/// (`remote`; a name whose last offer went does not count): a topic or service list.
pub(crate) fn offered_in_partition<L, R>(
    prefix: &str,
    local: &HashMap<String, L>,
    remote: &HashMap<String, Vec<R>>,
) -> Vec<String> {
    let offered = remote.iter().filter(|(_, v)| !v.is_empty());
    names_in_partition(prefix, local.keys().chain(offered.map(|(k, _)| k)))
}

/// A full message type name as sent on the wire: non-empty, no white space.
pub(crate) fn check_type_name(type_name: &str) -> Result<(), Error> {
    if type_name.is_empty() || type_name.chars().any(char::is_whitespace) {
        return Err(Error::InvalidTypeName {
            type_name: type_name.to_owned(),
        });
    }
    Ok(())
}

pub(crate) fn check_partition(partition: &str) -> Result<(), Error> {
    let reason = if partition.is_empty() {
        Some("is empty")
    } else {
        invalid_reason(partition)
    };
    match reason {
        Some(reason) => Err(Error::InvalidPartition {
            partition: partition.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Check a namespace (empty is allowed and means "/").
pub(crate) fn check_namespace(namespace: &str) -> Result<(), Error> {
    match invalid_reason(namespace) {
        Some(reason) => Err(Error::InvalidTopic {
            topic: namespace.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The wire prefix of every topic in `partition`: `@/<partition>@`.
pub(crate) fn partition_prefix(partition: &str) -> String {
    let trimmed = partition.trim_start_matches('/').trim_end_matches('/');
    format!("@/{trimmed}@")
}

/// The user-visible topic name (`/ns/topic`) resolved against `namespace`.
pub(crate) fn resolve_topic(namespace: &str, topic: &str) -> Result<String, Error> {
    let invalid = |reason| {
        Err(Error::InvalidTopic {
            topic: topic.to_owned(),
            reason,
        })
    };
    if topic.is_empty() {
        return invalid("is empty");
    }
    if let Some(reason) = invalid_reason(topic) {
        return invalid(reason);
    }
    let mut name = if topic.starts_with('/') {
        topic.to_owned()
    } else {
        let ns = namespace.trim_matches('/');
        if ns.is_empty() {
            format!("/{topic}")
        } else {
            format!("/{ns}/{topic}")
        }
    };
    while name.len() > 1 && name.ends_with('/') {
        name.pop();
    }
    if name == "/" {
        return invalid("names no topic");
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fully_qualified_names_match_gz_transport() {
        assert_eq!(partition_prefix("vm:root"), "@/vm:root@");
        assert_eq!(partition_prefix("/p/"), "@/p@");
        assert_eq!(resolve_topic("", "/x").unwrap(), "/x");
        assert_eq!(resolve_topic("", "x").unwrap(), "/x");
        assert_eq!(resolve_topic("ns", "x").unwrap(), "/ns/x");
        assert_eq!(resolve_topic("/ns/", "x/").unwrap(), "/ns/x");
        assert_eq!(resolve_topic("/ns", "/abs").unwrap(), "/abs");
    }

    #[test]
    fn invalid_names_say_why() {
        for (topic, why) in [
            ("", "is empty"),
            ("/", "names no topic"),
            ("/a b", "contains whitespace"),
            ("/a@b", "contains '@'"),
            ("/a//b", "contains '//'"),
            ("~/a", "contains '~'"),
        ] {
            match resolve_topic("", topic) {
                Err(Error::InvalidTopic { reason, .. }) => assert_eq!(reason, why, "{topic:?}"),
                other => panic!("{topic:?}: {other:?}"),
            }
        }
        assert!(check_partition("").is_err());
        assert!(check_partition("a@b").is_err());
        assert!(check_partition("host:user").is_ok());
    }
}
