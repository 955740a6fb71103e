//! The hot-reload server of `cargo assets watch`: protocol version 1 (see
//! `assets_runtime::reload`) on `127.0.0.1` only.
//!
//! One thread accepts connections and greets them; notices are written to
//! every client with a short write timeout. The protocol is one-way, so a
//! client that sends anything is malformed and dropped, as is one that
//! closed, or one too slow to take a notice within the timeout. Neither the
//! build nor the other clients ever wait on a client for longer.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assets_runtime::reload::Notice;

/// How long a notice may take to reach one client before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);

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
        let clients: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let accepted = Arc::clone(&clients);
        std::thread::Builder::new()
            .name("reload-accept".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    if let Some(client) = greet(stream) {
                        accepted
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(client);
                    }
                }
            })?;
        Ok(ReloadServer { port, clients })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// How many clients are connected.
    pub fn clients(&self) -> usize {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).len()
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
