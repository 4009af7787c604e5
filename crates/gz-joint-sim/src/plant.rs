//! One physics step of the world's joints: gz-sim's order is controllers (PreUpdate), then
//! physics (Update), then publishers (PostUpdate). This module does the first two.
//!
//! The physics is deliberately small: each joint is an independent 1-DOF rigid body (the
//! child link's inertia about the axis, see [`crate::JointSpec::effective_inertia`]), with
//! the SDF's damping, Coulomb friction, effort, velocity and position limits; no gravity,
//! no contacts, no coupling between joints. The limits act as DART (Gazebo's default
//! physics engine, through gz-physics) applies them:
//!
//! - a velocity command makes the joint a servo (DART `SERVO` actuator): the commanded
//!   velocity, clipped to the `<velocity>` limit and to what keeps the next position within
//!   `<lower>/<upper>`, is met exactly when the torque it takes is within `<effort>`;
//!   otherwise `<effort>` is applied and the joint falls short;
//! - a force command (DART `FORCE` actuator) is clipped to `<effort>` (DART's
//!   `setCommand`), and the velocity it produces is then held within `<velocity>` (DART's
//!   joint constraint, as gz-physics enforces limits on every joint);
//! - position limits stop the joint at `<lower>/<upper>`.
//!
//! Damping is integrated semi-implicitly (stable for any damping and step, as DART's
//! implicit joint damping): `v' = (v + dt·τ/I) / (1 + dt·b/I)`.

use crate::control::{velocity_command, ControlMode, Pid};
use crate::sdf::{JointKind, World};

/// Position, velocity and force (torque) of one joint axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointState {
    pub position: f64,
    pub velocity: f64,
    /// What the actuator applied during the step: the servo torque under a velocity
    /// command, the (clipped) force under a force command, 0 otherwise.
    pub force: f64,
}

struct JointBody {
    moves: bool,
    limits: Option<(f64, f64)>,
    effort: f64,
    velocity_limit: f64,
    damping: f64,
    friction: f64,
    inertia: f64,
    /// Some system sends this joint force commands (ApplyJointForce, the JointController's
    /// force mode, the JointPositionController's PID mode). In gz-sim the joint then has a
    /// `JointForceCmd` component for good, and its Physics system applies that force and
    /// ignores any velocity command on the joint.
    force_driven: bool,
}

struct PositionController {
    joints: Vec<usize>,
    mode: ControlMode,
    pid: Pid,
}

struct VelocityController {
    joints: Vec<usize>,
    /// `use_force_commands`: a PID on the velocity error.
    force_pid: Option<Pid>,
}

/// What the controllers ask of a joint for the current step; physics clears it after use,
/// as gz-sim's Physics system clears `JointVelocityCmd`/`JointForceCmd`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Command {
    None,
    Velocity(f64),
    Force(f64),
}

/// The current command of every controller, in [`World`] order: position targets of the
/// JointPositionControllers, velocities of the JointControllers, forces of the
/// ApplyJointForces. Values are taken as received, NaN included (see [`Plant::step`]).
#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub positions: Vec<f64>,
    pub velocities: Vec<f64>,
    pub forces: Vec<f64>,
}

impl Targets {
    /// The SDF's initial commands: `<initial_position>`, `<initial_velocity>`, force 0.
    pub fn initial(world: &World) -> Targets {
        Targets {
            positions: world
                .position_controllers
                .iter()
                .map(|c| c.initial_position)
                .collect(),
            velocities: world
                .joint_controllers
                .iter()
                .map(|c| c.initial_velocity)
                .collect(),
            forces: vec![0.0; world.force_appliers.len()],
        }
    }
}

/// The world's joints and controllers, stepped at a fixed `dt`.
pub struct Plant {
    dt: f64,
    bodies: Vec<JointBody>,
    state: Vec<JointState>,
    position_controllers: Vec<PositionController>,
    velocity_controllers: Vec<VelocityController>,
    /// The joint of each ApplyJointForce.
    force_joints: Vec<usize>,
    /// This step's requests, per joint.
    velocity_commands: Vec<Option<f64>>,
    force_commands: Vec<f64>,
    iterations: u64,
}

