//! `gz-topic`: list, echo and publish gz-transport topics without Gazebo installed.
//! Flags follow `gz topic`: `-l`, `-i -t TOPIC` (publishers and subscribers), `-e -t TOPIC [-n N] [-d SECS]`,
//! `-t TOPIC -m TYPE -p DATA` (protobuf text format).

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use gz_transport::{text, Node};

mod cli;

#[derive(Parser, Debug)]
#[command(
    name = "gz-topic",
    version,
    about = "List, echo and publish gz-transport topics (like `gz topic`)"
)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["list", "info", "echo", "publish"])))]
struct Args {
    /// List the topics that have publishers or subscribers (subscribers of peers that answer
    /// SUBSCRIBERS_REQ: gz-transport 13+ (Harmonic) and this crate, not Fortress).
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Show the publishers and subscribers of a topic (needs -t).
    #[arg(short = 'i', long = "info")]
    info: bool,
    /// Print the messages of a topic (needs -t).
    #[arg(short = 'e', long = "echo")]
    echo: bool,
    /// Publish DATA, a message in protobuf text format (needs -t and -m).
    #[arg(
        short = 'p',
        long = "pub",
        value_name = "DATA",
        allow_hyphen_values = true
    )]
    publish: Option<String>,
    /// Topic name.
    #[arg(short = 't', long = "topic")]
    topic: Option<String>,
    /// Message type: a full name (`gz.msgs.Double`, `ignition.msgs.Double`) or a short one
    /// (`Double`) completed with --msgs-prefix.
    #[arg(short = 'm', long = "msgtype")]
    msg_type: Option<String>,
    /// Echo: exit after N messages.
    #[arg(short = 'n', long = "num")]
    num: Option<u64>,
    /// Echo: exit after SECS seconds (non-zero status if -n was not reached).
    #[arg(short = 'd', long = "duration")]
    duration: Option<f64>,
    #[command(flatten)]
    node: cli::NodeFlags,
    /// Publish: repeat at this rate (Hz) instead of once.
    #[arg(long = "rate")]
    rate: Option<f64>,
    /// Publish with --rate: number of messages, 0 = until killed.
    #[arg(long = "count", default_value_t = 0)]
    count: u64,
    /// Publish: wait this long (s) for a subscriber before the first message;
    /// List/info: time (s) to listen for advertisements.
    #[arg(long = "wait", default_value_t = 1.5)]
    wait: f64,
}

fn main() {
    cli::main("gz-topic", run);
}

fn run(args: Args) -> Result<()> {
    let node = args.node.start_node()?;
    let need_topic = || args.topic.clone().context("this action needs -t TOPIC");
    if args.list {
        listen(&node, cli::secs(args.wait, "--wait")?, || false);
        let mut topics = node.topic_list();
        topics.extend(node.subscribed_topic_list());
        topics.sort();
        topics.dedup();
        for topic in topics {
            println!("{topic}");
        }
        Ok(())
    } else if args.info {
        let topic = need_topic()?;
        // Subscribers answer within milliseconds of the request; publishers show up with their
        // next advertisement (every second): wait for one, up to --wait.
        let has_publishers = || node.topic_info(&topic).is_ok_and(|p| !p.is_empty());
        listen(&node, cli::secs(args.wait, "--wait")?, has_publishers);
        let publishers = node.topic_info(&topic)?;
        let subscribers = node.topic_subscribers(&topic)?;
        if publishers.is_empty() && subscribers.is_empty() {
            bail!("no publishers or subscribers on {topic}");
        }
        let publishers: Vec<_> = publishers
            .iter()
            .map(|p| (&p.address, &p.type_name))
            .collect();
        let subscribers: Vec<_> = subscribers
            .iter()
            .map(|s| (&s.address, &s.type_name))
            .collect();
        print_endpoints("Publishers", &topic, &publishers);
        print_endpoints("Subscribers", &topic, &subscribers);
        Ok(())
    } else if args.echo {
        echo(
            &node,
            &need_topic()?,
            args.num,
            args.duration.map(|d| cli::secs(d, "-d")).transpose()?,
        )
    } else {
        let data = args.publish.as_deref().expect("clap requires one action");
        let topic = need_topic()?;
        let msg_type = args.msg_type.as_deref().context("-p needs -m TYPE")?;
        publish(&node, &topic, msg_type, data, &args)
    }
}

