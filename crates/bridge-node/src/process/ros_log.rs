use std::fmt::Write as _;

use rclrs::{LogSeverity, Logger, ToLogParams};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The span every control loop runs in (`tracing::info_span!("robot", name = …)`).
const ROBOT_SPAN: &str = "robot";

/// A `tracing` layer that hands every event to a ROS logger (rcutils), so the bridge's and
/// the driver's log lines look and filter like any ROS node's (`[INFO] [time] [ur3e_1]: …`,
/// `--ros-args --log-level …`) and reach `/rosout`. Fields other than the message are
/// appended as `name=value`.
#[derive(Clone)]
pub struct RosLogLayer {
    logger: Logger,
    robot_prefix: bool,
}

impl RosLogLayer {
    /// Logs to `logger`, e.g. `node.logger().clone()`.
    pub fn new(logger: Logger) -> Self {
        RosLogLayer {
            logger,
            robot_prefix: false,
        }
    }

    /// Starts every line logged inside a control loop with its robot, `[r820_sim] …`: for a
    /// node that runs several robots, whose lines would otherwise look alike.
    pub fn with_robot_prefix(mut self) -> Self {
        self.robot_prefix = true;
        self
    }
}

/// The robot name recorded on a `robot` span.
struct RobotName(String);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for RosLogLayer {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        if !self.robot_prefix || attributes.metadata().name() != ROBOT_SPAN {
            return;
        }
        let mut fields = LogText::default();
        attributes.record(&mut fields);
        let name = fields.0.trim_start().strip_prefix("name=").unwrap_or("");
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(RobotName(name.to_string()));
        }
    }

    fn on_event(&self, event: &Event<'_>, context: Context<'_, S>) {
        let severity = match *event.metadata().level() {
            Level::ERROR => LogSeverity::Error,
            Level::WARN => LogSeverity::Warn,
            Level::INFO => LogSeverity::Info,
            Level::DEBUG | Level::TRACE => LogSeverity::Debug,
        };
        let mut text = LogText::default();
        if self.robot_prefix {
            // The innermost robot span names the robot.
            let robot = context.event_scope(event).and_then(|scope| {
                scope
                    .into_iter()
                    .find_map(|span| span.extensions().get::<RobotName>().map(|r| r.0.clone()))
            });
            if let Some(robot) = robot {
                let _ = write!(text.0, "[{robot}] ");
            }
        }
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
