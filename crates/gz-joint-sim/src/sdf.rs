//! Reading an SDF world the way gz-sim does, as far as joints go: world name and physics
//! step, nested models and `<include>`s (local files and `model://` URIs), joints with type,
//! axis and limits, and the parameters of the JointPositionController and
//! JointStatePublisher systems. Everything is resolved at load time (joint names, topics),
//! so a bad world fails before anything runs, with the file, line and element at fault.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use roxmltree::Node;

use crate::control::{ControlMode, PidGains};
use crate::topics;

/// Where in which file an element is, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
    /// XPath-like element path inside that file, e.g.
    /// `/sdf/model[@name='ur3e']/include/plugin[@name='gz::sim::systems::JointPositionController']`.
    pub element: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.element
        )
    }
}

/// Why a world could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: cannot read: {reason}", file.display())]
    Io {
        file: PathBuf,
        reason: std::io::Error,
    },
    #[error("{}: not well-formed XML: {reason}", file.display())]
    Xml {
        file: PathBuf,
        reason: roxmltree::Error,
    },
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    #[error(
        "{at}: cannot find include uri {uri:?} (looked in: {})",
        display_paths(searched)
    )]
    IncludeNotFound {
        at: Location,
        uri: String,
        searched: Vec<PathBuf>,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nowhere: no resource path set".into();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// SDF joint types. Multi-axis types (ball, universal, revolute2, gearbox) are not simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    Revolute,
    Continuous,
    Prismatic,
    Screw,
    Fixed,
}

impl JointKind {
    /// Degrees of freedom (size of gz-sim's JointPosition component).
    pub fn dof(self) -> u32 {
        match self {
            JointKind::Fixed => 0,
            _ => 1,
        }
    }

    /// Whether the position is confined to the axis limits.
    pub fn has_position_limits(self) -> bool {
        !matches!(self, JointKind::Continuous | JointKind::Fixed)
    }
}

/// A joint's first axis, as gz-sim's JointAxis component holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisSpec {
    /// Unit vector (SDF `<xyz>`, normalised as libsdformat does).
    pub xyz: [f64; 3],
    /// `<limit><lower>`/`<upper>`; SDF defaults ∓1e16; ±inf kept as given.
    pub lower: f64,
    pub upper: f64,
    /// `<limit><effort>`; negative means unlimited (SDF default −1).
    pub effort: f64,
    /// `<limit><velocity>`; negative means unlimited (SDF default −1).
    pub velocity: f64,
    /// `<dynamics><damping>`: viscous, torque (force) per rad/s (m/s).
    pub damping: f64,
    /// `<dynamics><friction>`: Coulomb friction, a torque (force) that opposes motion.
    pub friction: f64,
}

/// A pose as Gazebo's `Pose` component holds it: position and unit quaternion `[x, y, z, w]`
/// relative to the parent frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoseSpec {
    pub position: [f64; 3],
    pub orientation: [f64; 4],
}

impl PoseSpec {
    pub const IDENTITY: PoseSpec = PoseSpec {
        position: [0.0; 3],
        orientation: [0.0, 0.0, 0.0, 1.0],
    };
}

/// A joint of the world, flattened out of the model tree.
#[derive(Clone, Debug)]
pub struct JointSpec {
    /// The joint's own name (what the JointStatePublisher reports).
    pub name: String,
    /// `model::model::…::joint`, from the top-level model down.
    pub scoped_name: String,
    pub kind: JointKind,
    pub parent: String,
    pub child: String,
    /// `None` for fixed joints.
    pub axis: Option<AxisSpec>,
    /// Inertia (or mass, for prismatic joints) the joint moves: the child link's
    /// `<inertial>` about the joint axis (parallel-axis theorem from the centre of mass,
    /// the inertia tensor rotated into the axis).
    ///
    /// An approximation, stated plainly: only the child link counts, not the links further
    /// down the chain, and it does not change with the configuration. (The composite of the
    /// whole subtree at the SDF pose would be closer to DART for the proximal joints, e.g.
    /// 0.73 instead of 0.004 kg·m² for the UR3e's shoulder pan, but it makes the servo of
    /// the position worlds' heavy joints saturate their effort limit, so it changes how those
    /// worlds track targets; not done here.) On a real arm the
    /// proximal joints move the whole distal chain (a UR3e's shoulder pan sees tens of times
    /// the shoulder link's own inertia when stretched out), and the joints are coupled; here
    /// every joint is an independent 1-DOF body. It is what force commands, the servo's
    /// effort limit and damping act on.
    pub effective_inertia: f64,
    /// Joints of static models never move.
    pub is_static: bool,
    pub id: u32,
    /// The SDF `<pose>` of the joint (relative to its child link), as gz-sim's
    /// JointStatePublisher reports it.
    pub pose: PoseSpec,
}

/// A configured JointPositionController.
#[derive(Clone, Debug)]
pub struct PositionControllerSpec {
    /// Command topic (`gz.msgs.Double`).
    pub topic: String,
    /// The `<joint_name>`s as written; the first one names the topic and gives the error.
    pub joint_names: Vec<String>,
    /// Indices into [`World::joints`], same order as `joint_names`.
    pub joints: Vec<usize>,
    pub joint_index: u32,
    pub mode: ControlMode,
    pub pid: PidGains,
    /// Initial target: `<initial_position>` or 0.
    pub initial_position: f64,
    /// Unscoped name of the model the plugin is attached to.
    pub model_name: String,
    pub at: Location,
}

/// A configured JointController (gz-sim `JointController` system): a velocity command per
/// step on its joints, held until the next `Double` arrives.
#[derive(Clone, Debug)]
pub struct JointControllerSpec {
    /// Command topic (`gz.msgs.Double`, rad/s or m/s).
    pub topic: String,
    /// The `<joint_name>`s; the first one names the default topic.
    pub joint_names: Vec<String>,
    /// Indices into [`World::joints`], same order as `joint_names`.
    pub joints: Vec<usize>,
    /// `<initial_velocity>` or 0: commanded from the start until a message arrives.
    pub initial_velocity: f64,
    /// `Some(gains)` with `<use_force_commands>`: a PID on the velocity error gives a joint
    /// force instead of a velocity command (gz-sim's defaults differ from the
    /// JointPositionController's: p 1, i 0, d 0).
    pub force_mode: Option<PidGains>,
    /// Unscoped name of the model the plugin is attached to.
    pub model_name: String,
    pub at: Location,
}

/// A configured ApplyJointForce (gz-sim `ApplyJointForce` system): the last commanded force
/// (torque) is applied to its joint on every step.
#[derive(Clone, Debug)]
pub struct ApplyJointForceSpec {
    /// Command topic (`gz.msgs.Double`, N·m or N); gz-sim offers no `<topic>` for it.
    pub topic: String,
    pub joint_name: String,
    /// Index into [`World::joints`].
    pub joint: usize,
    /// Unscoped name of the model the plugin is attached to.
    pub model_name: String,
    pub at: Location,
}

