//! ZMTP 3.0 (rfc.zeromq.org/spec/23), the framing ZeroMQ speaks over TCP, as far as
//! gz-transport's sockets need it: the greeting, the NULL mechanism's READY handshake (with
//! the routing identity a ROUTER socket announces), the PLAIN mechanism's HELLO / WELCOME /
//! INITIATE / READY (rfc.zeromq.org/spec/24: what gz-transport's PUB and SUB sockets speak
//! when `GZ_TRANSPORT_USERNAME`/`PASSWORD` are set), frames and multipart messages,
//! subscriptions, and PING/PONG. Pure encode/decode; the sockets are [`crate::io`]'s (PUB/SUB)
//! and [`crate::service`]'s (ROUTER).
//!
//! We greet as version 3.0, so a libzmq 4.x peer (Gazebo's, Fortress's) speaks 3.0 to us: a
//! subscriber sends its subscriptions as messages (`0x01` + topic prefix to subscribe, `0x00`
//! to cancel). The 3.1 SUBSCRIBE and CANCEL commands are understood too, should a peer send
//! them. Decoders never panic on any input; they say what is wrong.

use std::fmt;

/// The greeting's length.
pub const GREETING_LEN: usize = 64;
/// The largest frame accepted: far above any gz message (a Model is a few kB), far below what
/// would exhaust memory if a broken peer announced it.
pub const MAX_FRAME: u64 = 64 * 1024 * 1024;

const FLAG_MORE: u8 = 0x01;
const FLAG_LONG: u8 = 0x02;
const FLAG_COMMAND: u8 = 0x04;

/// The NULL mechanism's name (no security).
pub const NULL: &str = "NULL";
/// The PLAIN mechanism's name (user name and password, in clear).
pub const PLAIN: &str = "PLAIN";

/// Our greeting with the NULL mechanism: signature, version 3.0, not a server (NULL has no
/// roles).
pub fn greeting() -> [u8; GREETING_LEN] {
    greeting_with(NULL, false)
}

/// Our greeting with `mechanism` (`NULL` or `PLAIN`), as the mechanism's server or client.
pub fn greeting_with(mechanism: &str, as_server: bool) -> [u8; GREETING_LEN] {
    let mut greeting = [0u8; GREETING_LEN];
    greeting[0] = 0xFF;
    greeting[9] = 0x7F;
    greeting[10] = 3;
    greeting[11] = 0;
    greeting[12..12 + mechanism.len()].copy_from_slice(mechanism.as_bytes());
    greeting[32] = u8::from(as_server);
    greeting
}

/// What is wrong with a peer's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZmtpError {
    /// Not a ZMTP greeting (bad signature).
    NotZmtp,
    /// A ZMTP version before 3.0 (libzmq before 4.0).
    Version(u8, u8),
    /// The peer speaks another security mechanism than ours (PLAIN when
    /// GZ_TRANSPORT_USERNAME/PASSWORD are set, NULL otherwise).
    Mechanism { ours: &'static str, theirs: String },
    /// The user name and password a PLAIN client sent are not ours.
    Credentials,
    /// A PLAIN server refused our user name and password (its ERROR's reason).
    Refused(String),
    /// A frame larger than [`MAX_FRAME`].
    FrameTooLarge(u64),
    /// A command that is malformed, or not the one expected now.
    Command(String),
    /// The peer's socket type cannot talk to ours.
    SocketType { ours: &'static str, theirs: String },
    /// The peer sent an ERROR command.
    Peer(String),
}

impl fmt::Display for ZmtpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZmtpError::NotZmtp => write!(f, "not a ZMTP greeting"),
            ZmtpError::Version(major, minor) => {
                write!(f, "ZMTP {major}.{minor}; 3.0 or later is needed")
            }
            ZmtpError::Mechanism { ours, theirs } => write!(
                f,
                "the peer speaks security mechanism {theirs:?} and we {ours:?}: set \
                 GZ_TRANSPORT_USERNAME and GZ_TRANSPORT_PASSWORD (IGN_TRANSPORT_* on Fortress) \
                 alike on both sides, or on neither"
            ),
            ZmtpError::Refused(why) => write!(
                f,
                "the publisher refused our user name and password ({why:?}): our \
                 GZ_TRANSPORT_USERNAME/PASSWORD are not its"
            ),
            ZmtpError::Credentials => write!(
                f,
                "the peer's user name and password (GZ_TRANSPORT_USERNAME/PASSWORD) are not ours"
            ),
            ZmtpError::FrameTooLarge(n) => write!(f, "a frame of {n} bytes (at most {MAX_FRAME})"),
            ZmtpError::Command(why) => write!(f, "{why}"),
            ZmtpError::SocketType { ours, theirs } => {
                write!(f, "a {theirs:?} socket cannot talk to our {ours}")
            }
            ZmtpError::Peer(why) => write!(f, "the peer gave up: {why:?}"),
        }
    }
}

