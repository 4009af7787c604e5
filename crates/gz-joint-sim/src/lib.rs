//! gz-joint-sim (placeholder)
