//! Target validation: pure functions of the target, the joint limits and the policy, so the
//! rules are tested without any transport.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::{Command, DriverError, LimitPolicy};

/// What `set_target_joint_positions` did with an accepted target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOutcome {
    /// Stored as given.
    Accepted,
    /// Stored with `joints` values clamped into the joint limits (policy `Clamp`).
    Clamped {
        /// How many values were clamped.
        joints: usize,
    },
}

/// The first clamped value of a target, for the warning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clamp {
    /// Position in the target.
    pub index: usize,
    /// The value given.
    pub value: f64,
    /// The joint's lower limit.
    pub lower: f64,
    /// The joint's upper limit.
    pub upper: f64,
}

/// Checks length and finiteness: the rules that need no limits.
pub fn check_shape(
    command: Command,
    joint_names: &[String],
    target: &[f64],
) -> Result<(), DriverError> {
    if target.len() != joint_names.len() {
        return Err(DriverError::TargetLength {
            command,
            expected: joint_names.len(),
            got: target.len(),
        });
    }
    match target.iter().position(|value| !value.is_finite()) {
        Some(index) => Err(DriverError::NonFiniteTarget {
            command,
            index,
            joint: joint_names[index].clone(),
            value: target[index],
        }),
        None => Ok(()),
    }
}

/// Refuses a target that passed [`check_shape`] if the policy is `Refuse` and a value lies
/// outside the (inclusive) limits; `Clamp` accepts every finite target.
pub fn check_limits(
    command: Command,
    joint_names: &[String],
    target: &[f64],
    (lower, upper): (&[f64], &[f64]),
    policy: LimitPolicy,
) -> Result<(), DriverError> {
    if policy == LimitPolicy::Clamp {
        return Ok(());
    }
    match (0..target.len()).find(|&index| outside_limits(target, (lower, upper), index)) {
        Some(index) => Err(DriverError::TargetOutOfLimits {
            command,
            index,
            joint: joint_names[index].clone(),
            value: target[index],
            lower: lower[index],
            upper: upper[index],
        }),
        None => Ok(()),
    }
}

/// Whether value `index` of `target` lies outside its joint's inclusive limits (inverted
/// limits hold no value).
fn outside_limits(target: &[f64], (lower, upper): (&[f64], &[f64]), index: usize) -> bool {
    !(lower[index] <= target[index] && target[index] <= upper[index])
}

/// Applies the limit policy to a target that passed [`check_shape`], writing the value to
/// store into `out`. Limits are inclusive; ±inf limits never clamp. Nothing is written when
/// the target is refused.
pub fn apply_limits(
    command: Command,
    joint_names: &[String],
    target: &[f64],
    (lower, upper): (&[f64], &[f64]),
    policy: LimitPolicy,
    out: &mut [f64],
) -> Result<(TargetOutcome, Option<Clamp>), DriverError> {
    check_limits(command, joint_names, target, (lower, upper), policy)?;
    let mut clamped = 0;
    let mut first = None;
    for (index, stored) in out.iter_mut().enumerate() {
        let value = target[index];
        *stored = if outside_limits(target, (lower, upper), index) {
            clamped += 1;
            first.get_or_insert(Clamp {
                index,
                value,
                lower: lower[index],
                upper: upper[index],
            });
            // max-then-min rather than f64::clamp, which panics on lower > upper.
            value.max(lower[index]).min(upper[index])
        } else {
            value
        };
    }
    let outcome = match clamped {
        0 => TargetOutcome::Accepted,
        joints => TargetOutcome::Clamped { joints },
    };
    Ok((outcome, first))
}

