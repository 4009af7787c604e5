//! Serving one robot: its topic surface (`server`, `safety`), its lifecycle and loop thread
//! (`control_loop`), the state the threads share (`core`) and its methods by role (`receive`:
//! the per-message path; `targets`; `duties`; `loop_thread`), the safe stop after a watchdog
//! fault, and its status on `/diagnostics`.
//!
//! Its modules depend one way, downwards (`A ──> B`: A `use`s B; modules used from every
//! layer, `counters`, `rate_limit`, `messages`, and the crate's `BridgeError` and
//! configuration, are left out):
//!
//! ```text
//!                            control_loop
//!          ┌───────────┬──────────┼───────────┬────────────┐
//!          v           v          v           v            v
//!       safety ──> server     diagnostics   schedule   limits, alarm, statistics
//!          │           │          │
//!          v           v          v
//!       watchdog    mailbox    watchdog
//!
//!   the per-message path, its methods on `Core` by role (each module `use`s `core` only,
//!   and they call each other in this order, never back):
//!
//!       loop_thread ──> receive ──> duties ──> targets
//!           (alarm)    (message)       │
//!                                      └──> safe_stop ──> watchdog
//!
//!       core ──> mailbox, rate_cap, statistics, staleness, non_finite, limits, alarm, watchdog
//! ```
//!
//! `control_loop` makes the `core` and hands its methods to the driver's listener
//! (`receive`), to the `set/*` subscriptions (`targets`) and to its own thread
//! (`loop_thread`).

pub(crate) mod alarm;
pub(crate) mod control_loop;
pub(crate) mod core;
pub(crate) mod counters;
pub(crate) mod diagnostics;
pub(crate) mod duties;
pub(crate) mod limits;
pub(crate) mod loop_thread;
pub(crate) mod mailbox;
pub(crate) mod messages;
pub(crate) mod non_finite;
pub(crate) mod rate_cap;
pub(crate) mod rate_limit;
pub(crate) mod receive;
pub(crate) mod safe_stop;
pub(crate) mod safety;
pub(crate) mod schedule;
pub(crate) mod server;
pub(crate) mod staleness;
pub(crate) mod statistics;
pub(crate) mod targets;
pub(crate) mod watchdog;
