//! Exact lag on the monitor's one clock.
//!
//! State path: a Gazebo message is *published* when it reaches the monitor (the monitor and
//! the bridge subscribe to the same ZeroMQ publisher; [`gazebo_delivery`] bounds how late the
//! monitor itself receives them). Its lag is the time until the first `get/joint_states`
//! report that carries it reaches the monitor; the part of it until the bridge published that
//! report (its DDS source timestamp) is given too. Messages the bridge never reports (a newer
//! one overwrote them in its cache before its loop read it) are counted.
//!
//! Command path: a target is *sent* when the client publishes it on
//! `set/target_joint_positions` (its DDS source timestamp; arrival at the monitor if the
//! middleware gave none); its lag is the time until every value that changed since the
//! previous target has been seen on its joint's `cmd_pos` topic by the monitor.

use std::collections::HashMap;

use serde::Serialize;

use crate::recording::{CommandSample, GazeboSample, ReportSample, TargetSample};
use crate::spec::MatchBy;
use crate::stats::{median, round, summarize, Summary};

/// The part of a run that counts: samples that arrived in `[start_ns, end_ns)`.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// First instant counted.
    pub start_ns: i64,
    /// First instant no longer counted.
    pub end_ns: i64,
}

impl Window {
    /// Whether `t_ns` is inside.
    pub fn contains(&self, t_ns: i64) -> bool {
        (self.start_ns..self.end_ns).contains(&t_ns)
    }
}

/// Gazebo → report lag of one robot.
#[derive(Clone, Debug, Serialize)]
pub struct StateLag {
    /// How reports were matched to Gazebo messages.
    pub matched_by: MatchBy,
    /// Gazebo messages in the window (matched by values: those whose positions changed).
    pub gazebo_messages: usize,
    /// Of those, reported at least once.
    pub reported: usize,
    /// Of those, never reported.
    pub never_reported: usize,
    /// Reported before the monitor had the Gazebo message itself (negative lag: the monitor's
    /// Gazebo thread was late).
    pub reported_before_monitor: usize,
    /// Time until the first report carrying the message reached the monitor.
    pub lag: Option<Summary>,
    /// Time until the bridge published that report (its DDS source timestamp): the lag less
    /// the report's delivery to the monitor.
    pub until_published: Option<Summary>,
    /// Reports in the window.
    pub reports: usize,
    /// Reports in the window that carry no Gazebo message the monitor received.
    pub reports_unmatched: usize,
    /// The lags summarised in `lag`, in nanoseconds (for pooling robots; not written out).
    #[serde(skip)]
    pub lags_ns: Vec<i64>,
}

/// Lag when reports carry the Gazebo stamp (`joint_states_stamp: gazebo`).
pub fn state_lag_by_stamp(
    gazebo: &[GazeboSample],
    reports: &[ReportSample],
    window: Window,
) -> StateLag {
    let mut by_stamp: HashMap<i64, usize> = HashMap::with_capacity(gazebo.len());
    for (index, sample) in gazebo.iter().enumerate() {
        if let Some(stamp) = sample.stamp_ns {
            by_stamp.entry(stamp).or_insert(index);
        }
    }
    let source = |report: &ReportSample| by_stamp.get(&report.stamp_ns).copied();
    let counted: Vec<usize> = (0..gazebo.len())
        .filter(|&i| window.contains(gazebo[i].arrival_ns))
        .collect();
    match_reports(MatchBy::Stamp, gazebo, &counted, reports, window, source)
}

/// Lag when reports are matched by exact position values. Joints that hold still repeat
/// values, so only Gazebo messages whose positions differ from the previous message's count,
/// and a report is attributed to the latest such message (with its values) the monitor had
/// received by then.
pub fn state_lag_by_values(
    gazebo: &[GazeboSample],
    reports: &[ReportSample],
    window: Window,
) -> StateLag {
    let mut changes: HashMap<Vec<u64>, Vec<usize>> = HashMap::new();
    let mut counted = Vec::new();
    let mut previous: Option<&[f64]> = None;
    for (index, sample) in gazebo.iter().enumerate() {
        let changed = previous.is_none_or(|p| !same_bits(p, &sample.positions));
        previous = Some(&sample.positions);
        if changed && sample.positions.iter().all(|p| p.is_finite()) {
            changes
                .entry(bits(&sample.positions))
                .or_default()
                .push(index);
            if window.contains(sample.arrival_ns) {
                counted.push(index);
            }
        }
    }
    let source = |report: &ReportSample| {
        let candidates = changes.get(&bits(&report.positions))?;
        let received = candidates.partition_point(|&i| gazebo[i].arrival_ns <= report.arrival_ns);
        Some(candidates[received.saturating_sub(1)])
    };
    match_reports(MatchBy::Values, gazebo, &counted, reports, window, source)
}

