//! `sas-gz-discover`: finds, from what gz-transport shows of a running Gazebo, every model
//! with joints and writes the `config.yaml` block that bridges it with
//! `sas_robot_driver_ros_gazebo_node`.
//!
//! What it reads: the advertised topics and their types, one `Model` message from every
//! topic that carries `Model` (the JointStatePublishers), and — from peers that answer
//! SUBSCRIBERS_REQ (gz-transport 13+, i.e. Harmonic and later, and gz-joint-sim; Fortress
//! does not) — the `Double` subscriptions of the controllers: `…/<joint>/0/cmd_pos`
//! (JointPositionController: position), `…/<joint>/cmd_vel` (JointController: velocity),
//! `…/<joint>/cmd_force` (ApplyJointForce: effort). That gives the modes each joint offers.
//! A position-only model is written as the original's block, a joint whose command topic
//! nobody subscribes to marked with a YAML comment; a model with velocity or effort
//! controllers gets the `joint_velocities_topic_prefix` / `joint_forces_topic_prefix` of
//! those and a comment per joint naming its modes. A peer that does not answer is said to
//! be unchecked, and its command prefix is Gazebo's default (`/model/<model>/joint/`).
//!
//! ```no_run
//! let node = gz_transport::Node::new()?;
//! let robots = gz_discover::discover(&node, &gz_discover::Options::default());
//! print!("{}", gz_discover::config_yaml(&robots, node.partition()));
//! # Ok::<(), gz_transport::Error>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gz_transport::{msgs, MsgsPrefix, Node, Subscription};
use prost::Message;
use yaml::{comment, quoted, scalar};

mod yaml;

/// What to look for, and for how long.
#[derive(Clone, Debug)]
pub struct Options {
    /// Give up after this long if the discovery is not complete by then.
    pub timeout: Duration,
    /// Only these models (by the `Model` message's name); empty: every model.
    pub models: Vec<String>,
    /// Only Gazebos speaking this type prefix; `None`: both.
    pub msgs_prefix: Option<MsgsPrefix>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(5),
            models: Vec::new(),
            msgs_prefix: None,
        }
    }
}

/// Whether a joint's controller of one mode was seen listening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// Its command topic has a `Double` subscriber.
    Listening,
    /// The Gazebo answered SUBSCRIBERS_REQ, and nobody subscribes to its command topic.
    Missing,
    /// The Gazebo does not answer SUBSCRIBERS_REQ (Fortress): not known.
    Unchecked,
}

/// One model with joints, as found.
#[derive(Clone, Debug, PartialEq)]
pub struct Robot {
    /// The `Model` message's (unscoped) name.
    pub model: String,
    /// The JointStatePublisher's topic.
    pub joint_states_topic: String,
    /// The prefix of the Gazebo that publishes it.
    pub msgs_prefix: MsgsPrefix,
    /// The joints with an axis, in message order.
    pub joints: Vec<String>,
    /// Joint `j` is commanded on `<command_prefix><j>/0/cmd_pos`.
    pub command_prefix: String,
    /// Position controllers (`cmd_pos`), per joint, same order as `joints`.
    pub controllers: Vec<Controller>,
    /// Joint `j`'s velocity is commanded on `<velocity_prefix><j>/cmd_vel`.
    pub velocity_prefix: String,
    /// Velocity controllers (JointController, `cmd_vel`), per joint.
    pub velocity_controllers: Vec<Controller>,
    /// Joint `j`'s effort is commanded on `<force_prefix><j>/cmd_force`.
    pub force_prefix: String,
    /// Effort controllers (ApplyJointForce, `cmd_force`), per joint.
    pub force_controllers: Vec<Controller>,
}

impl Robot {
    pub fn command_topic(&self, joint: &str) -> String {
        format!("{}{joint}/0/cmd_pos", self.command_prefix)
    }

    pub fn velocity_topic(&self, joint: &str) -> String {
        format!("{}{joint}/cmd_vel", self.velocity_prefix)
    }

