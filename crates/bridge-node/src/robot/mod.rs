//! Serving one robot: its topic surface (`server`), its lifecycle and loop thread
//! (`control_loop`), the per-message path and the robot's duties (`core`), the limits topics,
//! the state's staleness, the watchdog and the safe stop (`safety`), and its status on
//! `/diagnostics`.

pub(crate) mod alarm;
pub(crate) mod control_loop;
pub(crate) mod core;
pub(crate) mod counters;
pub(crate) mod diagnostics;
pub(crate) mod limits;
pub(crate) mod messages;
pub(crate) mod non_finite;
pub(crate) mod rate_limit;
pub(crate) mod safety;
pub(crate) mod schedule;
pub(crate) mod server;
pub(crate) mod staleness;
pub(crate) mod watchdog;
