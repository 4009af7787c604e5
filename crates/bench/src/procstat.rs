//! CPU, memory and wake-ups of the processes under test, from `/proc`, sampled once a second
//! on an absolute-deadline grid.
//!
//! CPU is user+system time (`/proc/<pid>/stat` fields 14 and 15) per second of the monotonic
//! clock, in percent of one core; threads named in `exclude_threads` are taken out using
//! their own `/proc/<pid>/task/<tid>/stat`. Wake-ups are voluntary context switches summed over
//! the threads (each is a sleep that ended). RSS is `VmRSS` of `/proc/<pid>/status`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::exact::Window;
use crate::recording::MonotonicClock;
use crate::spec::WatchSpec;
use crate::stats::round;

/// CPU ticks and voluntary context switches of the threads sharing one name.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadTotals {
    /// Threads with this name.
    pub count: usize,
    /// Their user+system clock ticks.
    pub cpu_ticks: u64,
    /// Their voluntary context switches.
    pub voluntary_switches: u64,
}

/// One reading of one process.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcReading {
    /// When (monitor clock).
    pub t_ns: i64,
    /// user+system clock ticks of the process, less the excluded threads'.
    pub cpu_ticks: u64,
    /// Resident set size, KiB.
    pub rss_kib: u64,
    /// Threads.
    pub threads: usize,
    /// Voluntary context switches of the counted threads.
    pub voluntary_switches: u64,
    /// The counted threads by name (the main thread as `<name> (main)`).
    pub by_thread: BTreeMap<String, ThreadTotals>,
}

/// Readings of one process over a run.
#[derive(Clone, Debug)]
pub struct ProcessSeries {
    /// The process.
    pub watch: WatchSpec,
    /// One reading a second while it lived.
    pub readings: Vec<ProcReading>,
    /// When it was first found gone.
    pub exited_ns: Option<i64>,
}

/// Reads one process now; `None` if it is gone.
pub fn read_process(watch: &WatchSpec, t_ns: i64) -> Option<ProcReading> {
    let root = Path::new("/proc").join(watch.pid.to_string());
    let stat = std::fs::read_to_string(root.join("stat")).ok()?;
    if stat_state(&stat) == Some('Z') {
        return None;
    }
    let mut cpu_ticks = stat_cpu_ticks(&stat)?;
    let mut voluntary_switches = 0;
    let mut threads = 0;
    let mut by_thread: BTreeMap<String, ThreadTotals> = BTreeMap::new();
    for task in std::fs::read_dir(root.join("task")).ok()?.flatten() {
        threads += 1;
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let name = comm.trim();
        // The main thread keeps the process name, which unnamed threads share: tell it apart.
        let is_main = task.file_name().to_str() == Some(watch.pid.to_string().as_str());
        let ticks = std::fs::read_to_string(dir.join("stat"))
            .ok()
            .and_then(|s| stat_cpu_ticks(&s))
            .unwrap_or(0);
        if watch
            .exclude_threads
            .iter()
            .any(|excluded| excluded == name)
        {
            cpu_ticks = cpu_ticks.saturating_sub(ticks);
            continue;
        }
        let switches = std::fs::read_to_string(dir.join("status"))
            .ok()
            .and_then(|status| status_field(&status, "voluntary_ctxt_switches:"))
            .unwrap_or(0);
        voluntary_switches += switches;
        let label = if is_main {
            format!("{name} (main)")
        } else {
            name.to_owned()
        };
        let totals = by_thread.entry(label).or_default();
        totals.count += 1;
        totals.cpu_ticks += ticks;
        totals.voluntary_switches += switches;
    }
    let status = std::fs::read_to_string(root.join("status")).ok()?;
    Some(ProcReading {
        t_ns,
        cpu_ticks,
        rss_kib: status_field(&status, "VmRSS:").unwrap_or(0),
        threads,
        voluntary_switches,
        by_thread,
    })
}

/// The state letter of a `stat` line.
fn stat_state(stat: &str) -> Option<char> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// utime + stime of a `stat` line (fields 14 and 15; the command name in field 2 may contain
/// spaces and parentheses, so fields are counted from its closing parenthesis).
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after_comm = stat.rsplit_once(')')?.1;
    let mut fields = after_comm.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The number after `key` in a `status` file.
fn status_field(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Samples the watched processes on its own thread until stopped.
pub struct ProcessSampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Vec<ProcessSeries>>,
}