    pub fn force_topic(&self, joint: &str) -> String {
        format!("{}{joint}/cmd_force", self.force_prefix)
    }

    /// The modes joint `i` offers (`position`, `velocity`, `effort`), as found listening.
    pub fn modes(&self, i: usize) -> Vec<&'static str> {
        [
            ("position", &self.controllers),
            ("velocity", &self.velocity_controllers),
            ("effort", &self.force_controllers),
        ]
        .into_iter()
        .filter(|(_, c)| c[i] == Controller::Listening)
        .map(|(mode, _)| mode)
        .collect()
    }

    /// Whether any joint has a velocity or effort controller listening.
    fn beyond_position(&self) -> bool {
        self.velocity_controllers
            .iter()
            .chain(&self.force_controllers)
            .any(|c| *c == Controller::Listening)
    }
}

/// Waiting less than this would miss advertisements: peers repeat theirs every second.
const SETTLE: Duration = Duration::from_millis(1500);

/// Listens on `node`'s partition until every `Model` topic seen delivered a message (and at
/// least [`SETTLE`]), or `options.timeout`; returns the models with joints, sorted by topic.
pub fn discover(node: &Node, options: &Options) -> Vec<Robot> {
    let start = Instant::now();
    let deadline = start + options.timeout;
    let (tx, rx) = mpsc::channel::<(String, String, Vec<u8>)>();
    let mut subscriptions: HashMap<String, Subscription> = HashMap::new();
    // topic → (publisher process, type name, first message)
    let mut models: BTreeMap<String, (String, String, msgs::Model)> = BTreeMap::new();
    let mut publishers: HashMap<String, String> = HashMap::new();
    node.watch_subscribers(deadline, || {
        for topic in node.topic_list() {
            if subscriptions.contains_key(&topic) || models.contains_key(&topic) {
                continue;
            }
            let Ok(infos) = node.topic_info(&topic) else {
                continue;
            };
            let Some(publisher) = infos
                .iter()
                .find(|p| !p.local && is_model_type(&p.type_name, options.msgs_prefix))
            else {
                continue;
            };
            publishers.insert(topic.clone(), publisher.process_uuid.clone());
            let tx = tx.clone();
            let name = topic.clone();
            if let Ok(s) = node.subscribe_raw(&topic, move |bytes, info| {
                let _ = tx.send((name.clone(), info.type_name.clone(), bytes.to_vec()));
            }) {
                subscriptions.insert(topic, s);
            }
        }
        while let Ok((topic, type_name, bytes)) = rx.try_recv() {
            if models.contains_key(&topic) || !is_model_type(&type_name, options.msgs_prefix) {
                continue;
            }
            if let Ok(m) = msgs::Model::decode(bytes.as_slice()) {
                let process = publishers.get(&topic).cloned().unwrap_or_default();
                models.insert(topic.clone(), (process, type_name, m));
                // One message is enough: stop the stream (and the publisher's work for us).
                subscriptions.remove(&topic);
            }
        }
        let complete = !models.is_empty() && subscriptions.is_empty();
        complete && start.elapsed() >= SETTLE
    });
    models
        .into_iter()
        .filter_map(|(topic, (process, type_name, model))| {
            robot(node, topic, &process, &type_name, model)
        })
        .filter(|r| options.models.is_empty() || options.models.contains(&r.model))
        .collect()
}

fn is_model_type(type_name: &str, prefix: Option<MsgsPrefix>) -> bool {
    match prefix {
        Some(p) => type_name == p.type_name("Model"),
        None => [MsgsPrefix::Gz, MsgsPrefix::Ignition]
            .iter()
            .any(|p| type_name == p.type_name("Model")),
    }
}

