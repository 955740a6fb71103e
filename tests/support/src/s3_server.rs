//! [`S3Server`]: a real S3-compatible server process (the workspace's
//! `assets-s3-server`, s3s-fs over a temp directory) on a free port of
//! 127.0.0.1, for the remote cache's tests and benchmark.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The bucket every server has.
pub const BUCKET: &str = "assets-cache";

/// A running server, killed when dropped.
pub struct S3Server {
    child: Option<Child>,
    port: u16,
    root: tempfile::TempDir,
}

/// The server binary, built with Cargo on first use (a no-op after that):
/// `tests/s3-server` is a workspace of its own (its manifest says why),
/// built into `target/s3-server/<profile>/` of this workspace, optimized
/// when the running program is (the benchmark). Once per process.
pub fn server_binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(build_server).clone()
}

fn build_server() -> PathBuf {
    let exe = std::env::current_exe().expect("the running program's path");
    let release = exe.components().any(|c| c.as_os_str() == "release");
    let workspace = crate::cargo_crate::workspace();
    let target = workspace.join("target/s3-server");
    let mut build = crate::cargo_crate::cargo_command();
    build
        .args(["build", "--quiet", "--locked", "--manifest-path"])
        .arg(workspace.join("tests/s3-server/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    if release {
        build.arg("--release");
    }
    let status = build.status().expect("run cargo to build assets-s3-server");
    assert!(
        status.success(),
        "`cargo build --manifest-path tests/s3-server/Cargo.toml` failed"
    );
    let bin = target
        .join(if release { "release" } else { "debug" })
        .join(format!("assets-s3-server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "assets-s3-server not where Cargo puts it: {}",
        bin.display()
    );
    bin
}

impl S3Server {
    /// Starts a server over a new temp directory holding one empty bucket.
    pub fn start() -> S3Server {
        let root = tempfile::Builder::new()
            .prefix("assets-s3")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(root.path().join(BUCKET)).expect("bucket dir");
        let mut server = S3Server {
            child: None,
            port: 0,
            root,
        };
        server.spawn(&[]);
        server
    }

    /// Starts a server that accepts connections and never answers.
    pub fn start_stalled() -> S3Server {
        let root = tempfile::tempdir().expect("temp dir");
        let mut server = S3Server {
            child: None,
            port: 0,
            root,
        };
        server.spawn(&["--stall"]);
        server
    }

    /// Starts a server that answers reads and never answers a write: a
    /// remote that freezes once a build starts uploading.
    pub fn start_stalling_writes() -> S3Server {
        let mut server = S3Server::start();
        server.kill();
        server.spawn(&["--stall-writes"]);
        server
    }

    fn spawn(&mut self, extra: &[&str]) {
        let mut cmd = Command::new(server_binary());
        cmd.arg(self.root.path()).args(extra);
        if self.port != 0 {
            cmd.args(["--port", &self.port.to_string()]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start assets-s3-server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the server's first line");
        self.port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"));
        self.child = Some(child);
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory served; the bucket's objects are files under
    /// `<root>/<BUCKET>/`.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The `CARGO_ASSETS_REMOTE` URI of `prefix` in the bucket.
    pub fn url(&self, prefix: &str) -> String {
        format!(
            "s3://{BUCKET}/{prefix}?endpoint=http://127.0.0.1:{}&region=us-east-1",
            self.port
        )
    }

    /// The environment a client needs: the URI and the server's keys in
    /// the variables S3 clients read.
    pub fn env(&self, prefix: &str) -> Vec<(&'static str, String)> {
        vec![
            ("CARGO_ASSETS_REMOTE", self.url(prefix)),
            ("AWS_ACCESS_KEY_ID", "assets-test".into()),
            ("AWS_SECRET_ACCESS_KEY", "assets-test-secret".into()),
        ]
    }

    /// The object files under `prefix` (paths relative to it), sorted.
    pub fn objects(&self, prefix: &str) -> Vec<String> {
        let dir = self.root.path().join(BUCKET).join(prefix);
        let mut objects: Vec<String> = walkdir::WalkDir::new(&dir)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                e.path()
                    .strip_prefix(&dir)
                    .ok()
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
            })
            .collect();
        objects.sort();
        objects
    }

    /// Stops the server (a crash, as the client sees it).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn(&[]);
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.kill();
    }
}