/// One half of `gz topic -i`'s layout (gz-transport 13): the `kind` of endpoints
/// (`Publishers`, `Subscribers`) of `topic` with their addresses and message types.
fn print_endpoints(kind: &str, topic: &str, endpoints: &[(&String, &String)]) {
    if endpoints.is_empty() {
        println!("No {} on topic [{topic}]", kind.to_lowercase());
        return;
    }
    println!("{kind} [Address, Message Type]:");
    for (address, type_name) in endpoints {
        println!("  {address}, {type_name}");
    }
}

/// Listen to discovery for up to `window`, asking for subscribers (SUBSCRIBERS_REQ) at the
/// start and every second after; once `found` holds, allow a short grace for the remaining
/// answers (they come within milliseconds on one host) and return early.
fn listen(node: &Node, window: Duration, found: impl Fn() -> bool) {
    let deadline = Instant::now() + window;
    if node.watch_subscribers(deadline, found) {
        cli::sleep_grace(deadline);
    }
}

fn short_name(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap_or(type_name)
}

fn echo(node: &Node, topic: &str, num: Option<u64>, duration: Option<Duration>) -> Result<()> {
    let (tx, rx) = mpsc::channel::<String>();
    let _sub = node.subscribe_raw(topic, move |bytes, info| {
        let rendered = match text::decode_to_text(short_name(&info.type_name), bytes) {
            Some(Ok(t)) => t,
            Some(Err(e)) => format!(
                "# {} bytes of {} that do not decode: {e}\n",
                bytes.len(),
                info.type_name
            ),
            None => format!(
                "# {} bytes of {}: {}\n",
                bytes.len(),
                info.type_name,
                hex(bytes)
            ),
        };
        let _ = tx.send(rendered);
    })?;
    eprintln!("gz-topic: subscribed to {topic}");
    let deadline = duration.map(|d| Instant::now() + d);
    let mut received = 0u64;
    let stdout = std::io::stdout();
    while num.is_none_or(|n| received < n) {
        let msg = match deadline {
            Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                Ok(m) => m,
                Err(_) => break,
            },
            None => rx.recv().context("transport stopped")?,
        };
        received += 1;
        let mut out = stdout.lock();
        // ign topic -e prints each message followed by an empty line.
        writeln!(out, "{msg}")?;
        out.flush()?;
    }
    match num {
        Some(n) if received < n => {
            bail!("received {received} of {n} messages on {topic} before the -d limit")
        }
        _ => Ok(()),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn publish(node: &Node, topic: &str, msg_type: &str, data: &str, args: &Args) -> Result<()> {
    let (short, full) = args.node.msgs_prefix.resolve(msg_type);
    let payload = text::encode_text(&short, data)
        .with_context(|| format!("invalid {full} message {data:?}"))?;
    let publisher = node.advertise_raw(topic, &full)?;
    // Returns once a subscriber's connection is complete, so the first message reaches it.
    if !publisher.wait_for_subscribers(cli::secs(args.wait, "--wait")?) {
        eprintln!("gz-topic: no subscriber on {topic} yet, publishing anyway");
    }
    match args.rate {
        None => publisher.publish_raw(&payload)?,
        Some(rate) => {
            if !(rate.is_finite() && rate > 0.0) {
                bail!("--rate must be a positive number of Hz, got {rate}");
            }
            let period = Duration::from_secs_f64(1.0 / rate);
            let mut next = Instant::now();
            let mut sent = 0u64;
            while args.count == 0 || sent < args.count {
                publisher.publish_raw(&payload)?;
                sent += 1;
                next += period;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        }
    }
    Ok(())
}
