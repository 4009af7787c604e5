//! State listeners: code a binding runs on the receive thread right after a state message is
//! in the cache, so it can act on the message at once (publish it, say) instead of a loop
//! thread polling the cache for it. One direct call, no hop to another thread.

use std::sync::{Arc, Weak};

use parking_lot::RwLock;

/// Called on the thread that wrote a new state into the cache (for the Gazebo driver:
/// the transport's receive thread), after the write. It must not block for long: Gazebo's
/// next message waits for it.
pub type StateListener = Arc<dyn Fn() + Send + Sync>;

/// The listeners of one driver, for implementations of
/// [`RobotDriver::add_state_listener`](crate::RobotDriver::add_state_listener): `add` hands out
/// the guard, `notify` runs them all. Notifying takes a read lock that only `add` and a guard's
/// drop contend for.
#[derive(Default)]
pub struct StateListeners {
    entries: RwLock<Vec<(u64, StateListener)>>,
    next_id: parking_lot::Mutex<u64>,
}

impl StateListeners {
    /// Registers `listener` until the guard is dropped.
    pub fn add(self: &Arc<Self>, listener: StateListener) -> StateListenerGuard {
        let id = {
            let mut next = self.next_id.lock();
            *next += 1;
            *next
        };
        self.entries.write().push((id, listener));
        StateListenerGuard {
            registrations: vec![(Arc::downgrade(self), id)],
        }
    }

    /// Runs every listener, on the calling thread. Call it holding no lock a listener may
    /// take (it typically reads the driver's state).
    pub fn notify(&self) {
        for (_, listener) in self.entries.read().iter() {
            listener();
        }
    }

    fn remove(&self, id: u64) {
        self.entries.write().retain(|(entry, _)| *entry != id);
    }
}

/// Keeps a listener added with
/// [`RobotDriver::add_state_listener`](crate::RobotDriver::add_state_listener) registered;
/// removes it on drop (a composite's guard removes it from every part).
#[must_use = "the listener is removed when this guard is dropped"]
pub struct StateListenerGuard {
    registrations: Vec<(Weak<StateListeners>, u64)>,
}

impl StateListenerGuard {
    /// One guard for several registrations (a composite's, one per part).
    pub fn merge(guards: impl IntoIterator<Item = StateListenerGuard>) -> Self {
        let mut registrations = Vec::new();
        for mut guard in guards {
            registrations.append(&mut guard.registrations);
        }
        StateListenerGuard { registrations }
    }
}

impl Drop for StateListenerGuard {
    fn drop(&mut self) {
        for (listeners, id) in self.registrations.drain(..) {
            if let Some(listeners) = listeners.upgrade() {
                listeners.remove(id);
            }
        }
    }
}

/// A listener that adds `by` to `calls` each time it runs (for tests of what runs listeners).
#[cfg(test)]
pub(crate) fn counting_listener(
    calls: &Arc<std::sync::atomic::AtomicUsize>,
    by: usize,
) -> StateListener {
    let calls = calls.clone();
    Arc::new(move || {
        calls.fetch_add(by, std::sync::atomic::Ordering::SeqCst);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn listeners_run_on_notify_only_while_their_guard_lives() {
        let listeners = Arc::new(StateListeners::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let first = listeners.add(counting_listener(&calls, 1));
        let second = listeners.add(counting_listener(&calls, 10));
        listeners.notify();
        assert_eq!(calls.load(Ordering::SeqCst), 11);
        drop(second);
        listeners.notify();
        assert_eq!(calls.load(Ordering::SeqCst), 12);
        drop(StateListenerGuard::merge([first]));
        listeners.notify();
        assert_eq!(calls.load(Ordering::SeqCst), 12);
    }
}
