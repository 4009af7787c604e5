//! The gz-msgs messages the bridge needs, with field numbers equal to gz-msgs
//! (`proto/gz/msgs/*.proto`), written as prost derives so no `protoc` is needed.
//!
//! The wire bytes of a message do not depend on the package prefix; only the type
//! name sent in the 4th ZeroMQ frame and in discovery does (`gz.msgs.Double` for
//! Harmonic, `ignition.msgs.Double` for Fortress). See [`MsgsPrefix`].

use std::fmt;

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

/// `gz.msgs.Time`
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct Time {
    #[prost(int64, tag = "1")]
    pub sec: i64,
    #[prost(int32, tag = "2")]
    pub nsec: i32,
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

/// `gz.msgs.Header.Map`
#[derive(Clone, PartialEq, prost::Message)]
pub struct HeaderMap {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, repeated, tag = "2")]
    pub value: Vec<String>,
}

/// `gz.msgs.Header`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(message, optional, tag = "1")]
    pub stamp: Option<Time>,
    #[prost(message, repeated, tag = "2")]
    pub data: Vec<HeaderMap>,
}

/// `gz.msgs.Double`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Double {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(double, tag = "2")]
    pub data: f64,
}

/// `gz.msgs.Vector3d`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Vector3d {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(double, tag = "2")]
    pub x: f64,
    #[prost(double, tag = "3")]
    pub y: f64,
    #[prost(double, tag = "4")]
    pub z: f64,
}

/// `gz.msgs.Quaternion`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Quaternion {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(double, tag = "2")]
    pub x: f64,
    #[prost(double, tag = "3")]
    pub y: f64,
    #[prost(double, tag = "4")]
    pub z: f64,
    #[prost(double, tag = "5")]
    pub w: f64,
}

/// `gz.msgs.Pose`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Pose {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(uint32, tag = "3")]
    pub id: u32,
    #[prost(message, optional, tag = "4")]
    pub position: Option<Vector3d>,
    #[prost(message, optional, tag = "5")]
    pub orientation: Option<Quaternion>,
}

/// `gz.msgs.Axis`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Axis {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(message, optional, tag = "2")]
    pub xyz: Option<Vector3d>,
    #[prost(double, tag = "3")]
    pub limit_lower: f64,
    #[prost(double, tag = "4")]
    pub limit_upper: f64,
    #[prost(double, tag = "5")]
    pub limit_effort: f64,
    #[prost(double, tag = "6")]
    pub limit_velocity: f64,
    #[prost(double, tag = "7")]
    pub damping: f64,
    #[prost(double, tag = "8")]
    pub friction: f64,
    #[prost(double, tag = "10")]
    pub position: f64,
    #[prost(double, tag = "11")]
    pub velocity: f64,
    #[prost(double, tag = "12")]
    pub force: f64,
    #[prost(double, tag = "13")]
    pub acceleration: f64,
    #[prost(string, tag = "14")]
    pub xyz_expressed_in: String,
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

/// `gz.msgs.Joint` (the fields a joint-state bridge uses; others are skipped on decode)
#[derive(Clone, PartialEq, prost::Message)]
pub struct Joint {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(uint32, tag = "3")]
    pub id: u32,
    #[prost(enumeration = "JointType", tag = "4")]
    pub r#type: i32,
    #[prost(string, tag = "5")]
    pub parent: String,
    #[prost(uint32, tag = "6")]
    pub parent_id: u32,
    #[prost(string, tag = "7")]
    pub child: String,
    #[prost(uint32, tag = "8")]
    pub child_id: u32,
    #[prost(message, optional, tag = "9")]
    pub pose: Option<Pose>,
    #[prost(message, optional, tag = "10")]
    pub axis1: Option<Axis>,
    #[prost(message, optional, tag = "11")]
    pub axis2: Option<Axis>,
}

/// `gz.msgs.Model` (what a JointStatePublisher fills; links, visuals etc. are skipped on decode)
#[derive(Clone, PartialEq, prost::Message)]
pub struct Model {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(uint32, tag = "3")]
    pub id: u32,
    #[prost(bool, tag = "4")]
    pub is_static: bool,
    #[prost(message, optional, tag = "5")]
    pub pose: Option<Pose>,
    #[prost(message, repeated, tag = "6")]
    pub joint: Vec<Joint>,
    #[prost(bool, tag = "8")]
    pub deleted: bool,
    #[prost(message, optional, tag = "10")]
    pub scale: Option<Vector3d>,
    #[prost(bool, tag = "11")]
    pub self_collide: bool,
    #[prost(message, repeated, tag = "12")]
    pub model: Vec<Model>,
}

/// `gz.msgs.Clock`
#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(message, optional, tag = "2")]
    pub system: Option<Time>,
    #[prost(message, optional, tag = "3")]
    pub real: Option<Time>,
    #[prost(message, optional, tag = "4")]
    pub sim: Option<Time>,
}

/// `gz.msgs.Boolean`: what world control and `set_pose` answer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Boolean {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(bool, tag = "2")]
    pub data: bool,
}

/// `gz.msgs.Empty`: the response type of a one-way service (no response is sent).
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct Empty {
    #[prost(bool, tag = "1")]
    pub unused: bool,
}

/// `gz.msgs.StringMsg`
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringMsg {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(string, tag = "2")]
    pub data: String,
}

/// `gz.msgs.WorldReset`: which part of the world a reset puts back.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WorldReset {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(bool, tag = "2")]
    pub all: bool,
    #[prost(bool, tag = "3")]
    pub time_only: bool,
    #[prost(bool, tag = "4")]
    pub model_only: bool,
}

/// `gz.msgs.WorldControl`: the request of `/world/<world>/control`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WorldControl {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(bool, tag = "2")]
    pub pause: bool,
    #[prost(bool, tag = "3")]
    pub step: bool,
    #[prost(uint32, tag = "4")]
    pub multi_step: u32,
    #[prost(message, optional, tag = "5")]
    pub reset: Option<WorldReset>,
    #[prost(uint32, tag = "6")]
    pub seed: u32,
    #[prost(message, optional, tag = "7")]
    pub run_to_sim_time: Option<Time>,
}

/// `gz.msgs.Pose_V`: many poses, e.g. every entity's world pose.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PoseV {
    #[prost(message, optional, tag = "1")]
    pub header: Option<Header>,
    #[prost(message, repeated, tag = "2")]
    pub pose: Vec<Pose>,
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
