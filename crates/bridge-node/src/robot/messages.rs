//! Every conversion between the driver's values and ROS messages, in one place.
//!
//! The loop publishes rmw-layer messages (the C structs rcl serialises) that it allocates once
//! and refills in place every period: publishing one borrows it, so a period allocates nothing.

use listener_subscription::cdr::{CdrError, CdrReader};
use ros_env::builtin_interfaces::msg::rmw::Time;
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::Float64MultiArray;
use sas_robot_driver_gazebo::JointSnapshot;

/// A ROS stamp for a time in nanoseconds since the clock's epoch. Times before the epoch are
/// normalised to a negative `sec` and a `nanosec` in [0, 1e9); seconds beyond `i32` saturate.
pub fn stamp_from_nanos(nanos: i128) -> Time {
    const NANOS_PER_SEC: i128 = 1_000_000_000;
    let sec = nanos.div_euclid(NANOS_PER_SEC);
    let sec = sec.clamp(i32::MIN as i128, i32::MAX as i128) as i32;
    Time {
        sec,
        nanosec: nanos.rem_euclid(NANOS_PER_SEC) as u32,
    }
}

/// A `sensor_msgs/JointState` with the joint names filled once; [`fill`] writes one
/// snapshot's positions, velocities and efforts. Names are left empty (as the original's
/// were) when the driver does not name each of its joints.
///
/// [`fill`]: JointStateMessage::fill
pub(crate) struct JointStateMessage {
    pub message: JointState,
}

impl JointStateMessage {
    pub fn new(joint_names: &[String], joint_count: usize) -> Self {
        let names = if joint_names.len() == joint_count {
            joint_names
        } else {
            &[]
        };
        let message = JointState {
            name: names.iter().map(|name| name.as_str().into()).collect(),
            position: rosidl_runtime_rs::Sequence::new(joint_count),
            velocity: rosidl_runtime_rs::Sequence::new(joint_count),
            effort: rosidl_runtime_rs::Sequence::new(joint_count),
            ..Default::default()
        };
        JointStateMessage { message }
    }

    /// Copies `snapshot` (which must have the configured joint count) and the stamp in.
    pub fn fill(&mut self, snapshot: &JointSnapshot, stamp: Time) {
        self.message.header.stamp = stamp;
        self.message
            .position
            .as_mut_slice()
            .copy_from_slice(&snapshot.positions);
        self.message
            .velocity
            .as_mut_slice()
            .copy_from_slice(&snapshot.velocities);
        self.message
            .effort
            .as_mut_slice()
            .copy_from_slice(&snapshot.efforts);
    }
}

/// A `std_msgs/Float64MultiArray` holding `values` (layout left empty, as the original).
pub fn multi_array(values: &[f64]) -> Float64MultiArray {
    Float64MultiArray {
        data: rosidl_runtime_rs::Sequence::from(values),
        ..Default::default()
    }
}

