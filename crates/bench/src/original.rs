//! The original's figure: `bridge_lag_monitor.py` of SmartArmStack's BENCHMARK.md, emulated on
//! the recorded streams so it describes the very run the exact figures describe.
//!
//! What that script does, and what the emulation reproduces:
//! - its Gazebo subscription is throttled to 50 msg/s (gz-transport `msgs_per_sec = 50`: a
//!   message is delivered only if 20 ms have passed since the last one delivered);
//! - its loop calls `rclpy.spin_once(timeout_sec=0.005)`, which returns after one report
//!   callback or after 5 ms, and appends a row `[t, gazebo…, reported…]` (the latest values
//!   of each side) whenever at least 20 ms have passed since the last row;
//! - analysis: rows with a NaN are dropped and so are rows with `t ≤ min(10, seconds/2)`;
//!   `dt = median(diff(t))` over all rows; for every shift `k` in `0 … min(1000, n/2) − 1`,
//!   `err_k = max |r[k:] − g[:n−k]|`; the lag is `dt · argmin err_k` (first minimum) and the
//!   largest gap `max |r − g|` at zero shift, in degrees.

use serde::Serialize;

use crate::recording::{GazeboSample, ReportSample};
use crate::stats::{median, round};

/// The original monitor's Gazebo throttle (50 msg/s) and row interval.
const SAMPLE_PERIOD_NS: i64 = 20_000_000;
/// `spin_once(timeout_sec=0.005)`.
const SPIN_TIMEOUT_NS: i64 = 5_000_000;
/// The original's warm-up: `t > min(10, seconds / 2)`.
const ORIGINAL_SKIP_S: f64 = 10.0;
/// The original's largest shift tried.
const MAX_SHIFT: usize = 1000;

/// What the original monitor would have printed for this run.
#[derive(Clone, Debug, Serialize)]
pub struct OriginalFigure {
    /// Rows kept for the analysis.
    pub rows: usize,
    /// `median(diff(t))`.
    pub dt_ms: f64,
    /// The best-alignment shift, `1e3 · lag · dt` (the script prints it rounded to 1 ms).
    pub lag_ms: f64,
    /// `max |r − g|` at zero shift over all joints and kept rows.
    pub largest_gap_deg: f64,
    /// The script's line.
    pub printed: String,
}

/// One row of the original's sampling: time since the start and both sides' latest values.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Seconds since the start of the run.
    pub t_s: f64,
    /// Gazebo's positions as the throttled subscription last delivered them.
    pub gazebo: Vec<f64>,
    /// The bridge's last reported positions.
    pub reported: Vec<f64>,
}

/// The rows the original loop would have taken over `[start_ns, start_ns + seconds)`.
pub fn sample_rows(
    gazebo: &[GazeboSample],
    reports: &[ReportSample],
    start_ns: i64,
    seconds: f64,
) -> Vec<Row> {
    let end_ns = start_ns + (seconds * 1e9) as i64;
    let mut delivered: Vec<&GazeboSample> = Vec::new();
    for sample in gazebo {
        let due = delivered
            .last()
            .is_none_or(|last| sample.arrival_ns - last.arrival_ns >= SAMPLE_PERIOD_NS);
        if due {
            delivered.push(sample);
        }
    }
    let mut rows = Vec::new();
    let mut last_row: Option<i64> = None;
    let mut now = start_ns;
    let mut next_report = reports.partition_point(|r| r.arrival_ns <= now);
    while now < end_ns {
        // spin_once returns with the next report, or after its timeout.
        now = match reports.get(next_report) {
            Some(report) if report.arrival_ns <= now + SPIN_TIMEOUT_NS => {
                next_report += 1;
                report.arrival_ns
            }
            _ => now + SPIN_TIMEOUT_NS,
        };
        if last_row.is_some_and(|last| now - last < SAMPLE_PERIOD_NS) {
            continue;
        }
        last_row = Some(now);
        let latest_gazebo = delivered.partition_point(|g| g.arrival_ns <= now);
        let latest_report = reports.partition_point(|r| r.arrival_ns <= now);
        let joints = gazebo.first().map_or(0, |g| g.positions.len());
        rows.push(Row {
            t_s: (now - start_ns) as f64 / 1e9,
            gazebo: latest_gazebo.checked_sub(1).map_or_else(
                || vec![f64::NAN; joints],
                |i| delivered[i].positions.clone(),
            ),
            reported: latest_report
                .checked_sub(1)
                .map_or_else(|| vec![f64::NAN; joints], |i| reports[i].positions.clone()),
        });
    }
    rows
}

