//! `get/joint_positions_min` and `…_max`: the joint limits captured at initialization.
//!
//! The original published them every period although they never change, which cost every
//! subscriber a wake-up per period for nothing. Here, by default
//! ([`LimitsPublishing::OnChange`]), they are published when they change (once, at
//! initialization), as soon as a new subscriber matches (a client that starts late, such as
//! the original's `RobotDriverClient`, which waits for them before `is_enabled()` holds, gets
//! them at once), and as a slow heartbeat that repairs whatever a subscriber missed.
//! [`LimitsPublishing::Periodic`] keeps the original's every-period publishing.
//!
//! A new subscriber is seen by its publisher's matched-subscription count, looked at in the
//! robot's periodic checks (which ride on Gazebo's messages, so it costs no wake-up). The
//! limits go out then and once more [`CONFIRM_AFTER`] later: discovery matches the two sides
//! separately, and a sample sent the moment our side matched may reach a reader that has not
//! matched us yet, which drops it; DDS would repair that only at a later heartbeat. A
//! transient-local publisher would not do: DDS sends a volatile reader (the original's
//! clients) a GAP instead of the stored sample.

use std::time::{Duration, Instant};

use rclrs::{Publisher, RclrsError};
use ros_env::std_msgs::msg::rmw::Float64MultiArray;

use crate::robot::messages::multi_array;
use crate::LimitsPublishing;

/// When the limits go out again after a new subscriber matched (see the module documentation).
pub(crate) const CONFIRM_AFTER: Duration = Duration::from_millis(50);

/// The two limit topics of one robot and when they are due.
pub(crate) struct JointLimitsTopics {
    min: Publisher<Float64MultiArray>,
    max: Publisher<Float64MultiArray>,
    messages: (Float64MultiArray, Float64MultiArray),
    publishing: LimitsPublishing,
    heartbeat: Option<Duration>,
    /// Matched subscriptions of both publishers when last looked at.
    subscribers: usize,
    /// When the limits were last published.
    published_at: Option<Instant>,
    /// When they go out again for a subscriber that matched.
    confirm_at: Option<Instant>,
}

impl JointLimitsTopics {
    pub fn new(
        (min, max): (Publisher<Float64MultiArray>, Publisher<Float64MultiArray>),
        (lower, upper): (&[f64], &[f64]),
        publishing: LimitsPublishing,
        heartbeat: Option<Duration>,
    ) -> Self {
        JointLimitsTopics {
            min,
            max,
            messages: (multi_array(lower), multi_array(upper)),
            publishing,
            heartbeat,
            subscribers: 0,
            published_at: None,
            confirm_at: None,
        }
    }

    /// Publishes the limits if they are due at `now`: every call when periodic; otherwise the
    /// first time, when a subscriber matched since the last look (then `Ok(true)`), its
    /// confirmation, or at the heartbeat.
    ///
    /// # Errors
    /// A publication failed (the next call tries again).
    pub fn publish_if_due(&mut self, now: Instant) -> Result<bool, RclrsError> {
        let mut new_subscriber = false;
        let due = match self.publishing {
            LimitsPublishing::Periodic => true,
            LimitsPublishing::OnChange => {
                new_subscriber = self.new_subscriber();
                if new_subscriber {
                    self.confirm_at = Some(now + CONFIRM_AFTER);
                }
                new_subscriber
                    || self.published_at.is_none()
                    || self.heartbeat_at().is_some_and(|at| now >= at)
            }
        };
        if !due {
            return Ok(false);
        }
        self.min.publish(&self.messages.0)?;
        self.max.publish(&self.messages.1)?;
        self.published_at = Some(now);
        if self.confirm_at.is_some_and(|at| now >= at) {
            self.confirm_at = None;
        }
        Ok(new_subscriber)
    }

    /// Whether more subscriptions matched than when last looked at (remembering the count).
    fn new_subscriber(&mut self) -> bool {
        let count = |publisher: &Publisher<Float64MultiArray>| {
            publisher.get_subscription_count().unwrap_or(0)
        };
        let subscribers = count(&self.min) + count(&self.max);
        let more = subscribers > self.subscribers;
        self.subscribers = subscribers;
        more
    }

    /// When the limits are due again without a new subscriber: the confirmation of a match,
    /// or the heartbeat (`None`: not by time alone; periodic publishing follows the periods).
    pub fn heartbeat_at(&self) -> Option<Instant> {
        match self.publishing {
            LimitsPublishing::Periodic => None,
            LimitsPublishing::OnChange => {
                let heartbeat = self
                    .published_at
                    .zip(self.heartbeat)
                    .map(|(at, heartbeat)| at + heartbeat);
                [heartbeat, self.confirm_at].into_iter().flatten().min()
            }
        }
    }
}
