//! rclrs test peer for the rclpy round-trip tests (`tests/ros`) of the interface crates our
//! generator writes: it echoes and publishes messages, serves and calls services, and reports
//! parameters, using only the generated types through rclrs.
//!
//! Every check prints one line on stdout (`match …` / `MISMATCH …`) for the test to read.
//! ROS arguments (`--ros-args …`) go to rclrs, everything before them to this CLI.

mod layout;
mod pattern;
mod types;

use std::{
    fmt::Debug,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use clap::{Args, Parser, Subcommand};
use pattern::Pattern;
use rclrs::{
    Context, CreateBasicExecutor, Executor, InitOptions, IntoNodeOptions, Node, RclrsError,
    SpinOptions,
};
use rosidl_runtime_rs::{Message, Service};

#[derive(Parser)]
#[command(about = "rclrs peer for the rclpy interop tests of the generated interface crates")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Subscribe `to_rs` (check against the pattern, echo on `echo`), publish the pattern
    /// on `from_rs` and the type's default on `default_from_rs`, until the timeout.
    Topic(Peer),
    /// Serve `rs_service`: check each request against the pattern, answer the pattern.
    Serve(Peer),
    /// Call `py_service` once with the pattern request and check the response.
    Call(Peer),
    /// Declare the bridge node's kind of parameters, print their values, then serve the
    /// parameter services until the timeout.
    Params {
        #[arg(long, default_value_t = 60.0)]
        timeout_s: f64,
    },
    /// Serve the test_msgs/action/Fibonacci action `fibonacci`: accept each goal, publish
    /// the growing sequence as feedback, succeed with it.
    ActionServer {
        #[arg(long, default_value_t = 60.0)]
        timeout_s: f64,
    },
    /// Print size, alignment and member offsets of a set of rmw structs (for a C probe).
    Layout,
    /// Checks that need no network: rcl init, type support handles, IDL defaults.
    Selftest,
}

/// What a topic or service peer is told: the type (`pkg/msg/Name` or `pkg/srv/Name`), the
/// pattern's seed and how long to run.
#[derive(Args)]
struct Peer {
    #[arg(long = "type")]
    type_name: String,
    #[arg(long)]
    seed: u64,
    #[arg(long, default_value_t = 60.0)]
    timeout_s: f64,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let cli = Cli::parse_from(rclrs::extract_non_ros_args(args.clone())?);
    if let Mode::Layout = cli.mode {
        layout::print();
        return Ok(());
    }
    let context = Context::new(args, InitOptions::new())?;
    let mut executor = context.create_basic_executor();
    match cli.mode {
        Mode::Topic(peer) => {
            let node = executor.create_node("rs_topic_peer")?;
            types::with_message_type(
                &peer.type_name,
                TopicPeer {
                    executor: &mut executor,
                    node: &node,
                    seed: peer.seed,
                    timeout: secs(peer.timeout_s)?,
                },
            )
        }
        Mode::Serve(peer) => service_peer(&mut executor, Role::Serve, &peer),
        Mode::Call(peer) => service_peer(&mut executor, Role::Call, &peer),
        Mode::Params { timeout_s } => params(&mut executor, secs(timeout_s)?),
        Mode::ActionServer { timeout_s } => fibonacci_server(&mut executor, secs(timeout_s)?),
        Mode::Selftest => selftest(&context),
        Mode::Layout => unreachable!("handled before rcl init"),
    }
}

fn secs(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("bad timeout {s}"))
}

/// Prints the outcome of comparing a received value with the expected one.
fn report<T: PartialEq + Debug>(what: &str, got: &T, expected: &T) {
    if got == expected {
        println!("match {what}");
    } else {
        println!("MISMATCH {what}\n  expected: {expected:?}\n  got: {got:?}");
    }
}

/// Spins until the timeout; errors from callbacks end the run.
fn spin_for(executor: &mut Executor, timeout: Duration) -> anyhow::Result<()> {
    let errors = executor.spin(SpinOptions::default().timeout(timeout));
    first_error(errors)
}