/// The `data` of a `std_msgs/Float64MultiArray` from its CDR bytes (the layout's dimensions
/// and offset read past): what a `set/*` target carries, without the C message's allocation
/// of every label and of the layout.
pub fn read_float64_multi_array(bytes: &[u8]) -> Result<Vec<f64>, CdrError> {
    let mut reader = CdrReader::new(bytes)?;
    let dimensions = reader.u32("layout.dim")?;
    for _ in 0..dimensions {
        reader.skip_string("layout.dim.label")?;
        reader.u32("layout.dim.size")?;
        reader.u32("layout.dim.stride")?;
    }
    reader.u32("layout.data_offset")?;
    let mut data = Vec::new();
    reader.f64_sequence("data", &mut data)?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use listener_subscription::cdr::CdrWriter;

    fn multi_array_cdr(little_endian: bool, labels: &[&str], data: &[f64]) -> Vec<u8> {
        let mut writer = CdrWriter::new(little_endian);
        writer.u32(labels.len() as u32);
        for (k, label) in labels.iter().enumerate() {
            writer.string(label).u32(k as u32 + 2).u32(k as u32 + 3);
        }
        writer.u32(5).f64s(data);
        writer.bytes().to_vec()
    }

    #[test]
    fn a_float64_multi_array_is_read_past_any_layout_in_either_byte_order() {
        let data = [0.5, -0.0, f64::NAN, 1e300, -2.0, 3.25];
        for little_endian in [true, false] {
            // Labels of every length modulo 8 move the data across every alignment.
            for length in 0..8 {
                let label = "l".repeat(length);
                for labels in [
                    &[][..],
                    &[label.as_str()][..],
                    &["rows", label.as_str()][..],
                ] {
                    let bytes = multi_array_cdr(little_endian, labels, &data);
                    let read = read_float64_multi_array(&bytes).unwrap();
                    let bits =
                        |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&read), bits(&data), "{labels:?}");
                }
            }
            let empty = multi_array_cdr(little_endian, &["x"], &[]);
            assert!(read_float64_multi_array(&empty).unwrap().is_empty());
        }
    }

    #[test]
    fn an_unreadable_float64_multi_array_names_where_it_ends() {
        let bytes = multi_array_cdr(true, &["rows"], &[1.0, 2.0]);
        for length in 0..bytes.len() {
            assert!(
                matches!(
                    read_float64_multi_array(&bytes[..length]),
                    Err(CdrError::Truncated { length: l, .. }) if l == length
                ),
                "{length}"
            );
        }
        let mut big_endian_cdr2 = bytes.clone();
        big_endian_cdr2[1] = 0x06;
        assert_eq!(
            read_float64_multi_array(&big_endian_cdr2),
            Err(CdrError::Encapsulation(0x0006))
        );
    }

    #[test]
    fn a_count_past_the_bytes_present_is_an_error_before_any_allocation() {
        // 2^31 doubles claimed, none present: refused by the bytes present (the reader checks
        // count * 8 against what is left before it reserves anything).
        let mut writer = CdrWriter::new(true);
        writer.u32(0).u32(0).u32(1 << 31);
        assert!(matches!(
            read_float64_multi_array(writer.bytes()),
            Err(CdrError::Truncated { field: "data", .. })
        ));
        let mut writer = CdrWriter::new(false);
        writer.u32(u32::MAX);
        assert!(matches!(
            read_float64_multi_array(writer.bytes()),
            Err(CdrError::Truncated { .. })
        ));
    }

    #[test]
    fn stamps_split_nanoseconds_and_normalise_negative_times() {
        let t = stamp_from_nanos(1_700_000_000_123_456_789);
        assert_eq!((t.sec, t.nanosec), (1_700_000_000, 123_456_789));
        let t = stamp_from_nanos(-1);
        assert_eq!((t.sec, t.nanosec), (-1, 999_999_999));
        let t = stamp_from_nanos(i128::from(i64::MAX) * 4);
        assert_eq!(t.sec, i32::MAX);
    }

    #[test]
    fn a_joint_state_carries_names_once_and_each_snapshot_in_order() {
        let names = ["a".to_string(), "b".to_string()];
        let mut message = JointStateMessage::new(&names, 2);
        let mut snapshot = JointSnapshot::new(2);
        snapshot.positions = vec![0.5, -1.5];
        snapshot.velocities = vec![0.1, 0.2];
        snapshot.efforts = vec![3.0, 4.0];
        message.fill(&snapshot, stamp_from_nanos(2_500_000_000));
        let m = &message.message;
        let names: Vec<String> = m.name.iter().map(|n| n.to_string()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(m.position.as_slice(), [0.5, -1.5]);
        assert_eq!(m.velocity.as_slice(), [0.1, 0.2]);
        assert_eq!(m.effort.as_slice(), [3.0, 4.0]);
        assert_eq!(
            (m.header.stamp.sec, m.header.stamp.nanosec),
            (2, 500_000_000)
        );
        assert_eq!(m.header.frame_id.to_string(), "");
    }

    #[test]
    fn a_driver_that_does_not_name_every_joint_publishes_no_names() {
        let mut message = JointStateMessage::new(&[], 2);
        message.fill(&JointSnapshot::new(2), stamp_from_nanos(0));
        assert!(message.message.name.is_empty());
        assert_eq!(message.message.position.len(), 2);
    }

    #[test]
    fn limits_keep_infinities() {
        let message = multi_array(&[-1.0, f64::NEG_INFINITY]);
        assert_eq!(message.data.as_slice(), [-1.0, f64::NEG_INFINITY]);
        assert!(message.layout.dim.is_empty());
    }

    /// The `set/*` decoder fed what a hostile or broken ROS peer may send: `scripts/fuzz` runs
    /// these with millions of cases (`PROPTEST_CASES`), CI with proptest's default. It never
    /// panics, and what it returns is bounded by the bytes it was given.
    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn bounded(bytes: &[u8]) -> Result<(), TestCaseError> {
            if let Ok(data) = read_float64_multi_array(bytes) {
                prop_assert!(data.len() * 8 <= bytes.len());
            }
            Ok(())
        }

        proptest! {
            #[test]
            fn random_multi_arrays(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
                bounded(&bytes)?;
            }

            #[test]
            fn mutated_multi_arrays(
                little_endian in any::<bool>(),
                labels in prop::collection::vec("[a-z]{0,9}", 0..3),
                data in prop::collection::vec(any::<f64>(), 0..8),
                edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
                cut in any::<prop::sample::Index>(),
            ) {
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                let mut bytes = multi_array_cdr(little_endian, &labels, &data);
                // Counts and lengths are where a peer lies: overwrite bytes anywhere, then
                // cut the message somewhere.
                for (at, value) in edits {
                    let i = at.index(bytes.len());
                    bytes[i] = value;
                }
                bytes.truncate(cut.index(bytes.len() + 1));
                bounded(&bytes)?;
            }
        }
    }
}
