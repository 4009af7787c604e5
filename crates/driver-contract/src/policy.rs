//! How a driver treats targets (out of limits, when to send again) and the bound on every
//! time parameter: choices a configuration makes, whichever driver it configures.

use std::time::Duration;

/// What `set_target_joint_positions` does with a value outside the joint limits captured at
/// `initialize()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitPolicy {
    /// Store the value clamped into the limits and log a rate-limited warning (at most one
    /// per second, counting the ones suppressed).
    #[default]
    Clamp,
    /// Refuse the whole target with [`DriverError::TargetOutOfLimits`](crate::DriverError::TargetOutOfLimits); the previous target
    /// stays in force.
    Refuse,
}

/// When `forward_targets()` publishes the latest target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ForwardMode {
    /// Every call, as the original did (Gazebo's controller keeps the last command anyway,
    /// but a re-sent command survives a restarted Gazebo).
    #[default]
    EveryPeriod,
    /// Only when the target changed since the last publication, or when the last publication
    /// is older than the keepalive.
    OnChangeWithKeepalive(Duration),
    /// Only when the target changed since the last publication (Gazebo's controllers hold the
    /// last command).
    OnChange,
}

/// The longest duration any of the driver's, the node's, the composer's or the Python
/// module's time parameters accepts: about 31.7 years. Deadlines are computed as `Instant +
/// Duration`, which panics past what the clock holds (about 9.2e18 s), and durations derived
/// from a parameter (multiples of it, its nanoseconds in a `u64`: 584 years) overflow sooner;
/// a value like `1e18` s passes a check for finiteness and fails there, at run time. Past
/// this bound, it is refused at start-up instead.
pub const LONGEST_DURATION: Duration = Duration::from_secs(1_000_000_000);

/// `value` seconds as a [`Duration`], for a parameter read from a user: finite, not negative,
/// at most [`LONGEST_DURATION`]. The error says which rule the value breaks and, for a value
/// too large, the largest accepted one; the caller names the parameter.
///
/// # Errors
/// A NaN, infinite, negative or too large value.
pub fn duration_from_secs(value: f64) -> Result<Duration, String> {
    let longest = LONGEST_DURATION.as_secs_f64();
    if value > longest && value.is_finite() {
        return Err(format!(
            "{value} s is longer than the longest accepted duration, {longest:.0} s (about 31 \
             years)"
        ));
    }
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("{value} is not a finite, non-negative number of seconds"))
}
