//! Every kind of discovery datagram we send, decoded field by field beside the reference:
//! what the real `ign topic` (Debian's Ignition transport 11.0.0, C++) sends on the same
//! loopback port where it sends the message, and otherwise the encoding its sources give
//! (field numbers of gz-msgs 10's `discovery.proto`, values as `Discovery::SendMsg` and the
//! callers fill them):
//! - SUBSCRIBERS_REQ/REP: gz-transport 13 (`Discovery::TopicList`, `NodeShared::OnSubscribers`);
//!   Fortress has neither.
//! - END_CONNECTION with an empty `ctrl` ("every publisher process"), which `Node::Unsubscribe`
//!   sends after the one to each publisher process since Ignition transport 11.4 and in
//!   gz-transport 13; Debian's 11.0.0 sends only the latter.
//! - BYE: Fortress's `Discovery` sends it from its destructor, which never runs (the
//!   process-wide `NodeShared` is never deleted), so the CLI never sends it.
//!
//! HEARTBEAT and BYE follow Fortress: no contents. gz-transport 13's `SendMsg` fills in a
//! publisher record naming the process (`pub { process_uuid, scope: ALL }`) for every type;
//! no receiver of either version reads it for these two (they use the message's own
//! `process_uuid`), so both encodings work with both.
//!
//! The datagrams are decoded by a protobuf walker of their own (field numbers from the
//! `.proto`, not our prost structs), and every identity is replaced by its role as seen from
//! the sender (`<sender process>`, `<peer's advertised address>`, …), so a datagram of ours
//! and one of the C++ CLI compare as text. Run with `--nocapture` to see every pair.

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use socket2::{Domain, Protocol, Socket, Type};

use crate::config::DEFAULT_MULTICAST_GROUP;
use crate::msgs::Double;
use crate::test_support::{eventually, node_on_own_port, PATIENCE};
use crate::Node;

use ::test_support::IGN_TOPIC;
/// The topic every step uses (one step after the other, so they never meet).
const TOPIC: &str = "/x";
const DOUBLE: &str = "ignition.msgs.Double";

/// A discovery port for this test only: apart from the default 10317, the fuzz node's
/// (30000 + …) and the hostile tests' (40000 + …). Another process that happens to share it
/// is filtered out by process (see [`Capture::of_processes`]).
fn own_port() -> u16 {
    (std::process::id() % 10000) as u16 + 20000
}

// ---- a protobuf walker with the field numbers of gz-msgs 10's discovery.proto ---------------

/// One message type of `discovery.proto`: its fields by number, with their names and, for an
/// embedded message, its type.
struct Schema {
    fields: &'static [(u32, &'static str, Option<&'static Schema>)],
}

const MESSAGE_PUBLISHER: Schema = Schema {
    fields: &[
        (1, "ctrl", None),
        (2, "msg_type", None),
        (3, "throttled", None),
        (4, "msgs_per_sec", None),
    ],
};
const SERVICE_PUBLISHER: Schema = Schema {
    fields: &[
        (1, "socket_id", None),
        (2, "request_type", None),
        (3, "response_type", None),
    ],
};
const PUBLISHER: Schema = Schema {
    fields: &[
        (1, "topic", None),
        (2, "address", None),
        (3, "process_uuid", None),
        (4, "node_uuid", None),
        (5, "scope", None),
        (6, "msg_pub", Some(&MESSAGE_PUBLISHER)),
        (7, "srv_pub", Some(&SERVICE_PUBLISHER)),
    ],
};
const SUBSCRIBER: Schema = Schema {
    fields: &[(1, "topic", None)],
};
const FLAGS: Schema = Schema {
    fields: &[(1, "relay", None), (2, "no_relay", None)],
};
/// `gz.msgs.Header` is not expected in discovery: its bytes would show as such.
const DISCOVERY: Schema = Schema {
    fields: &[
        (1, "header", None),
        (2, "version", None),
        (3, "process_uuid", None),
        (4, "type", None),
        (5, "flags", Some(&FLAGS)),
        (6, "sub", Some(&SUBSCRIBER)),
        (7, "pub", Some(&PUBLISHER)),
    ],
};
/// `Discovery.Type`, by value.
const TYPES: [&str; 10] = [
    "UNINITIALIZED",
    "ADVERTISE",
    "SUBSCRIBE",
    "UNADVERTISE",
    "HEARTBEAT",
    "BYE",
    "NEW_CONNECTION",
    "END_CONNECTION",
    "SUBSCRIBERS_REQ",
    "SUBSCRIBERS_REP",
];

