//! The counters a robot's loop and receive path keep, in one place, for the final log line and
//! for whoever reports on the robot at a slower rate (diagnostics): read with
//! [`RobotDriverRos::counters`](crate::RobotDriverRos::counters).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

/// Updated by the loop, the receive path and the target callback; read by anyone.
#[derive(Debug, Default)]
pub(crate) struct RobotCounters {
    pub gazebo_messages: AtomicU64,
    pub joint_states_published: AtomicU64,
    pub never_reported: AtomicU64,
    pub periods: AtomicU64,
    pub overruns: AtomicU64,
    pub targets_accepted: AtomicU64,
    pub targets_clamped: AtomicU64,
    pub targets_refused: AtomicU64,
    pub targets_superseded: AtomicU64,
    pub stale: AtomicBool,
    pub stale_episodes: AtomicU64,
    /// Stale episodes that ended within the stall budget (not warned about).
    pub short_stalls: AtomicU64,
    /// Gazebo messages with a NaN or infinite joint value.
    pub non_finite_messages: AtomicU64,
    /// While the latest state has non-finite values: which (`elbow_joint position NaN, …`).
    pub non_finite: Mutex<Option<String>>,
    /// Measured interval between Gazebo messages (exponential average), in nanoseconds.
    pub gazebo_interval_ns: AtomicU64,
}

pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// A copy of a robot's counters (see [`RobotDriverRos::counters`](crate::RobotDriverRos::counters)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RobotCountersSnapshot {
    /// Gazebo messages written into the cache while the loop ran.
    pub gazebo_messages: u64,
    /// `get/joint_states` messages published.
    pub joint_states_published: u64,
    /// Gazebo messages replaced by a newer one before any report carried them.
    pub never_reported: u64,
    /// Times the robot's duties ran (the watchdog, target, limits and staleness checks): once
    /// per period while Gazebo sends, and at their deadlines otherwise.
    pub periods: u64,
    /// Periods skipped because the loop was late by more than a period.
    pub overruns: u64,
    /// Targets the driver accepted (clamped ones included).
    pub targets_accepted: u64,
    /// Accepted targets with values clamped into the limits.
    pub targets_clamped: u64,
    /// Targets refused (length, NaN/inf, limits under `refuse`).
    pub targets_refused: u64,
    /// Targets replaced by a newer one before the loop took them (latest wins).
    pub targets_superseded: u64,
    /// Whether the state is stale now (older than the state timeout).
    pub stale: bool,
    /// Times the state went stale.
    pub stale_episodes: u64,
    /// Of those, the ones that ended within the stall budget (not warned about).
    pub short_stalls: u64,
    /// Gazebo messages with a NaN or infinite joint value (passed on as received).
    pub non_finite_messages: u64,
    /// Age of the latest Gazebo state when read; `None` before the first.
    pub state_age: Option<Duration>,
    /// Measured interval between Gazebo messages; `None` before two arrived.
    pub gazebo_interval: Option<Duration>,
}

impl RobotCounters {
    pub fn snapshot(&self, state_age: Option<Duration>) -> RobotCountersSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        RobotCountersSnapshot {
            gazebo_messages: load(&self.gazebo_messages),
            joint_states_published: load(&self.joint_states_published),
            never_reported: load(&self.never_reported),
            periods: load(&self.periods),
            overruns: load(&self.overruns),
            targets_accepted: load(&self.targets_accepted),
            targets_clamped: load(&self.targets_clamped),
            targets_refused: load(&self.targets_refused),
            targets_superseded: load(&self.targets_superseded),
            stale: self.stale.load(Ordering::Relaxed),
            stale_episodes: load(&self.stale_episodes),
            short_stalls: load(&self.short_stalls),
            non_finite_messages: load(&self.non_finite_messages),
            state_age,
            gazebo_interval: match load(&self.gazebo_interval_ns) {
                0 => None,
                nanos => Some(Duration::from_nanos(nanos)),
            },
        }
    }
}
