//! The bridge benchmark's measurements, ROS-free so they can be tested on synthetic streams
//! (but for the binaries' [`command_line`], which leaves the ROS arguments to ROS).
//!
//! The monitor (`bench-monitor`, `src/main.rs`) records, on one monotonic clock, every Gazebo
//! joint-state message, every `get/joint_states` report of the bridge, every target sent on
//! `set/target_joint_positions` and every `cmd_pos` command that reaches the Gazebo side
//! ([`recording`]). After the run it works out:
//!
//! - [`exact`]: for every Gazebo message, the time until the first report that carries it
//!   (matched by Gazebo stamp, or by exact position values), and how many were never reported;
//!   for every target, the time until all of its values were seen on the `cmd_pos` topics;
//! - [`original`]: the original `bridge_lag_monitor.py` figure (20 ms sampling, best-alignment
//!   shift, largest gap), emulated on the same recorded streams;
//! - [`procstat`]: CPU (user+sys, % of one core), RSS and wake-ups of the processes under test,
//!   sampled from `/proc` once a second.
//!
//! Client processes may record when they read each state ([`readers`]); the monitor times
//! those reads like the bridge's reports.
//!
//! For runs with many robots in one bridge process, the monitor can also send the benchmark's
//! sinusoid targets itself ([`drive`]).
//!
//! Times are nanoseconds since the monitor's epoch (`i64`), durations in results are
//! milliseconds (`f64`).

pub mod command_line;
pub mod drive;
pub mod exact;
pub mod original;
pub mod procstat;
pub mod readers;
pub mod recording;
pub mod spec;
pub mod stats;