/// How the JointStatePublisher names its topic when the SDF gives no `<topic>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum JointStateTopicNaming {
    /// gz-sim since ign-gazebo 6.8.0 (gz-sim PR 1405), so every Harmonic and current
    /// Fortress: `/world/<world>/model/<m1>/model/<m2>/…/joint_state`, the whole chain of
    /// nested models.
    #[default]
    Scoped,
    /// Ignition Gazebo 6.0.0–6.7.0: `/world/<parent>/model/<model>/joint_state`, where
    /// `<parent>` is the name of the model's parent entity (the world for a top-level
    /// model, the enclosing model for a nested one).
    #[value(name = "fortress-pre-6.8")]
    FortressPre6_8,
}

/// A configured JointStatePublisher.
#[derive(Clone, Debug)]
pub struct StatePublisherSpec {
    /// Joint state topic (`gz.msgs.Model`), as gz-sim >= 6.8 names it.
    pub topic: String,
    /// The topic Ignition Gazebo 6.0–6.7 uses instead (the same when `<topic>` is given).
    pub topic_fortress_pre_6_8: String,
    /// Unscoped model name (the message's `name`).
    pub model_name: String,
    pub model_id: u32,
    /// The model's pose relative to its parent (SDF `<pose>`, or the `<include>`'s), as the
    /// message's `pose`.
    pub model_pose: PoseSpec,
    /// Indices into [`World::joints`], in entity (SDF) order, as gz-sim's `std::set<Entity>`.
    pub joints: Vec<usize>,
    /// `<update_rate>` in Hz, if given; otherwise every step.
    pub update_rate: Option<f64>,
    pub at: Location,
}

impl StatePublisherSpec {
    /// The topic a Gazebo of that naming publishes on.
    pub fn topic_for(&self, naming: JointStateTopicNaming) -> &str {
        match naming {
            JointStateTopicNaming::Scoped => &self.topic,
            JointStateTopicNaming::FortressPre6_8 => &self.topic_fortress_pre_6_8,
        }
    }
}

/// A model directly under the world: what gz-sim's `set_pose` finds by name (an entity
/// named so whose parent is the world) and its SceneBroadcaster reports on `pose/info`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    pub name: String,
    /// Entity id (the same numbering as the joints' ids).
    pub id: u32,
    /// The SDF `<pose>` (or the `<include>`'s): the model's world pose at the start.
    pub pose: PoseSpec,
    pub is_static: bool,
}

/// A loaded, fully resolved world.
#[derive(Clone, Debug)]
pub struct World {
    pub name: String,
    pub file: PathBuf,
    /// Physics `<max_step_size>`.
    pub step: Duration,
    /// Physics `<real_time_factor>`.
    pub real_time_factor: f64,
    pub joints: Vec<JointSpec>,
    pub position_controllers: Vec<PositionControllerSpec>,
    pub joint_controllers: Vec<JointControllerSpec>,
    pub force_appliers: Vec<ApplyJointForceSpec>,
    pub state_publishers: Vec<StatePublisherSpec>,
    /// The top-level models, in SDF order.
    pub models: Vec<ModelSpec>,
}

impl World {
    /// Loads `path`, resolving `model://` URIs through `GZ_SIM_RESOURCE_PATH` (then
    /// `IGN_GAZEBO_RESOURCE_PATH`, `SDF_PATH`) and the world file's folder, as gz-sim does.
    pub fn load(path: impl AsRef<Path>) -> Result<World, LoadError> {
        World::load_with_resource_paths(path, &resource_paths_from_env())
    }

    /// Like [`World::load`] with an explicit resource path list instead of the environment
    /// (the world file's folder is still searched last).
    pub fn load_with_resource_paths(
        path: impl AsRef<Path>,
        resource_paths: &[PathBuf],
    ) -> Result<World, LoadError> {
        let path = path.as_ref();
        let world_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut search = resource_paths.to_vec();
        search.push(if world_dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            world_dir
        });
        let mut loader = Loader {
            search,
            stack: Vec::new(),
            next_id: 1,
        };
        let text = read(path)?;
        let doc = parse_xml(path, &text)?;
        let file = SdfFile { path, doc: &doc };
        let sdf = doc.root_element();
        if sdf.tag_name().name() != "sdf" {
            return Err(file.invalid(sdf, "the root element must be <sdf>"));
        }
        let world_node = element_children(sdf, "world")
            .next()
            .ok_or_else(|| file.invalid(sdf, "no <world> element"))?;
        loader.stack.push(canonical(path));
        let raw = loader.world(&file, world_node)?;
        resolve(raw, path, &mut loader)
    }

    /// Finds a joint by scoped name (`ur3e::…::elbow_joint`) or, if unique, by plain name.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.joints.iter().position(|j| j.scoped_name == name) {
            return Some(i);
        }
        let mut found = self
            .joints
            .iter()
            .enumerate()
            .filter(|(_, j)| j.name == name);
        match (found.next(), found.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }
}

/// `GZ_SIM_RESOURCE_PATH`, `IGN_GAZEBO_RESOURCE_PATH` and `SDF_PATH`, in that order.
pub fn resource_paths_from_env() -> Vec<PathBuf> {
    [
        "GZ_SIM_RESOURCE_PATH",
        "IGN_GAZEBO_RESOURCE_PATH",
        "SDF_PATH",
    ]
    .iter()
    .filter_map(std::env::var_os)
    .flat_map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
    .filter(|p| !p.as_os_str().is_empty())
    .collect()
}

// ---------------------------------------------------------------------------------------
// Raw tree, as written (after includes are expanded).

struct RawWorld {
    name: String,
    step: f64,
    real_time_factor: f64,
    models: Vec<RawModel>,
}

struct RawModel {
    name: String,
    is_static: bool,
    /// Relative to the parent model (or the world).
    pose: Pose,
    links: Vec<RawLink>,
    joints: Vec<RawJoint>,
    frames: Vec<String>,
    models: Vec<RawModel>,
    plugins: Vec<RawPlugin>,
    at: Location,
    /// Entity id, given while flattening.
    id: u32,
}

struct RawLink {
    name: String,
    mass: f64,
    /// Centre of mass in the link frame.
    com: [f64; 3],
    /// Inertia about the centre of mass, expressed in the link frame.
    inertia: Mat3,
}

struct RawJoint {
    name: String,
    kind: JointKind,
    parent: String,
    child: String,
    /// Joint frame in the child link frame.
    pose: Pose,
    axis: Option<AxisSpec>,
    at: Location,
    /// Index into [`World::joints`], given while flattening.
    index: usize,
}

enum RawPlugin {
    PositionController(RawPositionController),
    JointController(RawJointController),
    ApplyJointForce(RawApplyJointForce),
    StatePublisher(RawStatePublisher),
}

struct RawJointController {
    joint_names: Vec<(String, Location)>,
    initial_velocity: f64,
    force_mode: Option<PidGains>,
    topic: Option<String>,
    sub_topic: Option<String>,
    at: Location,
}

struct RawApplyJointForce {
    joint_name: (String, Location),
    at: Location,
}

struct RawPositionController {
    joint_names: Vec<String>,
    joint_index: u32,
    pid: PidGains,
    cmd_max_set: bool,
    use_velocity_commands: bool,
    initial_position: f64,
    topic: Option<String>,
    sub_topic: Option<String>,
    at: Location,
}

struct RawStatePublisher {
    joint_names: Vec<(String, Location)>,
    topic: Option<String>,
    update_rate: Option<f64>,
    at: Location,
}

// ---------------------------------------------------------------------------------------
// XML reading.

