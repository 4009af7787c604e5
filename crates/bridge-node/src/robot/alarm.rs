//! A one-shot alarm on the monotonic clock that any thread can move without waking the thread
//! waiting on it (a `timerfd`): the receive thread, having done a period's work itself, pushes
//! the loop thread's next wake-up further out, so a loop whose work the receive path already
//! did never wakes to find nothing to do. A condition variable would need a wake-up to re-arm.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// A `timerfd` on `CLOCK_MONOTONIC` (the clock of [`Instant`] on Linux).
pub(crate) struct Alarm {
    fd: OwnedFd,
    /// An instant and the same moment on `CLOCK_MONOTONIC`, to convert one to the other.
    origin: (Instant, Duration),
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
        })
    }

    /// Rings at `at` (at once if it passed), replacing any earlier setting and clearing a
    /// ring not yet waited for.
    pub fn set(&self, at: Instant) {
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
                return;
            }
        }
    }
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
    }
}
