//! `bench-servers`: the benchmark's monitor for the simulator server and the object server
//! (issue 33), on one monotonic clock, writing its figures as JSON.
//!
//! * `bench-servers poses --entity frame_x --entity frame_xd --pose-topic T --out R.json`:
//!   counts Gazebo's pose messages (`Pose_V` on `T`, gz-transport) and every `<entity>/get/pose`
//!   that arrives (ROS 2), samples the watched processes' CPU, RSS and wake-ups from `/proc`
//!   once a second, and with `--set-rate-hz F` sends each entity a new pose on
//!   `<entity>/set/pose` F times a second (a step of 0.1 mm along x, so every pose differs) and
//!   times each one to the first `get/pose` carrying it.
//! * `bench-servers world-control --control /world/W/control --clock /world/W/clock
//!   --ros-prefix /NODE --cycles N --out R.json`: N round trips through the simulator server
//!   (the `start_simulation` Trigger called → the first Gazebo clock message whose sim time
//!   moved, then `stop_simulation` and the clock standing still again), interleaved with N of
//!   the same world-control call made directly over gz-transport (the floor): the Trigger's and
//!   the direct call's response times and the time to the first advanced clock of each.
//!
//! Both wait (up to `--ready-timeout-s`) for what they measure to flow before they start.
//! Exit codes: 0 with a result written, 1 on failure (named on stderr), 2 for a bad command
//! line.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use bench::command_line;
use bench::exact::Window;
use bench::procstat::{self, ProcessSampler};
use bench::recording::MonotonicClock;
use bench::spec::WatchSpec;
use bench::stats::{round, summarize};
use clap::{Parser, Subcommand};
use gz_transport::msgs::{self, Boolean, WorldControl};
use gz_transport::NodeOptions;
use parking_lot::{Condvar, Mutex};
use rclrs::{
    Context, CreateBasicExecutor, Executor, InitOptions, IntoPrimitiveOptions, Node, SpinOptions,
};
use ros_env::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion};
use ros_env::std_srvs::srv::{Trigger, Trigger_Request, Trigger_Response};
use serde_json::{json, Value};

/// Depth of the `get/pose` subscriptions: nothing is lost to a late executor.
const ROS_DEPTH: u32 = 1000;
/// The step of x between two poses sent (every pose differs from the one before).
const SET_STEP_M: f64 = 1e-4;
/// A Gazebo call (or a Trigger) that takes longer than this fails the run.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// Pause between two world-control cycles, so that each starts from a world that has stood
/// still for a while.
const CYCLE_SETTLE: Duration = Duration::from_millis(15);
/// A paused gz-sim iterates (publishes its clock, applies the world-control requests that
/// arrived) every 1 ms: each start is called at a phase of that iteration of its own, spread
/// over it, after the clock message that ends the wait for a still world (a call right after
/// that message would always wait a whole iteration, and hide up to 1 ms of a slower path).
const PAUSED_ITERATION: Duration = Duration::from_millis(1);