#[derive(Clone, Debug, PartialEq)]
enum Value {
    Varint(u64),
    Text(String),
    Bytes(Vec<u8>),
    Message(Vec<(u32, Value)>),
}

fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return value;
        }
    }
    panic!("varint longer than 10 bytes");
}

/// The fields of `bytes` in wire order; length-delimited fields are embedded messages where
/// the schema says so, else text (or bytes if not UTF-8).
fn walk(bytes: &[u8], schema: Option<&Schema>) -> Vec<(u32, Value)> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let key = varint(bytes, &mut at);
        let (number, wire_type) = ((key >> 3) as u32, key & 7);
        let value = match wire_type {
            0 => Value::Varint(varint(bytes, &mut at)),
            2 => {
                let len = varint(bytes, &mut at) as usize;
                let body = &bytes[at..at + len];
                at += len;
                let embedded = schema
                    .and_then(|s| s.fields.iter().find(|f| f.0 == number))
                    .and_then(|f| f.2);
                match embedded {
                    Some(inner) => Value::Message(walk(body, Some(inner))),
                    None => match std::str::from_utf8(body) {
                        Ok(text) => Value::Text(text.to_owned()),
                        Err(_) => Value::Bytes(body.to_vec()),
                    },
                }
            }
            other => panic!("wire type {other} does not occur in discovery.proto"),
        };
        fields.push((number, value));
    }
    fields
}

/// A captured datagram, decoded: its length prefix checked, its fields walked.
struct Datagram {
    bytes: Vec<u8>,
    fields: Vec<(u32, Value)>,
}

impl Datagram {
    fn decode(bytes: Vec<u8>) -> Datagram {
        assert!(
            bytes.len() >= 2,
            "a datagram shorter than its length prefix"
        );
        let declared = u16::from_le_bytes([bytes[0], bytes[1]]) as usize;
        assert_eq!(declared, bytes.len() - 2, "length prefix");
        let fields = walk(&bytes[2..], Some(&DISCOVERY));
        Datagram { bytes, fields }
    }

    fn field(&self, path: &[u32]) -> Option<&Value> {
        let mut fields = &self.fields;
        let mut found = None;
        for (depth, number) in path.iter().enumerate() {
            found = fields.iter().find(|f| f.0 == *number).map(|f| &f.1);
            match found {
                Some(Value::Message(inner)) if depth + 1 < path.len() => fields = inner,
                _ if depth + 1 < path.len() => return None,
                _ => {}
            }
        }
        found
    }

    fn text(&self, path: &[u32]) -> &str {
        match self.field(path) {
            Some(Value::Text(text)) => text,
            _ => "",
        }
    }

    fn kind(&self) -> &'static str {
        match self.field(&[4]) {
            Some(Value::Varint(v)) => TYPES.get(*v as usize).copied().unwrap_or("unknown"),
            _ => "UNINITIALIZED",
        }
    }

    fn sender(&self) -> &str {
        self.text(&[3])
    }
}

// ---- who is who ----------------------------------------------------------------------------

/// What the test knows of every process in the capture, to name values by their role.
#[derive(Default)]
struct Identities {
    partition_prefix: String,
    /// Process UUID → who it is ("ours: publisher", "ign topic -e", …).
    processes: BTreeMap<String, String>,
    /// Advertised address → the process that advertised it.
    addresses: HashMap<String, String>,
    /// Node UUID → its process (ours, and those a C++ peer advertised).
    nodes: HashMap<String, String>,
}

impl Identities {
    fn learn_node(&mut self, node: &Node, who: &str) {
        let core = node.core();
        self.processes
            .insert(core.process_uuid.clone(), format!("ours: {who}"));
        self.nodes
            .insert(core.node_uuid.clone(), core.process_uuid.clone());
    }

