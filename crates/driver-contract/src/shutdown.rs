use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// A cloneable cancellation token (the original's `ShutdownSignaler`): every clone sees one
/// flag. Triggering it wakes everything blocked on it (`wait_timeout`, the driver's
/// `initialize_with`) at once, without anyone polling.
#[derive(Clone, Default)]
pub struct ShutdownToken {
    inner: Arc<TokenInner>,
}

type Listener = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct TokenInner {
    triggered: AtomicBool,
    listeners: Mutex<Listeners>,
    wakeup: Condvar,
}

#[derive(Default)]
struct Listeners {
    next_id: u64,
    entries: Vec<(u64, Listener)>,
}

impl ShutdownToken {
    /// A token not yet triggered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag (idempotent) and wakes every waiter.
    pub fn trigger(&self) {
        self.inner.triggered.store(true, Ordering::SeqCst);
        let listeners: Vec<Listener> = {
            let guard = self.inner.listeners.lock();
            self.inner.wakeup.notify_all();
            guard.entries.iter().map(|(_, f)| f.clone()).collect()
        };
        // Outside our lock: a listener takes its own waiter's lock.
        for listener in listeners {
            listener();
        }
    }

    /// True if and only if the token was triggered.
    pub fn is_triggered(&self) -> bool {
        self.inner.triggered.load(Ordering::SeqCst)
    }

    /// Blocks until the token is triggered or `timeout` passes; returns
    /// [`is_triggered`](Self::is_triggered). A control loop can sleep its period here and
    /// still stop at once.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        let mut guard = self.inner.listeners.lock();
        while !self.is_triggered() {
            match deadline {
                Some(deadline) => {
                    if self
                        .inner
                        .wakeup
                        .wait_until(&mut guard, deadline)
                        .timed_out()
                    {
                        break;
                    }
                }
                None => self.inner.wakeup.wait(&mut guard),
            }
        }
        self.is_triggered()
    }

    /// Runs `wake` on trigger for as long as the returned guard lives, so a thread blocked
    /// on its own condition variable can be woken by a shutdown without polling. A token
    /// triggered before the call never runs `wake`: check
    /// [`is_triggered`](Self::is_triggered) after registering, before blocking.
    pub fn on_trigger(&self, wake: Arc<dyn Fn() + Send + Sync>) -> TriggerListener {
        let mut guard = self.inner.listeners.lock();
        let id = guard.next_id;
        guard.next_id += 1;
        guard.entries.push((id, wake));
        TriggerListener {
            token: self.clone(),
            id,
        }
    }
}

impl std::fmt::Debug for ShutdownToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownToken")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

/// Keeps a listener registered with [`ShutdownToken::on_trigger`]; unregisters it on drop.
#[must_use = "the listener is unregistered when this guard is dropped"]
pub struct TriggerListener {
    token: ShutdownToken,
    id: u64,
}

impl Drop for TriggerListener {
    fn drop(&mut self) {
        self.token
            .inner
            .listeners
            .lock()
            .entries
            .retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listeners::counting_listener;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn wait_timeout_returns_false_after_the_timeout_when_not_triggered() {
        let token = ShutdownToken::new();
        let start = Instant::now();
        assert!(!token.wait_timeout(Duration::from_millis(30)));
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn trigger_from_a_clone_wakes_a_waiter_on_another_thread() {
        let token = ShutdownToken::new();
        let clone = token.clone();
        let waiter = std::thread::spawn(move || clone.wait_timeout(Duration::from_secs(60)));
        std::thread::sleep(Duration::from_millis(20));
        token.trigger();
        assert!(waiter.join().unwrap());
        assert!(token.is_triggered());
        // Already triggered: returns at once.
        assert!(token.wait_timeout(Duration::from_secs(60)));
    }

    #[test]
    fn listeners_run_on_trigger_only_while_registered() {
        let token = ShutdownToken::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let registered = token.on_trigger(counting_listener(&calls, 1));
        drop(token.on_trigger(counting_listener(&calls, 100)));
        token.trigger();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        drop(registered);
        token.trigger();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
