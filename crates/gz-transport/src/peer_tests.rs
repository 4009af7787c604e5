//! A node against a hand-driven peer: datagrams crafted here and sent over the real loopback
//! multicast group, to check what a well-behaved C++ peer cannot show (scope, expiry timing,
//! wrong versions, garbage, END_CONNECTION addressed to someone else).

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::config::{DEFAULT_MSG_PORT, DEFAULT_MULTICAST_GROUP};
use crate::msgs::{Double, Model};
use crate::net::DiscoverySockets;
use crate::test_support::{eventually, eventually_within, PATIENCE};
use crate::wire::{
    decode_discovery, encode_discovery, DiscContents, Discovery, DiscoveryType, MessagePublisher,
    PubType, Publisher, Scope, GENERIC_MSG_TYPE, WIRE_VERSION,
};
use crate::{MsgsPrefix, Node, NodeOptions};

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
    assert!(eventually(|| n.topic_list() == ["/alive", "/silent"]));
    // Heartbeats every 0.1 s keep `alive`; `silent` says nothing.
    assert!(eventually(|| {
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
        eventually(|| n.topic_list().is_empty()),
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
    assert!(eventually(|| publisher.subscriber_count() == 1));
    send(
        DiscoveryType::EndConnection,
        "someone-else",
        "gz.msgs.Double",
    );
    send(DiscoveryType::EndConnection, &me, "gz.msgs.Double");
    assert!(eventually(|| publisher.subscriber_count() == 0));
    assert!(!publisher.has_subscribers());
}

/// gz-transport's `Node::Unsubscribe` ends with an END_CONNECTION addressed to no publisher
/// process in particular (`ctrl` empty): every publisher forgets that subscriber.
#[test]
fn an_end_connection_addressed_to_no_process_ends_the_subscription_everywhere() {
    let n = node("endall");
    let publisher = n.advertise::<Double>("/p").unwrap();
    let peer = FakePeer::new();
    let send = |kind, ctrl: &str| {
        let p = peer.publisher(
            &fqn(&n, "/p"),
            "tcp://127.0.0.1:9",
            Scope::All,
            ctrl,
            GENERIC_MSG_TYPE,
        );
        peer.send(peer.msg(kind, Some(DiscContents::Pub(p))));
    };
    send(DiscoveryType::NewConnection, n.process_uuid());
    assert!(eventually(|| publisher.subscriber_count() == 1));
    // A NEW_CONNECTION without a process is for no one; an END_CONNECTION is for everyone.
    send(DiscoveryType::NewConnection, "");
    send(DiscoveryType::EndConnection, "");
    // Heartbeats keep the peer from expiring, which would also forget its subscription.
    assert!(eventually(|| {
        peer.send(peer.msg(DiscoveryType::Heartbeat, None));
        publisher.subscriber_count() == 0
    }));
    assert_eq!(n.stats().subscribers_connected, 1);
    assert_eq!(n.stats().peers_expired, 0);
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
    assert!(eventually(|| n.topic_list().contains(&"/all".to_owned())));
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
    assert!(eventually(|| n.topic_list() == ["/fine"]));
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
    assert!(eventually(|| !n.topic_list().is_empty()));
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
    assert!(eventually(|| {
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

/// A socket joined to the real discovery group on loopback, to hear what nodes send.
fn listener() -> DiscoverySockets {
    let l = DiscoverySockets::open(
        DEFAULT_MULTICAST_GROUP,
        DEFAULT_MSG_PORT,
        &[Ipv4Addr::LOCALHOST],
    )
    .unwrap();
    l.recv
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    l
}

/// Every datagram of `kind` from process `from` heard within `window`.
fn collect(
    l: &DiscoverySockets,
    from: &str,
    kind: DiscoveryType,
    window: Duration,
) -> Vec<Discovery> {
    let deadline = Instant::now() + window;
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        if let Ok(n) = l.recv.recv(&mut buf) {
            if let Ok(m) = decode_discovery(&buf[..n]) {
                if m.process_uuid == from && m.kind() == kind {
                    got.push(m);
                }
            }
        }
    }
    got
}

#[test]
fn a_hand_made_subscribers_req_is_answered_per_topic_and_type() {
    let n = node("subsreq");
    let _typed = n
        .subscribe("/cmd", |_: Double, _: &crate::MessageInfo| {})
        .unwrap();
    let _typed_again = n
        .subscribe("/cmd", |_: Double, _: &crate::MessageInfo| {})
        .unwrap();
    let _any = n.subscribe_raw("/state", |_, _| {}).unwrap();
    let _model = n
        .subscribe("/state", |_: Model, _: &crate::MessageInfo| {})
        .unwrap();
    let l = listener();
    let peer = FakePeer::new();
    // The datagram a gz-transport 13 node sends from TopicList(): type 8 and a publisher
    // record naming only its process (scope ALL).
    let requester = Publisher {
        process_uuid: peer.process_uuid.clone(),
        scope: Scope::All as i32,
        ..Publisher::default()
    };
    let req = Discovery::new(
        DiscoveryType::SubscribersReq,
        &peer.process_uuid,
        Some(DiscContents::Pub(requester)),
    );
    let bytes = encode_discovery(&req).unwrap();
    assert_eq!(
        &bytes[2..4],
        &[0x10, WIRE_VERSION as u8],
        "version field first"
    );
    peer.send_raw(&bytes);
    let reps = collect(
        &l,
        n.process_uuid(),
        DiscoveryType::SubscribersRep,
        Duration::from_secs(3),
    );
    assert!(!reps.is_empty(), "no SUBSCRIBERS_REP: {:?}", n.stats());
    // One answer per topic and type for each request heard (another process on this host may
    // ask too): compare the set.
    let mut seen: Vec<(String, String)> = reps
        .iter()
        .map(|m| {
            assert_eq!(m.version, WIRE_VERSION);
            assert!(m.flags.is_none() && m.header.is_none());
            let p = m.publisher().expect("a REP carries a Publisher");
            assert_eq!(p.address, n.address(), "the subscriber's own address");
            assert_eq!(p.process_uuid, n.process_uuid());
            assert!(!p.node_uuid.is_empty());
            assert_eq!(p.scope, Scope::All as i32);
            let mp = p.msg_pub().expect("a message publisher");
            assert_eq!(mp.ctrl, "", "gz-transport 13 leaves it empty");
            assert!(!mp.throttled);
            assert_eq!(mp.msgs_per_sec, u64::MAX);
            (p.topic.clone(), mp.msg_type.clone())
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            (fqn(&n, "/cmd"), "gz.msgs.Double".to_owned()),
            (fqn(&n, "/state"), GENERIC_MSG_TYPE.to_owned()),
            (fqn(&n, "/state"), "gz.msgs.Model".to_owned()),
        ]
    );
}

#[test]
fn subscribers_reps_follow_partition_scope_and_expiry_rules() {
    let n = node("subsrep");
    let peer = FakePeer::new();
    let rep = |topic: &str, scope: Scope, msg_type: &str| {
        let p = peer.publisher(topic, "tcp://127.0.0.1:9", scope, "unused", msg_type);
        peer.send(peer.msg(DiscoveryType::SubscribersRep, Some(DiscContents::Pub(p))));
    };
    rep("@/elsewhere@/cmd", Scope::All, "gz.msgs.Double");
    rep(&fqn(&n, "/process"), Scope::Process, "gz.msgs.Double");
    rep(&fqn(&n, "/cmd"), Scope::All, "gz.msgs.Double");
    assert!(n.wait_for_remote_subscribers("/cmd", PATIENCE));
    assert_eq!(n.subscribed_topic_list(), ["/cmd"]);
    let subs = n.topic_subscribers("/cmd").unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(
        (
            subs[0].address.as_str(),
            subs[0].type_name.as_str(),
            subs[0].local
        ),
        ("tcp://127.0.0.1:9", "gz.msgs.Double", false)
    );
    assert_eq!(subs[0].process_uuid, peer.process_uuid);
    // A repeated answer is the same subscriber, not a second one.
    rep(&fqn(&n, "/cmd"), Scope::All, "gz.msgs.Double");
    rep(&fqn(&n, "/other"), Scope::All, "gz.msgs.Double");
    assert!(n.wait_for_remote_subscribers("/other", PATIENCE));
    assert_eq!(n.topic_subscribers("/cmd").unwrap().len(), 1);
    // The answering process goes silent: its subscriptions expire with it.
    let since = Instant::now();
    assert!(eventually(|| n.subscribed_topic_list().is_empty()));
    assert!(since.elapsed() >= Node::SILENCE_INTERVAL - Duration::from_millis(500));
    // And BYE forgets them at once.
    rep(&fqn(&n, "/cmd"), Scope::All, "gz.msgs.Double");
    assert!(n.wait_for_remote_subscribers("/cmd", PATIENCE));
    peer.send(peer.msg(DiscoveryType::Bye, None));
    assert!(eventually_within(Duration::from_secs(2), || n
        .subscribed_topic_list()
        .is_empty()));
}

#[test]
fn unknown_future_discovery_types_are_dropped_and_counted() {
    let n = node("future");
    let peer = FakePeer::new();
    let before = n.stats().discovery_dropped;
    for kind in [10, 11, 200] {
        let mut m = peer.msg(DiscoveryType::Heartbeat, None);
        m.r#type = kind;
        peer.send(m);
    }
    peer.advertise(&n, "/after", "tcp://127.0.0.1:9", Scope::All);
    assert!(eventually(|| n.topic_list() == ["/after"]));
    assert!(n.stats().discovery_dropped >= before + 3, "{:?}", n.stats());
}