    /// The C++ processes (those that spoke of our partition) and what they advertised.
    fn learn_capture(&mut self, datagrams: &[Datagram]) {
        for d in datagrams {
            let topic = [d.text(&[6, 1]), d.text(&[7, 1])].concat();
            if topic.starts_with(&self.partition_prefix) && !self.processes.contains_key(d.sender())
            {
                let who = match d.kind() {
                    "SUBSCRIBE" => "ign topic -e",
                    _ => "ign topic -p",
                };
                self.processes
                    .insert(d.sender().to_owned(), format!("C++: {who}"));
            }
            if d.kind() == "ADVERTISE" && d.text(&[7, 3]) == d.sender() {
                self.addresses
                    .insert(d.text(&[7, 2]).to_owned(), d.sender().to_owned());
                self.nodes
                    .insert(d.text(&[7, 4]).to_owned(), d.sender().to_owned());
            }
        }
    }

    fn is_ours(&self, process: &str) -> bool {
        self.processes
            .get(process)
            .is_some_and(|who| who.starts_with("ours"))
    }

    /// `value` of the field `name` as seen from `sender`.
    fn role(&self, sender: &str, name: &str, value: &str) -> String {
        let process = |uuid: &str| {
            if uuid == sender {
                Some("<sender process>".to_owned())
            } else if self.processes.contains_key(uuid) {
                Some("<peer process>".to_owned())
            } else {
                None
            }
        };
        let labelled = match name {
            "process_uuid" | "ctrl" => process(value),
            "node_uuid" => match self.nodes.get(value) {
                Some(owner) if owner != sender => Some("<peer node>".to_owned()),
                _ if uuid::Uuid::parse_str(value).is_ok() => Some("<sender node>".to_owned()),
                _ => None,
            },
            "address" => match self.addresses.get(value) {
                Some(owner) if owner == sender => Some("<sender's advertised address>".to_owned()),
                Some(_) => Some("<peer's advertised address>".to_owned()),
                None if value.starts_with("tcp://") => {
                    Some("<an address no one advertised>".to_owned())
                }
                None => None,
            },
            "topic" => value
                .strip_prefix(&self.partition_prefix)
                .map(|topic| format!("\"@/<partition>@{topic}\"")),
            _ => None,
        };
        labelled.unwrap_or_else(|| format!("{value:?}"))
    }

    /// The datagram as text: one field a line, `number name: value`, roles for identities.
    fn render(&self, d: &Datagram) -> String {
        let mut out = String::new();
        self.render_fields(d.sender(), &d.fields, &DISCOVERY, 0, &mut out);
        out
    }

    fn render_fields(
        &self,
        sender: &str,
        fields: &[(u32, Value)],
        schema: &Schema,
        depth: usize,
        out: &mut String,
    ) {
        for (number, value) in fields {
            let field = schema.fields.iter().find(|f| f.0 == *number);
            let name = field.map_or("?", |f| f.1);
            let indent = "  ".repeat(depth);
            match value {
                Value::Message(inner) => {
                    out.push_str(&format!("{indent}{number} {name} {{\n"));
                    let inner_schema = field.and_then(|f| f.2).expect("walked as a message");
                    self.render_fields(sender, inner, inner_schema, depth + 1, out);
                    out.push_str(&format!("{indent}}}\n"));
                }
                Value::Varint(v) if depth == 0 && *number == 4 => {
                    let kind = TYPES.get(*v as usize).copied().unwrap_or("unknown");
                    out.push_str(&format!("{indent}{number} {name}: {v} {kind}\n"));
                }
                Value::Varint(v) => out.push_str(&format!("{indent}{number} {name}: {v}\n")),
                Value::Text(text) => {
                    let shown = self.role(sender, name, text);
                    out.push_str(&format!("{indent}{number} {name}: {shown}\n"));
                }
                Value::Bytes(bytes) => {
                    out.push_str(&format!("{indent}{number} {name}: bytes {bytes:02x?}\n"))
                }
            }
        }
    }
}