struct SdfFile<'a, 'input> {
    path: &'a Path,
    doc: &'a roxmltree::Document<'input>,
}

impl SdfFile<'_, '_> {
    fn location(&self, node: Node) -> Location {
        let pos = self.doc.text_pos_at(node.range().start);
        Location {
            file: self.path.to_path_buf(),
            line: pos.row,
            column: pos.col,
            element: element_path(node),
        }
    }

    fn invalid(&self, node: Node, message: impl Into<String>) -> LoadError {
        LoadError::Invalid {
            at: self.location(node),
            message: message.into(),
        }
    }

    fn required_attr<'n>(&self, node: Node<'n, '_>, attr: &str) -> Result<&'n str, LoadError> {
        match node.attribute(attr) {
            Some(v) if !v.trim().is_empty() => Ok(v),
            _ => Err(self.invalid(
                node,
                format!(
                    "<{}> needs a non-empty {attr:?} attribute",
                    node.tag_name().name()
                ),
            )),
        }
    }

    fn f64_of(&self, node: Node) -> Result<f64, LoadError> {
        let text = text_of(node);
        text.parse::<f64>()
            .map_err(|_| self.invalid(node, format!("expected a number, found {text:?}")))
    }

    fn f64_child(&self, parent: Node, tag: &str, default: f64) -> Result<f64, LoadError> {
        element_children(parent, tag)
            .next()
            .map_or(Ok(default), |n| self.f64_of(n))
    }

    fn finite_f64_child(&self, parent: Node, tag: &str, default: f64) -> Result<f64, LoadError> {
        match element_children(parent, tag).next() {
            None => Ok(default),
            Some(n) => {
                let v = self.f64_of(n)?;
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(self.invalid(n, format!("expected a finite number, found {v}")))
                }
            }
        }
    }

    /// The whitespace-separated numbers of an element such as `<pose>` or `<xyz>`.
    fn f64_list_of(&self, node: Node) -> Result<Vec<f64>, LoadError> {
        text_of(node)
            .split_whitespace()
            .map(|t| {
                t.parse::<f64>().map_err(|_| {
                    self.invalid(
                        node,
                        format!("bad number {t:?} in <{}>", node.tag_name().name()),
                    )
                })
            })
            .collect()
    }

    fn bool_of(&self, node: Node) -> Result<bool, LoadError> {
        // libsdformat lower-cases and accepts true/false/1/0 (the original writes `True`).
        match text_of(node).to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            other => Err(self.invalid(node, format!("expected true or false, found {other:?}"))),
        }
    }

    fn bool_child(&self, parent: Node, tag: &str, default: bool) -> Result<bool, LoadError> {
        element_children(parent, tag)
            .next()
            .map_or(Ok(default), |n| self.bool_of(n))
    }

    fn pose_of(&self, node: Node) -> Result<Pose, LoadError> {
        let values = self.f64_list_of(node)?;
        let quat = node.attribute("rotation_format") == Some("quat_xyz_wxyz");
        let degrees = match node.attribute("degrees") {
            None => false,
            Some(v) => matches!(v.to_ascii_lowercase().as_str(), "true" | "1"),
        };
        match (quat, values.len()) {
            (_, 0) => Ok(Pose::IDENTITY),
            (false, 6) => {
                let k = if degrees {
                    std::f64::consts::PI / 180.0
                } else {
                    1.0
                };
                Ok(Pose {
                    translation: [values[0], values[1], values[2]],
                    rotation: rpy(values[3] * k, values[4] * k, values[5] * k),
                })
            }
            (true, 7) => Ok(Pose {
                translation: [values[0], values[1], values[2]],
                rotation: quaternion(values[3], values[4], values[5], values[6]),
            }),
            (q, n) => Err(self.invalid(
                node,
                format!("<pose> needs {} numbers, found {n}", if q { 7 } else { 6 }),
            )),
        }
    }
}

fn text_of<'a>(node: Node<'a, '_>) -> &'a str {
    node.text().unwrap_or("").trim()
}

fn element_children<'a, 'input: 'a>(
    node: Node<'a, 'input>,
    tag: &'a str,
) -> impl Iterator<Item = Node<'a, 'input>> + 'a {
    node.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == tag)
}

fn element_path(node: Node) -> String {
    let mut parts: Vec<String> = node
        .ancestors()
        .filter(Node::is_element)
        .map(|n| match n.attribute("name") {
            Some(name) => format!("{}[@name='{name}']", n.tag_name().name()),
            None => n.tag_name().name().to_string(),
        })
        .collect();
    parts.reverse();
    format!("/{}", parts.join("/"))
}

fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|reason| LoadError::Io {
        file: path.to_path_buf(),
        reason,
    })
}

fn parse_xml<'t>(path: &Path, text: &'t str) -> Result<roxmltree::Document<'t>, LoadError> {
    roxmltree::Document::parse(text).map_err(|reason| LoadError::Xml {
        file: path.to_path_buf(),
        reason,
    })
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

// ---------------------------------------------------------------------------------------
// Loader: walks the XML, expanding includes.

struct Loader {
    /// Resource paths, then the world's folder.
    search: Vec<PathBuf>,
    /// Files being included, to catch include cycles.
    stack: Vec<PathBuf>,
    next_id: u32,
}

const MAX_INCLUDE_DEPTH: usize = 32;

