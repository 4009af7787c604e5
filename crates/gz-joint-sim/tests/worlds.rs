//! The shipped SDF worlds load, and name their joints, limits and topics exactly as the
//! original's configuration (and real gz-sim) expects.

mod common;

use std::f64::consts::PI;
use std::time::Duration;

use common::{sdf, world_from_text, UR3E_JOINTS};
use gz_joint_sim::{ControlMode, JointKind, StatePublisherSpec, World};

fn load(name: &str) -> World {
    // No resource path: the world's own folder must be enough.
    World::load_with_resource_paths(sdf(name), &[]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

const R820_JOINTS: [&str; 7] = [
    "joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7",
];

/// The names of the joints `publisher` publishes, in its order.
fn published_joints<'w>(w: &'w World, publisher: &StatePublisherSpec) -> Vec<&'w str> {
    publisher
        .joints
        .iter()
        .map(|&i| w.joints[i].name.as_str())
        .collect()
}

/// The topics of the world's JointPositionControllers, in SDF order.
fn position_controller_topics(w: &World) -> Vec<&str> {
    w.position_controllers
        .iter()
        .map(|c| c.topic.as_str())
        .collect()
}

/// Gazebo's JointPositionController topics for `joints` of `model`, one controller a joint.
fn cmd_pos_topics(model: &str, joints: &[&str]) -> Vec<String> {
    joints
        .iter()
        .map(|j| format!("/model/{model}/joint/{j}/0/cmd_pos"))
        .collect()
}

#[test]
fn ur3e_world_topics_are_the_originals() {
    let w = load("ur3e_world.sdf");
    assert_eq!(w.name, "ur3e_world");
    assert_eq!(w.step, Duration::from_millis(2));
    assert_eq!(w.real_time_factor, 1.0);

    assert_eq!(w.state_publishers.len(), 1);
    let jsp = &w.state_publishers[0];
    assert_eq!(
        jsp.topic,
        "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
    );
    assert_eq!(jsp.model_name, "ur3e");
    let published = published_joints(&w, jsp);
    assert_eq!(published, UR3E_JOINTS);

    assert_eq!(
        position_controller_topics(&w),
        cmd_pos_topics("ur3e", &UR3E_JOINTS)
    );
    for c in &w.position_controllers {
        assert_eq!(
            c.mode,
            ControlMode::Velocity {
                cmd_max: Some(0.25)
            }
        );
        assert_eq!(c.initial_position, 0.0);
        assert_eq!(c.joints.len(), 1);
        assert_eq!(w.joints[c.joints[0]].name, c.joint_names[0]);
    }
}

#[test]
fn ur3e_joint_limits_are_the_originals_with_infinity_kept() {
    let w = load("ur3e_world.sdf");
    let limits = |name: &str| {
        let j = &w.joints[w
            .joint_index(name)
            .unwrap_or_else(|| panic!("no joint {name}"))];
        assert_eq!(j.kind, JointKind::Revolute, "{name}");
        let a = j.axis.unwrap();
        assert_eq!(a.xyz, [0.0, 0.0, 1.0]);
        (a.lower, a.upper, a.effort, a.velocity)
    };
    assert_eq!(
        limits("shoulder_pan_joint"),
        (-2.0 * PI, 2.0 * PI, 54.0, PI)
    );
    assert_eq!(
        limits("shoulder_lift_joint"),
        (-2.0 * PI, 2.0 * PI, 54.0, PI)
    );
    assert_eq!(limits("elbow_joint"), (-PI, PI, 28.0, PI));
    assert_eq!(
        limits("wrist_1_joint"),
        (-2.0 * PI, 2.0 * PI, 9.0, 2.0 * PI)
    );
    assert_eq!(
        limits("wrist_2_joint"),
        (-2.0 * PI, 2.0 * PI, 9.0, 2.0 * PI)
    );
    assert_eq!(
        limits("wrist_3_joint"),
        (f64::NEG_INFINITY, f64::INFINITY, 9.0, 2.0 * PI)
    );
    // The fixed base joint exists (outer model) but is not published.
    let base = &w.joints[w.joint_index("ur3e::base_joint").unwrap()];
    assert_eq!(base.kind, JointKind::Fixed);
    assert_eq!(
        w.joints[w.joint_index("elbow_joint").unwrap()].scoped_name,
        "ur3e::ur3e_position_controller::ur3e::elbow_joint"
    );
}

