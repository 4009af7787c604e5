//! The cache under a 10 kHz writer and several readers: no torn snapshot, no deadlock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use sas_robot_driver_gazebo::{JointSample, JointSnapshot, JointStateCache, SimTime};

const JOINTS: usize = 6;
const RUN_FOR: Duration = Duration::from_secs(3);
const WRITE_PERIOD: Duration = Duration::from_micros(100);
const READERS: usize = 3;

/// Every value of message `k` encodes `k`, the joint and the field, so a snapshot mixing two
/// messages is detected.
fn value(message: u64, joint: usize, field: usize) -> f64 {
    message as f64 * 100.0 + joint as f64 * 10.0 + field as f64
}

fn check_consistent(snapshot: &JointSnapshot) -> Result<(), String> {
    let k = snapshot.sequence;
    for joint in 0..JOINTS {
        let fields = [
            snapshot.positions[joint],
            snapshot.velocities[joint],
            snapshot.efforts[joint],
            snapshot.limits_lower[joint],
            snapshot.limits_upper[joint],
        ];
        for (field, got) in fields.into_iter().enumerate() {
            if got != value(k, joint, field) {
                return Err(format!(
                    "torn snapshot: sequence {k}, joint {joint} field {field} holds {got}"
                ));
            }
        }
        if snapshot.last_seen[joint] != k {
            return Err(format!(
                "torn snapshot: sequence {k}, joint {joint} last seen in {}",
                snapshot.last_seen[joint]
            ));
        }
    }
    match snapshot.sim_time {
        Some(SimTime { sec, .. }) if sec as u64 == k => Ok(()),
        other => Err(format!("torn snapshot: sequence {k}, stamp {other:?}")),
    }
}

#[test]
fn readers_never_see_a_torn_snapshot_under_a_10_khz_writer() {
    let cache = Arc::new(JointStateCache::new(JOINTS));
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<(&'static str, Result<u64, String>)>();

    let writer = {
        let (cache, stop, done) = (cache.clone(), stop.clone(), done_tx.clone());
        thread::spawn(move || {
            let mut samples = vec![
                JointSample {
                    index: 0,
                    position: 0.0,
                    velocity: 0.0,
                    effort: 0.0,
                    limit_lower: 0.0,
                    limit_upper: 0.0,
                };
                JOINTS
            ];
            let mut next = Instant::now();
            let mut message = 0;
            while !stop.load(Ordering::Relaxed) {
                message += 1;
                // Joints in reverse order, like a message whose order differs from ours.
                for (slot, sample) in samples.iter_mut().enumerate() {
                    let joint = JOINTS - 1 - slot;
                    *sample = JointSample {
                        index: joint,
                        position: value(message, joint, 0),
                        velocity: value(message, joint, 1),
                        effort: value(message, joint, 2),
                        limit_lower: value(message, joint, 3),
                        limit_upper: value(message, joint, 4),
                    };
                }
                let stamp = SimTime {
                    sec: message as i64,
                    nsec: 0,
                };
                let written = cache.write(&samples, Some(stamp), Instant::now());
                if written != message {
                    let _ = done.send(("writer", Err(format!("wrote {message}, got {written}"))));
                    return;
                }
                next += WRITE_PERIOD;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    thread::sleep(wait);
                }
            }
            let _ = done.send(("writer", Ok(message)));
        })
    };

    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (cache, stop, done) = (cache.clone(), stop.clone(), done_tx.clone());
            thread::spawn(move || {
                let mut snapshot = JointSnapshot::new(JOINTS);
                let mut last = 0;
                let mut distinct = 0;
                let result = loop {
                    if stop.load(Ordering::Relaxed) {
                        break Ok(distinct);
                    }
                    cache.read(&mut snapshot);
                    if snapshot.sequence == 0 {
                        continue;
                    }
                    if snapshot.sequence < last {
                        break Err(format!(
                            "sequence went back: {last} → {}",
                            snapshot.sequence
                        ));
                    }
                    if let Err(torn) = check_consistent(&snapshot) {
                        break Err(torn);
                    }
                    if snapshot.sequence > last {
                        distinct += 1;
                        last = snapshot.sequence;
                    }
                };
                let _ = done.send(("reader", result));
            })
        })
        .collect();

    // A waiter exercising the writer's wake-up path at the same time.
    let waiter = {
        let (cache, stop, done) = (cache.clone(), stop.clone(), done_tx.clone());
        thread::spawn(move || {
            let mut wakes = 0;
            let result = loop {
                if stop.load(Ordering::Relaxed) {
                    break Ok(wakes);
                }
                let seen = cache.sequence();
                match cache.wait_for_sample_after(seen, Duration::from_secs(2)) {
                    Some(newer) if newer > seen => wakes += 1,
                    // The writer stopped while we waited.
                    None if stop.load(Ordering::Relaxed) => break Ok(wakes),
                    other => break Err(format!("no sample after {seen} within 2 s: {other:?}")),
                }
            };
            let _ = done.send(("waiter", result));
        })
    };
    drop(done_tx);

    thread::sleep(RUN_FOR);
    stop.store(true, Ordering::Relaxed);
    let mut results = Vec::new();
    for _ in 0..READERS + 2 {
        // A thread that never reports is deadlocked.
        let report = done_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a thread did not finish within 30 s of the stop: deadlock");
        results.push(report);
    }
    writer.join().unwrap();
    readers.into_iter().for_each(|r| r.join().unwrap());
    waiter.join().unwrap();

    for (who, result) in &results {
        let count = result.as_ref().unwrap_or_else(|e| panic!("{who}: {e}"));
        eprintln!("{who}: {count}");
        // Bounds robust to two loaded cores, yet impossible for a stalled thread.
        let minimum = match *who {
            "writer" => 1_000,
            _ => 10,
        };
        assert!(*count >= minimum, "{who} made too little progress: {count}");
    }
}