impl Loader {
    fn world(&mut self, file: &SdfFile, node: Node) -> Result<RawWorld, LoadError> {
        let name = file.required_attr(node, "name")?.to_string();
        let physics = element_children(node, "physics")
            .find(|p| {
                p.attribute("default")
                    .is_some_and(|d| matches!(d.to_ascii_lowercase().as_str(), "true" | "1"))
            })
            .or_else(|| element_children(node, "physics").next());
        let (step, real_time_factor) = match physics {
            None => (0.001, 1.0),
            Some(p) => {
                let step = file.f64_child(p, "max_step_size", 0.001)?;
                if !(step.is_finite() && step > 0.0) {
                    return Err(file.invalid(
                        p,
                        format!("<max_step_size> must be a positive number, found {step}"),
                    ));
                }
                let rtf = file.f64_child(p, "real_time_factor", 1.0)?;
                if !(rtf.is_finite() && rtf > 0.0) {
                    return Err(file.invalid(
                        p,
                        format!("<real_time_factor> must be a positive number, found {rtf}"),
                    ));
                }
                (step, rtf)
            }
        };
        let mut models = Vec::new();
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "model" => models.push(self.model(file, child)?),
                "include" => match self.include(file, child)? {
                    Included::Nested(m) => models.push(m),
                    Included::Merged(_) => {
                        return Err(
                            file.invalid(child, "merge=\"true\" is only allowed inside a <model>")
                        )
                    }
                },
                _ => {}
            }
        }
        check_unique(file, node, models.iter().map(|m| (&m.name, &m.at)), "model")?;
        Ok(RawWorld {
            name,
            step,
            real_time_factor,
            models,
        })
    }

    fn model(&mut self, file: &SdfFile, node: Node) -> Result<RawModel, LoadError> {
        let name = file.required_attr(node, "name")?.to_string();
        let is_static = match element_children(node, "static").next() {
            Some(s) => file.bool_of(s)?,
            None => false,
        };
        let pose = match element_children(node, "pose").next() {
            Some(p) => file.pose_of(p)?,
            None => Pose::IDENTITY,
        };
        let mut model = RawModel {
            name,
            is_static,
            pose,
            links: Vec::new(),
            joints: Vec::new(),
            frames: Vec::new(),
            models: Vec::new(),
            plugins: Vec::new(),
            at: file.location(node),
            id: 0,
        };
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "link" => model.links.push(link(file, child)?),
                "joint" => model.joints.push(joint(file, child)?),
                "frame" => model
                    .frames
                    .push(file.required_attr(child, "name")?.to_string()),
                "model" => model.models.push(self.model(file, child)?),
                "plugin" => model.plugins.extend(plugin(file, child)?),
                "include" => match self.include(file, child)? {
                    Included::Nested(m) => model.models.push(m),
                    Included::Merged(m) => {
                        // Merge-include (SDF 1.9): the included model's contents become this
                        // model's own; its model frame becomes a frame named after it.
                        model.frames.push(m.name);
                        model.links.extend(m.links);
                        model.joints.extend(m.joints);
                        model.frames.extend(m.frames);
                        model.models.extend(m.models);
                        model.plugins.extend(m.plugins);
                    }
                },
                _ => {}
            }
        }
        check_unique(
            file,
            node,
            model.links.iter().map(|l| (&l.name, &model.at)),
            "link",
        )?;
        check_unique(
            file,
            node,
            model.joints.iter().map(|j| (&j.name, &j.at)),
            "joint",
        )?;
        check_unique(
            file,
            node,
            model.models.iter().map(|m| (&m.name, &m.at)),
            "nested model",
        )?;
        Ok(model)
    }

    fn include(&mut self, file: &SdfFile, node: Node) -> Result<Included, LoadError> {
        let uri_node = element_children(node, "uri")
            .next()
            .ok_or_else(|| file.invalid(node, "<include> needs a <uri>"))?;
        let uri = text_of(uri_node);
        let path = self.resolve_uri(file, uri_node, uri)?;
        let key = canonical(&path);
        if self.stack.contains(&key) {
            return Err(file.invalid(
                uri_node,
                format!("include cycle: {} includes itself", path.display()),
            ));
        }
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(file.invalid(
                uri_node,
                format!("includes nested deeper than {MAX_INCLUDE_DEPTH}"),
            ));
        }
        let text = read(&path)?;
        let doc = parse_xml(&path, &text)?;
        let included = SdfFile {
            path: &path,
            doc: &doc,
        };
        let root = doc.root_element();
        if root.tag_name().name() != "sdf" {
            return Err(included.invalid(root, "the root element must be <sdf>"));
        }
        let model_node = element_children(root, "model").next().ok_or_else(|| {
            included.invalid(
                root,
                format!(
                    "no <model> to include (included from {})",
                    file.location(uri_node)
                ),
            )
        })?;
        self.stack.push(key);
        let model = self.model(&included, model_node);
        self.stack.pop();
        let mut model = model?;
        if let Some(name) = element_children(node, "name").next() {
            let name_text = text_of(name);
            if name_text.is_empty() {
                return Err(file.invalid(name, "empty <name>"));
            }
            model.name = name_text.to_string();
        }
        if let Some(s) = element_children(node, "static").next() {
            model.is_static = file.bool_of(s)?;
        }
        if let Some(p) = element_children(node, "pose").next() {
            model.pose = file.pose_of(p)?;
        }
        // Plugins written inside the <include> attach to the included model.
        for p in element_children(node, "plugin") {
            model.plugins.extend(plugin(file, p)?);
        }
        model.at = file.location(node);
        let merge = match node.attribute("merge") {
            None => false,
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "1" => true,
                "false" | "0" => false,
                other => {
                    return Err(file.invalid(
                        node,
                        format!("merge must be true or false, found {other:?}"),
                    ))
                }
            },
        };
        Ok(if merge {
            Included::Merged(model)
        } else {
            Included::Nested(model)
        })
    }

    /// gz-sim's lookup: `model://a/b` → `<resource path>/a/b` for each resource path, then
    /// the world's folder; `file://p` and plain paths → relative to the including file's
    /// folder (then as `model://`). A folder means a model folder (its `model.config` names
    /// the SDF file, else `model.sdf`).
    fn resolve_uri(&self, file: &SdfFile, uri_node: Node, uri: &str) -> Result<PathBuf, LoadError> {
        if uri.is_empty() {
            return Err(file.invalid(uri_node, "empty <uri>"));
        }
        if uri.contains("://") && !uri.starts_with("model://") && !uri.starts_with("file://") {
            return Err(file.invalid(
                uri_node,
                format!("only model:// and file URIs are supported, not {uri:?}; download the model and put its folder on GZ_SIM_RESOURCE_PATH"),
            ));
        }
        let mut candidates = Vec::new();
        if let Some(rest) = uri.strip_prefix("model://") {
            candidates.extend(self.search.iter().map(|dir| dir.join(rest)));
        } else {
            let rest = uri.strip_prefix("file://").unwrap_or(uri);
            let p = Path::new(rest);
            if p.is_absolute() {
                candidates.push(p.to_path_buf());
            } else {
                candidates.push(file.path.parent().unwrap_or(Path::new(".")).join(p));
                candidates.extend(self.search.iter().map(|dir| dir.join(p)));
            }
        }
        for candidate in &candidates {
            if candidate.is_file() {
                return Ok(candidate.clone());
            }
            if candidate.is_dir() {
                return model_folder_sdf(file, uri_node, candidate);
            }
        }
        Err(LoadError::IncludeNotFound {
            at: file.location(uri_node),
            uri: uri.to_string(),
            searched: candidates,
        })
    }
}

enum Included {
    Nested(RawModel),
    Merged(RawModel),
}

/// The SDF file of a model folder: the highest-version `<sdf>` entry of `model.config`, or
/// `model.sdf` when there is no `model.config`.
fn model_folder_sdf(file: &SdfFile, uri_node: Node, dir: &Path) -> Result<PathBuf, LoadError> {
    let config = dir.join("model.config");
    if !config.is_file() {
        let fallback = dir.join("model.sdf");
        return if fallback.is_file() {
            Ok(fallback)
        } else {
            Err(file.invalid(
                uri_node,
                format!(
                    "model folder {} has neither model.config nor model.sdf",
                    dir.display()
                ),
            ))
        };
    }
    let text = read(&config)?;
    let doc = parse_xml(&config, &text)?;
    let best = doc
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "sdf")
        .max_by(|a, b| {
            version_key(a.attribute("version")).cmp(&version_key(b.attribute("version")))
        })
        .map(|n| text_of(n).to_string());
    match best {
        Some(name) if !name.is_empty() => Ok(dir.join(name)),
        _ => Err(file.invalid(
            uri_node,
            format!("{} names no <sdf> file", config.display()),
        )),
    }
}

fn version_key(v: Option<&str>) -> Vec<u32> {
    v.unwrap_or("0")
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

fn check_unique<'a>(
    file: &SdfFile,
    scope: Node,
    names: impl Iterator<Item = (&'a String, &'a Location)>,
    what: &str,
) -> Result<(), LoadError> {
    let mut seen = HashSet::new();
    for (name, _) in names {
        if !seen.insert(name.as_str()) {
            return Err(file.invalid(scope, format!("two {what}s named {name:?}")));
        }
    }
    Ok(())
}