fn match_reports(
    matched_by: MatchBy,
    gazebo: &[GazeboSample],
    counted: &[usize],
    reports: &[ReportSample],
    window: Window,
    source: impl Fn(&ReportSample) -> Option<usize>,
) -> StateLag {
    let mut first_report: Vec<Option<&ReportSample>> = vec![None; gazebo.len()];
    let mut reports_in_window = 0;
    let mut reports_unmatched = 0;
    for report in reports {
        let in_window = window.contains(report.arrival_ns);
        reports_in_window += usize::from(in_window);
        match source(report) {
            Some(index) => {
                first_report[index].get_or_insert(report);
            }
            None => reports_unmatched += usize::from(in_window),
        }
    }
    let first: Vec<(&GazeboSample, &ReportSample)> = counted
        .iter()
        .filter_map(|&i| first_report[i].map(|report| (&gazebo[i], report)))
        .collect();
    let lags: Vec<i64> = first
        .iter()
        .map(|(message, report)| report.arrival_ns - message.arrival_ns)
        .collect();
    let until_published: Vec<i64> = first
        .iter()
        .filter_map(|(message, report)| Some(report.source_ns? - message.arrival_ns))
        .collect();
    StateLag {
        matched_by,
        gazebo_messages: counted.len(),
        reported: lags.len(),
        never_reported: counted.len() - lags.len(),
        reported_before_monitor: lags.iter().filter(|&&lag| lag < 0).count(),
        lag: summarize(&lags),
        until_published: summarize(&until_published),
        reports: reports_in_window,
        reports_unmatched,
        lags_ns: lags,
    }
}

/// Several robots' state lags taken together.
#[derive(Clone, Debug, Serialize)]
pub struct PooledStateLag {
    /// Robots pooled.
    pub robots: usize,
    /// Gazebo messages in the window, all robots.
    pub gazebo_messages: usize,
    /// Of those, never reported.
    pub never_reported: usize,
    /// Every robot's lags together.
    pub lag: Option<Summary>,
    /// The largest of the robots' own p99.
    pub worst_robot_p99_ms: Option<f64>,
}

/// Pools robots' state lags.
pub fn pool(robots: &[StateLag]) -> PooledStateLag {
    let lags: Vec<i64> = robots
        .iter()
        .flat_map(|r| r.lags_ns.iter().copied())
        .collect();
    PooledStateLag {
        robots: robots.len(),
        gazebo_messages: robots.iter().map(|r| r.gazebo_messages).sum(),
        never_reported: robots.iter().map(|r| r.never_reported).sum(),
        lag: summarize(&lags),
        worst_robot_p99_ms: robots
            .iter()
            .filter_map(|r| r.lag.as_ref().map(|l| l.p99_ms))
            .reduce(f64::max),
    }
}

/// Target → `cmd_pos` lag of one robot.
#[derive(Clone, Debug, Serialize)]
pub struct CommandLag {
    /// Targets in the window that changed at least one value.
    pub targets: usize,
    /// Of those, every changed value was seen on its `cmd_pos` topic.
    pub forwarded: usize,
    /// Of those, some changed value never reached Gazebo.
    pub never_forwarded: usize,
    /// Targets in the window identical to the previous one (nothing to time).
    pub unchanged_targets: usize,
    /// Targets timed from their arrival at the monitor, for want of a DDS source timestamp.
    pub timed_from_arrival: usize,
    /// Time from the target's publication until the last of its changed values was first
    /// seen on the Gazebo side.
    pub lag: Option<Summary>,
}

