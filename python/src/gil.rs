//! The one place that releases the GIL. Every call into the driver goes through
//! [`released`] (quick calls that may still take a lock or touch sockets) or
//! [`released_interruptible`] (calls that wait: `initialize()`, the control loop), so no
//! Rust code ever waits while holding the GIL, and no Rust thread ever needs it.

use std::ops::Deref;
use std::time::Duration;

use pyo3::marker::Ungil;
use pyo3::{PyErr, Python};
use sas_robot_driver_gazebo::ShutdownToken;

/// How often a caller blocked in a long wait takes the GIL back, briefly, to let Python run
/// its signal handlers (Ctrl-C) and to see whether a watched shutdown signaler fired. The
/// waiting work itself never needs the GIL, so this costs it nothing.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Runs `work` with the GIL released.
pub(crate) fn released<T, F>(py: Python<'_>, work: F) -> T
where
    F: Ungil + FnOnce() -> T,
    T: Ungil,
{
    py.detach(work)
}

/// How a long wait ended besides its own result.
pub(crate) enum Interruption {
    /// No signal handler raised.
    None,
    /// A Python signal handler raised (e.g. `KeyboardInterrupt` on Ctrl-C); `cancel` was
    /// triggered and `work` was allowed to finish.
    Raised(PyErr),
}

/// Runs `work` on a worker thread with the GIL released and waits for it, waking every
/// 50 ms to run Python's signal handlers. If a handler raises, or `watched` is triggered,
/// `cancel` is triggered so that `work` (which must observe `cancel`) returns soon.
/// Signal handlers only run when the caller is Python's main thread; elsewhere the wait
/// ends by `work` alone (`cancel` triggered by another thread, or `watched`).
pub(crate) fn released_interruptible<T, F>(
    py: Python<'_>,
    cancel: &ShutdownToken,
    watched: Option<&ShutdownToken>,
    work: F,
) -> (T, Interruption)
where
    F: Send + FnOnce() -> T,
    T: Send,
{
    if watched.is_some_and(ShutdownToken::is_triggered) {
        cancel.trigger();
    }
    std::thread::scope(|scope| {
        let (done_tx, done) = crossbeam_channel::bounded(1);
        std::thread::Builder::new()
            .name("sas-py-wait".into())
            .spawn_scoped(scope, move || {
                // The receiver lives until this scope ends; a send cannot fail.
                let _ = done_tx.send(work());
            })
            .expect("cannot spawn a thread");
        let mut interruption = Interruption::None;
        loop {
            let finished = released(py, || done.recv_timeout(SIGNAL_CHECK_INTERVAL));
            match finished {
                Ok(result) => return (result, interruption),
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    // The worker panicked: leaving the scope re-raises its panic.
                    std::panic::resume_unwind(Box::new(
                        "the worker thread of a released call panicked",
                    ))
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            }
            if watched.is_some_and(ShutdownToken::is_triggered) {
                cancel.trigger();
            }
            if let (Interruption::None, Err(raised)) = (&interruption, py.check_signals()) {
                cancel.trigger();
                interruption = Interruption::Raised(raised);
            }
        }
    })
}

/// Holds a value whose drop may wait (it joins threads: gz-transport's, the ROS executor's)
/// and drops it with the GIL released: Python drops extension objects while holding it.
pub(crate) struct DropReleased<T: Send>(Option<T>);

impl<T: Send> DropReleased<T> {
    pub(crate) fn new(value: T) -> Self {
        DropReleased(Some(value))
    }
}

impl<T: Send> Deref for DropReleased<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.as_ref().expect("present until dropped")
    }
}

impl<T: Send> Drop for DropReleased<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            // Without an interpreter (at exit) the closure, and the value, is dropped unrun.
            let _ = Python::try_attach(|py| released(py, move || drop(value)));
        }
    }
}
