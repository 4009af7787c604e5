//! Zero for a velocity or effort target whose timeout passed while no control loop forwards
//! the driver's targets (a script that drives a [`RobotDriverGazebo`] itself and then stops
//! sending, hangs or forgets): a thread, started with the first such target, that sleeps
//! until the driver's command deadline and lets the driver send the zero then. With a
//! control loop running too, whichever comes first sends it (the driver sends it once).
//!
//! The one rule that makes it safe: the thread reads the deadline and starts waiting while it
//! holds the `stop` mutex, and [`CommandTimer::target_set`] signals while holding it too. A
//! signal sent without the mutex could fall between the thread's read of an old deadline (or
//! none) and its wait, and be lost: the new command would then wait for the next event, and
//! a client that died right after it would leave its joint moving.

use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::RobotDriverGazebo;

#[derive(Default)]
struct Shared {
    stop: Mutex<bool>,
    changed: Condvar,
}

/// Sends the zero of a timed-out velocity or effort command for a driver no control loop
/// forwards for. Call [`target_set`](Self::target_set) after every accepted velocity or effort
/// target; dropping the timer stops its thread.
pub struct CommandTimer {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Default for CommandTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl CommandTimer {
    /// A timer with no thread yet.
    pub fn new() -> Self {
        CommandTimer {
            shared: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// A velocity or effort target was stored in `driver`: (re)computes the deadline,
    /// starting the thread the first time. The thread holds only a weak reference: it ends
    /// when the driver is dropped.
    pub fn target_set(&self, driver: &Arc<RobotDriverGazebo>) {
        let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
        if thread.is_none() {
            let (driver, shared) = (Arc::downgrade(driver), self.shared.clone());
            *thread = std::thread::Builder::new()
                .name("sas-command-timer".into())
                .spawn(move || run(&driver, &shared))
                .ok();
        }
        drop(thread);
        // Under the mutex: see the module documentation.
        let _stop = self
            .shared
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.shared.changed.notify_all();
    }
}

fn run(driver: &Weak<RobotDriverGazebo>, shared: &Shared) {
    let mut stop = shared.stop.lock().unwrap_or_else(PoisonError::into_inner);
    while !*stop {
        let Some(strong) = driver.upgrade() else {
            return;
        };
        let deadline = strong.command_deadline();
        drop(strong);
        #[cfg(test)]
        tests::between_read_and_wait();
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
                    if let Some(driver) = driver.upgrade() {
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Barrier;
    use std::time::Duration;

    use gz_transport::msgs::{Axis, Double, Joint, Model};
    use gz_transport::{Node, NodeOptions};

    use super::*;
    use crate::{DriverState, RobotDriverGazeboConfiguration};

    /// While set, the timer's thread pauses between reading the deadline and waiting: the
    /// window a signal sent without the mutex is lost in, widened from a few instructions to
    /// one that setters hit every round.
    static WIDEN_WINDOW: AtomicBool = AtomicBool::new(false);

    pub(super) fn between_read_and_wait() {
        if WIDEN_WINDOW.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(3));
        }
    }

    const JOINTS: [&str; 2] = ["a", "b"];
    const STATES: &str = "/command_timer/joint_state";
    const PREFIX: &str = "/command_timer/";
    const SETTERS: usize = 4;
    const ROUNDS: usize = 40;
    /// How long a setter waits for the zero before the test fails: far above the timeout
    /// plus a period, far below the never of a lost wake-up.
    const PATIENCE: Duration = Duration::from_secs(10);

    fn partition() -> String {
        std::env::set_var("GZ_IP", "127.0.0.1");
        std::env::set_var("IGN_IP", "127.0.0.1");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        format!("command_timer_{}_{nanos}", std::process::id())
    }

    fn model() -> Model {
        let joint = |name: &str| Joint {
            name: name.into(),
            axis1: Some(Axis {
                limit_lower: -1.0,
                limit_upper: 1.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        Model {
            joint: JOINTS.iter().map(|name| joint(name)).collect(),
            ..Default::default()
        }
    }

    /// Setters on several threads, each round all at once right after the previous zero,
    /// while nothing but the timer forwards: every command is zeroed on Gazebo's side (a
    /// gz-transport peer subscribed to `cmd_vel`), the wait for each bounded.
    #[test]
    fn every_command_set_from_several_threads_is_zeroed_by_the_timer() {
        let partition = partition();
        let gazebo = Node::with_options(NodeOptions {
            partition: Some(partition.clone()),
            ..Default::default()
        })
        .unwrap();
        // Per joint, the zeros Gazebo's side received (nonzero values are the targets).
        let zeros: Arc<Vec<AtomicU64>> =
            Arc::new(JOINTS.iter().map(|_| AtomicU64::new(0)).collect());
        let _subscriptions: Vec<_> = JOINTS
            .iter()
            .enumerate()
            .map(|(joint, name)| {
                let zeros = zeros.clone();
                gazebo
                    .subscribe(
                        &format!("{PREFIX}{name}/cmd_vel"),
                        move |command: Double, _: &gz_transport::MessageInfo| {
                            if command.data == 0.0 {
                                zeros[joint].fetch_add(1, Ordering::SeqCst);
                            }
                        },
                    )
                    .unwrap()
            })
            .collect();
        let states = gazebo.advertise::<Model>(STATES).unwrap();
        let mut config = RobotDriverGazeboConfiguration::new(JOINTS, PREFIX, STATES);
        config.partition = Some(partition);
        config.joint_velocities_topic_prefix = Some(PREFIX.into());
        config.command_timeout = Duration::from_millis(20);
        let driver = Arc::new(RobotDriverGazebo::new(config, None).unwrap());
        driver.connect().unwrap();
        assert!(states.wait_for_subscribers(PATIENCE));
        let publishing = Arc::new(AtomicBool::new(true));
        let publisher = {
            let publishing = publishing.clone();
            std::thread::spawn(move || {
                while publishing.load(Ordering::Relaxed) {
                    states.publish(&model()).unwrap();
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        driver.initialize().unwrap();
        assert_eq!(driver.state(), DriverState::Initialized);
        // Joint states keep flowing but nothing forwards on them: only the timer sends zeros.
        let timer = CommandTimer::new();
        let zeros_seen = || {
            zeros
                .iter()
                .map(|z| z.load(Ordering::SeqCst))
                .min()
                .unwrap()
        };
        // The first command starts the thread; then the window is widened.
        driver.set_target_joint_velocities(&[0.1, 0.1]).unwrap();
        timer.target_set(&driver);
        driver.forward_targets().unwrap();
        wait_until(|| zeros_seen() >= 1, "the first zero");
        WIDEN_WINDOW.store(true, Ordering::Relaxed);
        let barrier = Barrier::new(SETTERS);
        std::thread::scope(|scope| {
            for setter in 0..SETTERS {
                let (driver, timer, barrier) = (&driver, &timer, &barrier);
                let zeros_seen = &zeros_seen;
                scope.spawn(move || {
                    for round in 0..ROUNDS {
                        // All setters start together, the moment the previous zero arrived:
                        // the timer's thread has just read "no deadline".
                        barrier.wait();
                        let before = zeros_seen();
                        let value = 0.01 * (1 + setter + round) as f64;
                        // As the Python binding does: store, tell the timer, send it.
                        driver
                            .set_target_joint_velocities(&[value, -value])
                            .unwrap();
                        timer.target_set(driver);
                        driver.forward_targets().unwrap();
                        barrier.wait();
                        wait_until(
                            || zeros_seen() > before,
                            &format!("round {round}: the zero of setter {setter}'s command"),
                        );
                    }
                });
            }
        });
        WIDEN_WINDOW.store(false, Ordering::Relaxed);
        assert_eq!(driver.command_deadline(), None);
        publishing.store(false, Ordering::Relaxed);
        publisher.join().unwrap();
        drop(timer);
        driver.disconnect();
    }

    fn wait_until(done: impl Fn() -> bool, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what}: not within {PATIENCE:?} (a lost wake-up waits for the next command)"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