impl ZmtpError {
    /// A refusal for security: the peer speaks another mechanism, or one side's PLAIN
    /// credentials were not the other's (the peer's ERROR during PLAIN's handshake).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ZmtpError::Mechanism { .. } | ZmtpError::Credentials | ZmtpError::Refused(_)
        )
    }
}

/// Checks a peer's greeting against our mechanism `ours`; whether the peer greeted as the
/// mechanism's server.
pub fn check_greeting(
    greeting: &[u8; GREETING_LEN],
    ours: &'static str,
) -> Result<bool, ZmtpError> {
    if greeting[0] != 0xFF || greeting[9] & 0x01 != 0x01 {
        return Err(ZmtpError::NotZmtp);
    }
    let (major, minor) = (greeting[10], greeting[11]);
    if major < 3 {
        return Err(ZmtpError::Version(major, minor));
    }
    let mechanism = &greeting[12..32];
    let name_len = mechanism.iter().position(|&b| b == 0).unwrap_or(20);
    if &mechanism[..name_len] != ours.as_bytes() {
        return Err(ZmtpError::Mechanism {
            ours,
            theirs: String::from_utf8_lossy(&mechanism[..name_len]).into_owned(),
        });
    }
    Ok(greeting[32] & 1 == 1)
}

/// Appends one frame to `out`.
pub fn encode_frame(out: &mut Vec<u8>, body: &[u8], more: bool, command: bool) {
    let mut flags = 0;
    if more {
        flags |= FLAG_MORE;
    }
    if command {
        flags |= FLAG_COMMAND;
    }
    if body.len() > 255 {
        out.push(flags | FLAG_LONG);
        out.extend_from_slice(&(body.len() as u64).to_be_bytes());
    } else {
        out.push(flags);
        out.push(body.len() as u8);
    }
    out.extend_from_slice(body);
}

/// Appends a multipart message to `out`.
pub fn encode_message(out: &mut Vec<u8>, frames: &[&[u8]]) {
    for (k, frame) in frames.iter().enumerate() {
        encode_frame(out, frame, k + 1 < frames.len(), false);
    }
}

/// Appends a READY command announcing `socket_type` (`SUB`, `PUB`) to `out`.
pub fn encode_ready(out: &mut Vec<u8>, socket_type: &str) {
    encode_ready_with(out, socket_type, None);
}

/// Appends a READY command announcing `socket_type` and, when given, the routing `identity`
/// a ROUTER peer files this connection under (gz-transport addresses its service sockets by
/// the identity they announce).
pub fn encode_ready_with(out: &mut Vec<u8>, socket_type: &str, identity: Option<&[u8]>) {
    let mut body = Vec::with_capacity(64);
    body.push(5);
    body.extend_from_slice(b"READY");
    let mut property = |name: &[u8], value: &[u8]| {
        body.push(name.len() as u8);
        body.extend_from_slice(name);
        body.extend_from_slice(&(value.len() as u32).to_be_bytes());
        body.extend_from_slice(value);
    };
    property(b"Socket-Type", socket_type.as_bytes());
    if let Some(identity) = identity {
        property(b"Identity", identity);
    }
    encode_frame(out, &body, false, true);
}

/// Appends PLAIN's HELLO (the client's user name and password) to `out`. Each is at most 255
/// bytes (the configuration checks it).
pub fn encode_hello(out: &mut Vec<u8>, username: &[u8], password: &[u8]) {
    let mut body = Vec::with_capacity(8 + username.len() + password.len());
    body.push(5);
    body.extend_from_slice(b"HELLO");
    body.push(username.len().min(255) as u8);
    body.extend_from_slice(&username[..username.len().min(255)]);
    body.push(password.len().min(255) as u8);
    body.extend_from_slice(&password[..password.len().min(255)]);
    encode_frame(out, &body, false, true);
}

/// Appends PLAIN's WELCOME (the server took the credentials) to `out`.
pub fn encode_welcome(out: &mut Vec<u8>) {
    encode_frame(out, b"\x07WELCOME", false, true);
}

