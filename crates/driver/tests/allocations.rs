//! Allocations on the receive path, counted by a counting global allocator (hence its own test
//! binary): per thread for the steps the driver owns (the cache write and the snapshot read:
//! none), and on a real receive thread fed by a simulator in another process (decoding the
//! message and the transport's share: bounded, not zero).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gz_transport::msgs::{Axis, Header, Joint, Model, Time};
use prost::Message;
use sas_robot_driver_gazebo::{
    JointSnapshot, JointStateCache, ModelReceiver, RobotDriverGazebo,
    RobotDriverGazeboConfiguration,
};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    /// Set on the transport's receive thread (by a state listener, which runs there).
    static ON_RECEIVE_THREAD: Cell<bool> = const { Cell::new(false) };
}
/// Every allocation the receive thread made once it was marked.
static RECEIVE_THREAD_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn count() {
    ALLOCATIONS.with(|count| count.set(count.get() + 1));
    if ON_RECEIVE_THREAD.with(Cell::get) {
        RECEIVE_THREAD_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn model() -> Model {
    Model {
        header: Some(Header {
            stamp: Some(Time { sec: 1, nsec: 2 }),
            data: vec![],
        }),
        joint: ["c", "a", "b", "unknown"]
            .iter()
            .map(|name| Joint {
                name: name.to_string(),
                axis1: Some(Axis {
                    position: 0.5,
                    limit_lower: -1.0,
                    limit_upper: 1.0,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// What the driver does with a decoded `Model` (match its joints, write the cache) and a
/// snapshot read: no allocation. Decoding and the transport are the next test's.
#[test]
fn writing_a_decoded_message_into_the_cache_and_reading_a_snapshot_allocate_nothing() {
    let names: Vec<String> = ["a", "b", "c"].iter().map(|n| n.to_string()).collect();
    let cache = Arc::new(JointStateCache::new(names.len()));
    let mut receiver = ModelReceiver::new(cache.clone(), &names);
    let mut snapshot = JointSnapshot::new(names.len());
    let message = model();
    // The first receive sizes the receiver's buffer.
    receiver.receive(&message, Instant::now(), 0);

    let received = allocations_in(|| {
        for _ in 0..1000 {
            receiver.receive(&message, Instant::now(), 0).unwrap();
        }
    });
    let read = allocations_in(|| {
        for _ in 0..1000 {
            cache.read(&mut snapshot);
        }
    });
    assert_eq!(snapshot.sequence, 1001);
    assert_eq!(snapshot.positions, [0.5; 3]);
    assert_eq!((received, read), (0, 0), "allocations (receive, read)");
}

use gz_joint_sim::ur3e_world::JOINT_STATES as STATES;
const SIM_PARTITION: &str = "SAS_ALLOCATIONS_SIM_PARTITION";

/// Not a test of its own: the simulator of the next test, when this binary is re-executed
/// with `SAS_ALLOCATIONS_SIM_PARTITION` set (its allocations stay out of the count).
#[test]
fn simulator_child() {
    let Ok(partition) = std::env::var(SIM_PARTITION) else {
        return;
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdf/ur3e_world.sdf");
    let _sim = gz_joint_sim::World::load_with_resource_paths(path, &[])
        .unwrap()
        .start(gz_joint_sim::SimOptions {
            partition: Some(partition),
            ..Default::default()
        })
        .unwrap();
    std::thread::sleep(Duration::from_secs(120)); // the parent kills it sooner
}

/// What the transport's receive thread allocates per message besides decoding it: the
/// `MessageInfo` handed to the callback (four strings) and one more: measured, 5 per
/// message exactly. Reading the frames and the driver's own work
/// (source gate, cache write, listeners) allocate nothing.
const TRANSPORT_PER_MESSAGE: f64 = 5.0;

/// The whole receive path, as it runs: gz-joint-sim in another process sends the UR3e's
/// joint states at 500/s; this process only receives (the transport's receive thread reads
/// the frames, decodes each `Model`, and the driver writes its cache). Every allocation of
/// the receive thread over a window, per message received: what decoding one of those messages
/// allocates (prost: the joints' strings and nested messages; 21 for the UR3e) plus the
/// transport's share, no more. Not zero: the cache write and the snapshot read are the
/// allocation-free steps (the test above).
#[test]
fn the_receive_thread_allocates_per_message_only_decoding_and_the_transports_share() {
    test_support::loopback_only();
    let partition = format!("alloc_{}", std::process::id());
    let _sim = test_support::ChildGuard::spawn(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "simulator_child", "--nocapture"])
            .env(SIM_PARTITION, &partition),
    );
    let mut config = RobotDriverGazeboConfiguration::new(
        gz_joint_sim::ur3e_world::JOINTS,
        gz_joint_sim::ur3e_world::COMMAND_PREFIX,
        STATES,
    );
    config.partition = Some(partition);
    config.initialize_timeout = Some(Duration::from_secs(60));
    let driver = RobotDriverGazebo::new(config, None).unwrap();
    driver.connect().unwrap();
    driver.initialize().unwrap();

    // One of the simulator's messages as it is on the wire, and what decoding it costs.
    let (sender, wire) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    let capture = driver
        .node()
        .subscribe_raw(STATES, move |bytes, _| {
            let _ = sender.try_send(bytes.to_vec());
        })
        .unwrap();
    let bytes = wire.recv_timeout(Duration::from_secs(30)).unwrap();
    drop(capture);
    let mut decoded = None;
    let decoding = allocations_in(|| decoded = Some(Model::decode(bytes.as_slice()).unwrap()));
    assert_eq!(
        decoded.unwrap().joint.len(),
        gz_joint_sim::ur3e_world::JOINTS.len(),
        "the UR3e's joints"
    );
    let _mark = driver.add_state_listener(Arc::new(|| ON_RECEIVE_THREAD.with(|on| on.set(true))));
    std::thread::sleep(Duration::from_secs(1)); // past the first messages' one-time sizing

    let counted = || RECEIVE_THREAD_ALLOCATIONS.load(Ordering::Relaxed);
    let before = (driver.snapshot().sequence, counted());
    std::thread::sleep(Duration::from_secs(2));
    let after = (driver.snapshot().sequence, counted());
    let messages = after.0 - before.0;
    let allocations = after.1 - before.1;
    let per_message = allocations as f64 / messages as f64;
    println!(
        "{allocations} allocations for {messages} messages: {per_message:.2} per message; \
         decoding one allocates {decoding}"
    );
    assert!(messages > 500, "only {messages} messages in 2 s");
    assert!(
        // A tenth: the window's two ends are not read at the same instant.
        per_message <= decoding as f64 + TRANSPORT_PER_MESSAGE + 0.1,
        "{per_message:.2} allocations per message received: more than decoding ({decoding}) \
         and the transport's {TRANSPORT_PER_MESSAGE}"
    );
}
