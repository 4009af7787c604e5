//! What gz-sim's world offers besides joints: world control (`/world/<w>/control`: pause,
//! step, reset, run to a sim time) as its SimulationRunner applies it, and model poses
//! (`/world/<w>/set_pose` in, `/world/<w>/pose/info` out) as its UserCommands and
//! SceneBroadcaster systems handle them. `sdf/README.md` ("World control") says which gz-sim
//! source each rule comes from.

use std::time::{Duration, Instant};

use gz_transport::msgs;

use crate::sdf::{ModelSpec, PoseSpec};

/// What a world reset (`reset { all }` or `reset { time_only }`) puts back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ResetBehaviour {
    /// gz-sim 7 and later (Harmonic): both rewind the clock to 0 *and* put every entity back
    /// as loaded (joints at rest at their initial positions, models at their SDF poses) and
    /// reload the systems without a `Reset` (the controllers: targets back to their SDF
    /// initial values).
    #[default]
    Harmonic,
    /// Ignition Gazebo 6 (Fortress): both rewind the clock only; joints and models stay.
    Fortress,
}

/// The run state of the world, changed by world-control requests. gz-sim queues requests
/// as they arrive and applies them, in order, at the end of an iteration
/// (`SimulationRunner::ProcessWorldControl`); [`RunState::apply`] is one request of that.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunState {
    pub paused: bool,
    /// Steps still to take before pausing again (`multi_step`).
    pub pending_steps: u64,
    /// Pause once sim time reaches this.
    pub run_to: Option<Duration>,
    /// Rewind at the start of the next iteration.
    pub rewind: bool,
}

impl RunState {
    pub fn new(paused: bool) -> RunState {
        RunState {
            paused,
            pending_steps: 0,
            run_to: None,
            rewind: false,
        }
    }

    /// One request, as gz-sim applies it. Every request sets the pause state from its
    /// `pause` field, so a request without `pause: true` (a bare `step`, `reset` or
    /// `run_to_sim_time`) also unpauses; `step`/`multi_step` count only when that leaves the
    /// world paused, and unpause it for that many steps. Every request also replaces the
    /// run-to time (none, unless it carries one later than now). `reset { model_only }`
    /// does nothing (gz-sim: "Model only reset is not supported.").
    pub fn apply(&mut self, request: &msgs::WorldControl, sim_time: Duration) {
        self.paused = request.pause;
        let steps = if request.multi_step != 0 {
            u64::from(request.multi_step)
        } else {
            u64::from(request.step)
        };
        if self.paused && steps > 0 {
            self.pending_steps += steps;
            self.paused = false;
        }
        self.rewind = request.reset.as_ref().is_some_and(|r| r.all || r.time_only);
        self.run_to = request
            .run_to_sim_time
            .and_then(|t| duration(&t))
            .filter(|&t| t > sim_time);
    }

    /// After an iteration's systems ran, at `sim_time` (`SimulationRunner::Step`): pause
    /// once the run-to time is reached, and count down a multi-step.
    pub fn after_iteration(&mut self, sim_time: Duration) {
        if !self.paused && self.run_to.is_some_and(|t| sim_time >= t) {
            self.paused = true;
            self.run_to = None;
        }
        if !self.paused && self.pending_steps > 0 {
            self.pending_steps -= 1;
            if self.pending_steps == 0 {
                self.paused = true;
            }
        }
    }
}

/// A `Time` as a duration; `None` for a negative one (before the world's start).
fn duration(t: &msgs::Time) -> Option<Duration> {
    let nanos = i128::from(t.sec) * 1_000_000_000 + i128::from(t.nsec);
    u64::try_from(nanos).ok().map(Duration::from_nanos)
}

/// Wall time the world has run, not counting paused spans (gz-sim's `realTimeWatch`, the
/// `real` of its clock).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunWatch {
    before: Duration,
    since: Option<Instant>,
}

impl RunWatch {
    pub fn new(running: bool, now: Instant) -> RunWatch {
        RunWatch {
            before: Duration::ZERO,
            since: running.then_some(now),
        }
    }

    pub fn set_running(&mut self, running: bool, now: Instant) {
        match (self.since, running) {
            (None, true) => self.since = Some(now),
            (Some(since), false) => {
                self.before += now - since;
                self.since = None;
            }
            _ => {}
        }
    }

