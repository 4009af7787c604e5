//! Gazebo's clock on ROS `/clock` (`rosgraph_msgs/msg/Clock`), so that ROS nodes with
//! `use_sim_time: true` run on simulation time without a separate `ros_gz_bridge`.
//!
//! One [`ClockBridge`] per process, whatever the number of robots: it is configured by the
//! node's own (ungrouped) parameters `publish_clock` and `gazebo_clock_topic`
//! ([`ClockParameters`]), read once by the process shell. It has a gz-transport node of its
//! own, so its receive thread serves the clock alone: a clock message is published on ROS from
//! that thread the moment it arrives, never queued behind the robots' joint states (which
//! share their own receive thread and publish from it) nor behind the ROS executor. QoS is
//! ROS's `ClockQoS` (best effort, keep last 1, volatile), as every `use_sim_time` subscriber
//! (rclcpp, rclpy, rclrs) asks for.
//!
//! `use_sim_time` is rclrs's: read when the node is created (read-only afterwards), it makes
//! the node's clock follow ROS `/clock` (rclrs subscribes it on the node's executor), and every
//! stamp the node makes comes from that clock. [`SimTimeNotice`] says so in the log, and warns
//! when no `/clock` has arrived, since the stamps are then all 0.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gz_transport::msgs::{Clock as GzClock, Time as GzTime};
use rclrs::{ClockType, IntoPrimitiveOptions, Node, Publisher, Timer, QOS_PROFILE_CLOCK};
use ros_env::builtin_interfaces::msg::rmw::Time;
use ros_env::rosgraph_msgs::msg::rmw::Clock;
use sas_robot_driver_gazebo::DriverError;

use crate::process::realtime;
use crate::robot::rate_limit::{suppressed_note, RateLimit};
use crate::{BridgeError, GzParameters, ParameterError, ParameterReader};

/// The ROS topic the clock is published on: fixed, as every `use_sim_time` node reads it.
const ROS_CLOCK_TOPIC: &str = "/clock";

/// A refused clock message is logged at most this often.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(5);

/// How long a node on `use_sim_time` may go without a `/clock` before it warns.
const SIM_TIME_GRACE: Duration = Duration::from_secs(5);

/// The process-level clock parameters (the node's own, not a robot group's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockParameters {
    /// `publish_clock`: publish Gazebo's clock on ROS `/clock`.
    pub publish_clock: bool,
    /// `gazebo_clock_topic`: the `gz.msgs.Clock` topic read (`/clock`, or a world's
    /// `/world/<world>/clock`).
    pub gazebo_clock_topic: String,
}

