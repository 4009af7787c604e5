//! Gazebo's world as the simulator server talks to it: its world control service, and its
//! clock, which tells whether the world runs and when a step is done. Every call is bounded:
//! by `timeout` for Gazebo to answer or to be heard, and a step by the clock's progress.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use gz_transport::msgs::{Boolean, Clock, WorldControl};
use gz_transport::{Delivery, MessageInfo, ServiceError, Subscription};

/// How long the clock is watched to tell a running world from a paused one, after its first
/// message (a paused gz-sim still publishes its clock, every iteration).
const OBSERVATION: Duration = Duration::from_millis(200);
/// Clock messages after the first that settle the question earlier.
const OBSERVED_MESSAGES: usize = 3;

/// Whether the world's sim time moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Running {
    Playing,
    Paused,
}

/// Gazebo's world: its world control service and its clock topic.
pub(crate) struct World {
    pub gz: gz_transport::Node,
    pub control: String,
    pub clock: String,
    pub timeout: Duration,
}

impl World {
    /// One world control request; `Err` says why it did not happen.
    pub fn control(&self, request: &WorldControl) -> Result<(), String> {
        match self
            .gz
            .request::<WorldControl, Boolean>(&self.control, request, self.timeout)
        {
            Ok(Boolean { data: true, .. }) => Ok(()),
            Ok(Boolean { data: false, .. }) => {
                Err(format!("Gazebo's {} answered false", self.control))
            }
            Err(ServiceError::NoResponder { .. }) => Err(format!(
                "Gazebo's {} was not found within {:?}: is Gazebo running, in partition {:?}?",
                self.control,
                self.timeout,
                self.gz.partition()
            )),
            Err(err) => Err(err.to_string()),
        }
    }

    /// Listens to the world's clock (until the watch is dropped).
    pub fn watch_clock(&self) -> Result<ClockWatch, String> {
        let (tx, rx) = mpsc::channel();
        let subscription = self
            .gz
            .subscribe_with(
                &self.clock,
                Delivery::Latest,
                move |clock: Clock, _: &MessageInfo| {
                    let sim = clock.sim.unwrap_or_default();
                    let nanos = i128::from(sim.sec) * 1_000_000_000 + i128::from(sim.nsec);
                    let _ = tx.send(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)));
                },
            )
            .map_err(|err| format!("cannot listen to Gazebo's {}: {err}", self.clock))?;
        Ok(ClockWatch {
            _subscription: subscription,
            times: rx,
            topic: self.clock.clone(),
            timeout: self.timeout,
        })
    }

    /// Whether the world runs, and its sim time.
    pub fn observe(&self) -> Result<(Running, Duration), String> {
        self.watch_clock()?.observe()
    }
}

/// The world's clock, as it arrives.
pub(crate) struct ClockWatch {
    _subscription: Subscription,
    times: Receiver<Duration>,
    topic: String,
    timeout: Duration,
}

impl ClockWatch {
    fn next(&self, timeout: Duration) -> Result<Option<Duration>, String> {
        match self.times.recv_timeout(timeout) {
            Ok(t) => Ok(Some(t)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err("the transport stopped".into()),
        }
    }

    /// Whether sim time moves over a short window, and the latest sim time.
    pub fn observe(&self) -> Result<(Running, Duration), String> {
        let Some(first) = self.next(self.timeout)? else {
            return Err(format!(
                "Gazebo's clock {} was not heard within {:?}: is Gazebo running?",
                self.topic, self.timeout
            ));
        };
        let end = Instant::now() + OBSERVATION;
        let mut latest = first;
        let mut seen = 0;
        while seen < OBSERVED_MESSAGES {
            let left = end.saturating_duration_since(Instant::now());
            match self.next(left)? {
                Some(t) => {
                    latest = t;
                    seen += 1;
                }
                None => break,
            }
        }
        let running = if latest > first {
            Running::Playing
        } else {
            Running::Paused
        };
        Ok((running, latest))
    }

    /// Waits until the clock has moved past `from` and then stood still (the world paused
    /// again after its steps); gives up when it makes no progress for the timeout. The sim
    /// time it stopped at.
    pub fn wait_until_paused_after(&self, from: Duration) -> Result<Duration, String> {
        let mut previous = from;
        let mut moved = false;
        loop {
            let Some(t) = self.next(self.timeout)? else {
                return Err(format!(
                    "Gazebo's clock {} stood still for {:?} at {:.3} s: the steps did not \
                     finish",
                    self.topic,
                    self.timeout,
                    previous.as_secs_f64()
                ));
            };
            if moved && t == previous {
                return Ok(t);
            }
            moved |= t > from;
            previous = t;
        }
    }
}

/// `/world/<w>/clock` for the control service `/world/<w>/control`, as gz-sim names both.
pub(crate) fn clock_topic_of(control: &str) -> Option<String> {
    control
        .strip_suffix("/control")
        .filter(|world| world.starts_with("/world/") && world.len() > "/world/".len())
        .map(|world| format!("{world}/clock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_topic_is_the_control_services_world_s() {
        assert_eq!(
            clock_topic_of("/world/ur3e_world/control").as_deref(),
            Some("/world/ur3e_world/clock")
        );
        assert_eq!(clock_topic_of("/my/control"), None);
        assert_eq!(clock_topic_of("/world/control"), None);
    }
}
