//! Velocity (JointController) and effort (ApplyJointForce) control of the stand-in, driven
//! by the real C++ `ign topic` over Ignition Fortress transport and judged by the
//! simulator's own joint states (their sim-time stamps): the UR3e velocity and effort worlds
//! of `sdf/fortress/`, and a world with damping for the first-order response.

mod common;

use std::f64::consts::PI;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use common::*;
use gz_joint_sim::World;
use gz_transport::msgs;
use gz_transport::{MsgsPrefix, Node, Subscription};
use test_support::{recv_for, recv_until};

/// One joint-state message: sim time and, per joint, (position, velocity, effort).
#[derive(Clone, Debug)]
struct Sample {
    t: f64,
    joints: Vec<(String, [f64; 3])>,
}

impl Sample {
    fn of(&self, joint: &str) -> [f64; 3] {
        self.joints
            .iter()
            .find(|(n, _)| n == joint)
            .unwrap_or_else(|| panic!("no {joint} in {self:?}"))
            .1
    }
}

/// The simulator binary on `world` (Fortress spelling, `ignition.msgs.`) and our subscriber
/// to its joint states.
struct Run {
    _sim: Proc,
    _node: Node,
    _sub: Subscription,
    samples: Receiver<Sample>,
    partition: String,
}

impl Run {
    fn start(test: &str, world: &Path, state_topic: &str, extra: &[&str]) -> Run {
        loopback_only();
        let partition = partition(test);
        let mut args = vec!["--msgs-prefix", "ignition.msgs."];
        args.extend_from_slice(extra);
        let sim = Proc::spawn(sim_command(world, &partition, &args));
        if let Err(lines) = sim.wait_for_line("running", Duration::from_secs(30)) {
            panic!("gz-joint-sim did not start: {lines:#?}");
        }
        let node = loopback_node(&partition, MsgsPrefix::Ignition);
        let (sub, samples) = subscribe_channel(&node, state_topic, |m: msgs::Model| {
            let t = state_stamp(&m).map_or(f64::NAN, msgs::Time::as_secs_f64);
            let joints = m
                .joint
                .iter()
                .map(|j| {
                    let a = j.axis1.clone().unwrap_or_default();
                    (j.name.clone(), [a.position, a.velocity, a.force])
                })
                .collect();
            Sample { t, joints }
        });
        samples
            .recv_timeout(Duration::from_secs(30))
            .expect("no joint state reached our subscriber");
        Run {
            _sim: sim,
            _node: node,
            _sub: sub,
            samples,
            partition,
        }
    }

    /// Publishes `data` on `topic` with `ign topic -p` until a joint state satisfies `done`
    /// (`ign topic -p` publishes once, right after advertising, and may be lost); returns
    /// that sample.
    fn command_until(
        &self,
        topic: &str,
        data: &str,
        mut done: impl FnMut(&Sample) -> bool,
    ) -> Sample {
        for _attempt in 0..15 {
            Proc::spawn(ign_topic(
                &self.partition,
                &[
                    "-t",
                    topic,
                    "-m",
                    "ignition.msgs.Double",
                    "-p",
                    &format!("data: {data}"),
                ],
            ))
            .finish(Duration::from_secs(10));
            if let Some(s) = recv_until(&self.samples, Duration::from_millis(700), &mut done) {
                return s;
            }
        }
        panic!("no effect after 15 `ign topic -p` of {data} on {topic}");
    }

    /// Samples until `done` holds for one (bounded), returning all of them.
    fn until(&self, what: &str, mut done: impl FnMut(&Sample) -> bool) -> Vec<Sample> {
        let mut seen = Vec::new();
        recv_for(what, &self.samples, Duration::from_secs(60), |s| {
            seen.push(s.clone());
            done(s)
        });
        seen
    }
}

/// Least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
        / points.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>()
}

const VELOCITY_STATES: &str =
    "/world/ur3e_velocity_world/model/ur3e/model/ur3e_velocity_controller/model/ur3e/joint_state";
const EFFORT_STATES: &str =
    "/world/ur3e_effort_world/model/ur3e/model/ur3e_effort_controller/model/ur3e/joint_state";

