//! The two wire formats of gz-transport (wire version 10), as pure encode/decode functions:
//!
//! * discovery datagrams: a little-endian `u16` payload length followed by a protobuf
//!   `Discovery` message (field numbers of `ignition/msgs/discovery.proto`, identical in gz-msgs);
//! * data messages: four ZeroMQ frames `[fully qualified topic, publisher address, payload, type name]`.
//!
//! Decoders never panic on any input; they return a [`WireError`] naming what is wrong.

use prost::Message;

use crate::proto::proto_message;

/// The discovery wire version spoken by gz-transport 8 to 15 without topic statistics.
/// Peers drop every datagram whose version differs, and so do we.
pub(crate) const WIRE_VERSION: u32 = 10;

/// Type name a subscriber sends in NEW_CONNECTION when it accepts any message type.
pub(crate) const GENERIC_MSG_TYPE: &str = "google.protobuf.Message";

/// Largest discovery payload: the length prefix is a `u16`.
pub(crate) const MAX_DISCOVERY_PAYLOAD: usize = u16::MAX as usize;

/// Why an incoming datagram or frame set was dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WireError {
    #[error("datagram of {0} bytes is shorter than its 2-byte length prefix")]
    TooShort(usize),
    #[error("length prefix says {declared} bytes but the datagram carries {actual}")]
    LengthMismatch { declared: usize, actual: usize },
    #[error("protobuf decode failed: {0}")]
    Protobuf(String),
    #[error("wire version {0} is not {WIRE_VERSION}")]
    Version(u32),
    #[error("expected 4 ZeroMQ frames, got {0}")]
    FrameCount(usize),
    #[error("frame {0} is not UTF-8")]
    NotUtf8(&'static str),
    #[error("frame {0} is empty")]
    Empty(&'static str),
}

/// `gz.msgs.Discovery.Type` (`ignition.msgs.Discovery.Type` ends at 7: Fortress peers print
/// "Unknown message type" for 8 and 9 and otherwise ignore them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum DiscoveryType {
    Uninitialized = 0,
    Advertise = 1,
    Subscribe = 2,
    Unadvertise = 3,
    Heartbeat = 4,
    Bye = 5,
    NewConnection = 6,
    EndConnection = 7,
    /// gz-transport 13+ (Harmonic, gz-msgs 10): "every process, tell me your subscriptions";
    /// carries a `Publisher` holding only the requester's process UUID and scope ALL.
    SubscribersReq = 8,
    /// gz-transport 13+ (Harmonic, gz-msgs 10): one of the sender's subscriptions, as a
    /// `Publisher` whose address and node are the subscriber's, whose `msg_type` is the
    /// subscribed type, and whose `ctrl` is empty.
    SubscribersRep = 9,
}

proto_message! {
    /// `ignition.msgs.Discovery.Flags`
    #[derive(Copy)]
    pub(crate) struct Flags { relay: bool = 1, no_relay: bool = 2 }
}

proto_message! {
    /// `ignition.msgs.Discovery.Subscriber`
    pub(crate) struct Subscriber { topic: String = 1 }
}

/// `ignition.msgs.Discovery.Publisher.Scope`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum Scope {
    Process = 0,
    Host = 1,
    All = 2,
}

proto_message! {
    /// `ignition.msgs.Discovery.Publisher.MessagePublisher`
    pub(crate) struct MessagePublisher {
        ctrl: String = 1, msg_type: String = 2, throttled: bool = 3,
        #[prost(uint64, tag = 4)] msgs_per_sec: u64,
    }
}

proto_message! {
    /// `ignition.msgs.Discovery.Publisher.ServicePublisher` (decoded so service traffic on a
    /// shared port parses; we host no services)
    pub(crate) struct ServicePublisher { socket_id: String = 1, request_type: String = 2, response_type: String = 3 }
}

/// `ignition.msgs.Discovery.Publisher.pub_type`
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum PubType {
    #[prost(message, tag = "6")]
    MsgPub(MessagePublisher),
    #[prost(message, tag = "7")]
    SrvPub(ServicePublisher),
}

proto_message! {
    /// `ignition.msgs.Discovery.Publisher`
    pub(crate) struct Publisher {
        topic: String = 1, address: String = 2, process_uuid: String = 3, node_uuid: String = 4,
        #[prost(enumeration = "Scope", tag = 5)] scope: i32,
        #[prost(oneof = "PubType", tags = "6, 7")] pub_type: Option<PubType>,
    }
}

impl Publisher {
    /// The message-publisher part, if this is a topic (not a service) publisher.
    pub fn msg_pub(&self) -> Option<&MessagePublisher> {
        match &self.pub_type {
            Some(PubType::MsgPub(m)) => Some(m),
            _ => None,
        }
    }
}

