//! Several drivers seen as one robot (the original composer's `RobotDriverROSComposer`, free
//! of ROS): joint vectors are the parts' vectors concatenated in part order, and a target is
//! split back into one segment per part.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use std::time::Instant;

use crate::{
    Command, DriverError, JointSnapshot, ReceiveReport, RobotDriver, ShutdownToken, StateListener,
    StateListenerGuard, TargetOutcome,
};

/// Who runs the parts' lifecycle, and so who forwards their targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartOwnership {
    /// The parts exist only for the composite (e.g. clients of drivers in other processes):
    /// the composite connects, initializes, deinitializes and disconnects them, and forwards
    /// their targets every period.
    Owned,
    /// The parts are robots with control loops of their own (robots of the same process):
    /// the composite connects and initializes them if their loops have not yet (both are
    /// idempotent), never deinitializes or disconnects them, and forwards a target once,
    /// when it sets one; the parts' loops forward it from then on. The composite reads the
    /// parts' state straight from their caches, so it is as fresh as theirs.
    Shared,
}

/// A named part of a composite.
#[derive(Clone)]
pub struct CompositePart {
    /// The part's name in logs and errors (e.g. its topic prefix `r820_sim`).
    pub name: String,
    /// The driver.
    pub driver: Arc<dyn RobotDriver>,
}

impl CompositePart {
    /// A part named `name`.
    pub fn new(name: impl Into<String>, driver: Arc<dyn RobotDriver>) -> Self {
        CompositePart {
            name: name.into(),
            driver,
        }
    }
}

/// What initialization fixed: the parts' joint counts, the composite's names and limits.
struct Layout {
    counts: Vec<usize>,
    total: usize,
    names: Vec<String>,
    limits: (Vec<f64>, Vec<f64>),
}

/// The parts' snapshots as last read, and the composite's own message count.
struct Scratch {
    parts: Vec<JointSnapshot>,
    /// Rounds so far: one more each time every part has a newer message than at the last.
    rounds: u64,
    /// Each part's sequence when the last round was counted.
    marks: Vec<u64>,
}

impl Scratch {
    /// Counts the rounds completed since the last count: as many as the part that advanced
    /// least advanced (two messages from every part since the last read: two rounds, one of
    /// them never seen). A part whose count went back (its driver was reset) starts afresh.
    fn count_rounds(&mut self) {
        let pairs = || self.parts.iter().zip(&self.marks);
        let went_back = pairs().any(|(part, &mark)| part.sequence < mark);
        let advanced = if went_back {
            0
        } else {
            pairs()
                .map(|(part, &mark)| part.sequence - mark)
                .min()
                .unwrap_or(0)
        };
        if went_back || advanced > 0 {
            self.rounds += advanced;
            for (mark, part) in self.marks.iter_mut().zip(&self.parts) {
                *mark = part.sequence;
            }
        }
    }
}

/// Several [`RobotDriver`]s as one: the parts' joints in part order. Itself a
/// [`RobotDriver`], so any control loop runs it.
///
/// * State: each part's snapshot, concatenated; velocities and efforts too. The receive
///   instant and the stamp are the oldest part's (the earliest); the sequence counts rounds in
///   which every part sent a newer message (the parts' own counts cannot be compared: a part
///   that started earlier or missed a message counts differently), so a composite
///   state is new once every part has a newer message, and staleness shows.
/// * Targets: split by each part's joint count after a check of the total length; every part
///   checks its segment before any part stores one, so a composite target is applied to all
///   parts or to none.
/// * Names: the parts' names concatenated if every part names its joints, else none.
/// * Limits: the parts' limits concatenated, or the ones given with
///   [`with_joint_limits`](Self::with_joint_limits).
pub struct RobotDriverComposite {
    parts: Vec<CompositePart>,
    ownership: PartOwnership,
    limits_override: Option<(Vec<f64>, Vec<f64>)>,
    layout: RwLock<Option<Layout>>,
    /// The parts' snapshots, read into before copying into the caller's, and the rounds.
    scratch: Mutex<Scratch>,
    /// A target was set and not yet forwarded (used with [`PartOwnership::Shared`]).
    fresh_target: AtomicBool,
}

