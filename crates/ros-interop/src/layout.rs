//! Size, alignment and member offsets of generated rmw structs, printed for the C layout
//! probe of `tests/ros/test_layout.py`, which compiles the same queries against the C
//! headers with gcc. A member in the wrong order or of the wrong type changes an offset.
//!
//! Output: `struct <header> <c_type> <size> <align>` then `member <c_type> <name> <offset>`.

macro_rules! probe {
    ($($header:literal, $pkg:ident :: $kind:ident :: rmw :: $name:ident { $($field:ident),* };)*) => {
        $(
            {
                type T = ros_env::$pkg::$kind::rmw::$name;
                let c_type = concat!(stringify!($pkg), "__", stringify!($kind), "__", stringify!($name));
                println!(
                    "struct {} {} {} {}",
                    $header,
                    c_type,
                    std::mem::size_of::<T>(),
                    std::mem::align_of::<T>()
                );
                $(println!("member {} {} {}", c_type, stringify!($field), std::mem::offset_of!(T, $field));)*
            }
        )*
    };
}

pub fn print() {
    probe! {
        "test_msgs/msg/basic_types.h", test_msgs::msg::rmw::BasicTypes { bool_value, byte_value, char_value, float32_value, float64_value, int8_value, uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value, uint64_value };
        "test_msgs/msg/arrays.h", test_msgs::msg::rmw::Arrays { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, string_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, string_values_default, alignment_check };
        "test_msgs/msg/bounded_sequences.h", test_msgs::msg::rmw::BoundedSequences { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, string_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, string_values_default, alignment_check };
        "test_msgs/msg/unbounded_sequences.h", test_msgs::msg::rmw::UnboundedSequences { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, string_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, string_values_default, alignment_check };
        "test_msgs/msg/multi_nested.h", test_msgs::msg::rmw::MultiNested { array_of_arrays, array_of_bounded_sequences, array_of_unbounded_sequences, bounded_sequence_of_arrays, bounded_sequence_of_bounded_sequences, bounded_sequence_of_unbounded_sequences, unbounded_sequence_of_arrays, unbounded_sequence_of_bounded_sequences, unbounded_sequence_of_unbounded_sequences };
        "test_msgs/msg/strings.h", test_msgs::msg::rmw::Strings { string_value, string_value_default1, string_value_default2, string_value_default3, string_value_default4, string_value_default5, bounded_string_value, bounded_string_value_default1, bounded_string_value_default2, bounded_string_value_default3, bounded_string_value_default4, bounded_string_value_default5 };
        "test_msgs/msg/w_strings.h", test_msgs::msg::rmw::WStrings { wstring_value, wstring_value_default1, wstring_value_default2, wstring_value_default3, array_of_wstrings, bounded_sequence_of_wstrings, unbounded_sequence_of_wstrings };
        "test_msgs/msg/defaults.h", test_msgs::msg::rmw::Defaults { bool_value, byte_value, char_value, float32_value, float64_value, int8_value, uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value, uint64_value };
        "test_msgs/msg/constants.h", test_msgs::msg::rmw::Constants { structure_needs_at_least_one_member };
        "test_msgs/msg/builtins.h", test_msgs::msg::rmw::Builtins { duration_value, time_value };
        "test_msgs/msg/bounded_plain_sequences.h", test_msgs::msg::rmw::BoundedPlainSequences { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, alignment_check };
        "test_msgs/msg/nested.h", test_msgs::msg::rmw::Nested { basic_types_value };
        "test_msgs/srv/basic_types.h", test_msgs::srv::rmw::BasicTypes_Request { bool_value, byte_value, char_value, float32_value, float64_value, int8_value, uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value, uint64_value, string_value };
        "test_msgs/srv/basic_types.h", test_msgs::srv::rmw::BasicTypes_Response { bool_value, byte_value, char_value, float32_value, float64_value, int8_value, uint8_value, int16_value, uint16_value, int32_value, uint32_value, int64_value, uint64_value, string_value };
        "test_msgs/srv/basic_types.h", test_msgs::srv::rmw::BasicTypes_Event { info, request, response };
        "test_msgs/srv/arrays.h", test_msgs::srv::rmw::Arrays_Request { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, string_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, string_values_default };
        "test_msgs/srv/arrays.h", test_msgs::srv::rmw::Arrays_Response { bool_values, byte_values, char_values, float32_values, float64_values, int8_values, uint8_values, int16_values, uint16_values, int32_values, uint32_values, int64_values, uint64_values, string_values, basic_types_values, constants_values, defaults_values, bool_values_default, byte_values_default, char_values_default, float32_values_default, float64_values_default, int8_values_default, uint8_values_default, int16_values_default, uint16_values_default, int32_values_default, uint32_values_default, int64_values_default, uint64_values_default, string_values_default };
        "test_msgs/srv/arrays.h", test_msgs::srv::rmw::Arrays_Event { info, request, response };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_Goal { order };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_Result { sequence };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_Feedback { sequence };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_SendGoal_Request { goal_id, goal };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_SendGoal_Response { accepted, stamp };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_SendGoal_Event { info, request, response };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_GetResult_Request { goal_id };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_GetResult_Response { status, result };
        "test_msgs/action/fibonacci.h", test_msgs::action::rmw::Fibonacci_FeedbackMessage { goal_id, feedback };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_Goal { nested_field_no_pkg, nested_field, nested_different_pkg };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_Result { nested_field_no_pkg, nested_field, nested_different_pkg };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_Feedback { nested_field_no_pkg, nested_field, nested_different_pkg };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_SendGoal_Request { goal_id, goal };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_SendGoal_Response { accepted, stamp };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_SendGoal_Event { info, request, response };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_GetResult_Request { goal_id };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_GetResult_Response { status, result };
        "test_msgs/action/nested_message.h", test_msgs::action::rmw::NestedMessage_FeedbackMessage { goal_id, feedback };
        "sensor_msgs/msg/joint_state.h", sensor_msgs::msg::rmw::JointState { header, name, position, velocity, effort };
        "sensor_msgs/msg/imu.h", sensor_msgs::msg::rmw::Imu { header, orientation, orientation_covariance, angular_velocity, angular_velocity_covariance, linear_acceleration, linear_acceleration_covariance };
        "sensor_msgs/msg/camera_info.h", sensor_msgs::msg::rmw::CameraInfo { header, height, width, distortion_model, d, k, r, p, binning_x, binning_y, roi };
        "sensor_msgs/msg/nav_sat_fix.h", sensor_msgs::msg::rmw::NavSatFix { header, status, latitude, longitude, altitude, position_covariance, position_covariance_type };
        "std_msgs/msg/header.h", std_msgs::msg::rmw::Header { stamp, frame_id };
        "std_msgs/msg/float64_multi_array.h", std_msgs::msg::rmw::Float64MultiArray { layout, data };
        "std_msgs/msg/multi_array_layout.h", std_msgs::msg::rmw::MultiArrayLayout { dim, data_offset };
        "std_msgs/msg/string.h", std_msgs::msg::rmw::String { data };
        "rcl_interfaces/msg/parameter_value.h", rcl_interfaces::msg::rmw::ParameterValue { type_, bool_value, integer_value, double_value, string_value, byte_array_value, bool_array_value, integer_array_value, double_array_value, string_array_value };
        "rcl_interfaces/msg/parameter_descriptor.h", rcl_interfaces::msg::rmw::ParameterDescriptor { name, type_, description, additional_constraints, read_only, dynamic_typing, floating_point_range, integer_range };
        "rcl_interfaces/msg/parameter.h", rcl_interfaces::msg::rmw::Parameter { name, value };
        "rcl_interfaces/msg/log.h", rcl_interfaces::msg::rmw::Log { stamp, level, name, msg, file, function, line };
        "rcl_interfaces/srv/get_parameters.h", rcl_interfaces::srv::rmw::GetParameters_Request { names };
        "rcl_interfaces/srv/get_parameters.h", rcl_interfaces::srv::rmw::GetParameters_Response { values };
        "rcl_interfaces/srv/get_parameters.h", rcl_interfaces::srv::rmw::GetParameters_Event { info, request, response };
        "action_msgs/msg/goal_info.h", action_msgs::msg::rmw::GoalInfo { goal_id, stamp };
        "action_msgs/msg/goal_status_array.h", action_msgs::msg::rmw::GoalStatusArray { status_list };
        "action_msgs/srv/cancel_goal.h", action_msgs::srv::rmw::CancelGoal_Request { goal_info };
        "action_msgs/srv/cancel_goal.h", action_msgs::srv::rmw::CancelGoal_Response { return_code, goals_canceling };
        "action_msgs/srv/cancel_goal.h", action_msgs::srv::rmw::CancelGoal_Event { info, request, response };
        "geometry_msgs/msg/pose_with_covariance.h", geometry_msgs::msg::rmw::PoseWithCovariance { pose, covariance };
        "geometry_msgs/msg/quaternion.h", geometry_msgs::msg::rmw::Quaternion { x, y, z, w };
        "type_description_interfaces/msg/type_description.h", type_description_interfaces::msg::rmw::TypeDescription { type_description, referenced_type_descriptions };
    }
}
