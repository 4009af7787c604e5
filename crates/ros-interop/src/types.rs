//! The message and service types the tests exchange, with their test patterns.

use crate::{message_pattern, MessageVisitor, ServiceVisitor};

message_pattern! {
    builtin_interfaces::msg::Time { sec, nanosec };
    builtin_interfaces::msg::Duration { sec, nanosec };
    std_msgs::msg::Header { stamp, frame_id };
    std_msgs::msg::MultiArrayDimension { label, size, stride };
    std_msgs::msg::MultiArrayLayout { dim, data_offset };
    std_msgs::msg::Float64MultiArray { layout, data };
    sensor_msgs::msg::JointState { header, name, position, velocity, effort };
    // Defaults: the same fields, with IDL default values.
    test_msgs::msg::{BasicTypes, Defaults} {
        bool_value, byte_value, char_value, float32_value, float64_value, int8_value,
        uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value,
        uint64_value
    };
    test_msgs::msg::{Arrays, BoundedSequences, UnboundedSequences} {
        bool_values, byte_values, char_values, float32_values, float64_values, int8_values,
        uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values,
        uint64_values, string_values, basic_types_values, constants_values, defaults_values,
        bool_values_default, byte_values_default, char_values_default, float32_values_default,
        float64_values_default, int8_values_default, uint8_values_default, int16_values_default,
        uint16_values_default, int32_values_default, uint32_values_default, int64_values_default,
        uint64_values_default, string_values_default, alignment_check
    };
    test_msgs::msg::BoundedPlainSequences {
        bool_values, byte_values, char_values, float32_values, float64_values, int8_values,
        uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values,
        uint64_values, basic_types_values, constants_values, defaults_values,
        bool_values_default, byte_values_default, char_values_default, float32_values_default,
        float64_values_default, int8_values_default, uint8_values_default, int16_values_default,
        uint16_values_default, int32_values_default, uint32_values_default, int64_values_default,
        uint64_values_default, alignment_check
    };
    test_msgs::msg::Strings {
        string_value, string_value_default1, string_value_default2, string_value_default3,
        string_value_default4, string_value_default5, bounded_string_value,
        bounded_string_value_default1, bounded_string_value_default2,
        bounded_string_value_default3, bounded_string_value_default4,
        bounded_string_value_default5
    };
    test_msgs::msg::Nested { basic_types_value };
    // Empty structs: the C placeholder member is not on the wire and not in rclpy.
    test_msgs::msg::Constants {};
    test_msgs::msg::Empty {};
    test_msgs::msg::MultiNested {
        array_of_arrays, array_of_bounded_sequences, array_of_unbounded_sequences,
        bounded_sequence_of_arrays, bounded_sequence_of_bounded_sequences,
        bounded_sequence_of_unbounded_sequences, unbounded_sequence_of_arrays,
        unbounded_sequence_of_bounded_sequences, unbounded_sequence_of_unbounded_sequences
    };
    test_msgs::msg::WStrings {
        wstring_value, wstring_value_default1, wstring_value_default2, wstring_value_default3,
        array_of_wstrings, bounded_sequence_of_wstrings, unbounded_sequence_of_wstrings
    };
    test_msgs::msg::Builtins { duration_value, time_value };
    test_msgs::srv::{BasicTypes_Request, BasicTypes_Response} {
        bool_value, byte_value, char_value, float32_value, float64_value, int8_value,
        uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value,
        uint64_value, string_value
    };
    test_msgs::srv::{Arrays_Request, Arrays_Response} {
        bool_values, byte_values, char_values, float32_values, float64_values, int8_values,
        uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values,
        uint64_values, string_values, basic_types_values, constants_values, defaults_values,
        bool_values_default, byte_values_default, char_values_default, float32_values_default,
        float64_values_default, int8_values_default, uint8_values_default, int16_values_default,
        uint16_values_default, int32_values_default, uint32_values_default, int64_values_default,
        uint64_values_default, string_values_default
    };
}

/// Message types by their ROS name (`pkg/msg/Name`).
macro_rules! dispatch {
    ($name:expr, $visitor:expr, $($pkg:ident :: $kind:ident :: $ty:ident),* $(,)?) => {
        match $name {
            $(concat!(stringify!($pkg), "/", stringify!($kind), "/", stringify!($ty)) =>
                $visitor.visit::<ros_env::$pkg::$kind::$ty>(),)*
            other => anyhow::bail!(
                "unknown type {other:?}; known: {}",
                [$(concat!(stringify!($pkg), "/", stringify!($kind), "/", stringify!($ty))),*]
                    .join(", ")
            ),
        }
    };
}

pub fn with_message_type(name: &str, visitor: impl MessageVisitor) -> anyhow::Result<()> {
    dispatch!(
        name,
        visitor,
        test_msgs::msg::BasicTypes,
        test_msgs::msg::Arrays,
        test_msgs::msg::BoundedSequences,
        test_msgs::msg::UnboundedSequences,
        test_msgs::msg::BoundedPlainSequences,
        test_msgs::msg::Strings,
        test_msgs::msg::Nested,
        test_msgs::msg::Constants,
        test_msgs::msg::Empty,
        test_msgs::msg::Defaults,
        test_msgs::msg::MultiNested,
        test_msgs::msg::WStrings,
        test_msgs::msg::Builtins,
        sensor_msgs::msg::JointState,
        std_msgs::msg::Float64MultiArray,
    )
}

pub fn with_service_type(name: &str, visitor: impl ServiceVisitor) -> anyhow::Result<()> {
    dispatch!(
        name,
        visitor,
        test_msgs::srv::BasicTypes,
        test_msgs::srv::Arrays,
    )
}