    pub fn elapsed(&self, now: Instant) -> Duration {
        self.before + self.since.map_or(Duration::ZERO, |s| now - s)
    }
}

/// Why `set_pose` refused a request (answered `data: false`).
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum SetPoseError {
    #[error("no model with id {0} directly in the world (models: {1})")]
    UnknownId(u32, String),
    #[error("no model named {0:?} directly in the world (models: {1})")]
    UnknownName(String, String),
    #[error("the request names no entity (neither name nor id set)")]
    NoEntity,
    #[error("position {0:?} is not finite")]
    Position([f64; 3]),
    #[error("orientation {0:?} (x, y, z, w) is not a rotation: it must be finite and of non-zero length")]
    Orientation([f64; 4]),
}

/// Which top-level model a `set_pose` request moves and where to. As gz-sim's
/// `updatePose`: a non-zero `id` wins over `name`; a name is looked up among the world's
/// direct children only. A missing position is the origin (as gz-msgs converts it). Unlike
/// gz-sim, which takes any numbers: a missing orientation is the identity (gz-msgs would
/// convert the protobuf default, a zero quaternion), a non-finite value or a zero-length
/// quaternion is refused, and the orientation is normalised.
pub(crate) fn pose_request(
    models: &[ModelSpec],
    request: &msgs::Pose,
) -> Result<(usize, PoseSpec), SetPoseError> {
    let names = || {
        models
            .iter()
            .map(|m| format!("{} (id {})", m.name, m.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let index = if request.id != 0 {
        models
            .iter()
            .position(|m| m.id == request.id)
            .ok_or_else(|| SetPoseError::UnknownId(request.id, names()))?
    } else if !request.name.is_empty() {
        models
            .iter()
            .position(|m| m.name == request.name)
            .ok_or_else(|| SetPoseError::UnknownName(request.name.clone(), names()))?
    } else {
        return Err(SetPoseError::NoEntity);
    };
    let position = request
        .position
        .as_ref()
        .map_or([0.0; 3], |p| [p.x, p.y, p.z]);
    if !position.iter().all(|v| v.is_finite()) {
        return Err(SetPoseError::Position(position));
    }
    let q = request
        .orientation
        .as_ref()
        .map_or([0.0, 0.0, 0.0, 1.0], |q| [q.x, q.y, q.z, q.w]);
    let norm = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    // A quaternion this short has lost its direction to rounding: no rotation to take.
    if !(norm.is_finite() && norm > 1e-9) {
        return Err(SetPoseError::Orientation(q));
    }
    Ok((
        index,
        PoseSpec {
            position,
            orientation: q.map(|c| c / norm),
        },
    ))
}

/// The `pose/info` message: the top-level models' names, ids and world poses, stamped
/// with sim time (SceneBroadcaster's `PoseUpdate`).
pub(crate) fn pose_info(
    models: &[ModelSpec],
    poses: &[PoseSpec],
    sim_time: Duration,
) -> msgs::PoseV {
    msgs::PoseV {
        header: Some(msgs::Header {
            stamp: Some(crate::messages::time(sim_time)),
            data: Vec::new(),
        }),
        pose: models
            .iter()
            .zip(poses)
            .map(|(m, p)| msgs::Pose {
                name: m.name.clone(),
                id: m.id,
                ..crate::messages::pose_message(p)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(f: impl FnOnce(&mut msgs::WorldControl)) -> msgs::WorldControl {
        let mut c = msgs::WorldControl::default();
        f(&mut c);
        c
    }

    /// Steps taken from `state` until it pauses (at most `limit`).
    fn run(state: &mut RunState, sim: &mut Duration, step: Duration, limit: u32) -> u32 {
        let mut steps = 0;
        while !state.paused && steps < limit {
            *sim += step;
            steps += 1;
            state.after_iteration(*sim);
        }
        steps
    }

    #[test]
    fn multi_step_while_paused_takes_that_many_steps_then_pauses() {
        let step = Duration::from_millis(2);
        let mut sim = Duration::ZERO;
        let mut s = RunState::new(true);
        s.apply(
            &control(|c| {
                c.pause = true;
                c.multi_step = 5;
            }),
            sim,
        );
        assert!(!s.paused);
        assert_eq!(run(&mut s, &mut sim, step, 100), 5);
        s.apply(
            &control(|c| {
                c.pause = true;
                c.step = true;
            }),
            sim,
        );
        assert_eq!(run(&mut s, &mut sim, step, 100), 1);
    }

    #[test]
    fn a_request_without_pause_unpauses_and_a_bare_step_does_not_count() {
        let mut s = RunState::new(true);
        s.apply(&control(|c| c.step = true), Duration::ZERO);
        assert_eq!(s, RunState::new(false));
    }

    #[test]
    fn run_to_sim_time_runs_until_then_pauses_and_a_past_time_is_ignored() {
        let step = Duration::from_millis(2);
        let mut sim = Duration::from_millis(100);
        let mut s = RunState::new(true);
        let to = |ms: i32| {
            control(move |c| {
                c.run_to_sim_time = Some(msgs::Time {
                    sec: 0,
                    nsec: ms * 1_000_000,
                })
            })
        };
        s.apply(&to(50), sim);
        assert_eq!(s.run_to, None);
        s.apply(&to(120), sim);
        assert_eq!(run(&mut s, &mut sim, step, 100), 10);
        assert_eq!(sim, Duration::from_millis(120));
    }

    #[test]
    fn reset_all_and_time_only_rewind_model_only_does_not() {
        let reset = |all, time_only, model_only| {
            let mut s = RunState::new(false);
            s.apply(
                &control(|c| {
                    c.reset = Some(msgs::WorldReset {
                        header: None,
                        all,
                        time_only,
                        model_only,
                    })
                }),
                Duration::ZERO,
            );
            s.rewind
        };
        assert!(reset(true, false, false));
        assert!(reset(false, true, false));
        assert!(!reset(false, false, true));
    }

    fn models() -> Vec<ModelSpec> {
        ["ur3e", "frame_x"]
            .iter()
            .enumerate()
            .map(|(i, n)| ModelSpec {
                name: n.to_string(),
                id: 10 + i as u32,
                pose: PoseSpec::IDENTITY,
                is_static: false,
            })
            .collect()
    }

    fn pose(name: &str, id: u32, p: [f64; 3], q: Option<[f64; 4]>) -> msgs::Pose {
        msgs::Pose {
            name: name.into(),
            id,
            position: Some(p.into()),
            orientation: q.map(Into::into),
            header: None,
        }
    }

    #[test]
    fn set_pose_finds_a_model_by_id_first_then_by_name_and_normalises() {
        let m = models();
        let (i, p) = pose_request(
            &m,
            &pose("ur3e", 11, [1.0, 2.0, 3.0], Some([0.0, 0.0, 0.0, 2.0])),
        )
        .unwrap();
        assert_eq!(i, 1, "the id wins");
        assert_eq!(p.orientation, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(p.position, [1.0, 2.0, 3.0]);
        let (i, p) = pose_request(&m, &pose("frame_x", 0, [0.0; 3], None)).unwrap();
        assert_eq!((i, p.orientation), (1, [0.0, 0.0, 0.0, 1.0]));
    }

    #[test]
    fn set_pose_refuses_unknown_entities_and_bad_numbers() {
        let m = models();
        assert!(matches!(
            pose_request(&m, &pose("nope", 0, [0.0; 3], None)),
            Err(SetPoseError::UnknownName(..))
        ));
        assert!(matches!(
            pose_request(&m, &pose("", 99, [0.0; 3], None)),
            Err(SetPoseError::UnknownId(99, _))
        ));
        assert_eq!(
            pose_request(&m, &pose("", 0, [0.0; 3], None)),
            Err(SetPoseError::NoEntity)
        );
        assert!(matches!(
            pose_request(&m, &pose("ur3e", 0, [f64::NAN, 0.0, 0.0], None)),
            Err(SetPoseError::Position(_))
        ));
        assert!(matches!(
            pose_request(&m, &pose("ur3e", 0, [0.0; 3], Some([0.0; 4]))),
            Err(SetPoseError::Orientation(_))
        ));
        assert!(matches!(
            pose_request(
                &m,
                &pose("ur3e", 0, [0.0; 3], Some([f64::INFINITY, 0.0, 0.0, 1.0]))
            ),
            Err(SetPoseError::Orientation(_))
        ));
    }
}
