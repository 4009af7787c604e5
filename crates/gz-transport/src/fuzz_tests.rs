//! Fuzzing everything that parses input from the network, with proptest: the discovery
//! datagram decoder, the data frame decoder, the protobuf payload decoders of the messages we
//! subscribe to, and the discovery logic of a live node fed arbitrary datagrams.
//!
//! The corpus is the handful of datagrams and payloads captured from the real Ignition CLI
//! (`tests/fixtures`), mutated; the rest is random. CI runs each property with proptest's
//! default case count; `scripts/fuzz` runs them with millions of cases (`PROPTEST_CASES`)
//! and reports the total. Properties under `decoders::` are cheap (a decode each); the one
//! under `node::` costs a state update and sometimes a datagram sent, so it gets fewer cases.

use proptest::prelude::*;
use prost::Message;

use crate::msgs::{Clock, Double, Model};
use crate::wire::{decode_discovery, encode_discovery, DataMessage};

const CAPTURED_DATAGRAMS: [&[u8]; 5] = [
    include_bytes!("../tests/fixtures/ign_subscribe.bin"),
    include_bytes!("../tests/fixtures/ign_heartbeat.bin"),
    include_bytes!("../tests/fixtures/ign_advertise.bin"),
    include_bytes!("../tests/fixtures/ign_new_connection.bin"),
    include_bytes!("../tests/fixtures/ign_unadvertise.bin"),
];
const CAPTURED_PAYLOADS: [&[u8]; 3] = [
    include_bytes!("../tests/fixtures/ign_model.payload"),
    include_bytes!("../tests/fixtures/ign_double_1_5.payload"),
    include_bytes!("../tests/fixtures/ign_clock.payload"),
];

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
    Remove(prop::sample::Index),
    Truncate(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), 1..=255u8).prop_map(|(i, v)| Mutation::Flip(i, v)),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Insert(i, v)),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Remove),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(base: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for m in mutations {
        match *m {
            Mutation::Flip(at, v) if !bytes.is_empty() => {
                let i = at.index(bytes.len());
                bytes[i] ^= v;
            }
            Mutation::Insert(at, v) => bytes.insert(at.index(bytes.len() + 1), v),
            Mutation::Remove(at) if !bytes.is_empty() => {
                bytes.remove(at.index(bytes.len()));
            }
            Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            _ => {}
        }
    }
    bytes
}

/// A mutated capture whose length prefix is made to match again (so the protobuf decoder is
/// reached) when `fix_length` is set.
fn mutated_datagram() -> impl Strategy<Value = Vec<u8>> {
    (
        0..CAPTURED_DATAGRAMS.len(),
        prop::collection::vec(mutation(), 1..6),
        any::<bool>(),
    )
        .prop_map(|(which, mutations, fix_length)| {
            let mut bytes = mutate(CAPTURED_DATAGRAMS[which], &mutations);
            if fix_length && bytes.len() >= 2 {
                let body = (bytes.len() - 2).min(u16::MAX as usize) as u16;
                bytes[..2].copy_from_slice(&body.to_le_bytes());
            }
            bytes
        })
}

mod decoders {
    use super::*;

    /// What decodes re-encodes to something that decodes to the same message.
    fn reencodes_if_decodes(bytes: &[u8]) -> Result<(), TestCaseError> {
        if let Ok(msg) = decode_discovery(bytes) {
            let again = encode_discovery(&msg).unwrap();
            prop_assert_eq!(decode_discovery(&again).unwrap(), msg);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn random_datagrams(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            reencodes_if_decodes(&bytes)?;
        }

        #[test]
        fn mutated_datagrams(bytes in mutated_datagram()) {
            reencodes_if_decodes(&bytes)?;
        }

        #[test]
        fn random_frames(frames in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64),
                "@/[a-z]{0,8}@/[a-z/]{0,16}".prop_map(String::into_bytes),
                "tcp://127\\.0\\.0\\.1:[0-9]{1,5}".prop_map(String::into_bytes),
            ],
            0..7,
        )) {
            if let Ok(msg) = DataMessage::decode(&frames) {
                prop_assert_eq!(frames.len(), 4);
                prop_assert!(!msg.topic.is_empty() && !msg.address.is_empty() && !msg.type_name.is_empty());
            }
        }

        #[test]
        fn payloads(
            which in 0..CAPTURED_PAYLOADS.len(),
            mutations in prop::collection::vec(mutation(), 0..8),
            random in prop::collection::vec(any::<u8>(), 0..256),
            use_random in any::<bool>(),
        ) {
            let bytes = if use_random { random } else { mutate(CAPTURED_PAYLOADS[which], &mutations) };
            if let Ok(model) = Model::decode(bytes.as_slice()) {
                // Whatever decodes can be walked the way the driver's receive path does.
                let joints = model.joint.iter().filter(|j| j.axis1.is_some()).count();
                prop_assert!(joints <= model.joint.len());
            }
            let _ = Double::decode(bytes.as_slice());
            let _ = Clock::decode(bytes.as_slice());
        }
    }
}

