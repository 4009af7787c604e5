//! Zero for a velocity or effort target whose timeout passed while no control loop forwards
//! the driver's targets (a script that drives `RobotDriverGazebo` itself and then stops
//! sending, hangs or forgets): a thread, started with the first such target, that sleeps
//! until the driver's command deadline and lets the driver send the zero then. With a
//! control loop running too, whichever comes first sends it (the driver sends it once).

use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

use sas_robot_driver_gazebo::RobotDriverGazebo as Core;

#[derive(Default)]
struct Shared {
    stop: Mutex<bool>,
    changed: Condvar,
}

pub(crate) struct CommandTimer {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl CommandTimer {
    pub fn new() -> Self {
        CommandTimer {
            shared: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// A velocity or effort target was stored: (re)computes the deadline, starting the
    /// thread the first time.
    pub fn target_set(&self, core: &Arc<Core>) {
        let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
        if thread.is_none() {
            let (core, shared) = (Arc::downgrade(core), self.shared.clone());
            *thread = std::thread::Builder::new()
                .name("sas-command-timer".into())
                .spawn(move || run(&core, &shared))
                .ok();
        }
        drop(thread);
        self.shared.changed.notify_all();
    }
}

fn run(core: &Weak<Core>, shared: &Shared) {
    let mut stop = shared.stop.lock().unwrap_or_else(PoisonError::into_inner);
    while !*stop {
        let Some(driver) = core.upgrade() else { return };
        let deadline = driver.command_deadline();
        drop(driver);
        match deadline {
            None => {
                stop = shared
                    .changed
                    .wait(stop)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            Some(deadline) => {
                let wait = deadline.saturating_duration_since(Instant::now());
                let (guard, waited) = shared
                    .changed
                    .wait_timeout(stop, wait)
                    .unwrap_or_else(PoisonError::into_inner);
                stop = guard;
                if waited.timed_out() && !*stop {
                    if let Some(driver) = core.upgrade() {
                        if let Err(err) = driver.forward_targets() {
                            tracing::error!(
                                "RobotDriverGazebo: could not send the zero after the command \
                                 timeout: {err}"
                            );
                        }
                    }
                }
            }
        }
    }
}

impl Drop for CommandTimer {
    fn drop(&mut self) {
        *self
            .shared
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.shared.changed.notify_all();
        let thread = self
            .thread
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}