/// Monitors of the simulator and object servers' benchmark.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Args)]
struct Common {
    /// gz-transport partition (default: GZ_PARTITION).
    #[arg(long)]
    partition: Option<String>,
    /// A process to sample from /proc: `label=pid` (repeatable).
    #[arg(long = "watch", value_parser = parse_watch)]
    watch: Vec<WatchSpec>,
    /// How long to wait for what is measured to flow.
    #[arg(long, default_value_t = 90.0)]
    ready_timeout_s: f64,
    /// Where to write the result (JSON).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Subcommand)]
enum What {
    /// The object server's poses: Gazebo's pose messages and the get/pose that arrive.
    Poses {
        #[command(flatten)]
        common: Common,
        /// An entity whose `<entity>/get/pose` is counted (repeatable).
        #[arg(long = "entity", required = true)]
        entities: Vec<String>,
        /// Gazebo's pose topic (Pose_V) the server reads.
        #[arg(long)]
        pose_topic: String,
        /// Seconds recorded in all.
        #[arg(long, default_value_t = 45.0)]
        duration_s: f64,
        /// Seconds of warm-up at the start of the recording, not counted.
        #[arg(long, default_value_t = 10.0)]
        skip_s: f64,
        /// New poses sent to each entity per second on `<entity>/set/pose` (0: none).
        #[arg(long, default_value_t = 0.0)]
        set_rate_hz: f64,
    },
    /// World-control round trips through the simulator server and directly (the floor).
    WorldControl {
        #[command(flatten)]
        common: Common,
        /// Gazebo's world control service.
        #[arg(long)]
        control: String,
        /// Gazebo's world clock topic.
        #[arg(long)]
        clock: String,
        /// The simulator server's service prefix (its node name).
        #[arg(long)]
        ros_prefix: String,
        /// Round trips of each path counted (after a few not counted).
        #[arg(long, default_value_t = 100)]
        cycles: usize,
    },
}

fn parse_watch(text: &str) -> Result<WatchSpec, String> {
    let (label, pid) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not label=pid"))?;
    Ok(WatchSpec {
        label: label.to_owned(),
        pid: pid.parse().map_err(|_| format!("{pid:?} is not a pid"))?,
        exclude_threads: Vec::new(),
    })
}

fn main() -> ExitCode {
    let (cli, args) = match command_line::parse::<Cli>("bench-servers") {
        Ok(parsed) => parsed,
        Err(exit) => return exit,
    };
    let (out, result) = match cli.what {
        What::Poses {
            common,
            entities,
            pose_topic,
            duration_s,
            skip_s,
            set_rate_hz,
        } => {
            let out = common.out.clone();
            let result = poses(
                args,
                &common,
                &entities,
                &pose_topic,
                duration_s,
                skip_s,
                set_rate_hz,
            );
            (out, result)
        }
        What::WorldControl {
            common,
            control,
            clock,
            ros_prefix,
            cycles,
        } => {
            let out = common.out.clone();
            let result = world_control(args, &common, &control, &clock, &ros_prefix, cycles);
            (out, result)
        }
    };
    let written = result.and_then(|value| {
        let text = serde_json::to_string_pretty(&value).context("cannot serialise the result")?;
        std::fs::write(&out, text).with_context(|| format!("cannot write {}", out.display()))
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bench-servers: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The processes named on the command line, and this monitor itself (`monitor`, less its
/// /proc sampler): the load generator, which must stay cheaper than what it measures.
fn watched(common: &Common) -> Vec<WatchSpec> {
    let mut watch = common.watch.clone();
    watch.push(WatchSpec {
        label: "monitor".into(),
        pid: std::process::id(),
        exclude_threads: vec!["proc-sampler".into()],
    });
    watch
}

fn gz_node(common: &Common) -> anyhow::Result<gz_transport::Node> {
    gz_transport::Node::with_options(NodeOptions {
        partition: common.partition.clone(),
        ..NodeOptions::default()
    })
    .context("cannot start gz-transport")
}

fn ros(args: Vec<String>) -> anyhow::Result<(Executor, Node)> {
    let context = Context::new(args, InitOptions::new()).context("cannot initialise ROS")?;
    let executor = context.create_basic_executor();
    let node = executor
        .create_node("bench_servers")
        .context("cannot create the ROS node")?;
    Ok((executor, node))
}

/// Spins the executor for `duration` (its timeouts are not errors).
fn spin_for(executor: &mut Executor, duration: Duration) {
    for error in executor.spin(SpinOptions::new().timeout(duration)) {
        if !error.is_timeout() {
            eprintln!("bench-servers: ROS executor: {error}");
        }
    }
}

/// Spins the executor until `missing` finds nothing missing (`None`), failing after
/// `--ready-timeout-s` with what it said was missing the last time.
fn wait_until_ready(
    executor: &mut Executor,
    common: &Common,
    mut missing: impl FnMut() -> anyhow::Result<Option<String>>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs_f64(common.ready_timeout_s);
    loop {
        let Some(what) = missing()? else {
            return Ok(());
        };
        if Instant::now() >= deadline {
            bail!("within {} s: {what}", common.ready_timeout_s);
        }
        spin_for(executor, Duration::from_millis(50));
    }
}

/// Spins the executor until `clock` reaches `end_ns`.
fn spin_until(executor: &mut Executor, clock: MonotonicClock, end_ns: i64) {
    loop {
        let remaining = end_ns - clock.now_ns();
        if remaining <= 0 {
            return;
        }
        spin_for(executor, Duration::from_nanos(remaining.unsigned_abs()));
    }
}

/// What one entity's `get/pose` subscription saw.
#[derive(Default)]
struct EntityRecord {
    /// Arrivals (monitor clock) with the pose's x.
    arrivals: Vec<(i64, f64)>,
    /// Poses sent on set/pose: (sent at, x).
    sent: Vec<(i64, f64)>,
}

#[allow(clippy::too_many_arguments)]
fn poses(
    args: Vec<String>,
    common: &Common,
    entities: &[String],
    pose_topic: &str,
    duration_s: f64,
    skip_s: f64,
    set_rate_hz: f64,
) -> anyhow::Result<Value> {
    let clock = MonotonicClock::start();
    let gz = gz_node(common)?;
    let gazebo_arrivals = Arc::new(Mutex::new(Vec::<i64>::with_capacity(8192)));
    // The entities' first Gazebo poses: where the poses sent start from.
    let first_poses: Arc<Mutex<HashMap<String, msgs::Pose>>> = Arc::default();
    let _gz_subscription = {
        let arrivals = gazebo_arrivals.clone();
        let first_poses = first_poses.clone();
        let names: Vec<String> = entities.to_vec();
        gz.subscribe(
            pose_topic,
            move |poses: msgs::PoseV, _: &gz_transport::MessageInfo| {
                arrivals.lock().push(clock.now_ns());
                let mut first = first_poses.lock();
                if first.len() < names.len() {
                    for pose in &poses.pose {
                        if names.contains(&pose.name) && !first.contains_key(&pose.name) {
                            first.insert(pose.name.clone(), pose.clone());
                        }
                    }
                }
            },
        )
        .with_context(|| format!("cannot subscribe to the Gazebo topic {pose_topic}"))?
    };

    let (mut executor, node) = ros(args)?;
    let records: Vec<Arc<Mutex<EntityRecord>>> = entities.iter().map(|_| Arc::default()).collect();
    let mut subscriptions = Vec::new();
    let mut publishers = Vec::new();
    for (entity, record) in entities.iter().zip(&records) {
        let topic = format!("/{entity}/get/pose");
        let record = record.clone();
        subscriptions.push(
            node.create_subscription::<PoseStamped, _>(
                topic.as_str().keep_last(ROS_DEPTH).reliable(),
                move |message: PoseStamped| {
                    let arrival = clock.now_ns();
                    record
                        .lock()
                        .arrivals
                        .push((arrival, message.pose.position.x));
                },
            )
            .with_context(|| format!("cannot subscribe to {topic}"))?,
        );
        if set_rate_hz > 0.0 {
            let topic = format!("/{entity}/set/pose");
            publishers.push(
                node.create_publisher::<PoseStamped>(topic.as_str().keep_last(10).reliable())
                    .with_context(|| format!("cannot advertise {topic}"))?,
            );
        }
    }

    // Ready: Gazebo's poses flow and every entity has been reported once (the heartbeat).
    wait_until_ready(&mut executor, common, || {
        let gazebo = !gazebo_arrivals.lock().is_empty();
        let missing: Vec<&str> = entities
            .iter()
            .zip(&records)
            .filter(|(_, r)| r.lock().arrivals.is_empty())
            .map(|(e, _)| e.as_str())
            .collect();
        let ready = gazebo && missing.is_empty() && first_poses.lock().len() == entities.len();
        Ok((!ready).then(|| {
            format!(
                "Gazebo's poses {}; no get/pose of: {}",
                if gazebo { "flow" } else { "never arrived" },
                missing.join(", ")
            )
        }))
    })?;

    let start_ns = clock.now_ns();
    let sampler = ProcessSampler::start(watched(common), clock, Duration::from_secs(1))
        .context("cannot start the /proc sampler")?;
    println!("recording {duration_s} s");
    let setter = (set_rate_hz > 0.0)
        .then(|| {
            let starts: Vec<msgs::Pose> = entities
                .iter()
                .map(|e| first_poses.lock()[e].clone())
                .collect();
            Setter::start(
                publishers
                    .drain(..)
                    .zip(starts)
                    .zip(records.clone())
                    .collect(),
                set_rate_hz,
                clock,
            )
        })
        .transpose()
        .context("cannot start the set/pose thread")?;
    let end_ns = start_ns + (duration_s * 1e9) as i64;
    spin_until(&mut executor, clock, end_ns);
    if let Some(setter) = setter {
        setter.stop();
    }
    // Poses sent near the end may still be on their way.
    spin_for(&mut executor, Duration::from_millis(300));
    let processes = sampler.stop();
    drop(subscriptions);
    drop(_gz_subscription);

    let window = Window {
        start_ns: start_ns + (skip_s * 1e9) as i64,
        end_ns,
    };
    let window_s = (window.end_ns - window.start_ns) as f64 / 1e9;
    let gazebo_messages = gazebo_arrivals
        .lock()
        .iter()
        .filter(|&&t| window.contains(t))
        .count();
    let mut per_entity = serde_json::Map::new();
    let mut all_lags = Vec::new();
    let mut total_reports = 0;
    for (entity, record) in entities.iter().zip(&records) {
        let record = record.lock();
        let reports = record
            .arrivals
            .iter()
            .filter(|(t, _)| window.contains(*t))
            .count();
        total_reports += reports;
        let (lags, never) = set_to_get(&record, window);
        let sent = record
            .sent
            .iter()
            .filter(|(t, _)| window.contains(*t))
            .count();
        per_entity.insert(
            entity.clone(),
            json!({
                "get_pose_messages": reports,
                "get_pose_rate_hz": round(reports as f64 / window_s, 2),
                "set_poses_sent": sent,
                "set_poses_never_reported": never,
                "set_to_get": summarize(&lags).map(|mut s| { s.cdf.clear(); s }),
            }),
        );
        all_lags.extend(lags);
    }
    Ok(json!({
        "duration_s": duration_s,
        "skip_s": skip_s,
        "window_s": [skip_s, duration_s],
        "pose_topic": pose_topic,
        "gazebo_messages": gazebo_messages,
        "gazebo_rate_hz": round(gazebo_messages as f64 / window_s, 2),
        "get_pose_rate_hz": round(total_reports as f64 / window_s, 2),
        "set_rate_hz": set_rate_hz,
        "entities": per_entity,
        "set_to_get": summarize(&all_lags),
        "processes": processes
            .iter()
            .map(|series| procstat::usage(series, window, start_ns))
            .collect::<Vec<_>>(),
    }))
}

/// For every pose sent in the window: the time to the first get/pose carrying its x, and how
/// many never arrived (superseded before Gazebo reported them, or lost).
fn set_to_get(record: &EntityRecord, window: Window) -> (Vec<i64>, usize) {
    let mut lags = Vec::new();
    let mut never = 0;
    for &(sent_ns, x) in record.sent.iter().filter(|(t, _)| window.contains(*t)) {
        match record
            .arrivals
            .iter()
            .find(|&&(arrival, seen)| arrival >= sent_ns && (seen - x).abs() < SET_STEP_M / 10.0)
        {
            Some(&(arrival, _)) => lags.push(arrival - sent_ns),
            None => never += 1,
        }
    }
    (lags, never)
}

type SetTarget = (
    (rclrs::Publisher<PoseStamped>, msgs::Pose),
    Arc<Mutex<EntityRecord>>,
);

/// Sends each entity a new pose `rate_hz` times a second on an absolute-deadline grid, from
/// its own thread: x steps by 0.1 mm from the entity's first pose, back and forth over 10 cm.
struct Setter {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Setter {
    fn start(
        targets: Vec<SetTarget>,
        rate_hz: f64,
        clock: MonotonicClock,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let period = Duration::from_secs_f64(1.0 / rate_hz);
        let thread = std::thread::Builder::new()
            .name("set-pose".into())
            .spawn(move || {
                let mut deadline = Instant::now();
                let mut step: u64 = 0;
                while !stopping.load(Ordering::Relaxed) {
                    step += 1;
                    // A triangle over 1000 steps: every pose differs from its neighbours.
                    let k = step % 2000;
                    let offset = SET_STEP_M * (if k <= 1000 { k } else { 2000 - k }) as f64;
                    for ((publisher, start), record) in &targets {
                        let position = start.position.clone().unwrap_or_default();
                        let orientation = start.orientation.clone().unwrap_or(msgs::Quaternion {
                            w: 1.0,
                            ..Default::default()
                        });
                        let x = position.x + offset;
                        let message = PoseStamped {
                            pose: Pose {
                                position: Point {
                                    x,
                                    y: position.y,
                                    z: position.z,
                                },
                                orientation: Quaternion {
                                    x: orientation.x,
                                    y: orientation.y,
                                    z: orientation.z,
                                    w: orientation.w,
                                },
                            },
                            ..Default::default()
                        };
                        let sent = clock.now_ns();
                        match publisher.publish(message) {
                            Ok(()) => record.lock().sent.push((sent, x)),
                            Err(err) => eprintln!("bench-servers: cannot send a pose: {err}"),
                        }
                    }
                    deadline += period;
                    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                }
            })?;
        Ok(Setter { stop, thread })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// The world clock as the monitor sees it: the latest sim time, and, once armed with a sim
/// time, when the first message past it arrived (stamped in the receive callback, so that no
/// message is missed between two looks).
#[derive(Default)]
struct ClockWatch {
    latest: Option<(i64, i64)>, // (arrival, sim ns)
    messages: u64,
    armed_at: Option<i64>,
    advanced: Option<i64>,
    /// The last sim times, to tell when the clock stands still.
    recent: VecDeque<i64>,
    /// Someone waits for the clock to stand still.
    want_still: bool,
}

impl ClockWatch {
    fn still(&self) -> bool {
        self.recent.len() >= 5 && self.recent.iter().all(|&s| s == self.recent[0])
    }
}

struct SharedClock {
    state: Mutex<ClockWatch>,
    changed: Condvar,
}

impl SharedClock {
    /// Arms the watch with the current sim time; the sim time it armed with.
    fn arm(&self) -> i64 {
        let mut state = self.state.lock();
        let sim = state.latest.map_or(0, |(_, sim)| sim);
        state.armed_at = Some(sim);
        state.advanced = None;
        sim
    }

    /// When the first clock message past the armed sim time arrived, waiting up to `timeout`.
    fn wait_advanced(&self, timeout: Duration) -> Option<i64> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock();
        loop {
            if let Some(t) = state.advanced {
                state.armed_at = None;
                return Some(t);
            }
            if self.changed.wait_until(&mut state, deadline).timed_out() {
                state.armed_at = None;
                return state.advanced;
            }
        }
    }

    /// Waits until the last 5 clock messages carried the same sim time (a paused world).
    fn wait_still(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock();
        state.recent.clear();
        state.want_still = true;
        let still = loop {
            if state.still() {
                break true;
            }
            if self.changed.wait_until(&mut state, deadline).timed_out() {
                break state.still();
            }
        };
        state.want_still = false;
        still
    }
}

/// One path's round trips.
#[derive(Default)]
struct Trips {
    response_ns: Vec<i64>,
    advanced_ns: Vec<i64>,
    stop_response_ns: Vec<i64>,
    failures: Vec<String>,
}

impl Trips {
    fn json(&self) -> Value {
        json!({
            "cycles": self.response_ns.len(),
            "response": summarize(&self.response_ns),
            "first_advanced_clock": summarize(&self.advanced_ns),
            "stop_response": summarize(&self.stop_response_ns).map(|mut s| { s.cdf.clear(); s }),
            "failures": self.failures,
        })
    }
}

fn world_control(
    args: Vec<String>,
    common: &Common,
    control: &str,
    clock_topic: &str,
    ros_prefix: &str,
    cycles: usize,
) -> anyhow::Result<Value> {
    let clock = MonotonicClock::start();
    let gz = gz_node(common)?;
    let shared = Arc::new(SharedClock {
        state: Mutex::default(),
        changed: Condvar::new(),
    });
    let clock_messages = Arc::new(AtomicU64::new(0));
    let _clock_subscription = {
        let shared = shared.clone();
        let messages = clock_messages.clone();
        gz.subscribe(
            clock_topic,
            move |message: msgs::Clock, _: &gz_transport::MessageInfo| {
                let arrival = clock.now_ns();
                let sim = message
                    .sim
                    .map_or(0, |t| t.sec * 1_000_000_000 + i64::from(t.nsec));
                messages.fetch_add(1, Ordering::Relaxed);
                let mut state = shared.state.lock();
                state.latest = Some((arrival, sim));
                state.messages += 1;
                if state.recent.len() >= 5 {
                    state.recent.pop_front();
                }
                state.recent.push_back(sim);
                // The waiting thread is woken only when what it waits for happened (not for
                // each of the ~1000 messages a second: the monitor stays cheap).
                let mut wake = state.want_still && state.still();
                if let Some(armed) = state.armed_at {
                    if sim > armed && state.advanced.is_none() {
                        state.advanced = Some(arrival);
                        wake = true;
                    }
                }
                drop(state);
                if wake {
                    shared.changed.notify_all();
                }
            },
        )
        .with_context(|| format!("cannot subscribe to the Gazebo topic {clock_topic}"))?
    };

    let (mut executor, node) = ros(args)?;
    let start_name = format!("{ros_prefix}/start_simulation");
    let stop_name = format!("{ros_prefix}/stop_simulation");
    let start_client = node
        .create_client::<Trigger>(start_name.as_str())
        .with_context(|| format!("cannot create a client of {start_name}"))?;
    let stop_client = node
        .create_client::<Trigger>(stop_name.as_str())
        .with_context(|| format!("cannot create a client of {stop_name}"))?;

    wait_until_ready(&mut executor, common, || {
        let ready = start_client.service_is_ready()? && stop_client.service_is_ready()?;
        let clock_flows = shared.state.lock().latest.is_some();
        if ready && clock_flows && gz.wait_for_service(control, Duration::from_millis(10))? {
            return Ok(None);
        }
        Ok(Some(format!(
            "the Triggers {}, Gazebo's clock {}, its world control {}",
            if ready { "ready" } else { "not ready" },
            if clock_flows {
                "flows"
            } else {
                "never arrived"
            },
            control
        )))
    })?;

    let trigger = |executor: &mut Executor,
                   client: &rclrs::Client<Trigger>|
     -> anyhow::Result<(i64, Trigger_Response)> {
        let response = Arc::new(Mutex::new(None));
        let slot = response.clone();
        let called = clock.now_ns();
        let promise =
            client.call_then(Trigger_Request::default(), move |r: Trigger_Response| {
                *slot.lock() = Some((clock.now_ns(), r));
            })?;
        for error in executor.spin(
            SpinOptions::default()
                .until_promise_resolved(promise)
                .timeout(CALL_TIMEOUT),
        ) {
            if !error.is_timeout() {
                bail!("ROS executor: {error}");
            }
        }
        let answered = response.lock().take();
        match answered {
            Some((at, r)) => Ok((at - called, r)),
            None => bail!("no answer within {CALL_TIMEOUT:?}"),
        }
    };
    let direct = |pause: bool| -> anyhow::Result<(i64, bool)> {
        let called = clock.now_ns();
        let answer: Boolean = gz.request(
            control,
            &WorldControl {
                pause,
                ..Default::default()
            },
            CALL_TIMEOUT,
        )?;
        Ok((clock.now_ns() - called, answer.data))
    };

    // One cycle of one path: start, the first advanced clock, stop, the clock still again.
    let cycle = |executor: &mut Executor,
                 ros_path: bool,
                 phase: Duration,
                 trips: &mut Trips|
     -> anyhow::Result<()> {
        if !shared.wait_still(CALL_TIMEOUT) {
            bail!("the world does not stand still before a start");
        }
        std::thread::sleep(phase);
        shared.arm();
        let called = clock.now_ns();
        let (response, ok, why) = if ros_path {
            let (took, r) = trigger(executor, &start_client)?;
            (took, r.success, r.message)
        } else {
            let (took, ok) = direct(false)?;
            (took, ok, String::new())
        };
        let advanced = shared.wait_advanced(CALL_TIMEOUT);
        let stop = if ros_path {
            let (took, r) = trigger(executor, &stop_client)?;
            (took, r.success)
        } else {
            direct(true)?
        };
        if !ok || !stop.1 {
            trips
                .failures
                .push(format!("start {ok} ({why}), stop {}", stop.1));
            return Ok(());
        }
        let Some(advanced) = advanced else {
            trips
                .failures
                .push(format!("no advanced clock within {CALL_TIMEOUT:?}"));
            return Ok(());
        };
        trips.response_ns.push(response);
        trips.advanced_ns.push(advanced - called);
        trips.stop_response_ns.push(stop.0);
        Ok(())
    };

    // Both paths warmed up (discovery, first connections), not counted.
    let mut warm_up = Trips::default();
    for k in 0..6 {
        cycle(&mut executor, k % 2 == 0, Duration::ZERO, &mut warm_up)?;
    }
    let start_ns = clock.now_ns();
    let sampler = ProcessSampler::start(watched(common), clock, Duration::from_secs(1))
        .context("cannot start the /proc sampler")?;
    println!("recording {cycles} cycles of each path");
    let clock_before = clock_messages.load(Ordering::Relaxed);
    let mut ros_trips = Trips::default();
    let mut gz_trips = Trips::default();
    for k in 0..cycles * 2 {
        // Alternate which path goes first in each pair, so neither always follows the other.
        let ros_path = (k % 2 == 0) != (k / 2 % 2 == 0);
        let trips = if ros_path {
            &mut ros_trips
        } else {
            &mut gz_trips
        };
        // Both paths of a pair at the same phase; the pairs' phases spread evenly over the
        // paused iteration (the golden-ratio sequence).
        let phase = PAUSED_ITERATION.mul_f64((k / 2) as f64 * 0.618_033_988_75 % 1.0);
        cycle(&mut executor, ros_path, phase, trips)?;
        spin_for(&mut executor, CYCLE_SETTLE);
    }
    let end_ns = clock.now_ns();
    let processes = sampler.stop();
    let seconds = (end_ns - start_ns) as f64 / 1e9;
    let window = Window { start_ns, end_ns };
    let ratio = |a: &Trips, b: &Trips, pick: fn(&Trips) -> &Vec<i64>, q: f64| {
        let sorted = |v: &Vec<i64>| {
            let mut v: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (x, y) = (sorted(pick(a)), sorted(pick(b)));
        (!x.is_empty() && !y.is_empty()).then(|| {
            round(
                bench::stats::quantile(&x, q) / bench::stats::quantile(&y, q),
                3,
            )
        })
    };
    Ok(json!({
        "cycles": cycles,
        "duration_s": round(seconds, 3),
        "control": control,
        "clock_topic": clock_topic,
        "clock_rate_hz": round(
            (clock_messages.load(Ordering::Relaxed) - clock_before) as f64 / seconds,
            1,
        ),
        "ros": ros_trips.json(),
        "floor": gz_trips.json(),
        "ratio_to_floor": {
            "first_advanced_clock_p50": ratio(&ros_trips, &gz_trips, |t| &t.advanced_ns, 0.5),
            "first_advanced_clock_p99": ratio(&ros_trips, &gz_trips, |t| &t.advanced_ns, 0.99),
            "response_p50": ratio(&ros_trips, &gz_trips, |t| &t.response_ns, 0.5),
            "response_p99": ratio(&ros_trips, &gz_trips, |t| &t.response_ns, 0.99),
        },
        "processes": processes
            .iter()
            .map(|series| procstat::usage(series, window, start_ns))
            .collect::<Vec<_>>(),
    }))
}
