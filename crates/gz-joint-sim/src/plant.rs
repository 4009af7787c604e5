//! One physics step of the world's joints: gz-sim's order is controllers (PreUpdate), then
//! physics (Update), then publishers (PostUpdate). This module does the first two.
//!
//! The physics is deliberately small: each joint is an independent 1-DOF rigid body (the
//! child link's inertia about the axis), with SDF damping, effort limits and position
//! limits; no gravity, no contacts. A velocity command is met exactly within the effort
//! limit, as DART's servo joints do; a force command is integrated semi-implicitly.

use crate::control::{velocity_command, ControlMode, Pid};
use crate::sdf::{JointKind, World};

/// Position, velocity and force (torque) of one joint axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointState {
    pub position: f64,
    pub velocity: f64,
    pub force: f64,
}

struct JointBody {
    moves: bool,
    limits: Option<(f64, f64)>,
    effort: f64,
    velocity_limit: f64,
    damping: f64,
    inertia: f64,
}

struct Controller {
    joints: Vec<usize>,
    mode: ControlMode,
    pid: Pid,
}

/// What a controller asks of a joint for the current step; physics clears it after use,
/// as gz-sim's Physics system clears `JointVelocityCmd`/`JointForceCmd`.
#[derive(Clone, Copy)]
enum Command {
    None,
    Velocity(f64),
    Force(f64),
}

/// The world's joints and controllers, stepped at a fixed `dt`.
pub struct Plant {
    dt: f64,
    bodies: Vec<JointBody>,
    state: Vec<JointState>,
    commands: Vec<Command>,
    controllers: Vec<Controller>,
    iterations: u64,
}

impl Plant {
    pub fn new(world: &World) -> Plant {
        let bodies: Vec<JointBody> = world
            .joints
            .iter()
            .map(|j| {
                let axis = j.axis.unwrap_or(crate::sdf::AxisSpec {
                    xyz: [0.0, 0.0, 1.0],
                    lower: 0.0,
                    upper: 0.0,
                    effort: -1.0,
                    velocity: -1.0,
                    damping: 0.0,
                });
                JointBody {
                    moves: j.kind != JointKind::Fixed && !j.is_static,
                    limits: j
                        .kind
                        .has_position_limits()
                        .then_some((axis.lower, axis.upper)),
                    effort: axis.effort,
                    velocity_limit: axis.velocity,
                    damping: axis.damping,
                    inertia: j.effective_inertia,
                }
            })
            .collect();
        let controllers = world
            .position_controllers
            .iter()
            .map(|c| Controller {
                joints: c.joints.clone(),
                mode: c.mode,
                pid: Pid::new(c.pid),
            })
            .collect();
        Plant {
            dt: world.step.as_secs_f64(),
            state: vec![JointState::default(); bodies.len()],
            commands: vec![Command::None; bodies.len()],
            bodies,
            controllers,
            iterations: 0,
        }
    }

    pub fn joints(&self) -> &[JointState] {
        &self.state
    }

    /// Steps taken so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// One step. `targets[i]` is controller `i`'s current position target.
    pub fn step(&mut self, targets: &[f64]) {
        self.iterations += 1;
        // gz-sim: on the first iteration the JointPosition component has no data yet, so
        // JointPositionController does nothing ("give one iteration for the physics system
        // to update its size").
        if self.iterations > 1 {
            self.run_controllers(targets);
        }
        for (i, body) in self.bodies.iter().enumerate() {
            let command = std::mem::replace(&mut self.commands[i], Command::None);
            if body.moves {
                integrate(body, &mut self.state[i], command, self.dt);
            }
        }
    }

    fn run_controllers(&mut self, targets: &[f64]) {
        for (controller, &target) in self.controllers.iter_mut().zip(targets) {
            let error = self.state[controller.joints[0]].position - target;
            match controller.mode {
                ControlMode::Velocity { cmd_max } => {
                    let v = velocity_command(
                        self.state[controller.joints[0]].position,
                        target,
                        cmd_max,
                        self.dt,
                    );
                    for &j in &controller.joints {
                        self.commands[j] = Command::Velocity(v);
                    }
                }
                ControlMode::Pid => {
                    // gz-sim updates the PID once per joint of the controller (same error).
                    for &j in &controller.joints {
                        self.commands[j] = Command::Force(controller.pid.update(error, self.dt));
                    }
                }
            }
        }
    }
}

