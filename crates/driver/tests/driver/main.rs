//! Integration tests of the driver, one binary.

// Test plumbing: partitions, child processes, log capture.
mod support;
// Log capture, shared with the unit tests.
mod log_capture;
// A thread repeating one step until dropped, shared with the benches.
mod repeating;

// RobotDriverComposite over two parts of the R820 + UR3e world run in this process.
mod composite;
// The cache alone: a 10 kHz writer against readers.
mod concurrency;
// A receive thread held back while Gazebo keeps publishing.
mod held_back;
// Against the real Ignition Fortress CLI (`ign-transport-topic`).
mod ign_cli;
// Switching between position, velocity and effort targets, against a gz-transport peer.
mod modes;
// Velocity targets through a composite, against the UR3e velocity world in this process.
mod rate;
// A world reset on the joint states: the velocity command in force zeroed.
mod reset;
// A second simulator on the same topics, then the first one stopped.
mod restart;
// Against gz-joint-sim running the UR3e world in this process.
mod sim;
