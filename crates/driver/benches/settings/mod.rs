//! What the driver's benches share: criterion's settings, and (by path, from the integration
//! tests) the thread that contends with the measured side.

use std::time::Duration;

use criterion::Criterion;

#[path = "../../tests/driver/repeating.rs"]
pub mod repeating;

/// The settings of every driver bench: a short warm-up and measurement, 30 samples.
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}