// ---- capture ---------------------------------------------------------------------------------

/// Every datagram on the test's discovery port, as gz-transport peers receive them (the
/// group joined on loopback, the port shared through SO_REUSEPORT).
struct Capture {
    datagrams: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    fn start(port: u16) -> Capture {
        let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).unwrap();
        socket.set_reuse_address(true).unwrap();
        socket.set_reuse_port(true).unwrap();
        socket
            .bind(&SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port).into())
            .unwrap();
        socket
            .join_multicast_v4(&DEFAULT_MULTICAST_GROUP, &Ipv4Addr::LOCALHOST)
            .unwrap();
        let socket: UdpSocket = socket.into();
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let datagrams = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (sink, stopped) = (datagrams.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            while !stopped.load(Ordering::Relaxed) {
                if let Ok((n, _)) = socket.recv_from(&mut buffer) {
                    sink.lock().push(buffer[..n].to_vec());
                }
            }
        });
        Capture {
            datagrams,
            stop,
            thread: Some(thread),
        }
    }

    /// Everything captured so far, decoded.
    fn decoded(&self) -> Vec<Datagram> {
        self.datagrams
            .lock()
            .iter()
            .cloned()
            .map(Datagram::decode)
            .collect()
    }

    /// Waits until a datagram of `kind` from a process satisfying `from` was captured.
    fn wait_for(&self, kind: &str, from: impl Fn(&str) -> bool) -> bool {
        eventually(|| {
            self.decoded()
                .iter()
                .any(|d| d.kind() == kind && from(d.sender()))
        })
    }

    /// The captured datagrams of the processes `identities` knows (another test run on the
    /// same port is left out).
    fn of_processes(&self, identities: &Identities) -> Vec<Datagram> {
        self.decoded()
            .into_iter()
            .filter(|d| identities.processes.contains_key(d.sender()))
            .collect()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `ign topic` in `partition` on the test's port, on loopback.
fn ign(args: &[&str], partition: &str, port: u16) -> Child {
    Command::new(IGN_TOPIC)
        .args(args)
        .env("IGN_PARTITION", partition)
        .env("IGN_IP", "127.0.0.1")
        .env("IGN_DISCOVERY_MSG_PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {IGN_TOPIC}: {e}"))
}

fn exited(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(Some(_)))
}

// ---- the references for what Fortress does not have -------------------------------------

/// gz-transport 13's SUBSCRIBERS_REQ (`Discovery::TopicList`): a `Publisher("", "", pUuid,
/// "", AdvertiseOptions())` filled in by `Publisher::FillDiscovery` (empty strings are not
/// on the wire; scope ALL is).
const GZ13_SUBSCRIBERS_REQ: &str = "\
2 version: 10
3 process_uuid: <sender process>
4 type: 8 SUBSCRIBERS_REQ
7 pub {
  3 process_uuid: <sender process>
  5 scope: 2
}
";

/// The `Publisher` of our raw subscription to /x as gz-transport 13 fills it:
/// `MessagePublisher(topic, myAddress, ctrl, pUuid, nUuid, type, AdvertiseMessageOptions())`
/// with `ctrl` empty (so absent) and unthrottled. A raw subscription's type is
/// `google.protobuf.Message`.
macro_rules! gz13_raw_subscription_of_x {
    () => {
        "\
7 pub {
  1 topic: \"@/<partition>@/x\"
  2 address: <an address no one advertised>
  3 process_uuid: <sender process>
  4 node_uuid: <sender node>
  5 scope: 2
  6 msg_pub {
    2 msg_type: \"google.protobuf.Message\"
    4 msgs_per_sec: 18446744073709551615
  }
}
"
    };
}

/// gz-transport 13's SUBSCRIBERS_REP (`NodeShared::OnSubscribers` → `HandlerWrapper::Convert`):
/// the subscription's `MessagePublisher`, its type `handler->TypeName()`.
const GZ13_SUBSCRIBERS_REP: &str = concat!(
    "\
2 version: 10
3 process_uuid: <sender process>
4 type: 9 SUBSCRIBERS_REP
",
    gz13_raw_subscription_of_x!()
);

