//! One process-wide `tracing` subscriber for the node binaries, the composer and the Python
//! module: while a node runs, every line (the loop's, the driver's, gz-transport's) goes to
//! that node's ROS logger ([`RosLogLayer`]: `/rosout`, the ROS console format,
//! `--ros-args --log-level`); before any node, to stderr. A node process keeps its lines on
//! its node's logger name after the node is gone ([`LogRoute::keep`]): rcl prints them on
//! stderr in the same console format (a late signal's line, the exit), never in another.
//!
//! A process has one global subscriber, set once, but the Python module's is set at import,
//! long before a node exists (and several nodes may come and go): hence a route that is
//! switched, not a subscriber per node.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use tracing_subscriber::filter::{dynamic_filter_fn, EnvFilter, FilterExt, LevelFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, Layer, Registry};

use crate::RosLogLayer;

type RosRoute = reload::Handle<Option<RosLogLayer>, Registry>;

static ROUTE: OnceLock<RosRoute> = OnceLock::new();
/// True while lines go to a ROS logger (stderr then stays quiet).
static TO_ROS: AtomicBool = AtomicBool::new(false);

/// Sets the process's subscriber: lines at `stderr_filter` to stderr until
/// [`route_logs_to`] names a ROS logger. Returns false (and changes nothing) if the process
/// already has a global subscriber other than ours.
pub fn install_log_route(stderr_filter: EnvFilter) -> bool {
    if ROUTE.get().is_some() {
        return true;
    }
    let (ros, handle) = reload::Layer::new(None::<RosLogLayer>);
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(stderr_filter.and(dynamic_filter_fn(|_, _| !TO_ROS.load(Ordering::Relaxed))));
    let installed = tracing_subscriber::registry()
        .with(ros.with_filter(LevelFilter::DEBUG))
        .with(stderr)
        .try_init()
        .is_ok();
    if installed {
        let _ = ROUTE.set(handle);
    }
    installed
}

/// Sends every line to `layer`'s ROS logger until the guard is dropped, which restores the
/// route before (stderr, or an outer node's logger). Drop it before the node.
pub fn route_logs_to(layer: RosLogLayer) -> LogRoute {
    let Some(route) = ROUTE.get() else {
        return LogRoute { previous: None };
    };
    let mut previous = None;
    let _ = route.modify(|current| previous = current.replace(layer));
    TO_ROS.store(true, Ordering::Relaxed);
    LogRoute {
        previous: Some(previous),
    }
}

/// Keeps lines going to a node's ROS logger; see [`route_logs_to`].
#[must_use = "lines go back to where they went before when this guard is dropped"]
pub struct LogRoute {
    /// `None`: no route installed (nothing to restore).
    previous: Option<Option<RosLogLayer>>,
}

impl LogRoute {
    /// Keeps the lines on this logger for the rest of the process (or until a later route):
    /// what a node process logs after its node is gone — a signal during the teardown or the
    /// exit — is still that node's line. rcutils takes it as before: once the node and
    /// `/rosout` are gone, it only prints it on the console, in the ROS format, with the
    /// node's name, at the node's log level. (rclrs serialises every log call with the
    /// teardown of ROS entities, so a line never meets a half-destroyed logger.)
    pub fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for LogRoute {
    fn drop(&mut self) {
        let (Some(route), Some(previous)) = (ROUTE.get(), self.previous.take()) else {
            return;
        };
        TO_ROS.store(previous.is_some(), Ordering::Relaxed);
        let _ = route.modify(|current| *current = previous);
    }
}