/// Lag of targets to the Gazebo side, matching each changed value to the first `cmd_pos`
/// command carrying exactly that value.
pub fn command_lag(
    targets: &[TargetSample],
    commands: &[Vec<CommandSample>],
    window: Window,
) -> CommandLag {
    let first_seen: Vec<HashMap<u64, i64>> = commands
        .iter()
        .map(|stream| {
            let mut first = HashMap::with_capacity(stream.len() / 4);
            for command in stream {
                first
                    .entry(command.value.to_bits())
                    .or_insert(command.arrival_ns);
            }
            first
        })
        .collect();
    let mut lags = Vec::new();
    let mut timed = 0;
    let mut timed_from_arrival = 0;
    let mut unchanged = 0;
    let mut previous: Option<&[f64]> = None;
    for target in targets {
        let before = previous.replace(&target.values);
        if !window.contains(target.arrival_ns) {
            continue;
        }
        let changed: Vec<usize> = (0..target.values.len().min(commands.len()))
            .filter(|&j| before.is_none_or(|b| b.get(j) != Some(&target.values[j])))
            .collect();
        if changed.is_empty() {
            unchanged += 1;
            continue;
        }
        timed += 1;
        let reached: Option<Vec<i64>> = changed
            .iter()
            .map(|&j| first_seen[j].get(&target.values[j].to_bits()).copied())
            .collect();
        if let Some(reached) = reached {
            let last = reached
                .into_iter()
                .max()
                .expect("at least one changed value");
            let sent = target.source_ns.unwrap_or_else(|| {
                timed_from_arrival += 1;
                target.arrival_ns
            });
            lags.push(last - sent);
        }
    }
    CommandLag {
        targets: timed,
        forwarded: lags.len(),
        never_forwarded: timed - lags.len(),
        unchanged_targets: unchanged,
        timed_from_arrival,
        lag: summarize(&lags),
    }
}

/// How the Gazebo stream reached the monitor: its rate, sim-time gaps (messages the monitor
/// missed), and how much later than the best case of the surrounding ±50 ms each message
/// arrived (arrival − sim stamp, less that offset's minimum over ±50 ms; short enough that a
/// real-time factor off 1 hardly moves the offset within it): the error of taking arrival
/// at the monitor as publication time, plus the simulator's own lateness.
#[derive(Clone, Debug, Serialize)]
pub struct GazeboDelivery {
    /// Messages in the window.
    pub messages: usize,
    /// Their rate.
    pub rate_hz: f64,
    /// Sim-time step between consecutive messages (median).
    pub step_ms: Option<f64>,
    /// Messages missing from the monitor's stream, counted from sim-time gaps.
    pub missed: u64,
    /// Arrival later than the best case of the surrounding ±50 ms.
    pub delay_over_best: Option<Summary>,
}