/// Appends PLAIN's INITIATE (the client's metadata: its socket type) to `out`.
pub fn encode_initiate(out: &mut Vec<u8>, socket_type: &str) {
    let mut body = Vec::with_capacity(32);
    body.push(8);
    body.extend_from_slice(b"INITIATE");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    body.extend_from_slice(socket_type.as_bytes());
    encode_frame(out, &body, false, true);
}

/// Appends an ERROR command saying `reason` (at most 255 bytes) to `out`.
pub fn encode_error(out: &mut Vec<u8>, reason: &str) {
    let reason = &reason.as_bytes()[..reason.len().min(255)];
    let mut body = Vec::with_capacity(7 + reason.len());
    body.push(5);
    body.extend_from_slice(b"ERROR");
    body.push(reason.len() as u8);
    body.extend_from_slice(reason);
    encode_frame(out, &body, false, true);
}

/// Appends a subscription (`subscribe`) or its cancellation to `out`, as a ZMTP 3.0 message.
pub fn encode_subscription(out: &mut Vec<u8>, prefix: &[u8], subscribe: bool) {
    let mut body = Vec::with_capacity(prefix.len() + 1);
    body.push(u8::from(subscribe));
    body.extend_from_slice(prefix);
    encode_frame(out, &body, false, false);
}

/// One frame as it is on the wire, borrowed from the receive buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub body: &'a [u8],
    pub more: bool,
    pub command: bool,
}

/// The next frame at the start of `buffer` and its length on the wire; `Ok(None)` until it
/// has fully arrived.
pub fn decode_frame(buffer: &[u8]) -> Result<Option<(Frame<'_>, usize)>, ZmtpError> {
    let Some(&flags) = buffer.first() else {
        return Ok(None);
    };
    let (size, header) = if flags & FLAG_LONG != 0 {
        let Some(bytes) = buffer.get(1..9) else {
            return Ok(None);
        };
        let size = u64::from_be_bytes(bytes.try_into().expect("8 bytes"));
        (size, 9)
    } else {
        match buffer.get(1) {
            Some(&size) => (u64::from(size), 2),
            None => return Ok(None),
        }
    };
    if size > MAX_FRAME {
        return Err(ZmtpError::FrameTooLarge(size));
    }
    let end = header + size as usize;
    let Some(body) = buffer.get(header..end) else {
        return Ok(None);
    };
    let command = flags & FLAG_COMMAND != 0;
    if command && flags & FLAG_MORE != 0 {
        return Err(ZmtpError::Command(
            "a command frame with the MORE flag".into(),
        ));
    }
    Ok(Some((
        Frame {
            body,
            more: flags & FLAG_MORE != 0,
            command,
        },
        end,
    )))
}

/// A command the peer sent.
#[derive(Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// The handshake's end, with the peer's socket type.
    Ready { socket_type: String },
    /// PLAIN: a client's credentials.
    Hello {
        username: &'a [u8],
        password: &'a [u8],
    },
    /// PLAIN: the server took the credentials.
    Welcome,
    /// PLAIN: the client's metadata, with its socket type.
    Initiate { socket_type: String },
    /// The peer gave up, saying why.
    Error(String),
    /// A heartbeat asking for a PONG carrying `context`.
    Ping { context: &'a [u8] },
    /// The answer to our PING.
    Pong,
    /// ZMTP 3.1 subscription (`subscribe`) or cancellation of `prefix`.
    Subscription { prefix: &'a [u8], subscribe: bool },
    /// Something else; ignored.
    Other(String),
}

/// Reads a command frame's body.
pub fn decode_command(body: &[u8]) -> Result<Command<'_>, ZmtpError> {
    let bad = |why: &str| ZmtpError::Command(format!("malformed command: {why}"));
    let (&name_len, rest) = body.split_first().ok_or_else(|| bad("empty"))?;
    let name = rest.get(..name_len as usize).ok_or_else(|| bad("name"))?;
    let data = &rest[name_len as usize..];
    Ok(match name {
        b"READY" => Command::Ready {
            socket_type: socket_type_of(data)?,
        },
        b"INITIATE" => Command::Initiate {
            socket_type: socket_type_of(data)?,
        },
        b"HELLO" => {
            let (&user_len, rest) = data.split_first().ok_or_else(|| bad("HELLO user name"))?;
            let username = rest
                .get(..user_len as usize)
                .ok_or_else(|| bad("HELLO user name"))?;
            let rest = &rest[user_len as usize..];
            let (&pass_len, rest) = rest.split_first().ok_or_else(|| bad("HELLO password"))?;
            let password = rest
                .get(..pass_len as usize)
                .ok_or_else(|| bad("HELLO password"))?;
            Command::Hello { username, password }
        }
        b"WELCOME" => Command::Welcome,
        b"ERROR" => {
            let (&len, reason) = data.split_first().unwrap_or((&0, &[]));
            let reason = reason.get(..len as usize).unwrap_or(reason);
            Command::Error(String::from_utf8_lossy(reason).into_owned())
        }
        b"PING" => Command::Ping {
            context: data.get(2..).unwrap_or(&[]),
        },
        b"PONG" => Command::Pong,
        b"SUBSCRIBE" => Command::Subscription {
            prefix: data,
            subscribe: true,
        },
        b"CANCEL" => Command::Subscription {
            prefix: data,
            subscribe: false,
        },
        other => Command::Other(String::from_utf8_lossy(other).into_owned()),
    })
}