impl RobotDriverComposite {
    /// A composite of `parts`, in that order.
    ///
    /// # Errors
    /// No parts, or two parts with the same name.
    pub fn new(parts: Vec<CompositePart>, ownership: PartOwnership) -> Result<Self, DriverError> {
        if parts.is_empty() {
            return Err(DriverError::CompositeConfiguration(
                "no robots to compose; give at least one".into(),
            ));
        }
        let mut seen = HashSet::new();
        if let Some(part) = parts.iter().find(|part| !seen.insert(part.name.as_str())) {
            return Err(DriverError::CompositeConfiguration(format!(
                "{:?} is composed twice; each robot can be a part once",
                part.name
            )));
        }
        let scratch = Scratch {
            parts: parts
                .iter()
                .map(|part| JointSnapshot::new(part.driver.joint_count()))
                .collect(),
            rounds: 0,
            marks: vec![0; parts.len()],
        };
        Ok(RobotDriverComposite {
            parts,
            ownership,
            limits_override: None,
            layout: RwLock::new(None),
            scratch: Mutex::new(scratch),
            fresh_target: AtomicBool::new(false),
        })
    }

    /// Reports `(lower, upper)` as the composite's joint limits instead of the parts' (the
    /// original's `override_joint_limits_with_robot_parameter_file`). Their length is checked
    /// against the parts' joints at initialization. The parts still check targets against
    /// their own limits.
    pub fn with_joint_limits(mut self, lower: Vec<f64>, upper: Vec<f64>) -> Self {
        self.limits_override = Some((lower, upper));
        self
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[CompositePart] {
        &self.parts
    }

    /// How the parts are run.
    pub fn ownership(&self) -> PartOwnership {
        self.ownership
    }

    fn each_part(
        &self,
        mut f: impl FnMut(&CompositePart) -> Result<(), DriverError>,
    ) -> Result<(), DriverError> {
        self.parts.iter().try_for_each(|part| {
            f(part).map_err(|error| DriverError::Part {
                part: part.name.clone(),
                error: Box::new(error),
            })
        })
    }

    /// Runs `send` on every part, even after one failed (unlike [`Self::each_part`]): whether
    /// any part sent something, or the first part's error.
    fn on_every_part(
        &self,
        send: impl Fn(&dyn RobotDriver) -> Result<bool, DriverError>,
    ) -> Result<bool, DriverError> {
        let mut sent = false;
        let mut first_error = None;
        for part in &self.parts {
            match send(part.driver.as_ref()) {
                Ok(part_sent) => sent |= part_sent,
                Err(error) => {
                    first_error.get_or_insert(DriverError::Part {
                        part: part.name.clone(),
                        error: Box::new(error),
                    });
                }
            }
        }
        first_error.map_or(Ok(sent), Err)
    }

    fn composed_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for part in &self.parts {
            let part_names = part.driver.joint_names();
            if part_names.is_empty() || part_names.len() != part.driver.joint_count() {
                return Vec::new();
            }
            names.extend(part_names);
        }
        names
    }

    fn layout_for_initialized_parts(&self) -> Result<Layout, DriverError> {
        let counts: Vec<usize> = self
            .parts
            .iter()
            .map(|part| part.driver.joint_count())
            .collect();
        let total = counts.iter().sum();
        let limits = match &self.limits_override {
            Some((lower, upper)) => {
                if lower.len() != total || upper.len() != total {
                    return Err(DriverError::CompositeConfiguration(format!(
                        "the joint limits given have {} lower and {} upper values, but the \
                         composed robots have {total} joints ({})",
                        lower.len(),
                        upper.len(),
                        self.split_description(&counts)
                    )));
                }
                (lower.clone(), upper.clone())
            }
            None => {
                let (mut lower, mut upper) = (Vec::new(), Vec::new());
                self.each_part(|part| {
                    let (part_lower, part_upper) = part.driver.get_joint_limits()?;
                    lower.extend(part_lower);
                    upper.extend(part_upper);
                    Ok(())
                })?;
                (lower, upper)
            }
        };
        Ok(Layout {
            counts,
            total,
            names: self.composed_names(),
            limits,
        })
    }

