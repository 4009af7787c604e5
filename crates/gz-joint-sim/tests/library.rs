//! The world embedded in-process (as the driver's tests and benches use it), talked to over
//! gz-transport by a node of this process.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use gz_joint_sim::{SimOptions, World};
use gz_transport::msgs;
use gz_transport::{MessageInfo, MsgsPrefix, Node};
use test_support::{recv_until, wait_until};

fn start(test: &str, real_time_factor: Option<f64>) -> (gz_joint_sim::SimHandle, Node) {
    loopback_only();
    let world = World::load_with_resource_paths(sdf("ur3e_world.sdf"), &[]).unwrap();
    start_with_node(
        &world,
        &partition(test),
        SimOptions {
            msgs_prefix: MsgsPrefix::Gz,
            real_time_factor,
            ..Default::default()
        },
    )
}

#[test]
fn nan_and_inf_commands_are_refused_and_change_nothing() {
    let (sim, node) = start("nan", None);
    let cmd = node
        .advertise::<msgs::Double>("/model/ur3e/joint/wrist_1_joint/0/cmd_pos")
        .unwrap();
    assert!(
        cmd.wait_for_subscribers(Duration::from_secs(30)),
        "the sim never subscribed to the command topic"
    );
    let send = |data: f64| cmd.publish(&msgs::Double { header: None, data }).unwrap();

    // A good target first: the joint heads for it.
    wait_until("wrist_1 moves", Duration::from_secs(30), || {
        send(0.1);
        sim.joint_position("wrist_1_joint").unwrap() > 0.0
    });
    // Then garbage, which must be refused while the joint carries on to 0.1.
    let refused_before = sim.refused_commands();
    wait_until(
        "three bad commands are refused",
        Duration::from_secs(30),
        || {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                send(bad);
            }
            sim.refused_commands() >= refused_before + 3
        },
    );
    wait_until("wrist_1 settles on 0.1", Duration::from_secs(30), || {
        sim.joint_position("wrist_1_joint") == Some(0.1)
    });
    for j in sim.joints() {
        assert!(j.position.is_finite() && j.velocity.is_finite(), "{j:?}");
    }
    sim.stop();
}

#[test]
fn clock_is_published_on_both_topics_with_sim_real_and_system_time() {
    let (sim, node) = start("clock", None);
    let (tx, clocks) = mpsc::channel::<(String, msgs::Clock)>();
    let mut subs = Vec::new();
    for topic in ["/clock", "/world/ur3e_world/clock"] {
        let tx = tx.clone();
        subs.push(
            node.subscribe(topic, move |c: msgs::Clock, info: &MessageInfo| {
                drop(tx.send((info.topic.clone(), c)))
            })
            .unwrap(),
        );
    }
    let mut seen = std::collections::HashMap::<String, Vec<msgs::Clock>>::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < 2 || seen.values().any(|v| v.len() < 10) {
        assert!(
            Instant::now() < deadline,
            "clock messages missing: {:?}",
            seen.keys()
        );
        if let Ok((topic, c)) = clocks.recv_timeout(Duration::from_secs(5)) {
            seen.entry(topic).or_default().push(c);
        }
    }
    for (topic, list) in &seen {
        for pair in list.windows(2) {
            let (a, b) = (
                pair[0].sim.unwrap().as_nanos(),
                pair[1].sim.unwrap().as_nanos(),
            );
            // One message per 2 ms step (a loaded machine may drop one, never invent one).
            assert!(
                b > a && (b - a) % 2_000_000 == 0,
                "{topic}: sim time went {a} → {b} ns"
            );
        }
        let last = list.last().unwrap();
        assert!(
            last.real.unwrap().as_nanos() > 0 && last.system.unwrap().sec > 1_600_000_000,
            "{topic}: {last:?}"
        );
    }
    drop(subs);
    sim.stop();
}

/// A measurement, reported for the record; the bound is loose because CI cores are shared.
#[test]
fn achieved_real_time_factor_over_ten_seconds() {
    let (sim, _node) = start("timing", None);
    std::thread::sleep(Duration::from_millis(500));
    sim.take_timing(); // skip start-up
    std::thread::sleep(Duration::from_secs(10));
    let t = sim.take_timing();
    println!(
        "over {} steps: real-time factor {:.4} (target 1), step lateness mean {:?}, p99 {:?}, max {:?}, fell behind {} times",
        t.steps, t.real_time_factor, t.lateness_mean, t.lateness_p99, t.lateness_max, t.resyncs
    );
    assert!(
        (t.real_time_factor - 1.0).abs() < 0.10,
        "real-time factor {}",
        t.real_time_factor
    );
    assert!(t.steps > 4500, "{} steps in 10 s at 2 ms", t.steps);
    sim.stop();
}

