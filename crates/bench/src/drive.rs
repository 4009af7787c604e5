//! The load of the original benchmark, for robots the monitor drives itself (many robots in
//! one process, where one rclpy client per robot would swamp the machine): every joint follows
//! `q0 + 10° · sin(i / (50π))`, `i` counting 10 ms steps, as `joint_interface_example.py` sends.

use std::f64::consts::PI;
use std::time::Duration;

/// Time between two targets: 100 Hz, 2 µs longer than the client's 10 ms so that the phase
/// between the targets and the bridge's periods (10 ms is a whole number of them) sweeps its
/// whole range every ~10 s instead of staying at whatever it happened to start at.
pub const PERIOD: Duration = Duration::from_micros(10_002);
/// Amplitude of the motion about the start position.
pub const AMPLITUDE_DEG: f64 = 10.0;

/// The target of step `i` for a robot that started at `q0`.
pub fn target(q0: &[f64], i: u64) -> Vec<f64> {
    let offset = AMPLITUDE_DEG.to_radians() * (i as f64 / (50.0 * PI)).sin();
    q0.iter().map(|q| q + offset).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_original_sinusoid() {
        let q0 = [0.5, -1.0];
        assert_eq!(target(&q0, 0), q0);
        // A quarter period (~2.47 s) in: the full 10°.
        let quarter = (25.0 * PI * PI).round() as u64;
        let peak = target(&q0, quarter);
        assert!(
            (peak[0] - 0.5 - 10f64.to_radians()).abs() < 1e-4,
            "{peak:?}"
        );
        assert!((peak[1] + 1.0 - 10f64.to_radians()).abs() < 1e-4);
    }
}