/// Works out [`GazeboDelivery`] from the stamped Gazebo samples in the window.
pub fn gazebo_delivery(gazebo: &[GazeboSample], window: Window) -> GazeboDelivery {
    const NEIGHBOURHOOD_NS: i64 = 50_000_000;
    let stamped: Vec<(i64, i64)> = gazebo
        .iter()
        .filter(|g| window.contains(g.arrival_ns))
        .filter_map(|g| g.stamp_ns.map(|stamp| (g.arrival_ns, stamp)))
        .collect();
    let seconds = (window.end_ns - window.start_ns) as f64 / 1e9;
    let steps: Vec<f64> = stamped
        .windows(2)
        .map(|pair| (pair[1].1 - pair[0].1) as f64)
        .collect();
    let step_ns = median(&steps);
    let missed = step_ns
        .filter(|&step| step > 0.0)
        .map(|step| {
            steps
                .iter()
                .map(|&gap| ((gap / step).round() as i64 - 1).max(0) as u64)
                .sum()
        })
        .unwrap_or(0);
    let offsets: Vec<i64> = stamped
        .iter()
        .map(|&(arrival, stamp)| arrival - stamp)
        .collect();
    let mut excess = Vec::with_capacity(offsets.len());
    let mut lo = 0;
    let mut hi = 0;
    for (i, &(arrival, _)) in stamped.iter().enumerate() {
        while stamped[lo].0 < arrival - NEIGHBOURHOOD_NS {
            lo += 1;
        }
        while hi < stamped.len() && stamped[hi].0 <= arrival + NEIGHBOURHOOD_NS {
            hi += 1;
        }
        let best = offsets[lo..hi].iter().min().expect("i is in lo..hi");
        excess.push(offsets[i] - best);
    }
    GazeboDelivery {
        messages: stamped.len(),
        rate_hz: round(stamped.len() as f64 / seconds, 1),
        step_ms: step_ns.map(|ns| round(ns / 1e6, 4)),
        missed,
        delay_over_best: summarize(&excess),
    }
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn gz(arrival_ms: f64, stamp_ms: i64, positions: &[f64]) -> GazeboSample {
        GazeboSample {
            arrival_ns: (arrival_ms * 1e6) as i64,
            stamp_ns: Some(stamp_ms * MS),
            positions: positions.to_vec(),
        }
    }

    fn report(arrival_ms: f64, stamp_ms: i64, positions: &[f64]) -> ReportSample {
        ReportSample {
            arrival_ns: (arrival_ms * 1e6) as i64,
            // Published 0.25 ms before it arrived.
            source_ns: Some((arrival_ms * 1e6) as i64 - MS / 4),
            stamp_ns: stamp_ms * MS,
            positions: positions.to_vec(),
        }
    }

    const ALL: Window = Window {
        start_ns: 0,
        end_ns: i64::MAX,
    };

    #[test]
    fn stamp_matching_takes_the_first_report_and_counts_the_skipped() {
        let gazebo = [
            gz(10.0, 2, &[0.1]),
            gz(12.0, 4, &[0.2]),
            gz(14.0, 6, &[0.3]),
        ];
        // The loop read stamp 2 twice, never saw stamp 4, then stamp 6.
        let reports = [
            report(11.0, 2, &[0.1]),
            report(13.0, 2, &[0.1]),
            report(15.5, 6, &[0.3]),
            report(16.0, 99, &[9.9]),
        ];
        let lag = state_lag_by_stamp(&gazebo, &reports, ALL);
        assert_eq!(lag.gazebo_messages, 3);
        assert_eq!(lag.reported, 2);
        assert_eq!(lag.never_reported, 1);
        assert_eq!(lag.reports, 4);
        assert_eq!(lag.reports_unmatched, 1);
        let summary = lag.lag.unwrap();
        assert_eq!((summary.min_ms, summary.max_ms), (1.0, 1.5));
        let published = lag.until_published.unwrap();
        assert_eq!((published.min_ms, published.max_ms), (0.75, 1.25));
    }

    #[test]
    fn pooling_robots() {
        let one = state_lag_by_stamp(&[gz(10.0, 2, &[0.1])], &[report(11.0, 2, &[0.1])], ALL);
        let two = state_lag_by_stamp(
            &[gz(10.0, 2, &[0.1]), gz(12.0, 4, &[0.2])],
            &[report(13.0, 2, &[0.1])],
            ALL,
        );
        let pooled = pool(&[one, two]);
        assert_eq!(pooled.robots, 2);
        assert_eq!((pooled.gazebo_messages, pooled.never_reported), (3, 1));
        let lag = pooled.lag.unwrap();
        assert_eq!((lag.count, lag.min_ms, lag.max_ms), (2, 1.0, 3.0));
        assert_eq!(pooled.worst_robot_p99_ms, Some(3.0));
    }

    #[test]
    fn window_limits_the_messages_counted_not_the_reports_searched() {
        let gazebo = [gz(10.0, 2, &[0.1]), gz(20.0, 4, &[0.2])];
        let reports = [report(21.0, 4, &[0.2]), report(30.0, 2, &[0.1])];
        let window = Window {
            start_ns: 15 * MS,
            end_ns: 25 * MS,
        };
        let lag = state_lag_by_stamp(&gazebo, &reports, window);
        assert_eq!((lag.gazebo_messages, lag.reported), (1, 1));
        assert_eq!(lag.lag.unwrap().max_ms, 1.0);
        assert_eq!(lag.reports, 1);
    }

    #[test]
    fn value_matching_counts_changes_and_attributes_repeats_to_the_latest_change() {
        let gazebo = [
            gz(10.0, 2, &[0.1, 1.0]),
            gz(12.0, 4, &[0.1, 1.0]), // a repeat: not counted on its own
            gz(14.0, 6, &[0.2, 1.0]),
            gz(16.0, 8, &[0.1, 1.0]), // back to the first values: a change again
            gz(18.0, 10, &[0.3, 1.0]),
        ];
        let reports = [
            report(10.5, 0, &[0.1, 1.0]),
            report(12.5, 0, &[0.1, 1.0]),
            report(14.25, 0, &[0.2, 1.0]),
            report(17.0, 0, &[0.1, 1.0]),
            report(19.0, 0, &[7.0, 7.0]),
        ];
        let lag = state_lag_by_values(&gazebo, &reports, ALL);
        assert_eq!(lag.matched_by, MatchBy::Values);
        assert_eq!(lag.gazebo_messages, 4);
        assert_eq!(lag.reported, 3);
        assert_eq!(lag.never_reported, 1);
        assert_eq!(lag.reports_unmatched, 1);
        let summary = lag.lag.unwrap();
        assert_eq!((summary.min_ms, summary.max_ms), (0.25, 1.0));
    }

    #[test]
    fn a_report_before_the_monitor_has_the_message_is_a_negative_lag() {
        let gazebo = [gz(10.0, 2, &[0.1])];
        let reports = [report(9.5, 2, &[0.1])];
        let lag = state_lag_by_values(&gazebo, &reports, ALL);
        assert_eq!(lag.reported_before_monitor, 1);
        assert_eq!(lag.lag.unwrap().max_ms, -0.5);
    }

    fn cmd(arrival_ms: f64, value: f64) -> CommandSample {
        CommandSample {
            arrival_ns: (arrival_ms * 1e6) as i64,
            value,
        }
    }

    #[test]
    fn command_lag_waits_for_every_changed_value() {
        let target = |arrival_ms: i64, values: [f64; 2]| TargetSample {
            arrival_ns: arrival_ms * MS,
            source_ns: None,
            values: values.to_vec(),
        };
        let targets = [
            target(10, [1.0, 5.0]),
            target(20, [2.0, 5.0]),
            target(30, [2.0, 5.0]),
            target(40, [3.0, 6.0]),
        ];
        let commands = vec![
            vec![cmd(11.0, 1.0), cmd(21.5, 2.0), cmd(41.0, 3.0)],
            vec![cmd(12.0, 5.0), cmd(22.0, 5.0)],
        ];
        let lag = command_lag(&targets, &commands, ALL);
        assert_eq!(lag.targets, 3);
        assert_eq!(lag.unchanged_targets, 1);
        assert_eq!(lag.forwarded, 2);
        assert_eq!(lag.never_forwarded, 1);
        assert_eq!(lag.timed_from_arrival, 2);
        let summary = lag.lag.unwrap();
        // Target 1 waits for joint 1's 5.0 (2 ms); target 2 only changed joint 0 (1.5 ms).
        assert_eq!((summary.min_ms, summary.max_ms), (1.5, 2.0));
    }

    #[test]
    fn command_lag_counts_from_publication_when_known() {
        let targets = [TargetSample {
            arrival_ns: 10 * MS,
            source_ns: Some(9 * MS),
            values: vec![1.0],
        }];
        let commands = vec![vec![cmd(11.0, 1.0)]];
        let lag = command_lag(&targets, &commands, ALL);
        assert_eq!(lag.timed_from_arrival, 0);
        assert_eq!(lag.lag.unwrap().max_ms, 2.0);
    }

    #[test]
    fn delivery_finds_gaps_and_late_arrivals() {
        // 2 ms steps, one missing (stamp 8), one message 0.5 ms late.
        let gazebo = [
            gz(100.0, 2, &[0.0]),
            gz(102.0, 4, &[0.0]),
            gz(104.5, 6, &[0.0]),
            gz(108.0, 10, &[0.0]),
            gz(110.0, 12, &[0.0]),
        ];
        let window = Window {
            start_ns: 0,
            end_ns: 1000 * MS,
        };
        let delivery = gazebo_delivery(&gazebo, window);
        assert_eq!(delivery.messages, 5);
        assert_eq!(delivery.missed, 1);
        assert_eq!(delivery.step_ms, Some(2.0));
        assert_eq!(delivery.delay_over_best.unwrap().max_ms, 0.5);
    }
}
