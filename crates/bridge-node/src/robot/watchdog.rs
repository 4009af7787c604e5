//! The watchdog a SmartArmStack controller arms on `<robot>/set/watchdog_trigger`, as a pure
//! state machine: [`Watchdog::trigger`] takes each message (on the DDS listener thread),
//! [`Watchdog::check`] is asked once per loop period whether the robot must stop. No clock is
//! read here, so every rule is tested with made-up times.
//!
//! The original's rules (`sas::RobotDriver`'s watchdog thread): the first trigger arms it with
//! its period and maximum acceptable delay; it faults when no trigger arrived within the
//! period (lost), when a trigger's stamp and its arrival are further apart than the maximum
//! delay (delayed, or clocks out of sync), when a trigger's status is false, and when a later
//! trigger changes the period or the delay. A fault is final.

use std::fmt;
use std::time::{Duration, Instant};

/// Two periods (or delays) closer than this are the same (the original's `DQ_threshold`).
const SAME_SECONDS: f64 = 1e-12;

/// One `sas_msgs/msg/WatchdogTrigger`, as received.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trigger {
    /// `status`: false asks the driver to fault.
    pub status: bool,
    /// `period_in_seconds`: the longest gap allowed between triggers.
    pub period_sec: f64,
    /// `maximum_acceptable_delay_in_seconds`.
    pub maximum_delay_sec: f64,
    /// Arrival (wall clock) minus the message's `header.stamp`, in seconds: the transport
    /// delay plus the offset between the client's clock and ours.
    pub delay_sec: f64,
    /// When it arrived (monotonic clock).
    pub received: Instant,
}

/// Why the watchdog stopped the robot.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchdogFault {
    /// No trigger within the period.
    Lost {
        /// Time since the last trigger when the loop noticed.
        silence: Duration,
        /// The armed period.
        period_sec: f64,
    },
    /// A trigger's stamp and its arrival differ by more than the maximum delay.
    Delayed {
        /// Arrival minus stamp, seconds (negative: stamped in our future).
        delay_sec: f64,
        /// The armed maximum delay.
        maximum_delay_sec: f64,
    },
    /// A trigger with `status: false`.
    StatusFalse,
    /// A later trigger changed the period or the maximum delay.
    Changed {
        /// `"period"` or `"maximum acceptable delay"`.
        what: &'static str,
        /// The armed value, seconds.
        from: f64,
        /// The new value, seconds.
        to: f64,
    },
    /// The first trigger's period is not a positive number of seconds, or its maximum delay
    /// not a non-negative one: the controller's watchdog cannot be served as it meant.
    Invalid {
        /// The trigger's period.
        period_sec: f64,
        /// The trigger's maximum delay.
        maximum_delay_sec: f64,
    },
}

impl fmt::Display for WatchdogFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchdogFault::Lost {
                silence,
                period_sec,
            } => write!(
                f,
                "The watchdog signal was lost! No trigger for {:.3} s; the period is {period_sec} s.",
                silence.as_secs_f64()
            ),
            WatchdogFault::Delayed {
                delay_sec,
                maximum_delay_sec,
            } => write!(
                f,
                "The watchdog signal is delayed, or the clocks of the client and the driver are \
                 out of synch! A trigger arrived {delay_sec:.3} s after its stamp; at most \
                 {maximum_delay_sec} s is acceptable."
            ),
            WatchdogFault::StatusFalse => write!(f, "The watchdog status is false!"),
            WatchdogFault::Changed { what, from, to } => write!(
                f,
                "Invalid operation. The watchdog {what} changed from {from} s to {to} s."
            ),
            WatchdogFault::Invalid {
                period_sec,
                maximum_delay_sec,
            } => write!(
                f,
                "Invalid watchdog trigger: period_in_seconds must be a positive number of \
                 seconds and maximum_acceptable_delay_in_seconds a non-negative one, got \
                 {period_sec} and {maximum_delay_sec}."
            ),
        }
    }
}