#[test]
fn cmd_vel_moves_the_joint_at_that_velocity_holds_it_and_stops_at_the_limits() {
    let run = Run::start(
        "cmdvel",
        &sdf("fortress/ur3e_velocity_world.sdf"),
        VELOCITY_STATES,
        &[],
    );
    let topic = "/model/ur3e/joint/elbow_joint/cmd_vel";
    let first = run.command_until(topic, "0.5", |s| s.of("elbow_joint")[1] == 0.5);
    // One second of sim time at the commanded velocity, nobody sending anything more: the
    // JointController holds the last command.
    let travel = run.until("1 s of travel", |s| s.t >= first.t + 1.0);
    let points: Vec<(f64, f64)> = travel
        .iter()
        .map(|s| (s.t, s.of("elbow_joint")[0]))
        .collect();
    let v = slope(&points);
    println!(
        "cmd_vel 0.5: elbow slope {v:.6} rad/s over {} samples",
        points.len()
    );
    assert!((v - 0.5).abs() < 0.005, "elbow moved at {v} rad/s");
    for s in &travel {
        assert_eq!(s.of("elbow_joint")[1], 0.5, "{s:?}");
        assert_eq!(s.of("elbow_joint")[2], 0.0, "Gazebo reports no effort");
        for j in UR3E_JOINTS.iter().filter(|j| **j != "elbow_joint") {
            assert_eq!(s.of(j)[0], 0.0, "{j} moved");
        }
    }

    // Above the <velocity> limit (π): clipped to it; then the position limit (π) stops it
    // exactly there, as DART's servo does.
    run.command_until(topic, "10", |s| s.of("elbow_joint")[1] > 0.5);
    let rest = run.until("the elbow to rest on its limit", |s| {
        let [position, velocity, _] = s.of("elbow_joint");
        (position - PI).abs() < 1e-9 && velocity.abs() < 1e-6
    });
    let fastest = rest
        .iter()
        .map(|s| s.of("elbow_joint")[1])
        .fold(f64::MIN, f64::max);
    assert_eq!(fastest, PI, "the <velocity> limit");
    assert!(rest.iter().all(|s| s.of("elbow_joint")[0] <= PI));

    // A NaN is taken as Gazebo takes it: the joint is servoed to rest, and stays there.
    run.command_until(topic, "-0.5", |s| s.of("elbow_joint")[1] == -0.5);
    let stopped = run.command_until(topic, "nan", |s| s.of("elbow_joint")[1] == 0.0);
    let after = run.until("0.5 s after the NaN", |s| s.t >= stopped.t + 0.5);
    assert!(
        after.iter().all(|s| s.of("elbow_joint")[1] == 0.0
            && s.of("elbow_joint")[0] == stopped.of("elbow_joint")[0]),
        "the elbow moved after the NaN"
    );
}

