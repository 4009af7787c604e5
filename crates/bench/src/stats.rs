//! Percentiles and distribution summaries of lag samples.

use serde::Serialize;

/// Points of an empirical CDF kept in results (enough for a smooth plot).
const CDF_POINTS: usize = 200;

/// A distribution of durations, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Smallest sample.
    pub min_ms: f64,
    /// Mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
    /// The empirical CDF, `[ms, fraction ≤ ms]`, at most 200 points (for plots).
    pub cdf: Vec<[f64; 2]>,
}

/// Summarises durations in nanoseconds; `None` when there are none.
pub fn summarize(samples_ns: &[i64]) -> Option<Summary> {
    if samples_ns.is_empty() {
        return None;
    }
    let mut ms: Vec<f64> = samples_ns.iter().map(|&ns| ns as f64 / 1e6).collect();
    ms.sort_by(f64::total_cmp);
    let count = ms.len();
    let cdf = (0..CDF_POINTS.min(count))
        .map(|i| {
            let q = if CDF_POINTS.min(count) == 1 {
                1.0
            } else {
                i as f64 / (CDF_POINTS.min(count) - 1) as f64
            };
            [round(quantile(&ms, q), 4), round(q, 4)]
        })
        .collect();
    Some(Summary {
        count,
        min_ms: round(ms[0], 4),
        mean_ms: round(ms.iter().sum::<f64>() / count as f64, 4),
        p50_ms: round(quantile(&ms, 0.5), 4),
        p90_ms: round(quantile(&ms, 0.9), 4),
        p99_ms: round(quantile(&ms, 0.99), 4),
        max_ms: round(ms[count - 1], 4),
        cdf,
    })
}

/// The `q` quantile of sorted values, linearly interpolated between the two nearest ranks
/// (numpy's default).
///
/// # Panics
/// If `sorted` is empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

/// The median of unsorted values; `None` when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(quantile(&sorted, 0.5))
}

/// `value` rounded to `decimals` places (keeps result files short and readable).
pub fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let sorted = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&sorted, 0.5), 2.5);
        assert_eq!(quantile(&sorted, 0.0), 1.0);
        assert_eq!(quantile(&sorted, 1.0), 4.0);
        assert!((quantile(&sorted, 0.9) - 3.7).abs() < 1e-12);
    }

    #[test]
    fn summary_of_milliseconds() {
        let ns: Vec<i64> = (1..=100).map(|i| i * 1_000_000).collect();
        let s = summarize(&ns).unwrap();
        assert_eq!(s.count, 100);
        assert_eq!(s.min_ms, 1.0);
        assert_eq!(s.max_ms, 100.0);
        assert_eq!(s.p50_ms, 50.5);
        assert_eq!(s.p99_ms, 99.01);
        assert_eq!(s.cdf.len(), 100);
        assert_eq!(s.cdf.last().unwrap(), &[100.0, 1.0]);
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn median_of_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }
}
