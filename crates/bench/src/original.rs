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
//!
//! Where the emulation departs from the script: the shift search stops at a quarter of the
//! motion's period instead of at 1000 rows (20 s). The motion is a sinusoid of period
//! P ≈ 9.87 s, so a stream matches itself shifted by any whole number of periods: the
//! script's search, reaching two periods, can land on the alias at `lag + P` (a full idle run
//! printed "9 984 ms behind" for a bridge 0.4 ms behind; in the tests below, a stall early in
//! the window, left out of the comparison at that shift, and even a plain 300 ms lag do it).
//! Of a pure sinusoid, the error at shift `s`
//! is `2A·|sin(π(s − lag)/P)|`: zero at the lag, largest half a period away, zero again at
//! `lag ± P`. Searching `[0, P/4]` keeps every shift tried at least ¾ of a period away from
//! the nearest alias of any lag the search can report, and the error still rises by
//! `2A·sin(π/4) ≈ 1.4 A` across the range (14° for the benchmark's 10°), far above the
//! sampling noise (the throttled view's ≤ 20 ms, < 1°). A best shift at the bound itself
//! means the error was still falling there: the lag is at least the bound (or is an alias the
//! method cannot tell from a smaller one), so it is reported as ambiguous, without a number.

use std::f64::consts::PI;

use serde::Serialize;

use crate::recording::{GazeboSample, ReportSample};
use crate::stats::{median, round};

/// The period of the benchmark's motion, `sin(i / (50π))` over 10 ms steps (`drive::target`
/// and `joint_interface_example.py`): 100π² steps, ≈ 9.87 s.
pub const MOTION_PERIOD_S: f64 = 100.0 * PI * PI * 0.010;

/// The original monitor's Gazebo throttle (50 msg/s) and row interval.
const SAMPLE_PERIOD_NS: i64 = 20_000_000;
/// `spin_once(timeout_sec=0.005)`.
const SPIN_TIMEOUT_NS: i64 = 5_000_000;
/// The original's warm-up: `t > min(10, seconds / 2)`.
const ORIGINAL_SKIP_S: f64 = 10.0;
/// The original's largest shift tried.
const MAX_SHIFT: usize = 1000;
/// The largest shift tried, as a fraction of the motion's period (why: the module's text).
const SHIFT_BOUND_PERIODS: f64 = 0.25;