/// Lets a warning (a log line) through at most once per interval and counts the ones held
/// back. Owned by one thread, so it needs no lock; [`RateLimitedWarning`] is the shared one.
#[derive(Debug)]
pub struct RateLimit {
    interval: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimit {
    /// At most one warning per `interval`.
    pub fn new(interval: Duration) -> Self {
        RateLimit {
            interval,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(number held back since the last one)` if a warning may be logged at `now`.
    pub fn permit(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.saturating_duration_since(last) < self.interval => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.suppressed))
            }
        }
    }
}

/// A [`RateLimit`] that threads share (the driver's, which every caller of a target setter
/// may warn through).
pub struct RateLimitedWarning(Mutex<RateLimit>);

impl RateLimitedWarning {
    /// At most one warning per `interval`.
    pub fn new(interval: Duration) -> Self {
        RateLimitedWarning(Mutex::new(RateLimit::new(interval)))
    }

    /// `Some(number suppressed since the last one)` if a warning may be logged now.
    pub fn permit(&self, now: Instant) -> Option<u64> {
        self.0.lock().permit(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["a".into(), "b".into(), "c".into()]
    }
    const LOWER: [f64; 3] = [-1.0, -2.0, f64::NEG_INFINITY];
    const UPPER: [f64; 3] = [1.0, 2.0, f64::INFINITY];

    /// [`apply_limits`] of a position target of joints a, b, c within `LOWER`..`UPPER`.
    fn limit_positions(
        target: &[f64],
        policy: LimitPolicy,
        out: &mut [f64],
    ) -> Result<(TargetOutcome, Option<Clamp>), DriverError> {
        apply_limits(
            Command::Positions,
            &names(),
            target,
            (&LOWER, &UPPER),
            policy,
            out,
        )
    }

    /// [`check_limits`] of a position target of joints a, b, c within `LOWER`..`UPPER`.
    fn check_positions(target: &[f64], policy: LimitPolicy) -> Result<(), DriverError> {
        check_limits(
            Command::Positions,
            &names(),
            target,
            (&LOWER, &UPPER),
            policy,
        )
    }

    #[test]
    fn a_wrong_length_is_refused_with_the_originals_message() {
        let err = check_shape(Command::Positions, &names(), &[0.0, 0.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_positions: expected 3 values, got 2."
        );
    }

    #[test]
    fn nan_and_infinity_are_refused_naming_the_joint() {
        let err = check_shape(Command::Positions, &names(), &[0.0, f64::NAN, 0.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_positions: value 1 (b) is NaN; targets must be finite."
        );
        let err =
            check_shape(Command::Positions, &names(), &[0.0, 0.0, f64::NEG_INFINITY]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_positions: value 2 (c) is -inf; targets must be finite."
        );
        check_shape(Command::Positions, &names(), &[0.0, 0.0, 1e300]).unwrap();
    }

    /// Clamp stores out-of-limit values at the limit and counts them; values on the limits
    /// are accepted unchanged (limits are inclusive), under either policy.
    #[test]
    fn clamp_stores_values_inside_the_limits_and_values_on_them_pass_unchanged() {
        let clamp_of_a = Clamp {
            index: 0,
            value: 1.5,
            lower: -1.0,
            upper: 1.0,
        };
        for (target, policy, stored, outcome, first) in [
            (
                [1.5, -3.0, 1e9],
                LimitPolicy::Clamp,
                [1.0, -2.0, 1e9],
                TargetOutcome::Clamped { joints: 2 },
                Some(clamp_of_a),
            ),
            (
                [1.0, -2.0, 0.0],
                LimitPolicy::Refuse,
                [1.0, -2.0, 0.0],
                TargetOutcome::Accepted,
                None,
            ),
        ] {
            let mut out = [0.0; 3];
            let applied = limit_positions(&target, policy, &mut out).unwrap();
            assert_eq!(applied, (outcome, first), "{target:?}");
            assert_eq!(out, stored, "{target:?}");
        }
    }

    #[test]
    fn checking_limits_refuses_only_under_refuse() {
        let outside = [0.0, 2.5, 0.0];
        check_positions(&outside, LimitPolicy::Clamp).unwrap();
        let err = check_positions(&outside, LimitPolicy::Refuse).unwrap_err();
        assert!(
            matches!(err, DriverError::TargetOutOfLimits { index: 1, .. }),
            "{err}"
        );
        check_positions(&[1.0, -2.0, 1e300], LimitPolicy::Refuse).unwrap();
    }

    #[test]
    fn refuse_rejects_the_whole_target_and_writes_nothing() {
        let mut out = [7.0; 3];
        let err = limit_positions(&[0.0, 2.5, 0.0], LimitPolicy::Refuse, &mut out).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_positions: value 1 (b) = 2.5 is outside the joint limits [-2, 2]."
        );
        assert_eq!(out, [7.0; 3]);
    }

    #[test]
    fn velocity_and_effort_targets_are_refused_naming_their_method_and_limits() {
        let err =
            check_shape(Command::Velocities, &names(), &[0.0, f64::INFINITY, 0.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_velocities: value 1 (b) is inf; targets must be finite."
        );
        let err = check_shape(Command::Forces, &names(), &[0.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_forces: expected 3 values, got 1."
        );
        let mut out = [0.0; 3];
        let err = apply_limits(
            Command::Forces,
            &names(),
            &[0.0, 0.0, -60.0],
            (&[-54.0, -54.0, -54.0], &[54.0, 54.0, 54.0]),
            LimitPolicy::Refuse,
            &mut out,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "RobotDriverGazebo::set_target_joint_forces: value 2 (c) = -60 is outside the effort limits [-54, 54]."
        );
    }

    #[test]
    fn inverted_limits_do_not_panic() {
        let mut out = [0.0; 1];
        let (outcome, _) = apply_limits(
            Command::Positions,
            &names()[..1],
            &[0.0],
            (&[1.0], &[-1.0]),
            LimitPolicy::Clamp,
            &mut out,
        )
        .unwrap();
        assert_eq!(outcome, TargetOutcome::Clamped { joints: 1 });
        assert_eq!(out, [-1.0]);
    }

    #[test]
    fn the_warning_passes_once_per_interval_and_reports_what_it_held_back() {
        let warning = RateLimitedWarning::new(Duration::from_secs(1));
        let start = Instant::now();
        assert_eq!(warning.permit(start), Some(0));
        assert_eq!(warning.permit(start + Duration::from_millis(10)), None);
        assert_eq!(warning.permit(start + Duration::from_millis(500)), None);
        assert_eq!(warning.permit(start + Duration::from_millis(1000)), Some(2));
    }
}