/// Fortress's BYE (`Discovery::~Discovery` → `SendMsg(BYE, Publisher("", "", pUuid, "", …))`,
/// whose BYE case adds nothing to the message).
const FORTRESS_BYE: &str = "\
2 version: 10
3 process_uuid: <sender process>
4 type: 5 BYE
";

/// The END_CONNECTION `Node::Unsubscribe` sends last (Ignition transport 11.4+, gz-transport
/// 13): `MessagePublisher(topic, myAddress, "", pUuid, nUuid, kGenericMessageType,
/// AdvertiseMessageOptions())`, the one before it to each publisher process with that
/// process in `ctrl`.
const GZ13_END_CONNECTION_TO_EVERY_PUBLISHER: &str = concat!(
    "\
2 version: 10
3 process_uuid: <sender process>
4 type: 7 END_CONNECTION
",
    gz13_raw_subscription_of_x!()
);

// ---- the test --------------------------------------------------------------------------------

/// The kinds compared, with a way to tell the two END_CONNECTIONs gz-transport sends apart.
fn shape(d: &Datagram) -> String {
    match d.kind() {
        "END_CONNECTION" if d.text(&[7, 6, 1]).is_empty() => {
            "END_CONNECTION to every publisher process (ctrl empty)".to_owned()
        }
        "END_CONNECTION" => "END_CONNECTION to one publisher process".to_owned(),
        kind => kind.to_owned(),
    }
}

