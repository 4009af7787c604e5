//! The hot paths allocate nothing: a counting global allocator (hence its own test binary)
//! counts the allocations made on the calling thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use gz_transport::msgs::{Axis, Header, Joint, Model};
use sas_robot_driver_gazebo::{JointSnapshot, JointStateCache, ModelReceiver, SimTime};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
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
            stamp: Some(SimTime { sec: 1, nsec: 2 }),
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

#[test]
fn receiving_a_message_and_reading_a_snapshot_allocate_nothing() {
    let names: Vec<String> = ["a", "b", "c"].iter().map(|n| n.to_string()).collect();
    let cache = Arc::new(JointStateCache::new(names.len()));
    let mut receiver = ModelReceiver::new(cache.clone(), &names);
    let mut snapshot = JointSnapshot::new(names.len());
    let message = model();
    // The first receive sizes the receiver's buffer.
    receiver.receive(&message, Instant::now());

    let received = allocations_in(|| {
        for _ in 0..1000 {
            receiver.receive(&message, Instant::now()).unwrap();
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
