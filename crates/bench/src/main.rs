//! `bench-monitor --spec RUN.json --out RESULT.json`: one benchmark run of the bridge, measured
//! from one process on one monotonic clock.
//!
//! It subscribes to each robot's Gazebo joint states and `cmd_pos` commands (gz-transport) and
//! to its `get/joint_states` reports and `set/target_joint_positions` targets (ROS 2) — sending
//! those targets itself for robots the spec says to drive —, and, as a SmartArmStack client
//! does, to its `get/joint_positions_min|max` (depth 1, the latest kept); waits until all of
//! them flow, records for `duration_s`, samples the watched processes' CPU and memory
//! meanwhile, then writes the figures (see the `bench` library) as JSON.
//!
//! Exit codes: 0 with a result written; 1 when the streams never flowed or anything else
//! failed (named on stderr); 2 for a bad command line or spec.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bench::command_line;
use bench::drive;
use bench::exact::{self, Window};
use bench::original;
use bench::procstat::{self, ProcessSampler};
use bench::readers;
use bench::recording::{
    CommandSample, GazeboSample, JointPicker, MonotonicClock, ReportSample, RobotRecording,
    SharedRecording, TargetSample,
};
use bench::spec::{MatchBy, RunSpec};
use bench::stats::round;
use clap::Parser;
use gz_transport::{msgs, NodeOptions};
use parking_lot::Mutex;
use rclrs::{
    Context, CreateBasicExecutor, Executor, InitOptions, IntoPrimitiveOptions, MessageInfo,
    Publisher, SpinOptions,
};
use ros_env::sensor_msgs::msg::rmw::JointState;
use ros_env::std_msgs::msg::rmw::Float64MultiArray;
use ros_env::std_msgs::msg::Float64MultiArray as Float64MultiArrayMessage;
use serde_json::{json, Value};
use tracing_subscriber::EnvFilter;

/// Reports that arrive this long after the end of the window still count for it.
const TAIL: Duration = Duration::from_millis(500);
/// Granularity of the wait for the streams to flow.
const READY_POLL: Duration = Duration::from_millis(50);
/// Depth of the monitor's ROS subscriptions: deep enough that a late executor loses nothing.
const ROS_DEPTH: u32 = 1000;

