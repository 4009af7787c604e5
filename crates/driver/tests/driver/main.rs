//! Integration tests of the driver, one binary.

// Test plumbing: partitions, child processes, log capture.
mod support;

// The cache alone: a 10 kHz writer against readers.
mod concurrency;
// Against the real Ignition Fortress CLI (`ign-transport-topic`).
mod ign_cli;
// Against gz-joint-sim running the UR3e world in this process.
mod sim;
