//! `bench-floor`: the processes the benchmark runs beside a bridge to give its CPU a scale, and
//! the load of the loaded-machine scenario.
//!
//! * `bench-floor timer --hz 500`: one thread waking at Gazebo's publish rate on an absolute
//!   deadline (`clock_nanosleep`) and doing nothing: the cost of one wake-up per message on
//!   this machine (the timer floor).
//! * `bench-floor transport --topic T`: a gz-transport node (ours) subscribed to the topic the
//!   bridge reads, doing nothing with the messages: the cost of receiving them (the transport
//!   floor).
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
    },
    /// A gz-transport subscriber to `topic` doing nothing with its messages.
    Transport {
        #[arg(long)]
        topic: String,
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
        What::Timer { hz } => timer(hz, &stop),
        What::Transport { topic } => {
            let node = gz_transport::Node::with_options(NodeOptions::default())?;
            let _subscription =
                node.subscribe(&topic, |_: msgs::Model, _: &gz_transport::MessageInfo| {})?;
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
            }
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

/// Sleeps to absolute deadlines `hz` apart on CLOCK_MONOTONIC, nothing else.
fn timer(hz: f64, stop: &AtomicBool) {
    let period_ns = (1e9 / hz) as i64;
    let mut next = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut next) };
    while !stop.load(Ordering::Relaxed) {
        let nanos = next.tv_nsec + period_ns;
        next.tv_sec += (nanos / 1_000_000_000) as libc::time_t;
        next.tv_nsec = (nanos % 1_000_000_000) as libc::c_long;
        // SAFETY: valid clock and timespec; EINTR just ends this sleep early.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &next,
                std::ptr::null_mut(),
            )
        };
    }
}
