//! The safe stop after a watchdog fault ([`stop_safely`]): a velocity or effort command in
//! force set to zero, the robot held at its last measured position.

use sas_robot_driver_gazebo::{Command, DriverError, JointSnapshot, RobotDriver};

use crate::robot::watchdog::WatchdogFault;
use crate::BridgeError;

/// After a watchdog fault: sets a velocity or effort command in force to zero and holds the
/// robot at its last measured position (both sent to Gazebo now), and logs why; returns the
/// error the loop ends with.
pub(crate) fn stop_safely<D: RobotDriver + ?Sized>(
    driver: &D,
    robot_name: &str,
    fault: WatchdogFault,
    limits: (&[f64], &[f64]),
    snapshot: &mut JointSnapshot,
) -> BridgeError {
    // A velocity or effort command would keep the robot moving whatever position is held.
    if let Err(err) = driver.stop_rate_commands() {
        tracing::error!(
            "::Watchdog fault::{fault} Could not set the velocity/effort command to zero: {err}."
        );
    }
    let held = match hold_position(driver, limits, snapshot) {
        Ok(position) => {
            tracing::error!(
                "::Watchdog fault::{fault} Holding the last measured position {position:?} \
                 and stopping."
            );
            "holding its last measured position".to_string()
        }
        Err(err) => {
            tracing::error!(
                "::Watchdog fault::{fault} Could not hold the last measured position: {err}. \
                 Stopping."
            );
            format!("could not hold its last measured position: {err}")
        }
    };
    BridgeError::Watchdog {
        robot_name: robot_name.to_string(),
        fault,
        held,
    }
}

/// Makes the robot hold still: its last measured position, clamped into `limits` (so that
/// neither limit policy refuses it), becomes the target and is forwarded at once. Returns the
/// position held.
///
/// # Errors
/// A joint without a measured position (nothing is sent then), or the driver refused or
/// could not forward the target.
fn hold_position<D: RobotDriver + ?Sized>(
    driver: &D,
    (lower, upper): (&[f64], &[f64]),
    snapshot: &mut JointSnapshot,
) -> Result<Vec<f64>, DriverError> {
    driver.read_snapshot(snapshot);
    let hold: Vec<f64> = snapshot
        .positions
        .iter()
        .zip(lower.iter().zip(upper))
        // A NaN (a joint never measured) stays NaN, for the driver to refuse naming it:
        // `max`/`min` would turn it into a limit.
        .map(|(&position, (&lower, &upper))| {
            if position.is_finite() {
                position.max(lower).min(upper)
            } else {
                position
            }
        })
        .collect();
    driver.set_target(Command::Positions, &hold)?;
    driver.forward_targets()?;
    Ok(hold)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use gz_transport::msgs::{Axis, Double, Joint, Model};
    use gz_transport::{MessageInfo, Node, NodeOptions};
    use sas_robot_driver_gazebo::{
        DriverState, JointSnapshot, RobotDriverGazebo, RobotDriverGazeboConfiguration,
    };

    use super::*;

    const PATIENCE: Duration = Duration::from_secs(20);

    /// The fault's own stop, not the de-initialisation that follows it in the loop (which
    /// sets a rate command in force to zero too, and so would hide a fault that did not):
    /// against a gz-transport peer playing Gazebo, the velocity in force is zeroed and the
    /// measured position held while the driver is still initialized.
    #[test]
    fn a_fault_zeroes_the_velocity_in_force_and_holds_the_position_before_deinitialize() {
        std::env::set_var("GZ_IP", "127.0.0.1");
        std::env::set_var("IGN_IP", "127.0.0.1");
        let partition = format!("safety_{}", std::process::id());
        let gazebo = Node::with_options(NodeOptions {
            partition: Some(partition.clone()),
            ..Default::default()
        })
        .unwrap();
        let log: Arc<Mutex<Vec<(&'static str, f64)>>> = Arc::default();
        let on = |topic: &'static str, suffix: &'static str| {
            let log = log.clone();
            gazebo
                .subscribe(topic, move |command: Double, _: &MessageInfo| {
                    log.lock().unwrap().push((suffix, command.data))
                })
                .unwrap()
        };
        let _subscriptions = [
            on("/safety/j/0/cmd_pos", "cmd_pos"),
            on("/safety/j/cmd_vel", "cmd_vel"),
        ];
        let states = gazebo.advertise::<Model>("/safety/joint_state").unwrap();
        let mut config =
            RobotDriverGazeboConfiguration::new(["j"], "/safety/", "/safety/joint_state");
        config.partition = Some(partition);
        config.command_timeout = Duration::from_secs(60);
        let driver = RobotDriverGazebo::new(config, None).unwrap();
        driver.connect().unwrap();
        assert!(states.wait_for_subscribers(PATIENCE));
        let publishing = AtomicBool::new(true);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let model = Model {
                    joint: vec![Joint {
                        name: "j".into(),
                        axis1: Some(Axis {
                            position: 0.25,
                            limit_lower: -1.0,
                            limit_upper: 1.0,
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                };
                while publishing.load(Ordering::Relaxed) {
                    states.publish(&model).unwrap();
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            driver.initialize().unwrap();
            publishing.store(false, Ordering::Relaxed);
        });
        driver.set_target_joint_velocities(&[0.5]).unwrap();
        driver.forward_targets().unwrap();
        let mut snapshot = JointSnapshot::new(1);
        stop_safely(
            &driver,
            "r",
            WatchdogFault::StatusFalse,
            (&[-1.0], &[1.0]),
            &mut snapshot,
        );
        let deadline = Instant::now() + PATIENCE;
        while log.lock().unwrap().len() < 3 {
            assert!(Instant::now() < deadline, "only {:?}", log.lock().unwrap());
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(
            *log.lock().unwrap(),
            [("cmd_vel", 0.5), ("cmd_vel", 0.0), ("cmd_pos", 0.25)]
        );
        assert_eq!(driver.state(), DriverState::Initialized);
        driver.disconnect();
    }
}
