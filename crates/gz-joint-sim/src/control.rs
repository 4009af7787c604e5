//! The joint position controller law of gz-sim's JointPositionController (both modes) and
//! gz-math's PID, reproduced step for step.

/// gz-math `PID` parameters (gz-sim's JointPositionController defaults in [`Default`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PidGains {
    pub p: f64,
    pub i: f64,
    pub d: f64,
    pub i_max: f64,
    pub i_min: f64,
    pub cmd_max: f64,
    pub cmd_min: f64,
    pub cmd_offset: f64,
}

impl Default for PidGains {
    fn default() -> Self {
        PidGains {
            p: 1.0,
            i: 0.1,
            d: 0.01,
            i_max: 1.0,
            i_min: -1.0,
            cmd_max: 1000.0,
            cmd_min: -1000.0,
            cmd_offset: 0.0,
        }
    }
}

/// gz-math `PID` state.
#[derive(Clone, Debug)]
pub struct Pid {
    gains: PidGains,
    p_err_last: f64,
    i_err: f64,
}

impl Pid {
    pub fn new(gains: PidGains) -> Pid {
        Pid {
            gains,
            p_err_last: 0.0,
            i_err: 0.0,
        }
    }

    /// `PID::Update(error, dt)`: the derivative is the finite difference of the error (so
    /// the first call sees a kick from 0, as in gz-math); zero `dt` or a non-finite error
    /// yields 0 and leaves the state untouched.
    pub fn update(&mut self, error: f64, dt: f64) -> f64 {
        if dt == 0.0 || !error.is_finite() {
            return 0.0;
        }
        let error_rate = (error - self.p_err_last) / dt;
        if !error_rate.is_finite() {
            return 0.0;
        }
        let g = &self.gains;
        let p_term = g.p * error;
        self.i_err += g.i * dt * error;
        if g.i_max >= g.i_min {
            self.i_err = self.i_err.clamp(g.i_min, g.i_max);
        }
        self.p_err_last = error;
        let d_term = g.d * error_rate;
        let mut cmd = g.cmd_offset - p_term - self.i_err - d_term;
        if g.cmd_max >= g.cmd_min {
            cmd = cmd.clamp(g.cmd_min, g.cmd_max);
        }
        cmd
    }
}

/// How a JointPositionController drives its joints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ControlMode {
    /// `use_velocity_commands` true (gz-sim mode `ABS`): a velocity command that moves the
    /// joint toward the target at most `cmd_max` per second, or lands on it within one step.
    /// `cmd_max` is `None` when the SDF does not set it: then the joint jumps to the target
    /// in one step, as in Gazebo. `cmd_min` plays no part in this mode (Gazebo ignores it).
    Velocity { cmd_max: Option<f64> },
    /// Default: the PID output is a joint force (torque) command.
    Pid,
}

/// gz-sim's `ABS` law: `error = q − q_cmd`; if `|error| > cmd_max·dt` (and `cmd_max` is set)
/// the velocity command is `cmd_max` toward the target, otherwise `−error/dt`.
pub fn velocity_command(position: f64, target: f64, cmd_max: Option<f64>, dt: f64) -> f64 {
    let error = position - target;
    match cmd_max {
        Some(max) if error.abs() > max * dt => {
            if error < 0.0 {
                max
            } else {
                -max
            }
        }
        _ => -error / dt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velocity_law_saturates_at_cmd_max_and_lands_on_target() {
        let dt = 0.002;
        assert_eq!(velocity_command(0.0, 0.5, Some(0.25), dt), 0.25);
        assert_eq!(velocity_command(0.0, -0.5, Some(0.25), dt), -0.25);
        // Within one step's reach: exactly the velocity that lands on the target.
        let v = velocity_command(0.0, 0.0004, Some(0.25), dt);
        assert!((v - 0.2).abs() < 1e-12, "{v}");
        // cmd_max not given: jump in one step.
        assert!((velocity_command(0.0, 1.0, None, dt) - 500.0).abs() < 1e-9);
    }

    #[test]
    fn pid_matches_gz_math_by_hand() {
        let gains = PidGains {
            p: 2.0,
            i: 0.5,
            d: 0.1,
            i_max: 10.0,
            i_min: -10.0,
            cmd_max: 100.0,
            cmd_min: -100.0,
            cmd_offset: 1.0,
        };
        let mut pid = Pid::new(gains);
        // First update: derivative from 0.
        let out = pid.update(1.0, 0.1);
        let expect = 1.0 - 2.0 * 1.0 - 0.5 * 0.1 * 1.0 - 0.1 * (1.0 / 0.1);
        assert!((out - expect).abs() < 1e-12, "{out} vs {expect}");
        let out = pid.update(0.5, 0.1);
        let i_err = 0.05 + 0.5 * 0.1 * 0.5;
        let expect = 1.0 - 2.0 * 0.5 - i_err - 0.1 * ((0.5 - 1.0) / 0.1);
        assert!((out - expect).abs() < 1e-12, "{out} vs {expect}");
    }

    #[test]
    fn pid_clamps_integral_and_output_and_ignores_bad_input() {
        let gains = PidGains {
            p: 0.0,
            i: 100.0,
            d: 0.0,
            i_max: 1.0,
            i_min: -1.0,
            cmd_max: 0.5,
            cmd_min: -0.25,
            cmd_offset: 0.0,
        };
        let mut pid = Pid::new(gains);
        assert_eq!(pid.update(1.0, 1.0), -0.25); // −i_err = −1 clamped to cmd_min
        assert_eq!(pid.update(-3.0, 1.0), 0.5); // i_err −1 → cmd 1 clamped to cmd_max
        assert_eq!(pid.update(f64::NAN, 1.0), 0.0);
        assert_eq!(pid.update(1.0, 0.0), 0.0);
    }
}