/// Measures one benchmark run of the Gazebo bridge (see the spec format in bench::spec).
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// The run spec (JSON).
    #[arg(long)]
    spec: PathBuf,
    /// Where to write the result (JSON).
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let (cli, args) = match command_line::parse::<Cli>("bench-monitor") {
        Ok(parsed) => parsed,
        Err(exit) => return exit,
    };
    let spec = match RunSpec::load(&cli.spec) {
        Ok(spec) => spec,
        Err(err) => {
            eprintln!("bench-monitor: {err}");
            return ExitCode::from(2);
        }
    };
    match run(args, &spec, &cli.out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bench-monitor: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>, spec: &RunSpec, out: &std::path::Path) -> anyhow::Result<()> {
    let clock = MonotonicClock::start();
    // The monitor clock's epoch on CLOCK_MONOTONIC, where client processes record their reads.
    let monotonic_epoch_ns = readers::monotonic_now_ns() - clock.now_ns();
    let recordings: Vec<SharedRecording> = spec
        .robots
        .iter()
        .map(|robot| {
            Arc::new(Mutex::new(RobotRecording {
                commands: vec![Vec::new(); robot.joint_names.len()],
                ..RobotRecording::default()
            }))
        })
        .collect();

    let gz = gz_transport::Node::with_options(NodeOptions {
        partition: spec.partition.clone(),
        ..NodeOptions::default()
    })
    .context("cannot start gz-transport")?;
    let mut gz_subscriptions = Vec::new();
    let mut robots_of_topic: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, robot) in spec.robots.iter().enumerate() {
        robots_of_topic
            .entry(robot.joint_states_topic.as_str())
            .or_default()
            .push(index);
    }
    for (topic, robots) in robots_of_topic {
        let pickers: Vec<(JointPicker, SharedRecording)> = robots
            .iter()
            .map(|&i| {
                (
                    JointPicker::new(&spec.robots[i].joint_names),
                    recordings[i].clone(),
                )
            })
            .collect();
        let subscription = gz
            .subscribe(
                topic,
                move |model: msgs::Model, _: &gz_transport::MessageInfo| {
                    let arrival_ns = clock.now_ns();
                    let stamp_ns = model
                        .header
                        .as_ref()
                        .and_then(|header| header.stamp.as_ref())
                        .map(|stamp| stamp.sec * 1_000_000_000 + i64::from(stamp.nsec));
                    for (picker, recording) in &pickers {
                        let positions = picker.pick(model.joint.iter().map(|joint| {
                            let position = joint.axis1.as_ref().map_or(f64::NAN, |a| a.position);
                            (joint.name.as_str(), position)
                        }));
                        recording.lock().gazebo.push(GazeboSample {
                            arrival_ns,
                            stamp_ns,
                            positions,
                        });
                    }
                },
            )
            .with_context(|| format!("cannot subscribe to the Gazebo topic {topic}"))?;
        gz_subscriptions.push(subscription);
    }
    for (robot, recording) in spec.robots.iter().zip(&recordings) {
        if !robot.commands {
            continue;
        }
        for (joint, topic) in robot.command_topics().into_iter().enumerate() {
            let recording = recording.clone();
            let subscription = gz
                .subscribe(
                    &topic,
                    move |command: msgs::Double, _: &gz_transport::MessageInfo| {
                        let arrival_ns = clock.now_ns();
                        recording.lock().commands[joint].push(CommandSample {
                            arrival_ns,
                            value: command.data,
                        });
                    },
                )
                .with_context(|| format!("cannot subscribe to the Gazebo topic {topic}"))?;
            gz_subscriptions.push(subscription);
        }
    }

    let context = Context::new(args, InitOptions::new()).context("cannot initialise ROS")?;
    let mut executor = context.create_basic_executor();
    let node = executor
        .create_node("bench_monitor")
        .context("cannot create the ROS node")?;
    let mut ros_subscriptions = Vec::new();
    let mut target_subscriptions = Vec::new();
    let mut limit_subscriptions = Vec::new();
    // Each robot's topics on an rclrs worker of their own: a worker's callbacks run on the
    // thread that waits for them, one per robot, so the monitor keeps up with 16 robots'
    // 8000 states a second (a node's callbacks all go through one executor thread, which
    // took ~3300 a second here and measured its own backlog as the bridge's lag).
    let mut workers = Vec::new();
    let limits_received: Vec<Arc<AtomicU64>> = spec.robots.iter().map(|_| Arc::default()).collect();
    for ((robot, recording), limits) in spec.robots.iter().zip(&recordings).zip(&limits_received) {
        let worker = node.create_worker(());
        // As the original's RobotDriverClient: depth 1, the latest limits kept.
        for bound in ["min", "max"] {
            let topic = format!("{}/get/joint_positions_{bound}", robot.name);
            let limits = limits.clone();
            limit_subscriptions.push(
                worker
                    .create_subscription::<Float64MultiArray, _>(
                        topic.as_str().keep_last(1).reliable(),
                        move |_: Float64MultiArray| {
                            limits.fetch_add(1, Ordering::Relaxed);
                        },
                    )
                    .with_context(|| format!("cannot subscribe to {topic}"))?,
            );
        }
        let reports = recording.clone();
        ros_subscriptions.push(subscribe_timed(
            &worker,
            &format!("{}/get/joint_states", robot.name),
            clock,
            move |message: JointState, arrival_ns, source_ns| {
                let stamp = &message.header.stamp;
                reports.lock().reports.push(ReportSample {
                    arrival_ns,
                    source_ns,
                    stamp_ns: i64::from(stamp.sec) * 1_000_000_000 + i64::from(stamp.nanosec),
                    positions: message.position.to_vec(),
                });
            },
        )?);
        let targets = recording.clone();
        target_subscriptions.push(subscribe_timed(
            &worker,
            &format!("{}/set/target_joint_positions", robot.name),
            clock,
            move |message: Float64MultiArray, arrival_ns, source_ns| {
                targets.lock().targets.push(TargetSample {
                    arrival_ns,
                    source_ns,
                    values: message.data.to_vec(),
                });
            },
        )?);
        workers.push(worker);
    }

    let floor_reports = Arc::new(AtomicU64::new(0));
    let floor_subscription = spec
        .floor_topic
        .as_deref()
        .map(|topic| {
            let reports = floor_reports.clone();
            let worker = node.create_worker(());
            let subscription = worker.create_subscription::<JointState, _>(
                topic.keep_last(ROS_DEPTH).reliable(),
                move |_: JointState| {
                    reports.fetch_add(1, Ordering::Relaxed);
                },
            );
            workers.push(worker);
            subscription.with_context(|| format!("cannot subscribe to {topic}"))
        })
        .transpose()?;

    let mut driven = Vec::new();
    for (robot, recording) in spec.robots.iter().zip(&recordings) {
        if robot.drive {
            let topic = format!("{}/set/target_joint_positions", robot.name);
            let publisher = node
                .create_publisher::<Float64MultiArrayMessage>(
                    topic.as_str().keep_last(1).reliable(),
                )
                .with_context(|| format!("cannot advertise {topic}"))?;
            driven.push((publisher, recording.clone()));
        }
    }
    let driver = (!driven.is_empty())
        .then(|| Driver::start(driven))
        .transpose()
        .context("cannot start the target thread")?;

    wait_until_flowing(&mut executor, spec, &recordings, &limits_received)?;
    let start_ns = clock.now_ns();
    let sampler = ProcessSampler::start(spec.watch.clone(), clock, Duration::from_secs(1))
        .context("cannot start the /proc sampler")?;
    println!("recording {} s", spec.duration_s);
    let end_ns = start_ns + (spec.duration_s * 1e9) as i64;
    let skip_ns = (spec.skip_s * 1e9) as i64;
    spin_until(&mut executor, clock, start_ns + skip_ns);
    let counted_from = (
        limits_received
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
            .collect::<Vec<_>>(),
        floor_reports.load(Ordering::Relaxed),
    );
    spin_until(&mut executor, clock, end_ns);
    let counted_s = (end_ns - start_ns - skip_ns) as f64 / 1e9;
    let processes = sampler.stop();
    if let Some(driver) = driver {
        driver.stop();
    }
    // Stop recording before taking the recordings.
    drop((
        ros_subscriptions,
        target_subscriptions,
        limit_subscriptions,
        floor_subscription,
        gz_subscriptions,
    ));

    let window = Window {
        start_ns: start_ns + skip_ns,
        end_ns: end_ns - TAIL.as_nanos() as i64,
    };
    let cpu_window = Window {
        start_ns: start_ns + skip_ns,
        end_ns,
    };
    let mut robots = Vec::new();
    let mut states = Vec::new();
    let mut trajectory = Value::Null;
    for (index, (robot, recording)) in spec.robots.iter().zip(&recordings).enumerate() {
        let recording = std::mem::take(&mut *recording.lock());
        let state = match robot.match_by {
            MatchBy::Stamp => {
                exact::state_lag_by_stamp(&recording.gazebo, &recording.reports, window)
            }
            MatchBy::Values => {
                exact::state_lag_by_values(&recording.gazebo, &recording.reports, window)
            }
        };
        let cross_check = (robot.match_by == MatchBy::Stamp)
            .then(|| exact::state_lag_by_values(&recording.gazebo, &recording.reports, window));
        let rows = original::sample_rows(
            &recording.gazebo,
            &recording.reports,
            start_ns,
            spec.duration_s,
        );
        let figure = original::analyse(&rows, spec.duration_s, original::MOTION_PERIOD_S);
        if index == 0 {
            trajectory = trajectory_excerpt(spec, &recording, &rows, start_ns);
        }
        let mut reads = serde_json::Map::new();
        for reader in spec.readers.iter().filter(|r| r.robot == robot.name) {
            let samples = readers::load(&reader.path, monotonic_epoch_ns)?;
            let lag = exact::state_lag_by_stamp(&recording.gazebo, &samples, window);
            reads.insert(reader.label.clone(), json!(lag));
        }
        robots.push(json!({
            "name": robot.name,
            "joint_names": robot.joint_names,
            "state": &state,
            "state_by_values": cross_check,
            "command": robot.commands.then(|| {
                exact::command_lag(&recording.targets, &recording.commands, window)
            }),
            "gazebo_delivery": exact::gazebo_delivery(&recording.gazebo, window),
            "reads": (!reads.is_empty()).then_some(reads),
            "original_method": figure,
            "limits_received": limits_received[index].load(Ordering::Relaxed),
            "limits_rate_hz": round(
                (limits_received[index].load(Ordering::Relaxed) - counted_from.0[index]) as f64
                    / counted_s,
                2,
            ),
            "report_rate_hz": round(
                recording.reports.iter().filter(|r| window.contains(r.arrival_ns)).count() as f64
                    / ((window.end_ns - window.start_ns) as f64 / 1e9),
                1,
            ),
            "recorded": {
                "gazebo": recording.gazebo.len(),
                "reports": recording.reports.len(),
                "targets": recording.targets.len(),
                "commands": recording.commands.iter().map(Vec::len).sum::<usize>(),
            },
        }));
        states.push(state);
    }
    let result = json!({
        "duration_s": spec.duration_s,
        "skip_s": spec.skip_s,
        "window_s": [spec.skip_s, round((window.end_ns - start_ns) as f64 / 1e9, 3)],
        "robots": robots,
        "all_robots": (states.len() > 1).then(|| exact::pool(&states)),
        "processes": processes
            .iter()
            .map(|series| procstat::usage(series, cpu_window, start_ns))
            .collect::<Vec<_>>(),
        "trajectory": trajectory,
        "bridge_floor_rate_hz": spec.floor_topic.as_ref().map(|_| {
            round(
                (floor_reports.load(Ordering::Relaxed) - counted_from.1) as f64 / counted_s,
                1,
            )
        }),
    });
    let text = serde_json::to_string_pretty(&result).context("cannot serialise the result")?;
    std::fs::write(out, text).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

