//! `sas_object_server_gazebo_node`: keeps world entities' poses in step with ROS.
//!
//! For each of `entity_names`:
//!
//! * `<entity>/get/pose` (`geometry_msgs/PoseStamped`, frame `world`): the entity's world pose
//!   as Gazebo reports it on `get_pose_topic_name` (a `Pose_V` topic, e.g. the
//!   SceneBroadcaster's `/world/<world>/pose/info`). Published from the transport's receive
//!   thread as Gazebo's message arrives: when the pose changed, and unchanged once a second
//!   (a heartbeat), at most once per `thread_sampling_time_sec`; with `publish_unchanged_poses`
//!   every message, as the original's loop republished every period. When Gazebo stops
//!   reporting, nothing is published: a pose is never re-sent as if it were fresh.
//! * `<entity>/set/pose` (`PoseStamped`): each pose received is checked (finite, a rotation)
//!   and sent to Gazebo's `set_pose_service_name` (request `Pose` naming the entity, response
//!   `Boolean`) by a thread of its own, newest first: a slow or absent Gazebo never holds the
//!   executor, and a pose superseded while waiting is not sent. A refused pose is logged with
//!   the reason and how many were refused so far.
//!
//! Until Gazebo's first pose message the node says every few seconds that it waits for it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gz_transport::msgs::{Boolean, Pose as GzPose, PoseV, Quaternion as GzQuaternion, Vector3d};
use gz_transport::{Delivery, MessageInfo, ServiceError};
use listener_subscription::{ListenerSubscription, TakenInfo};
use parking_lot::{Condvar, Mutex};
use rclrs::{Clock, IntoPrimitiveOptions, Publisher};
use ros_env::builtin_interfaces::msg::Time;
use ros_env::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion};
use ros_env::std_msgs::msg::Header;
use sas_robot_driver_gazebo::ShutdownToken;

use super::{
    checked, gz_name, positive_seconds, spin_until_shutdown, ServerParameters,
    WAITING_NOTE_INTERVAL,
};
use super::{DEFAULT_GAZEBO_TIMEOUT_SEC, DEFAULT_SERVER_SAMPLING_TIME_SEC};
use crate::{GzParameters, NodeExit, NodeRun, ParameterError, ParameterReader, DEFAULT_HEARTBEAT};

/// The node's name unless remapped, as the original's launch file names it.
pub const OBJECT_SERVER_NODE_NAME: &str = "sas_object_server_gazebo_node";

/// The frame of every pose published: Gazebo reports world poses.
const WORLD_FRAME: &str = "world";
/// How long after Gazebo's first pose message an entity it never named is reported missing.
const MISSING_ENTITY_GRACE: Duration = Duration::from_secs(2);
/// How far a quaternion's norm may be from 1 and still be taken (normalised) as a rotation.
const QUATERNION_NORM_TOLERANCE: f64 = 1e-2;

/// The parameters of the object server.
#[derive(Debug)]
pub struct ObjectServerParameters {
    /// `set_pose_service_name`: Gazebo's `set_pose` service.
    pub set_pose_service_name: String,
    /// `get_pose_topic_name`: the `Pose_V` topic with the entities' world poses.
    pub get_pose_topic_name: String,
    /// `entity_names`: the entities served.
    pub entity_names: Vec<String>,
    /// `thread_sampling_time_sec`: the shortest interval between two poses of an entity.
    pub thread_sampling_time: Duration,
    /// `publish_unchanged_poses`: publish every Gazebo message, changed or not.
    pub publish_unchanged_poses: bool,
    /// `gazebo_timeout_sec`: the longest a `set_pose` call may take.
    pub gazebo_timeout: Duration,
    /// `gz_msgs_prefix`, `gz_partition`.
    pub gz: GzParameters,
}