impl ClockParameters {
    /// Declares `publish_clock` (default false) and `gazebo_clock_topic` (default `/clock`)
    /// on `node`, ungrouped.
    ///
    /// # Errors
    /// A mistyped value, or an empty topic while `publish_clock` is true, by name.
    pub fn declare(reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError> {
        let publish_clock = reader.optional(
            "publish_clock",
            "a bool, true or false",
            "publish Gazebo's clock on ROS /clock (rosgraph_msgs/Clock, ClockQoS), once per \
             process",
            false,
        )?;
        let topic = reader.optional::<Arc<str>>(
            "gazebo_clock_topic",
            "a string, e.g. \"/clock\" or \"/world/ur3e_world/clock\"",
            "the Gazebo gz.msgs.Clock topic publish_clock reads",
            "/clock".into(),
        )?;
        if publish_clock && topic.is_empty() {
            return Err(reader.invalid(
                "gazebo_clock_topic",
                "it is empty; name Gazebo's clock topic, e.g. \"/clock\"".into(),
            ));
        }
        Ok(ClockParameters {
            publish_clock,
            gazebo_clock_topic: topic.to_string(),
        })
    }
}

/// Gazebo's clock, republished on ROS `/clock` from a receive thread of its own for as long
/// as this lives.
pub struct ClockBridge {
    // Dropped first: no callback runs once the subscription is gone.
    _subscription: gz_transport::Subscription,
    _gz: gz_transport::Node,
}

impl ClockBridge {
    /// Starts publishing when `parameters.publish_clock` is set (`None` otherwise): a
    /// gz-transport node with `gz`'s partition and message prefix subscribes to
    /// `parameters.gazebo_clock_topic` and each `sim` time goes out on `/clock`. Its receive
    /// thread runs at SCHED_FIFO `realtime_priority` (the robots' highest), so that robots'
    /// receive threads at that priority cannot hold the clock back.
    ///
    /// # Errors
    /// `gazebo_clock_topic` is no valid topic name ([`BridgeError::Parameter`]); the
    /// publisher, the gz-transport node or its subscription cannot be created.
    pub fn start(
        node: &Node,
        parameters: &ClockParameters,
        gz: &GzParameters,
        realtime_priority: Option<u8>,
    ) -> Result<Option<Self>, BridgeError> {
        if !parameters.publish_clock {
            return Ok(None);
        }
        let publisher = node
            .create_publisher::<Clock>(ROS_CLOCK_TOPIC.qos(QOS_PROFILE_CLOCK))
            .map_err(|source| BridgeError::Topic {
                kind: "publisher",
                topic: ROS_CLOCK_TOPIC.into(),
                source,
            })?;
        let transport = gz_transport::Node::with_options(gz_transport::NodeOptions {
            partition: gz.partition.clone(),
            namespace: None,
            msgs_prefix: gz.msgs_prefix,
            ..Default::default()
        })
        .map_err(|source| DriverError::Node(source.into()))?;
        let topic = parameters.gazebo_clock_topic.clone();
        let mut republisher = Republisher::new(publisher, topic.clone(), realtime_priority);
        let subscription = transport
            .subscribe::<GzClock, _>(&topic, move |clock, _| republisher.receive(&clock))
            .map_err(|source| match source {
                gz_transport::Error::InvalidTopic { .. } => {
                    BridgeError::Parameter(ParameterError::Invalid {
                        name: "gazebo_clock_topic".into(),
                        problem: source.to_string(),
                    })
                }
                other => BridgeError::Configuration(format!(
                    "cannot subscribe to Gazebo's clock on [{topic}] (gazebo_clock_topic): {other}"
                )),
            })?;
        tracing::info!(
            "::Publishing Gazebo's clock [{}] ({}Clock) on ROS {ROS_CLOCK_TOPIC} \
             (publish_clock).",
            parameters.gazebo_clock_topic,
            gz.msgs_prefix.type_name("")
        );
        Ok(Some(ClockBridge {
            _subscription: subscription,
            _gz: transport,
        }))
    }
}

/// Under `use_sim_time: true`: a line saying where the node's stamps come from, and a warning
/// when the node's clock still reads 0 (no `/clock` arrived) 5 s later (on
/// the steady clock). Nothing without `use_sim_time`. Keep it for as long as the node runs.
pub struct SimTimeNotice {
    _timer: Option<Timer>,
}

impl SimTimeNotice {
    /// Looks at `node`'s clock (rclrs made it a ROS-time clock driven by `/clock` if
    /// `use_sim_time` was true when the node was created).
    pub fn start(node: &Node) -> Self {
        let clock = node.get_clock();
        if !matches!(clock.clock_type(), ClockType::RosTime) {
            return SimTimeNotice { _timer: None };
        }
        tracing::info!(
            "::use_sim_time: every stamp is ROS {ROS_CLOCK_TOPIC} time (0 until the first \
             {ROS_CLOCK_TOPIC} arrives); loop periods, timeouts and the watchdog stay on the \
             monotonic clock."
        );
        let timer = node.create_timer_oneshot(SIM_TIME_GRACE, move || {
            if clock.now().nsec == 0 {
                tracing::warn!(
                    "::use_sim_time is true but nothing arrived on {ROS_CLOCK_TOPIC} in {} s: \
                     every stamp is 0. Set publish_clock: true, or run a {ROS_CLOCK_TOPIC} \
                     publisher (e.g. ros_gz_bridge).",
                    SIM_TIME_GRACE.as_secs()
                );
            }
        });
        match timer {
            Ok(timer) => SimTimeNotice {
                _timer: Some(timer),
            },
            Err(err) => {
                tracing::warn!("::Cannot watch for {ROS_CLOCK_TOPIC} (use_sim_time): {err}");
                SimTimeNotice { _timer: None }
            }
        }
    }
}

/// The receive thread's side: converts and publishes; says when the first clock arrived and
/// why one was refused.
struct Republisher {
    publisher: Publisher<Clock>,
    topic: String,
    message: Clock,
    received: u64,
    refusals: RateLimit,
    realtime_priority: Option<u8>,
}

impl Republisher {
    fn new(publisher: Publisher<Clock>, topic: String, realtime_priority: Option<u8>) -> Self {
        Republisher {
            realtime_priority,
            publisher,
            topic,
            message: Clock::default(),
            received: 0,
            refusals: RateLimit::new(REFUSAL_LOG_INTERVAL),
        }
    }

