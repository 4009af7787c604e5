//! Reads of the joint states recorded by client processes (`bench/client_reader.py`): when
//! each client saw each state, so that the monitor can time it against Gazebo's message like
//! the bridge's reports.
//!
//! A client appends one line per state it read: the state's header stamp and the
//! `CLOCK_MONOTONIC` instant it saw it, both in nanoseconds (`time.monotonic_ns()` in Python):
//!
//! ```text
//! 1234002000000 98123456789012
//! ```
//!
//! The monitor's clock is `CLOCK_MONOTONIC` too (Rust's `Instant` on Linux), from another
//! epoch: [`monotonic_now_ns`] read beside the monitor clock gives the offset.

use std::path::Path;

use crate::recording::ReportSample;

/// Why a client's reads cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadsError {
    /// The file could not be read.
    #[error("cannot read the client's reads {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// `CLOCK_MONOTONIC` now, in nanoseconds.
pub fn monotonic_now_ns() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// The reads in `path` as reports seen at `seen - epoch_ns` on the monitor's clock
/// (`epoch_ns`: the monitor clock's epoch on `CLOCK_MONOTONIC`). A line that is not two
/// integers (the last one, half written) is skipped.
pub fn load(path: &Path, epoch_ns: i64) -> Result<Vec<ReportSample>, ReadsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadsError::Read {
        path: path.display().to_string(),
        source,
    })?;
    Ok(parse(&text, epoch_ns))
}

fn parse(text: &str, epoch_ns: i64) -> Vec<ReportSample> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let stamp_ns = fields.next()?.parse().ok()?;
            let seen_ns: i64 = fields.next()?.parse().ok()?;
            fields.next().is_none().then_some(ReportSample {
                arrival_ns: seen_ns - epoch_ns,
                source_ns: None,
                stamp_ns,
                positions: Vec::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_map_onto_the_monitor_clock_and_a_torn_last_line_is_skipped() {
        let reads = parse("100 5000\n200 5100\n300 51", 4000);
        assert_eq!(reads.len(), 3);
        assert_eq!((reads[0].stamp_ns, reads[0].arrival_ns), (100, 1000));
        assert_eq!((reads[1].stamp_ns, reads[1].arrival_ns), (200, 1100));
        let reads = parse("100 5000\n200 5100 7\nx 1\n300", 0);
        assert_eq!(reads.len(), 1);
    }

    #[test]
    fn the_monotonic_clock_matches_instant() {
        let before = std::time::Instant::now();
        let a = monotonic_now_ns();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = monotonic_now_ns();
        let elapsed = before.elapsed().as_nanos() as i64;
        assert!(b - a >= 20_000_000 && b - a <= elapsed + 1_000_000);
    }
}