#[test]
fn cmd_force_accelerates_the_joint_per_its_inertia_and_reports_that_effort_only() {
    let world = sdf("fortress/ur3e_effort_world.sdf");
    let w = World::load_with_resource_paths(&world, &[]).unwrap();
    let inertia = |name: &str| w.joints[w.joint_index(name).unwrap()].effective_inertia;
    let run = Run::start(
        "cmdforce",
        &world,
        EFFORT_STATES,
        &["--report-effort", "force-commanded"],
    );

    // The UR3e has no damping: ω(t) = τ·t / I until the <velocity> limit (π) holds it.
    let tau = 0.05;
    let elbow = "/model/ur3e/joint/elbow_joint/cmd_force";
    run.command_until(elbow, &tau.to_string(), |s| s.of("elbow_joint")[1] > 0.0);
    let spin_up = run.until("the velocity limit", |s| s.of("elbow_joint")[1] >= PI);
    let points: Vec<(f64, f64)> = spin_up
        .iter()
        .filter(|s| s.of("elbow_joint")[1] < 0.9 * PI)
        .map(|s| (s.t, s.of("elbow_joint")[1]))
        .collect();
    let acceleration = slope(&points);
    let expected = tau / inertia("elbow_joint");
    println!(
        "cmd_force {tau}: elbow accelerates at {acceleration:.4} rad/s² (τ/I = {expected:.4}, I = {:.6} kg·m²) over {} samples",
        inertia("elbow_joint"),
        points.len()
    );
    assert!(points.len() > 100, "{} samples", points.len());
    assert!(
        (acceleration / expected - 1.0).abs() < 0.01,
        "{acceleration} vs {expected}"
    );
    for s in &spin_up {
        assert_eq!(
            s.of("elbow_joint")[2],
            tau,
            "the elbow's effort is the force applied"
        );
        for j in UR3E_JOINTS.iter().filter(|j| **j != "elbow_joint") {
            assert_eq!(s.of(j), [0.0; 3], "{j}: no command, no effort");
        }
    }
    assert_eq!(
        spin_up.last().unwrap().of("elbow_joint")[1],
        PI,
        "held at <velocity>"
    );
    // The position limit stops it.
    run.until("the elbow to stop on its limit", |s| {
        s.of("elbow_joint") == [PI, 0.0, tau]
    });

    // Above the <effort> limit (9 N·m for wrist_1): clipped, as DART clips the command.
    let s = run.command_until("/model/ur3e/joint/wrist_1_joint/cmd_force", "-100", |s| {
        s.of("wrist_1_joint")[2] != 0.0
    });
    assert_eq!(s.of("wrist_1_joint")[2], -9.0);
    run.until("wrist_1 at its velocity limit", |s| {
        s.of("wrist_1_joint")[1] == -2.0 * PI
    });
}

/// A Fortress world of one joint: I = 0.01 + 2·0.1² = 0.03 kg·m², damping 0.5 N·m·s/rad.
const DAMPED: &str = r#"<sdf version="1.9"><world name="damped">
  <physics name="p" type="ode"><max_step_size>0.002</max_step_size></physics>
  <model name="arm"><link name="base"/>
    <link name="tip"><inertial><pose>0.1 0 0 0 0 0</pose><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
    <joint name="j" type="revolute"><parent>base</parent><child>tip</child>
      <axis><xyz>0 0 1</xyz><dynamics><damping>0.5</damping></dynamics></axis></joint>
    <plugin filename="ignition-gazebo-apply-joint-force-system" name="ignition::gazebo::systems::ApplyJointForce"><joint_name>j</joint_name></plugin>
    <plugin filename="ignition-gazebo-joint-state-publisher-system" name="ignition::gazebo::systems::JointStatePublisher"/>
  </model></world></sdf>"#;

#[test]
fn constant_torque_from_rest_gives_the_first_order_response_and_gazebo_reports_no_effort() {
    let dir = std::env::temp_dir().join(format!("gz-joint-sim-damped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let world = dir.join("damped.sdf");
    std::fs::write(&world, DAMPED).unwrap();
    // Default effort report: zero, as Gazebo.
    let run = Run::start("damped", &world, "/world/damped/model/arm/joint_state", &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    let (tau, b, inertia) = (0.2, 0.5, 0.03);
    let first = run.command_until("/model/arm/joint/j/cmd_force", &tau.to_string(), |s| {
        s.of("j")[1] > 0.0
    });
    // The force acted from the step that ends at the first moving sample.
    let t0 = first.t - 0.002;
    let response = run.until("5 time constants", |s| s.t >= t0 + 5.0 * inertia / b);
    let mut worst: f64 = 0.0;
    for s in std::iter::once(&first).chain(&response) {
        let t = s.t - t0;
        let expected = tau / b * (1.0 - (-b * t / inertia).exp());
        worst = worst.max((s.of("j")[1] - expected).abs());
        assert_eq!(
            s.of("j")[2],
            0.0,
            "Gazebo's JointStatePublisher never fills the effort"
        );
    }
    println!(
        "τ {tau}, b {b}, I {inertia}: {} samples, worst |ω − τ/b·(1−e^(−bt/I))| = {worst:.5} rad/s (τ/b = {})",
        response.len() + 1,
        tau / b
    );
    assert!(worst < 0.01 * tau / b, "worst deviation {worst}");
    assert!(response.len() > 100);
}
