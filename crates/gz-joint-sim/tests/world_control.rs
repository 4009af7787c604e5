//! World control and model poses of the stand-in, as gz-sim's world offers them: the
//! simulator binary on the UR3e world, called over gz-transport services by our client and
//! by the real C++ `ign service`, and judged by what the simulator itself publishes (the
//! sim time of its clock, the stamps and positions of its joint states, its `pose/info`).
//! While paused the simulator keeps publishing (as gz-sim does), so "stands still" is judged
//! by many consecutive messages with the same sim time, never by waiting a while.

mod common;

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::*;
use gz_joint_sim::SimOptions;
use gz_transport::msgs;
use gz_transport::{MsgsPrefix, Node, Subscription};
use test_support::{recv_for, IGN_SERVICE};

const CONTROL: &str = "/world/ur3e_world/control";
const SET_POSE: &str = "/world/ur3e_world/set_pose";
const POSE_INFO: &str = "/world/ur3e_world/pose/info";
const CLOCK: &str = "/world/ur3e_world/clock";
const ELBOW_CMD: &str = "/model/ur3e/joint/elbow_joint/0/cmd_pos";
/// The world's step (`<max_step_size>`), in nanoseconds of sim time.
const STEP_NS: u64 = 2_000_000;
/// Bound on every wait for something the simulator should do.
const WAIT: Duration = Duration::from_secs(30);

/// A joint state as received: its stamp (ns of sim time) and the elbow's position.
#[derive(Clone, Copy, Debug)]
struct State {
    stamp: u64,
    elbow: f64,
}

fn nanos(t: &msgs::Time) -> u64 {
    (t.sec as u64) * 1_000_000_000 + t.nsec as u64
}

/// The simulator on the UR3e world and our node's view of it.
struct Sim {
    proc: Proc,
    node: Node,
    partition: String,
    clock: Receiver<u64>,
    states: Receiver<State>,
    elbow: gz_transport::Publisher<msgs::Double>,
    _subs: Vec<Subscription>,
}

impl Sim {
    fn start(test: &str, fortress: bool, extra: &[&str]) -> Sim {
        loopback_only();
        let partition = partition(test);
        let (world, prefix) = if fortress {
            ("fortress/ur3e_world.sdf", MsgsPrefix::Ignition)
        } else {
            ("ur3e_world.sdf", MsgsPrefix::Gz)
        };
        let mut args = vec!["--msgs-prefix", prefix.as_str()];
        args.extend_from_slice(extra);
        let proc = Proc::spawn(sim_command(&sdf(world), &partition, &args));
        if let Err(lines) = proc.wait_for_line("running", WAIT) {
            panic!("gz-joint-sim did not start: {lines:#?}");
        }
        let node = loopback_node(&partition, prefix);
        let (clock_sub, clock) = subscribe_channel(&node, CLOCK, |m: msgs::Clock| {
            m.sim.as_ref().map_or(u64::MAX, nanos)
        });
        let (state_sub, states) = subscribe_channel(&node, UR3E_STATE_TOPIC, |m: msgs::Model| {
            let stamp = state_stamp(&m).map_or(u64::MAX, nanos);
            let elbow = m
                .joint
                .iter()
                .find(|j| j.name == "elbow_joint")
                .and_then(|j| j.axis1.as_ref())
                .map_or(f64::NAN, |a| a.position);
            State { stamp, elbow }
        });
        let subs = vec![clock_sub, state_sub];
        let elbow = node.advertise::<msgs::Double>(ELBOW_CMD).unwrap();
        let sim = Sim {
            proc,
            node,
            partition,
            clock,
            states,
            elbow,
            _subs: subs,
        };
        sim.next_clock();
        sim.next_state();
        assert!(
            sim.node.wait_for_service(CONTROL, WAIT).unwrap(),
            "{CONTROL} never appeared"
        );
        sim
    }