fn first_error(errors: Vec<RclrsError>) -> anyhow::Result<()> {
    match errors.into_iter().next() {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// Something to run with one concrete message type.
pub trait MessageVisitor {
    fn visit<T: Message + Pattern>(self) -> anyhow::Result<()>;
}

/// Something to run with one concrete service type.
pub trait ServiceVisitor {
    fn visit<S>(self) -> anyhow::Result<()>
    where
        S: Service,
        S::Request: Pattern,
        S::Response: Pattern;
}

struct TopicPeer<'a> {
    executor: &'a mut Executor,
    node: &'a Node,
    seed: u64,
    timeout: Duration,
}

impl MessageVisitor for TopicPeer<'_> {
    fn visit<T: Message + Pattern>(self) -> anyhow::Result<()> {
        let seed = self.seed;
        let echo = self.node.create_publisher::<T>("echo")?;
        let _subscription = self.node.create_subscription("to_rs", move |msg: T| {
            report("to_rs", &msg, &T::pattern(seed));
            if let Err(e) = echo.publish(&msg) {
                println!("MISMATCH echo publish failed: {e}");
            }
        })?;
        let from_rs = self.node.create_publisher::<T>("from_rs")?;
        let default_from_rs = self.node.create_publisher::<T>("default_from_rs")?;
        let known = T::pattern(seed);
        let _timer = self
            .node
            .create_timer_repeating(Duration::from_millis(100), move || {
                let published = from_rs
                    .publish(&known)
                    .and_then(|()| default_from_rs.publish(T::default()));
                if let Err(e) = published {
                    println!("MISMATCH publish failed: {e}");
                }
            })?;
        println!("ready");
        spin_for(self.executor, self.timeout)
    }
}

enum Role {
    Serve,
    Call,
}

/// Serves or calls (`role`) the service type of `peer` from a node of its own.
fn service_peer(executor: &mut Executor, role: Role, peer: &Peer) -> anyhow::Result<()> {
    let node = executor.create_node(match role {
        Role::Serve => "rs_service_peer",
        Role::Call => "rs_client_peer",
    })?;
    types::with_service_type(
        &peer.type_name,
        ServicePeer {
            executor,
            node: &node,
            seed: peer.seed,
            timeout: secs(peer.timeout_s)?,
            role,
        },
    )
}

struct ServicePeer<'a> {
    executor: &'a mut Executor,
    node: &'a Node,
    seed: u64,
    timeout: Duration,
    role: Role,
}