#[test]
fn real_time_factor_option_scales_sim_time() {
    let (sim, _node) = start("rtf", Some(2.0));
    assert_eq!(sim.target_real_time_factor(), 2.0);
    std::thread::sleep(Duration::from_millis(300));
    sim.take_timing();
    std::thread::sleep(Duration::from_secs(2));
    let t = sim.take_timing();
    println!(
        "at target 2: achieved real-time factor {:.4}",
        t.real_time_factor
    );
    assert!(
        (t.real_time_factor - 2.0).abs() < 0.2,
        "real-time factor {}",
        t.real_time_factor
    );
    sim.stop();
}

/// A world in Fortress spelling (`ignition-gazebo-*-system`, `ignition::gazebo::systems::*`)
/// whose model and joint have poses and whose joint moves on its own (initial target 1).
const POSED_FORTRESS_WORLD: &str = r#"<sdf version="1.9"><world name="posed">
  <physics name="p" type="ode"><max_step_size>0.002</max_step_size></physics>
  <model name="arm"><pose>1 2 3 0 0 1.5707963267948966</pose>
    <link name="base"/>
    <link name="tip"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
    <joint name="j" type="revolute"><pose>0.1 0 0 0 0 0</pose><parent>base</parent><child>tip</child>
      <axis><xyz>0 0 1</xyz><dynamics><damping>0.5</damping></dynamics></axis></joint>
    <plugin filename="ignition-gazebo-joint-position-controller-system" name="ignition::gazebo::systems::JointPositionController">
      <joint_name>j</joint_name><use_velocity_commands>true</use_velocity_commands><cmd_max>0.25</cmd_max><initial_position>1</initial_position>
    </plugin>
    <plugin filename="ignition-gazebo-joint-state-publisher-system" name="ignition::gazebo::systems::JointStatePublisher"/>
  </model></world></sdf>"#;

/// The first joint-state message (run with `effort`) whose joint moves steadily, past the
/// first step's acceleration.
fn moving_state(test: &str, effort: gz_joint_sim::EffortReport) -> msgs::Model {
    loopback_only();
    let world = world_from_text(test, "posed.sdf", POSED_FORTRESS_WORLD);
    let (sim, node) = start_with_node(
        &world,
        &partition(test),
        SimOptions {
            msgs_prefix: MsgsPrefix::Ignition,
            report_effort: effort,
            ..Default::default()
        },
    );
    let (_sub, rx) = subscribe_channel(
        &node,
        "/world/posed/model/arm/joint_state",
        |m: msgs::Model| m,
    );
    let m = recv_until(&rx, Duration::from_secs(30), |m| {
        m.joint[0]
            .axis1
            .as_ref()
            .is_some_and(|a| a.velocity > 0.0 && a.position > 0.05)
    })
    .expect("a moving joint state within 30 s");
    sim.stop();
    m
}

#[test]
fn effort_is_zero_as_in_gazebo_unless_the_servo_torque_is_asked_for() {
    let m = moving_state("effort0", gz_joint_sim::EffortReport::Zero);
    let a = m.joint[0].axis1.clone().unwrap();
    assert_eq!((a.velocity, a.force), (0.25, 0.0));
    let m = moving_state("effortservo", gz_joint_sim::EffortReport::Servo);
    let a = m.joint[0].axis1.clone().unwrap();
    // At 0.25 rad/s the servo holds the damping torque, 0.5 × 0.25.
    assert_eq!(a.velocity, 0.25);
    assert!((a.force - 0.125).abs() < 1e-9, "{a:?}");
}

#[test]
fn model_and_joint_poses_are_in_the_joint_states() {
    let m = moving_state("poses", gz_joint_sim::EffortReport::Zero);
    let pose = m.pose.expect("the model pose");
    let p = pose.position.unwrap();
    assert_eq!((p.x, p.y, p.z), (1.0, 2.0, 3.0));
    let q = pose.orientation.unwrap();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        q.x.abs() < 1e-12
            && q.y.abs() < 1e-12
            && (q.z - half).abs() < 1e-12
            && (q.w - half).abs() < 1e-12,
        "yaw 90° as a quaternion: {q:?}"
    );
    let joint = m.joint[0].pose.clone().expect("the joint pose");
    let p = joint.position.unwrap();
    assert_eq!((p.x, p.y, p.z), (0.1, 0.0, 0.0));
    assert_eq!(joint.orientation.unwrap().w, 1.0);
}