    fn next_clock(&self) -> u64 {
        self.clock
            .recv_timeout(WAIT)
            .expect("the simulator's clock stopped reaching us")
    }

    fn next_state(&self) -> State {
        self.states
            .recv_timeout(WAIT)
            .expect("the simulator's joint states stopped reaching us")
    }

    /// Forgets what arrived so far: what comes next was published after this call.
    fn drain(&self) {
        while self.clock.try_recv().is_ok() {}
        while self.states.try_recv().is_ok() {}
    }

    fn control(&self, f: impl FnOnce(&mut msgs::WorldControl)) {
        let mut request = msgs::WorldControl::default();
        f(&mut request);
        let answer: msgs::Boolean = self
            .node
            .request(CONTROL, &request, WAIT)
            .unwrap_or_else(|e| panic!("{CONTROL} {request:?}: {e}"));
        assert!(answer.data, "{CONTROL} answered false to {request:?}");
    }

    fn set_pose(&self, request: &msgs::Pose) -> bool {
        let answer: msgs::Boolean = self
            .node
            .request(SET_POSE, request, WAIT)
            .unwrap_or_else(|e| panic!("{SET_POSE} {request:?}: {e}"));
        answer.data
    }

    /// The sim time the clock settles on once it stops advancing: the first value the
    /// clock repeats, after it has shown one different from `from` (pass `None` to take the
    /// first repeat). A running world never repeats a value; a paused one repeats it at
    /// every iteration.
    fn settled_clock(&self, from: Option<u64>) -> u64 {
        let mut moved = from.is_none();
        let mut last = u64::MAX;
        recv_for("the clock to settle (ns)", &self.clock, WAIT, |&t| {
            let repeated = moved && t == last;
            moved |= from.is_some_and(|f| t != f);
            last = t;
            repeated
        })
    }

    /// The next `n` clock values and `n` joint states all carry sim time `t`, and the elbow
    /// is where it was: the world stands still (and goes on publishing, as gz-sim's does).
    fn assert_stands_still_at(&self, t: u64, n: usize) -> f64 {
        self.drain();
        for i in 0..n {
            let c = self.next_clock();
            assert_eq!(c, t, "clock message {i} after the world paused at {t} ns");
        }
        let first = self.next_state();
        for i in 0..n {
            let s = self.next_state();
            assert_eq!(
                s.stamp, t,
                "joint state {i} after the world paused at {t} ns"
            );
            assert_eq!(s.elbow, first.elbow, "the elbow moved while paused: {s:?}");
        }
        first.elbow
    }

    /// The first joint state that satisfies `done` (`what` it waits for, in a failure).
    fn state_until(&self, what: &str, done: impl FnMut(&State) -> bool) -> State {
        recv_for(what, &self.states, WAIT, done)
    }

    /// Commands the elbow to `target` until a joint state shows it past `past`. The
    /// command is repeated every 50 states (one sent before discovery completes is lost)
    /// until the elbow moves, not after: so none is still on its way when this returns.
    fn move_elbow_past(&self, target: f64, past: f64) -> State {
        assert!(
            self.elbow.wait_for_subscribers(WAIT),
            "the simulator never subscribed to {ELBOW_CMD}"
        );
        let start = self.next_state().elbow;
        let deadline = Instant::now() + WAIT;
        let mut obeyed = false;
        for n in 0.. {
            if !obeyed && n % 50 == 0 {
                self.elbow
                    .publish(&msgs::Double {
                        header: None,
                        data: target,
                    })
                    .unwrap();
            }
            let s = self.next_state();
            obeyed |= s.elbow != start;
            if s.elbow > past {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the elbow never passed {past}: {s:?}"
            );
        }
        unreachable!()
    }
}