/// `ignition.msgs.Discovery.disc_contents`
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum DiscContents {
    #[prost(message, tag = "6")]
    Sub(Subscriber),
    #[prost(message, tag = "7")]
    Pub(Publisher),
}

proto_message! {
    /// `ignition.msgs.Discovery`
    pub(crate) struct Discovery {
        header: Option<crate::msgs::Header> = 1, version: u32 = 2, process_uuid: String = 3,
        #[prost(enumeration = "DiscoveryType", tag = 4)] r#type: i32,
        flags: Option<Flags> = 5,
        #[prost(oneof = "DiscContents", tags = "6, 7")] disc_contents: Option<DiscContents>,
    }
}

impl Discovery {
    /// A message of `kind` from `process_uuid` at our wire version.
    pub fn new(kind: DiscoveryType, process_uuid: &str, contents: Option<DiscContents>) -> Self {
        Discovery {
            header: None,
            version: WIRE_VERSION,
            process_uuid: process_uuid.to_owned(),
            r#type: kind as i32,
            flags: None,
            disc_contents: contents,
        }
    }

    /// The message type; unknown values map to `Uninitialized` (and are ignored by handlers).
    pub fn kind(&self) -> DiscoveryType {
        DiscoveryType::try_from(self.r#type).unwrap_or(DiscoveryType::Uninitialized)
    }

    pub fn publisher(&self) -> Option<&Publisher> {
        match &self.disc_contents {
            Some(DiscContents::Pub(p)) => Some(p),
            _ => None,
        }
    }

    pub fn subscriber(&self) -> Option<&Subscriber> {
        match &self.disc_contents {
            Some(DiscContents::Sub(s)) => Some(s),
            _ => None,
        }
    }
}

/// Serialize a discovery message into a datagram (length prefix + protobuf).
///
/// Our messages are far below the 64 KiB limit (a topic name is capped at 65535 bytes by
/// validation, but the whole message must fit too); an oversize message is reported, not cut.
pub(crate) fn encode_discovery(msg: &Discovery) -> Result<Vec<u8>, WireError> {
    let len = msg.encoded_len();
    if len > MAX_DISCOVERY_PAYLOAD {
        return Err(WireError::LengthMismatch {
            declared: MAX_DISCOVERY_PAYLOAD,
            actual: len,
        });
    }
    let mut out = Vec::with_capacity(2 + len);
    out.extend_from_slice(&(len as u16).to_le_bytes());
    msg.encode(&mut out).expect("Vec grows as needed");
    Ok(out)
}

/// Parse a datagram and check its wire version.
pub(crate) fn decode_discovery(datagram: &[u8]) -> Result<Discovery, WireError> {
    if datagram.len() < 2 {
        return Err(WireError::TooShort(datagram.len()));
    }
    let declared = u16::from_le_bytes([datagram[0], datagram[1]]) as usize;
    let body = &datagram[2..];
    if declared != body.len() {
        return Err(WireError::LengthMismatch {
            declared,
            actual: body.len(),
        });
    }
    let msg = Discovery::decode(body).map_err(|e| WireError::Protobuf(e.to_string()))?;
    if msg.version != WIRE_VERSION {
        return Err(WireError::Version(msg.version));
    }
    Ok(msg)
}

/// One data message as it travels in four ZeroMQ frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataMessage<'a> {
    /// Fully qualified topic `@/<partition>@/<topic>`.
    pub topic: &'a str,
    /// ZeroMQ address of the sending publisher.
    pub address: &'a str,
    pub payload: &'a [u8],
    pub type_name: &'a str,
}

impl<'a> DataMessage<'a> {
    /// The frames to send, in order.
    pub fn frames(&self) -> [&'a [u8]; 4] {
        [
            self.topic.as_bytes(),
            self.address.as_bytes(),
            self.payload,
            self.type_name.as_bytes(),
        ]
    }