/// The original's analysis of its rows over a run of `seconds`; `None` when no row is usable.
pub fn analyse(rows: &[Row], seconds: f64) -> Option<OriginalFigure> {
    let times: Vec<f64> = rows.iter().map(|row| row.t_s).collect();
    let steps: Vec<f64> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
    let dt = median(&steps)?;
    let skip = ORIGINAL_SKIP_S.min(seconds / 2.0);
    let kept: Vec<&Row> = rows
        .iter()
        .filter(|row| row.t_s > skip)
        .filter(|row| {
            row.gazebo.len() == row.reported.len()
                && !row.gazebo.is_empty()
                && row.gazebo.iter().chain(&row.reported).all(|v| !v.is_nan())
        })
        .collect();
    let n = kept.len();
    if n < 2 {
        return None;
    }
    let gap_at = |shift: usize| {
        (shift..n)
            .flat_map(|i| {
                kept[i]
                    .reported
                    .iter()
                    .zip(&kept[i - shift].gazebo)
                    .map(|(r, g)| (r - g).abs())
            })
            .fold(0.0, f64::max)
    };
    let mut best = (0, f64::INFINITY);
    for shift in 0..MAX_SHIFT.min(n / 2) {
        let err = gap_at(shift);
        if err < best.1 {
            best = (shift, err);
        }
    }
    let lag_ms = 1e3 * best.0 as f64 * dt;
    let largest_gap_deg = gap_at(0).to_degrees();
    Some(OriginalFigure {
        rows: n,
        dt_ms: round(dt * 1e3, 3),
        lag_ms: round(lag_ms, 3),
        largest_gap_deg: round(largest_gap_deg, 4),
        printed: format!(
            "reported {lag_ms:.0} ms behind Gazebo; largest gap {largest_gap_deg:.2} deg"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// A motion without a period (two incommensurate sinusoids, ±0.17 rad: 1 Hz, and the
    /// benchmark's own 2/π rad/s) sampled every 2 ms on the Gazebo side and reported
    /// `delay_ms` later.
    fn streams(delay_ms: i64, seconds: i64) -> (Vec<GazeboSample>, Vec<ReportSample>) {
        let position = |t_ns: i64| {
            let t = t_ns as f64 / 1e9;
            0.085 * ((t * std::f64::consts::TAU).sin() + (t * std::f64::consts::FRAC_2_PI).sin())
        };
        let gazebo = (0..seconds * 500)
            .map(|i| GazeboSample {
                arrival_ns: i * 2 * MS,
                stamp_ns: Some(i * 2 * MS),
                positions: vec![position(i * 2 * MS)],
            })
            .collect();
        let reports = (0..seconds * 500)
            .map(|i| ReportSample {
                arrival_ns: i * 2 * MS + delay_ms * MS,
                source_ns: None,
                stamp_ns: 0,
                positions: vec![position(i * 2 * MS)],
            })
            .collect();
        (gazebo, reports)
    }

    #[test]
    fn rows_every_20_ms_with_throttled_gazebo() {
        let (gazebo, reports) = streams(0, 2);
        let rows = sample_rows(&gazebo, &reports, 0, 1.0);
        let steps: Vec<f64> = rows.windows(2).map(|p| p[1].t_s - p[0].t_s).collect();
        assert!(
            steps.iter().all(|&s| (0.0199..0.0221).contains(&s)),
            "{steps:?}"
        );
        assert!((48..=51).contains(&rows.len()), "{}", rows.len());
    }

    #[test]
    fn an_undelayed_bridge_shows_no_lag_but_a_sampling_gap() {
        let (gazebo, reports) = streams(0, 30);
        let rows = sample_rows(&gazebo, &reports, 0, 30.0);
        let figure = analyse(&rows, 30.0).unwrap();
        assert_eq!(figure.lag_ms, 0.0);
        // The throttled Gazebo view can be up to 20 ms older than the report: at most
        // (0.085 rad · 2π/s + 0.085 rad · 2/π /s) · 0.02 s ≈ 0.67°.
        assert!(figure.largest_gap_deg < 0.7, "{figure:?}");
        assert!(figure.printed.starts_with("reported 0 ms behind Gazebo"));
    }

    #[test]
    fn a_100_ms_delay_is_found() {
        let (gazebo, reports) = streams(100, 30);
        let rows = sample_rows(&gazebo, &reports, 0, 30.0);
        let figure = analyse(&rows, 30.0).unwrap();
        assert!((80.0..=120.0).contains(&figure.lag_ms), "{figure:?}");
    }
}