impl Plant {
    pub fn new(world: &World) -> Plant {
        let mut force_driven = vec![false; world.joints.len()];
        for c in &world.position_controllers {
            if c.mode == ControlMode::Pid {
                c.joints.iter().for_each(|&j| force_driven[j] = true);
            }
        }
        for c in &world.joint_controllers {
            if c.force_mode.is_some() {
                c.joints.iter().for_each(|&j| force_driven[j] = true);
            }
        }
        for a in &world.force_appliers {
            force_driven[a.joint] = true;
        }
        let bodies: Vec<JointBody> = world
            .joints
            .iter()
            .zip(force_driven)
            .map(|(j, force_driven)| {
                let axis = j.axis.unwrap_or(crate::sdf::AxisSpec {
                    xyz: [0.0, 0.0, 1.0],
                    lower: 0.0,
                    upper: 0.0,
                    effort: -1.0,
                    velocity: -1.0,
                    damping: 0.0,
                    friction: 0.0,
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
                    friction: axis.friction,
                    inertia: j.effective_inertia,
                    force_driven,
                }
            })
            .collect();
        Plant {
            dt: world.step.as_secs_f64(),
            state: vec![JointState::default(); bodies.len()],
            velocity_commands: vec![None; bodies.len()],
            force_commands: vec![0.0; bodies.len()],
            bodies,
            position_controllers: world
                .position_controllers
                .iter()
                .map(|c| PositionController {
                    joints: c.joints.clone(),
                    mode: c.mode,
                    pid: Pid::new(c.pid),
                })
                .collect(),
            velocity_controllers: world
                .joint_controllers
                .iter()
                .map(|c| VelocityController {
                    joints: c.joints.clone(),
                    force_pid: c.force_mode.map(Pid::new),
                })
                .collect(),
            force_joints: world.force_appliers.iter().map(|a| a.joint).collect(),
            iterations: 0,
        }
    }

    pub fn joints(&self) -> &[JointState] {
        &self.state
    }

    /// Whether joint `j` is driven by force commands (see `JointBody::force_driven`).
    pub fn force_driven(&self, j: usize) -> bool {
        self.bodies[j].force_driven
    }

    /// Steps taken so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// One step under the controllers' current commands.
    ///
    /// A non-finite velocity or force command goes to physics as Gazebo sends it there, and
    /// is ignored there as gz-physics ignores it (`SetJointVelocityCommand` and
    /// `SetJointForce` log an error and return): DART has reset the joint's command after
    /// the previous step, so a velocity-commanded joint is servoed to rest and a
    /// force-commanded one gets no force, for as long as the NaN is the latest command.
    /// The caller warns on receipt.
    pub fn step(&mut self, targets: &Targets) {
        self.iterations += 1;
        // gz-sim: on the first iteration the JointPosition/JointVelocity components have no
        // data yet, so the position and velocity controllers do nothing ("give one
        // iteration for the physics system to update its size"). ApplyJointForce has no
        // such wait.
        if self.iterations > 1 {
            self.run_position_controllers(&targets.positions);
            self.run_velocity_controllers(&targets.velocities);
        }
        for (&j, &f) in self.force_joints.iter().zip(&targets.forces) {
            // gz-sim's ApplyJointForce adds to whatever else commanded a force this step.
            self.force_commands[j] += f;
        }
        for (i, body) in self.bodies.iter().enumerate() {
            let velocity = self.velocity_commands[i].take();
            let force = std::mem::replace(&mut self.force_commands[i], 0.0);
            let command = if body.force_driven {
                Command::Force(force)
            } else if let Some(v) = velocity {
                Command::Velocity(v)
            } else {
                Command::None
            };
            if body.moves {
                self.state[i] = integrate(body, self.state[i], command, self.dt);
            }
        }
    }

    fn run_position_controllers(&mut self, targets: &[f64]) {
        for (controller, &target) in self.position_controllers.iter_mut().zip(targets) {
            let position = self.state[controller.joints[0]].position;
            match controller.mode {
                ControlMode::Velocity { cmd_max } => {
                    let v = velocity_command(position, target, cmd_max, self.dt);
                    for &j in &controller.joints {
                        self.velocity_commands[j] = Some(v);
                    }
                }
                ControlMode::Pid => {
                    // gz-sim updates the PID once per joint of the controller (same error).
                    for &j in &controller.joints {
                        self.force_commands[j] = controller.pid.update(position - target, self.dt);
                    }
                }
            }
        }
    }

    fn run_velocity_controllers(&mut self, targets: &[f64]) {
        for (controller, &target) in self.velocity_controllers.iter_mut().zip(targets) {
            match &mut controller.force_pid {
                None => {
                    for &j in &controller.joints {
                        self.velocity_commands[j] = Some(target);
                    }
                }
                Some(pid) => {
                    // As gz-sim: the error is the first joint's, the PID is updated once
                    // per joint.
                    let error = self.state[controller.joints[0]].velocity - target;
                    for &j in &controller.joints {
                        self.force_commands[j] = pid.update(error, self.dt);
                    }
                }
            }
        }
    }
}

fn clamp_symmetric(value: f64, limit: f64) -> f64 {
    // Negative SDF limits mean "none" (the SDF default −1).
    if limit >= 0.0 {
        value.clamp(-limit, limit)
    } else {
        value
    }
}

/// The velocity after a step under force `f`: damping semi-implicitly, then Coulomb
/// friction as a bounded impulse toward rest (it stops the joint, never reverses it).
fn velocity_under_force(body: &JointBody, v: f64, f: f64, dt: f64) -> f64 {
    let v = (v + dt * f / body.inertia) / (1.0 + dt * body.damping / body.inertia);
    let friction_dv = body.friction * dt / body.inertia;
    if v.abs() <= friction_dv {
        0.0
    } else {
        v - friction_dv.copysign(v)
    }
}

fn integrate(body: &JointBody, s: JointState, command: Command, dt: f64) -> JointState {
    let (velocity, force) = match command {
        Command::Velocity(wanted) => {
            // gz-physics ignores a non-finite command; DART's reset command (0) stands.
            let mut wanted = if wanted.is_finite() { wanted } else { 0.0 };
            wanted = clamp_symmetric(wanted, body.velocity_limit);
            if let Some((lower, upper)) = body.limits {
                // DART's servo never asks for a velocity that would leave the limits.
                wanted = wanted.clamp(
                    ((lower - s.position) / dt).min(0.0),
                    ((upper - s.position) / dt).max(0.0),
                );
            }
            // The torque that reaches `wanted` in this step against damping; friction
            // opposes the motion (or, to stop, helps up to its bound).
            let mut needed = body.inertia * (wanted - s.velocity) / dt + body.damping * wanted;
            if wanted != 0.0 {
                needed += body.friction.copysign(wanted);
            } else {
                needed = (needed.abs() - body.friction).max(0.0).copysign(needed);
            }
            let applied = clamp_symmetric(needed, body.effort);
            if applied == needed {
                (wanted, needed)
            } else {
                (velocity_under_force(body, s.velocity, applied, dt), applied)
            }
        }
        Command::Force(f) => {
            let f = if f.is_finite() { f } else { 0.0 };
            let applied = clamp_symmetric(f, body.effort);
            let v = velocity_under_force(body, s.velocity, applied, dt);
            (clamp_symmetric(v, body.velocity_limit), applied)
        }
        Command::None => {
            let v = velocity_under_force(body, s.velocity, 0.0, dt);
            (clamp_symmetric(v, body.velocity_limit), 0.0)
        }
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
    JointState {
        position,
        velocity,
        force,
    }
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

    /// The world `text`, loaded from a scratch file of this test's own (removed once loaded).
    fn world_from_text(text: &str) -> World {
        let dir = std::env::temp_dir().join(format!(
            "gz-joint-sim-plant-{}-{}",
            std::process::id(),
            std::thread::current()
                .name()
                .unwrap_or("t")
                .replace("::", "-")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w.sdf");
        std::fs::write(&file, text).unwrap();
        let w = World::load_with_resource_paths(&file, &[]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        w
    }

    /// `steps` steps of `plant` towards `targets`.
    fn run(plant: &mut Plant, targets: &Targets, steps: usize) {
        for _ in 0..steps {
            plant.step(targets);
        }
    }

    #[test]
    fn velocity_mode_moves_at_cmd_max_and_stops_on_target() {
        let w = world("ur3e_world.sdf");
        let mut plant = Plant::new(&w);
        let elbow = index(&w, "elbow_joint");
        let mut targets = Targets::initial(&w);
        let c = w
            .position_controllers
            .iter()
            .position(|c| c.joints == [elbow])
            .unwrap();
        targets.positions[c] = 0.5;
        plant.step(&targets); // first iteration: controllers idle
        assert_eq!(plant.joints()[elbow].position, 0.0);
        run(&mut plant, &targets, 1000);
        // 1000 steps of 2 ms at 0.25 rad/s.
        let s = plant.joints()[elbow];
        assert!((s.position - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s.velocity - 0.25).abs() < 1e-9, "{s:?}");
        run(&mut plant, &targets, 10);
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
        let mut targets = Targets::initial(&w);
        targets.positions[c] = 10.0;
        run(
            &mut plant,
            &targets,
            (std::f64::consts::PI / 0.25 / 0.002) as usize + 500,
        );
        assert_eq!(plant.joints()[elbow].position, std::f64::consts::PI);
    }

    #[test]
    fn pid_mode_converges_on_the_target() {
        let w = world_from_text(
            r#"<sdf version="1.9"><world name="w"><physics name="p" type="ode"><max_step_size>0.001</max_step_size></physics>
            <model name="m"><link name="a"/>
              <link name="b"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
              <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz><dynamics><damping>0.5</damping></dynamics></axis></joint>
              <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
                <joint_name>j</joint_name><p_gain>20</p_gain><i_gain>0</i_gain><d_gain>2</d_gain><initial_position>0.3</initial_position>
              </plugin></model></world></sdf>"#,
        );
        assert_eq!(w.position_controllers[0].mode, ControlMode::Pid);
        let mut plant = Plant::new(&w);
        let targets = Targets::initial(&w);
        run(&mut plant, &targets, 10_000);
        let s = plant.joints()[0];
        assert!(
            (s.position - 0.3).abs() < 1e-3 && s.velocity.abs() < 1e-3,
            "{s:?}"
        );
    }

    /// The plant of a one-joint world and its initial targets: link of mass 2 with its
    /// centre of mass 0.1 from the axis and izz 0.01, so I = 0.01 + 2·0.1² = 0.03; limits
    /// and dynamics as given.
    fn one_joint(system: &str, limit: &str, dynamics: &str) -> (Plant, Targets) {
        let w = world_from_text(&format!(
            r#"<sdf version="1.9"><world name="w"><physics name="p" type="ode"><max_step_size>0.002</max_step_size></physics>
            <model name="m"><link name="a"/>
              <link name="b"><inertial><pose>0.1 0 0 0 0 0</pose><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
              <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz><limit>{limit}</limit><dynamics>{dynamics}</dynamics></axis></joint>
              {system}
            </model></world></sdf>"#
        ));
        assert!((w.joints[0].effective_inertia - 0.03).abs() < 1e-12);
        (Plant::new(&w), Targets::initial(&w))
    }

    const FORCE: &str = r#"<plugin filename="gz-sim-apply-joint-force-system" name="gz::sim::systems::ApplyJointForce"><joint_name>j</joint_name></plugin>"#;
    const VELOCITY: &str = r#"<plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController"><joint_name>j</joint_name></plugin>"#;

    #[test]
    fn constant_torque_from_rest_follows_the_first_order_response() {
        let (mut plant, mut targets) = one_joint(FORCE, "", "<damping>0.5</damping>");
        targets.forces[0] = 0.2;
        let (tau, b, inertia) = (0.2, 0.5, 0.03);
        for step in 1..=500 {
            plant.step(&targets);
            let t = step as f64 * 0.002;
            let expected = tau / b * (1.0 - (-b * t / inertia).exp());
            let s = plant.joints()[0];
            // Semi-implicit damping: within 1 % of the terminal velocity at dt·b/I = 1/30.
            assert!(
                (s.velocity - expected).abs() < 0.01 * tau / b,
                "t {t}: {} vs {expected}",
                s.velocity
            );
            assert_eq!(s.force, tau);
        }
    }

    #[test]
    fn force_commands_are_clipped_to_the_effort_limit_and_velocity_to_its_limit() {
        let (mut plant, mut targets) =
            one_joint(FORCE, "<effort>3</effort><velocity>1.5</velocity>", "");
        targets.forces[0] = -100.0;
        plant.step(&targets);
        let s = plant.joints()[0];
        assert_eq!(s.force, -3.0, "DART clips the force command to <effort>");
        assert!((s.velocity + 3.0 / 0.03 * 0.002).abs() < 1e-12, "{s:?}");
        run(&mut plant, &targets, 100);
        assert_eq!(plant.joints()[0].velocity, -1.5, "held at <velocity>");
    }

    #[test]
    fn a_velocity_command_is_met_within_the_effort_limit_and_held() {
        let (mut plant, mut targets) = one_joint(
            VELOCITY,
            "<effort>3</effort><velocity>2</velocity>",
            "<damping>0.5</damping>",
        );
        targets.velocities[0] = 1.0;
        plant.step(&targets);
        assert_eq!(
            plant.joints()[0].velocity,
            0.0,
            "first iteration: the controller waits"
        );
        // 1 rad/s in one 2 ms step takes 0.03·500 + 0.5 = 15.5 N·m: the servo gives 3.
        plant.step(&targets);
        let s = plant.joints()[0];
        assert_eq!(s.force, 3.0);
        assert!(s.velocity > 0.0 && s.velocity < 1.0, "{s:?}");
        run(&mut plant, &targets, 100);
        let s = plant.joints()[0];
        assert_eq!(s.velocity, 1.0);
        assert!(
            (s.force - 0.5).abs() < 1e-12,
            "holds the damping torque: {s:?}"
        );
        // Over the velocity limit: clipped to it.
        targets.velocities[0] = 10.0;
        run(&mut plant, &targets, 100);
        assert_eq!(plant.joints()[0].velocity, 2.0);
    }

    #[test]
    fn a_non_finite_velocity_command_servoes_the_joint_to_rest_as_gazebo_does() {
        let (mut plant, mut targets) = one_joint(VELOCITY, "", "");
        targets.velocities[0] = 1.0;
        run(&mut plant, &targets, 10);
        assert_eq!(plant.joints()[0].velocity, 1.0);
        targets.velocities[0] = f64::NAN;
        plant.step(&targets);
        let s = plant.joints()[0];
        assert_eq!(s.velocity, 0.0, "{s:?}");
        assert!(s.position.is_finite() && s.force.is_finite(), "{s:?}");
    }

    #[test]
    fn a_non_finite_force_command_applies_no_force() {
        let (mut plant, mut targets) = one_joint(FORCE, "", "<damping>0.5</damping>");
        targets.forces[0] = f64::INFINITY;
        plant.step(&targets);
        assert_eq!(plant.joints()[0], JointState::default());
    }

    #[test]
    fn position_limits_stop_a_force_driven_joint() {
        let (mut plant, mut targets) =
            one_joint(FORCE, "<lower>-0.1</lower><upper>0.1</upper>", "");
        targets.forces[0] = 1.0;
        run(&mut plant, &targets, 1000);
        let s = plant.joints()[0];
        assert_eq!((s.position, s.velocity), (0.1, 0.0));
    }

    #[test]
    fn coulomb_friction_holds_a_joint_against_a_smaller_torque() {
        let (mut plant, mut targets) = one_joint(FORCE, "", "<friction>0.3</friction>");
        targets.forces[0] = 0.2;
        run(&mut plant, &targets, 100);
        assert_eq!(plant.joints()[0].velocity, 0.0);
        targets.forces[0] = 0.6;
        plant.step(&targets);
        // Net 0.3 N·m on 0.03 kg·m² for 2 ms.
        assert!((plant.joints()[0].velocity - 0.02).abs() < 1e-12);
    }

    #[test]
    fn a_force_driven_joint_ignores_velocity_commands_as_gz_sim_physics_does() {
        let both = format!("{FORCE}{VELOCITY}");
        let (mut plant, mut targets) = one_joint(&both, "", "");
        assert!(plant.force_driven(0));
        targets.velocities[0] = 1.0;
        run(&mut plant, &targets, 10);
        assert_eq!(plant.joints()[0].velocity, 0.0);
    }
}
