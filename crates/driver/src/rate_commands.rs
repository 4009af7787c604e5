//! The rules of the two command modes that set a rate rather than a place: a velocity or
//! effort command is sent when it arrives and set back to zero when no new one came within
//! the command timeout, so that it never stays latched in Gazebo after its client died. Pure
//! state: the driver asks it what to send and sends it.

use std::time::{Duration, Instant};

use crate::Command;

const RATE_MODES: [Command; 2] = [Command::Velocities, Command::Forces];

/// What the driver must send for the rate modes now.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RateSend {
    /// The stored target, on this mode's topics.
    Target(Command),
    /// Zero on every joint of this mode's topics (a timeout, a switch of mode, a stop).
    Zero(Command),
}

/// The latest mode, the velocity/effort target and which rate commands are in force in
/// Gazebo. Latest mode wins: a target of another mode replaces the rate command in force,
/// which is set to zero.
#[derive(Debug)]
pub(crate) struct RateCommands {
    timeout: Duration,
    /// The mode of the latest accepted target (positions before any).
    latest: Command,
    /// The latest velocity or effort target (of mode `latest` while that is a rate mode).
    pub values: Vec<f64>,
    /// When it was accepted; `None` once it timed out or was replaced.
    accepted_at: Option<Instant>,
    /// Bumped on every accepted rate target; `sent` is the one last sent.
    generation: u64,
    sent: u64,
    /// Per rate mode: a zero is owed to its topics.
    zero_owed: [bool; 2],
    /// Per rate mode: a command other than the last zero was sent to its topics.
    in_force: [bool; 2],
    /// The mode whose target timed out in the last [`due`](Self::due), for the log.
    pub timed_out: Option<Command>,
}

impl RateCommands {
    pub fn new(joint_count: usize, timeout: Duration) -> Self {
        RateCommands {
            timeout,
            latest: Command::Positions,
            values: vec![0.0; joint_count],
            accepted_at: None,
            generation: 0,
            sent: 0,
            zero_owed: [false; 2],
            in_force: [false; 2],
            timed_out: None,
        }
    }

    /// A target of `command` was accepted at `now` (a rate target's values are already in
    /// [`values`](Self::values)): it becomes the latest mode, and a rate command in force in
    /// another mode is owed a zero.
    pub fn accepted(&mut self, command: Command, now: Instant) {
        for mode in RATE_MODES {
            if mode != command {
                self.owe_zero(mode);
            }
        }
        self.latest = command;
        if command.rate_index().is_some() {
            self.accepted_at = Some(now);
            self.generation += 1;
        } else {
            self.accepted_at = None;
        }
    }

    fn owe_zero(&mut self, mode: Command) {
        let index = mode.rate_index().expect("a rate mode");
        if self.in_force[index] {
            self.zero_owed[index] = true;
        }
    }

    /// When the rate target in force times out (and is set to zero), if one is.
    pub fn deadline(&self) -> Option<Instant> {
        self.accepted_at.map(|at| at + self.timeout)
    }

    /// What to send at `now`, in order; marks it sent. `every_call`: the stored rate target
    /// again even if unchanged (the original's every-period forwarding).
    pub fn due(&mut self, now: Instant, every_call: bool) -> Vec<RateSend> {
        let mut sends = Vec::new();
        self.timed_out = None;
        if self.deadline().is_some_and(|deadline| now >= deadline) {
            self.accepted_at = None;
            self.owe_zero(self.latest);
            self.timed_out = Some(self.latest);
        }
        for mode in RATE_MODES {
            let index = mode.rate_index().expect("a rate mode");
            if std::mem::take(&mut self.zero_owed[index]) {
                self.in_force[index] = false;
                sends.push(RateSend::Zero(mode));
            }
        }
        let fresh = self.generation != self.sent || every_call;
        if let (Some(index), Some(_), true) = (self.latest.rate_index(), self.accepted_at, fresh) {
            self.sent = self.generation;
            self.in_force[index] = true;
            sends.push(RateSend::Target(self.latest));
        }
        sends
    }

    /// A stop (a watchdog fault, a shutdown): zero owed to every rate mode in force; the
    /// stored target is dropped.
    pub fn stop(&mut self) {
        self.accepted_at = None;
        for mode in RATE_MODES {
            self.owe_zero(mode);
        }
    }