fn link(file: &SdfFile, node: Node) -> Result<RawLink, LoadError> {
    let name = file.required_attr(node, "name")?.to_string();
    // SDF defaults: mass 1, unit diagonal inertia, at the link origin.
    let mut raw = RawLink {
        name,
        mass: 1.0,
        com: [0.0; 3],
        inertia: Mat3::IDENTITY,
    };
    if let Some(inertial) = element_children(node, "inertial").next() {
        raw.mass = file.finite_f64_child(inertial, "mass", 1.0)?;
        let pose = match element_children(inertial, "pose").next() {
            Some(p) => file.pose_of(p)?,
            None => Pose::IDENTITY,
        };
        let mut principal = Mat3::IDENTITY;
        if let Some(i) = element_children(inertial, "inertia").next() {
            let g = |tag: &str, d: f64| file.finite_f64_child(i, tag, d);
            let (ixx, iyy, izz) = (g("ixx", 1.0)?, g("iyy", 1.0)?, g("izz", 1.0)?);
            let (ixy, ixz, iyz) = (g("ixy", 0.0)?, g("ixz", 0.0)?, g("iyz", 0.0)?);
            principal = Mat3([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]);
        }
        raw.com = pose.translation;
        raw.inertia = pose
            .rotation
            .mul(&principal)
            .mul(&pose.rotation.transpose());
    }
    Ok(raw)
}

fn joint(file: &SdfFile, node: Node) -> Result<RawJoint, LoadError> {
    let name = file.required_attr(node, "name")?.to_string();
    let type_name = file.required_attr(node, "type")?;
    let kind = match type_name {
        "revolute" => JointKind::Revolute,
        "continuous" => JointKind::Continuous,
        "prismatic" => JointKind::Prismatic,
        "screw" => JointKind::Screw,
        "fixed" => JointKind::Fixed,
        "ball" | "universal" | "revolute2" | "gearbox" => {
            return Err(file.invalid(node, format!("joint type {type_name:?} is not simulated by gz-joint-sim (1-DOF joints and fixed joints only)")))
        }
        other => return Err(file.invalid(node, format!("unknown joint type {other:?}"))),
    };
    let named = |tag: &str| -> Result<String, LoadError> {
        let n = element_children(node, tag)
            .next()
            .ok_or_else(|| file.invalid(node, format!("joint {name:?} needs a <{tag}>")))?;
        let t = text_of(n);
        if t.is_empty() {
            return Err(file.invalid(n, format!("empty <{tag}>")));
        }
        Ok(t.to_string())
    };
    let parent = named("parent")?;
    let child = named("child")?;
    let pose = match element_children(node, "pose").next() {
        Some(p) => file.pose_of(p)?,
        None => Pose::IDENTITY,
    };
    let axis = if kind == JointKind::Fixed {
        None
    } else {
        Some(axis(file, element_children(node, "axis").next())?)
    };
    Ok(RawJoint {
        name,
        kind,
        parent,
        child,
        pose,
        axis,
        at: file.location(node),
        index: 0,
    })
}

fn axis(file: &SdfFile, node: Option<Node>) -> Result<AxisSpec, LoadError> {
    let mut spec = AxisSpec {
        xyz: [0.0, 0.0, 1.0],
        lower: -1e16,
        upper: 1e16,
        effort: -1.0,
        velocity: -1.0,
        damping: 0.0,
        friction: 0.0,
    };
    let Some(axis) = node else { return Ok(spec) };
    if let Some(xyz) = element_children(axis, "xyz").next() {
        let v = file.f64_list_of(xyz)?;
        let norm = v.iter().map(|c| c * c).sum::<f64>().sqrt();
        if v.len() != 3 || !(norm.is_finite() && norm > 0.0) {
            return Err(file.invalid(xyz, "<xyz> needs three numbers forming a non-zero vector"));
        }
        spec.xyz = [v[0] / norm, v[1] / norm, v[2] / norm];
    }
    if let Some(limit) = element_children(axis, "limit").next() {
        // ±inf are legitimate limits (a joint that turns freely) and are kept as given.
        let lim = |tag: &str, d: f64| -> Result<f64, LoadError> {
            let v = file.f64_child(limit, tag, d)?;
            if v.is_nan() {
                return Err(file.invalid(limit, format!("<{tag}> is NaN")));
            }
            Ok(v)
        };
        spec.lower = lim("lower", spec.lower)?;
        spec.upper = lim("upper", spec.upper)?;
        spec.effort = lim("effort", spec.effort)?;
        spec.velocity = lim("velocity", spec.velocity)?;
        if spec.lower > spec.upper {
            return Err(file.invalid(
                limit,
                format!(
                    "lower limit {} is above upper limit {}",
                    spec.lower, spec.upper
                ),
            ));
        }
    }
    if let Some(dynamics) = element_children(axis, "dynamics").next() {
        for (tag, value) in [
            ("damping", &mut spec.damping),
            ("friction", &mut spec.friction),
        ] {
            *value = file.finite_f64_child(dynamics, tag, 0.0)?;
            if *value < 0.0 {
                let n = element_children(dynamics, tag).next().unwrap_or(dynamics);
                return Err(file.invalid(n, format!("<{tag}> must not be negative, found {value}")));
            }
        }
    }
    Ok(spec)
}

/// Recognises the systems gz-joint-sim runs (JointPositionController, JointController,
/// ApplyJointForce, JointStatePublisher); any other plugin is Gazebo's business
/// (physics, sensors, GUI…) and is skipped.
fn plugin(file: &SdfFile, node: Node) -> Result<Option<RawPlugin>, LoadError> {
    let name = node.attribute("name").unwrap_or("");
    let filename = node.attribute("filename").unwrap_or("");
    let is = |system: &str, library: &str| {
        name.rsplit("::").next() == Some(system) || filename.contains(library)
    };
    if is("JointPositionController", "joint-position-controller") {
        position_controller(file, node).map(|p| Some(RawPlugin::PositionController(p)))
    } else if is("JointController", "-joint-controller-system") {
        joint_controller(file, node).map(|p| Some(RawPlugin::JointController(p)))
    } else if is("ApplyJointForce", "apply-joint-force") {
        apply_joint_force(file, node).map(|p| Some(RawPlugin::ApplyJointForce(p)))
    } else if is("JointStatePublisher", "joint-state-publisher") {
        state_publisher(file, node).map(|p| Some(RawPlugin::StatePublisher(p)))
    } else {
        tracing::debug!(
            "{}: plugin {name:?} ({filename}) is not simulated; skipped",
            file.location(node)
        );
        Ok(None)
    }
}

fn joint_names(file: &SdfFile, node: Node) -> Result<Vec<(String, Location)>, LoadError> {
    element_children(node, "joint_name")
        .map(|n| match text_of(n) {
            "" => Err(file.invalid(n, "empty <joint_name>")),
            t => Ok((t.to_string(), file.location(n))),
        })
        .collect()
}

fn optional_text(file: &SdfFile, node: Node, tag: &str) -> Result<Option<String>, LoadError> {
    match element_children(node, tag).next() {
        None => Ok(None),
        Some(n) if text_of(n).is_empty() => Err(file.invalid(n, format!("empty <{tag}>"))),
        Some(n) => Ok(Some(text_of(n).to_string())),
    }
}

