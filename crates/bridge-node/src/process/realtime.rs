//! `realtime_priority`: SCHED_FIFO for the threads on a robot's data path (its loop thread and
//! the gz-transport receive thread), like ros2_control's `thread_priority`. Where the system
//! does not allow it the thread keeps normal scheduling and the warning names what is missing.

use std::io;

/// Puts the calling thread under SCHED_FIFO at `priority` (1–99).
///
/// # Errors
/// What the system refused, naming the capability or limit that would allow it.
pub(crate) fn make_current_thread_realtime(priority: u8) -> Result<(), String> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: pthread_self() is the calling thread; `param` is valid.
    let status =
        unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if status == 0 {
        return Ok(());
    }
    let err = io::Error::from_raw_os_error(status);
    if status == libc::EPERM {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid rlimit to write.
        unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut limit) };
        return Err(format!(
            "SCHED_FIFO priority {priority} refused ({err}): the process lacks CAP_SYS_NICE and \
             its RLIMIT_RTPRIO is {} (needs ≥ {priority}; e.g. `ulimit -r {priority}`, a \
             limits.conf rtprio entry, or run with CAP_SYS_NICE)",
            if limit.rlim_cur == libc::RLIM_INFINITY {
                "unlimited".to_string()
            } else {
                limit.rlim_cur.to_string()
            }
        ));
    }
    Err(format!("SCHED_FIFO priority {priority} refused: {err}"))
}

/// Applies `priority` to the calling thread, logging the outcome once for `what`.
pub(crate) fn apply(priority: Option<u8>, what: &str) {
    let Some(priority) = priority else {
        return;
    };
    match make_current_thread_realtime(priority) {
        Ok(()) => tracing::info!("::realtime_priority: {what} runs at SCHED_FIFO {priority}."),
        Err(why) => tracing::warn!("::realtime_priority: {what} keeps normal scheduling: {why}."),
    }
}
