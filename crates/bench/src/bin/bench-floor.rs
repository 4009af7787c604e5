//! `bench-floor`: the processes the benchmark runs beside a bridge to give its CPU a scale, and
//! the load of the loaded-machine scenario.
//!
//! * `bench-floor timer --hz 500`: one thread waking at Gazebo's publish rate on an absolute
//!   deadline (`clock_nanosleep`) and doing nothing: the cost of one wake-up per message on
//!   this machine (the timer floor). With `--report`, it also prints once a second how many of
//!   its wake-ups so far came later than one period (`--priority P`: under SCHED_FIFO P): how
//!   late the machine itself wakes a thread that does nothing, beside a bridge's overruns.
//! * `bench-floor transport --topic T`: a gz-transport node (ours) subscribed to the topic the
//!   bridge reads, doing nothing with the messages: the cost of receiving them (the transport
//!   floor). With `--pose-v`, the topic is the world's poses (`Pose_V`, the object server's
//!   input) instead of joint states.
//! * `bench-floor bridge --topic T --ros-topic R`: the least any bridge on these two
//!   middlewares does: it receives the topic the bridge reads (our gz-transport) and publishes
//!   each message at once as a `sensor_msgs/JointState` on `R` (rclrs, the bridge's QoS and
//!   Fast DDS settings), from the receive thread, nothing else: no targets, limits, checks or
//!   diagnostics (the bridge floor; the monitor subscribes to `R`). With several `--topic`/
//!   `--ros-topic` pairs, one process bridges several robots that way (`robots_16_floor`).
//! * `bench-floor busy --threads 2`: threads spinning at normal priority (other work of a
//!   user on the machine).
//!
//! Each runs until SIGINT/SIGTERM.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use gz_transport::{msgs, NodeOptions};

#[derive(Parser)]
#[command(version, about = "Floors and load for the bridge benchmark")]
struct Cli {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// A thread waking at `hz` and doing nothing.
    Timer {
        #[arg(long, default_value_t = 500.0)]
        hz: f64,
        /// Print the late wake-ups so far once a second.
        #[arg(long)]
        report: bool,
        /// SCHED_FIFO priority (1-99) for the thread; 0: normal scheduling.
        #[arg(long, default_value_t = 0)]
        priority: i32,
    },
    /// A gz-transport subscriber to `topic` doing nothing with its messages.
    Transport {
        #[arg(long)]
        topic: String,
        /// The topic carries `Pose_V` (the world's poses) instead of `Model` (joint states).
        #[arg(long)]
        pose_v: bool,
    },
    /// A gz-transport subscriber to each `topic` republishing each message on the ROS topic
    /// of the same place in `ros_topic`.
    Bridge {
        #[arg(long, required = true)]
        topic: Vec<String>,
        #[arg(long, required = true)]
        ros_topic: Vec<String>,
    },
    /// Threads spinning on the CPU.
    Busy {
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))?;
    }
    match cli.what {
        What::Timer {
            hz,
            report,
            priority,
        } => {
            if priority > 0 {
                let param = libc::sched_param {
                    sched_priority: priority,
                };
                // SAFETY: pthread_self() is this thread; `param` is valid.
                let status = unsafe {
                    libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param)
                };
                anyhow::ensure!(
                    status == 0,
                    "SCHED_FIFO {priority} refused: {}",
                    std::io::Error::from_raw_os_error(status)
                );
            }
            timer(hz, report, &stop)
        }
        What::Transport { topic, pose_v } => {
            let node = gz_transport::Node::with_options(NodeOptions::default())?;
            let _subscription = if pose_v {
                node.subscribe(&topic, |_: msgs::PoseV, _: &gz_transport::MessageInfo| {})?
            } else {
                node.subscribe(&topic, |_: msgs::Model, _: &gz_transport::MessageInfo| {})?
            };
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        What::Bridge { topic, ros_topic } => {
            anyhow::ensure!(
                topic.len() == ros_topic.len(),
                "{} --topic but {} --ros-topic: give one ROS topic per Gazebo topic",
                topic.len(),
                ros_topic.len()
            );
            bridge(topic.iter().zip(&ros_topic), &stop)?
        }
        What::Busy { threads } => {
            let spinners: Vec<_> = (0..threads)
                .map(|_| {
                    let stop = stop.clone();
                    std::thread::spawn(move || {
                        let mut x = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            x = std::hint::black_box(x.wrapping_mul(6364136223846793005) + 1);
                        }
                    })
                })
                .collect();
            for spinner in spinners {
                let _ = spinner.join();
            }
        }
    }
    Ok(())
}