impl ProcessSampler {
    /// Starts sampling every `interval`, the first reading now.
    ///
    /// # Errors
    /// The thread could not be created.
    pub fn start(
        watch: Vec<WatchSpec>,
        clock: MonotonicClock,
        interval: Duration,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("proc-sampler".into())
            .spawn(move || {
                let mut series: Vec<ProcessSeries> = watch
                    .into_iter()
                    .map(|watch| ProcessSeries {
                        watch,
                        readings: Vec::new(),
                        exited_ns: None,
                    })
                    .collect();
                let mut deadline = Instant::now();
                loop {
                    let t_ns = clock.now_ns();
                    for process in series.iter_mut().filter(|p| p.exited_ns.is_none()) {
                        match read_process(&process.watch, t_ns) {
                            Some(reading) => process.readings.push(reading),
                            None => process.exited_ns = Some(t_ns),
                        }
                    }
                    deadline += interval;
                    let timeout = deadline.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(timeout) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return series,
                    }
                }
            })?;
        Ok(ProcessSampler { stop, thread })
    }

    /// Stops sampling and returns the series.
    pub fn stop(self) -> Vec<ProcessSeries> {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// Usage of one process over a window.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessUsage {
    /// What it is.
    pub label: String,
    /// Its pid.
    pub pid: u32,
    /// Threads whose CPU time is not counted.
    pub excluded_threads: Vec<String>,
    /// Mean user+system CPU over the window, % of one core.
    pub cpu_percent: Option<f64>,
    /// Per-second CPU `[s since start, %]` over the window.
    pub cpu_series: Vec<[f64; 2]>,
    /// Mean RSS over the window, MiB.
    pub rss_mean_mib: Option<f64>,
    /// Largest RSS over the window, MiB.
    pub rss_max_mib: Option<f64>,
    /// Threads (largest count seen).
    pub threads: usize,
    /// Voluntary context switches per second (wake-ups after a sleep).
    pub wakeups_per_s: Option<f64>,
    /// CPU and wake-ups by thread name (threads alive over the whole window), busiest first.
    pub by_thread: Vec<ThreadUsage>,
    /// Seconds since the start when the process was found gone, if it died during the run.
    pub exited_at_s: Option<f64>,
}

/// CPU and wake-ups of the threads sharing one name.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadUsage {
    /// The thread name (`comm`).
    pub name: String,
    /// Threads with this name.
    pub count: usize,
    /// Mean user+system CPU, % of one core.
    pub cpu_percent: f64,
    /// Voluntary context switches per second.
    pub wakeups_per_s: f64,
}

/// Works out a process's usage over `window`, times reported relative to `start_ns`.
pub fn usage(series: &ProcessSeries, window: Window, start_ns: i64) -> ProcessUsage {
    // SAFETY: sysconf has no preconditions.
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let inside: Vec<&ProcReading> = series
        .readings
        .iter()
        .filter(|r| (window.start_ns..=window.end_ns).contains(&r.t_ns))
        .collect();
    let per_s = |a: &ProcReading, b: &ProcReading, value: fn(&ProcReading) -> u64| {
        let seconds = (b.t_ns - a.t_ns) as f64 / 1e9;
        value(b).saturating_sub(value(a)) as f64 / seconds
    };
    let cpu = |a: &ProcReading, b: &ProcReading| {
        round(100.0 * per_s(a, b, |r| r.cpu_ticks) / ticks_per_s, 3)
    };
    let span = inside
        .first()
        .zip(inside.last())
        .filter(|(a, b)| b.t_ns > a.t_ns);
    let rss: Vec<f64> = inside.iter().map(|r| r.rss_kib as f64 / 1024.0).collect();
    ProcessUsage {
        label: series.watch.label.clone(),
        pid: series.watch.pid,
        excluded_threads: series.watch.exclude_threads.clone(),
        cpu_percent: span.map(|(a, b)| cpu(a, b)),
        cpu_series: inside
            .windows(2)
            .map(|pair| {
                [
                    round((pair[1].t_ns - start_ns) as f64 / 1e9, 3),
                    cpu(pair[0], pair[1]),
                ]
            })
            .collect(),
        rss_mean_mib: (!rss.is_empty())
            .then(|| round(rss.iter().sum::<f64>() / rss.len() as f64, 2)),
        rss_max_mib: rss.iter().copied().reduce(f64::max).map(|m| round(m, 2)),
        threads: inside.iter().map(|r| r.threads).max().unwrap_or(0),
        wakeups_per_s: span.map(|(a, b)| round(per_s(a, b, |r| r.voluntary_switches), 1)),
        by_thread: span.map_or_else(Vec::new, |(a, b)| thread_usage(a, b, ticks_per_s)),
        exited_at_s: series
            .exited_ns
            .map(|t| round((t - start_ns) as f64 / 1e9, 3)),
    }
}