#[test]
fn r820_world_has_seven_joints_with_the_r820_limits() {
    let w = load("r820_world.sdf");
    assert_eq!(w.name, "r820_world");
    assert_eq!(w.step, Duration::from_millis(2));
    let jsp = &w.state_publishers[0];
    assert_eq!(
        jsp.topic,
        "/world/r820_world/model/r820/model/r820_position_controller/model/r820/joint_state"
    );
    let published = published_joints(&w, jsp);
    assert_eq!(published, R820_JOINTS);
    let uppers = [2.96706, 2.0944, 2.96706, 2.0944, 2.96706, 2.0944, 3.05433];
    for (name, upper) in R820_JOINTS.iter().zip(uppers) {
        let a = w.joints[w.joint_index(name).unwrap()].axis.unwrap();
        assert_eq!(
            (a.lower, a.upper, a.effort, a.velocity),
            (-upper, upper, 100.0, 100.0),
            "{name}"
        );
    }
    assert_eq!(
        position_controller_topics(&w),
        cmd_pos_topics("r820", &R820_JOINTS)
    );
}

#[test]
fn longboy_world_is_one_model_with_thirteen_joints() {
    let w = load("longboy_world.sdf");
    assert_eq!(w.state_publishers.len(), 1);
    let jsp = &w.state_publishers[0];
    assert_eq!(jsp.topic, "/world/longboy_world/model/longboy/model/longboy_position_controller/model/longboy/joint_state");
    let published = published_joints(&w, jsp);
    let expected: Vec<&str> = R820_JOINTS
        .iter()
        .chain(UR3E_JOINTS.iter())
        .copied()
        .collect();
    assert_eq!(published, expected);
    assert_eq!(w.position_controllers.len(), 13);
    assert_eq!(
        position_controller_topics(&w),
        cmd_pos_topics("longboy", &expected)
    );
}

