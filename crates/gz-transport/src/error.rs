/// Errors of the transport API. Bad *incoming* data is never an error of the API: it is
/// dropped, counted and logged at debug level.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid topic name {topic:?}: {reason}")]
    InvalidTopic { topic: String, reason: &'static str },
    #[error("invalid partition {partition:?}: {reason}")]
    InvalidPartition {
        partition: String,
        reason: &'static str,
    },
    #[error("topic {topic:?} is already advertised by this node with type {existing}")]
    AlreadyAdvertised { topic: String, existing: String },
    #[error("environment variable {name}={value:?} is invalid: {reason}")]
    InvalidEnv {
        name: &'static str,
        value: String,
        reason: String,
    },
    #[error("invalid message type name {type_name:?}: must be non-empty without whitespace")]
    InvalidTypeName { type_name: String },
    #[error("cannot bind the publisher socket to {endpoint} (is it an address of this host? set GZ_IP/IGN_IP): {source}")]
    Bind {
        endpoint: String,
        source: std::io::Error,
    },
    #[error("cannot open discovery on {group}:{port}: {source}")]
    Discovery {
        group: String,
        port: u16,
        source: std::io::Error,
    },
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("the transport node has shut down")]
    Closed,
}
