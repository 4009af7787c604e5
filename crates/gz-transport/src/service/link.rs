//! One ZMTP connection of a service socket, blocking: gz-transport's service sockets are
//! ROUTERs, so each side announces the routing identity its peer addresses it by, and every
//! message is a plain multipart message (a ROUTER strips or adds the identity frame locally;
//! it never crosses the wire). Service traffic is a few calls a second at most, so a thread
//! blocked on each connection costs no wake-up between calls.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::zmtp::{self, ZmtpError, GREETING_LEN};

/// The socket type every service connection announces (both ends are ROUTERs).
const SOCKET_TYPE: &str = "ROUTER";
/// Longest wait for a peer's greeting and READY.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// What ended a connection.
#[derive(Debug)]
pub(crate) enum LinkError {
    Io(io::Error),
    Protocol(ZmtpError),
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::Io(e) => write!(f, "{e}"),
            LinkError::Protocol(e) => write!(f, "ZMTP: {e}"),
        }
    }
}

impl From<io::Error> for LinkError {
    fn from(e: io::Error) -> Self {
        LinkError::Io(e)
    }
}

impl From<ZmtpError> for LinkError {
    fn from(e: ZmtpError) -> Self {
        LinkError::Protocol(e)
    }
}

/// A handshaken connection.
pub(crate) struct Link {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl Link {
    /// Connects to `tcp://host:port` and handshakes, announcing `identity`.
    pub fn connect(address: &str, identity: &str, timeout: Duration) -> Result<Link, LinkError> {
        let target = crate::net::tcp_target(address)?;
        let stream = TcpStream::connect_timeout(&target, timeout)?;
        Link::handshake(stream, identity)
    }

    /// Handshakes on an accepted (or connected) stream, announcing `identity`.
    pub fn handshake(stream: TcpStream, identity: &str) -> Result<Link, LinkError> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        let mut hello = zmtp::greeting().to_vec();
        zmtp::encode_ready_with(&mut hello, SOCKET_TYPE, Some(identity.as_bytes()));
        let mut link = Link {
            stream,
            buffer: Vec::new(),
        };
        link.stream.write_all(&hello)?;
        let mut greeting = [0u8; GREETING_LEN];
        link.stream.read_exact(&mut greeting)?;
        zmtp::check_greeting(&greeting, zmtp::NULL)?;
        loop {
            let (command, body) = link.next_frame()?;
            if !command {
                return Err(ZmtpError::Command("a message before the peer's READY".into()).into());
            }
            match zmtp::decode_command(&body)? {
                zmtp::Command::Ready { socket_type } => {
                    if !zmtp::compatible(SOCKET_TYPE, &socket_type) {
                        return Err(ZmtpError::SocketType {
                            ours: SOCKET_TYPE,
                            theirs: socket_type,
                        }
                        .into());
                    }
                    break;
                }
                zmtp::Command::Error(why) => return Err(ZmtpError::Peer(why).into()),
                zmtp::Command::Ping { context } => {
                    let mut pong = Vec::new();
                    zmtp::encode_pong(&mut pong, context);
                    link.stream.write_all(&pong)?;
                }
                other => {
                    return Err(
                        ZmtpError::Command(format!("{other:?} before the peer's READY")).into(),
                    )
                }
            }
        }
        link.stream.set_read_timeout(None)?;
        Ok(link)
    }

    /// Sends one multipart message.
    pub fn send(&mut self, frames: &[&[u8]]) -> io::Result<()> {
        let mut out = Vec::with_capacity(frames.iter().map(|f| f.len() + 9).sum());
        zmtp::encode_message(&mut out, frames);
        self.stream.write_all(&out)
    }

    /// The next multipart message, answering PINGs on the way; `Ok(None)` when the peer
    /// closed the connection between messages.
    pub fn receive(&mut self) -> Result<Option<Vec<Vec<u8>>>, LinkError> {
        let mut frames = Vec::new();
        loop {
            let (command, body, more) = match self.next_frame_more() {
                Ok(f) => f,
                Err(LinkError::Io(e))
                    if frames.is_empty() && e.kind() == io::ErrorKind::UnexpectedEof =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(e),
            };
            if command {
                match zmtp::decode_command(&body)? {
                    zmtp::Command::Ping { context } => {
                        let mut pong = Vec::new();
                        zmtp::encode_pong(&mut pong, context);
                        self.stream.write_all(&pong)?;
                    }
                    zmtp::Command::Error(why) => return Err(ZmtpError::Peer(why).into()),
                    _ => {}
                }
                continue;
            }
            frames.push(body);
            if !more {
                return Ok(Some(frames));
            }
        }
    }

    fn next_frame(&mut self) -> Result<(bool, Vec<u8>), LinkError> {
        let (command, body, _) = self.next_frame_more()?;
        Ok((command, body))
    }

    /// The next frame: (is a command, body, more frames follow).
    fn next_frame_more(&mut self) -> Result<(bool, Vec<u8>, bool), LinkError> {
        loop {
            if let Some((frame, len)) = zmtp::decode_frame(&self.buffer)? {
                let out = (frame.command, frame.body.to_vec(), frame.more);
                self.buffer.drain(..len);
                return Ok(out);
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }
}
