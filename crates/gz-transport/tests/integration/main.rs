//! End-to-end tests over the real middleware: UDP multicast on loopback and ZeroMQ over TCP.
//! Every test runs in its own partition with `GZ_IP=IGN_IP=127.0.0.1`, waits on events with
//! bounded timeouts, and kills the processes it starts when it ends.

// Shared helpers: partitions, child-process guards, bounded waits.
mod support;
// Several nodes in this process, each its own discovery participant.
mod in_process;
// Our own processes (`gz-topic`) against each other and against this process.
mod processes;
// The real C++ implementation: `ign-transport-topic` (Ignition transport 11).
mod interop;
// Services: `ign-transport-service` and a C++ responder against ours, and our CLI.
mod services;
// PLAIN authentication against the C++ peer.
mod auth;
