//! Integration tests of the driver, one binary.

// The cache alone: a 10 kHz writer against readers.
mod concurrency;