#[test]
fn pause_stops_sim_time_and_joints_and_unpause_resumes() {
    let sim = Sim::start("pause", false, &[]);
    let moving = sim.move_elbow_past(1.0, 0.02);

    sim.control(|c| c.pause = true);
    let t = sim.settled_clock(None);
    assert!(
        t > moving.stamp,
        "paused at {t} ns, before the elbow moved at {}",
        moving.stamp
    );
    let frozen = sim.assert_stands_still_at(t, 200);
    assert!(
        frozen > 0.02 && frozen < 1.0,
        "the elbow stopped mid-way: {frozen}"
    );

    sim.control(|c| c.pause = false);
    let resumed = sim.state_until("the world to resume after unpausing", |s| {
        s.stamp > t + 10 * STEP_NS
    });
    assert!(
        resumed.elbow > frozen,
        "the elbow did not move on: {resumed:?} vs {frozen}"
    );
}

#[test]
fn paused_start_steps_and_multi_steps_exactly_and_a_bare_step_unpauses() {
    let sim = Sim::start("step", false, &["--paused"]);
    // `--paused`: sim time stands at 0, published all along.
    sim.assert_stands_still_at(0, 100);

    sim.control(|c| {
        c.pause = true;
        c.multi_step = 5;
    });
    let t = sim.settled_clock(Some(0));
    assert_eq!(t, 5 * STEP_NS, "multi_step: 5 while paused");
    sim.assert_stands_still_at(t, 50);

    sim.control(|c| {
        c.pause = true;
        c.step = true;
    });
    let t = sim.settled_clock(Some(5 * STEP_NS));
    assert_eq!(t, 6 * STEP_NS, "step: true while paused");
    sim.assert_stands_still_at(t, 50);

    // As gz-sim: every request sets the pause state from its `pause` field, so a step
    // without `pause: true` unpauses the world, which then runs on.
    sim.control(|c| c.step = true);
    sim.drain();
    sim.state_until("the world to run on after a bare step", |s| {
        s.stamp > t + 20 * STEP_NS
    });
}

#[test]
fn run_to_sim_time_runs_until_that_time_then_pauses() {
    let sim = Sim::start("run-to", false, &["--paused"]);
    sim.control(|c| {
        c.run_to_sim_time = Some(msgs::Time {
            sec: 0,
            nsec: 300_000_000,
        })
    });
    let t = sim.settled_clock(Some(0));
    assert_eq!(t, 300_000_000, "run_to_sim_time 0.3 s");
    sim.assert_stands_still_at(t, 50);
}

/// The sim time right after a rewind: the first clock value below `before`.
fn rewound_clock(sim: &Sim, before: u64) -> u64 {
    recv_for(
        &format!("the clock to go back below {before} ns"),
        &sim.clock,
        WAIT,
        |&t| t < before,
    )
}

#[test]
fn reset_all_and_time_only_bring_back_sim_time_joints_and_poses_as_harmonic() {
    let sim = Sim::start("reset", false, &[]);
    let poses = PoseWatch::subscribe(&sim);
    for kind in ["all", "time_only"] {
        let moved = sim.move_elbow_past(1.0, 0.05);
        assert!(sim.set_pose(&pose("frame_x", [1.0, 2.0, 3.0], None)));
        poses.until(|p| frame_x(p).0 == [1.0, 2.0, 3.0]);

        sim.control(|c| {
            c.reset = Some(msgs::WorldReset {
                header: None,
                all: kind == "all",
                time_only: kind == "time_only",
                model_only: false,
            })
        });
        let t = rewound_clock(&sim, moved.stamp);
        assert!(
            t < moved.stamp / 2,
            "reset {kind}: sim time went back only to {t} ns"
        );
        // The joints are back where they started and stay there: the controllers' targets
        // are back to their initial values (0) too.
        let after = sim.state_until("a joint state from after the reset", |s| {
            s.stamp < moved.stamp
        });
        assert_eq!(after.elbow, 0.0, "reset {kind}: {after:?}");
        for _ in 0..100 {
            let s = sim.next_state();
            assert_eq!(
                s.elbow, 0.0,
                "reset {kind}: the elbow moved after the reset: {s:?}"
            );
        }
        poses.until(|p| frame_x(p).0 == [0.3, 0.2, 0.3]);
    }
}

