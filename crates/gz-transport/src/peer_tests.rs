//! A node against a hand-driven peer: datagrams crafted here and sent over the real loopback
//! multicast group, to check what a well-behaved C++ peer cannot show (scope, expiry timing,
//! wrong versions, garbage, END_CONNECTION addressed to someone else).

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::config::{DEFAULT_MSG_PORT, DEFAULT_MULTICAST_GROUP};
use crate::msgs::Double;
use crate::wire::{
    encode_discovery, DiscContents, Discovery, DiscoveryType, MessagePublisher, PubType, Publisher,
    Scope, GENERIC_MSG_TYPE,
};
use crate::{MsgsPrefix, Node, NodeOptions};

const PATIENCE: Duration = Duration::from_secs(30);

fn node(test: &str) -> Node {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // Every test goes through this Once before a node reads the environment.
        std::env::set_var("GZ_IP", "127.0.0.1");
        std::env::set_var("IGN_IP", "127.0.0.1");
    });
    Node::with_options(NodeOptions {
        partition: Some(format!("peer-{}-{test}", std::process::id())),
        msgs_prefix: MsgsPrefix::Gz,
        ..Default::default()
    })
    .unwrap()
}

fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !cond() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A fake participant that speaks discovery by hand.
struct FakePeer {
    socket: UdpSocket,
    process_uuid: String,
}

impl FakePeer {
    fn new() -> FakePeer {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        socket2::SockRef::from(&socket)
            .set_multicast_if_v4(&Ipv4Addr::LOCALHOST)
            .unwrap();
        socket.set_multicast_loop_v4(true).unwrap();
        FakePeer {
            socket,
            process_uuid: uuid::Uuid::new_v4().to_string(),
        }
    }

    fn send_raw(&self, bytes: &[u8]) {
        self.socket
            .send_to(
                bytes,
                SocketAddrV4::new(DEFAULT_MULTICAST_GROUP, DEFAULT_MSG_PORT),
            )
            .unwrap();
    }

    fn send(&self, msg: Discovery) {
        self.send_raw(&encode_discovery(&msg).unwrap());
    }

    fn msg(&self, kind: DiscoveryType, contents: Option<DiscContents>) -> Discovery {
        Discovery::new(kind, &self.process_uuid, contents)
    }

    fn publisher(
        &self,
        fqn: &str,
        address: &str,
        scope: Scope,
        ctrl: &str,
        msg_type: &str,
    ) -> Publisher {
        Publisher {
            topic: fqn.to_owned(),
            address: address.to_owned(),
            process_uuid: self.process_uuid.clone(),
            node_uuid: "fake-node".to_owned(),
            scope: scope as i32,
            pub_type: Some(PubType::MsgPub(MessagePublisher {
                ctrl: ctrl.to_owned(),
                msg_type: msg_type.to_owned(),
                throttled: false,
                msgs_per_sec: u64::MAX,
            })),
        }
    }

    fn advertise(&self, node: &Node, topic: &str, address: &str, scope: Scope) {
        let p = self.publisher(
            &fqn(node, topic),
            address,
            scope,
            "unused",
            "gz.msgs.Double",
        );
        self.send(self.msg(DiscoveryType::Advertise, Some(DiscContents::Pub(p))));
    }
}

fn fqn(node: &Node, topic: &str) -> String {
    format!("@/{}@{}", node.partition(), topic)
}

#[test]
fn a_silent_peer_expires_and_a_heartbeating_one_does_not() {
    let n = node("expiry");
    let silent = FakePeer::new();
    let alive = FakePeer::new();
    let silent_since = Instant::now();
    silent.advertise(&n, "/silent", "tcp://127.0.0.1:9", Scope::All);
    alive.advertise(&n, "/alive", "tcp://127.0.0.1:9", Scope::All);
    assert!(eventually(PATIENCE, || n.topic_list() == ["/alive", "/silent"]));
    // Heartbeats every 0.1 s keep `alive`; `silent` says nothing.
    assert!(eventually(PATIENCE, || {
        alive.send(alive.msg(DiscoveryType::Heartbeat, None));
        std::thread::sleep(Duration::from_millis(100));
        n.topic_list() == ["/alive"]
    }));
    let silence = silent_since.elapsed();
    assert!(
        silence >= Node::SILENCE_INTERVAL,
        "expired after {silence:?}, {:?}",
        n.stats()
    );
    assert_eq!(n.stats().peers_expired, 1);
    alive.send(alive.msg(DiscoveryType::Bye, None));
    assert!(
        eventually(PATIENCE, || n.topic_list().is_empty()),
        "BYE forgets at once"
    );
    assert_eq!(n.stats().peers_expired, 1);
}

#[test]
fn new_and_end_connection_are_checked_before_counting() {
    let n = node("conn");
    let publisher = n.advertise::<Double>("/p").unwrap();
    let peer = FakePeer::new();
    let send = |kind, ctrl: &str, msg_type: &str| {
        let p = peer.publisher(&fqn(&n, "/p"), n.address(), Scope::All, ctrl, msg_type);
        peer.send(peer.msg(kind, Some(DiscContents::Pub(p))));
    };
    let me = n.process_uuid().to_owned();
    // Addressed to another publisher process, or for another type: ignored.
    send(
        DiscoveryType::NewConnection,
        "someone-else",
        "gz.msgs.Double",
    );
    send(DiscoveryType::NewConnection, &me, "gz.msgs.Model");
    // Then a valid one, which must be the first to count.
    send(DiscoveryType::NewConnection, &me, GENERIC_MSG_TYPE);
    assert!(eventually(PATIENCE, || publisher.subscriber_count() == 1));
    send(
        DiscoveryType::EndConnection,
        "someone-else",
        "gz.msgs.Double",
    );
    send(DiscoveryType::EndConnection, &me, "gz.msgs.Double");
    assert!(eventually(PATIENCE, || publisher.subscriber_count() == 0));
    assert!(!publisher.has_subscribers());
}