/// The `<joint_name>`s of a JointPositionController or JointController (at least one), which
/// must take their commands as `Double`s (no `<use_actuator_msg>`).
fn command_joint_names(
    file: &SdfFile,
    node: Node,
    system: &str,
) -> Result<Vec<(String, Location)>, LoadError> {
    let names = joint_names(file, node)?;
    if names.is_empty() {
        return Err(file.invalid(node, format!("{system} needs a <joint_name>")));
    }
    if let Some(n) = element_children(node, "use_actuator_msg").next() {
        if file.bool_of(n)? {
            return Err(file.invalid(
                n,
                "use_actuator_msg is not supported by gz-joint-sim; use the Double command topic",
            ));
        }
    }
    Ok(names)
}

fn position_controller(file: &SdfFile, node: Node) -> Result<RawPositionController, LoadError> {
    let names = command_joint_names(file, node, "JointPositionController")?;
    let joint_index = match element_children(node, "joint_index").next() {
        None => 0,
        Some(n) => text_of(n).parse::<u32>().map_err(|_| {
            file.invalid(
                n,
                format!("expected an unsigned integer, found {:?}", text_of(n)),
            )
        })?,
    };
    let d = PidGains::default();
    let g = |tag: &str, default: f64| file.finite_f64_child(node, tag, default);
    let pid = PidGains {
        p: g("p_gain", d.p)?,
        i: g("i_gain", d.i)?,
        d: g("d_gain", d.d)?,
        i_max: g("i_max", d.i_max)?,
        i_min: g("i_min", d.i_min)?,
        cmd_max: g("cmd_max", d.cmd_max)?,
        cmd_min: g("cmd_min", d.cmd_min)?,
        cmd_offset: g("cmd_offset", d.cmd_offset)?,
    };
    let use_velocity_commands = file.bool_child(node, "use_velocity_commands", false)?;
    Ok(RawPositionController {
        joint_names: names.into_iter().map(|(n, _)| n).collect(),
        joint_index,
        pid,
        cmd_max_set: element_children(node, "cmd_max").next().is_some(),
        use_velocity_commands,
        initial_position: g("initial_position", 0.0)?,
        topic: optional_text(file, node, "topic")?,
        sub_topic: optional_text(file, node, "sub_topic")?,
        at: file.location(node),
    })
}

fn joint_controller(file: &SdfFile, node: Node) -> Result<RawJointController, LoadError> {
    let joint_names = command_joint_names(file, node, "JointController")?;
    // Fortress's JointController (ign-gazebo 6) reads one <joint_name> and no <sub_topic>;
    // what it would silently ignore is refused here for the Fortress spelling.
    let fortress = node
        .attribute("name")
        .is_some_and(|n| n.starts_with("ignition::"))
        || node
            .attribute("filename")
            .is_some_and(|f| f.contains("ignition-gazebo"));
    if fortress {
        if let Some((extra, at)) = joint_names.get(1) {
            return Err(invalid_at(
                at,
                format!("Fortress's JointController drives its first <joint_name> only; {extra:?} would be ignored (use one plugin per joint)"),
            ));
        }
        if let Some(n) = element_children(node, "sub_topic").next() {
            return Err(file.invalid(
                n,
                "Fortress's JointController has no <sub_topic> (Harmonic has); use <topic>",
            ));
        }
    }
    let g = |tag: &str, default: f64| file.finite_f64_child(node, tag, default);
    let use_force_commands = file.bool_child(node, "use_force_commands", false)?;
    // gz-sim's JointController reads its PID only in force mode, with its own defaults.
    let force_mode = if use_force_commands {
        Some(PidGains {
            p: g("p_gain", 1.0)?,
            i: g("i_gain", 0.0)?,
            d: g("d_gain", 0.0)?,
            i_max: g("i_max", 1.0)?,
            i_min: g("i_min", -1.0)?,
            cmd_max: g("cmd_max", 1000.0)?,
            cmd_min: g("cmd_min", -1000.0)?,
            cmd_offset: g("cmd_offset", 0.0)?,
        })
    } else {
        None
    };
    Ok(RawJointController {
        joint_names,
        initial_velocity: g("initial_velocity", 0.0)?,
        force_mode,
        topic: optional_text(file, node, "topic")?,
        sub_topic: optional_text(file, node, "sub_topic")?,
        at: file.location(node),
    })
}

fn apply_joint_force(file: &SdfFile, node: Node) -> Result<RawApplyJointForce, LoadError> {
    // gz-sim reads the first <joint_name> only; a second one would be silently ignored
    // there, so it is refused here rather than leaving a joint the user meant to drive
    // unpowered.
    let mut names = joint_names(file, node)?.into_iter();
    let joint_name = names
        .next()
        .ok_or_else(|| file.invalid(node, "ApplyJointForce needs a <joint_name>"))?;
    if let Some((extra, at)) = names.next() {
        return Err(invalid_at(
            &at,
            format!("ApplyJointForce drives one joint; {extra:?} would be ignored by Gazebo (use one plugin per joint)"),
        ));
    }
    for tag in ["topic", "sub_topic"] {
        if let Some(n) = element_children(node, tag).next() {
            return Err(file.invalid(
                n,
                format!("ApplyJointForce has no <{tag}>: Gazebo always listens on /model/<model>/joint/<joint>/cmd_force"),
            ));
        }
    }
    Ok(RawApplyJointForce {
        joint_name,
        at: file.location(node),
    })
}

fn state_publisher(file: &SdfFile, node: Node) -> Result<RawStatePublisher, LoadError> {
    let update_rate = match element_children(node, "update_rate").next() {
        None => None,
        Some(n) => {
            let rate = file.f64_of(n)?;
            if !(rate.is_finite() && rate >= 0.0) {
                return Err(file.invalid(
                    n,
                    format!("<update_rate> must be a non-negative number, found {rate}"),
                ));
            }
            (rate > 0.0).then_some(rate)
        }
    };
    Ok(RawStatePublisher {
        joint_names: joint_names(file, node)?,
        topic: optional_text(file, node, "topic")?,
        update_rate,
        at: file.location(node),
    })
}

// ---------------------------------------------------------------------------------------
// Resolution: flatten joints, resolve plugin joint names, name topics.

fn invalid_at(at: &Location, message: impl Into<String>) -> LoadError {
    LoadError::Invalid {
        at: at.clone(),
        message: message.into(),
    }
}

fn resolve(mut raw: RawWorld, file: &Path, loader: &mut Loader) -> Result<World, LoadError> {
    let mut world = World {
        name: raw.name.clone(),
        file: file.to_path_buf(),
        step: Duration::from_secs_f64(raw.step),
        real_time_factor: raw.real_time_factor,
        joints: Vec::new(),
        position_controllers: Vec::new(),
        joint_controllers: Vec::new(),
        force_appliers: Vec::new(),
        state_publishers: Vec::new(),
        models: Vec::new(),
    };
    let mut chain = Vec::new();
    for model in &mut raw.models {
        flatten(model, &mut chain, false, &mut world.joints, loader)?;
        world.models.push(ModelSpec {
            name: model.name.clone(),
            id: model.id,
            pose: model.pose.spec(),
            is_static: model.is_static,
        });
    }
    for model in &raw.models {
        configure_plugins(model, &mut chain, &raw.name, &mut world)?;
    }
    Ok(world)
}

