//! Gazebo's states with NaN or infinite joint values (what a physics blow-up looks like). They
//! are passed on as received — the node reports Gazebo, it does not edit it — but a user must be
//! told: while they last the robot is ERROR on `/diagnostics` naming the joints, one line is
//! logged when an episode starts and one when it ends, and the messages are counted.

use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::JointSnapshot;

/// An episode of non-finite joint values.
#[derive(Debug)]
struct Episode {
    since: Instant,
    messages: u64,
    /// What the latest message had, as told (`elbow_joint position, wrist_1_joint velocity`).
    described: String,
}

/// What changed, for the caller to log and report.
#[derive(Debug, PartialEq)]
pub(crate) enum NonFiniteEvent {
    /// Non-finite values started, or the joints carrying them changed: the description.
    Started(String),
    /// All finite again after `messages` messages over `lasted`.
    Ended { messages: u64, lasted: Duration },
}

/// Watches each new state for non-finite joint values.
#[derive(Debug, Default)]
pub(crate) struct NonFiniteStates {
    episode: Option<Episode>,
}

impl NonFiniteStates {
    /// Looks at a new state (`names`: the joints, in the snapshot's order; may be empty).
    /// Allocates only while values are non-finite.
    pub fn check(
        &mut self,
        snapshot: &JointSnapshot,
        names: &[String],
        now: Instant,
    ) -> Option<NonFiniteEvent> {
        let finite = |values: &[f64]| values.iter().all(|v| v.is_finite());
        if finite(&snapshot.positions) && finite(&snapshot.velocities) && finite(&snapshot.efforts)
        {
            let episode = self.episode.take()?;
            return Some(NonFiniteEvent::Ended {
                messages: episode.messages,
                lasted: now.saturating_duration_since(episode.since),
            });
        }
        let described = describe(snapshot, names);
        match &mut self.episode {
            Some(episode) => {
                episode.messages += 1;
                if episode.described == described {
                    return None;
                }
                episode.described = described.clone();
                Some(NonFiniteEvent::Started(described))
            }
            None => {
                self.episode = Some(Episode {
                    since: now,
                    messages: 1,
                    described: described.clone(),
                });
                Some(NonFiniteEvent::Started(described))
            }
        }
    }
}

/// `elbow_joint position NaN, wrist_1_joint velocity inf`.
fn describe(snapshot: &JointSnapshot, names: &[String]) -> String {
    let mut parts = Vec::new();
    for joint in 0..snapshot.joint_count() {
        for (what, value) in [
            ("position", snapshot.positions[joint]),
            ("velocity", snapshot.velocities[joint]),
            ("effort", snapshot.efforts[joint]),
        ] {
            if !value.is_finite() {
                let name = names
                    .get(joint)
                    .cloned()
                    .unwrap_or_else(|| format!("joint {joint}"));
                parts.push(format!("{name} {what} {value}"));
            }
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(position: f64, velocity: f64) -> JointSnapshot {
        let mut snapshot = JointSnapshot::new(2);
        snapshot.positions = vec![0.5, position];
        snapshot.velocities = vec![velocity, 0.0];
        snapshot.efforts = vec![0.0, 0.0];
        snapshot
    }

    #[test]
    fn an_episode_is_told_when_it_starts_when_its_joints_change_and_when_it_ends() {
        let names = ["a".to_string(), "b".to_string()];
        let t0 = Instant::now();
        let mut watch = NonFiniteStates::default();
        assert_eq!(watch.check(&state(1.0, 0.0), &names, t0), None);
        assert_eq!(
            watch.check(&state(f64::NAN, 0.0), &names, t0),
            Some(NonFiniteEvent::Started("b position NaN".into()))
        );
        assert_eq!(watch.check(&state(f64::NAN, 0.0), &names, t0), None);
        assert_eq!(
            watch.check(&state(f64::NAN, f64::INFINITY), &names, t0),
            Some(NonFiniteEvent::Started(
                "a velocity inf, b position NaN".into()
            ))
        );
        let later = t0 + Duration::from_millis(40);
        assert_eq!(
            watch.check(&state(1.0, 0.0), &names, later),
            Some(NonFiniteEvent::Ended {
                messages: 3,
                lasted: Duration::from_millis(40)
            })
        );
        assert_eq!(watch.check(&state(1.0, 0.0), &names, later), None);
        // Unnamed joints are numbered.
        assert_eq!(
            watch.check(&state(f64::NEG_INFINITY, 0.0), &[], later),
            Some(NonFiniteEvent::Started("joint 1 position -inf".into()))
        );
    }
}