    fn receive(&mut self, clock: &GzClock) {
        if let Some(priority) = self.realtime_priority.take() {
            realtime::apply(Some(priority), "the clock's gz-transport receive thread");
        }
        let stamp = match clock.sim.as_ref().map(ros_time) {
            Some(Ok(stamp)) => stamp,
            problem => {
                let why = match problem {
                    Some(Err(why)) => why,
                    _ => "it has no sim time".to_string(),
                };
                if let Some(suppressed) = self.refusals.permit(Instant::now()) {
                    tracing::warn!(
                        "::Gazebo's clock on [{}] is not published on {ROS_CLOCK_TOPIC}: {why}{}",
                        self.topic,
                        suppressed_note(suppressed)
                    );
                }
                return;
            }
        };
        self.received += 1;
        if self.received == 1 {
            tracing::info!(
                "::Gazebo's clock arrived on [{}]: sim time {}.{:09} s.",
                self.topic,
                stamp.sec,
                stamp.nanosec
            );
        }
        self.message.clock = stamp;
        if let Err(err) = self.publisher.publish(&self.message) {
            if let Some(suppressed) = self.refusals.permit(Instant::now()) {
                tracing::warn!(
                    "::Cannot publish {ROS_CLOCK_TOPIC}: {err}{}",
                    suppressed_note(suppressed)
                );
            }
        }
    }
}

/// Gazebo's `Time` as a ROS `builtin_interfaces/Time`, or why it cannot be one (a negative
/// time, nanoseconds outside a second, seconds beyond ROS's 32 bits).
fn ros_time(time: &GzTime) -> Result<Time, String> {
    let nanosec = u32::try_from(time.nsec)
        .ok()
        .filter(|&n| n < 1_000_000_000)
        .ok_or_else(|| format!("its nsec {} is not in 0..1e9", time.nsec))?;
    let sec = i32::try_from(time.sec)
        .ok()
        .filter(|&s| s >= 0)
        .ok_or_else(|| format!("its sec {} is not in 0..2^31", time.sec))?;
    Ok(Time { sec, nanosec })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gazebo_times_convert_and_impossible_ones_are_refused_naming_the_field() {
        let t = ros_time(&GzTime {
            sec: 12,
            nsec: 500_000_000,
        })
        .unwrap();
        assert_eq!((t.sec, t.nanosec), (12, 500_000_000));
        for (sec, nsec, field) in [
            (1, -1, "nsec -1"),
            (1, 1_000_000_000, "nsec 1000000000"),
            (-1, 0, "sec -1"),
            (1 << 40, 0, "sec 1099511627776"),
        ] {
            let err = ros_time(&GzTime { sec, nsec }).unwrap_err();
            assert!(err.contains(field), "{err}");
        }
    }
}