/// Gives every joint its index and id (in SDF order, model by model) and computes what the
/// joint moves.
fn flatten(
    model: &mut RawModel,
    chain: &mut Vec<String>,
    static_parent: bool,
    joints: &mut Vec<JointSpec>,
    loader: &mut Loader,
) -> Result<(), LoadError> {
    chain.push(model.name.clone());
    let is_static = static_parent || model.is_static;
    model.id = loader.next_id;
    loader.next_id += 1;
    for j in &mut model.joints {
        for (role, frame) in [("parent", &j.parent), ("child", &j.child)] {
            let exists = (role == "parent" && frame == "world")
                || frame_exists(
                    model_view(&model.links, &model.frames, &model.models),
                    frame,
                );
            if !exists {
                return Err(invalid_at(
                    &j.at,
                    format!(
                        "{role} {frame:?} of joint {:?} names no link or frame in model {:?}",
                        j.name,
                        chain.join("::")
                    ),
                ));
            }
        }
        let effective_inertia = match (&j.axis, find_link(&model.links, &model.models, &j.child)) {
            (Some(axis), Some(link)) => effective_inertia(j.kind, axis, &j.pose, link),
            _ => 1.0, // fixed joint, or a child that is a frame: nothing to integrate about
        };
        if !(effective_inertia.is_finite() && effective_inertia > 0.0) {
            return Err(invalid_at(
                &j.at,
                format!("joint {:?} moves no inertia about its axis (check the <inertial> of its child link {:?})", j.name, j.child),
            ));
        }
        j.index = joints.len();
        joints.push(JointSpec {
            name: j.name.clone(),
            scoped_name: format!("{}::{}", chain.join("::"), j.name),
            kind: j.kind,
            parent: j.parent.clone(),
            child: j.child.clone(),
            axis: j.axis,
            effective_inertia,
            is_static,
            id: loader.next_id,
            pose: j.pose.spec(),
        });
        loader.next_id += 1;
    }
    for nested in &mut model.models {
        flatten(nested, chain, is_static, joints, loader)?;
    }
    chain.pop();
    Ok(())
}

struct ModelView<'a> {
    links: &'a [RawLink],
    frames: &'a [String],
    models: &'a [RawModel],
}

fn model_view<'a>(
    links: &'a [RawLink],
    frames: &'a [String],
    models: &'a [RawModel],
) -> ModelView<'a> {
    ModelView {
        links,
        frames,
        models,
    }
}

/// Whether a (possibly `::`-scoped) name is a link, frame, joint or nested model.
fn frame_exists(view: ModelView, scoped: &str) -> bool {
    match scoped.split_once("::") {
        Some((head, rest)) => view
            .models
            .iter()
            .find(|m| m.name == head)
            .is_some_and(|m| frame_exists(model_view(&m.links, &m.frames, &m.models), rest)),
        None => {
            view.links.iter().any(|l| l.name == scoped)
                || view.frames.iter().any(|f| f == scoped)
                || view.models.iter().any(|m| m.name == scoped)
        }
    }
}

fn find_link<'a>(
    links: &'a [RawLink],
    models: &'a [RawModel],
    scoped: &str,
) -> Option<&'a RawLink> {
    match scoped.split_once("::") {
        Some((head, rest)) => models
            .iter()
            .find(|m| m.name == head)
            .and_then(|m| find_link(&m.links, &m.models, rest)),
        None => links.iter().find(|l| l.name == scoped),
    }
}

fn find_joint<'a>(model: &'a RawModel, scoped: &str) -> Option<&'a RawJoint> {
    match scoped.split_once("::") {
        Some((head, rest)) => model
            .models
            .iter()
            .find(|m| m.name == head)
            .and_then(|m| find_joint(m, rest)),
        None => model.joints.iter().find(|j| j.name == scoped),
    }
}

/// The child link's inertia about the joint axis (mass for prismatic joints), with the joint
/// frame and axis taken in the child link frame (SDF's default `relative_to`).
fn effective_inertia(kind: JointKind, axis: &AxisSpec, joint_pose: &Pose, link: &RawLink) -> f64 {
    if kind == JointKind::Prismatic {
        return link.mass;
    }
    let a = joint_pose.rotation.apply(axis.xyz);
    let r = sub(link.com, joint_pose.translation);
    let along = dot(r, a);
    let perpendicular = sub(r, [a[0] * along, a[1] * along, a[2] * along]);
    dot(a, link.inertia.apply(a)) + link.mass * dot(perpendicular, perpendicular)
}

/// gz-sim's `Model::JointByName` as the JointController and ApplyJointForce use it: a joint
/// of the model itself (not of a nested model), which must have an axis to command.
fn own_moving_joint(
    model: &RawModel,
    scoped: &str,
    system: &str,
    name: &str,
    at: &Location,
) -> Result<usize, LoadError> {
    let j = model.joints.iter().find(|j| j.name == name).ok_or_else(|| {
        invalid_at(
            at,
            format!("{system} names joint {name:?}, which model {scoped:?} does not have (Gazebo looks among the model's own joints only)"),
        )
    })?;
    if j.kind.dof() == 0 {
        return Err(invalid_at(
            at,
            format!("{system} names joint {name:?}, a fixed joint: nothing to command"),
        ));
    }
    Ok(j.index)
}

