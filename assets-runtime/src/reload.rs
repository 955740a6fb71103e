//! Hot reload: a [`ReloadClient`] a game polls each frame to learn which
//! parcels `cargo assets watch` rewrote and which resources changed.
//!
//! The protocol, version 2, is UTF-8 lines from the watcher to the game over
//! TCP on `127.0.0.1` (the game never sends anything):
//!
//! ```text
//! cargo-assets-reload 2          greeting, once per connection
//! parcel <name>\t<path>          a notice begins: this parcel is now <path>
//! patch <path>                   (optional) seen through the patch at <path> (see `crate::patch`)
//! changed <resource name>        one line per resource added, changed or removed
//! end                            the notice is complete
//! ```
//!
//! A notice without a `patch` line means the parcel alone: a patch the game
//! held before is gone. Version 2 added the `patch` line; a version 1
//! client would have ignored it and reopened an unchanged base, so the
//! greeting changed and such a client disconnects instead.
//!
//! In names and paths, `\`, tab and newline are written `\\`, `\t`, `\n`
//! ([`line_escape`](crate::line_escape)). The reader is [`ReloadClient`];
//! the writer, `Notice::to_lines` and `Notice::greeting`, is behind the
//! feature `write`.
//! A client ignores line kinds it does not know inside a notice (so the
//! protocol can grow), and disconnects on another version, an overlong line
//! (over 64 KiB) or a malformed notice. The client never blocks: it connects
//! at most once a second (a refused local connection returns at once), reads
//! what has arrived, and keeps working when the watcher is not running or
//! restarts.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::id::ResourceId;
use crate::line_escape::unescape;
use crate::{ParcelError, PatchedBuf};

/// The greeting line of protocol version 1.
pub const GREETING: &str = "cargo-assets-reload 2";
/// The longest line a client accepts.
pub const MAX_LINE: usize = 64 << 10;
/// How often a disconnected client tries to connect.
const RETRY: Duration = Duration::from_secs(1);

/// One parcel rewritten by the watcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The parcel's name in the manifest.
    pub parcel: String,
    /// Where the base parcel is.
    pub path: PathBuf,
    /// The patch to see it through, if any: reopen both with
    /// [`Notice::open`].
    pub patch: Option<PathBuf>,
    /// Names of the resources added, changed or removed.
    pub changed: Vec<String>,
}

impl Notice {
    /// The ids of [`Notice::changed`].
    pub fn changed_ids(&self) -> impl Iterator<Item = ResourceId> + '_ {
        self.changed.iter().map(|n| ResourceId::of_runtime(n))
    }

    /// Opens the parcel as it now is: the base, through the patch if
    /// there is one (see [`PatchedBuf::open`]).
    pub fn open(&self) -> Result<PatchedBuf, ParcelError> {
        PatchedBuf::open(&self.path, self.patch.as_deref())
    }
}

/// A connection to `cargo assets watch`, polled without blocking.
#[derive(Debug)]
pub struct ReloadClient {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    greeted: bool,
    buf: Vec<u8>,
    pending: Option<Notice>,
    last_attempt: Option<Instant>,
}

impl ReloadClient {
    /// A client of the watcher at `addr` (`"127.0.0.1:7878"`). Nothing is
    /// connected until the first [`poll`](ReloadClient::poll).
    pub fn new(addr: impl ToSocketAddrs) -> io::Result<ReloadClient> {
        let addr = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address"))?;
        Ok(ReloadClient {
            addr,
            stream: None,
            greeted: false,
            buf: Vec::new(),
            pending: None,
            last_attempt: None,
        })
    }

    /// Whether a watcher is connected and has greeted us.
    pub fn is_connected(&self) -> bool {
        self.stream.is_some() && self.greeted
    }

    /// The notices that arrived since the last call. Never blocks for long:
    /// at most one connection attempt per second, and only reads what is there.
    pub fn poll(&mut self) -> Vec<Notice> {
        if self.stream.is_none() {
            self.connect();
        }
        let mut notices = Vec::new();
        let Some(stream) = &mut self.stream else {
            return notices;
        };
        let mut chunk = [0u8; 16 << 10];
        let closed = loop {
            match stream.read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break true,
            }
        };
        let ok = self.take_lines(&mut notices);
        if closed || !ok {
            self.disconnect();
        }
        notices
    }

    fn connect(&mut self) {
        if self.last_attempt.is_some_and(|t| t.elapsed() < RETRY) {
            return;
        }
        self.last_attempt = Some(Instant::now());
        if let Ok(stream) = TcpStream::connect_timeout(&self.addr, Duration::from_millis(20))
            && stream.set_nonblocking(true).is_ok()
        {
            self.stream = Some(stream);
        }
    }

    fn disconnect(&mut self) {
        self.stream = None;
        self.greeted = false;
        self.buf.clear();
        self.pending = None;
    }

    /// Consumes complete lines; `false` if the stream must be dropped.
    fn take_lines(&mut self, notices: &mut Vec<Notice>) -> bool {
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            let Ok(line) = std::str::from_utf8(&line[..end]) else {
                return false;
            };
            if !self.greeted {
                if line != GREETING {
                    return false;
                }
                self.greeted = true;
                continue;
            }
            if let Some(rest) = line.strip_prefix("parcel ") {
                let Some((name, path)) = rest.split_once('\t') else {
                    return false;
                };
                self.pending = Some(Notice {
                    parcel: unescape(name).into_owned(),
                    path: PathBuf::from(unescape(path).as_ref()),
                    patch: None,
                    changed: Vec::new(),
                });
            } else if let Some(path) = line.strip_prefix("patch ") {
                match &mut self.pending {
                    Some(notice) => notice.patch = Some(PathBuf::from(unescape(path).as_ref())),
                    None => return false,
                }
            } else if let Some(name) = line.strip_prefix("changed ") {
                match &mut self.pending {
                    Some(notice) => notice.changed.push(unescape(name).into_owned()),
                    None => return false,
                }
            } else if line == "end" {
                match self.pending.take() {
                    Some(notice) => notices.push(notice),
                    None => return false,
                }
            }
            // Anything else: a newer server's line kind; ignored.
        }
        self.buf.len() <= MAX_LINE
    }
}

