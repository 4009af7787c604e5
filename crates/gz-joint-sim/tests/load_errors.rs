//! Bad worlds fail to load with an error naming the file, the line and the element at fault.

use std::path::{Path, PathBuf};

use gz_joint_sim::{LoadError, World};

/// A scratch folder with the given files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str, files: &[(&str, &str)]) -> Scratch {
        let dir = std::env::temp_dir().join(format!("gz-joint-sim-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        Scratch(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load_err(dir: &Scratch, file: &str) -> LoadError {
    World::load_with_resource_paths(dir.path(file), &[]).expect_err("the world must not load")
}

const ARM: &str = r#"<sdf version="1.9"><model name="arm">
  <link name="a"/><link name="b"/>
  <joint name="j1" type="revolute"><parent>a</parent><child>b</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
</model></sdf>"#;

fn world_with(model_body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <model name="m">
{model_body}
    </model>
  </world>
</sdf>"#
    )
}

fn assert_names(err: &LoadError, file: &Path, needles: &[&str]) {
    let text = err.to_string();
    assert!(
        text.contains(&file.display().to_string()),
        "error does not name {}: {text}",
        file.display()
    );
    for n in needles {
        assert!(text.contains(n), "error lacks {n:?}: {text}");
    }
}

#[test]
fn malformed_xml_names_the_file_and_position() {
    let dir = Scratch::new(
        "malformed",
        &[(
            "w.sdf",
            "<sdf version=\"1.9\"><world name=\"w\">\n<model name=\"m\">\n</world></sdf>",
        )],
    );
    let err = load_err(&dir, "w.sdf");
    assert!(matches!(err, LoadError::Xml { .. }), "{err:?}");
    assert_names(&err, &dir.path("w.sdf"), &["not well-formed XML", "at 3:1"]);
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = Scratch::new("missing-file", &[]);
    let err = load_err(&dir, "nope.sdf");
    assert!(matches!(err, LoadError::Io { .. }), "{err:?}");
    assert_names(&err, &dir.path("nope.sdf"), &["cannot read"]);
}

#[test]
fn missing_include_names_uri_line_and_element() {
    let w = world_with("      <include>\n        <uri>model://no_such_arm</uri>\n      </include>");
    let dir = Scratch::new("missing-include", &[("w.sdf", &w)]);
    let err = load_err(&dir, "w.sdf");
    assert!(matches!(err, LoadError::IncludeNotFound { .. }), "{err:?}");
    assert_names(
        &err,
        &dir.path("w.sdf"),
        &[
            "model://no_such_arm",
            ":6:",
            "/sdf/world[@name='w']/model[@name='m']/include/uri",
        ],
    );
}

#[test]
fn plugins_in_an_include_naming_an_unknown_joint_are_refused() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "unknown-jpc-joint",
            r#"        <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
          <joint_name>elbow</joint_name>
        </plugin>"#,
            &[
                "\"elbow\"",
                "m::arm",
                ":6:",
                "plugin[@name='gz::sim::systems::JointPositionController']",
            ],
        ),
        (
            "unknown-jsp-joint",
            r#"        <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">
          <joint_name>j1</joint_name>
          <joint_name>j9</joint_name>
        </plugin>"#,
            &["JointStatePublisher", "\"j9\"", ":8:", "joint_name"],
        ),
    ];
    for (test, plugin, needles) in cases {
        let w = world_with(&format!(
            "      <include><uri>arm.sdf</uri>\n{plugin}\n      </include>"
        ));
        let dir = Scratch::new(test, &[("w.sdf", &w), ("arm.sdf", ARM)]);
        let err = load_err(&dir, "w.sdf");
        assert_names(&err, &dir.path("w.sdf"), needles);
    }
}

#[test]
fn errors_inside_an_included_file_name_that_file() {
    let broken = ARM.replace("<upper>1</upper>", "<upper>one</upper>");
    let w = world_with("      <include><uri>arm.sdf</uri></include>");
    let dir = Scratch::new("bad-number", &[("w.sdf", &w), ("arm.sdf", &broken)]);
    let err = load_err(&dir, "w.sdf");
    assert_names(
        &err,
        &dir.path("arm.sdf"),
        &["expected a number, found \"one\"", "limit/upper"],
    );
}