#[test]
fn reset_model_only_changes_nothing_as_gz_sim() {
    let sim = Sim::start("reset-model", false, &[]);
    let moved = sim.move_elbow_past(1.0, 0.05);
    sim.control(|c| {
        c.reset = Some(msgs::WorldReset {
            header: None,
            all: false,
            time_only: false,
            model_only: true,
        })
    });
    sim.drain();
    let mut last = sim.next_clock();
    for _ in 0..200 {
        let t = sim.next_clock();
        assert!(
            t > last,
            "the clock went from {last} to {t} ns after reset {{ model_only }}"
        );
        last = t;
    }
    let s = sim.next_state();
    assert!(
        s.elbow > moved.elbow,
        "the elbow went back: {s:?} vs {moved:?}"
    );
}

/// A `pose/info` message as `(name, id, position, orientation)` of each entity.
type Poses = Vec<(String, u32, [f64; 3], [f64; 4])>;

/// The simulator's `pose/info` messages.
struct PoseWatch {
    poses: Receiver<Poses>,
    _sub: Subscription,
}

impl PoseWatch {
    fn subscribe(sim: &Sim) -> PoseWatch {
        let (sub, poses) = subscribe_channel(&sim.node, POSE_INFO, |m: msgs::PoseV| -> Poses {
            m.pose
                .iter()
                .map(|p| {
                    let v = p.position.clone().unwrap_or_default();
                    let q = p.orientation.clone().unwrap_or_default();
                    (p.name.clone(), p.id, [v.x, v.y, v.z], [q.x, q.y, q.z, q.w])
                })
                .collect()
        });
        PoseWatch { poses, _sub: sub }
    }

    fn next(&self) -> Poses {
        self.poses
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no {POSE_INFO} message reached us"))
    }

    /// The first message that satisfies `done`.
    fn until(&self, mut done: impl FnMut(&[(String, u32, [f64; 3], [f64; 4])]) -> bool) -> Poses {
        recv_for(
            &format!("{POSE_INFO} to show that"),
            &self.poses,
            WAIT,
            |p| done(p),
        )
    }
}

fn frame_x(poses: &[(String, u32, [f64; 3], [f64; 4])]) -> ([f64; 3], [f64; 4]) {
    let (_, _, p, q) = poses
        .iter()
        .find(|(n, ..)| n == "frame_x")
        .unwrap_or_else(|| panic!("no frame_x in {poses:?}"));
    (*p, *q)
}

fn pose(name: &str, p: [f64; 3], q: Option<[f64; 4]>) -> msgs::Pose {
    msgs::Pose {
        header: None,
        name: name.into(),
        id: 0,
        position: Some(p.into()),
        orientation: q.map(Into::into),
    }
}

