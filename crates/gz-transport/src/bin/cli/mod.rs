//! What the `gz-topic` and `gz-service` programs share: their process shell (logging to stderr,
//! the command line, an error as a non-zero exit), the `--msgs-prefix` flag their node starts
//! with, and how they read and wait out `--wait`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use gz_transport::{MsgsPrefix, Node, NodeOptions};

/// After the first answer to a discovery request, how long the others (from peers on the same
/// host, within milliseconds) may take.
pub const GRACE: Duration = Duration::from_millis(300);

/// Runs `run` with the parsed command line; an error is printed as `program: error` and exits 1.
pub fn main<A: Parser>(program: &str, run: impl FnOnce(A) -> Result<()>) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(A::parse()) {
        eprintln!("{program}: {e:#}");
        std::process::exit(1);
    }
}

/// The flag both programs start their node with.
#[derive(clap::Args, Debug)]
pub struct NodeFlags {
    /// Type-name prefix for short type names: gz.msgs. (Harmonic) or ignition.msgs. (Fortress).
    #[arg(long = "msgs-prefix", default_value = "gz.msgs.")]
    pub msgs_prefix: MsgsPrefix,
}

impl NodeFlags {
    pub fn start_node(&self) -> Result<Node> {
        Node::with_options(NodeOptions {
            msgs_prefix: self.msgs_prefix,
            ..Default::default()
        })
        .context("cannot start the transport")
    }
}

/// The duration of a seconds flag (`what`, for the error).
pub fn secs(s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .with_context(|| format!("{what} must be a non-negative number of seconds, got {s}"))
}

/// Sleeps out the grace, but not past `deadline`.
pub fn sleep_grace(deadline: Instant) {
    std::thread::sleep(GRACE.min(deadline.saturating_duration_since(Instant::now())));
}
