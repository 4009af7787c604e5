use std::thread::JoinHandle;

use futures::channel::oneshot;
use rclrs::{Executor, RclrsError, SpinOptions};

use crate::BridgeError;

/// An rclrs executor spinning on its own thread, so its callbacks are served while the
/// caller's thread runs a control loop. Stops (and joins) on [`stop`](Self::stop) or drop.
///
/// It spins until a promise it holds the sender of is resolved: unlike
/// `ExecutorCommands::halt_spinning`, a stop requested before the thread started spinning is
/// not lost.
pub struct ExecutorThread {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Vec<RclrsError>>>,
}

impl ExecutorThread {
    /// Moves `executor` to a new thread named `ros-executor` and spins it there.
    ///
    /// # Errors
    /// The thread could not be created.
    pub fn spawn(mut executor: Executor) -> Result<Self, BridgeError> {
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("ros-executor".into())
            .spawn(move || executor.spin(SpinOptions::new().until_promise_resolved(stopped)))
            .map_err(BridgeError::ExecutorThread)?;
        Ok(ExecutorThread {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops spinning, joins the thread and returns the errors the executor reported.
    pub fn stop(mut self) -> Vec<RclrsError> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Vec<RclrsError> {
        if let Some(stop) = self.stop.take() {
            // Err: the executor already stopped and dropped the promise.
            let _ = stop.send(());
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(errors)) => errors,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Vec::new(),
        }
    }
}

impl Drop for ExecutorThread {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Don't join a thread that may be the cause; just ask it to stop.
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
            return;
        }
        for error in self.stop_and_join() {
            tracing::error!("::The ROS executor reported: {error}");
        }
    }
}
