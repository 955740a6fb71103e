//! The hot-reload server of `cargo assets watch`: protocol version 2 (see
//! `assets_runtime::reload`) on `127.0.0.1` only.
//!
//! One thread accepts connections and greets them; notices are written to
//! every client with a short write timeout. The protocol is one-way, so a
//! client that sends anything is malformed and dropped, as is one that
//! closed, or one too slow to take a notice within the timeout. Neither the
//! build nor the other clients ever wait on a client for longer.
//!
//! Nothing on the port can wedge the watcher: at most [`MAX_CLIENTS`] are
//! kept (a new connection past that pushes out the oldest: a game that
//! reconnects is the newest), clients that closed or sent anything are
//! dropped every [`PRUNE_EVERY`] without waiting for a notice, and a failed
//! accept (out of file descriptors, say) waits before trying again instead
//! of spinning on a core. A flood of thousands of connections used to hold
//! every descriptor in CLOSE-WAIT, after which builds failed with "Too many
//! open files" until a restart.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assets_runtime::reload::Notice;

/// How long a notice may take to reach one client before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);
/// The most clients kept at once.
pub const MAX_CLIENTS: usize = 64;
/// How often clients that closed or misbehaved are dropped.
pub const PRUNE_EVERY: Duration = Duration::from_millis(250);
/// How long the accept loop waits when there is nothing to accept.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// How long it waits after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(200);

/// A running server.
pub struct ReloadServer {
    port: u16,
    clients: Arc<Mutex<Vec<TcpStream>>>,
}

impl ReloadServer {
    /// Listens on `127.0.0.1:port` (`0`: any free port).
    pub fn start(port: u16) -> io::Result<ReloadServer> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let port = listener.local_addr()?.port();
        // Polled, so that the same thread prunes between connections.
        listener.set_nonblocking(true)?;
        let clients: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let accepted = Arc::clone(&clients);
        std::thread::Builder::new()
            .name("reload-accept".into())
            .spawn(move || accept_loop(&listener, &accepted))?;
        Ok(ReloadServer { port, clients })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Tells every client that `parcel` is now at `path`, seen through
    /// `patch` if there is one, with the resources `changed`; drops clients
    /// that fail.
    pub fn notify(&self, parcel: &str, path: &Path, patch: Option<&Path>, changed: &[String]) {
        let notice = Notice {
            parcel: parcel.to_owned(),
            path: path.to_owned(),
            patch: patch.map(Path::to_owned),
            changed: changed.to_vec(),
        }
        .to_lines();
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        clients.retain_mut(|c| well_behaved(c) && c.write_all(notice.as_bytes()).is_ok());
    }
}

/// Accepts and greets clients, keeping at most [`MAX_CLIENTS`], and drops
/// those that closed or misbehaved every [`PRUNE_EVERY`]. Never returns.
fn accept_loop(listener: &TcpListener, clients: &Mutex<Vec<TcpStream>>) {
    let lock = || clients.lock().unwrap_or_else(|p| p.into_inner());
    let mut pruned = Instant::now();
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let Some(client) = stream
                    .set_nonblocking(false)
                    .ok()
                    .and_then(|()| greet(stream))
                else {
                    continue;
                };
                let mut clients = lock();
                if clients.len() >= MAX_CLIENTS {
                    clients.retain_mut(well_behaved);
                }
                if clients.len() >= MAX_CLIENTS {
                    clients.remove(0);
                }
                clients.push(client);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if pruned.elapsed() >= PRUNE_EVERY {
                    lock().retain_mut(well_behaved);
                    pruned = Instant::now();
                }
                std::thread::sleep(ACCEPT_POLL);
            }
            // Out of descriptors, or a connection reset before it was
            // taken: wait rather than spin.
            Err(_) => std::thread::sleep(ACCEPT_BACKOFF),
        }
    }
}

fn greet(mut stream: TcpStream) -> Option<TcpStream> {
    stream.set_nodelay(true).ok()?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT)).ok()?;
    stream.write_all(Notice::greeting().as_bytes()).ok()?;
    Some(stream)
}

/// Whether a client has sent nothing and not closed: the protocol is one-way.
fn well_behaved(client: &mut TcpStream) -> bool {
    if client.set_nonblocking(true).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    let quiet = matches!(client.read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
    quiet && client.set_nonblocking(false).is_ok()
}