    /// Parse received frames; the payload may be empty (a message with all-default fields).
    pub fn decode<F: AsRef<[u8]>>(frames: &'a [F]) -> Result<DataMessage<'a>, WireError> {
        let [topic, address, payload, type_name] = frames else {
            return Err(WireError::FrameCount(frames.len()));
        };
        let (topic, address, payload, type_name) = (
            topic.as_ref(),
            address.as_ref(),
            payload.as_ref(),
            type_name.as_ref(),
        );
        let text = |bytes: &'a [u8], name: &'static str| -> Result<&'a str, WireError> {
            let s = std::str::from_utf8(bytes).map_err(|_| WireError::NotUtf8(name))?;
            if s.is_empty() {
                return Err(WireError::Empty(name));
            }
            Ok(s)
        };
        Ok(DataMessage {
            topic: text(topic, "topic")?,
            address: text(address, "address")?,
            payload,
            type_name: text(type_name, "type name")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Datagrams captured from `ign-transport-topic` (Ignition transport 11) on loopback:
    // `-e -t /x` as subscriber, `-t /x -m ignition.msgs.Double -p 'data: 1.5'` as publisher,
    // partition `sniffp`.
    const IGN_SUBSCRIBE: &[u8] = include_bytes!("../tests/fixtures/ign_subscribe.bin");
    const IGN_HEARTBEAT: &[u8] = include_bytes!("../tests/fixtures/ign_heartbeat.bin");
    const IGN_ADVERTISE: &[u8] = include_bytes!("../tests/fixtures/ign_advertise.bin");
    const IGN_NEW_CONNECTION: &[u8] = include_bytes!("../tests/fixtures/ign_new_connection.bin");
    const IGN_UNADVERTISE: &[u8] = include_bytes!("../tests/fixtures/ign_unadvertise.bin");
    const SUB_UUID: &str = "4fcc67ef-fdb6-4229-94c4-f70d9af7b845";
    const PUB_UUID: &str = "f979e1c7-a759-48d9-9f8e-d939fb39591e";

    fn roundtrip(bytes: &[u8]) -> Discovery {
        let msg = decode_discovery(bytes).expect("captured datagram decodes");
        assert_eq!(
            encode_discovery(&msg).unwrap(),
            bytes,
            "re-encoding reproduces the C++ bytes"
        );
        msg
    }

    #[test]
    fn captured_subscribe() {
        let m = roundtrip(IGN_SUBSCRIBE);
        assert_eq!(m.kind(), DiscoveryType::Subscribe);
        assert_eq!(m.process_uuid, SUB_UUID);
        assert_eq!(m.subscriber().unwrap().topic, "@/sniffp@/x");
    }

    #[test]
    fn captured_heartbeat() {
        let m = roundtrip(IGN_HEARTBEAT);
        assert_eq!(m.kind(), DiscoveryType::Heartbeat);
        assert_eq!(m.process_uuid, SUB_UUID);
        assert!(m.disc_contents.is_none());
    }

    #[test]
    fn captured_advertise_and_unadvertise() {
        for (bytes, kind) in [
            (IGN_ADVERTISE, DiscoveryType::Advertise),
            (IGN_UNADVERTISE, DiscoveryType::Unadvertise),
        ] {
            let m = roundtrip(bytes);
            assert_eq!(m.kind(), kind);
            assert_eq!(m.process_uuid, PUB_UUID);
            let p = m.publisher().unwrap();
            assert_eq!(p.topic, "@/sniffp@/x");
            assert_eq!(p.address, "tcp://127.0.0.1:41213");
            assert_eq!(p.process_uuid, PUB_UUID);
            assert_eq!(p.node_uuid, "9327d6fb-a935-4da7-aad0-0548dd3dd38b");
            assert_eq!(p.scope, Scope::All as i32);
            let mp = p.msg_pub().unwrap();
            assert_eq!(mp.ctrl, "unused");
            assert_eq!(mp.msg_type, "ignition.msgs.Double");
            assert!(!mp.throttled);
            assert_eq!(mp.msgs_per_sec, u64::MAX);
        }
    }

    #[test]
    fn captured_new_connection_names_the_publisher_in_ctrl() {
        let m = roundtrip(IGN_NEW_CONNECTION);
        assert_eq!(m.kind(), DiscoveryType::NewConnection);
        assert_eq!(m.process_uuid, SUB_UUID);
        let p = m.publisher().unwrap();
        assert_eq!(
            p.address, "tcp://127.0.0.1:41213",
            "the publisher's address"
        );
        assert_eq!(p.process_uuid, SUB_UUID, "the subscriber's process");
        assert_eq!(
            p.msg_pub().unwrap().ctrl,
            PUB_UUID,
            "the publisher's process"
        );
        assert_eq!(p.msg_pub().unwrap().msg_type, "ignition.msgs.Double");
    }

    #[test]
    fn version_mismatch_is_rejected() {
        let mut m = decode_discovery(IGN_HEARTBEAT).unwrap();
        m.version = 110;
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&(m.encoded_len() as u16).to_le_bytes());
        m.encode(&mut bytes).unwrap();
        assert_eq!(decode_discovery(&bytes), Err(WireError::Version(110)));
    }

    #[test]
    fn bad_datagrams_are_named() {
        assert_eq!(decode_discovery(&[1]), Err(WireError::TooShort(1)));
        let mut truncated = IGN_ADVERTISE.to_vec();
        truncated.pop();
        assert!(matches!(
            decode_discovery(&truncated),
            Err(WireError::LengthMismatch { .. })
        ));
        assert!(matches!(
            decode_discovery(&[3, 0, 0xff, 0xff, 0xff]),
            Err(WireError::Protobuf(_))
        ));
    }

    #[test]
    fn captured_data_frames_decode() {
        // The frames `ign topic -p 'data: 1.5'` sends (payload = Double{data: 1.5}).
        let frames: Vec<Vec<u8>> = vec![
            b"@/sniffp@/x".to_vec(),
            b"tcp://127.0.0.1:41213".to_vec(),
            include_bytes!("../tests/fixtures/ign_double_1_5.payload").to_vec(),
            b"ignition.msgs.Double".to_vec(),
        ];
        let d = DataMessage::decode(&frames).unwrap();
        assert_eq!(d.topic, "@/sniffp@/x");
        assert_eq!(d.type_name, "ignition.msgs.Double");
        let v = crate::msgs::Double::decode(d.payload).unwrap();
        assert_eq!(v.data, 1.5);
        assert_eq!(d.frames().map(<[u8]>::to_vec).to_vec(), frames);
    }

    #[test]
    fn bad_frames_are_named() {
        assert_eq!(
            DataMessage::decode(&[b"a".to_vec()]),
            Err(WireError::FrameCount(1))
        );
        let f = |t: &[u8]| vec![t.to_vec(), b"tcp://a".to_vec(), vec![], b"T".to_vec()];
        assert_eq!(DataMessage::decode(&f(b"")), Err(WireError::Empty("topic")));
        assert_eq!(
            DataMessage::decode(&f(&[0xff])),
            Err(WireError::NotUtf8("topic"))
        );
        assert!(
            DataMessage::decode(&f(b"@/p@/x")).is_ok(),
            "empty payload is a valid message"
        );
    }

    fn arb_publisher() -> impl Strategy<Value = Publisher> {
        (
            ".{0,40}",
            ".{0,40}",
            ".{0,40}",
            ".{0,40}",
            0..3i32,
            prop::option::of((".{0,20}", ".{0,30}", any::<bool>(), any::<u64>())),
        )
            .prop_map(
                |(topic, address, process_uuid, node_uuid, scope, mp)| Publisher {
                    topic,
                    address,
                    process_uuid,
                    node_uuid,
                    scope,
                    pub_type: mp.map(|(ctrl, msg_type, throttled, msgs_per_sec)| {
                        PubType::MsgPub(MessagePublisher {
                            ctrl,
                            msg_type,
                            throttled,
                            msgs_per_sec,
                        })
                    }),
                },
            )
    }

    fn arb_discovery() -> impl Strategy<Value = Discovery> {
        let contents = prop_oneof![
            Just(None),
            ".{0,60}".prop_map(|topic| Some(DiscContents::Sub(Subscriber { topic }))),
            arb_publisher().prop_map(|p| Some(DiscContents::Pub(p))),
        ];
        (
            ".{0,40}",
            0..12i32,
            prop::option::of((any::<bool>(), any::<bool>())),
            contents,
        )
            .prop_map(|(process_uuid, kind, flags, disc_contents)| Discovery {
                header: None,
                version: WIRE_VERSION,
                process_uuid,
                r#type: kind,
                flags: flags.map(|(relay, no_relay)| Flags { relay, no_relay }),
                disc_contents,
            })
    }

    proptest! {
        #[test]
        fn discovery_roundtrips(msg in arb_discovery()) {
            let bytes = encode_discovery(&msg).unwrap();
            prop_assert_eq!(decode_discovery(&bytes).unwrap(), msg);
        }

        #[test]
        fn discovery_decoder_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_discovery(&bytes);
        }

        #[test]
        fn discovery_decoder_survives_corrupted_captures(
            which in 0..5usize,
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let base = [IGN_SUBSCRIBE, IGN_HEARTBEAT, IGN_ADVERTISE, IGN_NEW_CONNECTION, IGN_UNADVERTISE][which];
            let mut bytes = base.to_vec();
            for (at, v) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= v;
            }
            // Keep the length prefix consistent half of the time so the protobuf decoder is reached.
            let keep = cut.index(bytes.len() + 1);
            bytes.truncate(keep.max(2));
            if keep % 2 == 0 && bytes.len() >= 2 {
                let n = (bytes.len() - 2) as u16;
                bytes[..2].copy_from_slice(&n.to_le_bytes());
            }
            let _ = decode_discovery(&bytes);
        }

        #[test]
        fn frame_decoder_never_panics(frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..6)) {
            if let Ok(d) = DataMessage::decode(&frames) {
                prop_assert_eq!(frames.len(), 4);
                prop_assert_eq!(d.payload, &frames[2][..]);
            }
        }
    }
}
