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
    let [x, y, z] = p.position;
    let [qx, qy, qz, qw] = p.orientation;
    msgs::Pose {
        position: Some(msgs::Vector3d {
            header: None,
            x,
            y,
            z,
        }),
        orientation: Some(msgs::Quaternion {
            header: None,
            x: qx,
            y: qy,
            z: qz,
            w: qw,
        }),
        ..Default::default()
    }
}
