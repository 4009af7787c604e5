//! The gz-msgs messages the bridge needs, with field numbers equal to gz-msgs
//! (`proto/gz/msgs/*.proto`), written as prost derives so no `protoc` is needed.
//!
//! The wire bytes of a message do not depend on the package prefix; only the type
//! name sent in the 4th ZeroMQ frame and in discovery does (`gz.msgs.Double` for
//! Harmonic, `ignition.msgs.Double` for Fortress). See [`MsgsPrefix`].

use std::fmt;

use crate::proto::proto_message;

/// The package prefix of gz-msgs type names: `gz.msgs.` (Harmonic and later) or
/// `ignition.msgs.` (Fortress). Typed peers only exchange messages whose type names match,
/// so a bridge must use the prefix of the Gazebo it talks to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MsgsPrefix {
    /// `gz.msgs.` — Gazebo Garden/Harmonic/Ionic/Jetty.
    #[default]
    Gz,
    /// `ignition.msgs.` — Ignition Fortress and older.
    Ignition,
}

impl MsgsPrefix {
    pub fn as_str(self) -> &'static str {
        match self {
            MsgsPrefix::Gz => "gz.msgs.",
            MsgsPrefix::Ignition => "ignition.msgs.",
        }
    }

    /// Full type name, e.g. `gz.msgs.Double`.
    pub fn type_name(self, short: &str) -> String {
        format!("{}{}", self.as_str(), short)
    }

    /// The short and full names of a type a user wrote either way: a full name of either
    /// prefix is kept, a short one (`Double`) is completed with this prefix.
    pub fn resolve(self, type_name: &str) -> (String, String) {
        for p in [MsgsPrefix::Gz, MsgsPrefix::Ignition] {
            if let Some(short) = type_name.strip_prefix(p.as_str()) {
                return (short.to_owned(), type_name.to_owned());
            }
        }
        (type_name.to_owned(), self.type_name(type_name))
    }
}

impl fmt::Display for MsgsPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for MsgsPrefix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gz.msgs." | "gz.msgs" | "gz" | "harmonic" => Ok(MsgsPrefix::Gz),
            "ignition.msgs." | "ignition.msgs" | "ignition" | "fortress" => Ok(MsgsPrefix::Ignition),
            other => Err(format!(
                "unknown gz message prefix {other:?}: expected \"gz.msgs.\" (Harmonic) or \"ignition.msgs.\" (Fortress)"
            )),
        }
    }
}

/// A gz-msgs message type: protobuf encoding plus its short type name (`"Double"`).
pub trait GzMessage: prost::Message + Default + Send + 'static {
    /// The unqualified type name, e.g. `"Double"`; the full name is prefix + this.
    const SHORT_NAME: &'static str;

    /// The payload as sent (for [`Node::publish_together`](crate::Node::publish_together)).
    fn to_payload(&self) -> Vec<u8> {
        self.encode_to_vec()
    }
}

macro_rules! gz_message {
    ($($t:ident),* $(,)?) => {$(
        impl GzMessage for $t {
            const SHORT_NAME: &'static str = stringify!($t);
        }
    )*};
}

proto_message! {
    /// `gz.msgs.Time`
    #[derive(Copy)]
    pub struct Time {
        #[prost(int64, tag = 1)] sec: i64,
        #[prost(int32, tag = 2)] nsec: i32,
    }
}

impl Time {
    pub fn from_secs_f64(t: f64) -> Time {
        let sec = t.floor();
        Time {
            sec: sec as i64,
            nsec: ((t - sec) * 1e9).round().min(999_999_999.0) as i32,
        }
    }
    pub fn as_secs_f64(&self) -> f64 {
        self.sec as f64 + self.nsec as f64 * 1e-9
    }
    pub fn as_nanos(&self) -> i128 {
        self.sec as i128 * 1_000_000_000 + self.nsec as i128
    }
}