impl ServerParameters for ObjectServerParameters {
    fn declare(reader: &mut ParameterReader<'_>) -> Result<Self, ParameterError> {
        let set_pose_service_name = gz_name(
            reader,
            "set_pose_service_name",
            "a string, Gazebo's set_pose service, e.g. \"/world/ur3e_world/set_pose\"",
            "Gazebo's set_pose service (Pose -> Boolean), e.g. /world/ur3e_world/set_pose",
        )?;
        let get_pose_topic_name = gz_name(
            reader,
            "get_pose_topic_name",
            "a string, a Pose_V topic, e.g. \"/world/ur3e_world/pose/info\"",
            "the Gazebo topic (Pose_V) with the entities' world poses, e.g. \
                 /world/ur3e_world/pose/info",
        )?;
        let entity_names: Vec<String> = reader
            .mandatory::<Arc<[Arc<str>]>>(
                "entity_names",
                "a list of strings, e.g. [\"frame_x\", \"frame_xd\"]",
                "the Gazebo entities (models) whose poses are served, e.g. [frame_x, frame_xd]",
            )?
            .iter()
            .map(|name| name.to_string())
            .collect();
        let entity_names = checked(reader, "entity_names", entity_names, |names| {
            if names.is_empty() {
                return Err("the list is empty".into());
            }
            for (k, name) in names.iter().enumerate() {
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return Err(format!(
                        "{name:?} is not an entity name (empty or with spaces)"
                    ));
                }
                if names[..k].contains(name) {
                    return Err(format!("{name:?} is named twice"));
                }
            }
            Ok(names)
        })?;
        let thread_sampling_time = positive_seconds(
            reader,
            "thread_sampling_time_sec",
            "the shortest interval between two published poses of an entity",
            DEFAULT_SERVER_SAMPLING_TIME_SEC,
        )?;
        let publish_unchanged_poses = reader.optional::<bool>(
            "publish_unchanged_poses",
            "true or false",
            "true: every pose Gazebo reports, changed or not (the original's behaviour); false: \
             the changes, and an unchanged pose once a second",
            false,
        )?;
        let gazebo_timeout = positive_seconds(
            reader,
            "gazebo_timeout_sec",
            "how long a call of Gazebo's set_pose service may take",
            DEFAULT_GAZEBO_TIMEOUT_SEC,
        )?;
        let gz = GzParameters::declare(reader)?;
        Ok(ObjectServerParameters {
            set_pose_service_name,
            get_pose_topic_name,
            entity_names,
            thread_sampling_time,
            publish_unchanged_poses,
            gazebo_timeout,
            gz,
        })
    }

    fn serve(&self, run: NodeRun<'_>, gz: gz_transport::Node) -> NodeExit {
        let node = run.node;
        run.teardown.stage("creating the topics");
        let counters = Arc::new(Counters::default());
        let mut entities = HashMap::new();
        for name in &self.entity_names {
            let topic = format!("{name}/get/pose");
            match node.create_publisher::<PoseStamped>(topic.as_str().keep_last(1).reliable()) {
                Ok(publisher) => {
                    entities.insert(
                        name.clone(),
                        Reported {
                            publisher,
                            last: None,
                            seen: false,
                        },
                    );
                }
                Err(err) => {
                    tracing::error!("::Exception::cannot create the publisher {topic:?}: {err}");
                    return NodeExit::Failure;
                }
            }
        }
        let reports = Arc::new(PoseReports {
            entities: Mutex::new(entities),
            clock: node.get_clock(),
            min_interval: self.thread_sampling_time,
            every_message: self.publish_unchanged_poses,
            first_message: Mutex::new(None),
            missing_reported: Default::default(),
            topic: self.get_pose_topic_name.clone(),
            counters: counters.clone(),
        });
        let r = reports.clone();
        let subscription = gz.subscribe_with(
            &self.get_pose_topic_name,
            Delivery::Latest,
            move |poses: PoseV, _: &MessageInfo| r.take(&poses),
        );
        let _subscription = match subscription {
            Ok(s) => s,
            Err(err) => {
                tracing::error!(
                    "::Exception::cannot subscribe to Gazebo's {}: {err}",
                    self.get_pose_topic_name
                );
                return NodeExit::Failure;
            }
        };

        let outbox = Arc::new(Outbox::default());
        let mut subscriptions = Vec::new();
        for name in &self.entity_names {
            let topic = format!("{name}/set/pose");
            let (entity, outbox, counters) = (name.clone(), outbox.clone(), counters.clone());
            let created = ListenerSubscription::<PoseStamped>::new(
                node,
                &topic,
                1,
                move |message: PoseStamped, _: TakenInfo<'_>| match gz_pose(&entity, &message.pose)
                {
                    Ok(pose) => {
                        outbox.pending.lock().insert(entity.clone(), pose);
                        outbox.wake.notify_one();
                    }
                    Err(why) => {
                        let refused = counters.poses_refused.fetch_add(1, Ordering::Relaxed) + 1;
                        tracing::warn!(
                            "::{entity}/set/pose: refused a pose ({refused} refused so far), \
                             nothing sent to Gazebo: {why}."
                        );
                    }
                },
            );
            match created {
                Ok(s) => subscriptions.push(s),
                Err(err) => {
                    tracing::error!("::Exception::cannot subscribe to {topic:?}: {err}");
                    return NodeExit::Failure;
                }
            }
        }
        tracing::info!(
            "::Serving {} entities ({}): poses from Gazebo's {}, set through {}.",
            self.entity_names.len(),
            self.entity_names.join(", "),
            self.get_pose_topic_name,
            self.set_pose_service_name
        );

        let served = spin_until_shutdown(run.executor, run.shutdown, run.teardown, || {
            // Wake the sender on shutdown, which it waits for beside new poses.
            let outbox_waker = outbox.clone();
            let _waker = run.shutdown.on_trigger(Arc::new(move || {
                let _pending = outbox_waker.pending.lock();
                outbox_waker.wake.notify_all();
            }));
            std::thread::scope(|scope| {
                scope.spawn(|| say_while_waiting(&reports, run.shutdown));
                send_poses(&gz, self, &outbox, &counters, run.shutdown);
            });
        });
        if let Err(exit) = served {
            return exit;
        }
        run.teardown.stage("destroying the topics");
        drop(subscriptions);
        tracing::info!(
            "::Stopped: {} poses published, {} sent to Gazebo, {} refused here, {} refused by Gazebo.",
            counters.poses_published.load(Ordering::Relaxed),
            counters.poses_sent.load(Ordering::Relaxed),
            counters.poses_refused.load(Ordering::Relaxed),
            counters.gazebo_refused.load(Ordering::Relaxed),
        );
        NodeExit::Stopped
    }

    fn gz(&self) -> &GzParameters {
        &self.gz
    }
}

