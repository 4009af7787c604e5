//! The world's values as gz-msgs carry them: the simulation's times and the models' poses.

use std::time::Duration;

use gz_transport::msgs;

use crate::sdf::PoseSpec;

/// A time since the world began (sim, real or system time) as gz-msgs carries it.
pub(crate) fn time(d: Duration) -> msgs::Time {
    msgs::Time {
        sec: d.as_secs() as i64,
        nsec: d.subsec_nanos() as i32,
    }
}

/// A pose as gz-msgs carries it (`msgs::Set(Pose, math::Pose3d)`: position and orientation,
/// no name or id).
pub(crate) fn pose_message(p: &PoseSpec) -> msgs::Pose {
    msgs::Pose {
        position: Some(p.position.into()),
        orientation: Some(p.orientation.into()),
        ..Default::default()
    }
}