#[test]
fn every_discovery_datagram_we_send_is_encoded_as_the_references_encode_it() {
    let port = own_port();
    let partition = format!("enc-{}", std::process::id());
    let capture = Capture::start(port);
    let mut ids = Identities {
        partition_prefix: format!("@/{partition}@"),
        ..Identities::default()
    };
    // 1. Our publisher, the C++ subscriber: `ign topic -e -n 1` subscribes (SUBSCRIBE,
    //    NEW_CONNECTION), gets one message and exits (END_CONNECTION ×2, BYE).
    let publisher_node = node_on_own_port(&partition, port);
    ids.learn_node(&publisher_node, "publisher");
    let mut echo = ign(&["-e", "-t", TOPIC, "-n", "1"], &partition, port);
    let publisher = publisher_node.advertise_raw(TOPIC, DOUBLE).unwrap();
    assert!(
        publisher.wait_for_subscribers(PATIENCE),
        "ign topic -e connects"
    );
    let payload = prost::Message::encode_to_vec(&Double {
        header: None,
        data: 2.5,
    });
    assert!(
        eventually(|| {
            publisher.publish_raw(&payload).unwrap();
            exited(&mut echo)
        }),
        "ign topic -e got a message and exited"
    );
    let publisher_process = publisher_node.process_uuid().to_owned();
    drop(publisher); // UNADVERTISE
    drop(publisher_node); // BYE
    assert!(
        capture.wait_for("BYE", |p| p == publisher_process),
        "our publisher's BYE"
    );

    // 2. The C++ publisher, our subscriber: `ign topic -p` advertises, publishes once and
    //    exits; we subscribe (SUBSCRIBE, NEW_CONNECTION). Its one message may be lost to the
    //    race between its publish and our connection: try again.
    let subscriber_node = node_on_own_port(&partition, port);
    ids.learn_node(&subscriber_node, "subscriber");
    let received = Arc::new(AtomicBool::new(false));
    let got = received.clone();
    let subscription = subscriber_node
        .subscribe_raw(TOPIC, move |_, _| got.store(true, Ordering::Relaxed))
        .unwrap();
    for _ in 0..15 {
        let mut one_shot = ign(
            &["-t", TOPIC, "-m", DOUBLE, "-p", "data: 1.5"],
            &partition,
            port,
        );
        assert!(eventually(|| exited(&mut one_shot)), "ign topic -p exits");
        if eventually(|| received.load(Ordering::Relaxed)) {
            break;
        }
    }
    assert!(received.load(Ordering::Relaxed), "ign topic -p reached us");

    // 3. Ours alone (the C++ CLI cannot show these): a second node of ours publishes on the
    //    topic and asks for subscribers (SUBSCRIBERS_REQ), which the subscriber answers
    //    (SUBSCRIBERS_REP); then the subscriber unsubscribes (END_CONNECTION to the
    //    publisher's process, then to every one).
    let helper = node_on_own_port(&partition, port);
    ids.learn_node(&helper, "helper");
    let helper_publisher = helper.advertise_raw(TOPIC, DOUBLE).unwrap();
    assert!(helper_publisher.wait_for_subscribers(PATIENCE));
    helper.request_subscribers();
    assert!(helper.wait_for_remote_subscribers(TOPIC, PATIENCE));
    drop(subscription);
    assert!(eventually(|| helper_publisher.subscriber_count() == 0));
    let subscriber_process = subscriber_node.process_uuid().to_owned();
    drop(subscriber_node);
    assert!(capture.wait_for("BYE", |p| p == subscriber_process));
    // Addresses are only known once advertised: learn from everything captured.
    ids.learn_capture(&capture.decoded());
    let cpp_processes: Vec<String> = ids
        .processes
        .iter()
        .filter(|(_, who)| who.starts_with("C++"))
        .map(|(process, _)| process.clone())
        .collect();
    assert!(
        capture.wait_for("HEARTBEAT", |p| cpp_processes.iter().any(|c| c == p)),
        "a C++ heartbeat"
    );
    let datagrams = capture.of_processes(&ids);
    drop(helper_publisher);
    drop(helper);

    // The first datagram of each shape from each side.
    let mut ours: BTreeMap<String, &Datagram> = BTreeMap::new();
    let mut cpp: BTreeMap<String, &Datagram> = BTreeMap::new();
    for d in &datagrams {
        let side = if ids.is_ours(d.sender()) {
            &mut ours
        } else {
            &mut cpp
        };
        side.entry(shape(d)).or_insert(d);
    }
    let mut report = String::new();
    let mut mismatches = Vec::new();
    for (shape, our) in &ours {
        let our_text = ids.render(our);
        let (reference, source) = match (cpp.get(shape), shape.as_str()) {
            (Some(theirs), _) => (ids.render(theirs), "ign topic (Ignition transport 11)"),
            (None, "SUBSCRIBERS_REQ") => (GZ13_SUBSCRIBERS_REQ.to_owned(), "gz-transport 13"),
            (None, "SUBSCRIBERS_REP") => (GZ13_SUBSCRIBERS_REP.to_owned(), "gz-transport 13"),
            (None, "BYE") => (FORTRESS_BYE.to_owned(), "Ignition transport 11's source"),
            (None, "END_CONNECTION to every publisher process (ctrl empty)") => (
                GZ13_END_CONNECTION_TO_EVERY_PUBLISHER.to_owned(),
                "gz-transport 13",
            ),
            (None, _) => (
                "(not captured)".to_owned(),
                "ign topic (Ignition transport 11)",
            ),
        };
        report.push_str(&format!(
            "=== {shape}\n--- ours ({} bytes: {:02x?})\n{our_text}--- reference: {source}{}\n{reference}\n",
            our.bytes.len(),
            our.bytes,
            cpp.get(shape)
                .map(|d| format!(" ({} bytes: {:02x?})", d.bytes.len(), d.bytes))
                .unwrap_or_default(),
        ));
        if our_text != reference {
            mismatches.push(shape.clone());
        }
    }
    eprintln!("{report}");
    assert!(
        mismatches.is_empty(),
        "ours differ from the reference: {mismatches:?}\n{report}"
    );
    let expected = [
        "ADVERTISE",
        "BYE",
        "END_CONNECTION to every publisher process (ctrl empty)",
        "END_CONNECTION to one publisher process",
        "HEARTBEAT",
        "NEW_CONNECTION",
        "SUBSCRIBE",
        "SUBSCRIBERS_REP",
        "SUBSCRIBERS_REQ",
        "UNADVERTISE",
    ];
    assert_eq!(
        ours.keys().map(String::as_str).collect::<Vec<_>>(),
        expected,
        "every kind we send was captured"
    );
}