#[test]
fn model_uris_resolve_through_the_resource_path_too() {
    // A world elsewhere that includes model://ur3e_position_controller.sdf finds it only
    // through the resource path.
    let dir = std::env::temp_dir().join(format!("gz-joint-sim-worlds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let world = dir.join("w.sdf");
    std::fs::write(
        &world,
        r#"<sdf version="1.9"><world name="elsewhere"><model name="arm">
             <include><uri>model://ur3e_position_controller.sdf</uri></include>
           </model></world></sdf>"#,
    )
    .unwrap();
    let err = World::load_with_resource_paths(&world, &[]).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot find include uri \"model://ur3e_position_controller.sdf\""),
        "{err}"
    );
    let w = World::load_with_resource_paths(&world, &[sdf("")]).unwrap();
    assert_eq!(
        w.state_publishers[0].topic,
        "/world/elsewhere/model/arm/model/ur3e_position_controller/model/ur3e/joint_state"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn plugin_parameters_are_read_as_gazebo_reads_them() {
    let w = world_from_text(
        "params",
        "w.sdf",
        r#"<sdf version="1.9"><world name="params">
          <physics name="slow" type="ode"><max_step_size>0.01</max_step_size><real_time_factor>0.5</real_time_factor></physics>
          <physics name="fast" type="ode" default="true"><max_step_size>0.001</max_step_size></physics>
          <model name="bot">
            <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
            <joint name="a" type="revolute"><parent>base</parent><child>l1</child></joint>
            <joint name="b" type="prismatic"><parent>l1</parent><child>l2</child>
              <axis><xyz>2 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit><dynamics><damping>3</damping></dynamics></axis></joint>
            <joint name="c" type="continuous"><parent>l2</parent><child>l3</child></joint>
            <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
              <joint_name>a</joint_name><joint_name>c</joint_name>
              <p_gain>5</p_gain><i_gain>0.5</i_gain><d_gain>0.05</d_gain><i_max>2</i_max><i_min>-2</i_min>
              <cmd_max>7</cmd_max><cmd_min>-6</cmd_min><cmd_offset>0.1</cmd_offset><initial_position>0.25</initial_position>
            </plugin>
            <plugin filename="libignition-gazebo-joint-position-controller-system.so" name="ignition::gazebo::systems::JointPositionController">
              <joint_name>b</joint_name><sub_topic>b_cmd</sub_topic><use_velocity_commands>1</use_velocity_commands>
            </plugin>
            <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
              <joint_name>c</joint_name><topic>/my/c cmd</topic><sub_topic>ignored</sub_topic><joint_index>0</joint_index>
            </plugin>
            <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">
              <joint_name>c</joint_name><joint_name>a</joint_name><topic>/bot/states</topic><update_rate>50</update_rate>
            </plugin>
            <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher"/>
          </model></world></sdf>"#,
    );

    // The physics profile marked default wins; SDF defaults fill the rest.
    assert_eq!(w.step, Duration::from_millis(1));
    assert_eq!(w.real_time_factor, 1.0);

    let [pid, vel, topic] = &w.position_controllers[..] else {
        panic!("three controllers")
    };
    assert_eq!(
        pid.topic, "/model/bot/joint/a/0/cmd_pos",
        "named after the first joint"
    );
    assert_eq!(pid.joint_names, ["a", "c"]);
    assert_eq!(
        pid.joints,
        [w.joint_index("a").unwrap(), w.joint_index("c").unwrap()]
    );
    assert_eq!(pid.mode, ControlMode::Pid);
    assert_eq!(
        pid.pid,
        gz_joint_sim::PidGains {
            p: 5.0,
            i: 0.5,
            d: 0.05,
            i_max: 2.0,
            i_min: -2.0,
            cmd_max: 7.0,
            cmd_min: -6.0,
            cmd_offset: 0.1
        }
    );
    assert_eq!(pid.initial_position, 0.25);

    assert_eq!(vel.topic, "/model/bot/b_cmd");
    assert_eq!(
        vel.mode,
        ControlMode::Velocity { cmd_max: None },
        "cmd_max not given: no speed limit"
    );
    assert_eq!(vel.pid, gz_joint_sim::PidGains::default());

    assert_eq!(
        topic.topic, "/my/c_cmd",
        "<topic> wins, made valid as gz-transport does"
    );

    let b = &w.joints[w.joint_index("b").unwrap()];
    assert_eq!(b.kind, JointKind::Prismatic);
    let axis = b.axis.unwrap();
    assert_eq!(
        (axis.xyz, axis.lower, axis.upper, axis.damping),
        ([1.0, 0.0, 0.0], -0.5, 0.5, 3.0)
    );
    let c = w.joints[w.joint_index("c").unwrap()].axis.unwrap();
    assert_eq!(
        (c.lower, c.upper, c.effort, c.velocity),
        (-1e16, 1e16, -1.0, -1.0),
        "SDF defaults"
    );

    let [filtered, all] = &w.state_publishers[..] else {
        panic!("two publishers")
    };
    assert_eq!(filtered.topic, "/bot/states");
    assert_eq!(filtered.update_rate, Some(50.0));
    assert_eq!(
        published_joints(&w, filtered),
        ["a", "c"],
        "entity (SDF) order, not filter order"
    );
    assert_eq!(all.topic, "/world/params/model/bot/joint_state");
    assert_eq!(published_joints(&w, all), ["a", "b", "c"]);
}

/// The Harmonic worlds of sdf/ and their generated Fortress spelling (sdf/fortress/).
const WORLDS: [&str; 5] = [
    "ur3e_world.sdf",
    "r820_world.sdf",
    "longboy_world.sdf",
    "ur3e_velocity_world.sdf",
    "ur3e_effort_world.sdf",
];

#[test]
fn fortress_worlds_are_generated_from_the_harmonic_ones() {
    let script = sdf("../tools/fortress_worlds.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .expect("python3 runs tools/fortress_worlds.py");
    assert!(
        out.status.success(),
        "sdf/fortress/ is out of step with sdf/:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in WORLDS {
        let text = std::fs::read_to_string(sdf(&format!("fortress/{name}"))).unwrap();
        assert!(
            !text.contains("gz-sim-") && !text.contains("gz::sim::"),
            "{name}"
        );
        assert!(text.contains("ignition::gazebo::systems::"), "{name}");
    }
}

#[test]
fn fortress_and_harmonic_worlds_load_the_same_joints_controllers_and_topics() {
    for name in WORLDS {
        let harmonic = load(name);
        let fortress = load(&format!("fortress/{name}"));
        assert_eq!(fortress.name, harmonic.name);
        let joints =
            |w: &World| -> Vec<String> { w.joints.iter().map(|j| j.scoped_name.clone()).collect() };
        assert_eq!(joints(&fortress), joints(&harmonic), "{name}");
        let controllers = |w: &World| -> Vec<(String, Vec<String>)> {
            let positions = w
                .position_controllers
                .iter()
                .map(|c| (c.topic.clone(), c.joint_names.clone()));
            let velocities = w
                .joint_controllers
                .iter()
                .map(|c| (c.topic.clone(), c.joint_names.clone()));
            let forces = w
                .force_appliers
                .iter()
                .map(|a| (a.topic.clone(), vec![a.joint_name.clone()]));
            positions.chain(velocities).chain(forces).collect()
        };
        assert!(!controllers(&harmonic).is_empty(), "{name}");
        assert_eq!(controllers(&fortress), controllers(&harmonic), "{name}");
        let states = |w: &World| -> Vec<(String, Vec<usize>)> {
            w.state_publishers
                .iter()
                .map(|p| (p.topic.clone(), p.joints.clone()))
                .collect()
        };
        assert_eq!(states(&fortress).len(), 1, "{name}");
        assert_eq!(states(&fortress), states(&harmonic), "{name}");
    }
}

/// `ur3e_{kind}_world.sdf`, checked to be named so and to publish the joint states where
/// Gazebo does for it: the UR3e nested in its `ur3e_{kind}_controller` model.
fn load_ur3e_controller_world(kind: &str) -> World {
    let name = format!("ur3e_{kind}_world");
    let w = load(&format!("{name}.sdf"));
    assert_eq!(w.name, name);
    assert_eq!(
        w.state_publishers[0].topic,
        format!("/world/{name}/model/ur3e/model/ur3e_{kind}_controller/model/ur3e/joint_state")
    );
    w
}

#[test]
fn ur3e_velocity_world_has_a_joint_controller_per_joint_on_gazebos_topics() {
    let w = load_ur3e_controller_world("velocity");
    assert!(w.position_controllers.is_empty() && w.force_appliers.is_empty());
    assert_eq!(w.joint_controllers.len(), 6);
    for (c, j) in w.joint_controllers.iter().zip(UR3E_JOINTS) {
        assert_eq!(c.topic, format!("/model/ur3e/joint/{j}/cmd_vel"));
        assert_eq!(c.joint_names, [j]);
        assert_eq!(w.joints[c.joints[0]].name, j);
        assert_eq!((c.initial_velocity, c.force_mode), (0.0, None));
    }
    // The UR3e's own model: same limits as the position world.
    let position_world = load("ur3e_world.sdf");
    for j in UR3E_JOINTS {
        let axis = |w: &World| w.joints[w.joint_index(j).unwrap()].axis;
        assert_eq!(axis(&w), axis(&position_world), "{j}");
    }
}

#[test]
fn ur3e_effort_world_has_an_apply_joint_force_per_joint_on_gazebos_topics() {
    let w = load_ur3e_controller_world("effort");
    assert!(w.position_controllers.is_empty() && w.joint_controllers.is_empty());
    assert_eq!(w.force_appliers.len(), 6);
    for (a, j) in w.force_appliers.iter().zip(UR3E_JOINTS) {
        assert_eq!(a.topic, format!("/model/ur3e/joint/{j}/cmd_force"));
        assert_eq!(w.joints[a.joint].name, j);
        let inertia = w.joints[a.joint].effective_inertia;
        assert!(inertia > 1e-4 && inertia < 1.0, "{j}: {inertia}");
    }
}

#[test]
fn joint_controller_and_apply_joint_force_parameters_are_read_as_gazebo_reads_them() {
    let w = world_from_text(
        "jc",
        "w.sdf",
        r#"<sdf version="1.9"><world name="jc">
          <model name="bot">
            <link name="base"/><link name="l1"/><link name="l2"/>
            <joint name="a" type="revolute"><parent>base</parent><child>l1</child>
              <axis><xyz>0 0 1</xyz><dynamics><damping>0.2</damping><friction>0.05</friction></dynamics></axis></joint>
            <joint name="b" type="continuous"><parent>l1</parent><child>l2</child></joint>
            <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
              <joint_name>a</joint_name><joint_name>b</joint_name><initial_velocity>0.3</initial_velocity>
            </plugin>
            <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
              <joint_name>b</joint_name><use_force_commands>true</use_force_commands><p_gain>4</p_gain><sub_topic>b_vel</sub_topic>
            </plugin>
            <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
              <joint_name>a</joint_name><topic>/my a/vel</topic>
            </plugin>
            <plugin filename="gz-sim-apply-joint-force-system" name="gz::sim::systems::ApplyJointForce">
              <joint_name>b</joint_name>
            </plugin>
          </model></world></sdf>"#,
    );
    let [two, force_mode, topic] = &w.joint_controllers[..] else {
        panic!("three JointControllers")
    };
    assert_eq!(
        two.topic, "/model/bot/joint/a/cmd_vel",
        "named after the first joint"
    );
    assert_eq!(two.joint_names, ["a", "b"]);
    assert_eq!(two.initial_velocity, 0.3);
    assert_eq!(two.force_mode, None);
    assert_eq!(force_mode.topic, "/model/bot/b_vel");
    assert_eq!(
        force_mode.force_mode,
        Some(gz_joint_sim::PidGains {
            p: 4.0,
            i: 0.0,
            d: 0.0,
            i_max: 1.0,
            i_min: -1.0,
            cmd_max: 1000.0,
            cmd_min: -1000.0,
            cmd_offset: 0.0
        }),
        "the JointController's own PID defaults"
    );
    assert_eq!(topic.topic, "/my_a/vel");
    assert_eq!(w.force_appliers[0].topic, "/model/bot/joint/b/cmd_force");
    let a = w.joints[w.joint_index("a").unwrap()].axis.unwrap();
    assert_eq!((a.damping, a.friction), (0.2, 0.05));
}

#[test]
fn a_joint_moves_its_child_links_inertia_about_the_axis() {
    // The child's inertial frame is rolled 90° and 0.5 m out along x: about the joint's z
    // axis the link shows its iyy (0.03) plus 2 kg · 0.5².
    let w = world_from_text(
        "inertia",
        "w.sdf",
        r#"<sdf version="1.9"><world name="chain"><model name="arm">
          <link name="base"/>
          <link name="l1"><inertial><pose>0.5 0 0 1.5707963267948966 0 0</pose><mass>2</mass>
            <inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz></inertia></inertial></link>
          <link name="l2"><inertial><mass>5</mass></inertial></link>
          <joint name="a" type="revolute"><parent>base</parent><child>l1</child></joint>
          <joint name="b" type="revolute"><parent>l1</parent><child>l2</child></joint>
          <joint name="p" type="prismatic"><parent>base</parent><child>l1</child></joint>
        </model></world></sdf>"#,
    );
    let inertia = |name: &str| w.joints[w.joint_index(name).unwrap()].effective_inertia;
    // Only the child link counts (l2, further down, does not: see JointSpec).
    assert!((inertia("a") - 0.53).abs() < 1e-9, "{}", inertia("a"));
    assert!(
        (inertia("b") - 1.0).abs() < 1e-12,
        "SDF default inertia, izz 1"
    );
    assert!(
        (inertia("p") - 2.0).abs() < 1e-12,
        "a prismatic joint moves the mass"
    );
}