proto_message! {
    /// `gz.msgs.Header.Map`
    pub struct HeaderMap { key: String = 1, #[prost(string, repeated, tag = 2)] value: Vec<String> }
}

proto_message! {
    /// `gz.msgs.Header`
    pub struct Header { stamp: Option<Time> = 1, data: Vec<HeaderMap> = 2 }
}

proto_message! {
    /// `gz.msgs.Double`
    pub struct Double { header: Option<Header> = 1, data: f64 = 2 }
}

proto_message! {
    /// `gz.msgs.Vector3d`
    pub struct Vector3d { header: Option<Header> = 1, x: f64 = 2, y: f64 = 3, z: f64 = 4 }
}

proto_message! {
    /// `gz.msgs.Quaternion`
    pub struct Quaternion { header: Option<Header> = 1, x: f64 = 2, y: f64 = 3, z: f64 = 4, w: f64 = 5 }
}

impl From<[f64; 3]> for Vector3d {
    fn from([x, y, z]: [f64; 3]) -> Vector3d {
        Vector3d {
            header: None,
            x,
            y,
            z,
        }
    }
}

/// From `[x, y, z, w]`: the real part last, as the message orders its fields.
impl From<[f64; 4]> for Quaternion {
    fn from([x, y, z, w]: [f64; 4]) -> Quaternion {
        Quaternion {
            header: None,
            x,
            y,
            z,
            w,
        }
    }
}

proto_message! {
    /// `gz.msgs.Pose`
    pub struct Pose {
        header: Option<Header> = 1, name: String = 2, id: u32 = 3,
        position: Option<Vector3d> = 4, orientation: Option<Quaternion> = 5,
    }
}

proto_message! {
    /// `gz.msgs.Axis`
    pub struct Axis {
        header: Option<Header> = 1, xyz: Option<Vector3d> = 2,
        limit_lower: f64 = 3, limit_upper: f64 = 4, limit_effort: f64 = 5, limit_velocity: f64 = 6,
        damping: f64 = 7, friction: f64 = 8,
        position: f64 = 10, velocity: f64 = 11, force: f64 = 12, acceleration: f64 = 13,
        xyz_expressed_in: String = 14,
    }
}

/// `gz.msgs.Joint.Type`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum JointType {
    Revolute = 0,
    Revolute2 = 1,
    Prismatic = 2,
    Universal = 3,
    Ball = 4,
    Screw = 5,
    Gearbox = 6,
    Fixed = 7,
    Continuous = 8,
}

proto_message! {
    /// `gz.msgs.Joint` (the fields a joint-state bridge uses; others are skipped on decode)
    pub struct Joint {
        header: Option<Header> = 1, name: String = 2, id: u32 = 3,
        #[prost(enumeration = "JointType", tag = 4)] r#type: i32,
        parent: String = 5, parent_id: u32 = 6, child: String = 7, child_id: u32 = 8,
        pose: Option<Pose> = 9, axis1: Option<Axis> = 10, axis2: Option<Axis> = 11,
    }
}

proto_message! {
    /// `gz.msgs.Model` (what a JointStatePublisher fills; links, visuals etc. are skipped on decode)
    pub struct Model {
        header: Option<Header> = 1, name: String = 2, id: u32 = 3, is_static: bool = 4,
        pose: Option<Pose> = 5, joint: Vec<Joint> = 6, deleted: bool = 8,
        scale: Option<Vector3d> = 10, self_collide: bool = 11, model: Vec<Model> = 12,
    }
}

proto_message! {
    /// `gz.msgs.Clock`
    pub struct Clock {
        header: Option<Header> = 1, system: Option<Time> = 2, real: Option<Time> = 3,
        sim: Option<Time> = 4,
    }
}

proto_message! {
    /// `gz.msgs.Boolean`: what world control and `set_pose` answer.
    pub struct Boolean { header: Option<Header> = 1, data: bool = 2 }
}

proto_message! {
    /// `gz.msgs.Empty`: the response type of a one-way service (no response is sent).
    #[derive(Copy)]
    pub struct Empty { unused: bool = 1 }
}

proto_message! {
    /// `gz.msgs.StringMsg`
    pub struct StringMsg { header: Option<Header> = 1, data: String = 2 }
}

proto_message! {
    /// `gz.msgs.WorldReset`: which part of the world a reset puts back.
    pub struct WorldReset {
        header: Option<Header> = 1, all: bool = 2, time_only: bool = 3, model_only: bool = 4,
    }
}

proto_message! {
    /// `gz.msgs.WorldControl`: the request of `/world/<world>/control`.
    pub struct WorldControl {
        header: Option<Header> = 1, pause: bool = 2, step: bool = 3, multi_step: u32 = 4,
        reset: Option<WorldReset> = 5, seed: u32 = 6, run_to_sim_time: Option<Time> = 7,
    }
}

