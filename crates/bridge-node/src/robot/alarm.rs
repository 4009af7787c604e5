//! A one-shot alarm on the monotonic clock that any thread can move without waking the thread
//! waiting on it (a `timerfd`): the receive thread, having done a robot's checks itself, pushes
//! the loop thread's next wake-up further out, so a loop whose work the receive path already
//! did never wakes to find nothing to do. A condition variable would need a wake-up to re-arm.
//! The alarm remembers when it is set to ring, so a thread with an earlier deadline (a target's
//! keepalive, a watchdog fault) can bring it forward without knowing the others.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// A `timerfd` on `CLOCK_MONOTONIC` (the clock of [`Instant`] on Linux).
pub(crate) struct Alarm {
    fd: OwnedFd,
    /// An instant and the same moment on `CLOCK_MONOTONIC`, to convert one to the other.
    origin: (Instant, Duration),
    /// When it rings next, and the earliest instant asked for with
    /// [`wake_by`](Alarm::wake_by) since the last [`set`](Alarm::set). Held while the timer
    /// is set, so the timer always rings at the instant recorded here.
    schedule: Mutex<Schedule>,
}

impl Alarm {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked and owned below.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let instant = Instant::now();
        // SAFETY: `now` is a valid timespec to write.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let monotonic = Duration::new(now.tv_sec as u64, now.tv_nsec as u32);
        Ok(Alarm {
            fd,
            origin: (instant, monotonic),
            schedule: Mutex::default(),
        })
    }

    /// Rings at `at` (at once if it passed), or at an earlier instant asked for with
    /// [`wake_by`](Self::wake_by) since the last `set`: the caller computed `at` from what it
    /// knew, and a deadline another thread added meanwhile must not be lost. Replaces any
    /// other setting and clears a ring not yet waited for.
    pub fn set(&self, at: Instant) {
        let mut schedule = self.schedule.lock();
        let at = schedule
            .requested
            .take()
            .map_or(at, |requested| requested.min(at));
        self.set_timer(at);
        schedule.armed = Some(at);
    }

    /// Rings at `at` unless it is set to ring sooner. Change whatever makes `at` a deadline
    /// before calling this, so that a thread computing the next [`set`](Self::set) from it
    /// either sees the change or keeps `at`.
    pub fn wake_by(&self, at: Instant) {
        let mut schedule = self.schedule.lock();
        schedule.requested = Some(schedule.requested.map_or(at, |requested| requested.min(at)));
        if schedule.armed.is_none_or(|armed| at < armed) {
            self.set_timer(at);
            schedule.armed = Some(at);
        }
    }

    /// When it rings next, if set.
    pub fn armed(&self) -> Option<Instant> {
        self.schedule.lock().armed
    }

    fn set_timer(&self, at: Instant) {
        let (instant, monotonic) = self.origin;
        let offset = at.saturating_duration_since(instant);
        // A zero it_value would disarm the timer: 1 ns past the origin is already past.
        let when = (monotonic + offset).max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: when.as_secs() as libc::time_t,
                tv_nsec: when.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid fd and itimerspec; an absolute time cannot fail but for a bad fd.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
    }

    /// Blocks until the alarm rings (returns at once if it rang since the last `set`).
    pub fn wait(&self) {
        let mut expirations = 0u64;
        loop {
            // SAFETY: reads 8 bytes into `expirations`.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut expirations as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
        // What rang is no longer pending.
        let now = Instant::now();
        let mut schedule = self.schedule.lock();
        if schedule.armed.is_some_and(|at| at <= now) {
            schedule.armed = None;
        }
        if schedule.requested.is_some_and(|at| at <= now) {
            schedule.requested = None;
        }
    }
}

#[derive(Default)]
struct Schedule {
    armed: Option<Instant>,
    requested: Option<Instant>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn rings_at_the_instant_set_and_a_later_setting_from_another_thread_moves_it() {
        let alarm = Arc::new(Alarm::new().unwrap());
        let start = Instant::now();
        alarm.set(start + Duration::from_millis(20));
        alarm.wait();
        assert!(start.elapsed() >= Duration::from_millis(20));

        let start = Instant::now();
        alarm.set(start + Duration::from_millis(10));
        let mover = {
            let alarm = alarm.clone();
            std::thread::spawn(move || alarm.set(start + Duration::from_millis(60)))
        };
        mover.join().unwrap();
        alarm.wait();
        assert!(start.elapsed() >= Duration::from_millis(60));
        // A past instant rings at once.
        alarm.set(start);
        alarm.wait();
        assert_eq!(alarm.armed(), None);
    }

    #[test]
    fn wake_by_only_brings_the_ring_forward() {
        let alarm = Alarm::new().unwrap();
        let start = Instant::now();
        alarm.wake_by(start + Duration::from_millis(30));
        alarm.wake_by(start + Duration::from_secs(10));
        assert_eq!(alarm.armed(), Some(start + Duration::from_millis(30)));
        alarm.wake_by(start + Duration::from_millis(10));
        alarm.wait();
        let woke = start.elapsed();
        assert!(
            woke >= Duration::from_millis(10) && woke < Duration::from_millis(30),
            "{woke:?}"
        );
        // A deadline asked for while another thread computed a later one is kept.
        let start = Instant::now();
        alarm.wake_by(start + Duration::from_millis(5));
        alarm.set(start + Duration::from_secs(10));
        assert_eq!(alarm.armed(), Some(start + Duration::from_millis(5)));
        alarm.wait();
        alarm.set(start + Duration::from_secs(10));
        assert_eq!(alarm.armed(), Some(start + Duration::from_secs(10)));
    }
}