#[test]
fn set_pose_moves_frame_x_on_pose_info_and_refuses_unknown_entities_and_bad_numbers() {
    let sim = Sim::start("set-pose", false, &[]);
    let poses = PoseWatch::subscribe(&sim);
    let first = poses.next();
    let names: Vec<&str> = first.iter().map(|(n, ..)| n.as_str()).collect();
    assert_eq!(names, ["ur3e", "frame_x", "frame_xd"]);
    assert_eq!(frame_x(&first), ([0.3, 0.2, 0.3], [0.0, 0.0, 0.0, 1.0]));

    // A quarter turn about z, given unnormalised: stored (and reported) normalised.
    let h = std::f64::consts::FRAC_1_SQRT_2;
    assert!(sim.set_pose(&pose(
        "frame_x",
        [0.5, -0.1, 0.4],
        Some([0.0, 0.0, 2.0, 2.0])
    )));
    let moved = poses.until(|p| frame_x(p).0 == [0.5, -0.1, 0.4]);
    let (_, q) = frame_x(&moved);
    assert!(
        (q[2] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12 && q[0] == 0.0 && q[1] == 0.0,
        "{q:?}"
    );
    let frame_xd = moved.iter().find(|(n, ..)| n == "frame_xd").unwrap();
    assert_eq!(frame_xd.2, [0.3, -0.2, 0.3], "frame_xd moved too");

    // By id, as gz-sim takes a non-zero id before the name.
    let id = moved.iter().find(|(n, ..)| n == "frame_xd").unwrap().1;
    let mut by_id = pose("frame_x", [0.0, 0.0, 1.0], None);
    by_id.id = id;
    assert!(sim.set_pose(&by_id));
    poses.until(|p| {
        p.iter()
            .any(|(n, _, v, _)| n == "frame_xd" && *v == [0.0, 0.0, 1.0])
    });

    for (what, request) in [
        ("an unknown entity", pose("frame_y", [1.0, 1.0, 1.0], None)),
        (
            "a NaN position",
            pose("frame_x", [f64::NAN, 0.0, 0.0], None),
        ),
        (
            "an infinite position",
            pose("frame_x", [0.0, f64::INFINITY, 0.0], None),
        ),
        (
            "a zero quaternion",
            pose("frame_x", [1.0, 1.0, 1.0], Some([0.0; 4])),
        ),
        (
            "a NaN quaternion",
            pose("frame_x", [1.0, 1.0, 1.0], Some([f64::NAN, 0.0, 0.0, 1.0])),
        ),
    ] {
        assert!(!sim.set_pose(&request), "{what} was accepted");
    }
    // Nothing moved: a message published after the refusals still has frame_x where it was.
    let _ = poses.next();
    let after = poses.next();
    assert_eq!(frame_x(&after).0, [0.5, -0.1, 0.4]);
    let warned = sim
        .proc
        .wait_for_line("no model named \"frame_y\" directly in the world", WAIT);
    assert!(warned.is_ok(), "no warning naming frame_y: {warned:?}");
}

/// Runs the real `ign service` (Fortress) once, bounded, and returns its output.
fn ign_service(partition: &str, service: &str, reqtype: &str, req: &str) -> String {
    let mut c = std::process::Command::new(IGN_SERVICE);
    c.args([
        "-s",
        service,
        "--reqtype",
        reqtype,
        "--reptype",
        "ignition.msgs.Boolean",
        "--timeout",
        "10000",
        "--req",
        req,
    ])
    .env("IGN_IP", "127.0.0.1")
    .env("IGN_PARTITION", partition);
    Proc::spawn(c).finish(Duration::from_secs(30)).1.join("\n")
}

#[test]
fn ign_service_pauses_steps_moves_a_frame_and_resets_the_clock_only_as_fortress() {
    let sim = Sim::start("ign-service", true, &["--reset-behaviour", "fortress"]);
    let poses = PoseWatch::subscribe(&sim);
    let control = |req: &str| {
        let out = ign_service(&sim.partition, CONTROL, "ignition.msgs.WorldControl", req);
        assert!(
            out.contains("data: true"),
            "ign service --req '{req}': {out}"
        );
    };
    let moving = sim.move_elbow_past(1.0, 0.05);

    control("pause: true");
    let t = sim.settled_clock(None);
    let frozen = sim.assert_stands_still_at(t, 100);

    control("pause: true, multi_step: 3");
    let stepped = sim.settled_clock(Some(t));
    assert_eq!(stepped, t + 3 * STEP_NS);

    let out = ign_service(
        &sim.partition,
        SET_POSE,
        "ignition.msgs.Pose",
        "name: \"frame_x\", position: {x: 1, y: 2, z: 3}, orientation: {w: 1}",
    );
    assert!(out.contains("data: true"), "ign service set_pose: {out}");
    // Moved while paused, as gz-sim's UserCommands and Physics do.
    poses.until(|p| frame_x(p).0 == [1.0, 2.0, 3.0]);

    // Fortress rewinds the clock only: the joints and frames stay.
    control("pause: true, reset: {all: true}");
    let zero = sim.settled_clock(Some(stepped));
    assert_eq!(zero, 0);
    let elbow = sim.assert_stands_still_at(0, 50);
    assert!(
        elbow >= frozen && elbow > moving.elbow,
        "the elbow went back: {elbow}"
    );
    let after = poses.next();
    assert_eq!(frame_x(&after).0, [1.0, 2.0, 3.0]);
}

/// A one-joint world whose JointStatePublisher has an `<update_rate>`, heading for
/// `<initial_position>` 1 from 0.
const RATED_WORLD: &str = r#"<sdf version="1.9"><world name="rated">
  <physics name="p" type="ode"><max_step_size>0.002</max_step_size></physics>
  <model name="arm">
    <link name="base"/>
    <link name="tip"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
    <joint name="j" type="revolute"><parent>base</parent><child>tip</child><axis><xyz>0 0 1</xyz></axis></joint>
    <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
      <joint_name>j</joint_name><use_velocity_commands>true</use_velocity_commands><cmd_max>0.25</cmd_max><initial_position>1</initial_position>
    </plugin>
    <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">
      <update_rate>50</update_rate>
    </plugin>
  </model></world></sdf>"#;

#[test]
fn a_rated_joint_state_publisher_publishes_at_every_paused_iteration_and_survives_a_reset() {
    loopback_only();
    let world = world_from_text("rated", "rated.sdf", RATED_WORLD);
    let (sim, node) = start_with_node(
        &world,
        &partition("rated"),
        SimOptions {
            paused: true,
            ..Default::default()
        },
    );
    let (_sub, states) = subscribe_channel(
        &node,
        "/world/rated/model/arm/joint_state",
        |m: msgs::Model| {
            let stamp = state_stamp(&m).map_or(u64::MAX, nanos);
            let position = m.joint[0].axis1.as_ref().map_or(f64::NAN, |a| a.position);
            (stamp, position)
        },
    );
    let next = || states.recv_timeout(WAIT).expect("no joint state");
    // Paused: gz-sim's JointStatePublisher skips a state only when sim time has advanced by
    // less than its period, so with sim time standing it publishes at every iteration.
    next();
    for _ in 0..20 {
        assert_eq!(next(), (0, 0.0));
    }
    assert!(sim.paused());

    let control = |request: msgs::WorldControl| {
        let answer: msgs::Boolean = node
            .request("/world/rated/control", &request, WAIT)
            .unwrap();
        assert!(answer.data);
    };
    control(msgs::WorldControl::default());
    // Running: one state per 20 ms of sim time (50 Hz).
    let mut moved = recv_for("sim time to leave 0 (unpaused)", &states, WAIT, |s| {
        s.0 != 0
    });
    for _ in 0..10 {
        let s = next();
        assert_eq!(s.0 - moved.0, 20_000_000, "{s:?} after {moved:?}");
        moved = s;
    }
    assert!(moved.1 > 0.0);

    control(msgs::WorldControl {
        reset: Some(msgs::WorldReset {
            header: None,
            all: true,
            time_only: false,
            model_only: false,
        }),
        ..Default::default()
    });
    // Sim time went back: the publisher goes on (from the reset joint, heading for its
    // initial target again).
    let after = recv_for("a joint state from after the reset", &states, WAIT, |s| {
        s.0 < moved.0
    });
    assert!(
        after.1 < moved.1,
        "the joint did not go back: {after:?} vs {moved:?}"
    );
    let later = next();
    assert!(
        later.0 > after.0 && later.1 > after.1,
        "{later:?} after {after:?}"
    );
    assert!(sim.sim_time() < Duration::from_nanos(moved.0));
}
