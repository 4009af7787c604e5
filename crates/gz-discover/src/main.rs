//! `sas-gz-discover`: prints a ready `config.yaml` block for every robot (model with joints)
//! a running Gazebo offers over gz-transport. See the crate documentation for what it reads.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use gz_discover::{config_yaml, discover, Options};
use gz_transport::{MsgsPrefix, Node, NodeOptions};

/// Lists the models with joints that a running Gazebo (or gz-joint-sim) publishes joint
/// states for, and prints a sas_robot_driver_ros_gazebo_node config.yaml block per model.
#[derive(Parser)]
#[command(name = "sas-gz-discover", version)]
struct Args {
    /// Only this Gazebo type prefix: gz.msgs. (Harmonic) or ignition.msgs. (Fortress);
    /// default: both.
    #[arg(long)]
    msgs_prefix: Option<MsgsPrefix>,
    /// gz-transport partition; default: GZ_PARTITION, else IGN_PARTITION, else hostname:user.
    #[arg(long)]
    partition: Option<String>,
    /// Only the model with this name (the joint-state message's name); may be repeated.
    #[arg(long = "model", value_name = "NAME")]
    models: Vec<String>,
    /// Seconds to wait for Gazebo's topics and joint states.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sas-gz-discover: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let timeout = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .with_context(|| {
            format!(
                "--timeout must be a positive number of seconds, got {}",
                args.timeout
            )
        })?;
    let node = Node::with_options(NodeOptions {
        partition: args.partition,
        msgs_prefix: args.msgs_prefix.unwrap_or_default(),
        ..Default::default()
    })
    .context("cannot start gz-transport")?;
    let options = Options {
        timeout,
        models: args.models,
        msgs_prefix: args.msgs_prefix,
    };
    let robots = discover(&node, &options);
    if robots.is_empty() {
        let which = if options.models.is_empty() {
            "no model with joints".to_owned()
        } else {
            format!("no model named {}", options.models.join(" or "))
        };
        let types = match options.msgs_prefix {
            Some(p) => p.type_name("Model"),
            None => "gz.msgs.Model or ignition.msgs.Model".to_owned(),
        };
        anyhow::bail!(
            "{which} found within {} s in gz-transport partition {:?}: no joint states ({types}) \
             arrived. Is Gazebo running, with a JointStatePublisher, in this partition \
             (GZ_PARTITION / IGN_PARTITION, --partition)?",
            args.timeout,
            node.partition()
        );
    }
    print!("{}", config_yaml(&robots, node.partition()));
    Ok(())
}
