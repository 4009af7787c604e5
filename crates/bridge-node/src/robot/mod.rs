//! Serving one robot: its topic surface (`server`), the control loop and the per-message path
//! (`control_loop`), its schedule, the watchdog and the safe stop (`safety`), and its status on
//! `/diagnostics`.

pub(crate) mod alarm;
pub(crate) mod control_loop;
pub(crate) mod counters;
pub(crate) mod diagnostics;
pub(crate) mod messages;
pub(crate) mod rate_limit;
pub(crate) mod safety;
pub(crate) mod schedule;
pub(crate) mod server;
pub(crate) mod watchdog;
