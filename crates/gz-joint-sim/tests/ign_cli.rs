//! The stand-in against the real C++ peer (Ignition Fortress `ign topic`), with the
//! `ignition.msgs.` prefix and the Fortress spelling of the world (`sdf/fortress/`): joint
//! states as Gazebo publishes them, on the Harmonic world's topics, and commands obeyed.

mod common;

use std::time::{Duration, Instant};

use common::*;
use gz_transport::msgs;
use gz_transport::MsgsPrefix;
use test_support::{recv_for, recv_until, wait_for};

fn start_sim(partition: &str) -> Proc {
    let sim = Proc::spawn(sim_command(
        &sdf("fortress/ur3e_world.sdf"),
        partition,
        &["--msgs-prefix", "ignition.msgs."],
    ));
    if let Err(lines) = sim.wait_for_line("running", Duration::from_secs(30)) {
        panic!("gz-joint-sim did not start: {lines:#?}");
    }
    sim
}

/// The first message of `ign topic -e` output: up to the next top-level `header {`.
fn first_message(echoed: &str) -> &str {
    let start = echoed.find("header {").unwrap_or(0);
    match echoed[start + 1..].find("\nheader {") {
        Some(end) => &echoed[start..start + 1 + end],
        None => &echoed[start..],
    }
}

/// Runs `ign topic` (bounded) and returns its output.
fn run_ign(partition: &str, args: &[&str], timeout: Duration) -> String {
    Proc::spawn(ign_topic(partition, args))
        .finish(timeout)
        .1
        .join("\n")
}

#[test]
fn ign_topic_echo_shows_the_ur3e_joints_with_their_sdf_limits() {
    loopback_only();
    let partition = partition("echo");
    let _sim = start_sim(&partition);
    let echoed = wait_for(
        "ign topic -e to print a joint state",
        Duration::from_secs(60),
        || {
            run_ign(
                &partition,
                &["-e", "-t", UR3E_STATE_TOPIC, "-n", "1"],
                Duration::from_secs(10),
            )
        },
        |out| out.contains("joint {"),
    );
    println!("{echoed}");
    // `ign topic -n 1` can print a second message when two arrive together under load:
    // count limits in the first one only.
    let echoed = first_message(&echoed);
    for joint in UR3E_JOINTS {
        assert!(
            echoed.contains(&format!("name: \"{joint}\"")),
            "{joint} missing"
        );
    }
    assert!(echoed.contains("name: \"ur3e\""));
    // SDF limits, as printed by the C++ protobuf text format.
    assert_eq!(
        echoed.matches("limit_lower: -6.2831853071795862").count(),
        4,
        "±2π joints"
    );
    assert_eq!(
        echoed.matches("limit_upper: 6.2831853071795862").count(),
        4,
        "±2π joints"
    );
    assert!(
        echoed.contains("limit_lower: -3.1415926535897931")
            && echoed.contains("limit_upper: 3.1415926535897931"),
        "elbow ±π"
    );
    assert!(
        echoed.contains("limit_lower: -inf") && echoed.contains("limit_upper: inf"),
        "wrist_3 ±inf"
    );
    assert!(echoed.contains("stamp {"), "header.stamp = sim time");
}

/// `(sim time, elbow position, elbow velocity, largest |position| of the other joints)`
type Sample = (f64, f64, f64, f64);

#[test]
fn ign_topic_command_moves_that_joint_at_cmd_max_and_no_other() {
    loopback_only();
    let partition = partition("command");
    let _sim = start_sim(&partition);

    let node = loopback_node(&partition, MsgsPrefix::Ignition);
    let (_sub, samples) = subscribe_channel(&node, UR3E_STATE_TOPIC, |m: msgs::Model| -> Sample {
        let stamp = state_stamp(&m).map_or(f64::NAN, msgs::Time::as_secs_f64);
        let mut elbow = (f64::NAN, f64::NAN);
        let mut others: f64 = 0.0;
        for j in &m.joint {
            let a = j.axis1.clone().unwrap_or_default();
            if j.name == "elbow_joint" {
                elbow = (a.position, a.velocity);
            } else {
                others = others.max(a.position.abs());
            }
        }
        (stamp, elbow.0, elbow.1, others)
    });
    let first = samples
        .recv_timeout(Duration::from_secs(30))
        .expect("no joint state reached our subscriber");
    assert_eq!(first.1, 0.0, "elbow starts at its initial target 0");

    // `ign topic -p` publishes once, shortly after advertising; repeat until it lands.
    let topic = "/model/ur3e/joint/elbow_joint/0/cmd_pos";
    let moving = (0..15).find_map(|_attempt| {
        run_ign(
            &partition,
            &["-t", topic, "-m", "ignition.msgs.Double", "-p", "data: 0.5"],
            Duration::from_secs(10),
        );
        recv_until(&samples, Duration::from_millis(500), |s| s.1 > 0.0)
    });
    let start = moving.expect("the elbow never moved after 15 `ign topic -p` commands");

    // Collect one second of sim time while the elbow travels (it needs 2 s for 0.5 rad).
    let mut travel: Vec<Sample> = vec![start];
    let deadline = Instant::now() + Duration::from_secs(30);
    while travel.last().unwrap().0 < start.0 + 1.0 {
        assert!(Instant::now() < deadline, "joint states stopped");
        if let Ok(s) = samples.recv_timeout(Duration::from_secs(5)) {
            travel.push(s);
        }
    }
    let n = travel.len() as f64;
    let (mt, mp) = (
        travel.iter().map(|s| s.0).sum::<f64>() / n,
        travel.iter().map(|s| s.1).sum::<f64>() / n,
    );
    let slope = travel.iter().map(|s| (s.0 - mt) * (s.1 - mp)).sum::<f64>()
        / travel.iter().map(|s| (s.0 - mt).powi(2)).sum::<f64>();
    println!(
        "elbow slope over {} samples: {slope:.6} rad/s (sim time)",
        travel.len()
    );
    assert!(
        (slope - 0.25).abs() < 0.0025,
        "elbow moved at {slope} rad/s, expected 0.25"
    );
    assert!(
        travel.iter().all(|s| (s.2 - 0.25).abs() < 1e-9),
        "reported velocity is cmd_max while travelling"
    );
    assert!(travel.iter().all(|s| s.3 == 0.0), "another joint moved");

    // And it stops exactly on the target.
    recv_for(
        "the elbow to settle on 0.5",
        &samples,
        Duration::from_secs(30),
        |s| {
            assert!(s.1 <= 0.5 + 1e-12, "overshoot: {s:?}");
            s.1 == 0.5 && s.2 == 0.0
        },
    );
}

#[test]
fn ign_topic_list_shows_the_gazebo_topics() {
    loopback_only();
    let partition = partition("list");
    let _sim = start_sim(&partition);
    let wanted = [UR3E_STATE_TOPIC, "/clock", "/world/ur3e_world/clock"];
    wait_for(
        &format!("ign topic -l to show all of {wanted:?}"),
        Duration::from_secs(60),
        || run_ign(&partition, &["-l"], Duration::from_secs(10)),
        |out| wanted.iter().all(|t| out.lines().any(|l| l.trim() == *t)),
    );
}
