//! A node under hostile input over its real sockets: garbage datagrams on its discovery port,
//! a ZeroMQ publisher sending malformed frames, wrong type names and undecodable payloads,
//! and a publisher advertising the wrong type. Nothing may stop the node; the counters say
//! what was dropped and the log names each offender once. Each node here listens on a
//! discovery port of its own, so the garbage reaches no other test's node.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::{Arc, Once};
use std::time::Duration;

use parking_lot::Mutex;
use prost::Message;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::DEFAULT_MULTICAST_GROUP;
use crate::msgs::{Double, Model};
use crate::test_support::{eventually, node_on_own_port, PATIENCE};
use crate::wire::{
    encode_discovery, DiscContents, Discovery, DiscoveryType, MessagePublisher, PubType, Publisher,
    Scope,
};
use crate::{MessageInfo, Node, Subscription};

/// A port for one test: apart from the default 10317 and from the fuzz node's.
fn own_port(test: u16) -> u16 {
    (std::process::id() % 10000) as u16 + 40000 + test
}

/// The node of the hostile test number `test`, on a discovery port of its own (returned),
/// with the warnings captured from its start.
fn node_under_test(test: u16, partition: &str) -> (Node, u16) {
    warnings();
    let port = own_port(test);
    (node_on_own_port(partition, port), port)
}

/// Every WARN line logged so far by any thread of this test binary (capture starts at the
/// first call).
fn warnings() -> String {
    static LOG: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    static CAPTURING: Once = Once::new();
    CAPTURING.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(|| LOG.make_writer())
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
    String::from_utf8_lossy(&LOG.lock().unwrap()).into_owned()
}

fn lines_with(needle: &str) -> usize {
    warnings()
        .lines()
        .filter(|line| line.contains(needle))
        .count()
}

fn sender(port: u16) -> UdpSocket {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    socket2::SockRef::from(&socket)
        .set_multicast_if_v4(&Ipv4Addr::LOCALHOST)
        .unwrap();
    socket.set_multicast_loop_v4(true).unwrap();
    socket
        .connect(SocketAddrV4::new(DEFAULT_MULTICAST_GROUP, port))
        .unwrap();
    socket
}

fn advertisement(partition: &str, topic: &str, address: &str, msg_type: &str) -> Vec<u8> {
    let publisher = Publisher {
        topic: format!("@/{partition}@{topic}"),
        address: address.to_owned(),
        process_uuid: "hostile-process".to_owned(),
        node_uuid: "hostile-node".to_owned(),
        scope: Scope::All as i32,
        pub_type: Some(PubType::MsgPub(MessagePublisher {
            ctrl: "unused".to_owned(),
            msg_type: msg_type.to_owned(),
            throttled: false,
            msgs_per_sec: u64::MAX,
        })),
    };
    let msg = Discovery::new(
        DiscoveryType::Advertise,
        "hostile-process",
        Some(DiscContents::Pub(publisher)),
    );
    encode_discovery(&msg).unwrap()
}

/// Subscribes `node` to the `Double`s on `/x`; the list fills with their data.
fn doubles_of_x(node: &Node) -> (Subscription, Arc<Mutex<Vec<f64>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let subscription = node
        .subscribe("/x", move |m: Double, _: &MessageInfo| {
            sink.lock().push(m.data)
        })
        .unwrap();
    (subscription, received)
}

/// The node behind `received` ([`doubles_of_x`]) still discovers and delivers: a publisher
/// node on the same port reaches it.
fn assert_still_delivers(partition: &str, port: u16, received: &Mutex<Vec<f64>>) {
    let peer = node_on_own_port(partition, port);
    let publisher = peer.advertise::<Double>("/x").unwrap();
    assert!(publisher.wait_for_subscribers(PATIENCE));
    assert!(eventually(|| {
        publisher
            .publish(&Double {
                header: None,
                data: 1.5,
            })
            .unwrap();
        !received.lock().is_empty()
    }));
}

#[test]
fn garbage_on_the_discovery_port_is_counted_and_its_sender_named_once() {
    let partition = "hostile-datagrams";
    let (node, port) = node_under_test(1, partition);
    let garbage = sender(port);
    let garbage_name = format!("udp {}", garbage.local_addr().unwrap());
    // A length prefix that never matches, random bodies, a wrong wire version, and lengths
    // from 0 to 2000 bytes: all must be dropped.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let assert_all_dropped = |sent: u64| {
        assert!(
            eventually(|| node.stats().discovery_dropped >= sent),
            "dropped {} of {sent}",
            node.stats().discovery_dropped
        );
    };
    let mut sent = 0u64;
    for i in 0..2000usize {
        let mut bytes: Vec<u8> = (0..i % 700).map(|_| next() as u8).collect();
        if bytes.len() >= 2 {
            let wrong = (bytes.len() as u16).wrapping_add(1 + (next() % 100) as u16);
            bytes[..2].copy_from_slice(&wrong.to_le_bytes());
        }
        garbage.send(&bytes).unwrap();
        sent += 1;
        // UDP drops what the receive buffer cannot hold: let the node keep up.
        if sent % 100 == 0 {
            assert_all_dropped(sent);
        }
    }
    let mut other_version = Discovery::new(DiscoveryType::Heartbeat, "statistics-peer", None);
    other_version.version = 110;
    let mut datagram = (other_version.encoded_len() as u16).to_le_bytes().to_vec();
    other_version.encode(&mut datagram).unwrap();
    garbage.send(&datagram).unwrap();
    sent += 1;
    assert_all_dropped(sent);
    assert_eq!(
        lines_with(&garbage_name),
        1,
        "the sender is named once:\n{}",
        warnings()
    );

    let (_sub, received) = doubles_of_x(&node);
    assert_still_delivers(partition, port, &received);
}