/// Counters of what the node did, logged when it stops.
#[derive(Default)]
struct Counters {
    poses_published: AtomicU64,
    poses_sent: AtomicU64,
    poses_refused: AtomicU64,
    gazebo_refused: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// One entity's `get/pose` side.
struct Reported {
    publisher: Publisher<PoseStamped>,
    last: Option<(GzPose, Instant)>,
    seen: bool,
}

/// What the receive thread needs: every entity's publisher and last pose.
struct PoseReports {
    entities: Mutex<HashMap<String, Reported>>,
    clock: Clock,
    min_interval: Duration,
    every_message: bool,
    first_message: Mutex<Option<Instant>>,
    missing_reported: std::sync::atomic::AtomicBool,
    topic: String,
    counters: Arc<Counters>,
}

impl PoseReports {
    /// Gazebo's poses arrived: publish what changed (or is due for a heartbeat).
    fn take(&self, poses: &PoseV) {
        let now = Instant::now();
        let first = *self.first_message.lock().get_or_insert(now);
        let mut entities = self.entities.lock();
        let mut taken: Vec<&str> = Vec::with_capacity(entities.len());
        for pose in &poses.pose {
            // gz-sim's pose/info lists the models first, then links and visuals, whose names
            // repeat (a nested model named as its parent, each frame's link `frame`): an
            // entity's world pose is the first entry of its name.
            if taken.contains(&pose.name.as_str()) {
                continue;
            }
            let Some(entity) = entities.get_mut(&pose.name) else {
                continue;
            };
            taken.push(&pose.name);
            entity.seen = true;
            if !pose_is_finite(pose) {
                continue; // never forwarded as a pose
            }
            let due = match &entity.last {
                None => true,
                Some((last, at)) => {
                    // A tenth of slack: Gazebo's messages come on its own grid, and one a hair
                    // under the interval after the last would otherwise be skipped (a fifth of
                    // every-message poses at 100 Hz in the benchmark).
                    let since = now.saturating_duration_since(*at);
                    since + self.min_interval / 10 >= self.min_interval
                        && (self.every_message
                            || !same_pose(last, pose)
                            || since >= DEFAULT_HEARTBEAT)
                }
            };
            if !due {
                continue;
            }
            let message = PoseStamped {
                header: Header {
                    stamp: now_stamp(&self.clock),
                    frame_id: WORLD_FRAME.into(),
                },
                pose: ros_pose(pose),
            };
            match entity.publisher.publish(message) {
                Ok(()) => {
                    bump(&self.counters.poses_published);
                    entity.last = Some((pose.clone(), now));
                }
                Err(err) => tracing::warn!("::{}/get/pose not published: {err}", pose.name),
            }
        }
        if now.saturating_duration_since(first) >= MISSING_ENTITY_GRACE
            && !self.missing_reported.swap(true, Ordering::Relaxed)
        {
            let missing: Vec<&str> = entities
                .iter()
                .filter(|(_, e)| !e.seen)
                .map(|(name, _)| name.as_str())
                .collect();
            if !missing.is_empty() {
                let reported: Vec<&str> = poses.pose.iter().map(|p| p.name.as_str()).collect();
                tracing::warn!(
                    "::Gazebo's {} reports no pose of {} (it reports: {}); check entity_names.",
                    self.topic,
                    missing.join(", "),
                    reported.join(", ")
                );
            }
        }
    }
}

/// Says every few seconds that Gazebo's poses have not come yet, until they come or the stop.
fn say_while_waiting(reports: &PoseReports, shutdown: &ShutdownToken) {
    let started = Instant::now();
    // The first note soon: Gazebo's poses come many times a second once it runs.
    let mut wait = Duration::from_secs(1);
    while !shutdown.wait_timeout(wait) {
        if reports.first_message.lock().is_some() {
            return;
        }
        tracing::warn!(
            "::waiting for Gazebo's poses on {} for {:.0} s; is Gazebo running?",
            reports.topic,
            started.elapsed().as_secs_f64()
        );
        wait = WAITING_NOTE_INTERVAL;
    }
}

/// Poses waiting to be sent to Gazebo, newest per entity.
#[derive(Default)]
struct Outbox {
    pending: Mutex<HashMap<String, GzPose>>,
    wake: Condvar,
}

/// Sends the newest pending pose of each entity to Gazebo's `set_pose`, until `shutdown`.
fn send_poses(
    gz: &gz_transport::Node,
    parameters: &ObjectServerParameters,
    outbox: &Outbox,
    counters: &Counters,
    shutdown: &ShutdownToken,
) {
    let service = &parameters.set_pose_service_name;
    loop {
        let batch: Vec<(String, GzPose)> = {
            let mut pending = outbox.pending.lock();
            while pending.is_empty() && !shutdown.is_triggered() {
                outbox.wake.wait(&mut pending);
            }
            if shutdown.is_triggered() {
                return;
            }
            pending.drain().collect()
        };
        for (entity, pose) in batch {
            match gz.request::<GzPose, Boolean>(service, &pose, parameters.gazebo_timeout) {
                Ok(Boolean { data: true, .. }) => bump(&counters.poses_sent),
                Ok(Boolean { data: false, .. }) => {
                    bump(&counters.gazebo_refused);
                    tracing::warn!(
                        "::{entity}/set/pose: Gazebo's {service} refused the pose (is {entity:?} \
                         an entity of the world?)."
                    );
                }
                Err(ServiceError::NoResponder { .. }) => {
                    bump(&counters.gazebo_refused);
                    tracing::warn!(
                        "::{entity}/set/pose: Gazebo's {service} was not found within {:?}; is \
                         Gazebo running, in partition {:?}? The pose was dropped.",
                        parameters.gazebo_timeout,
                        gz.partition()
                    );
                }
                Err(err) => {
                    bump(&counters.gazebo_refused);
                    tracing::warn!("::{entity}/set/pose: not set: {err}.");
                }
            }
        }
    }
}

/// The pose Gazebo is sent for `entity`: finite, with its rotation normalised.
fn gz_pose(entity: &str, pose: &Pose) -> Result<GzPose, String> {
    let p = &pose.position;
    let q = &pose.orientation;
    if ![p.x, p.y, p.z].iter().all(|v| v.is_finite()) {
        return Err(format!(
            "the position ({}, {}, {}) is not finite",
            p.x, p.y, p.z
        ));
    }
    let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if !norm.is_finite() || (norm - 1.0).abs() > QUATERNION_NORM_TOLERANCE {
        return Err(format!(
            "the orientation ({}, {}, {}, {}) is not a unit quaternion (norm {norm})",
            q.x, q.y, q.z, q.w
        ));
    }
    Ok(GzPose {
        header: None,
        name: entity.to_owned(),
        id: 0,
        position: Some(Vector3d {
            header: None,
            x: p.x,
            y: p.y,
            z: p.z,
        }),
        orientation: Some(GzQuaternion {
            header: None,
            x: q.x / norm,
            y: q.y / norm,
            z: q.z / norm,
            w: q.w / norm,
        }),
    })
}

fn pose_is_finite(pose: &GzPose) -> bool {
    let p = pose.position.clone().unwrap_or_default();
    let q = pose.orientation.clone().unwrap_or_default();
    [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
        .iter()
        .all(|v| v.is_finite())
}

fn same_pose(a: &GzPose, b: &GzPose) -> bool {
    a.position == b.position && a.orientation == b.orientation
}

/// Gazebo's pose as ROS's; a pose without an orientation is the identity (protobuf's default
/// quaternion is all zeros, which is no rotation at all).
fn ros_pose(pose: &GzPose) -> Pose {
    let p = pose.position.clone().unwrap_or_default();
    let q = pose.orientation.clone().unwrap_or(GzQuaternion {
        header: None,
        x: 0.0,
        y: 0.0,
        z: 0.0,
        w: 1.0,
    });
    Pose {
        position: Point {
            x: p.x,
            y: p.y,
            z: p.z,
        },
        orientation: Quaternion {
            x: q.x,
            y: q.y,
            z: q.z,
            w: q.w,
        },
    }
}

fn now_stamp(clock: &Clock) -> Time {
    let nanos = clock.now().nsec;
    Time {
        sec: nanos
            .div_euclid(1_000_000_000)
            .clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        nanosec: nanos.rem_euclid(1_000_000_000) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ros(x: f64, q: [f64; 4]) -> Pose {
        Pose {
            position: Point { x, y: 0.0, z: 0.0 },
            orientation: Quaternion {
                x: q[0],
                y: q[1],
                z: q[2],
                w: q[3],
            },
        }
    }

    #[test]
    fn a_set_pose_is_finite_and_a_rotation_or_refused_naming_why() {
        let ok = gz_pose("frame_x", &ros(1.0, [0.0, 0.0, 0.0, 1.005])).unwrap();
        assert_eq!(ok.name, "frame_x");
        let q = ok.orientation.unwrap();
        assert!((q.w - 1.0).abs() < 1e-12, "normalised");
        let why = gz_pose("frame_x", &ros(f64::NAN, [0.0, 0.0, 0.0, 1.0])).unwrap_err();
        assert!(why.contains("not finite"), "{why}");
        let why = gz_pose("frame_x", &ros(0.0, [0.0, 0.0, 0.0, 0.0])).unwrap_err();
        assert!(why.contains("not a unit quaternion"), "{why}");
        let why = gz_pose("frame_x", &ros(0.0, [0.0, 0.0, 0.0, 2.0])).unwrap_err();
        assert!(why.contains("norm 2"), "{why}");
        assert!(gz_pose("frame_x", &ros(0.0, [f64::INFINITY, 0.0, 0.0, 1.0])).is_err());
    }

    #[test]
    fn a_reported_pose_without_orientation_is_the_identity() {
        let pose = GzPose {
            name: "frame_x".into(),
            position: Some(Vector3d {
                header: None,
                x: 1.0,
                y: 2.0,
                z: 3.0,
            }),
            ..GzPose::default()
        };
        let ros = ros_pose(&pose);
        assert_eq!((ros.position.x, ros.position.z), (1.0, 3.0));
        assert_eq!(ros.orientation.w, 1.0);
        assert!(pose_is_finite(&pose));
    }
}