/// What the original monitor would have printed for this run.
#[derive(Clone, Debug, Serialize)]
pub struct OriginalFigure {
    /// Rows kept for the analysis.
    pub rows: usize,
    /// `median(diff(t))`.
    pub dt_ms: f64,
    /// The best-alignment shift, `1e3 · lag · dt` (the script prints it rounded to 1 ms);
    /// `None` when ambiguous: the best shift is the largest one searched.
    pub lag_ms: Option<f64>,
    /// The largest shift searched: a quarter of the motion's period (or less, for short runs).
    pub search_bound_ms: f64,
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

/// The original's analysis of its rows over a run of `seconds`, the shift search bounded by
/// a quarter of `motion_period_s` (the module's text says why); `None` when no row is usable.
pub fn analyse(rows: &[Row], seconds: f64, motion_period_s: f64) -> Option<OriginalFigure> {
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
    // `as` saturates: an unbounded period leaves the original's bounds.
    let period_bound = (SHIFT_BOUND_PERIODS * motion_period_s / dt).floor() as usize;
    let shifts = MAX_SHIFT
        .min(n / 2)
        .min(period_bound.saturating_add(1))
        .max(1);
    let mut best = (0, f64::INFINITY);
    for shift in 0..shifts {
        let err = gap_at(shift);
        if err < best.1 {
            best = (shift, err);
        }
    }
    let largest_gap_deg = gap_at(0).to_degrees();
    let search_bound_ms = 1e3 * (shifts - 1) as f64 * dt;
    let ambiguous = shifts > 1 && best.0 == shifts - 1;
    let lag_ms = (!ambiguous).then_some(1e3 * best.0 as f64 * dt);
    let printed = match lag_ms {
        Some(lag_ms) => {
            format!("reported {lag_ms:.0} ms behind Gazebo; largest gap {largest_gap_deg:.2} deg")
        }
        None => {
            let why = if shifts == period_bound.saturating_add(1) {
                format!(", a quarter of the motion's {motion_period_s:.2} s period")
            } else {
                String::new()
            };
            format!(
                "lag ambiguous: the best alignment is the largest shift searched \
                 ({search_bound_ms:.0} ms{why}), so the lag is that or more, or an alias; \
                 largest gap {largest_gap_deg:.2} deg"
            )
        }
    };
    Some(OriginalFigure {
        rows: n,
        dt_ms: round(dt * 1e3, 3),
        lag_ms: lag_ms.map(|lag_ms| round(lag_ms, 3)),
        search_bound_ms: round(search_bound_ms, 3),
        largest_gap_deg: round(largest_gap_deg, 4),
        printed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// A motion without a period (two incommensurate sinusoids, ±0.17 rad: 1 Hz, and the
    /// benchmark's own 2/π rad/s).
    fn aperiodic(t_s: f64) -> f64 {
        0.085 * ((t_s * std::f64::consts::TAU).sin() + (t_s * std::f64::consts::FRAC_2_PI).sin())
    }

    /// The benchmark's motion: ±10° of period [`MOTION_PERIOD_S`].
    fn benchmark_motion(t_s: f64) -> f64 {
        10f64.to_radians() * (t_s * std::f64::consts::TAU / MOTION_PERIOD_S).sin()
    }

    /// `motion` sampled every 2 ms on the Gazebo side over `seconds`, each sample reported
    /// `report_delay_ns(arrival)` after it arrived.
    fn recorded(
        motion: impl Fn(f64) -> f64,
        seconds: i64,
        report_delay_ns: impl Fn(i64) -> i64,
    ) -> (Vec<GazeboSample>, Vec<ReportSample>) {
        let arrivals = (0..seconds * 500).map(|i| i * 2 * MS);
        let gazebo: Vec<GazeboSample> = arrivals
            .map(|arrival_ns| GazeboSample {
                arrival_ns,
                stamp_ns: Some(arrival_ns),
                positions: vec![motion(arrival_ns as f64 / 1e9)],
            })
            .collect();
        let reports = gazebo
            .iter()
            .map(|g| ReportSample {
                arrival_ns: g.arrival_ns + report_delay_ns(g.arrival_ns),
                source_ns: None,
                stamp_ns: 0,
                positions: g.positions.clone(),
            })
            .collect();
        (gazebo, reports)
    }

    fn streams(delay_ms: i64, seconds: i64) -> (Vec<GazeboSample>, Vec<ReportSample>) {
        recorded(aperiodic, seconds, |_| delay_ms * MS)
    }

    fn figure_of(
        (gazebo, reports): (Vec<GazeboSample>, Vec<ReportSample>),
        seconds: f64,
    ) -> OriginalFigure {
        let rows = sample_rows(&gazebo, &reports, 0, seconds);
        analyse(&rows, seconds, MOTION_PERIOD_S).unwrap()
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
        let figure = figure_of(streams(0, 30), 30.0);
        assert_eq!(figure.lag_ms, Some(0.0));
        // The throttled Gazebo view can be up to 20 ms older than the report: at most
        // (0.085 rad · 2π/s + 0.085 rad · 2/π /s) · 0.02 s ≈ 0.67°.
        assert!(figure.largest_gap_deg < 0.7, "{figure:?}");
        assert!(figure.printed.starts_with("reported 0 ms behind Gazebo"));
    }

    #[test]
    fn a_100_ms_delay_is_found() {
        let figure = figure_of(streams(100, 30), 30.0);
        let lag_ms = figure.lag_ms.unwrap();
        assert!((80.0..=120.0).contains(&lag_ms), "{figure:?}");
    }

    #[test]
    fn the_benchmarks_motion_reported_300_ms_late_reads_300_ms() {
        let figure = figure_of(recorded(benchmark_motion, 45, |_| 300 * MS), 45.0);
        let lag_ms = figure.lag_ms.unwrap();
        assert!((280.0..=320.0).contains(&lag_ms), "{figure:?}");
        assert!(
            (2400.0..2500.0).contains(&figure.search_bound_ms),
            "a quarter of 9.87 s: {figure:?}"
        );
    }

    /// What made the original's search print "9 984 ms behind" for a bridge 0.4 ms behind: a
    /// stall early in the window is compared at zero shift, but left out at a shift of one
    /// period, where the periodic motion matches itself — so that alias won.
    #[test]
    fn an_early_stall_never_reads_as_a_lag_of_one_period() {
        // The bridge reports at once, but for 200 ms at t = 11 s it stalls and then catches up.
        let stall = |arrival_ns: i64| {
            let (from, to) = (11_000 * MS, 11_200 * MS);
            if (from..to).contains(&arrival_ns) {
                to - arrival_ns
            } else {
                0
            }
        };
        let figure = figure_of(recorded(benchmark_motion, 45, stall), 45.0);
        let lag_ms = figure.lag_ms.unwrap();
        assert!(lag_ms < 100.0, "{figure:?}");
        assert!(
            figure
                .printed
                .starts_with(&format!("reported {lag_ms:.0} ms behind")),
            "{}",
            figure.printed
        );
    }

    #[test]
    fn a_lag_beyond_the_search_bound_is_reported_ambiguous_without_a_number() {
        let figure = figure_of(recorded(benchmark_motion, 45, |_| 3000 * MS), 45.0);
        assert_eq!(figure.lag_ms, None, "{figure:?}");
        assert!(
            figure.printed.starts_with("lag ambiguous"),
            "{}",
            figure.printed
        );
        assert!(!figure.printed.contains("behind"), "{}", figure.printed);
    }
}
