use std::time::Duration;

/// At most one log line per interval for each kind of per-period failure.
pub(crate) const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// Lets a log line through at most once per interval and counts the ones held back: the
/// driver contract's limiter, for what one thread owns (the loop's logs); a log that several
/// threads reach takes the contract's `RateLimitedWarning`.
pub(crate) use sas_robot_driver_gazebo::RateLimit;

/// ` (N similar messages suppressed)`, or nothing when none were.
pub(crate) fn suppressed_note(suppressed: u64) -> String {
    if suppressed == 0 {
        String::new()
    } else {
        format!(" ({suppressed} similar messages suppressed)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn one_line_per_interval_passes_and_reports_what_it_held_back() {
        let mut limit = RateLimit::new(Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(limit.permit(t0), Some(0));
        assert_eq!(limit.permit(t0 + Duration::from_millis(2)), None);
        assert_eq!(limit.permit(t0 + Duration::from_millis(999)), None);
        assert_eq!(limit.permit(t0 + Duration::from_secs(1)), Some(2));
        assert_eq!(suppressed_note(2), " (2 similar messages suppressed)");
        assert_eq!(suppressed_note(0), "");
    }
}