fn thread_usage(first: &ProcReading, last: &ProcReading, ticks_per_s: f64) -> Vec<ThreadUsage> {
    let seconds = (last.t_ns - first.t_ns) as f64 / 1e9;
    let mut usage: Vec<ThreadUsage> = last
        .by_thread
        .iter()
        .filter_map(|(name, end)| {
            let start = first.by_thread.get(name)?;
            Some(ThreadUsage {
                name: name.clone(),
                count: end.count,
                cpu_percent: round(
                    100.0 * end.cpu_ticks.saturating_sub(start.cpu_ticks) as f64
                        / ticks_per_s
                        / seconds,
                    3,
                ),
                wakeups_per_s: round(
                    end.voluntary_switches
                        .saturating_sub(start.voluntary_switches) as f64
                        / seconds,
                    1,
                ),
            })
        })
        .collect();
    usage.sort_by(|a, b| {
        b.cpu_percent
            .total_cmp(&a.cpu_percent)
            .then(b.wakeups_per_s.total_cmp(&a.wakeups_per_s))
    });
    usage
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_counted_after_the_command_name() {
        let stat = "42 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 7 0 100";
        assert_eq!(stat_cpu_ticks(stat), Some(300));
        assert_eq!(stat_state(stat), Some('S'));
    }

    #[test]
    fn status_fields() {
        let status = "Name:\tx\nVmRSS:\t  5120 kB\nvoluntary_ctxt_switches:\t17\n";
        assert_eq!(status_field(status, "VmRSS:"), Some(5120));
        assert_eq!(status_field(status, "voluntary_ctxt_switches:"), Some(17));
        assert_eq!(status_field(status, "Threads:"), None);
    }

    #[test]
    fn a_busy_thread_of_our_own_is_seen_and_can_be_excluded() {
        let watch = |exclude: &[&str]| WatchSpec {
            label: "self".into(),
            pid: std::process::id(),
            exclude_threads: exclude.iter().map(|s| s.to_string()).collect(),
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinning = stop.clone();
        let busy = std::thread::Builder::new()
            .name("busy-spinner".into())
            .spawn(move || {
                while !spinning.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .unwrap();
        let clock = MonotonicClock::start();
        let first_all = read_process(&watch(&[]), clock.now_ns()).unwrap();
        let first_rest = read_process(&watch(&["busy-spinner"]), clock.now_ns()).unwrap();
        // On a loaded machine the spinner gets less than a core: wait (bounded) for 20 ticks.
        let started = Instant::now();
        let (last_all, last_rest) = loop {
            std::thread::sleep(Duration::from_millis(100));
            let all = read_process(&watch(&[]), clock.now_ns()).unwrap();
            let rest = read_process(&watch(&["busy-spinner"]), clock.now_ns()).unwrap();
            if all.cpu_ticks >= first_all.cpu_ticks + 20 || started.elapsed().as_secs() >= 10 {
                break (all, rest);
            }
        };
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        busy.join().unwrap();
        let all = last_all.cpu_ticks - first_all.cpu_ticks;
        let rest = last_rest.cpu_ticks - first_rest.cpu_ticks;
        assert!(all >= 20, "the spinner used only {all} ticks in 10 s");
        assert!(
            rest * 2 < all,
            "excluding the spinner left {rest} of {all} ticks"
        );
        assert!(last_all.rss_kib > 0 && last_all.threads >= 2);
        assert!(last_all.by_thread.contains_key("busy-spinner"));
        assert!(last_all
            .by_thread
            .keys()
            .any(|name| name.ends_with(" (main)")));
        assert!(!last_rest.by_thread.contains_key("busy-spinner"));
    }

    #[test]
    fn usage_over_a_window() {
        let series = ProcessSeries {
            watch: WatchSpec {
                label: "bridge".into(),
                pid: 1,
                exclude_threads: vec![],
            },
            readings: (0..=10)
                .map(|s| ProcReading {
                    t_ns: s * 1_000_000_000,
                    cpu_ticks: (s * 5) as u64,
                    rss_kib: 2048,
                    threads: 4,
                    voluntary_switches: (s * 1000) as u64,
                    by_thread: BTreeMap::from([(
                        "loop".to_string(),
                        ThreadTotals {
                            count: 1,
                            cpu_ticks: (s * 5) as u64,
                            voluntary_switches: (s * 1000) as u64,
                        },
                    )]),
                })
                .collect(),
            exited_ns: None,
        };
        let window = Window {
            start_ns: 2_000_000_000,
            end_ns: 10_000_000_000,
        };
        let usage = usage(&series, window, 0);
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        assert_eq!(usage.cpu_percent, Some(round(500.0 / ticks, 3)));
        assert_eq!(usage.cpu_series.len(), 8);
        assert_eq!(usage.rss_max_mib, Some(2.0));
        assert_eq!(usage.wakeups_per_s, Some(1000.0));
        assert_eq!(usage.threads, 4);
        assert_eq!(usage.by_thread.len(), 1);
        assert_eq!(usage.by_thread[0].wakeups_per_s, 1000.0);
        assert_eq!(usage.by_thread[0].cpu_percent, usage.cpu_percent.unwrap());
    }
}
