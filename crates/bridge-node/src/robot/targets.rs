//! A target on its way to Gazebo: on the DDS listener thread that received it
//! ([`Core::target_arrived`], [`Core::rate_target_arrived`]), or from the mailbox in the
//! duties under `target_forwarding: periodic`. The driver validates it and says when it is
//! due again (keepalive, resending); refusals and failures are logged, rate-limited.

use std::sync::atomic::Ordering;
use std::time::Instant;

use sas_robot_driver_gazebo::{Command, RobotDriver, TargetOutcome};

use crate::robot::core::Core;
use crate::robot::counters::bump;
use crate::robot::rate_limit::suppressed_note;
use crate::TargetForwarding;

impl<D: RobotDriver + ?Sized> Core<D> {
    /// A target from `set/target_joint_positions` under [`TargetForwarding::OnArrival`]:
    /// validated and sent to Gazebo now, on the DDS listener thread that took it.
    pub fn target_arrived(&self, target: &[f64]) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // the watchdog's hold stays the target
        }
        // On the command path now: the same priority as the loop and receive threads.
        self.prioritise_once(
            &self.listener_thread_prioritised,
            "the DDS listener thread (targets forwarded on arrival)",
        );
        let now = Instant::now();
        // The driver's own lines (a clamp warning) name the robot too.
        self.in_span(|| {
            if self.apply_target(Command::Positions, target, now) {
                self.forward_target(now);
            }
        });
    }

    /// A target from `set/target_joint_velocities` or `set/target_joint_forces`: validated
    /// and sent to Gazebo now, on the DDS listener thread that took it; the loop's alarm is set to
    /// its timeout, when zero is sent unless a newer target came.
    pub fn rate_target_arrived(&self, command: Command, target: &[f64]) {
        if self.faulted.load(Ordering::SeqCst) {
            return; // zero stays in force
        }
        // The command path as for positions: the same priority as the loop and receive threads.
        self.prioritise_once(
            &self.listener_thread_prioritised,
            "the DDS listener thread (targets forwarded on arrival)",
        );
        let now = Instant::now();
        self.in_span(|| {
            if self.apply_target(command, target, now) {
                self.forward_target(now);
            }
        });
        if let Some(deadline) = self.driver.command_deadline() {
            self.alarm.wake_by(deadline);
        }
    }

    /// Lets the driver send the target if its rule says so; a send starts the keepalive.
    pub(super) fn forward_target(&self, now: Instant) {
        match self.driver.forward_targets() {
            Ok(false) => {}
            Ok(true) => {
                if self.config.target_forwarding == TargetForwarding::OnArrival {
                    if let Some(at) = self.driver.keepalive_deadline() {
                        self.alarm.wake_by(at);
                    }
                }
            }
            Err(err) => {
                let permit = self.forwarding.lock().failed_log.permit(now);
                if let Some(suppressed) = permit {
                    self.in_span(|| {
                        tracing::error!(
                            "::Forwarding the target to Gazebo failed::{err}{}",
                            suppressed_note(suppressed)
                        )
                    });
                }
            }
        }
    }

    /// Hands a target to the driver (which validates it); true if accepted.
    pub(super) fn apply_target(&self, command: Command, target: &[f64], now: Instant) -> bool {
        match self.driver.set_target(command, target) {
            Ok(outcome) => {
                bump(&self.counters.targets_accepted);
                if matches!(outcome, TargetOutcome::Clamped { .. }) {
                    bump(&self.counters.targets_clamped);
                }
                true
            }
            Err(err) => {
                bump(&self.counters.targets_refused);
                if let Some(suppressed) = self.forwarding.lock().refused_log.permit(now) {
                    self.in_span(|| {
                        tracing::error!(
                            "::Target refused::{err} The previous target stays in force.{}",
                            suppressed_note(suppressed)
                        )
                    });
                }
                false
            }
        }
    }
}
