//! Log capture for tests: what `tracing` writes on this thread while a closure runs. Shared by
//! the integration tests and the crate's unit tests (`src/lib.rs` includes this file).

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;

/// Log lines written while `f` runs on this thread.
pub fn capture_logs<T>(f: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let result = tracing::subscriber::with_default(subscriber, f);
    let logs = String::from_utf8_lossy(&buffer.0.lock()).into_owned();
    (result, logs)
}
