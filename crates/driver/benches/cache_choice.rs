//! Why the joint-state cache is a sequence lock: the same cache semantics (one message's
//! joints written together, readers copy a consistent snapshot without allocating) built
//! three ways, timed for the reader and the writer, alone and against a thread hammering the
//! other side.
//!
//! * `seqlock`: the crate's `JointStateCache`.
//! * `mutex`: a `parking_lot::Mutex<JointSnapshot>` held only while copying.
//! * `arc_swap`: an `ArcSwap<JointSnapshot>`; the writer copies the current snapshot into a
//!   new `Arc` (a message may lack some joints, so it must start from the old values).
//!
//! Sizes: `ur3e_6` (the UR3e) and `humanoid_50`.

use std::hint::black_box;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use parking_lot::Mutex;
use sas_robot_driver_gazebo::{JointSample, JointSnapshot, JointStateCache};

mod settings;
use settings::repeating::Repeating;

trait Cache: Send + Sync + 'static {
    fn write(&self, samples: &[JointSample], received_at: Instant);
    fn read(&self, out: &mut JointSnapshot);
}

impl Cache for JointStateCache {
    fn write(&self, samples: &[JointSample], received_at: Instant) {
        JointStateCache::write(self, samples, None, received_at);
    }
    fn read(&self, out: &mut JointSnapshot) {
        JointStateCache::read(self, out);
    }
}

fn apply(snapshot: &mut JointSnapshot, samples: &[JointSample], received_at: Instant) {
    snapshot.sequence += 1;
    for s in samples {
        snapshot.positions[s.index] = s.position;
        snapshot.velocities[s.index] = s.velocity;
        snapshot.efforts[s.index] = s.effort;
        snapshot.limits_lower[s.index] = s.limit_lower;
        snapshot.limits_upper[s.index] = s.limit_upper;
        snapshot.last_seen[s.index] = snapshot.sequence;
    }
    snapshot.received_at = Some(received_at);
}

struct MutexCache(Mutex<JointSnapshot>);

impl Cache for MutexCache {
    fn write(&self, samples: &[JointSample], received_at: Instant) {
        apply(&mut self.0.lock(), samples, received_at);
    }
    fn read(&self, out: &mut JointSnapshot) {
        out.clone_from(&self.0.lock());
    }
}

struct ArcSwapCache(ArcSwap<JointSnapshot>);

impl Cache for ArcSwapCache {
    fn write(&self, samples: &[JointSample], received_at: Instant) {
        let mut next = JointSnapshot::clone(&self.0.load());
        apply(&mut next, samples, received_at);
        self.0.store(Arc::new(next));
    }
    fn read(&self, out: &mut JointSnapshot) {
        out.clone_from(&self.0.load());
    }
}

fn samples(joints: usize, value: f64) -> Vec<JointSample> {
    (0..joints)
        .map(|index| JointSample {
            index,
            position: value,
            velocity: value,
            effort: value,
            limit_lower: -1.0,
            limit_upper: 1.0,
        })
        .collect()
}

fn caches(joints: usize) -> Vec<(&'static str, Arc<dyn Cache>)> {
    vec![
        ("seqlock", Arc::new(JointStateCache::new(joints))),
        (
            "mutex",
            Arc::new(MutexCache(Mutex::new(JointSnapshot::new(joints)))),
        ),
        (
            "arc_swap",
            Arc::new(ArcSwapCache(ArcSwap::from_pointee(JointSnapshot::new(
                joints,
            )))),
        ),
    ]
}

/// Runs `hammer` on another thread until the returned guard drops.
const SIZES: [(&str, usize); 2] = [("ur3e_6", 6), ("humanoid_50", 50)];

fn read(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_read");
    for (size, joints) in SIZES {
        for (name, cache) in caches(joints) {
            cache.write(&samples(joints, 0.5), Instant::now());
            let mut out = JointSnapshot::new(joints);
            group.bench_function(BenchmarkId::new(format!("{name}/alone"), size), |b| {
                b.iter(|| {
                    cache.read(&mut out);
                    black_box(&out);
                })
            });
            // Gazebo's real rate is 500 Hz; 10 kHz is a fast simulation; back to back is the
            // worst case for a sequence lock (readers retry).
            for (contention, pause) in [
                ("against_10khz_writer", Some(Duration::from_micros(100))),
                ("against_hammering_writer", None),
            ] {
                let writer = {
                    let cache = cache.clone();
                    let mut batch = samples(joints, 0.0);
                    Repeating::start(move || {
                        for sample in batch.iter_mut() {
                            sample.position += 1.0;
                        }
                        cache.write(&batch, Instant::now());
                        if let Some(pause) = pause {
                            thread::sleep(pause);
                        }
                    })
                };
                group.bench_function(
                    BenchmarkId::new(format!("{name}/{contention}"), size),
                    |b| {
                        b.iter(|| {
                            cache.read(&mut out);
                            black_box(&out);
                        })
                    },
                );
                drop(writer);
            }
        }
    }
    group.finish();
}

fn write(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_write");
    for (size, joints) in SIZES {
        for (name, cache) in caches(joints) {
            let batch = samples(joints, 0.5);
            group.bench_function(BenchmarkId::new(format!("{name}/alone"), size), |b| {
                b.iter(|| cache.write(black_box(&batch), Instant::now()))
            });
            let reader = {
                let cache = cache.clone();
                let mut out = JointSnapshot::new(joints);
                Repeating::start(move || {
                    cache.read(&mut out);
                    black_box(&out);
                })
            };
            group.bench_function(
                BenchmarkId::new(format!("{name}/against_hammering_reader"), size),
                |b| b.iter(|| cache.write(black_box(&batch), Instant::now())),
            );
            drop(reader);
        }
    }
    group.finish();
}

criterion_group! { name = benches; config = settings::criterion(); targets = read, write }
criterion_main!(benches);