fn configure_plugins(
    model: &RawModel,
    chain: &mut Vec<String>,
    world_name: &str,
    world: &mut World,
) -> Result<(), LoadError> {
    chain.push(model.name.clone());
    let scoped = chain.join("::");
    for plugin in &model.plugins {
        match plugin {
            RawPlugin::PositionController(p) => {
                let mut joints = Vec::new();
                for name in &p.joint_names {
                    let j = find_joint(model, name).ok_or_else(|| {
                        invalid_at(&p.at, format!("JointPositionController names joint {name:?}, which model {scoped:?} does not have"))
                    })?;
                    if p.joint_index >= j.kind.dof() {
                        return Err(invalid_at(
                            &p.at,
                            format!(
                                "<joint_index> {} is out of range: joint {name:?} has {} axis(es)",
                                p.joint_index,
                                j.kind.dof()
                            ),
                        ));
                    }
                    joints.push(j.index);
                }
                // gz-sim: <topic> wins over <sub_topic>, which wins over the default name.
                let topic = if let Some(t) = &p.topic {
                    topics::as_valid_topic(t)
                } else if let Some(s) = &p.sub_topic {
                    topics::model_sub_topic(&model.name, s)
                } else {
                    topics::joint_position_command(&model.name, &p.joint_names[0], p.joint_index)
                }
                .ok_or_else(|| invalid_at(&p.at, "JointPositionController: no valid command topic can be made from this configuration"))?;
                let mode = if p.use_velocity_commands {
                    ControlMode::Velocity {
                        cmd_max: p.cmd_max_set.then_some(p.pid.cmd_max),
                    }
                } else {
                    ControlMode::Pid
                };
                world.position_controllers.push(PositionControllerSpec {
                    topic,
                    joint_names: p.joint_names.clone(),
                    joints,
                    joint_index: p.joint_index,
                    mode,
                    pid: p.pid,
                    initial_position: p.initial_position,
                    model_name: model.name.clone(),
                    at: p.at.clone(),
                });
            }
            RawPlugin::JointController(p) => {
                let mut joints = Vec::new();
                for (name, at) in &p.joint_names {
                    joints.push(own_moving_joint(
                        model,
                        &scoped,
                        "JointController",
                        name,
                        at,
                    )?);
                }
                let first = &p.joint_names[0].0;
                // gz-sim: <topic> wins over <sub_topic>, which wins over the default name.
                let topic = if let Some(t) = &p.topic {
                    topics::as_valid_topic(t)
                } else if let Some(s) = &p.sub_topic {
                    topics::model_sub_topic(&model.name, s)
                } else {
                    topics::joint_velocity_command(&model.name, first)
                }
                .ok_or_else(|| invalid_at(&p.at, "JointController: no valid command topic can be made from this configuration"))?;
                world.joint_controllers.push(JointControllerSpec {
                    topic,
                    joint_names: p.joint_names.iter().map(|(n, _)| n.clone()).collect(),
                    joints,
                    initial_velocity: p.initial_velocity,
                    force_mode: p.force_mode,
                    model_name: model.name.clone(),
                    at: p.at.clone(),
                });
            }
            RawPlugin::ApplyJointForce(p) => {
                let (name, at) = &p.joint_name;
                let joint = own_moving_joint(model, &scoped, "ApplyJointForce", name, at)?;
                let topic = topics::joint_force_command(&model.name, name).ok_or_else(|| {
                    invalid_at(&p.at, "ApplyJointForce: no valid command topic can be made from the model and joint names")
                })?;
                world.force_appliers.push(ApplyJointForceSpec {
                    topic,
                    joint_name: name.clone(),
                    joint,
                    model_name: model.name.clone(),
                    at: p.at.clone(),
                });
            }
            RawPlugin::StatePublisher(p) => {
                let mut joints: Vec<usize> = if p.joint_names.is_empty() {
                    model.joints.iter().map(|j| j.index).collect()
                } else {
                    let mut picked = Vec::new();
                    for (name, at) in &p.joint_names {
                        // gz-sim's Model::JointByName: only the model's own joints.
                        let j = model.joints.iter().find(|j| &j.name == name).ok_or_else(|| {
                            invalid_at(at, format!("JointStatePublisher names joint {name:?}, which model {scoped:?} does not have"))
                        })?;
                        if picked.contains(&j.index) {
                            tracing::warn!("{at}: joint {name:?} listed twice; published once (as Gazebo does)");
                        } else {
                            picked.push(j.index);
                        }
                    }
                    picked
                };
                joints.sort_unstable();
                let topic = p
                    .topic
                    .as_deref()
                    .and_then(topics::as_valid_topic)
                    .or_else(|| topics::joint_state(world_name, chain))
                    .ok_or_else(|| {
                        invalid_at(
                            &p.at,
                            "JointStatePublisher: no valid topic (check the world and model names)",
                        )
                    })?;
                // Ignition Gazebo 6.0–6.7 named the topic after the model's parent entity.
                let parent = match chain.len() {
                    0 | 1 => world_name,
                    n => chain[n - 2].as_str(),
                };
                let topic_fortress_pre_6_8 = p
                    .topic
                    .as_deref()
                    .and_then(topics::as_valid_topic)
                    .or_else(|| topics::joint_state_fortress_pre_6_8(parent, &model.name))
                    .ok_or_else(|| {
                        invalid_at(
                            &p.at,
                            "JointStatePublisher: no valid Fortress < 6.8 topic (check the parent and model names)",
                        )
                    })?;
                world.state_publishers.push(StatePublisherSpec {
                    topic,
                    topic_fortress_pre_6_8,
                    model_name: model.name.clone(),
                    model_id: model.id,
                    model_pose: model.pose.spec(),
                    joints,
                    update_rate: p.update_rate,
                    at: p.at.clone(),
                });
            }
        }
    }
    for nested in &model.models {
        configure_plugins(nested, chain, world_name, world)?;
    }
    chain.pop();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Just enough 3-D math for inertia about an axis.

#[derive(Clone, Copy, Debug, PartialEq)]
struct Mat3([[f64; 3]; 3]);

impl Mat3 {
    const IDENTITY: Mat3 = Mat3([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);

    fn mul(&self, o: &Mat3) -> Mat3 {
        let mut m = [[0.0; 3]; 3];
        for (r, row) in m.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                *cell = (0..3).map(|k| self.0[r][k] * o.0[k][c]).sum();
            }
        }
        Mat3(m)
    }

    fn transpose(&self) -> Mat3 {
        let m = self.0;
        Mat3([
            [m[0][0], m[1][0], m[2][0]],
            [m[0][1], m[1][1], m[2][1]],
            [m[0][2], m[1][2], m[2][2]],
        ])
    }

    fn apply(&self, v: [f64; 3]) -> [f64; 3] {
        let m = self.0;
        [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
    }

    /// The unit quaternion `[x, y, z, w]` of a rotation matrix (Shepperd's method, stable
    /// for every rotation), with `w >= 0` as gz-math normalises it.
    fn quaternion(&self) -> [f64; 4] {
        let m = self.0;
        let trace = m[0][0] + m[1][1] + m[2][2];
        let q = if trace > 0.0 {
            let s = 2.0 * (trace + 1.0).sqrt();
            [
                (m[2][1] - m[1][2]) / s,
                (m[0][2] - m[2][0]) / s,
                (m[1][0] - m[0][1]) / s,
                s / 4.0,
            ]
        } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
            let s = 2.0 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
            [
                s / 4.0,
                (m[0][1] + m[1][0]) / s,
                (m[0][2] + m[2][0]) / s,
                (m[2][1] - m[1][2]) / s,
            ]
        } else if m[1][1] > m[2][2] {
            let s = 2.0 * (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt();
            [
                (m[0][1] + m[1][0]) / s,
                s / 4.0,
                (m[1][2] + m[2][1]) / s,
                (m[0][2] - m[2][0]) / s,
            ]
        } else {
            let s = 2.0 * (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt();
            [
                (m[0][2] + m[2][0]) / s,
                (m[1][2] + m[2][1]) / s,
                s / 4.0,
                (m[1][0] - m[0][1]) / s,
            ]
        };
        let sign = if q[3] < 0.0 { -1.0 } else { 1.0 };
        q.map(|c| sign * c + 0.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pose {
    translation: [f64; 3],
    rotation: Mat3,
}

impl Pose {
    const IDENTITY: Pose = Pose {
        translation: [0.0; 3],
        rotation: Mat3::IDENTITY,
    };

    fn spec(&self) -> PoseSpec {
        PoseSpec {
            position: self.translation,
            orientation: self.rotation.quaternion(),
        }
    }
}

/// gz-math's Euler convention: R = Rz(yaw)·Ry(pitch)·Rx(roll).
fn rpy(roll: f64, pitch: f64, yaw: f64) -> Mat3 {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    Mat3([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])
}

fn quaternion(x: f64, y: f64, z: f64, w: f64) -> Mat3 {
    let n = (x * x + y * y + z * z + w * w).sqrt();
    let (x, y, z, w) = if n > 0.0 {
        (x / n, y / n, z / n, w / n)
    } else {
        (0.0, 0.0, 0.0, 1.0)
    };
    Mat3([
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ])
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