#[test]
fn malformed_frames_wrong_types_and_bad_payloads_are_counted_and_named_once() {
    let partition = "hostile-frames";
    let (node, port) = node_under_test(2, partition);
    let models = Arc::new(Mutex::new(Vec::<Model>::new()));
    let sink = models.clone();
    let _sub = node
        .subscribe("/states", move |m: Model, _: &MessageInfo| {
            sink.lock().push(m)
        })
        .unwrap();

    // A hand-driven ZeroMQ publisher that advertises /states as gz.msgs.Model.
    let ctx = zmq::Context::new();
    let publisher = ctx.socket(zmq::PUB).unwrap();
    publisher.bind("tcp://127.0.0.1:*").unwrap();
    let address = publisher.get_last_endpoint().unwrap().unwrap();
    let discovery = sender(port);
    discovery
        .send(&advertisement(
            partition,
            "/states",
            &address,
            "gz.msgs.Model",
        ))
        .unwrap();
    let topic = format!("@/{partition}@/states");
    let good = Model {
        name: "good".into(),
        ..Default::default()
    }
    .encode_to_vec();
    let send = |frames: &[&[u8]]| publisher.send_multipart(frames, 0).unwrap();
    // Until the node's SUB socket is connected and subscribed, a PUB drops everything.
    assert!(eventually(|| {
        send(&[
            topic.as_bytes(),
            address.as_bytes(),
            &good,
            b"gz.msgs.Model",
        ]);
        !models.lock().is_empty()
    }));
    // Probes still in flight are delivered later; they are told apart by name.
    let before = node.stats();
    let bad = Model {
        name: "bad".into(),
        ..Default::default()
    }
    .encode_to_vec();

    let bad_frames: [&[&[u8]]; 5] = [
        &[topic.as_bytes(), address.as_bytes(), &bad],
        &[
            topic.as_bytes(),
            address.as_bytes(),
            &bad,
            b"gz.msgs.Model",
            b"extra",
        ],
        &[topic.as_bytes(), &[0xff, 0xfe], &bad, b"gz.msgs.Model"],
        &[topic.as_bytes(), address.as_bytes(), &bad, b""],
        &[topic.as_bytes(), b"", &bad, b"gz.msgs.Model"],
    ];
    for frames in bad_frames {
        send(frames);
    }
    send(&[
        topic.as_bytes(),
        address.as_bytes(),
        &bad,
        b"gz.msgs.Double",
    ]);
    send(&[
        topic.as_bytes(),
        address.as_bytes(),
        &[0xff; 9],
        b"gz.msgs.Model",
    ]);
    // The last one is valid: once it arrived, everything before it was handled.
    let last = Model {
        name: "last".into(),
        ..Default::default()
    }
    .encode_to_vec();
    send(&[
        topic.as_bytes(),
        address.as_bytes(),
        &last,
        b"gz.msgs.Model",
    ]);
    assert!(eventually(|| models
        .lock()
        .last()
        .is_some_and(|m| m.name == "last")));
    let after = node.stats();
    assert_eq!(
        after.messages_dropped - before.messages_dropped,
        5,
        "{after:?}"
    );
    assert_eq!(
        after.type_mismatches - before.type_mismatches,
        1,
        "{after:?}"
    );
    assert_eq!(after.decode_errors - before.decode_errors, 1, "{after:?}");
    assert!(
        models.lock().iter().all(|m| m.name != "bad"),
        "only valid messages were delivered"
    );
    let log = warnings();
    let named = |what: &str| {
        log.lines()
            .filter(|l| l.contains(&format!("dropped {what} from {address}")))
            .count()
    };
    assert_eq!(named("a data message"), 1, "{log}");
    assert_eq!(named("a message of the wrong type"), 1, "{log}");
    assert_eq!(named("a message"), 1, "{log}");
    // Named by the connection they came on, not by the address a frame claims (frames with
    // no or an unreadable address are among them).
    assert_eq!(lines_with("an unnamed publisher"), 0, "{log}");

    // A publisher advertising /states as another type is not connected to, and named once.
    let wrong = ctx.socket(zmq::PUB).unwrap();
    wrong.bind("tcp://127.0.0.1:*").unwrap();
    let wrong_address = wrong.get_last_endpoint().unwrap().unwrap();
    for _ in 0..3 {
        discovery
            .send(&advertisement(
                partition,
                "/states",
                &wrong_address,
                "gz.msgs.Double",
            ))
            .unwrap();
    }
    assert!(eventually(|| lines_with(&format!(
        "dropped an advertisement from {wrong_address}"
    )) == 1));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        lines_with(&format!("dropped an advertisement from {wrong_address}")),
        1
    );
}

/// Found by the fuzzer: an ADVERTISE whose address held a NUL byte made the zmq binding
/// panic on the receive thread, which died; every later command then blocked the node.
#[test]
fn an_advertised_address_with_a_nul_byte_is_refused_and_the_node_keeps_receiving() {
    let partition = "hostile-address";
    let (node, port) = node_under_test(3, partition);
    let (_sub, received) = doubles_of_x(&node);
    let discovery = sender(port);
    let before = node.stats().discovery_dropped;
    for address in [
        "tcp://127.0.0.1:1\0",
        "tcp://127.0.0.1:99999",
        "ipc:///tmp/x",
        "tcp:// :1",
    ] {
        discovery
            .send(&advertisement(partition, "/x", address, "gz.msgs.Double"))
            .unwrap();
    }
    assert!(eventually(|| node.stats().discovery_dropped >= before + 4));
    assert!(node.topic_info("/x").unwrap().is_empty(), "none was taken");
    assert_eq!(lines_with("process hostile-process"), 1, "named once");

    assert_still_delivers(partition, port, &received);
}