proto_message! {
    /// `gz.msgs.Pose_V`: many poses, e.g. every entity's world pose.
    pub struct PoseV { header: Option<Header> = 1, pose: Vec<Pose> = 2 }
}

impl GzMessage for PoseV {
    const SHORT_NAME: &'static str = "Pose_V";
}

gz_message!(
    Time,
    Header,
    Double,
    Vector3d,
    Quaternion,
    Pose,
    Axis,
    Joint,
    Model,
    Clock,
    Boolean,
    Empty,
    StringMsg,
    WorldReset,
    WorldControl,
);

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// Decodes bytes `ign topic -p` sent and checks that re-encoding reproduces them exactly.
    fn roundtrip<M: Message + Default>(bytes: &[u8]) -> M {
        let msg = M::decode(bytes).expect("captured payload decodes");
        assert_eq!(
            msg.encode_to_vec(),
            bytes,
            "re-encoding reproduces the C++ bytes"
        );
        msg
    }

    #[test]
    fn captured_double() {
        let d: Double = roundtrip(include_bytes!("../tests/fixtures/ign_double_1_5.payload"));
        assert_eq!(
            d,
            Double {
                header: None,
                data: 1.5
            }
        );
    }

    #[test]
    fn captured_model_with_joints() {
        // ign topic -m ignition.msgs.Model -p 'name: "ur3e" joint { name: "shoulder_pan_joint"
        //   axis1 { position: 0.5 velocity: -0.25 } } joint { name: "elbow_joint" axis1 { position: -1 } }'
        let m: Model = roundtrip(include_bytes!("../tests/fixtures/ign_model.payload"));
        assert_eq!(m.name, "ur3e");
        assert_eq!(m.joint.len(), 2);
        assert_eq!(m.joint[0].name, "shoulder_pan_joint");
        let a = m.joint[0].axis1.as_ref().unwrap();
        assert_eq!((a.position, a.velocity), (0.5, -0.25));
        assert_eq!(m.joint[1].name, "elbow_joint");
        assert_eq!(m.joint[1].axis1.as_ref().unwrap().position, -1.0);
    }

    #[test]
    fn captured_clock() {
        // ign topic -m ignition.msgs.Clock -p 'sim { sec: 12 nsec: 500000000 } real { sec: 13 nsec: 1 }'
        let c: Clock = roundtrip(include_bytes!("../tests/fixtures/ign_clock.payload"));
        assert_eq!(
            c.sim,
            Some(Time {
                sec: 12,
                nsec: 500_000_000
            })
        );
        assert_eq!(c.real, Some(Time { sec: 13, nsec: 1 }));
        assert_eq!(c.sim.unwrap().as_secs_f64(), 12.5);
    }

    #[test]
    fn unknown_fields_are_skipped() {
        // A Joint with fields this crate does not model (cfm = 12, a sensor = 21) still decodes.
        let mut bytes = Joint {
            name: "j".into(),
            ..Default::default()
        }
        .encode_to_vec();
        bytes.extend_from_slice(&[0x61, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]); // field 12, double 1.0
        bytes.extend_from_slice(&[0xaa, 0x01, 0x00]); // field 21, empty message
        let j = Joint::decode(&bytes[..]).unwrap();
        assert_eq!(j.name, "j");
    }

    #[test]
    fn type_names_follow_the_prefix() {
        assert_eq!(
            MsgsPrefix::Gz.type_name(Double::SHORT_NAME),
            "gz.msgs.Double"
        );
        assert_eq!(
            MsgsPrefix::Ignition.type_name(Model::SHORT_NAME),
            "ignition.msgs.Model"
        );
        assert_eq!("fortress".parse::<MsgsPrefix>(), Ok(MsgsPrefix::Ignition));
        assert!("ros.msgs.".parse::<MsgsPrefix>().is_err());
    }

    #[test]
    fn time_conversions() {
        let t = Time::from_secs_f64(1.25);
        assert_eq!(
            t,
            Time {
                sec: 1,
                nsec: 250_000_000
            }
        );
        assert_eq!(t.as_nanos(), 1_250_000_000);
        assert_eq!(
            Time::from_secs_f64(-0.5),
            Time {
                sec: -1,
                nsec: 500_000_000
            }
        );
    }
}