/// Sends the benchmark's sinusoid targets to the robots the monitor drives, each from its
/// first reported positions, every 10 ms on an absolute-deadline grid, on its own thread.
struct Driver {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Driver {
    fn start(
        robots: Vec<(Publisher<Float64MultiArrayMessage>, SharedRecording)>,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("drive".into())
            .spawn(move || {
                let mut starts: Vec<Option<(Vec<f64>, u64)>> = vec![None; robots.len()];
                let mut deadline = std::time::Instant::now();
                let mut step = 0u64;
                while !stopping.load(Ordering::Relaxed) {
                    for ((publisher, recording), start) in robots.iter().zip(&mut starts) {
                        if start.is_none() {
                            let first = recording
                                .lock()
                                .reports
                                .first()
                                .map(|r| r.positions.clone());
                            *start = first.map(|q0| (q0, step));
                        }
                        if let Some((q0, first_step)) = start {
                            let message = Float64MultiArrayMessage {
                                data: drive::target(q0, step - *first_step),
                                ..Default::default()
                            };
                            if let Err(err) = publisher.publish(message) {
                                tracing::warn!("cannot send a target: {err}");
                            }
                        }
                    }
                    step += 1;
                    deadline += drive::PERIOD;
                    std::thread::sleep(
                        deadline.saturating_duration_since(std::time::Instant::now()),
                    );
                }
            })?;
        Ok(Driver { stop, thread })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// Subscribes `worker` to `topic` (depth [`ROS_DEPTH`], reliable), handing `record` each
/// message with its arrival time, taken first, and the DDS source timestamp its publisher gave
/// it, both on the monitor's clock.
fn subscribe_timed<T: rclrs::MessageIDL>(
    worker: &rclrs::Worker<()>,
    topic: &str,
    clock: MonotonicClock,
    mut record: impl FnMut(T, i64, Option<i64>) + Send + 'static,
) -> anyhow::Result<rclrs::WorkerSubscription<T, ()>> {
    worker
        .create_subscription::<T, _>(
            topic.keep_last(ROS_DEPTH).reliable(),
            move |message: T, info: MessageInfo| {
                let arrival_ns = clock.now_ns();
                let source_ns = info.source_timestamp.map(|t| clock.from_wall(t));
                record(message, arrival_ns, source_ns);
            },
        )
        .with_context(|| format!("cannot subscribe to {topic}"))
}

/// Spins until every robot has Gazebo states, reports and targets, or the spec's timeout.
fn wait_until_flowing(
    executor: &mut Executor,
    spec: &RunSpec,
    recordings: &[SharedRecording],
    limits_received: &[Arc<AtomicU64>],
) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs_f64(spec.ready_timeout_s);
    loop {
        let missing: Vec<String> = spec
            .robots
            .iter()
            .zip(recordings)
            .zip(limits_received)
            .flat_map(|((robot, recording), limits)| {
                let recording = recording.lock();
                let mut missing = Vec::new();
                if robot.limits && limits.load(Ordering::Relaxed) < 2 {
                    missing.push(format!(
                        "limits on {}/get/joint_positions_min|max",
                        robot.name
                    ));
                }
                if recording.gazebo.is_empty() {
                    missing.push(format!("Gazebo states on {}", robot.joint_states_topic));
                }
                if recording.reports.is_empty() {
                    missing.push(format!("reports on {}/get/joint_states", robot.name));
                }
                // A robot nobody sends targets to (neither the monitor nor a client) has none.
                if (robot.drive || robot.commands) && recording.targets.is_empty() {
                    missing.push(format!(
                        "targets on {}/set/target_joint_positions",
                        robot.name
                    ));
                }
                missing
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            anyhow::bail!(
                "nothing arrived within {} s of: {}",
                spec.ready_timeout_s,
                missing.join("; ")
            );
        }
        log_errors(executor.spin(SpinOptions::new().timeout(READY_POLL)));
    }
}

/// Spins the ROS executor until the monitor clock reaches `end_ns`.
fn spin_until(executor: &mut Executor, clock: MonotonicClock, end_ns: i64) {
    loop {
        let remaining = end_ns - clock.now_ns();
        if remaining <= 0 {
            return;
        }
        log_errors(
            executor
                .spin(SpinOptions::new().timeout(Duration::from_nanos(remaining.unsigned_abs()))),
        );
    }
}

/// Logs what the executor reported, except the timeout that ends every timed spin.
fn log_errors(errors: Vec<rclrs::RclrsError>) {
    for error in errors.into_iter().filter(|error| !error.is_timeout()) {
        tracing::warn!("ROS executor: {error}");
    }
}

/// Rows of the original's sampling kept for the overview plot: every 5th (10 Hz).
const OVERVIEW_DECIMATION: usize = 5;

/// The first joint of the first robot: full-rate Gazebo and reported positions (degrees) over
/// `trajectory_s` after the warm-up, and every 5th of the original's 20 ms rows over the run.
fn trajectory_excerpt(
    spec: &RunSpec,
    recording: &RobotRecording,
    rows: &[original::Row],
    start_ns: i64,
) -> Value {
    let from = start_ns + (spec.skip_s * 1e9) as i64;
    let to = from + (spec.trajectory_s * 1e9) as i64;
    let seconds = |t_ns: i64| round((t_ns - start_ns) as f64 / 1e9, 6);
    let degrees = |rad: f64| round(rad.to_degrees(), 5);
    let first_joint = |positions: &[f64]| positions.first().copied().unwrap_or(f64::NAN);
    json!({
        "robot": spec.robots[0].name,
        "joint": spec.robots[0].joint_names[0],
        "gazebo": recording.gazebo.iter()
            .filter(|g| (from..to).contains(&g.arrival_ns))
            .map(|g| [seconds(g.arrival_ns), degrees(first_joint(&g.positions))])
            .collect::<Vec<_>>(),
        "reported": recording.reports.iter()
            .filter(|r| (from..to).contains(&r.arrival_ns))
            .map(|r| [seconds(r.arrival_ns), degrees(first_joint(&r.positions))])
            .collect::<Vec<_>>(),
        "original_rows": rows.iter()
            .step_by(OVERVIEW_DECIMATION)
            .filter(|row| !row.gazebo.is_empty() && !row.reported.is_empty())
            .map(|row| [round(row.t_s, 3), degrees(row.gazebo[0]), degrees(row.reported[0])])
            .collect::<Vec<_>>(),
    })
}
