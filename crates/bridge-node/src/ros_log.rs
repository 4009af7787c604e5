use std::fmt::Write as _;

use rclrs::{LogSeverity, Logger, ToLogParams};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// A `tracing` layer that hands every event to a ROS logger (rcutils), so the bridge's and
/// the driver's log lines look and filter like any ROS node's (`[INFO] [time] [ur3e_1]: …`,
/// `--ros-args --log-level …`) and reach `/rosout`. Fields other than the message are
/// appended as `name=value`.
pub struct RosLogLayer {
    logger: Logger,
}

impl RosLogLayer {
    /// Logs to `logger`, e.g. `node.logger().clone()`.
    pub fn new(logger: Logger) -> Self {
        RosLogLayer { logger }
    }
}

impl<S: Subscriber> Layer<S> for RosLogLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let severity = match *event.metadata().level() {
            Level::ERROR => LogSeverity::Error,
            Level::WARN => LogSeverity::Warn,
            Level::INFO => LogSeverity::Info,
            Level::DEBUG | Level::TRACE => LogSeverity::Debug,
        };
        let mut text = LogText::default();
        event.record(&mut text);
        rclrs::log!((&self.logger).severity(severity), "{}", text.0);
    }
}

#[derive(Default)]
struct LogText(String);

impl Visit for LogText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}
