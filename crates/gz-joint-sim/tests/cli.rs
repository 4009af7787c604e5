//! The `gz-joint-sim` binary: clear errors and a non-zero exit on bad worlds and on unknown
//! option values; a clean exit 0 on SIGTERM/SIGINT; includes found through
//! `GZ_SIM_RESOURCE_PATH`.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::*;

struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str, files: &[(&str, &str)]) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("gz-joint-sim-cli-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_to_exit(command: Command) -> (i32, String) {
    let mut p = Proc::spawn(command);
    let (status, lines) = p.finish(Duration::from_secs(30));
    let status = status.expect("gz-joint-sim did not exit on a bad world");
    (status.code().unwrap_or(-1), lines.join("\n"))
}

#[test]
fn bad_worlds_exit_non_zero_with_file_and_element() {
    loopback_only();
    let arm = r#"<sdf version="1.9"><model name="arm"><link name="a"/><link name="b"/>
      <joint name="j" type="revolute"><parent>a</parent><child>b</child></joint></model></sdf>"#;
    let unknown_joint = r#"<sdf version="1.9"><world name="w"><model name="m">
      <include><uri>arm.sdf</uri>
        <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
          <joint_name>elbow</joint_name>
        </plugin>
      </include></model></world></sdf>"#;
    let missing_include = r#"<sdf version="1.9"><world name="w"><model name="m">
      <include><uri>model://nowhere</uri></include></model></world></sdf>"#;
    let dir = Scratch::new(
        "bad",
        &[
            ("arm.sdf", arm),
            ("unknown_joint.sdf", unknown_joint),
            ("missing_include.sdf", missing_include),
            ("broken.sdf", "<sdf><world"),
        ],
    );
    let cases = [
        (
            "unknown_joint.sdf",
            vec![
                "unknown_joint.sdf:3:",
                "plugin[@name='gz::sim::systems::JointPositionController']",
                "\"elbow\"",
            ],
        ),
        (
            "missing_include.sdf",
            vec!["missing_include.sdf:2:", "include/uri", "model://nowhere"],
        ),
        ("broken.sdf", vec!["broken.sdf", "not well-formed XML"]),
        ("absent.sdf", vec!["absent.sdf", "cannot read"]),
    ];
    for (file, needles) in cases {
        let (code, out) = run_to_exit(sim_command(&dir.0.join(file), &partition("bad"), &[]));
        println!("{file}: exit {code}\n{out}");
        assert_ne!(code, 0, "{file}: exit code");
        assert!(
            out.contains("gz-joint-sim: error: cannot load the world"),
            "{file}: {out}"
        );
        for n in needles {
            assert!(out.contains(n), "{file}: output lacks {n:?}:\n{out}");
        }
    }
    let (code, out) = run_to_exit(sim_command(
        &sdf("ur3e_world.sdf"),
        &partition("bad"),
        &["--real-time-factor", "0"],
    ));
    assert_ne!(code, 0);
    assert!(
        out.contains("real-time factor must be a positive number"),
        "{out}"
    );
}