/// Where the watchdog is, for logs and diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchdogState {
    /// No trigger received yet: the robot runs without a watchdog (as the original).
    Disarmed,
    /// Armed by the first trigger.
    Armed {
        /// `period_in_seconds`.
        period_sec: f64,
        /// `maximum_acceptable_delay_in_seconds`.
        maximum_delay_sec: f64,
        /// Arrival of the latest trigger.
        last: Instant,
    },
    /// Stopped the robot; final.
    Faulted(WatchdogFault),
}

/// What a trigger did, for the log lines of the original (`::Watchdog initialized with …`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TriggerOutcome {
    /// The first trigger armed the watchdog.
    Armed {
        period_sec: f64,
        maximum_delay_sec: f64,
    },
    /// Fed an armed watchdog.
    Fed,
    /// This trigger faulted the watchdog.
    Faulted,
    /// Already faulted; the trigger changes nothing.
    Ignored,
}

/// The watchdog of one robot. See the module documentation for its rules.
#[derive(Clone, Debug)]
pub(crate) struct Watchdog {
    state: WatchdogState,
}

impl Watchdog {
    pub fn new() -> Self {
        Watchdog {
            state: WatchdogState::Disarmed,
        }
    }

    pub fn state(&self) -> &WatchdogState {
        &self.state
    }

    /// Takes one trigger: arms the watchdog on the first, checks every one against the
    /// rules that need no clock (status, delay, unchanged period and delay).
    pub fn trigger(&mut self, trigger: Trigger) -> TriggerOutcome {
        let (period_sec, maximum_delay_sec, armed_now) = match &self.state {
            WatchdogState::Faulted(_) => return TriggerOutcome::Ignored,
            WatchdogState::Disarmed => {
                let valid_period = trigger.period_sec.is_finite() && trigger.period_sec > 0.0;
                let valid_delay =
                    trigger.maximum_delay_sec.is_finite() && trigger.maximum_delay_sec >= 0.0;
                if !(valid_period && valid_delay) {
                    return self.fault(WatchdogFault::Invalid {
                        period_sec: trigger.period_sec,
                        maximum_delay_sec: trigger.maximum_delay_sec,
                    });
                }
                (trigger.period_sec, trigger.maximum_delay_sec, true)
            }
            WatchdogState::Armed {
                period_sec,
                maximum_delay_sec,
                ..
            } => (*period_sec, *maximum_delay_sec, false),
        };
        for (what, from, to) in [
            ("period", period_sec, trigger.period_sec),
            (
                "maximum acceptable delay",
                maximum_delay_sec,
                trigger.maximum_delay_sec,
            ),
        ] {
            // NaN compares unequal to everything: a NaN later is a change.
            let same = (from - to).abs() < SAME_SECONDS;
            if !same {
                return self.fault(WatchdogFault::Changed { what, from, to });
            }
        }
        if !trigger.status {
            return self.fault(WatchdogFault::StatusFalse);
        }
        // A NaN delay (an unusable stamp) is no acceptable delay either.
        let in_time = trigger.delay_sec.abs() <= maximum_delay_sec;
        if !in_time {
            return self.fault(WatchdogFault::Delayed {
                delay_sec: trigger.delay_sec,
                maximum_delay_sec,
            });
        }
        self.state = WatchdogState::Armed {
            period_sec,
            maximum_delay_sec,
            last: trigger.received,
        };
        if armed_now {
            TriggerOutcome::Armed {
                period_sec,
                maximum_delay_sec,
            }
        } else {
            TriggerOutcome::Fed
        }
    }

    /// The fault, if the robot must stop at `now`: a fault a trigger caused, or no trigger
    /// within the period. `None` while disarmed or fed in time.
    pub fn check(&mut self, now: Instant) -> Option<WatchdogFault> {
        match &self.state {
            WatchdogState::Disarmed => None,
            WatchdogState::Faulted(fault) => Some(fault.clone()),
            WatchdogState::Armed {
                period_sec, last, ..
            } => {
                let silence = now.saturating_duration_since(*last);
                if silence.as_secs_f64() > *period_sec {
                    let fault = WatchdogFault::Lost {
                        silence,
                        period_sec: *period_sec,
                    };
                    self.state = WatchdogState::Faulted(fault.clone());
                    Some(fault)
                } else {
                    None
                }
            }
        }
    }