fn robot(
    node: &Node,
    topic: String,
    process: &str,
    type_name: &str,
    model: msgs::Model,
) -> Option<Robot> {
    let joints: Vec<String> = model
        .joint
        .iter()
        .filter(|j| j.axis1.is_some())
        .map(|j| j.name.clone())
        .collect();
    if joints.is_empty() {
        return None;
    }
    let msgs_prefix = if type_name.starts_with(MsgsPrefix::Ignition.as_str()) {
        MsgsPrefix::Ignition
    } else {
        MsgsPrefix::Gz
    };
    // The command topics the model's process subscribes to (with Double), if it answered.
    let double = msgs_prefix.type_name("Double");
    let mut answered = false;
    let mut commands: Vec<String> = Vec::new();
    for t in node.subscribed_topic_list() {
        let subs = node.topic_subscribers(&t).unwrap_or_default();
        let theirs: Vec<_> = subs
            .iter()
            .filter(|s| !s.local && s.process_uuid == process)
            .collect();
        answered |= !theirs.is_empty();
        if theirs.iter().any(|s| s.type_name == double) {
            commands.push(t);
        }
    }
    // Per mode: the prefix the joints' topics share, and who listens.
    let mode = |suffix: &str| -> (String, Vec<Controller>) {
        let prefix = command_prefix(&model.name, &joints, &commands, suffix);
        let controllers = joints
            .iter()
            .map(|j| {
                if !answered {
                    Controller::Unchecked
                } else if commands.contains(&format!("{prefix}{j}{suffix}")) {
                    Controller::Listening
                } else {
                    Controller::Missing
                }
            })
            .collect();
        (prefix, controllers)
    };
    let (command_prefix, controllers) = mode(POSITION_SUFFIX);
    let (velocity_prefix, velocity_controllers) = mode(VELOCITY_SUFFIX);
    let (force_prefix, force_controllers) = mode(FORCE_SUFFIX);
    Some(Robot {
        model: model.name,
        joint_states_topic: topic,
        msgs_prefix,
        joints,
        command_prefix,
        controllers,
        velocity_prefix,
        velocity_controllers,
        force_prefix,
        force_controllers,
    })
}

/// What follows `<prefix><joint>` in each mode's default command topic.
const POSITION_SUFFIX: &str = "/0/cmd_pos";
const VELOCITY_SUFFIX: &str = "/cmd_vel";
const FORCE_SUFFIX: &str = "/cmd_force";

/// The prefix most joints' command topics of one mode (`suffix`) share (a `<topic>` set in
/// the SDF moves them); Gazebo's default `/model/<model>/joint/` when none is known.
fn command_prefix(model: &str, joints: &[String], commands: &[String], suffix: &str) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for j in joints {
        let suffix = format!("{j}{suffix}");
        for c in commands {
            if let Some(prefix) = c.strip_suffix(&suffix) {
                if prefix.ends_with('/') {
                    *counts.entry(prefix).or_default() += 1;
                }
            }
        }
    }
    let default = format!("/model/{model}/joint/");
    let best = counts.iter().max_by_key(|(p, n)| (**n, **p == default));
    best.map_or(default.clone(), |(p, _)| (*p).to_owned())
}

