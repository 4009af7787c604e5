//! Latency and CPU of a 1 kHz `Double` stream between two processes of ours.
//!
//! `cargo run --release --example latency [-- --rate 1000 --secs 10]` starts itself twice, as
//! subscriber and as publisher, in a private partition on loopback. The publisher stamps each
//! message's header with the wall-clock send time; the subscriber records receive − send.
//! Each role reports its own CPU time (getrusage) over the stream; the parent prints a summary.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Parser;
use gz_transport::msgs::{Double, Header, Time};
use gz_transport::{MessageInfo, Node};

#[derive(Parser, Debug, Clone)]
struct Args {
    /// Internal: run as `sub` or `pub`.
    #[arg(long)]
    role: Option<String>,
    /// Messages per second.
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Length of the stream in seconds.
    #[arg(long, default_value_t = 10.0)]
    secs: f64,
}

const TOPIC: &str = "/bench/cmd_pos";

fn now_time() -> Time {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    Time {
        sec: d.as_secs() as i64,
        nsec: d.subsec_nanos() as i32,
    }
}

/// User+system CPU time of this process.
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn main() -> Result<()> {
    let args = Args::parse();
    match args.role.as_deref() {
        None => parent(&args),
        Some("sub") => subscriber(&args),
        Some("pub") => publisher(&args),
        Some(other) => bail!("unknown role {other:?}"),
    }
}

fn parent(args: &Args) -> Result<()> {
    let exe = std::env::current_exe()?;
    let partition = format!("latency-bench-{}", std::process::id());
    let spawn = |role: &str| {
        Command::new(&exe)
            .args([
                "--role",
                role,
                "--rate",
                &args.rate.to_string(),
                "--secs",
                &args.secs.to_string(),
            ])
            .env("GZ_PARTITION", &partition)
            .env("GZ_IP", "127.0.0.1")
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the {role} process"))
    };
    let sub = spawn("sub")?;
    let publisher = spawn("pub")?;
    let pub_out = publisher.wait_with_output()?;
    let sub_out = sub.wait_with_output()?;
    println!(
        "1 stream of gz.msgs.Double at {} Hz for {} s, two processes, loopback",
        args.rate, args.secs
    );
    print!("{}", String::from_utf8_lossy(&sub_out.stdout));
    print!("{}", String::from_utf8_lossy(&pub_out.stdout));
    if !sub_out.status.success() || !pub_out.status.success() {
        bail!("a bench process failed");
    }
    Ok(())
}

fn subscriber(args: &Args) -> Result<()> {
    let node = Node::new()?;
    let expected = (args.rate * args.secs) as usize;
    let latencies = Arc::new(Mutex::new(Vec::<f64>::with_capacity(expected)));
    let cpu_start = Arc::new(Mutex::new(None::<(Instant, Duration)>));
    let (l, c) = (latencies.clone(), cpu_start.clone());
    let _sub = node.subscribe(TOPIC, move |m: Double, _: &MessageInfo| {
        let now = now_time();
        let Some(sent) = m.header.and_then(|h| h.stamp) else {
            return;
        };
        let mut c = c.lock().unwrap();
        if c.is_none() {
            *c = Some((Instant::now(), cpu_time()));
        }
        l.lock()
            .unwrap()
            .push((now.as_nanos() - sent.as_nanos()) as f64 / 1e3);
    })?;
    let deadline = Instant::now() + Duration::from_secs_f64(args.secs + 30.0);
    let mut last = 0;
    let mut last_change = Instant::now();
    // Until everything arrived, or nothing new arrived for 2 s after the stream started.
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let n = latencies.lock().unwrap().len();
        if n != last {
            last = n;
            last_change = Instant::now();
        }
        if n >= expected
            || (n > 0 && last_change.elapsed() > Duration::from_secs(2))
            || Instant::now() > deadline
        {
            break;
        }
    }
    let (wall, cpu) = match *cpu_start.lock().unwrap() {
        Some((t0, c0)) => (t0.elapsed(), cpu_time() - c0),
        None => bail!("subscriber received nothing"),
    };
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize];
    println!(
        "subscriber: received {}/{} ({} lost), latency p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs; CPU {:.2} s over {:.1} s = {:.1} % of a core",
        lat.len(),
        expected,
        expected.saturating_sub(lat.len()),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        lat[lat.len() - 1],
        cpu.as_secs_f64(),
        wall.as_secs_f64(),
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
    );
    println!("subscriber stats: {:?}", node.stats());
    Ok(())
}

fn publisher(args: &Args) -> Result<()> {
    let node = Node::new()?;
    let publisher = node.advertise::<Double>(TOPIC)?;
    if !publisher.wait_for_subscribers(Duration::from_secs(30)) {
        bail!("no subscriber appeared");
    }
    std::thread::sleep(Duration::from_millis(500)); // let the subscriber's TCP connection settle
    let n = (args.rate * args.secs) as usize;
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let (t0, c0) = (Instant::now(), cpu_time());
    let mut next = t0;
    for i in 0..n {
        let msg = Double {
            header: Some(Header {
                stamp: Some(now_time()),
                data: vec![],
            }),
            data: i as f64,
        };
        publisher.publish(&msg)?;
        next += period;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let (wall, cpu) = (t0.elapsed(), cpu_time() - c0);
    println!(
        "publisher: sent {n} in {:.2} s; CPU {:.2} s = {:.1} % of a core",
        wall.as_secs_f64(),
        cpu.as_secs_f64(),
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
    );
    Ok(())
}