    /// When [`check`](Self::check) faults if no trigger comes meanwhile: a microsecond after
    /// the period since the last trigger (the check compares in seconds as `f64`); now, once
    /// faulted; `None` while disarmed, and for a period so long that the deadline is past what
    /// the clock holds (a client's `1e19` s is finite and accepted; adding it would panic).
    pub fn deadline(&self) -> Option<Instant> {
        match &self.state {
            WatchdogState::Disarmed => None,
            WatchdogState::Faulted(_) => Some(Instant::now()),
            WatchdogState::Armed {
                period_sec, last, ..
            } => Duration::try_from_secs_f64(*period_sec)
                .ok()
                .and_then(|period| last.checked_add(period + Duration::from_micros(1))),
        }
    }

    fn fault(&mut self, fault: WatchdogFault) -> TriggerOutcome {
        self.state = WatchdogState::Faulted(fault);
        TriggerOutcome::Faulted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn trigger(received: Instant) -> Trigger {
        Trigger {
            status: true,
            period_sec: 0.1,
            maximum_delay_sec: 0.05,
            delay_sec: 0.001,
            received,
        }
    }

    fn armed(t0: Instant) -> Watchdog {
        let mut watchdog = Watchdog::new();
        assert_eq!(
            watchdog.trigger(trigger(t0)),
            TriggerOutcome::Armed {
                period_sec: 0.1,
                maximum_delay_sec: 0.05
            }
        );
        watchdog
    }

    #[test]
    fn a_huge_finite_period_has_no_deadline_instead_of_overflowing_the_clock() {
        let t0 = Instant::now();
        let mut watchdog = Watchdog::new();
        let huge = Trigger {
            // Representable as a Duration, but past what an Instant can reach.
            period_sec: 1e19,
            ..trigger(t0)
        };
        assert!(matches!(
            watchdog.trigger(huge),
            TriggerOutcome::Armed { .. }
        ));
        assert_eq!(watchdog.deadline(), None);
        assert_eq!(watchdog.check(t0 + Duration::from_secs(3600)), None);
    }

    #[test]
    fn a_disarmed_watchdog_never_faults() {
        let mut watchdog = Watchdog::new();
        let t0 = Instant::now();
        assert_eq!(watchdog.check(t0 + Duration::from_secs(3600)), None);
        assert_eq!(watchdog.state(), &WatchdogState::Disarmed);
    }

    #[test]
    fn triggers_within_the_period_keep_it_armed() {
        let t0 = Instant::now();
        let mut watchdog = armed(t0);
        for i in 1..100 {
            let t = t0 + 90 * MS * i;
            assert_eq!(watchdog.check(t), None, "before trigger {i}");
            assert_eq!(watchdog.trigger(trigger(t)), TriggerOutcome::Fed);
        }
        assert!(matches!(watchdog.state(), WatchdogState::Armed { .. }));
    }

    #[test]
    fn no_trigger_within_the_period_is_a_lost_signal_and_final() {
        let t0 = Instant::now();
        let mut watchdog = armed(t0);
        assert_eq!(
            watchdog.check(t0 + 100 * MS),
            None,
            "exactly one period is in time"
        );
        let fault = watchdog.check(t0 + 101 * MS).expect("lost");
        assert_eq!(
            fault,
            WatchdogFault::Lost {
                silence: 101 * MS,
                period_sec: 0.1
            }
        );
        assert!(fault
            .to_string()
            .starts_with("The watchdog signal was lost!"));
        // A late trigger does not revive it.
        assert_eq!(
            watchdog.trigger(trigger(t0 + 102 * MS)),
            TriggerOutcome::Ignored
        );
        assert_eq!(watchdog.check(t0 + 103 * MS), Some(fault.clone()));
        assert_eq!(watchdog.state(), &WatchdogState::Faulted(fault));
    }

    #[test]
    fn the_deadline_is_the_first_instant_the_check_faults() {
        assert_eq!(Watchdog::new().deadline(), None);
        for period_sec in [0.1, 0.3, 1.7, 1_000.000_3] {
            let t0 = Instant::now();
            let mut watchdog = Watchdog::new();
            watchdog.trigger(Trigger {
                period_sec,
                ..trigger(t0)
            });
            let deadline = watchdog.deadline().expect("armed");
            assert_eq!(
                watchdog.clone().check(deadline - Duration::from_micros(2)),
                None
            );
            assert!(watchdog.check(deadline).is_some(), "{period_sec}");
            assert!(watchdog.deadline().unwrap() <= Instant::now());
        }
    }

    #[test]
    fn status_false_faults_at_once_even_on_the_first_trigger() {
        let t0 = Instant::now();
        let mut watchdog = armed(t0);
        let stop = Trigger {
            status: false,
            ..trigger(t0 + MS)
        };
        assert_eq!(watchdog.trigger(stop), TriggerOutcome::Faulted);
        assert_eq!(watchdog.check(t0 + MS), Some(WatchdogFault::StatusFalse));

        let mut first = Watchdog::new();
        assert_eq!(first.trigger(stop), TriggerOutcome::Faulted);
        assert_eq!(first.check(t0), Some(WatchdogFault::StatusFalse));
    }

    #[test]
    fn a_delayed_or_early_stamp_beyond_the_maximum_delay_faults() {
        let t0 = Instant::now();
        for delay_sec in [0.051, -0.051, f64::NAN] {
            let mut watchdog = armed(t0);
            let late = Trigger {
                delay_sec,
                ..trigger(t0 + MS)
            };
            assert_eq!(watchdog.trigger(late), TriggerOutcome::Faulted);
            let fault = watchdog.check(t0 + MS).expect("delayed");
            assert!(matches!(fault, WatchdogFault::Delayed { .. }), "{fault:?}");
            assert!(fault.to_string().contains("out of synch"), "{fault}");
        }
        let mut watchdog = armed(t0);
        let at_the_limit = Trigger {
            delay_sec: -0.05,
            ..trigger(t0 + MS)
        };
        assert_eq!(watchdog.trigger(at_the_limit), TriggerOutcome::Fed);
    }

    #[test]
    fn a_changed_period_or_delay_is_an_error() {
        let t0 = Instant::now();
        let mut watchdog = armed(t0);
        let changed = Trigger {
            period_sec: 0.2,
            ..trigger(t0 + MS)
        };
        assert_eq!(watchdog.trigger(changed), TriggerOutcome::Faulted);
        let fault = watchdog.check(t0 + MS).unwrap();
        assert_eq!(
            fault,
            WatchdogFault::Changed {
                what: "period",
                from: 0.1,
                to: 0.2
            }
        );
        assert_eq!(
            fault.to_string(),
            "Invalid operation. The watchdog period changed from 0.1 s to 0.2 s."
        );

        let mut watchdog = armed(t0);
        let changed = Trigger {
            maximum_delay_sec: 0.5,
            ..trigger(t0 + MS)
        };
        assert_eq!(watchdog.trigger(changed), TriggerOutcome::Faulted);
        assert!(matches!(
            watchdog.check(t0 + MS),
            Some(WatchdogFault::Changed {
                what: "maximum acceptable delay",
                ..
            })
        ));
    }

    #[test]
    fn a_first_trigger_without_a_usable_period_or_delay_faults() {
        let t0 = Instant::now();
        for (period_sec, maximum_delay_sec) in [
            (0.0, 0.1),
            (-1.0, 0.1),
            (f64::NAN, 0.1),
            (f64::INFINITY, 0.1),
            (1.0, -0.1),
            (1.0, f64::NAN),
        ] {
            let mut watchdog = Watchdog::new();
            let bad = Trigger {
                period_sec,
                maximum_delay_sec,
                ..trigger(t0)
            };
            assert_eq!(watchdog.trigger(bad), TriggerOutcome::Faulted);
            let fault = watchdog.check(t0).unwrap();
            assert!(
                matches!(fault, WatchdogFault::Invalid { .. }),
                "{period_sec} {maximum_delay_sec}: {fault:?}"
            );
        }
    }
}