fn integrate(body: &JointBody, s: &mut JointState, command: Command, dt: f64) {
    let clamp_effort = |f: f64| {
        if body.effort >= 0.0 {
            f.clamp(-body.effort, body.effort)
        } else {
            f
        }
    };
    // Semi-implicit damping: stable for any damping and step.
    let by_force =
        |v: f64, f: f64| (v + dt * f / body.inertia) / (1.0 + dt * body.damping / body.inertia);
    let (velocity, force) = match command {
        Command::Velocity(wanted) => {
            let wanted = if body.velocity_limit >= 0.0 {
                wanted.clamp(-body.velocity_limit, body.velocity_limit)
            } else {
                wanted
            };
            let needed = body.inertia * (wanted - s.velocity) / dt + body.damping * wanted;
            let applied = clamp_effort(needed);
            if applied == needed {
                (wanted, needed)
            } else {
                (by_force(s.velocity, applied), applied)
            }
        }
        Command::Force(f) => {
            let applied = clamp_effort(f);
            (by_force(s.velocity, applied), applied)
        }
        Command::None => (by_force(s.velocity, 0.0), 0.0),
    };
    let mut position = s.position + dt * velocity;
    let mut velocity = velocity;
    if let Some((lower, upper)) = body.limits {
        if position > upper {
            position = upper;
            velocity = velocity.min(0.0);
        } else if position < lower {
            position = lower;
            velocity = velocity.max(0.0);
        }
    }
    *s = JointState {
        position,
        velocity,
        force,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdf::World;
    use std::path::PathBuf;

    fn world(name: &str) -> World {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../sdf")
            .join(name);
        World::load_with_resource_paths(path, &[]).unwrap()
    }

    fn index(w: &World, name: &str) -> usize {
        w.joint_index(name).unwrap()
    }

    #[test]
    fn velocity_mode_moves_at_cmd_max_and_stops_on_target() {
        let w = world("ur3e_world.sdf");
        let mut plant = Plant::new(&w);
        let elbow = index(&w, "elbow_joint");
        let mut targets = vec![0.0; w.position_controllers.len()];
        let c = w
            .position_controllers
            .iter()
            .position(|c| c.joints == [elbow])
            .unwrap();
        targets[c] = 0.5;
        plant.step(&targets); // first iteration: controllers idle
        assert_eq!(plant.joints()[elbow].position, 0.0);
        for _ in 0..1000 {
            plant.step(&targets);
        }
        // 1000 steps of 2 ms at 0.25 rad/s.
        let s = plant.joints()[elbow];
        assert!((s.position - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s.velocity - 0.25).abs() < 1e-9, "{s:?}");
        for _ in 0..10 {
            plant.step(&targets);
        }
        let s = plant.joints()[elbow];
        assert!(
            (s.position - 0.5).abs() < 1e-12 && s.velocity.abs() < 1e-9,
            "{s:?}"
        );
        // Every other joint held at its initial target, 0.
        for (i, j) in plant.joints().iter().enumerate() {
            if i != elbow {
                assert_eq!(j.position, 0.0, "{}", w.joints[i].name);
            }
        }
    }

    #[test]
    fn position_limits_hold() {
        let w = world("ur3e_world.sdf");
        let mut plant = Plant::new(&w);
        let elbow = index(&w, "elbow_joint");
        let c = w
            .position_controllers
            .iter()
            .position(|c| c.joints == [elbow])
            .unwrap();
        let mut targets = vec![0.0; w.position_controllers.len()];
        targets[c] = 10.0;
        for _ in 0..((std::f64::consts::PI / 0.25 / 0.002) as usize + 500) {
            plant.step(&targets);
        }
        assert_eq!(plant.joints()[elbow].position, std::f64::consts::PI);
    }

    #[test]
    fn pid_mode_converges_on_the_target() {
        let dir = std::env::temp_dir().join(format!("gz-joint-sim-pid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w.sdf");
        std::fs::write(
            &file,
            r#"<sdf version="1.9"><world name="w"><physics name="p" type="ode"><max_step_size>0.001</max_step_size></physics>
            <model name="m"><link name="a"/>
              <link name="b"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
              <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz><dynamics><damping>0.5</damping></dynamics></axis></joint>
              <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
                <joint_name>j</joint_name><p_gain>20</p_gain><i_gain>0</i_gain><d_gain>2</d_gain><initial_position>0.3</initial_position>
              </plugin></model></world></sdf>"#,
        )
        .unwrap();
        let w = World::load_with_resource_paths(&file, &[]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(w.position_controllers[0].mode, ControlMode::Pid);
        let mut plant = Plant::new(&w);
        let targets = [w.position_controllers[0].initial_position];
        for _ in 0..10_000 {
            plant.step(&targets);
        }
        let s = plant.joints()[0];
        assert!(
            (s.position - 0.3).abs() < 1e-3 && s.velocity.abs() < 1e-3,
            "{s:?}"
        );
    }
}