/// The `Socket-Type` property among a READY's or INITIATE's metadata.
fn socket_type_of(mut properties: &[u8]) -> Result<String, ZmtpError> {
    let bad = |why: &str| ZmtpError::Command(format!("malformed command: {why}"));
    let mut socket_type = None;
    while let Some((&key_len, rest)) = properties.split_first() {
        let key = rest
            .get(..key_len as usize)
            .ok_or_else(|| bad("property name"))?;
        let rest = &rest[key_len as usize..];
        let len = rest.get(..4).ok_or_else(|| bad("property length"))?;
        let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
        let value = rest.get(4..4 + len).ok_or_else(|| bad("property value"))?;
        if key.eq_ignore_ascii_case(b"Socket-Type") {
            socket_type = Some(String::from_utf8_lossy(value).into_owned());
        }
        properties = &rest[4 + len..];
    }
    socket_type.ok_or_else(|| bad("READY without Socket-Type"))
}

/// Appends the PONG that answers a PING with `context`.
pub fn encode_pong(out: &mut Vec<u8>, context: &[u8]) {
    let mut body = Vec::with_capacity(5 + context.len());
    body.push(4);
    body.extend_from_slice(b"PONG");
    body.extend_from_slice(context);
    encode_frame(out, &body, false, true);
}

