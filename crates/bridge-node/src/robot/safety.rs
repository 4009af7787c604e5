//! The two topics a SmartArmStack controller stops a robot with, and the safe stop:
//! `<robot>/set/watchdog_trigger` (`sas_msgs/msg/WatchdogTrigger`) feeds the robot's
//! [`Watchdog`], which the robot's duties check once per period while Gazebo sends and the
//! loop at the watchdog's deadline (through [`Safety::watchdog`]); `<robot>/set/shutdown`
//! (`sas_msgs/msg/Bool`, `data: true`) ends this robot's loop as a stop does. On a watchdog
//! fault the duties call [`stop_safely`](crate::robot::safe_stop::stop_safely) and the loop
//! ends with the error it returns.
//!
//! Each robot has a stop token of its own, triggered by `set/shutdown` and by the process's
//! token: `set/shutdown` then stops this robot's loop at once (also while it waits for
//! Gazebo), and in a process with several robots only this one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use listener_subscription::ListenerSubscription;
use parking_lot::Mutex;
use rclrs::Node;
use ros_env::sas_msgs::msg::{Bool as ShutdownSignal, WatchdogTrigger};
use sas_robot_driver_gazebo::{ShutdownToken, TriggerListener};

use crate::robot::alarm::Alarm;
use crate::robot::server::subscribe;
use crate::robot::watchdog::{Trigger, TriggerOutcome, Watchdog};
use crate::BridgeError;

/// The watchdog and shutdown subscriptions of one robot, and its stop token.
pub(crate) struct Safety {
    watchdog: Arc<Mutex<Watchdog>>,
    stop: ShutdownToken,
    _process_stop: TriggerListener,
    _watchdog_trigger: ListenerSubscription<WatchdogTrigger>,
    _shutdown: ListenerSubscription<ShutdownSignal>,
}

impl Safety {
    /// Subscribes `<robot_name>/set/watchdog_trigger` and `<robot_name>/set/shutdown` (their
    /// callbacks on the DDS listener thread); the robot's stop token follows `process_stop`. `loop_alarm` is rung when a
    /// trigger arms the watchdog or faults it, so the loop learns the new deadline at once.
    pub fn new(
        node: &Node,
        robot_name: &str,
        process_stop: &ShutdownToken,
        loop_alarm: Arc<Alarm>,
    ) -> Result<Self, BridgeError> {
        let stop = ShutdownToken::new();
        let follower = stop.clone();
        let process_listener = process_stop.on_trigger(Arc::new(move || follower.trigger()));
        if process_stop.is_triggered() {
            stop.trigger();
        }

        let watchdog = Arc::new(Mutex::new(Watchdog::new()));
        let fed = watchdog.clone();
        let robot = robot_name.to_string();
        let watchdog_topic = format!("{robot_name}/set/watchdog_trigger");
        let watchdog_trigger = subscribe(node, &watchdog_topic, move |m: WatchdogTrigger, _| {
            let outcome = fed.lock().trigger(received(&m));
            if matches!(
                outcome,
                TriggerOutcome::Armed { .. } | TriggerOutcome::Faulted
            ) {
                loop_alarm.wake_by(Instant::now());
            }
            if let TriggerOutcome::Armed {
                period_sec,
                maximum_delay_sec,
            } = outcome
            {
                let _span = tracing::info_span!("robot", name = %robot).entered();
                tracing::info!("::Watchdog initialized with a {period_sec} second period");
                tracing::info!(
                    "::Watchdog initialized with a maximum acceptable delay of \
                     {maximum_delay_sec} seconds"
                );
            }
        })?;

        let received_once = AtomicBool::new(false);
        let robot = robot_name.to_string();
        let stopped = stop.clone();
        let shutdown_topic = format!("{robot_name}/set/shutdown");
        let shutdown = subscribe(node, &shutdown_topic, move |m: ShutdownSignal, _| {
            if m.data && !received_once.swap(true, Ordering::SeqCst) {
                let _span = tracing::info_span!("robot", name = %robot).entered();
                tracing::info!("::The shutdown signal was received! Stopping the control loop.");
                stopped.trigger();
            }
        })?;

        Ok(Safety {
            watchdog,
            stop,
            _process_stop: process_listener,
            _watchdog_trigger: watchdog_trigger,
            _shutdown: shutdown,
        })
    }

    /// This robot's stop token: triggered by `set/shutdown` or the process's token.
    pub fn stop_token(&self) -> &ShutdownToken {
        &self.stop
    }

    /// The shared watchdog, for a reader on another thread (diagnostics).
    pub fn watchdog(&self) -> Arc<Mutex<Watchdog>> {
        self.watchdog.clone()
    }
}

/// A trigger as the watchdog takes it: its delay is our wall clock at arrival minus its
/// stamp, as the original compared them (a SmartArmStack client stamps with the system
/// clock).
fn received(message: &WatchdogTrigger) -> Trigger {
    let stamp = &message.header.stamp;
    let stamp_sec = f64::from(stamp.sec) + f64::from(stamp.nanosec) * 1e-9;
    let now_sec = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64());
    Trigger {
        status: message.status,
        period_sec: message.period_in_seconds,
        maximum_delay_sec: message.maximum_acceptable_delay_in_seconds,
        delay_sec: now_sec - stamp_sec,
        received: Instant::now(),
    }
}
