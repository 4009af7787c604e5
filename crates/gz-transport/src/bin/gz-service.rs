//! `gz-service`: list, inspect and call gz-transport services without Gazebo installed.
//! Flags follow `gz service`: `-l`, `-i -s SERVICE`, and
//! `-s SERVICE --reqtype TYPE --reptype TYPE [--timeout MS] --req DATA` (protobuf text format),
//! e.g. `gz-service -s /world/w/control --reqtype gz.msgs.WorldControl --reptype gz.msgs.Boolean --req 'pause: true'`.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use gz_transport::{text, ServiceError};

mod cli;

#[derive(Parser, Debug)]
#[command(
    name = "gz-service",
    version,
    about = "List, inspect and call gz-transport services (like `gz service`)"
)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["list", "info", "req"])))]
struct Args {
    /// List the services that have a responder.
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Show the responders of a service and their types (needs -s).
    #[arg(short = 'i', long = "info")]
    info: bool,
    /// Call the service with DATA, a request in protobuf text format (needs -s, --reqtype,
    /// --reptype); prints the response.
    #[arg(
        short = 'r',
        long = "req",
        value_name = "DATA",
        allow_hyphen_values = true
    )]
    req: Option<String>,
    /// Service name.
    #[arg(short = 's', long = "service")]
    service: Option<String>,
    /// Request type: a full name (`gz.msgs.WorldControl`) or a short one completed with
    /// --msgs-prefix.
    #[arg(long = "reqtype")]
    reqtype: Option<String>,
    /// Response type, as --reqtype.
    #[arg(long = "reptype")]
    reptype: Option<String>,
    /// Call: how long to wait for a responder and its answer, in milliseconds.
    #[arg(long = "timeout", default_value_t = 1000)]
    timeout: u64,
    #[command(flatten)]
    node: cli::NodeFlags,
    /// List/info: how long (s) to listen for advertisements (responders repeat theirs every
    /// second).
    #[arg(long = "wait", default_value_t = 1.5)]
    wait: f64,
}

fn main() {
    cli::main("gz-service", run);
}

fn run(args: Args) -> Result<()> {
    let node = args.node.start_node()?;
    let wait = cli::secs(args.wait, "--wait")?;
    let need_service = || args.service.clone().context("this action needs -s SERVICE");
    if args.list {
        node.service_list()?; // starts listening
        std::thread::sleep(wait);
        for service in node.service_list()? {
            println!("{service}");
        }
        Ok(())
    } else if args.info {
        let service = need_service()?;
        let deadline = Instant::now() + wait;
        if !node.wait_for_service(&service, wait)? {
            bail!("no responder of service {service} within {wait:?}");
        }
        // Other responders of the same service answered the same SUBSCRIBE: give them a
        // moment to arrive, within --wait.
        cli::sleep_grace(deadline);
        // The layout of `gz service -i`.
        println!("Service providers [Address, Request Message Type, Response Message Type]:");
        for s in node.service_info(&service)? {
            println!("  {}, {}, {}", s.address, s.request_type, s.response_type);
        }
        Ok(())
    } else {
        let data = args.req.as_deref().expect("clap requires one action");
        let service = need_service()?;
        let reqtype = args
            .reqtype
            .as_deref()
            .context("--req needs --reqtype TYPE")?;
        let reptype = args
            .reptype
            .as_deref()
            .context("--req needs --reptype TYPE")?;
        let (req_short, req_full) = args.node.msgs_prefix.resolve(reqtype);
        let (rep_short, rep_full) = args.node.msgs_prefix.resolve(reptype);
        let payload = text::encode_text(&req_short, data)
            .with_context(|| format!("invalid {req_full} request {data:?}"))?;
        let timeout = Duration::from_millis(args.timeout);
        match node.request_raw(&service, &req_full, &payload, &rep_full, timeout) {
            Ok(bytes) => {
                match text::decode_to_text(&rep_short, &bytes) {
                    Some(Ok(t)) => print!("{t}"),
                    Some(Err(e)) => bail!("the response is not a valid {rep_full}: {e}"),
                    None => println!("# {} bytes of {rep_full}", bytes.len()),
                }
                println!();
                Ok(())
            }
            Err(ServiceError::Timeout { .. }) => {
                bail!("service call to {service} timed out after {timeout:?}")
            }
            Err(e) => Err(e.into()),
        }
    }
}