    /// Whether the position target is the one in force (positions are re-sent, as keepalive
    /// or to a new subscriber, only then).
    pub fn positions_in_force(&self) -> bool {
        self.latest == Command::Positions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn commands() -> (RateCommands, Instant) {
        (RateCommands::new(2, 100 * MS), Instant::now())
    }

    #[test]
    fn a_velocity_target_is_sent_once_on_arrival_and_zeroed_at_the_timeout() {
        let (mut rates, t0) = commands();
        assert_eq!(rates.due(t0, false), []);
        rates.accepted(Command::Velocities, t0);
        assert_eq!(rates.deadline(), Some(t0 + 100 * MS));
        assert_eq!(
            rates.due(t0, false),
            [RateSend::Target(Command::Velocities)]
        );
        assert_eq!(rates.due(t0 + 50 * MS, false), []);
        assert_eq!(
            rates.due(t0 + 100 * MS, false),
            [RateSend::Zero(Command::Velocities)]
        );
        assert_eq!(rates.timed_out, Some(Command::Velocities));
        // Zero once, then idle: no deadline, nothing more.
        assert_eq!(rates.deadline(), None);
        assert_eq!(rates.due(t0 + 200 * MS, false), []);
    }

    #[test]
    fn each_new_target_moves_the_deadline() {
        let (mut rates, t0) = commands();
        rates.accepted(Command::Forces, t0);
        rates.due(t0, false);
        rates.accepted(Command::Forces, t0 + 80 * MS);
        assert_eq!(
            rates.due(t0 + 80 * MS, false),
            [RateSend::Target(Command::Forces)]
        );
        assert_eq!(rates.due(t0 + 150 * MS, false), []);
        assert_eq!(rates.deadline(), Some(t0 + 180 * MS));
        assert_eq!(
            rates.due(t0 + 180 * MS, false),
            [RateSend::Zero(Command::Forces)]
        );
    }

    #[test]
    fn a_switch_of_mode_zeroes_the_rate_command_in_force_first() {
        let (mut rates, t0) = commands();
        rates.accepted(Command::Velocities, t0);
        rates.due(t0, false);
        rates.accepted(Command::Forces, t0 + MS);
        assert_eq!(
            rates.due(t0 + MS, false),
            [
                RateSend::Zero(Command::Velocities),
                RateSend::Target(Command::Forces)
            ]
        );
        rates.accepted(Command::Positions, t0 + 2 * MS);
        assert!(rates.positions_in_force());
        assert_eq!(
            rates.due(t0 + 2 * MS, false),
            [RateSend::Zero(Command::Forces)]
        );
        assert_eq!(rates.deadline(), None);
        // Nothing was in force in velocity mode any more: no second zero.
        assert_eq!(rates.due(t0 + 3 * MS, false), []);
    }

    #[test]
    fn positions_then_velocities_leaves_the_positions_alone() {
        let (mut rates, t0) = commands();
        rates.accepted(Command::Positions, t0);
        assert_eq!(rates.due(t0, false), []);
        rates.accepted(Command::Velocities, t0 + MS);
        assert!(!rates.positions_in_force());
        assert_eq!(
            rates.due(t0 + MS, false),
            [RateSend::Target(Command::Velocities)]
        );
    }

    #[test]
    fn a_stop_zeroes_whatever_is_in_force_and_only_that() {
        let (mut rates, t0) = commands();
        rates.stop();
        assert_eq!(rates.due(t0, false), []);
        rates.accepted(Command::Velocities, t0);
        rates.due(t0, false);
        rates.stop();
        assert_eq!(
            rates.due(t0 + MS, false),
            [RateSend::Zero(Command::Velocities)]
        );
        assert_eq!(rates.deadline(), None);
    }

    #[test]
    fn every_call_forwarding_repeats_the_target_until_the_timeout() {
        let (mut rates, t0) = commands();
        rates.accepted(Command::Velocities, t0);
        for k in 0..5 {
            assert_eq!(
                rates.due(t0 + k * 2 * MS, true),
                [RateSend::Target(Command::Velocities)]
            );
        }
        assert_eq!(
            rates.due(t0 + 100 * MS, true),
            [RateSend::Zero(Command::Velocities)]
        );
        assert_eq!(rates.due(t0 + 102 * MS, true), []);
    }
}