mod node {
    use std::net::{Ipv4Addr, SocketAddr};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::test_support::node_on_own_port;
    use crate::threads::SILENCE_INTERVAL;
    use crate::wire::{
        DiscContents, Discovery, MessagePublisher, PubType, Publisher, Subscriber, WIRE_VERSION,
    };
    use crate::Node;

    const PARTITION: &str = "fuzz";

    /// One node for every case, on a discovery port of its own so the datagrams it sends in
    /// answer reach no other test's node. It subscribes to `/states` and advertises `/cmd`.
    fn fuzzed_node() -> &'static (Node, crate::Subscription, crate::RawPublisher) {
        static NODE: OnceLock<(Node, crate::Subscription, crate::RawPublisher)> = OnceLock::new();
        NODE.get_or_init(|| {
            let port = (std::process::id() % 10000 + 30000) as u16;
            let node = node_on_own_port(PARTITION, port);
            let sub = node
                .subscribe("/states", |_: Model, _: &crate::MessageInfo| {})
                .unwrap();
            let publisher = node.advertise_raw("/cmd", "gz.msgs.Double").unwrap();
            (node, sub, publisher)
        })
    }

    /// One of `known` (each as likely as a random one), or a random match of the regex `random`.
    fn known_or_random(
        known: &'static [&'static str],
        random: &'static str,
    ) -> impl Strategy<Value = String> + Clone {
        prop_oneof![
            known.len() as u32 => prop::sample::select(known).prop_map(str::to_owned),
            1 => random,
        ]
    }

    fn topic() -> impl Strategy<Value = String> {
        known_or_random(
            &["@/fuzz@/states", "@/fuzz@/cmd", "@/other@/states"],
            ".{0,24}",
        )
    }

    fn address() -> impl Strategy<Value = String> {
        prop_oneof![
            "tcp://127\\.0\\.0\\.1:[0-9]{1,6}",
            "tcp://127\\.0\\.0\\.[0-9]{1,3}:[0-9]{0,6}",
            "tcp://[\\[\\]:0-9]{0,12}",
            ".{0,24}",
        ]
    }

    fn type_name() -> impl Strategy<Value = String> {
        known_or_random(
            &["gz.msgs.Model", "gz.msgs.Double", "google.protobuf.Message"],
            ".{0,16}",
        )
    }

    fn discovery() -> impl Strategy<Value = Discovery> {
        let uuid = known_or_random(&["peer-a", "peer-b"], ".{0,8}");
        let publisher = (
            topic(),
            address(),
            uuid.clone(),
            uuid.clone(),
            -1..4i32,
            uuid.clone(),
            type_name(),
        )
            .prop_map(
                |(topic, address, process_uuid, node_uuid, scope, ctrl, msg_type)| Publisher {
                    topic,
                    address,
                    process_uuid,
                    node_uuid,
                    scope,
                    pub_type: Some(PubType::MsgPub(MessagePublisher {
                        ctrl,
                        msg_type,
                        throttled: false,
                        msgs_per_sec: u64::MAX,
                    })),
                },
            );
        let contents = prop_oneof![
            1 => Just(None),
            1 => topic().prop_map(|topic| Some(DiscContents::Sub(Subscriber { topic }))),
            4 => publisher.prop_map(|p| Some(DiscContents::Pub(p))),
        ];
        (
            uuid,
            -1..10i32,
            prop_oneof![9 => Just(WIRE_VERSION), 1 => any::<u32>()],
            contents,
        )
            .prop_map(|(process_uuid, kind, version, disc_contents)| Discovery {
                header: None,
                version,
                process_uuid,
                r#type: kind,
                flags: None,
                disc_contents,
            })
    }

    proptest! {
        #[test]
        fn any_datagram(msg in discovery(), raw in mutated_datagram(), use_raw in 0..4u8) {
            let (node, _, _) = fuzzed_node();
            let core = node.core();
            let bytes = if use_raw == 0 { raw } else { encode_discovery(&msg).unwrap() };
            let from = SocketAddr::from((Ipv4Addr::LOCALHOST, 9));
            let now = Instant::now();
            core.handle_datagram(&bytes, from, now);
            // Forget every fake peer now and then, so the state stays as small as in life.
            if core.data.counters.discovery_received.load(std::sync::atomic::Ordering::Relaxed) % 64 == 0 {
                core.expire(now + SILENCE_INTERVAL + Duration::from_secs(1));
            }
            prop_assert!(!core.is_shutting_down());
        }
    }
}