/// The protocol's writer (feature `write`, used by `cargo assets watch`).
#[cfg(feature = "write")]
impl Notice {
    /// The greeting a server sends once per connection, before any notice.
    pub fn greeting() -> String {
        format!("{GREETING}\n")
    }

    /// This notice as protocol lines, from `parcel` to `end`.
    pub fn to_lines(&self) -> String {
        use crate::line_escape::escape;
        let path = self.path.display().to_string();
        let mut out = format!("parcel {}\t{}\n", escape(&self.parcel), escape(&path));
        if let Some(patch) = &self.patch {
            out.push_str("patch ");
            out.push_str(&escape(&patch.display().to_string()));
            out.push('\n');
        }
        for name in &self.changed {
            out.push_str("changed ");
            out.push_str(&escape(name));
            out.push('\n');
        }
        out.push_str("end\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// Polls until `done` says so (or 5 s pass: then the assertion after fails).
    fn poll_until(
        client: &mut ReloadClient,
        done: impl Fn(&ReloadClient, &[Notice]) -> bool,
    ) -> Vec<Notice> {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !done(client, &got) && Instant::now() < deadline {
            got.extend(client.poll());
            std::thread::sleep(Duration::from_millis(5));
        }
        got
    }

    #[test]
    fn notices_arrive_whole_and_unknown_lines_are_ignored() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = ReloadClient::new(listener.local_addr().unwrap()).unwrap();
        assert!(client.poll().is_empty());
        let (mut server, _) = listener.accept().unwrap();
        server
            .write_all(
                b"cargo-assets-reload 2\nparcel main\t/tmp/a b\\tc.parcel\nchanged sprites/a.png\n",
            )
            .unwrap();
        assert!(
            poll_until(&mut client, |c, _| c.is_connected()).is_empty(),
            "no `end` yet"
        );
        assert!(client.poll().is_empty());
        server
            .write_all(b"future-line 42\nchanged x\\\\y\nend\n")
            .unwrap();
        let notices = poll_until(&mut client, |_, got| !got.is_empty());
        assert_eq!(
            notices,
            [Notice {
                parcel: "main".into(),
                path: PathBuf::from("/tmp/a b\tc.parcel"),
                patch: None,
                changed: vec!["sprites/a.png".into(), "x\\y".into()],
            }]
        );
        assert!(client.is_connected());
    }

    /// What the writer writes, the client reads back, with every character
    /// the escaping must carry.
    #[cfg(feature = "write")]
    #[test]
    fn the_writer_and_the_reader_agree() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = ReloadClient::new(listener.local_addr().unwrap()).unwrap();
        client.poll();
        let (mut server, _) = listener.accept().unwrap();
        let sent = [
            Notice {
                parcel: "main".into(),
                path: PathBuf::from("/tmp/odd\\dir/a b\tc.parcel"),
                patch: Some(PathBuf::from("/tmp/odd\\dir/a b\tc.parcel.patch")),
                changed: vec![
                    "sprites/a.png".into(),
                    "new\nline".into(),
                    "back\\slash".into(),
                ],
            },
            Notice {
                parcel: "empty".into(),
                path: PathBuf::from("e.parcel"),
                patch: None,
                changed: Vec::new(),
            },
        ];
        let mut text = Notice::greeting();
        for notice in &sent {
            text.push_str(&notice.to_lines());
        }
        server.write_all(text.as_bytes()).unwrap();
        assert_eq!(poll_until(&mut client, |_, got| got.len() == 2), sent);
    }

    #[test]
    fn a_wrong_greeting_or_an_endless_line_disconnects() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = ReloadClient::new(listener.local_addr().unwrap()).unwrap();
        client.poll();
        let (mut server, _) = listener.accept().unwrap();
        // Version 1's greeting: its clients would miss patches.
        server.write_all(b"cargo-assets-reload 1\n").unwrap();
        poll_until(&mut client, |c, _| c.stream.is_none());
        assert!(!client.is_connected());
        // Reconnects after a second; then an endless line is refused.
        std::thread::sleep(RETRY);
        client.poll();
        let (mut server, _) = listener.accept().unwrap();
        server.write_all(GREETING.as_bytes()).unwrap();
        server.write_all(b"\n").unwrap();
        poll_until(&mut client, |c, _| c.is_connected());
        let _ = server.write_all(&vec![b'x'; MAX_LINE + 10]);
        poll_until(&mut client, |c, _| c.stream.is_none());
        assert!(!client.is_connected());
    }

    #[test]
    fn without_a_watcher_polling_finds_nothing_and_stays_disconnected() {
        // A port that was free a moment ago: nobody listens.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut client = ReloadClient::new(port).unwrap();
        for _ in 0..3 {
            assert!(client.poll().is_empty());
        }
        assert!(!client.is_connected());
    }
}