    fn split_description(&self, counts: &[usize]) -> String {
        self.parts
            .iter()
            .zip(counts)
            .map(|(part, count)| format!("{count} for {}", part.name))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// Runs `f` on each part with its segment of `target`, after the total-length check.
    fn per_segment(
        &self,
        command: Command,
        target: &[f64],
        mut f: impl FnMut(&CompositePart, &[f64]) -> Result<(), DriverError>,
    ) -> Result<(), DriverError> {
        let layout = self.layout.read();
        let Some(layout) = layout.as_ref() else {
            return Err(DriverError::CompositeNotInitialized {
                operation: command.method(),
            });
        };
        if target.len() != layout.total {
            return Err(DriverError::CompositeTargetLength {
                command,
                expected: layout.total,
                got: target.len(),
                parts: self.split_description(&layout.counts),
            });
        }
        let mut rest = target;
        let mut segments = layout.counts.iter();
        self.each_part(|part| {
            let (segment, tail) = rest.split_at(*segments.next().expect("one count per part"));
            rest = tail;
            f(part, segment)
        })
    }
}

impl RobotDriver for RobotDriverComposite {
    fn joint_names(&self) -> Vec<String> {
        match self.layout.read().as_ref() {
            Some(layout) => layout.names.clone(),
            None => self.composed_names(),
        }
    }

    fn joint_count(&self) -> usize {
        match self.layout.read().as_ref() {
            Some(layout) => layout.total,
            None => self
                .parts
                .iter()
                .map(|part| part.driver.joint_count())
                .sum(),
        }
    }

    fn connect(&self) -> Result<(), DriverError> {
        self.each_part(|part| part.driver.connect())
    }

    /// Initializes every part in turn (each blocks without polling; with shared parts this
    /// just waits for their own loops to get there), then fixes the layout.
    fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError> {
        if self.layout.read().is_some() {
            return Ok(());
        }
        self.each_part(|part| part.driver.initialize_with(shutdown))?;
        let layout = self.layout_for_initialized_parts()?;
        let mut scratch = self.scratch.lock();
        for (snapshot, &count) in scratch.parts.iter_mut().zip(&layout.counts) {
            snapshot.resize(count);
        }
        *self.layout.write() = Some(layout);
        Ok(())
    }

    fn deinitialize(&self) {
        *self.layout.write() = None;
        self.fresh_target.store(false, Ordering::SeqCst);
        if self.ownership == PartOwnership::Owned {
            for part in &self.parts {
                part.driver.deinitialize();
            }
        }
    }

    fn disconnect(&self) {
        if self.ownership == PartOwnership::Owned {
            for part in &self.parts {
                part.driver.disconnect();
            }
        }
    }

    fn read_snapshot(&self, out: &mut JointSnapshot) {
        let mut scratch = self.scratch.lock();
        let scratch = &mut *scratch;
        for (part, snapshot) in self.parts.iter().zip(scratch.parts.iter_mut()) {
            part.driver.read_snapshot(snapshot);
        }
        out.resize(scratch.parts.iter().map(JointSnapshot::joint_count).sum());
        out.received_at = scratch.parts.first().and_then(|s| s.received_at);
        out.sim_time = scratch.parts.first().and_then(|s| s.sim_time);
        let mut offset = 0;
        for snapshot in scratch.parts.iter() {
            let range = offset..offset + snapshot.joint_count();
            out.positions[range.clone()].copy_from_slice(&snapshot.positions);
            out.velocities[range.clone()].copy_from_slice(&snapshot.velocities);
            out.efforts[range.clone()].copy_from_slice(&snapshot.efforts);
            out.limits_lower[range.clone()].copy_from_slice(&snapshot.limits_lower);
            out.limits_upper[range.clone()].copy_from_slice(&snapshot.limits_upper);
            out.last_seen[range.clone()].copy_from_slice(&snapshot.last_seen);
            offset = range.end;
            out.received_at = match (out.received_at, snapshot.received_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            };
            out.sim_time = match (out.sim_time, snapshot.sim_time) {
                (Some(a), Some(b)) => Some(if (b.sec, b.nsec) < (a.sec, a.nsec) {
                    b
                } else {
                    a
                }),
                _ => None,
            };
        }
        scratch.count_rounds();
        out.sequence = scratch.rounds;
    }

    fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        self.per_segment(command, target, |part, segment| {
            part.driver.check_target(command, segment)
        })
    }

    /// Every part's segment is checked before any is set: the parts take the target all or
    /// none.
    fn set_target(&self, command: Command, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        self.check_target(command, target)?;
        let mut clamped = 0;
        self.per_segment(command, target, |part, segment| {
            if let TargetOutcome::Clamped { joints } = part.driver.set_target(command, segment)? {
                clamped += joints;
            }
            Ok(())
        })?;
        self.fresh_target.store(true, Ordering::SeqCst);
        Ok(match clamped {
            0 => TargetOutcome::Accepted,
            joints => TargetOutcome::Clamped { joints },
        })
    }

