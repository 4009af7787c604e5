//! Reads a `sensor_msgs/msg/JointState` from its CDR bytes as ROS 2 Jazzy's rmw_fastrtps
//! sends them (plain CDR, XCDR1, either byte order): the stamp and the three value arrays,
//! and the names only when asked, into arrays reused from message to message. The client
//! takes joint states this way because converting them to the C message allocates every name
//! and array on the DDS listener thread, 500 times a second, only to be freed again; the
//! names are wanted once, with the state that fixes the robot's joints.
//!
//! Fields in order: `stamp.sec: i32, stamp.nanosec: u32, frame_id: string,
//! name: sequence<string>, position, velocity, effort: sequence<f64>` (the CDR rules are
//! `listener_subscription::cdr`'s).

use listener_subscription::cdr::{CdrError, CdrReader};

use crate::state::JointStateMessage;

/// The arrays a joint state is read into, kept between messages.
#[derive(Default)]
pub(crate) struct JointStateArrays {
    names: Vec<String>,
    positions: Vec<f64>,
    velocities: Vec<f64>,
    efforts: Vec<f64>,
}

/// Reads `bytes` (encapsulation header first) into `arrays`; the joint names too if
/// `with_names` (else they are stepped over and the message has none).
pub(crate) fn read_joint_state<'a>(
    bytes: &[u8],
    arrays: &'a mut JointStateArrays,
    with_names: bool,
) -> Result<JointStateMessage<'a>, CdrError> {
    let mut reader = CdrReader::new(bytes)?;
    let sec = reader.u32("header.stamp.sec")? as i32;
    let nanosec = reader.u32("header.stamp.nanosec")?;
    reader.skip_string("header.frame_id")?;
    let names = reader.u32("name")?;
    arrays.names.clear();
    for _ in 0..names {
        if with_names {
            let name = reader.string_bytes("name")?;
            arrays
                .names
                .push(String::from_utf8_lossy(name).into_owned());
        } else {
            reader.skip_string("name")?;
        }
    }
    reader.f64_sequence("position", &mut arrays.positions)?;
    reader.f64_sequence("velocity", &mut arrays.velocities)?;
    reader.f64_sequence("effort", &mut arrays.efforts)?;
    Ok(JointStateMessage {
        names: with_names.then_some(arrays.names.as_slice()),
        positions: &arrays.positions,
        velocities: &arrays.velocities,
        efforts: &arrays.efforts,
        stamp_ns: i64::from(sec) * 1_000_000_000 + i64::from(nanosec),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use listener_subscription::cdr::CdrWriter;

    fn joint_state(little_endian: bool, names: &[&str], values: [&[f64]; 3]) -> Vec<u8> {
        let mut writer = CdrWriter::new(little_endian);
        writer
            .u32(-3i32 as u32)
            .u32(999_999_999)
            .string("base_link");
        writer.u32(names.len() as u32);
        for name in names {
            writer.string(name);
        }
        writer.f64s(values[0]).f64s(values[1]).f64s(values[2]);
        writer.bytes().to_vec()
    }

    #[test]
    fn reads_stamp_and_arrays_in_either_byte_order_whatever_the_names_lengths() {
        let positions = [0.5, -1.25, f64::NAN, 3.0];
        let velocities = [1.0, 2.0, 3.0, 4.0];
        let efforts = [-0.0, 0.0, 1e300, -1e-300];
        // Names of every length modulo 8 move the arrays across every alignment.
        for padding in 0..8 {
            let names = ["a", "bb", "ccc", &"d".repeat(padding)];
            for little_endian in [true, false] {
                let bytes = joint_state(little_endian, &names, [&positions, &velocities, &efforts]);
                for with_names in [false, true] {
                    let mut arrays = JointStateArrays::default();
                    let state = read_joint_state(&bytes, &mut arrays, with_names).unwrap();
                    let bits =
                        |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(state.positions), bits(&positions));
                    assert_eq!(bits(state.velocities), bits(&velocities));
                    assert_eq!(bits(state.efforts), bits(&efforts));
                    assert_eq!(state.stamp_ns, -3 * 1_000_000_000 + 999_999_999);
                    match state.names {
                        Some(read) => assert!(with_names && read == names),
                        None => assert!(!with_names),
                    }
                }
            }
        }
    }

    #[test]
    fn empty_arrays_are_not_aligned_and_read_as_empty() {
        for names in [&[][..], &["j"][..]] {
            let bytes = joint_state(true, names, [&[1.5, 2.5], &[], &[7.0, 8.0]]);
            let mut arrays = JointStateArrays::default();
            // Arrays left from an earlier message are replaced, not appended to.
            arrays.velocities.push(9.0);
            arrays.names.push("stale".into());
            let state = read_joint_state(&bytes, &mut arrays, true).unwrap();
            assert_eq!(state.positions, [1.5, 2.5]);
            assert!(state.velocities.is_empty());
            assert_eq!(state.efforts, [7.0, 8.0]);
            assert_eq!(state.names.unwrap(), names);
        }
    }

    #[test]
    fn every_truncation_is_an_error_naming_the_field() {
        let bytes = joint_state(
            true,
            &["shoulder", "elbow"],
            [&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]],
        );
        let mut arrays = JointStateArrays::default();
        for with_names in [false, true] {
            for length in 0..bytes.len() {
                let error =
                    read_joint_state(&bytes[..length], &mut arrays, with_names).unwrap_err();
                assert!(
                    matches!(error, CdrError::Truncated { length: l, .. } if l == length),
                    "{length}: {error}"
                );
            }
            assert!(read_joint_state(&bytes, &mut arrays, with_names).is_ok());
        }
    }

    #[test]
    fn a_count_beyond_the_message_is_an_error_not_an_allocation() {
        let mut writer = CdrWriter::new(true);
        writer.u32(0).u32(0).string("").u32(0).u32(u32::MAX);
        let mut arrays = JointStateArrays::default();
        let error = read_joint_state(writer.bytes(), &mut arrays, false).unwrap_err();
        assert_eq!(
            error,
            CdrError::Truncated {
                field: "position",
                length: writer.bytes().len()
            }
        );
    }

    #[test]
    fn other_encapsulations_are_refused() {
        let mut bytes = joint_state(true, &[], [&[], &[], &[]]);
        bytes[1] = 0x07; // PLAIN_CDR2, little-endian
        let mut arrays = JointStateArrays::default();
        assert_eq!(
            read_joint_state(&bytes, &mut arrays, false).unwrap_err(),
            CdrError::Encapsulation(0x0007)
        );
    }
}