/// The blocks of config/config.yaml for `robots`: keyed by the node name (`<model>_1`, …,
/// as the original's `ur3e_1`), with `robot_name` the same, the original's loop period, and
/// `gz_msgs_prefix` for a Fortress peer. Joints without a listening controller get a comment.
pub fn config_yaml(robots: &[Robot], partition: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# sas-gz-discover: {} model(s) with joints in gz-transport partition {}.",
        robots.len(),
        quoted(partition)
    );
    let mut used: HashMap<&str, usize> = HashMap::new();
    for r in robots {
        let n = used.entry(r.model.as_str()).or_default();
        *n += 1;
        let key = format!("{}_{n}", r.model);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "# model {}, {} joints",
            quoted(&r.model),
            r.joints.len()
        );
        let _ = writeln!(out, "{}:", scalar(&key));
        let _ = writeln!(out, "  ros__parameters:");
        if r.controllers.contains(&Controller::Unchecked) {
            let _ = writeln!(
                out,
                "    # controllers (position, velocity, effort) not checked: this Gazebo does not answer SUBSCRIBERS_REQ (Fortress does not)"
            );
        }
        if r.beyond_position() {
            // Velocity or effort control: say per joint what it offers.
            let _ = writeln!(out, "    joint_names:");
            for (i, j) in r.joints.iter().enumerate() {
                let modes = r.modes(i);
                let text = if modes.is_empty() {
                    format!(
                        "no controller listening on {}, {} or {}",
                        r.command_topic(j),
                        r.velocity_topic(j),
                        r.force_topic(j)
                    )
                } else {
                    format!("offers {}", modes.join(", "))
                };
                let _ = writeln!(out, "      - {}  # {}", quoted(j), comment(&text));
            }
        } else if r.controllers.contains(&Controller::Missing) {
            let _ = writeln!(out, "    joint_names:");
            for (j, c) in r.joints.iter().zip(&r.controllers) {
                let note = if *c == Controller::Missing {
                    let text =
                        format!("no position controller listening on {}", r.command_topic(j));
                    format!("  # {}", comment(&text))
                } else {
                    String::new()
                };
                let _ = writeln!(out, "      - {}{note}", quoted(j));
            }
        } else {
            let names: Vec<String> = r.joints.iter().map(|j| quoted(j)).collect();
            let _ = writeln!(out, "    joint_names: [{}]", names.join(", "));
        }
        let _ = writeln!(
            out,
            "    joint_positions_topic_prefix: {}",
            quoted(&r.command_prefix)
        );
        for (name, prefix, controllers) in [
            (
                "joint_velocities_topic_prefix",
                &r.velocity_prefix,
                &r.velocity_controllers,
            ),
            (
                "joint_forces_topic_prefix",
                &r.force_prefix,
                &r.force_controllers,
            ),
        ] {
            if controllers.contains(&Controller::Listening) {
                let _ = writeln!(out, "    {name}: {}", quoted(prefix));
            }
        }
        let _ = writeln!(
            out,
            "    joint_states_topic: {}",
            quoted(&r.joint_states_topic)
        );
        let _ = writeln!(out, "    robot_name: {}", quoted(&key));
        let _ = writeln!(
            out,
            "    thread_sampling_time_sec: 0.002  # Robot thread is at 500 Hz"
        );
        if r.msgs_prefix == MsgsPrefix::Ignition {
            let _ = writeln!(
                out,
                "    gz_msgs_prefix: {}",
                quoted(r.msgs_prefix.as_str())
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robot(controllers: Vec<Controller>, prefix: MsgsPrefix) -> Robot {
        let others = if controllers.contains(&Controller::Unchecked) {
            Controller::Unchecked
        } else {
            Controller::Missing
        };
        Robot {
            model: "ur3e".into(),
            joint_states_topic: "/world/w/model/ur3e/joint_state".into(),
            msgs_prefix: prefix,
            joints: vec!["a".into(), "b\"q".into()],
            command_prefix: "/model/ur3e/joint/".into(),
            velocity_prefix: "/model/ur3e/joint/".into(),
            velocity_controllers: vec![others; controllers.len()],
            force_prefix: "/model/ur3e/joint/".into(),
            force_controllers: vec![others; controllers.len()],
            controllers,
        }
    }

    fn assert_contains(yaml: &str, part: &str) {
        assert!(yaml.contains(part), "{part:?} is not in\n{yaml}");
    }

    #[test]
    fn a_fully_controlled_robot_is_written_as_the_original_config() {
        let yaml = config_yaml(
            &[robot(vec![Controller::Listening; 2], MsgsPrefix::Gz)],
            "p",
        );
        assert_contains(&yaml, "ur3e_1:\n  ros__parameters:\n    joint_names: [\"a\", \"b\\\"q\"]\n    joint_positions_topic_prefix: \"/model/ur3e/joint/\"\n    joint_states_topic: \"/world/w/model/ur3e/joint_state\"\n    robot_name: \"ur3e_1\"\n");
        assert!(!yaml.contains("gz_msgs_prefix"), "{yaml}");
    }

    #[test]
    fn missing_controllers_are_commented_and_fortress_gets_its_prefix() {
        let yaml = config_yaml(
            &[
                robot(
                    vec![Controller::Listening, Controller::Missing],
                    MsgsPrefix::Gz,
                ),
                robot(vec![Controller::Unchecked; 2], MsgsPrefix::Ignition),
            ],
            "p",
        );
        assert_contains(&yaml, "      - \"a\"\n      - \"b\\\"q\"  # no position controller listening on /model/ur3e/joint/b\"q/0/cmd_pos\n");
        assert_contains(&yaml, "ur3e_2:");
        assert_contains(&yaml, "not checked");
        assert_contains(&yaml, "    gz_msgs_prefix: \"ignition.msgs.\"\n");
    }

    #[test]
    fn names_yaml_would_misread_are_quoted_and_comments_stay_on_their_line() {
        let mut r = robot(
            vec![Controller::Listening, Controller::Missing],
            MsgsPrefix::Gz,
        );
        r.model = "true: #1".into();
        r.joints[1] = "b\n# c".into();
        let yaml = config_yaml(&[r], "p");
        assert_contains(&yaml, "\n# model \"true: #1\", 2 joints\n\"true: #1_1\":\n");
        assert_contains(&yaml, "\n      - \"b\\n# c\"  # no position controller listening on /model/ur3e/joint/b\\n# c/0/cmd_pos\n");
        assert_contains(&yaml, "\n    robot_name: \"true: #1_1\"\n");
    }

    #[test]
    fn the_command_prefix_is_the_one_the_subscriptions_share() {
        let joints = ["a".to_owned(), "b".to_owned()];
        assert_eq!(
            command_prefix("m", &joints, &[], POSITION_SUFFIX),
            "/model/m/joint/"
        );
        let moved = ["/x/a/0/cmd_pos".to_owned(), "/x/b/0/cmd_pos".to_owned()];
        assert_eq!(command_prefix("m", &joints, &moved, POSITION_SUFFIX), "/x/");
        let velocities = ["/v/a/cmd_vel".to_owned(), "/v/b/cmd_vel".to_owned()];
        assert_eq!(
            command_prefix("m", &joints, &velocities, VELOCITY_SUFFIX),
            "/v/"
        );
        assert_eq!(
            command_prefix("m", &joints, &velocities, FORCE_SUFFIX),
            "/model/m/joint/"
        );
    }

    #[test]
    fn velocity_and_effort_modes_get_their_prefixes_and_a_comment_per_joint() {
        let mut r = robot(vec![Controller::Missing; 2], MsgsPrefix::Gz);
        r.velocity_controllers = vec![Controller::Listening, Controller::Missing];
        r.force_controllers = vec![Controller::Listening, Controller::Missing];
        r.force_prefix = "/f/".into();
        let yaml = config_yaml(&[r], "p");
        assert!(
            yaml.contains("      - \"a\"  # offers velocity, effort\n"),
            "{yaml}"
        );
        assert!(yaml.contains("      - \"b\\\"q\"  # no controller listening on /model/ur3e/joint/b\"q/0/cmd_pos, /model/ur3e/joint/b\"q/cmd_vel or /f/b\"q/cmd_force\n"), "{yaml}");
        assert!(yaml.contains("    joint_velocities_topic_prefix: \"/model/ur3e/joint/\"\n    joint_forces_topic_prefix: \"/f/\"\n"), "{yaml}");
        // Position only: neither prefix.
        let yaml = config_yaml(
            &[robot(vec![Controller::Listening; 2], MsgsPrefix::Gz)],
            "p",
        );
        assert!(
            !yaml.contains("joint_velocities_topic_prefix")
                && !yaml.contains("joint_forces_topic_prefix")
                && !yaml.contains("offers"),
            "{yaml}"
        );
    }
}