impl ServiceVisitor for ServicePeer<'_> {
    fn visit<S>(self) -> anyhow::Result<()>
    where
        S: Service,
        S::Request: Pattern,
        S::Response: Pattern,
    {
        let seed = self.seed;
        match self.role {
            Role::Serve => {
                let _service = self.node.create_service::<S, _>(
                    "rs_service",
                    move |request: S::Request| {
                        report("request", &request, &S::Request::pattern(seed));
                        S::Response::pattern(seed)
                    },
                )?;
                println!("ready");
                spin_for(self.executor, self.timeout)
            }
            Role::Call => {
                let client = self.node.create_client::<S>("py_service")?;
                let deadline = Instant::now() + self.timeout;
                while !client.service_is_ready()? {
                    if Instant::now() > deadline {
                        bail!("py_service did not appear within {:?}", self.timeout);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                let response = Arc::new(Mutex::new(None));
                let slot = Arc::clone(&response);
                let promise =
                    client.call_then(S::Request::pattern(seed), move |r: S::Response| {
                        *slot.lock().expect("response slot") = Some(r);
                    })?;
                let remaining = deadline.saturating_duration_since(Instant::now());
                first_error(
                    self.executor.spin(
                        SpinOptions::default()
                            .until_promise_resolved(promise)
                            .timeout(remaining),
                    ),
                )?;
                let response = response.lock().expect("response slot").take();
                let Some(response) = response else {
                    bail!("no response from py_service within {:?}", self.timeout);
                };
                report("response", &response, &S::Response::pattern(seed));
                if response != S::Response::pattern(seed) {
                    bail!("the response differs from the pattern");
                }
                Ok(())
            }
        }
    }
}

/// The parameter kinds the bridge node reads from its params file.
fn params(executor: &mut Executor, timeout: Duration) -> anyhow::Result<()> {
    let node = executor.create_node("rs_params".start_parameter_services(true))?;
    let robot_name = node
        .declare_parameter::<Arc<str>>("robot_name")
        .default("unset".into())
        .mandatory()?;
    let period = node
        .declare_parameter::<f64>("thread_sampling_time_sec")
        .default(0.001)
        .mandatory()?;
    let joint_names = node
        .declare_parameter::<Arc<[Arc<str>]>>("joint_names")
        .default(Arc::from([]))
        .mandatory()?;
    let limits = node
        .declare_parameter::<Arc<[f64]>>("joint_limits_min")
        .default(Arc::from([]))
        .mandatory()?;
    let enabled = node
        .declare_parameter::<bool>("enabled")
        .default(false)
        .mandatory()?;
    let count = node
        .declare_parameter::<i64>("count")
        .default(0)
        .mandatory()?;
    println!("node={}", node.fully_qualified_name());
    println!("robot_name={}", robot_name.get());
    println!("thread_sampling_time_sec={:?}", period.get());
    println!("joint_names={:?}", joint_names.get());
    println!("joint_limits_min={:?}", limits.get());
    println!("enabled={}", enabled.get());
    println!("count={}", count.get());
    println!("ready");
    spin_for(executor, timeout)
}

/// Exercises every `Action` helper of the generated code on the server side (goal request
/// split, goal response, feedback message, result request and response).
fn fibonacci_server(executor: &mut Executor, timeout: Duration) -> anyhow::Result<()> {
    use ros_env::test_msgs::action::{Fibonacci, Fibonacci_Feedback, Fibonacci_Result};
    let node = executor.create_node("rs_action_peer")?;
    let _server =
        node.create_action_server::<Fibonacci, _>("fibonacci", |requested| async move {
            let order = usize::try_from(requested.goal().order).unwrap_or(0);
            println!("goal order={order}");
            let executing = requested.accept().execute();
            let mut sequence = vec![0, 1];
            while sequence.len() <= order {
                let next = sequence[sequence.len() - 1] + sequence[sequence.len() - 2];
                sequence.push(next);
                executing.publish_feedback(Fibonacci_Feedback {
                    sequence: sequence.clone(),
                });
            }
            executing.succeeded_with(Fibonacci_Result { sequence })
        })?;
    println!("ready");
    spin_for(executor, timeout)
}

fn selftest(context: &Context) -> anyhow::Result<()> {
    use ros_env::{sensor_msgs, test_msgs};
    use rosidl_runtime_rs::{Action, RmwMessage};
    if !context.ok() {
        bail!("rcl context not valid after init");
    }
    let handles = [
        sensor_msgs::msg::rmw::JointState::get_type_support(),
        <test_msgs::srv::BasicTypes as Service>::get_type_support(),
        <test_msgs::action::Fibonacci as Action>::get_type_support(),
    ];
    if handles.iter().any(|h| h.is_null()) {
        bail!("a type support handle is null: {handles:?}");
    }
    let defaults = test_msgs::msg::Defaults::default();
    if !(defaults.bool_value
        && defaults.int64_value == -40_000_000
        && defaults.float32_value == 1.125)
    {
        bail!("IDL defaults not applied: {defaults:?}");
    }
    let wide = test_msgs::msg::WStrings::default();
    if wide.wstring_value_default3 != "ハローワールド" {
        bail!("wstring default wrong: {wide:?}");
    }
    println!("selftest ok");
    Ok(())
}
