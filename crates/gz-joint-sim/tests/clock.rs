//! Gazebo's clock as the stand-in publishes it: `gz.msgs.Clock` on `/clock` and
//! `/world/<world>/clock`, one per step, following `--real-time-factor`; read by the real
//! C++ `ign topic` and by our subscriber, judged by the simulator's own fields.

mod common;

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use gz_transport::msgs;
use gz_transport::{MessageInfo, MsgsPrefix};
use test_support::wait_for;

fn secs(t: Option<msgs::Time>) -> f64 {
    t.expect("field set").as_secs_f64()
}

/// Runs the UR3e world at `rtf`; returns per clock topic the messages received over
/// `window` of wall time, each with its arrival instant.
fn clocks_at(
    test: &str,
    rtf: f64,
    window: Duration,
) -> HashMap<String, Vec<(Instant, msgs::Clock)>> {
    loopback_only();
    let partition = partition(test);
    let sim = Proc::spawn(sim_command(
        &sdf("fortress/ur3e_world.sdf"),
        &partition,
        &[
            "--msgs-prefix",
            "ignition.msgs.",
            "--real-time-factor",
            &rtf.to_string(),
        ],
    ));
    if let Err(lines) = sim.wait_for_line("running", Duration::from_secs(30)) {
        panic!("gz-joint-sim did not start: {lines:#?}");
    }

    // The real C++ peer decodes it and finds the fields Gazebo fills.
    let echoed = wait_for(
        "ign topic -e to print a clock",
        Duration::from_secs(60),
        || {
            Proc::spawn(ign_topic(
                &partition,
                &["-e", "-t", "/world/ur3e_world/clock", "-n", "1"],
            ))
            .finish(Duration::from_secs(10))
            .1
            .join("\n")
        },
        |out| out.contains("sim {"),
    );
    for field in ["sim {", "real {", "system {"] {
        assert!(echoed.contains(field), "{field} missing:\n{echoed}");
    }
    assert!(
        !echoed.contains("header"),
        "Gazebo's clock has no header:\n{echoed}"
    );

    let node = loopback_node(&partition, MsgsPrefix::Ignition);
    let (tx, rx) = mpsc::channel();
    let mut subs = Vec::new();
    for topic in ["/clock", "/world/ur3e_world/clock"] {
        let tx = tx.clone();
        subs.push(
            node.subscribe(topic, move |c: msgs::Clock, info: &MessageInfo| {
                let _ = tx.send((info.topic.clone(), Instant::now(), c));
            })
            .unwrap(),
        );
    }
    // Both topics flowing first, then the window.
    let mut seen = HashMap::<String, Vec<(Instant, msgs::Clock)>>::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < 2 {
        assert!(
            Instant::now() < deadline,
            "clock topics missing: {:?}",
            seen.keys()
        );
        if let Ok((topic, at, c)) = rx.recv_timeout(Duration::from_secs(5)) {
            seen.entry(topic).or_default().push((at, c));
        }
    }
    seen.clear();
    let end = Instant::now() + window;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if let Ok((topic, at, c)) = rx.recv_timeout(left) {
            seen.entry(topic).or_default().push((at, c));
        }
    }
    drop(subs);
    seen
}

fn check(rtf: f64, seen: &HashMap<String, Vec<(Instant, msgs::Clock)>>) {
    assert_eq!(seen.len(), 2, "{:?}", seen.keys());
    for (topic, list) in seen {
        let (first, last) = (&list[0], list.last().unwrap());
        let sim = secs(last.1.sim) - secs(first.1.sim);
        let real = secs(last.1.real) - secs(first.1.real);
        let system = secs(last.1.system) - secs(first.1.system);
        let wall = (last.0 - first.0).as_secs_f64();
        println!(
            "{topic} at real-time factor {rtf}: {} messages ({:.0}/s of wall time); sim {sim:.3} s over real {real:.3} s = {:.4}; system {system:.3} s; received over {wall:.3} s",
            list.len(),
            list.len() as f64 / wall,
            sim / real
        );
        // The simulator's own fields: sim time runs at rtf × its real time (the step
        // thread keeps an absolute grid; a loaded machine can only make it slower).
        assert!(
            (sim / real - rtf).abs() < 0.1 * rtf,
            "{topic}: sim/real {}",
            sim / real
        );
        assert!(
            (system - real).abs() < 0.05 * real + 0.02,
            "{topic}: system {system} vs real {real}"
        );
        // One message per 2 ms step, in order (a loaded receiver may miss some, none invented).
        for pair in list.windows(2) {
            let step = pair[1].1.sim.unwrap().as_nanos() - pair[0].1.sim.unwrap().as_nanos();
            assert!(
                step > 0 && step % 2_000_000 == 0,
                "{topic}: sim time step {step} ns"
            );
        }
        let expected = rtf * 500.0 * wall;
        assert!(
            (list.len() as f64) > 0.8 * expected && (list.len() as f64) < 1.1 * expected + 10.0,
            "{topic}: {} messages, about {expected:.0} expected",
            list.len()
        );
    }
}

#[test]
fn clock_follows_a_real_time_factor_of_two() {
    check(2.0, &clocks_at("clock2", 2.0, Duration::from_secs(3)));
}

#[test]
fn clock_follows_a_real_time_factor_of_one_half() {
    check(0.5, &clocks_at("clockhalf", 0.5, Duration::from_secs(3)));
}
