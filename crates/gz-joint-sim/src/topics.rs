//! Topic names exactly as Gazebo builds them, so a bridge configured for real gz-sim finds
//! the same topics on the stand-in.

/// gz-transport's `TopicUtils::AsValidTopic`: spaces become `_`; `@`, `~`, `//` and `:=` are
/// removed; the result must then be a valid topic, otherwise `None` (Gazebo logs an error
/// and the system does not start).
pub fn as_valid_topic(topic: &str) -> Option<String> {
    let mut out = String::with_capacity(topic.len());
    let mut chars = topic.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => out.push('_'),
            '@' | '~' => {}
            ':' if chars.peek() == Some(&'=') => {
                chars.next();
            }
            '/' if chars.peek() == Some(&'/') => {
                chars.next();
            }
            other => out.push(other),
        }
    }
    is_valid_topic(&out).then_some(out)
}

/// gz-transport's `TopicUtils::IsValidTopic`.
fn is_valid_topic(topic: &str) -> bool {
    const MAX_NAME_LENGTH: usize = 65535;
    !topic.is_empty()
        && topic != "/"
        && topic.len() <= MAX_NAME_LENGTH
        && !topic.contains('~')
        && !topic.contains(' ')
        && !topic.contains('@')
        && !topic.contains("//")
        && !topic.contains(":=")
}

/// The JointPositionController's default command topic:
/// `/model/<model>/joint/<joint>/<index>/cmd_pos`, where `<model>` is the *unscoped* name of
/// the model the plugin is attached to.
pub fn joint_position_command(model: &str, joint: &str, joint_index: u32) -> Option<String> {
    as_valid_topic(&format!(
        "/model/{model}/joint/{joint}/{joint_index}/cmd_pos"
    ))
}

/// The `<sub_topic>` form of the JointPositionController and JointController:
/// `/model/<model>/<sub_topic>`.
pub fn model_sub_topic(model: &str, sub_topic: &str) -> Option<String> {
    as_valid_topic(&format!("/model/{model}/{sub_topic}"))
}

/// The JointController's default command topic: `/model/<model>/joint/<joint>/cmd_vel`
/// (gz-sim 8 and ign-gazebo 6 alike, `src/systems/joint_controller/JointController.cc`),
/// `<model>` the unscoped name of the model the plugin is attached to.
pub fn joint_velocity_command(model: &str, joint: &str) -> Option<String> {
    as_valid_topic(&format!("/model/{model}/joint/{joint}/cmd_vel"))
}

/// The ApplyJointForce command topic, the only one it has:
/// `/model/<model>/joint/<joint>/cmd_force` (gz-sim 8 and ign-gazebo 6 alike,
/// `src/systems/apply_joint_force/ApplyJointForce.cc`).
pub fn joint_force_command(model: &str, joint: &str) -> Option<String> {
    as_valid_topic(&format!("/model/{model}/joint/{joint}/cmd_force"))
}

/// gz-sim's `topicFromScopedName(model, ecm, false)`: `/world/<w>/model/<m1>/model/<m2>/…`
/// for the whole chain of nested models, outermost first.
pub fn scoped_model_topic(world: &str, model_chain: &[String]) -> String {
    let mut topic = format!("/world/{world}");
    for model in model_chain {
        topic.push_str("/model/");
        topic.push_str(model);
    }
    topic
}

/// The JointStatePublisher's default topic: the scoped model topic + `/joint_state`.
pub fn joint_state(world: &str, model_chain: &[String]) -> Option<String> {
    as_valid_topic(&format!(
        "{}/joint_state",
        scoped_model_topic(world, model_chain)
    ))
}

/// The JointStatePublisher's default topic in Ignition Gazebo 6.0–6.7:
/// `/world/<parent>/model/<model>/joint_state`, `<parent>` being the name of the model's
/// parent entity (the world, or the enclosing model of a nested one).
pub fn joint_state_fortress_pre_6_8(parent: &str, model: &str) -> Option<String> {
    as_valid_topic(&format!("/world/{parent}/model/{model}/joint_state"))
}

/// The world clock topic gz-sim publishes `Clock` on (besides the root `/clock`).
pub fn world_clock(world: &str) -> Option<String> {
    as_valid_topic(&format!("/world/{world}/clock"))
}

/// gz-sim's world control service (`SimulationRunner`, `control` in the world's namespace).
pub fn world_control(world: &str) -> Option<String> {
    as_valid_topic(&format!("/world/{world}/control"))
}

/// UserCommands' pose service (`gz.msgs.Pose` → `gz.msgs.Boolean`).
pub fn world_set_pose(world: &str) -> Option<String> {
    as_valid_topic(&format!("/world/{world}/set_pose"))
}

/// SceneBroadcaster's `gz.msgs.Pose_V` topic with every model's pose.
pub fn world_pose_info(world: &str) -> Option<String> {
    as_valid_topic(&format!("/world/{world}/pose/info"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_topics_pass_unchanged() {
        assert_eq!(
            as_valid_topic("/model/ur3e/joint/elbow_joint/0/cmd_pos").as_deref(),
            Some("/model/ur3e/joint/elbow_joint/0/cmd_pos")
        );
    }

    #[test]
    fn invalid_characters_are_rewritten_as_gz_transport_does() {
        assert_eq!(
            as_valid_topic("/model/my robot/joint").as_deref(),
            Some("/model/my_robot/joint")
        );
        assert_eq!(as_valid_topic("/a@b~c").as_deref(), Some("/abc"));
        assert_eq!(as_valid_topic("/a//b").as_deref(), Some("/ab"));
        assert_eq!(as_valid_topic("/a:=b").as_deref(), Some("/ab"));
        assert_eq!(as_valid_topic("@@"), None);
        assert_eq!(as_valid_topic("/"), None);
        assert_eq!(as_valid_topic(""), None);
    }

    #[test]
    fn joint_state_topic_covers_the_whole_nesting_chain() {
        let chain = ["ur3e", "ur3e_position_controller", "ur3e"].map(String::from);
        assert_eq!(
            joint_state("ur3e_world", &chain).as_deref(),
            Some("/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state")
        );
    }

    #[test]
    fn command_topic_uses_model_joint_and_index() {
        assert_eq!(
            joint_position_command("ur3e", "wrist_3_joint", 0).as_deref(),
            Some("/model/ur3e/joint/wrist_3_joint/0/cmd_pos")
        );
        assert_eq!(
            model_sub_topic("ur3e", "cmd/a").as_deref(),
            Some("/model/ur3e/cmd/a")
        );
    }
}