#[test]
fn scope_decides_who_sees_a_publisher() {
    let n = node("scope");
    let peer = FakePeer::new();
    peer.advertise(&n, "/process", "tcp://127.0.0.1:9", Scope::Process);
    peer.advertise(&n, "/host-elsewhere", "tcp://203.0.113.5:9", Scope::Host);
    peer.advertise(&n, "/host-here", "tcp://127.0.0.1:9", Scope::Host);
    peer.advertise(&n, "/all", "tcp://203.0.113.5:9", Scope::All);
    // Datagrams from one sender arrive in order: once /all is known, the others were handled.
    assert!(eventually(PATIENCE, || n
        .topic_list()
        .contains(&"/all".to_owned())));
    assert_eq!(n.topic_list(), ["/all", "/host-here"]);
}

#[test]
fn bad_datagrams_are_dropped_counted_and_survived() {
    let n = node("garbage");
    let peer = FakePeer::new();
    let before = n.stats().discovery_dropped;
    peer.send_raw(&[]);
    peer.send_raw(&[0xff; 3]);
    peer.send_raw(&[5, 0, 1, 2, 3, 4, 5]);
    let mut wrong_version = peer.msg(
        DiscoveryType::Advertise,
        Some(DiscContents::Pub(peer.publisher(
            &fqn(&n, "/v110"),
            "tcp://127.0.0.1:9",
            Scope::All,
            "unused",
            "gz.msgs.Double",
        ))),
    );
    wrong_version.version = 110;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&(prost::Message::encoded_len(&wrong_version) as u16).to_le_bytes());
    prost::Message::encode(&wrong_version, &mut bytes).unwrap();
    peer.send_raw(&bytes);
    peer.send(peer.msg(DiscoveryType::Uninitialized, None));
    // Then a valid advertisement: it is handled after all the bad ones.
    peer.advertise(&n, "/fine", "tcp://127.0.0.1:9", Scope::All);
    assert!(eventually(PATIENCE, || n.topic_list() == ["/fine"]));
    assert!(n.stats().discovery_dropped >= before + 5, "{:?}", n.stats());
}

#[test]
fn other_partitions_and_service_publishers_are_not_listed() {
    let n = node("foreign");
    let peer = FakePeer::new();
    let foreign = peer.publisher(
        "@/elsewhere@/x",
        "tcp://127.0.0.1:9",
        Scope::All,
        "unused",
        "gz.msgs.Double",
    );
    peer.send(peer.msg(DiscoveryType::Advertise, Some(DiscContents::Pub(foreign))));
    let mut service = peer.publisher(&fqn(&n, "/srv"), "tcp://127.0.0.1:9", Scope::All, "", "");
    service.pub_type = Some(PubType::SrvPub(Default::default()));
    peer.send(peer.msg(DiscoveryType::Advertise, Some(DiscContents::Pub(service))));
    peer.advertise(&n, "/mine", "tcp://127.0.0.1:9", Scope::All);
    assert!(eventually(PATIENCE, || !n.topic_list().is_empty()));
    assert_eq!(n.topic_list(), ["/mine"]);
}

#[test]
fn malformed_data_frames_are_dropped_counted_and_survived() {
    let n = node("frames");
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Vec<u8>>::new()));
    let g = got.clone();
    let _sub = n
        .subscribe_raw("/bad", move |bytes, _| {
            g.lock().unwrap().push(bytes.to_vec())
        })
        .unwrap();
    // A hand-made publisher: a raw ZeroMQ PUB socket, advertised by a fake peer.
    let ctx = zmq::Context::new();
    let publisher = ctx.socket(zmq::PUB).unwrap();
    publisher.bind("tcp://127.0.0.1:*").unwrap();
    let address = publisher.get_last_endpoint().unwrap().unwrap();
    let peer = FakePeer::new();
    peer.advertise(&n, "/bad", &address, Scope::All);
    let topic = fqn(&n, "/bad");
    let t = topic.as_bytes();
    let malformed: [&[&[u8]]; 5] = [
        &[t],
        &[t, address.as_bytes(), b"\x11"],
        &[t, address.as_bytes(), b"", b"gz.msgs.Double", b"extra"],
        &[t, b"", b"", b"gz.msgs.Double"],
        &[t, address.as_bytes(), b"", &[0xff, 0xfe]],
    ];
    assert!(eventually(PATIENCE, || {
        for frames in malformed {
            publisher.send_multipart(frames.iter().copied(), 0).unwrap();
        }
        let good: [&[u8]; 4] = [
            t,
            address.as_bytes(),
            b"\x11\0\0\0\0\0\0\xf8\x3f",
            b"gz.msgs.Double",
        ];
        publisher.send_multipart(good, 0).unwrap();
        !got.lock().unwrap().is_empty()
    }));
    assert_eq!(got.lock().unwrap()[0], b"\x11\0\0\0\0\0\0\xf8\x3f");
    assert!(n.stats().messages_dropped >= 5, "{:?}", n.stats());
}
