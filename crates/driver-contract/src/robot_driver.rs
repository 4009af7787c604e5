//! The driver abstraction a control loop runs (the original's `sas::RobotDriver`): lifecycle,
//! one consistent state snapshot per period, targets in. The Gazebo driver implements it, and
//! so do composites of drivers and clients of drivers over ROS, so one loop (the ROS node's,
//! the Python module's) serves any of them.

use std::time::Instant;

use crate::{
    Command, DriverError, JointSnapshot, ShutdownToken, StateListener, StateListenerGuard,
    TargetOutcome,
};

/// What the receive path refused of the robot's state messages (the Gazebo driver's
/// `ModelReceiver`, for one), for diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiveReport {
    /// Messages not taken because they lacked a configured joint.
    pub incomplete: u64,
    /// Messages that named a joint more than once (the first entry taken).
    pub with_duplicates: u64,
    /// The configured joints the latest message lacked (empty: it was complete).
    pub missing: Vec<String>,
    /// Connections the robot's transport refused, or was refused, for their security
    /// (credentials or mechanism), both ways, so far.
    pub connections_refused: u64,
}

/// What a control loop needs from a robot, free of any middleware. Every method takes `&self`
/// and implementations are `Send + Sync`: a loop thread, an executor thread and other robots'
/// loops may call into one driver at the same time.
///
/// Lifecycle as the original's: `connect` → `initialize_with` → periods of
/// `set_target`/`forward_targets`/`read_snapshot` → `deinitialize` →
/// `disconnect`. Drivers that learn their joints from the robot (a client of another driver)
/// know their joint names and count only once initialized.
pub trait RobotDriver: Send + Sync {
    /// Joint names in the order of every vector the driver takes or returns; empty when the
    /// robot does not name its joints (or before `initialize_with` for drivers that learn
    /// them then).
    fn joint_names(&self) -> Vec<String>;

    /// Number of joints (valid once initialized for drivers that learn their joints).
    fn joint_count(&self) -> usize;

    /// Creates the links to the robot. Idempotent.
    ///
    /// # Errors
    /// The links could not be created.
    fn connect(&self) -> Result<(), DriverError>;

    /// Blocks, without polling, until the robot's state and limits are known; `shutdown`
    /// cancels the wait ([`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled)). Idempotent.
    ///
    /// # Errors
    /// Not connected, cancelled, or timed out.
    fn initialize_with(&self, shutdown: &ShutdownToken) -> Result<(), DriverError>;

    /// Leaves the initialized state; targets are refused again. Safe in any state.
    fn deinitialize(&self);

    /// Drops the links to the robot. Idempotent, safe in any state.
    fn disconnect(&self);

    /// Copies the latest state (positions, velocities, efforts, limits as last seen) into
    /// `out`, resizing it to [`joint_count`](Self::joint_count). Never blocks the producer of
    /// the state; allocates nothing once `out` has the right size.
    fn read_snapshot(&self, out: &mut JointSnapshot);

    /// Checks a target of `command` as [`set_target`](Self::set_target) would, without
    /// storing it: lets a caller that commands several drivers apply a target to all of them
    /// or to none.
    ///
    /// # Errors
    /// Why `set_target` would refuse it.
    fn check_target(&self, command: Command, target: &[f64]) -> Result<(), DriverError>;

    /// Validates and stores a target of `command` (positions, velocities or efforts) for
    /// [`forward_targets`](Self::forward_targets): the one way a target enters a driver; the
    /// latest mode wins and a refused target leaves the previous one in force. A velocity or
    /// effort target stays in force until [`command_deadline`](Self::command_deadline), when
    /// `forward_targets` sets it to zero. A driver without velocity or effort control refuses
    /// them ([`DriverError::UnsupportedCommand`]).
    ///
    /// # Errors
    /// The target is refused (length, non-finite value, limits, state, no controller, a
    /// mode the driver does not offer).
    fn set_target(&self, command: Command, target: &[f64]) -> Result<TargetOutcome, DriverError>;

    /// When the velocity or effort target in force times out, if one is: a control loop
    /// calls [`forward_targets`](Self::forward_targets) then, which sends zero.
    fn command_deadline(&self) -> Option<Instant> {
        None
    }

    /// When [`forward_targets`](Self::forward_targets) sends the target again by time alone
    /// (its keepalive), by the driver's own record of its last send — whoever called it.
    /// `None`: not by time (no target, no keepalive, or another loop keeps it alive).
    fn keepalive_deadline(&self) -> Option<Instant> {
        None
    }

    /// Sets a velocity or effort command in force to zero now (a watchdog fault); returns
    /// whether it sent.
    ///
    /// # Errors
    /// Sending failed.
    fn stop_rate_commands(&self) -> Result<bool, DriverError> {
        Ok(false)
    }

    /// Sends the stored target to the robot if the driver's forwarding rule says so; returns
    /// whether it sent. The control loop calls this every period.
    ///
    /// # Errors
    /// Not connected, or sending failed.
    fn forward_targets(&self) -> Result<bool, DriverError>;

    /// `(lower, upper)` joint limits, as captured at initialization.
    ///
    /// # Errors
    /// Not initialized.
    fn get_joint_limits(&self) -> Result<(Vec<f64>, Vec<f64>), DriverError>;

    /// Runs `listener` after every new state (on the thread that received it) while the
    /// guard lives; `None` if the driver cannot tell when its state changes (a loop then
    /// reads it every period).
    fn add_state_listener(&self, listener: StateListener) -> Option<StateListenerGuard> {
        let _ = listener;
        None
    }

    /// Where the state comes from, for log lines (e.g. the Gazebo topic).
    fn state_source(&self) -> String {
        "the robot".into()
    }

    /// What the receive path refused so far; nothing for a driver that refuses nothing.
    fn receive_report(&self) -> ReceiveReport {
        ReceiveReport::default()
    }
}