/// Whether a peer of `theirs` may talk to our socket of type `ours` (RFC 23's pairs).
pub fn compatible(ours: &str, theirs: &str) -> bool {
    match ours {
        "SUB" | "XSUB" => matches!(theirs, "PUB" | "XPUB"),
        "PUB" | "XPUB" => matches!(theirs, "SUB" | "XSUB"),
        "ROUTER" => matches!(theirs, "DEALER" | "REQ" | "ROUTER"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_greeting_is_zmtp_3_0_null_and_passes_our_own_check() {
        let g = greeting();
        assert_eq!(g[0], 0xFF);
        assert_eq!(g[9], 0x7F);
        assert_eq!((g[10], g[11]), (3, 0));
        assert_eq!(&g[12..16], b"NULL");
        assert!(g[16..].iter().all(|&b| b == 0));
        assert!(!check_greeting(&g, NULL).unwrap());
    }

    #[test]
    fn greetings_of_old_versions_other_mechanisms_and_strangers_are_refused() {
        let mut g = greeting();
        g[10] = 2;
        assert_eq!(check_greeting(&g, NULL), Err(ZmtpError::Version(2, 0)));
        let g = greeting_with(PLAIN, true);
        assert_eq!(
            check_greeting(&g, NULL),
            Err(ZmtpError::Mechanism {
                ours: NULL,
                theirs: "PLAIN".into()
            })
        );
        assert!(check_greeting(&g, PLAIN).unwrap(), "a PLAIN server");
        assert_eq!(
            check_greeting(&greeting(), PLAIN),
            Err(ZmtpError::Mechanism {
                ours: PLAIN,
                theirs: "NULL".into()
            })
        );
        let mut g = greeting();
        g[0] = b'G';
        assert_eq!(check_greeting(&g, NULL), Err(ZmtpError::NotZmtp));
        // libzmq 4.3 greets as 3.1: accepted.
        let mut g = greeting();
        g[11] = 1;
        check_greeting(&g, NULL).unwrap();
    }

    #[test]
    fn frames_round_trip_short_and_long_and_wait_until_complete() {
        let long = vec![7u8; 300];
        let mut wire = Vec::new();
        encode_message(
            &mut wire,
            &[b"@/p@/topic", b"tcp://1.2.3.4:5", &long, b"gz.msgs.Model"],
        );
        let mut at = 0;
        let mut frames = Vec::new();
        while let Some((frame, len)) = decode_frame(&wire[at..]).unwrap() {
            frames.push((frame.body.to_vec(), frame.more));
            at += len;
        }
        assert_eq!(at, wire.len());
        assert_eq!(frames[0], (b"@/p@/topic".to_vec(), true));
        assert_eq!(frames[2], (long.clone(), true));
        assert_eq!(frames[3], (b"gz.msgs.Model".to_vec(), false));
        // A frame cut short anywhere is not there yet.
        for cut in [0, 1, 5, 9, 200] {
            let start = 2 + 10 + 2 + 15; // the long frame's offset
            assert_eq!(decode_frame(&wire[start..start + cut]).unwrap(), None);
        }
    }

    #[test]
    fn ready_ping_and_subscriptions_decode_and_oversized_frames_are_refused() {
        let mut wire = Vec::new();
        encode_ready(&mut wire, "XPUB");
        let (frame, _) = decode_frame(&wire).unwrap().unwrap();
        assert!(frame.command);
        assert_eq!(
            decode_command(frame.body).unwrap(),
            Command::Ready {
                socket_type: "XPUB".into()
            }
        );
        let ping = [4, b'P', b'I', b'N', b'G', 0, 10, b'c', b'x'];
        assert_eq!(
            decode_command(&ping).unwrap(),
            Command::Ping { context: b"cx" }
        );
        let mut subscribe = vec![9];
        subscribe.extend_from_slice(b"SUBSCRIBE@/p@/t");
        assert_eq!(
            decode_command(&subscribe).unwrap(),
            Command::Subscription {
                prefix: b"@/p@/t",
                subscribe: true
            }
        );
        let mut big = vec![FLAG_LONG];
        big.extend_from_slice(&(MAX_FRAME + 1).to_be_bytes());
        assert_eq!(
            decode_frame(&big),
            Err(ZmtpError::FrameTooLarge(MAX_FRAME + 1))
        );
        assert!(decode_command(&[5, b'R', b'E']).is_err());
        assert!(decode_command(&[5, b'R', b'E', b'A', b'D', b'Y', 3, b'a']).is_err());
        assert!(compatible("SUB", "PUB") && compatible("PUB", "SUB"));
        assert!(!compatible("SUB", "REQ") && !compatible("PUB", "PUB"));
        assert!(compatible("ROUTER", "ROUTER") && !compatible("ROUTER", "PUB"));
    }

    #[test]
    fn plain_commands_round_trip() {
        let decode = |wire: &[u8]| {
            let (frame, len) = decode_frame(wire).unwrap().unwrap();
            assert_eq!(len, wire.len());
            assert!(frame.command);
            frame.body.to_vec()
        };
        let mut wire = Vec::new();
        encode_hello(&mut wire, b"admin", b"s3cret");
        assert_eq!(
            decode_command(&decode(&wire)).unwrap(),
            Command::Hello {
                username: b"admin",
                password: b"s3cret"
            }
        );
        let mut wire = Vec::new();
        encode_welcome(&mut wire);
        assert_eq!(decode_command(&decode(&wire)).unwrap(), Command::Welcome);
        let mut wire = Vec::new();
        encode_initiate(&mut wire, "SUB");
        assert_eq!(
            decode_command(&decode(&wire)).unwrap(),
            Command::Initiate {
                socket_type: "SUB".into()
            }
        );
        let mut wire = Vec::new();
        encode_error(&mut wire, "no");
        assert_eq!(
            decode_command(&decode(&wire)).unwrap(),
            Command::Error("no".into())
        );
        // A HELLO cut short anywhere says what is missing instead of reading past it.
        for cut in [6, 7, 9, 12] {
            let body = &decode(&{
                let mut w = Vec::new();
                encode_hello(&mut w, b"admin", b"s3cret");
                w
            })[..cut];
            assert!(decode_command(body).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_ready_with_an_identity_still_names_its_socket_type() {
        let mut wire = Vec::new();
        encode_ready_with(&mut wire, "ROUTER", Some(b"replier-1"));
        let (frame, len) = decode_frame(&wire).unwrap().unwrap();
        assert_eq!(len, wire.len());
        let body = frame.body;
        assert!(body.windows(8).any(|w| w == b"Identity"));
        assert!(body.ends_with(b"\x00\x00\x00\x09replier-1"));
        assert_eq!(
            decode_command(body).unwrap(),
            Command::Ready {
                socket_type: "ROUTER".into()
            }
        );
    }
}
