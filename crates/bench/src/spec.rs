//! What one monitor run watches and for how long: a JSON file written by `bench/run.py`.
//!
//! ```json
//! {"duration_s": 45, "skip_s": 10, "ready_timeout_s": 60,
//!  "robots": [{"name": "ur3e_1",
//!              "joint_states_topic": "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state",
//!              "joint_positions_topic_prefix": "/model/ur3e/joint/",
//!              "joint_names": ["shoulder_pan_joint", "elbow_joint"],
//!              "match_by": "stamp", "drive": false, "commands": true}],
//!  "watch": [{"label": "bridge", "pid": 1234, "exclude_threads": ["gil-hog"]}]}
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Why a spec cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("cannot read the run spec {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid spec.
    #[error("the run spec {path} is invalid: {source}")]
    Parse {
        /// The file.
        path: String,
        /// Where and why.
        source: serde_json::Error,
    },
    /// The spec parses but a value is unusable.
    #[error("the run spec {path} is invalid: {problem}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        problem: String,
    },
}

/// How a report is matched to the Gazebo message it carries.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// The report's header stamp equals the Gazebo message's (sim time): the bridge runs with
    /// `joint_states_stamp: gazebo`. Exact.
    Stamp,
    /// The report's positions equal the Gazebo message's, bit for bit. Joints that hold still
    /// repeat values, so only messages whose positions changed can be told apart.
    Values,
}

/// One robot as the bridge sees it.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RobotSpec {
    /// The bridge's `robot_name`: topics `<name>/get/joint_states`, `<name>/set/…`.
    pub name: String,
    /// The Gazebo `Model` topic carrying its joints.
    pub joint_states_topic: String,
    /// `<prefix><joint>/0/cmd_pos` are its command topics.
    pub joint_positions_topic_prefix: String,
    /// Gazebo joint names in the order of the bridge's vectors.
    pub joint_names: Vec<String>,
    /// How reports are matched to Gazebo messages.
    pub match_by: MatchBy,
    /// The monitor sends the sinusoid targets itself (from the first reported positions)
    /// instead of a client process.
    #[serde(default)]
    pub drive: bool,
    /// Whether to time the command path (subscribe to its `cmd_pos` topics). With many robots,
    /// one robot's suffices: every robot's commands would cost the monitor more than it tells.
    #[serde(default = "yes")]
    pub commands: bool,
    /// Whether the process under test publishes the robot's limits (`get/joint_positions_min|
    /// max`): the monitor then waits for them before it starts (a bridge floor has none).
    #[serde(default = "yes")]
    pub limits: bool,
}

fn yes() -> bool {
    true
}

impl RobotSpec {
    /// The `cmd_pos` topic of each joint, in joint order.
    pub fn command_topics(&self) -> Vec<String> {
        self.joint_names
            .iter()
            .map(|joint| format!("{}{joint}/0/cmd_pos", self.joint_positions_topic_prefix))
            .collect()
    }
}

/// A process whose CPU and memory are sampled.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct WatchSpec {
    /// What it is (`bridge`, `simulator`, …).
    pub label: String,
    /// Its process id.
    pub pid: u32,
    /// Threads (by `comm` name) whose CPU time is not counted, e.g. the benchmark's own
    /// GIL-hogging thread inside a Python bridge.
    #[serde(default)]
    pub exclude_threads: Vec<String>,
}

/// A client process that records when it read each joint state (see [`crate::readers`]).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ReaderSpec {
    /// What it is (`client_rclpy`, …); its figures are keyed by it.
    pub label: String,
    /// The robot (by `name`) whose states it reads.
    pub robot: String,
    /// The file it appends its reads to.
    pub path: std::path::PathBuf,
}

/// One monitor run.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RunSpec {
    /// Recording time once every robot's streams flow.
    pub duration_s: f64,
    /// Warm-up at the start of the recording that the exact-lag and CPU figures ignore.
    pub skip_s: f64,
    /// How long to wait for every robot's streams (and targets) to flow before recording.
    pub ready_timeout_s: f64,
    /// Seconds of full-rate trajectory (first robot, first joint) kept for the overlay plot.
    #[serde(default = "default_trajectory_s")]
    pub trajectory_s: f64,
    /// gz-transport partition; default from GZ_PARTITION/IGN_PARTITION.
    #[serde(default)]
    pub partition: Option<String>,
    /// The robots.
    pub robots: Vec<RobotSpec>,
    /// The processes to sample.
    #[serde(default)]
    pub watch: Vec<WatchSpec>,
    /// The ROS topic the bridge floor (`bench-floor bridge`) publishes on: the monitor is its
    /// one subscriber, as it is the bridge's.
    #[serde(default)]
    pub floor_topic: Option<String>,
    /// Client processes whose reads are timed.
    #[serde(default)]
    pub readers: Vec<ReaderSpec>,
}

fn default_trajectory_s() -> f64 {
    1.0
}

impl RunSpec {
    /// Reads and checks a spec file.
    ///
    /// # Errors
    /// Unreadable, unparsable, or unusable values (named).
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: shown.clone(),
            source,
        })?;
        let spec: RunSpec = serde_json::from_str(&text).map_err(|source| SpecError::Parse {
            path: shown.clone(),
            source,
        })?;
        spec.validate().map_err(|problem| SpecError::Invalid {
            path: shown,
            problem,
        })?;
        Ok(spec)
    }

    fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be a positive number of seconds, got {value}"
                ))
            }
        };
        positive("duration_s", self.duration_s)?;
        positive("ready_timeout_s", self.ready_timeout_s)?;
        positive("trajectory_s", self.trajectory_s)?;
        if !(self.skip_s.is_finite() && self.skip_s >= 0.0 && self.skip_s < self.duration_s) {
            return Err(format!(
                "skip_s must be in [0, duration_s = {}), got {}",
                self.duration_s, self.skip_s
            ));
        }
        if self.robots.is_empty() {
            return Err("robots is empty: nothing to watch".into());
        }
        for robot in &self.robots {
            if robot.joint_names.is_empty() {
                return Err(format!("robot {:?} has no joint_names", robot.name));
            }
        }
        for reader in &self.readers {
            if !self.robots.iter().any(|robot| robot.name == reader.robot) {
                return Err(format!(
                    "reader {:?} reads robot {:?}, which is not among the robots",
                    reader.label, reader.robot
                ));
            }
        }
        Ok(())
    }
}
