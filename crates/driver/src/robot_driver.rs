//! [`RobotDriverGazebo`] as the sas driver contract's [`RobotDriver`].

use std::time::Instant;

use crate::{
    Command, DriverError, JointSnapshot, ReceiveReport, RobotDriver, RobotDriverGazebo,
    ShutdownToken, StateListener, StateListenerGuard, TargetOutcome,
};

impl RobotDriver for RobotDriverGazebo {
    fn joint_names(&self) -> Vec<String> {
        self.configuration().joint_names.clone()
    }

    fn joint_count(&self) -> usize {
        RobotDriverGazebo::joint_count(self)
    }

    fn connect(&self) -> Result<(), DriverError> {
        RobotDriverGazebo::connect(self)
    }

    fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError> {
        RobotDriverGazebo::initialize_with(self, shutdown)
    }

    fn deinitialize(&self) {
        RobotDriverGazebo::deinitialize(self)
    }

    fn disconnect(&self) {
        RobotDriverGazebo::disconnect(self)
    }

    fn read_snapshot(&self, out: &mut JointSnapshot) {
        RobotDriverGazebo::read_snapshot(self, out)
    }

    fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError> {
        RobotDriverGazebo::check_target(self, command, target)
    }

    fn set_target(&self, command: Command, target: &[f64]) -> Result<TargetOutcome, DriverError> {
        RobotDriverGazebo::set_target(self, command, target)
    }

    fn command_deadline(&self) -> Option<Instant> {
        RobotDriverGazebo::command_deadline(self)
    }

    fn keepalive_deadline(&self) -> Option<Instant> {
        RobotDriverGazebo::keepalive_deadline(self)
    }

    fn stop_rate_commands(&self) -> Result<bool, DriverError> {
        RobotDriverGazebo::stop_rate_commands(self)
    }

    fn forward_targets(&self) -> Result<bool, DriverError> {
        RobotDriverGazebo::forward_targets(self)
    }

    fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError> {
        RobotDriverGazebo::get_joint_limits(self)
    }

    fn add_state_listener(&self, listener: StateListener) -> Option<StateListenerGuard> {
        Some(RobotDriverGazebo::add_state_listener(self, listener))
    }

    fn state_source(&self) -> String {
        self.configuration().joint_states_topic.clone()
    }

    fn receive_report(&self) -> ReceiveReport {
        ReceiveReport {
            incomplete: self.incomplete_joint_states(),
            with_duplicates: self.joint_states_with_duplicates(),
            missing: self.absent_joints(),
            connections_refused: self.node().stats().connections_refused,
        }
    }
}
