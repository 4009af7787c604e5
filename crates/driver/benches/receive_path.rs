//! The receive path, measured piece by piece on a message shaped like the one Gazebo's
//! JointStatePublisher sends for the UR3e (header stamp, pose, six joints with ids, parents,
//! children, poses and full `axis1`):
//!
//! * `snapshot_read`: a reader copying the cache (what a control loop does every period).
//! * `receive_cpu/decode_and_write`: per-message CPU of the receive callback's work —
//!   protobuf decode plus `ModelReceiver::receive`; `receive_cpu/write_only` without decode.
//! * `callback_to_visible`: from the callback starting its write until a reader thread
//!   polling snapshots sees the new message.
//! * `transport_to_visible`: end to end through gz-transport on loopback — from publishing
//!   the encoded message on one node until a driver subscribed on another node shows it in
//!   a snapshot (ZeroMQ delivery, decode and receive included).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gz_transport::msgs::{Axis, Header, Joint, Model, Pose, Quaternion, Time, Vector3d};
use gz_transport::{Node, NodeOptions};
use prost::Message;
use sas_robot_driver_gazebo::{
    JointSnapshot, JointStateCache, ModelReceiver, RobotDriverGazebo,
    RobotDriverGazeboConfiguration,
};

use gz_joint_sim::ur3e_world::JOINTS as UR3E_JOINTS;

mod settings;
use settings::repeating::Repeating;

fn pose(name: &str) -> Pose {
    Pose {
        header: None,
        name: name.into(),
        id: 7,
        position: Some(Vector3d {
            header: None,
            x: 0.1,
            y: 0.2,
            z: 0.3,
        }),
        orientation: Some(Quaternion {
            header: None,
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }),
    }
}

fn joint_state_message() -> Model {
    Model {
        header: Some(Header {
            stamp: Some(Time {
                sec: 12,
                nsec: 340_000_000,
            }),
            data: vec![],
        }),
        name: "ur3e".into(),
        id: 9,
        pose: Some(pose("ur3e")),
        joint: UR3E_JOINTS
            .iter()
            .enumerate()
            .map(|(i, name)| Joint {
                name: (*name).into(),
                id: 20 + i as u32,
                parent: format!("link_{i}"),
                child: format!("link_{}", i + 1),
                pose: Some(pose(name)),
                axis1: Some(Axis {
                    xyz: Some(Vector3d {
                        header: None,
                        x: 0.0,
                        y: 0.0,
                        z: 1.0,
                    }),
                    limit_lower: -std::f64::consts::TAU,
                    limit_upper: std::f64::consts::TAU,
                    damping: 0.0,
                    position: 0.1 * i as f64,
                    velocity: 0.01,
                    force: 1.5,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn receiver() -> (Arc<JointStateCache>, ModelReceiver) {
    let names: Vec<String> = UR3E_JOINTS.iter().map(|n| n.to_string()).collect();
    let cache = Arc::new(JointStateCache::new(names.len()));
    (cache.clone(), ModelReceiver::new(cache, &names))
}

fn snapshot_read(c: &mut Criterion) {
    let (cache, mut receiver) = receiver();
    receiver.receive(&joint_state_message(), Instant::now(), 0);
    let mut out = JointSnapshot::new(UR3E_JOINTS.len());
    c.bench_function("snapshot_read/ur3e_6", |b| {
        b.iter(|| {
            cache.read(&mut out);
            black_box(&out);
        })
    });
}

fn receive_cpu(c: &mut Criterion) {
    let model = joint_state_message();
    let bytes = model.encode_to_vec();
    let (_cache, mut receiver) = receiver();
    c.bench_function("receive_cpu/decode_and_write/ur3e_6", |b| {
        b.iter(|| {
            let model = Model::decode(black_box(bytes.as_slice())).unwrap();
            receiver.receive(&model, Instant::now(), 0)
        })
    });
    c.bench_function("receive_cpu/write_only/ur3e_6", |b| {
        b.iter(|| receiver.receive(black_box(&model), Instant::now(), 0))
    });
}

fn callback_to_visible(c: &mut Criterion) {
    let (cache, mut receiver) = receiver();
    let model = joint_state_message();
    let base = Instant::now();
    // The reader publishes (sequence it saw, when it saw it) for the writer to collect.
    let seen_sequence = Arc::new(AtomicU64::new(0));
    let seen_at_nanos = Arc::new(AtomicU64::new(0));
    let reader = {
        let (cache, seen_sequence, seen_at_nanos) =
            (cache.clone(), seen_sequence.clone(), seen_at_nanos.clone());
        let mut out = JointSnapshot::new(UR3E_JOINTS.len());
        Repeating::start(move || {
            cache.read(&mut out);
            if out.sequence > seen_sequence.load(Ordering::Relaxed) {
                seen_at_nanos.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                seen_sequence.store(out.sequence, Ordering::Release);
            }
        })
    };
    c.bench_function("callback_to_visible/ur3e_6", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let start = Instant::now();
                let sequence = receiver.receive(&model, start, 0).unwrap();
                // Yield rather than spin: on a busy machine the reader may share our core.
                while seen_sequence.load(Ordering::Acquire) < sequence {
                    thread::yield_now();
                }
                let seen_at = base + Duration::from_nanos(seen_at_nanos.load(Ordering::Relaxed));
                total += seen_at.saturating_duration_since(start);
            }
            total
        })
    });
    drop(reader);
}

fn transport_to_visible(c: &mut Criterion) {
    // Loopback only, in a partition of our own.
    std::env::set_var("GZ_IP", "127.0.0.1");
    let partition = format!("driver_bench_{}", std::process::id());
    let topic = "/bench/model/ur3e/joint_state";
    let gazebo = Node::with_options(NodeOptions {
        partition: Some(partition.clone()),
        ..Default::default()
    })
    .unwrap();
    let publisher = gazebo.advertise::<Model>(topic).unwrap();
    let mut config = RobotDriverGazeboConfiguration::new(UR3E_JOINTS, "/bench/joint/", topic);
    config.partition = Some(partition);
    let driver = RobotDriverGazebo::new(config, None).unwrap();
    driver.connect().unwrap();
    let bytes = joint_state_message().encode_to_vec();
    // Discovery: publish until the driver's subscription is connected.
    let deadline = Instant::now() + Duration::from_secs(30);
    while driver.snapshot().sequence == 0 {
        assert!(Instant::now() < deadline, "no discovery within 30 s");
        publisher.raw().publish_raw(&bytes).unwrap();
        driver.wait_for_sample_after(0, Duration::from_millis(50));
    }
    let mut out = driver.snapshot();
    c.bench_function("transport_to_visible/ur3e_6", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let before = out.sequence;
                let start = Instant::now();
                publisher.raw().publish_raw(&bytes).unwrap();
                while out.sequence == before {
                    driver.read_snapshot(&mut out);
                }
                total += start.elapsed();
            }
            total
        })
    });
    driver.disconnect();
}

criterion_group! { name = benches; config = settings::criterion(); targets = snapshot_read, receive_cpu, callback_to_visible, transport_to_visible }
criterion_main!(benches);