#[test]
fn other_bad_worlds_are_refused_with_a_reason() {
    let cases: &[(&str, &str)] = &[
        ("<sdf version=\"1.9\"><model name=\"m\"/></sdf>", "no <world> element"),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"ball\"><parent>a</parent><child>b</child></joint>"), "joint type \"ball\" is not simulated"),
        (&world_with("<link name=\"a\"/><joint name=\"j\" type=\"revolute\"><parent>a</parent><child>c</child></joint>"), "child \"c\" of joint \"j\" names no link or frame"),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child><axis><limit><lower>1</lower><upper>-1</upper></limit></axis></joint>"), "lower limit 1 is above upper limit -1"),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child></joint><plugin name=\"gz::sim::systems::JointPositionController\" filename=\"x\"><joint_name>j</joint_name><use_velocity_commands>maybe</use_velocity_commands></plugin>"), "expected true or false, found \"maybe\""),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"fixed\"><parent>a</parent><child>b</child></joint><plugin name=\"gz::sim::systems::JointPositionController\" filename=\"x\"><joint_name>j</joint_name></plugin>"), "<joint_index> 0 is out of range"),
        (&world_with("<include><uri>https://fuel.example/models/arm</uri></include>"), "only model:// and file URIs are supported"),
        (&world_with("<pose>0 0 x 0 0 0</pose><link name=\"a\"/>"), "bad number \"x\" in <pose>"),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child><axis><xyz>0 0 one</xyz></axis></joint>"), "bad number \"one\" in <xyz>"),
        (&world_with("<plugin name=\"gz::sim::systems::JointPositionController\" filename=\"x\"/>"), "JointPositionController needs a <joint_name>"),
        (&world_with("<link name=\"a\"/><link name=\"b\"/><joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child></joint><plugin name=\"gz::sim::systems::JointController\" filename=\"x\"><joint_name>j</joint_name><use_actuator_msg>true</use_actuator_msg></plugin>"), "use_actuator_msg is not supported"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let dir = Scratch::new(&format!("case{i}"), &[("w.sdf", text)]);
        let err = load_err(&dir, "w.sdf");
        assert_names(&err, &dir.path("w.sdf"), &[needle]);
    }
}

#[test]
fn include_cycles_are_refused() {
    let w = world_with("<include><uri>a.sdf</uri></include>");
    let a =
        r#"<sdf version="1.9"><model name="a"><include><uri>b.sdf</uri></include></model></sdf>"#;
    let b =
        r#"<sdf version="1.9"><model name="b"><include><uri>a.sdf</uri></include></model></sdf>"#;
    let dir = Scratch::new("cycle", &[("w.sdf", &w), ("a.sdf", a), ("b.sdf", b)]);
    let err = load_err(&dir, "w.sdf");
    assert_names(&err, &dir.path("b.sdf"), &["include cycle"]);
}

#[test]
fn bad_joint_controller_and_apply_joint_force_configurations_name_file_line_and_element() {
    let cases = [
        (
            r#"<plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
      <joint_name>nope</joint_name></plugin>"#,
            vec![
                "w.sdf:8:",
                "joint_name",
                "JointController names joint \"nope\"",
            ],
        ),
        (
            r#"<plugin filename="gz-sim-apply-joint-force-system" name="gz::sim::systems::ApplyJointForce">
      <joint_name>j1</joint_name><topic>/elsewhere</topic></plugin>"#,
            vec!["w.sdf:8:", "ApplyJointForce']/topic", "has no <topic>"],
        ),
        (
            r#"<plugin filename="gz-sim-apply-joint-force-system" name="gz::sim::systems::ApplyJointForce">
      <joint_name>j1</joint_name><joint_name>j2</joint_name></plugin>"#,
            vec!["w.sdf:8:", "joint_name", "would be ignored by Gazebo"],
        ),
        (
            r#"<plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
      <joint_name>j1</joint_name><initial_velocity>fast</initial_velocity></plugin>"#,
            vec!["w.sdf:8:", "initial_velocity", "expected a number"],
        ),
        (
            r#"<plugin filename="ignition-gazebo-joint-controller-system" name="ignition::gazebo::systems::JointController">
      <joint_name>j1</joint_name><joint_name>j1</joint_name></plugin>"#,
            vec![
                "w.sdf:8:",
                "joint_name",
                "Fortress's JointController drives its first",
            ],
        ),
        (
            r#"<plugin filename="ignition-gazebo-joint-controller-system" name="ignition::gazebo::systems::JointController">
      <joint_name>j1</joint_name><sub_topic>v</sub_topic></plugin>"#,
            vec!["w.sdf:8:", "sub_topic", "has no <sub_topic>"],
        ),
        (
            r#"<plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController"/>"#,
            vec!["w.sdf:7:", "JointController needs a <joint_name>"],
        ),
    ];
    let arm = r#"<link name="a"/><link name="b"/>
    <joint name="j1" type="revolute"><parent>a</parent><child>b</child></joint>"#;
    for (plugin, needles) in cases {
        let w = world_with(&format!("{arm}\n    {plugin}"));
        let dir = Scratch::new("jcbad", &[("w.sdf", &w)]);
        let err = load_err(&dir, "w.sdf");
        println!("{err}");
        assert_names(&err, &dir.path("w.sdf"), &needles);
    }
}