#[test]
fn sigterm_and_sigint_stop_cleanly_with_exit_zero() {
    loopback_only();
    for signal in ["-TERM", "-INT"] {
        let mut sim = Proc::spawn(sim_command(
            &sdf("ur3e_world.sdf"),
            &partition("signal"),
            &["--status-interval", "0.2"],
        ));
        // Running and stepping: a status line has been printed.
        if let Err(lines) = sim.wait_for_line("sim time", Duration::from_secs(30)) {
            panic!("no status line: {lines:#?}");
        }
        let killed = Command::new("kill")
            .args([signal, &sim.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let (status, lines) = sim.finish(Duration::from_secs(10));
        let status = status.unwrap_or_else(|| panic!("gz-joint-sim ignored SIG{}", &signal[1..]));
        assert_eq!(status.code(), Some(0), "{signal}: {lines:#?}");
        assert!(
            lines.iter().any(|l| l.contains("stopped at sim time")),
            "{lines:#?}"
        );
    }
}

#[test]
fn model_uris_resolve_through_gz_sim_resource_path() {
    loopback_only();
    let world = r#"<sdf version="1.9"><world name="elsewhere"><model name="arm">
      <include><uri>model://ur3e_position_controller.sdf</uri></include></model></world></sdf>"#;
    let dir = Scratch::new("resource-path", &[("w.sdf", world)]);
    let (code, out) = run_to_exit(sim_command(
        &dir.0.join("w.sdf"),
        &partition("respath"),
        &[],
    ));
    assert_ne!(
        code, 0,
        "without GZ_SIM_RESOURCE_PATH the include is not found"
    );
    assert!(
        out.contains("model://ur3e_position_controller.sdf"),
        "{out}"
    );

    let mut with_path = sim_command(&dir.0.join("w.sdf"), &partition("respath"), &[]);
    with_path.env(
        "GZ_SIM_RESOURCE_PATH",
        format!("/nonexistent:{}", sdf("").display()),
    );
    let sim = Proc::spawn(with_path);
    match sim.wait_for_line("joint states", Duration::from_secs(30)) {
        Ok(line) => assert!(
            line.contains(
                "/world/elsewhere/model/arm/model/ur3e_position_controller/model/ur3e/joint_state"
            ),
            "{line}"
        ),
        Err(lines) => panic!("did not start: {lines:#?}"),
    }
}

#[test]
fn the_velocity_and_effort_worlds_start_and_log_their_command_topics() {
    loopback_only();
    for (world, kind, suffix) in [
        ("ur3e_velocity_world.sdf", "velocity commands", "cmd_vel"),
        ("ur3e_effort_world.sdf", "force commands", "cmd_force"),
    ] {
        for (spelling, prefix) in [
            (world.to_owned(), "gz.msgs."),
            (format!("fortress/{world}"), "ignition.msgs."),
        ] {
            let sim = Proc::spawn(sim_command(
                &sdf(&spelling),
                &partition("newworlds"),
                &["--msgs-prefix", prefix],
            ));
            // "running" comes first, then the topics in joint order.
            if let Err(lines) = sim.wait_for_line("running", Duration::from_secs(30)) {
                panic!("{spelling} did not start: {lines:#?}");
            }
            for joint in UR3E_JOINTS {
                let topic = format!("/model/ur3e/joint/{joint}/{suffix}");
                match sim.wait_for_line(&topic, Duration::from_secs(30)) {
                    Ok(line) => {
                        assert!(line.contains(kind), "{spelling}: {line}");
                        assert!(line.contains(&format!("{prefix}Double")), "{line}");
                    }
                    Err(lines) => panic!("{spelling}: {topic} not logged: {lines:#?}"),
                }
            }
        }
    }
}

#[test]
fn a_pose_rate_that_is_not_positive_is_refused_by_name() {
    loopback_only();
    for rate in ["0", "-5", "NaN"] {
        let (code, out) = run_to_exit(sim_command(
            &sdf("ur3e_world.sdf"),
            &partition("pose-rate"),
            &[&format!("--pose-rate={rate}")],
        ));
        assert_ne!(code, 0, "--pose-rate {rate}: {out}");
        assert!(
            out.contains("pose rate must be a positive number"),
            "--pose-rate {rate}: {out}"
        );
    }
}

#[test]
fn the_choice_options_take_the_documented_spellings_and_refuse_others_by_name() {
    loopback_only();
    // A missing world: a spelling the options take gets as far as loading it (exit 1);
    // one they refuse stops at the command line (clap's exit 2), listing the choices.
    let missing = sdf("no_such_world.sdf");
    let cases: &[(&str, &str, Result<(), &str>)] = &[
        ("--report-effort", "zero", Ok(())),
        ("--report-effort", "force-commanded", Ok(())),
        ("--report-effort", "servo", Ok(())),
        (
            "--report-effort",
            "Zero",
            Err("zero, force-commanded, servo"),
        ),
        ("--joint-state-topic-naming", "scoped", Ok(())),
        ("--joint-state-topic-naming", "fortress-pre-6.8", Ok(())),
        (
            "--joint-state-topic-naming",
            "fortress",
            Err("scoped, fortress-pre-6.8"),
        ),
        ("--reset-behaviour", "harmonic", Ok(())),
        ("--reset-behaviour", "fortress", Ok(())),
        ("--reset-behaviour", "gazebo", Err("harmonic, fortress")),
    ];
    for (option, value, outcome) in cases {
        let (code, out) = run_to_exit(sim_command(
            &missing,
            &partition("choices"),
            &[option, value],
        ));
        match outcome {
            Ok(()) => {
                assert_eq!(code, 1, "{option} {value}: {out}");
                assert!(
                    out.contains("cannot load the world"),
                    "{option} {value}: {out}"
                );
            }
            Err(choices) => {
                assert_eq!(code, 2, "{option} {value}: {out}");
                assert!(
                    out.contains(&format!("invalid value '{value}' for '{option}"))
                        && out.contains(&format!("[possible values: {choices}]")),
                    "{option} {value}: {out}"
                );
            }
        }
    }
}
