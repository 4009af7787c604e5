use std::str::FromStr;
use std::time::Duration;

use sas_robot_driver_gazebo::ForwardMode;

use crate::BridgeError;

/// Where the `header.stamp` of `get/joint_states` comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StampSource {
    /// The node's clock when the state is published (the original's behaviour; ROS time, so
    /// `use_sim_time` applies).
    #[default]
    NodeClock,
    /// Gazebo's simulation time of the message the state came from: a stale state keeps its
    /// old stamp, so consumers can see staleness. Falls back to the node clock (with one
    /// warning) while Gazebo's messages carry no stamp.
    Gazebo,
}

impl FromStr for StampSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "node_clock" => Ok(StampSource::NodeClock),
            "gazebo" => Ok(StampSource::Gazebo),
            other => Err(format!(
                "unknown stamp source {other:?}: expected \"node_clock\" or \"gazebo\""
            )),
        }
    }
}

/// When `get/joint_states` is published (`joint_states_publishing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JointStatesPublishing {
    /// From the receive path, as soon as a Gazebo message is in the cache, at most once per
    /// period: a message arriving sooner is published when the period since the last
    /// publication ends, the latest one winning. A driver that cannot notify (see
    /// [`RobotDriver::add_state_listener`](sas_robot_driver_gazebo::RobotDriver::add_state_listener))
    /// falls back to `Grid`.
    #[default]
    OnArrival,
    /// Every period of the loop's deadline grid, whatever is in the cache (the original's).
    Grid,
}

/// When `set/target_joint_positions` reaches Gazebo (`target_forwarding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TargetForwarding {
    /// Validated and sent the moment it arrives, on the executor's thread; re-sent only after
    /// `target_keepalive_sec` without a new one (Gazebo's controllers hold the last command),
    /// and to a Gazebo that (re)connects.
    #[default]
    OnArrival,
    /// The latest target is validated and sent every period, changed or not (the original's
    /// contract).
    Periodic,
}

/// When `get/joint_positions_min|max` are published (`joint_limits_publishing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitsPublishing {
    /// When they change (at initialization), as soon as a new subscriber matches, and every
    /// `joint_limits_heartbeat_sec`: a client that starts late gets them at once, and one
    /// that missed them gets them with the next heartbeat.
    #[default]
    OnChange,
    /// Every period (the original's contract).
    Periodic,
}

/// What `get/joint_states` carries while the robot is stale (`stale_joint_states`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StaleJointStates {
    /// Nothing: a stale state is never presented as fresh.
    #[default]
    Withhold,
    /// The last state, every period, stamped as usual (the original's behaviour; with
    /// `joint_states_stamp: node_clock` the stamps look fresh). Only in `Grid` publishing.
    Republish,
}

macro_rules! parse_names {
    ($type:ty, $($name:literal => $value:path),+) => {
        impl FromStr for $type {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($value),)+
                    other => Err(format!(
                        "unknown value {other:?}: expected {}",
                        [$(format!("{:?}", $name)),+].join(" or ")
                    )),
                }
            }
        }

        impl $type {
            /// The name a parameter gives this value (what `from_str` reads).
            pub fn name(self) -> &'static str {
                match self {
                    $($value => $name,)+
                }
            }
        }
    };
}

parse_names!(JointStatesPublishing, "on_arrival" => JointStatesPublishing::OnArrival,
             "grid" => JointStatesPublishing::Grid);
parse_names!(TargetForwarding, "on_arrival" => TargetForwarding::OnArrival,
             "periodic" => TargetForwarding::Periodic);
parse_names!(LimitsPublishing, "on_change" => LimitsPublishing::OnChange,
             "periodic" => LimitsPublishing::Periodic);
parse_names!(StaleJointStates, "withhold" => StaleJointStates::Withhold,
             "republish" => StaleJointStates::Republish);

/// The ROS side's configuration (the original's `RobotDriverROSConfiguration`).
#[derive(Clone, Debug, PartialEq)]
pub struct RobotDriverRosConfiguration {
    /// Topic prefix: topics are `<robot_name>/get/joint_states`, …; a relative name resolves
    /// in the node's namespace (the original's `robot_driver_provider_prefix`).
    pub robot_name: String,
    /// Period of the control loop (`thread_sampling_time_sec`).
    pub thread_sampling_time: Duration,
    /// Stamp of the published joint states.
    pub stamp_source: StampSource,
    /// When joint states are published.
    pub joint_states_publishing: JointStatesPublishing,
    /// When targets reach Gazebo.
    pub target_forwarding: TargetForwarding,
    /// With [`TargetForwarding::OnArrival`], how long an unchanged target goes without being
    /// re-sent (`target_keepalive_sec`); `None`: never re-sent.
    pub target_keepalive: Option<Duration>,
    /// When the joint limits are published.
    pub limits_publishing: LimitsPublishing,
    /// With [`LimitsPublishing::OnChange`], the heartbeat of the limits
    /// (`joint_limits_heartbeat_sec`); `None`: no heartbeat.
    pub limits_heartbeat: Option<Duration>,
    /// Age past which the robot's state is stale (`state_timeout_sec`); `None`: ten of
    /// Gazebo's message intervals as measured (at least ten loop periods and 50 ms).
    pub state_timeout: Option<Duration>,
    /// What is published while stale (grid publishing).
    pub stale_joint_states: StaleJointStates,
    /// SCHED_FIFO priority of the loop and receive threads (`realtime_priority`, 1–99);
    /// `None`: normal scheduling.
    pub realtime_priority: Option<u8>,
}

