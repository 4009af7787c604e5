//! `gz-joint-sim WORLD.sdf`: runs an SDF world's joints over gz-transport, in place of
//! `gz sim -s -r WORLD.sdf`, until Ctrl-C or SIGTERM.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use gz_joint_sim::{
    EffortReport, JointStateTopicNaming, ResetBehaviour, SimOptions, Timing, World,
    DEFAULT_POSE_RATE,
};
use gz_transport::MsgsPrefix;
use tracing_subscriber::EnvFilter;

/// A Gazebo stand-in: runs the world's JointPositionController, JointController,
/// ApplyJointForce and JointStatePublisher systems over gz-transport, with the world's
/// control and set_pose services and its pose/info topic. Includes and model:// URIs
/// resolve through GZ_SIM_RESOURCE_PATH and the world's folder.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The SDF world to run.
    world: PathBuf,
    /// Message type prefix on the wire: gz.msgs. (Gazebo Harmonic) or ignition.msgs. (Fortress).
    #[arg(long, default_value = "gz.msgs.")]
    msgs_prefix: MsgsPrefix,
    /// Real-time factor; overrides the world's <real_time_factor>.
    #[arg(long)]
    real_time_factor: Option<f64>,
    /// gz-transport partition; default: GZ_PARTITION, else IGN_PARTITION, else hostname:user.
    #[arg(long)]
    partition: Option<String>,
    /// Effort reported in the joint states: zero (as Gazebo, which never fills it, even for
    /// force-commanded joints), force-commanded (the applied force of joints under a force
    /// command, 0 for the others) or servo (what the actuator applied, every joint).
    // The docs of the choice options name their values; clap's own list would repeat them
    // with the variants' Rust docs.
    #[arg(long, default_value = "zero", hide_possible_values = true)]
    report_effort: EffortReport,
    /// JointStatePublisher topic naming: scoped (gz-sim >= 6.8, Harmonic: the whole chain
    /// of nested models) or fortress-pre-6.8 (Ignition Gazebo 6.0-6.7:
    /// /world/<parent>/model/<model>/joint_state).
    #[arg(long, default_value = "scoped", hide_possible_values = true)]
    joint_state_topic_naming: JointStateTopicNaming,
    /// Start paused, as `gz sim` without -r: sim time stands at 0 until a world-control
    /// request (e.g. `pause: false`) on /world/<world>/control.
    #[arg(long)]
    paused: bool,
    /// What a world reset (reset { all } or { time_only }) puts back: harmonic (gz-sim 7
    /// and later: the clock, joints, controllers and model poses) or fortress (Ignition
    /// Gazebo 6: the clock only).
    #[arg(long, default_value = "harmonic", hide_possible_values = true)]
    reset_behaviour: ResetBehaviour,
    /// Messages per second on /world/<world>/pose/info (the models' world poses, Pose_V);
    /// default that of gz-sim's SceneBroadcaster.
    #[arg(long, default_value_t = DEFAULT_POSE_RATE)]
    pose_rate: f64,
    /// Seconds between status lines.
    #[arg(long, default_value_t = 5.0)]
    status_interval: f64,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gz-joint-sim: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    if !(args.status_interval.is_finite() && args.status_interval > 0.0) {
        anyhow::bail!(
            "--status-interval must be a positive number of seconds, got {}",
            args.status_interval
        );
    }
    let world = World::load(&args.world).context("cannot load the world")?;
    let (stop_tx, stop_rx) = mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = stop_tx.send(());
    })
    .context("cannot install the Ctrl-C/SIGTERM handler")?;

    let sim = world
        .start(SimOptions {
            msgs_prefix: args.msgs_prefix,
            partition: args.partition,
            real_time_factor: args.real_time_factor,
            report_effort: args.report_effort,
            joint_state_topic_naming: args.joint_state_topic_naming,
            paused: args.paused,
            reset_behaviour: args.reset_behaviour,
            pose_rate: Some(args.pose_rate),
        })
        .context("cannot start the world")?;
    for p in &world.state_publishers {
        tracing::info!(
            "joint states ({}, {} joints) on {}",
            args.msgs_prefix.type_name("Model"),
            p.joints.len(),
            p.topic_for(args.joint_state_topic_naming)
        );
    }
    let double = args.msgs_prefix.type_name("Double");
    for c in &world.position_controllers {
        tracing::info!(
            "position commands ({double}) for {} on {}",
            c.joint_names.join(", "),
            c.topic
        );
    }
    for c in &world.joint_controllers {
        tracing::info!(
            "velocity commands ({double}) for {} on {}{}",
            c.joint_names.join(", "),
            c.topic,
            if c.force_mode.is_some() {
                " (force mode)"
            } else {
                ""
            }
        );
    }
    for a in &world.force_appliers {
        tracing::info!(
            "force commands ({double}) for {} on {}",
            a.joint_name,
            a.topic
        );
    }
    tracing::info!(
        "world control on /world/{w}/control, poses set on /world/{w}/set_pose, model poses ({}) at {} Hz on /world/{w}/pose/info",
        args.msgs_prefix.type_name("Pose_V"),
        args.pose_rate,
        w = world.name
    );
    let target = sim.target_real_time_factor();
    let interval = Duration::from_secs_f64(args.status_interval);
    // Ctrl-C/SIGTERM sends on the channel; until then, a status line per interval.
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop_rx.recv_timeout(interval) {
        let paused = if sim.paused() { "paused | " } else { "" };
        tracing::info!("{paused}{}", status_line(&sim.take_timing(), target));
    }
    let last = sim.take_timing();
    sim.stop();
    tracing::info!("stopped at sim time {:.3} s", last.sim_time.as_secs_f64());
    Ok(())
}

fn status_line(t: &Timing, target: f64) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "sim time {:.3} s | real-time factor {:.4} (target {target}) | step lateness mean {:.3} ms, p99 {:.3} ms, max {:.3} ms | {} steps{}",
        t.sim_time.as_secs_f64(),
        t.real_time_factor,
        ms(t.lateness_mean),
        ms(t.lateness_p99),
        ms(t.lateness_max),
        t.steps,
        if t.resyncs > 0 { format!(" | fell behind {} times", t.resyncs) } else { String::new() }
    )
}