    /// The parts' refusals added up; the missing joints of every part.
    fn receive_report(&self) -> ReceiveReport {
        let mut report = ReceiveReport::default();
        for part in &self.parts {
            let part = part.driver.receive_report();
            report.incomplete += part.incomplete;
            report.with_duplicates += part.with_duplicates;
            report.missing.extend(part.missing);
            // Parts mostly share one transport node: the most any reports, not a sum of it
            // counted once per part.
            report.connections_refused = report.connections_refused.max(part.connections_refused);
        }
        report
    }

    fn command_deadline(&self) -> Option<Instant> {
        self.parts
            .iter()
            .filter_map(|part| part.driver.command_deadline())
            .min()
    }

    /// Shared parts are kept alive by their own robots' loops; owned ones by this one's.
    fn keepalive_deadline(&self) -> Option<Instant> {
        if self.ownership == PartOwnership::Shared {
            return None;
        }
        self.parts
            .iter()
            .filter_map(|part| part.driver.keepalive_deadline())
            .min()
    }

    /// Every part is stopped even if another part's stop failed.
    fn stop_rate_commands(&self) -> Result<bool, DriverError> {
        self.on_every_part(|driver| driver.stop_rate_commands())
    }

    fn forward_targets(&self) -> Result<bool, DriverError> {
        if self.ownership == PartOwnership::Shared
            && !self.fresh_target.swap(false, Ordering::SeqCst)
        {
            return Ok(false);
        }
        // Every part gets its target even if another part's forwarding failed.
        self.on_every_part(|driver| driver.forward_targets())
    }

    /// A part's new state is a new composite state: the listener runs on each part's
    /// receive thread. `None` if a part cannot notify.
    fn add_state_listener(&self, listener: StateListener) -> Option<StateListenerGuard> {
        let guards = self
            .parts
            .iter()
            .map(|part| part.driver.add_state_listener(listener.clone()))
            .collect::<Option<Vec<_>>>()?;
        Some(StateListenerGuard::merge(guards))
    }

    fn state_source(&self) -> String {
        let sources: Vec<String> = self.parts.iter().map(|p| p.driver.state_source()).collect();
        sources.join(", ")
    }

    fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError> {
        match self.layout.read().as_ref() {
            Some(layout) => Ok(layout.limits.clone()),
            None => Err(DriverError::CompositeNotInitialized {
                operation: "get_joint_limits",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(sequences: &[u64]) -> Scratch {
        Scratch {
            parts: sequences
                .iter()
                .map(|&sequence| JointSnapshot {
                    sequence,
                    ..JointSnapshot::new(1)
                })
                .collect(),
            rounds: 0,
            marks: vec![0; sequences.len()],
        }
    }

    fn advance(scratch: &mut Scratch, sequences: &[u64]) -> u64 {
        for (part, &sequence) in scratch.parts.iter_mut().zip(sequences) {
            part.sequence = sequence;
        }
        scratch.count_rounds();
        scratch.rounds
    }

    #[test]
    fn a_round_needs_a_newer_message_from_every_part_whatever_their_own_counts() {
        // The first part started long before the second: its count is far ahead.
        let mut scratch = scratch(&[500, 3]);
        scratch.count_rounds();
        let start = scratch.rounds;
        // Either part alone, in either order, is not a new composite state.
        assert_eq!(advance(&mut scratch, &[501, 3]), start);
        assert_eq!(advance(&mut scratch, &[501, 4]), start + 1);
        assert_eq!(advance(&mut scratch, &[501, 5]), start + 1);
        assert_eq!(advance(&mut scratch, &[502, 5]), start + 2);
        // Two messages from each since the last read: two rounds (one never seen).
        assert_eq!(advance(&mut scratch, &[504, 7]), start + 4);
        // One part missed a message: the round completes when both have a newer one.
        assert_eq!(advance(&mut scratch, &[505, 7]), start + 4);
        assert_eq!(advance(&mut scratch, &[506, 8]), start + 5);
    }

    #[test]
    fn a_part_whose_count_went_back_starts_afresh() {
        let mut scratch = scratch(&[10, 10]);
        scratch.count_rounds();
        assert_eq!(scratch.rounds, 10);
        assert_eq!(advance(&mut scratch, &[11, 1]), 10);
        assert_eq!(advance(&mut scratch, &[12, 2]), 11);
    }
}
