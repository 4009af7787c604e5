//! What the monitor records of one robot, stamped on arrival with one monotonic clock.
//!
//! Callbacks (the gz-transport receive thread, the ROS executor thread) only push onto
//! these vectors; everything is worked out after the run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;

/// The monitor's clock: nanoseconds since its epoch, on the monotonic clock. Wall-clock times
/// (DDS source timestamps, taken by the publishing process on the same machine) are mapped
/// onto it through the wall-clock time read at the epoch; over a run, the two clocks drift
/// apart by no more than NTP slewing allows (≤ 0.5 ms/s, in practice far less).
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    epoch: Instant,
    epoch_wall: SystemTime,
}

impl MonotonicClock {
    /// A clock whose epoch is now.
    pub fn start() -> Self {
        MonotonicClock {
            epoch: Instant::now(),
            epoch_wall: SystemTime::now(),
        }
    }

    /// Nanoseconds since the epoch.
    pub fn now_ns(&self) -> i64 {
        i64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    /// A wall-clock time as nanoseconds since the epoch (negative if before it).
    pub fn from_wall(&self, wall: SystemTime) -> i64 {
        match wall.duration_since(self.epoch_wall) {
            Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
            Err(before) => -i64::try_from(before.duration().as_nanos()).unwrap_or(i64::MAX),
        }
    }
}

/// One Gazebo joint-state message, reduced to the robot's joints.
#[derive(Clone, Debug, PartialEq)]
pub struct GazeboSample {
    /// Arrival at the monitor.
    pub arrival_ns: i64,
    /// `header.stamp` (sim time), if the message had one.
    pub stamp_ns: Option<i64>,
    /// Positions in the robot's joint order; NaN for a joint the message lacked.
    pub positions: Vec<f64>,
}

/// One `get/joint_states` report of the bridge.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportSample {
    /// Arrival at the monitor.
    pub arrival_ns: i64,
    /// When the bridge published it (the DDS source timestamp), if the middleware said.
    pub source_ns: Option<i64>,
    /// `header.stamp`.
    pub stamp_ns: i64,
    /// `position`.
    pub positions: Vec<f64>,
}

/// One target sent to the bridge on `set/target_joint_positions`.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetSample {
    /// Arrival at the monitor.
    pub arrival_ns: i64,
    /// When the client published it (the DDS source timestamp), if the middleware said.
    pub source_ns: Option<i64>,
    /// `data`.
    pub values: Vec<f64>,
}

/// One `cmd_pos` command seen on the Gazebo side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandSample {
    /// Arrival at the monitor.
    pub arrival_ns: i64,
    /// `data`.
    pub value: f64,
}

/// Everything recorded for one robot.
#[derive(Debug, Default)]
pub struct RobotRecording {
    /// Gazebo joint states.
    pub gazebo: Vec<GazeboSample>,
    /// The bridge's reports.
    pub reports: Vec<ReportSample>,
    /// Targets sent to the bridge.
    pub targets: Vec<TargetSample>,
    /// `cmd_pos` commands, one stream per joint.
    pub commands: Vec<Vec<CommandSample>>,
}

/// A recording shared between the callbacks that fill it.
pub type SharedRecording = Arc<Mutex<RobotRecording>>;

/// Picks a robot's joints out of Gazebo `Model` messages by name.
#[derive(Debug)]
pub struct JointPicker {
    index_of: HashMap<String, usize>,
    joint_count: usize,
}

impl JointPicker {
    /// A picker for `joint_names`, in that order.
    pub fn new(joint_names: &[String]) -> Self {
        JointPicker {
            index_of: joint_names
                .iter()
                .enumerate()
                .map(|(index, name)| (name.clone(), index))
                .collect(),
            joint_count: joint_names.len(),
        }
    }

    /// The positions of the robot's joints among `(name, position)` pairs; NaN for a joint
    /// that is absent.
    pub fn pick<'a>(&self, joints: impl IntoIterator<Item = (&'a str, f64)>) -> Vec<f64> {
        let mut positions = vec![f64::NAN; self.joint_count];
        for (name, position) in joints {
            if let Some(&index) = self.index_of.get(name) {
                positions[index] = position;
            }
        }
        positions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picker_orders_by_configuration_and_marks_missing() {
        let picker = JointPicker::new(&["b".into(), "a".into(), "c".into()]);
        let picked = picker.pick([("a", 1.0), ("b", 2.0), ("x", 9.0)]);
        assert_eq!(picked[..2], [2.0, 1.0]);
        assert!(picked[2].is_nan());
    }

    #[test]
    fn clock_is_monotonic_and_maps_wall_times() {
        let clock = MonotonicClock::start();
        let a = clock.now_ns();
        let wall = clock.from_wall(SystemTime::now());
        let b = clock.now_ns();
        assert!(0 <= a && a <= b);
        // The two clocks were read microseconds apart at the epoch and just now.
        assert!(
            (wall - a).abs() < 50_000_000,
            "wall {wall} ns vs monotonic {a} ns"
        );
        let earlier = clock.from_wall(SystemTime::now() - std::time::Duration::from_secs(1));
        assert!(earlier < -900_000_000);
    }
}
