//! A thread that runs one step over and over until dropped: a test's control loop, a
//! benchmark's contending reader or writer. Shared by the integration tests and the benches
//! (they include this file by path).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

/// Runs `step` on its own thread until dropped; the drop waits for the thread and passes on
/// a panic of `step` (unless the dropping thread is already panicking).
pub struct Repeating {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Repeating {
    pub fn start(mut step: impl FnMut() + Send + 'static) -> Repeating {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                step();
            }
        });
        Repeating {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Repeating {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() && !thread::panicking() {
                panic!("the repeating thread panicked");
            }
        }
    }
}
