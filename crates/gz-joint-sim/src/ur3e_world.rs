//! The names of the shipped UR3e world (`sdf/ur3e_world.sdf`) that a bridge configured for it
//! uses, as gz-sim and this stand-in build them: its joints in order, the joints' command
//! prefix and the JointStatePublisher's topic. Tests, benchmarks and examples that run that
//! world name them from here; `tests/worlds.rs` checks them against the world the simulator
//! loads.

/// The joints, in the world's order.
pub const JOINTS: [&str; 6] = [
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
];

/// The JointPositionController topics' prefix: `<prefix><joint>/0/cmd_pos`.
pub const COMMAND_PREFIX: &str = "/model/ur3e/joint/";

/// The joint states (`Model`), as the JointStatePublisher of the nested controller model names
/// its topic.
pub const JOINT_STATES: &str =
    "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state";