/// The bridge floor: each Gazebo `Model` on a `(topic, ros_topic)` pair's `topic` published as
/// a `JointState` on its `ros_topic` from the receive thread, until `stop`.
fn bridge<'a>(
    pairs: impl Iterator<Item = (&'a String, &'a String)>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    use rclrs::{Context, CreateBasicExecutor, InitOptions};

    let dds_profile = bridge_node::DdsProfile::apply();
    let context = Context::new(std::env::args(), InitOptions::new())?;
    let executor = context.create_basic_executor();
    let node = executor.create_node("bench_floor_bridge")?;
    drop(dds_profile);
    let gz = gz_transport::Node::with_options(NodeOptions::default())?;
    let mut subscriptions = Vec::new();
    for (topic, ros_topic) in pairs {
        subscriptions.push(republish(&node, &gz, topic, ros_topic)?);
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Subscribes to `topic` on `gz`, publishing each message on `ros_topic` of `node`.
fn republish(
    node: &rclrs::Node,
    gz: &gz_transport::Node,
    topic: &str,
    ros_topic: &str,
) -> anyhow::Result<gz_transport::Subscription> {
    use rclrs::IntoPrimitiveOptions;
    use ros_env::sensor_msgs::msg::rmw::JointState;

    let publisher =
        node.create_publisher::<JointState>(ros_topic.keep_last(1).reliable().volatile())?;
    let mut message = JointState::default();
    let subscription = gz.subscribe(
        topic,
        move |model: msgs::Model, _: &gz_transport::MessageInfo| {
            let joints = &model.joint;
            if message.name.len() != joints.len() {
                message.name = joints
                    .iter()
                    .map(|joint| joint.name.as_str().into())
                    .collect();
                message.position = rosidl_runtime_rs::Sequence::new(joints.len());
                message.velocity = rosidl_runtime_rs::Sequence::new(joints.len());
                message.effort = rosidl_runtime_rs::Sequence::new(joints.len());
            }
            for (k, joint) in joints.iter().enumerate() {
                let axis = joint.axis1.clone().unwrap_or_default();
                message.position.as_mut_slice()[k] = axis.position;
                message.velocity.as_mut_slice()[k] = axis.velocity;
                message.effort.as_mut_slice()[k] = axis.force;
            }
            if let Some(stamp) = model.header.as_ref().and_then(|header| header.stamp) {
                message.header.stamp.sec = stamp.sec as i32;
                message.header.stamp.nanosec = stamp.nsec as u32;
            }
            let _ = publisher.publish(&message);
        },
    )?;
    Ok(subscription)
}

/// Sleeps to absolute deadlines `hz` apart on CLOCK_MONOTONIC, nothing else; with `report`,
/// prints once a second `timer: W wake-ups, L later than one period, max lateness X ms`
/// (counts since the start).
fn timer(hz: f64, report: bool, stop: &AtomicBool) {
    let period_ns = (1e9 / hz) as i64;
    let now_ns = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes a valid timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
        t.tv_sec * 1_000_000_000 + t.tv_nsec
    };
    let mut deadline = now_ns();
    let (mut wakeups, mut late, mut max_lateness) = (0u64, 0u64, 0i64);
    let mut next_report = deadline + 1_000_000_000;
    while !stop.load(Ordering::Relaxed) {
        deadline += period_ns;
        let next = libc::timespec {
            tv_sec: (deadline / 1_000_000_000) as libc::time_t,
            tv_nsec: (deadline % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: valid clock and timespec; EINTR just ends this sleep early.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &next,
                std::ptr::null_mut(),
            )
        };
        if !report {
            continue;
        }
        let woke = now_ns();
        let lateness = woke - deadline;
        wakeups += 1;
        late += u64::from(lateness > period_ns);
        max_lateness = max_lateness.max(lateness);
        if woke >= next_report {
            next_report += 1_000_000_000;
            println!(
                "timer: {wakeups} wake-ups, {late} later than one period, max lateness {:.3} ms",
                max_lateness as f64 / 1e6
            );
        }
    }
}