/// The default of `target_keepalive_sec` and `joint_limits_heartbeat_sec`. Gazebo's
/// controllers hold the last command and gz-transport runs over TCP, so an unchanged target
/// needs no repeating to stay in force, and a (re)connecting Gazebo is sent the target anyway;
/// the keepalive only bounds how long a command lost beyond that (a dropped connection, a
/// full send queue) goes uncorrected, and lets an observer (`gz topic -e`) see the command. A
/// second costs one message per joint and second (the original sent 500). The same for the
/// limits: a subscriber is sent them when it matches, and the heartbeat only repairs a match
/// the node did not see.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(1);

impl RobotDriverRosConfiguration {
    /// A configuration with the original's 2 ms period and node-clock stamps, and our
    /// defaults: joint states on arrival, targets on arrival and limits on change (each with
    /// a one-second heartbeat), stale state withheld, automatic state timeout, normal
    /// scheduling.
    pub fn new(robot_name: impl Into<String>) -> Self {
        RobotDriverRosConfiguration {
            robot_name: robot_name.into(),
            thread_sampling_time: Duration::from_millis(2),
            stamp_source: StampSource::NodeClock,
            joint_states_publishing: JointStatesPublishing::OnArrival,
            target_forwarding: TargetForwarding::OnArrival,
            target_keepalive: Some(DEFAULT_HEARTBEAT),
            limits_publishing: LimitsPublishing::OnChange,
            limits_heartbeat: Some(DEFAULT_HEARTBEAT),
            state_timeout: None,
            stale_joint_states: StaleJointStates::Withhold,
            realtime_priority: None,
        }
    }

    /// How the driver forwards targets under this `target_forwarding`: the loop lets it send
    /// when a target arrives, every period Gazebo sends a state, and at the keepalive; the
    /// driver sends only what the mode calls for.
    pub fn driver_forward_mode(&self) -> ForwardMode {
        match (self.target_forwarding, self.target_keepalive) {
            (TargetForwarding::Periodic, _) => ForwardMode::EveryPeriod,
            (TargetForwarding::OnArrival, Some(keepalive)) => {
                ForwardMode::OnChangeWithKeepalive(keepalive)
            }
            (TargetForwarding::OnArrival, None) => ForwardMode::OnChange,
        }
    }

    /// Whether some duty falls on every period whatever happens (the original's contract for
    /// that duty): then the loop wakes every period Gazebo leaves without a message.
    pub fn has_periodic_duty(&self) -> bool {
        self.joint_states_publishing == JointStatesPublishing::Grid
            || self.target_forwarding == TargetForwarding::Periodic
            || self.limits_publishing == LimitsPublishing::Periodic
    }

    /// Checks what the loop relies on.
    ///
    /// # Errors
    /// An empty `robot_name` or a zero period (the original's clock spun forever on it).
    pub fn validate(&self) -> Result<(), BridgeError> {
        if self.robot_name.is_empty() {
            return Err(BridgeError::Configuration(
                "robot_name is empty; it is the prefix of every topic".into(),
            ));
        }
        if self.thread_sampling_time.is_zero() {
            return Err(BridgeError::Configuration(format!(
                "thread_sampling_time of {:?} must be greater than zero",
                self.robot_name
            )));
        }
        if self
            .realtime_priority
            .is_some_and(|p| !(1..=99).contains(&p))
        {
            return Err(BridgeError::Configuration(format!(
                "realtime_priority of {:?} must be 1..99 (SCHED_FIFO), or unset",
                self.robot_name
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_sources_parse_by_their_parameter_names() {
        assert_eq!("node_clock".parse(), Ok(StampSource::NodeClock));
        assert_eq!("gazebo".parse(), Ok(StampSource::Gazebo));
        assert!("wall"
            .parse::<StampSource>()
            .unwrap_err()
            .contains("\"wall\""));
    }

    #[test]
    fn modes_parse_by_their_parameter_values_and_name_the_choices_otherwise() {
        assert_eq!("grid".parse(), Ok(JointStatesPublishing::Grid));
        assert_eq!("on_arrival".parse(), Ok(JointStatesPublishing::OnArrival));
        assert_eq!("on_arrival".parse(), Ok(TargetForwarding::OnArrival));
        assert_eq!("periodic".parse(), Ok(TargetForwarding::Periodic));
        assert_eq!("on_change".parse(), Ok(LimitsPublishing::OnChange));
        assert_eq!("republish".parse(), Ok(StaleJointStates::Republish));
        // What a mode is called (the Python getters' strings) reads back as that mode.
        for mode in [
            JointStatesPublishing::OnArrival,
            JointStatesPublishing::Grid,
        ] {
            assert_eq!(mode.name().parse(), Ok(mode));
        }
        for mode in [TargetForwarding::OnArrival, TargetForwarding::Periodic] {
            assert_eq!(mode.name().parse(), Ok(mode));
        }
        for mode in [LimitsPublishing::OnChange, LimitsPublishing::Periodic] {
            assert_eq!(mode.name().parse(), Ok(mode));
        }
        for mode in [StaleJointStates::Withhold, StaleJointStates::Republish] {
            assert_eq!(mode.name().parse(), Ok(mode));
        }
        let err = "sometimes".parse::<TargetForwarding>().unwrap_err();
        assert_eq!(
            err,
            "unknown value \"sometimes\": expected \"on_arrival\" or \"periodic\""
        );
    }

    #[test]
    fn an_empty_robot_name_and_a_zero_period_are_refused() {
        RobotDriverRosConfiguration::new("ur3e_1")
            .validate()
            .unwrap();
        let err = RobotDriverRosConfiguration::new("").validate().unwrap_err();
        assert!(err.to_string().contains("robot_name is empty"), "{err}");
        let mut config = RobotDriverRosConfiguration::new("ur3e_1");
        config.thread_sampling_time = Duration::ZERO;
        let err = config.validate().unwrap_err();
        assert!(err.to_string().contains("greater than zero"), "{err}");
    }
}
