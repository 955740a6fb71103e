//! Test support for cargo-assets (in the spirit of `cargo-test-support`).
//!
//! [`Project`] is a real Cargo package in a temp dir: `Cargo.toml` with a
//! `[package.metadata.assets]` section, `src/lib.rs`, and files under
//! `assets/` written as real PNGs or text. [`Project::run`] runs the real
//! `cargo-assets` binary on it; [`Run`] parses its JSON messages, each into
//! the binary's own [`Message`] type (so a message that drifts from its type
//! fails the test that sees it) and as a plain JSON value.

pub mod cargo_crate;
pub mod pixels;
pub mod s3_server;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub use cargo_assets::message::{BuildFinished, Message};
use serde_json::Value;

/// One line of `--message-format json`, read as its [`Message`] and as a
/// JSON value; panics, naming the line, if it is neither.
pub fn parse_message(line: &str) -> (Message, Value) {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let message = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("not a cargo-assets message ({e}): {line}"));
    (message, value)
}

/// A Cargo package in a temporary directory.
pub struct Project {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Project {
    /// An empty package named `game` with an empty `assets/` directory, run
    /// with the `cargo-assets` binary at `bin` (pass `env!("CARGO_BIN_EXE_cargo-assets")`).
    pub fn new(bin: &str) -> Project {
        let dir = tempfile::Builder::new()
            .prefix("cargo-assets-test")
            .tempdir()
            .expect("temp dir");
        let p = Project {
            dir,
            bin: PathBuf::from(bin),
        };
        p.file("src/lib.rs", "");
        std::fs::create_dir_all(p.path().join("assets")).expect("assets dir");
        p.metadata("");
        p
    }

    /// The package directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `Cargo.toml` with `metadata` appended after `[package]`.
    pub fn metadata(&self, metadata: &str) -> &Project {
        let toml = format!(
            "[package]\nname = \"game\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{metadata}"
        );
        self.file("Cargo.toml", toml)
    }

    /// Writes a file relative to the package directory, creating folders.
    pub fn file(&self, path: &str, contents: impl AsRef<[u8]>) -> &Project {
        let path = self.path().join(path);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create dirs");
        std::fs::write(&path, contents).expect("write file");
        self
    }

    /// Writes a real PNG of `w`×`h` whose pixels depend on `seed`.
    pub fn png(&self, path: &str, w: u32, h: u32, seed: u32) -> &Project {
        self.file(path, png_bytes(w, h, seed))
    }

    /// Reads a file relative to the package directory.
    pub fn read(&self, path: &str) -> Vec<u8> {
        std::fs::read(self.path().join(path)).expect("read file")
    }

    /// Removes a file relative to the package directory.
    pub fn remove(&self, path: &str) -> &Project {
        std::fs::remove_file(self.path().join(path)).expect("remove file");
        self
    }

    /// Sets a file's mtime to now without changing its bytes (`touch`).
    pub fn touch(&self, path: &str) -> &Project {
        let file = std::fs::File::options()
            .append(true)
            .open(self.path().join(path))
            .expect("open");
        file.set_modified(std::time::SystemTime::now())
            .expect("set mtime");
        self
    }

    /// The asset cache directory the binary uses.
    pub fn cache_dir(&self) -> PathBuf {
        self.path().join("target/assets")
    }

    /// A command running the binary as `cargo assets <args>` in the package
    /// directory, with its target dir inside the package.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("assets")
            .args(args)
            .current_dir(self.path())
            .env("CARGO_TARGET_DIR", self.path().join("target"))
            .env_remove("CARGO_TERM_COLOR")
            .env_remove("CARGO_TERM_VERBOSE");
        // A developer's own remote cache stays out of the tests.
        for var in [
            "CARGO_ASSETS_REMOTE",
            "CARGO_ASSETS_REMOTE_WRITE",
            "CARGO_ASSETS_REMOTE_TIMEOUT",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }

    /// [`Project::run`] with extra environment variables.
    pub fn run_with(&self, args: &[&str], env: &[(&str, String)]) -> Run {
        let output = self
            .command(args)
            .args(["--message-format", "json"])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run cargo-assets");
        Run::from_output(output)
    }

    /// Runs `cargo assets <args> --message-format json` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = self
            .command(args)
            .args(["--message-format", "json"])
            .output()
            .expect("run cargo-assets");
        Run::from_output(output)
    }

    /// Starts `cargo assets <args> --message-format json` without waiting;
    /// [`Run::from_output`] of `wait_with_output()` reads it.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .args(["--message-format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start cargo-assets")
    }

    /// Starts `cargo assets watch --port 0 --message-format json` and waits
    /// for its first build to finish.
    pub fn watch(&self) -> Watch {
        let mut child = self
            .command(["watch", "--port", "0", "--message-format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cargo-assets watch");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with('{') {
                    let _ = tx.send(parse_message(&line).1);
                }
            }
        });
        let mut watch = Watch {
            child,
            messages,
            port: 0,
        };
        let started = watch.next("watch-started");
        watch.port = match serde_json::from_value(started) {
            Ok(Message::WatchStarted { port }) => port,
            other => panic!("`watch-started` read as {other:?}"),
        };
        watch.next("build-finished");
        watch
    }

    /// Runs `cargo assets build` and asserts it succeeded.
    pub fn build_ok(&self) -> Run {
        let run = self.run(&["build"]);
        assert!(run.success(), "build failed:\n{}", run.stderr);
        run
    }
}

/// A running `cargo assets watch` (see [`Project::watch`]), killed when
/// dropped.
pub struct Watch {
    /// The process.
    pub child: Child,
    messages: Receiver<Value>,
    /// Its hot-reload port.
    pub port: u16,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Watch {
    /// The next message with `reason`, skipping others; panics after 60 s.
    pub fn next(&self, reason: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{reason}` message in time"));
            if m["reason"] == reason {
                return m;
            }
        }
    }

    /// Every message that arrived so far.
    pub fn drain(&self) -> Vec<Value> {
        self.messages.try_iter().collect()
    }
}

/// A small, seeded, reproducible random source for tests (a 64-bit LCG).
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// A finished run of the binary with its JSON messages parsed.
#[derive(Debug)]
pub struct Run {
    /// Exit code.
    pub code: Option<i32>,
    /// Every JSON line of stdout, typed.
    pub typed: Vec<Message>,
    /// The same lines as JSON values, for checks on the exact form.
    pub messages: Vec<Value>,
    /// All of stderr.
    pub stderr: String,
}

impl Run {
    /// Parses a finished process's output.
    pub fn from_output(output: Output) -> Run {
        let stdout = String::from_utf8_lossy(&output.stdout);
        let (typed, messages) = stdout.lines().map(parse_message).unzip();
        Run {
            code: output.status.code(),
            typed,
            messages,
            stderr: String::from_utf8_lossy(&output.stderr).into(),
        }
    }

    /// Whether it exited 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The messages with `"reason": reason`.
    pub fn with_reason<'a>(&'a self, reason: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.messages.iter().filter(move |m| m["reason"] == reason)
    }

    /// The last message, which must be `build-finished`, as JSON.
    pub fn finished(&self) -> &Value {
        self.build_finished();
        self.messages.last().expect("build_finished found it")
    }

    /// The last message, which must be `build-finished`.
    pub fn build_finished(&self) -> &BuildFinished {
        match self.typed.last() {
            Some(Message::BuildFinished(finished)) => finished,
            Some(last) => panic!("last message is not `build-finished`: {last:?}"),
            None => panic!("no messages; stderr:\n{}", self.stderr),
        }
    }

    /// The path of parcel `name` from the `build-finished` message.
    pub fn parcel(&self, name: &str) -> PathBuf {
        let finished = self.build_finished();
        let path = finished.parcels.get(name);
        path.unwrap_or_else(|| panic!("no parcel `{name}` in {finished:?}"))
            .clone()
    }

    /// Assets whose processor ran (successfully or not), sorted.
    pub fn processed(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .typed
            .iter()
            .filter_map(|m| match m {
                Message::AssetProcessed { asset, .. } => Some(asset.to_string()),
                Message::AssetFailed {
                    asset,
                    why: Some(_),
                    ..
                } => Some(asset.to_string()),
                _ => None,
            })
            .collect();
        v.sort();
        v
    }

    /// The text of `asset`'s `asset-failed` message.
    pub fn failure_message(&self, asset: &str) -> String {
        let message = self.typed.iter().find_map(|m| match m {
            Message::AssetFailed {
                asset: failed,
                message,
                ..
            } if failed.as_str() == asset => Some(message.clone()),
            _ => None,
        });
        message.unwrap_or_else(|| panic!("`{asset}` did not fail; messages: {:#?}", self.typed))
    }

    /// The `asset-failed` message of `asset`, as JSON.
    pub fn failure(&self, asset: &str) -> &Value {
        self.with_reason("asset-failed")
            .find(|m| m["asset"] == asset)
            .unwrap_or_else(|| panic!("`{asset}` did not fail; messages: {:#?}", self.messages))
    }
}

/// PNG bytes of a `w`×`h` image whose pixels depend on `seed`.
pub fn png_bytes(w: u32, h: u32, seed: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        let v =
            (x.wrapping_mul(31) ^ y.wrapping_mul(17)).wrapping_add(seed.wrapping_mul(2654435761));
        image::Rgba([v as u8, (v >> 8) as u8, (v >> 16) as u8, 255])
    });
    encode_png(&img)
}

/// A `w`×`h` sprite: opaque-ish pixels depending on `seed` (alpha never
/// zero), inside a fully transparent border `border` pixels wide. Encode it
/// with [`encode_png`].
pub fn sprite_image(w: u32, h: u32, border: u32, seed: u32) -> image::RgbaImage {
    image::RgbaImage::from_fn(w, h, |x, y| {
        if x < border || y < border || x + border >= w || y + border >= h {
            return image::Rgba([0, 0, 0, 0]);
        }
        let v = (x.wrapping_mul(2246822519) ^ y.wrapping_mul(3266489917))
            .wrapping_add(seed.wrapping_mul(668265263));
        image::Rgba([
            v as u8,
            (v >> 8) as u8,
            (v >> 16) as u8,
            1 + (v >> 24) as u8 % 255,
        ])
    })
}

/// PNG bytes of `image`.
pub fn encode_png(image: &image::RgbaImage) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode PNG");
    out.into_inner()
}

/// Every asset's outputs in a cache (of the package `game`, as every
/// [`Project`] is named), as `asset → [(label, kind, hash)]`, from
/// the latest valid record of each asset in the record log, after checking
/// that each blob's bytes match its name. Used to compare builds for
/// determinism and crash safety.
pub fn cache_outputs(
    cache_dir: &Path,
    variant: &str,
) -> BTreeMap<String, Vec<(String, String, String)>> {
    let records = assets_build::unstable::read_records(cache_dir, "game", variant)
        .unwrap_or_else(|e| panic!("the record log of {}: {e}", cache_dir.display()));
    let store = assets_build::unstable::Store::open(cache_dir).expect("the cache opens");
    let mut out = BTreeMap::new();
    for (asset, record) in records {
        let mut outputs = Vec::new();
        for o in &record.outputs {
            let hash = o.hash.to_hex();
            // Stored, or held by a parcel of the cache (read from there).
            let bytes = store
                .get(&o.hash)
                .unwrap_or_else(|e| panic!("blob {hash} of `{asset}`: {e}"));
            assert_eq!(
                blob_hash(&bytes),
                hash,
                "blob {hash} of `{asset}` is corrupt"
            );
            outputs.push((o.label.clone(), o.kind.clone(), hash));
        }
        out.insert(asset.to_string(), outputs);
    }
    out
}

fn blob_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A glTF document as exporters write one: a triangle (buffer
/// `FlightHelmet.bin`, see [`gltf_bin`]) with a base-color texture whose
/// URI is `image_uri` (percent-encoded, as the spec wants), and a material
/// extension the validator does not know (`EXT_made_up`, used, not required).
pub fn gltf_json(image_uri: &str) -> String {
    format!(
        r#"{{
  "asset": {{"version": "2.0", "generator": "hand"}},
  "extensionsUsed": ["EXT_made_up"],
  "scene": 0,
  "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0, "name": "Helmet"}}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "material": 0}}]}}],
  "materials": [{{"pbrMetallicRoughness": {{"baseColorTexture": {{"index": 0}}}}, "extensions": {{"EXT_made_up": {{"x": 1}}}}}}],
  "textures": [{{"source": 0}}],
  "images": [{{"uri": "{image_uri}", "name": "leather"}}],
  "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                  "min": [0, 0, 0], "max": [1, 1, 0]}}],
  "bufferViews": [{{"buffer": 0, "byteOffset": 4, "byteLength": 36}}],
  "buffers": [{{"uri": "FlightHelmet.bin", "byteLength": 40}}]
}}"#
    )
}

/// The buffer of [`gltf_json`]: 4 bytes of padding, then three vertices
/// scaled by `scale`.
pub fn gltf_bin(scale: f32) -> Vec<u8> {
    let mut out = vec![0xEE; 4];
    for v in [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0f32] {
        out.extend_from_slice(&(v * scale).to_le_bytes());
    }
    out
}

/// A well-formed PNG whose header claims `w`×`h` pixels but holds almost no
/// data: a decoder without limits would try to allocate `w * h * 4` bytes.
pub fn huge_png_header(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA, no interlace
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

/// CRC-32 (ISO-HDLC), as PNG chunks use.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Where `tests/install-tools.sh` installs the Khronos glTF validator (npm's
/// `gltf-validator`), under the workspace's target dir.
pub fn gltf_validator_dir() -> PathBuf {
    cargo_crate::workspace().join("target/tools/node_modules/gltf-validator")
}

/// The directory of the npm package `name`, one of the independent
/// checkers `tests/install-tools.sh` installs under the workspace's
/// `target/tools/`; `None` when it is not installed (the caller says what
/// its test then skips).
pub fn npm_tool(name: &str) -> Option<PathBuf> {
    let dir = cargo_crate::workspace()
        .join("target/tools/node_modules")
        .join(name);
    dir.join("package.json").is_file().then_some(dir)
}

/// Runs the JavaScript `script` with node (`node -e`, as an ES module when
/// `module`), `args` after it: its standard output, or `None` when node
/// cannot be started. A script that fails panics with its standard error,
/// naming `what` ran.
pub fn run_node(
    what: &str,
    script: &str,
    module: bool,
    args: &[&std::ffi::OsStr],
) -> Option<Vec<u8>> {
    let mut node = Command::new("node");
    if module {
        node.arg("--input-type=module");
    }
    let out = node.args(["-e", script]).args(args).output().ok()?;
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

/// Runs the Python `script` (`python -c`) in the virtualenv
/// `tests/install-tools.sh` makes (`target/tools/venv`), `args` after it:
/// its standard output, or `None` when the venv, or a module the script
/// imports, is not installed (or, for CairoSVG, the cairo library it
/// loads: an `OSError`). A script that fails otherwise panics with its
/// standard error, naming `what` ran.
pub fn run_venv_python(what: &str, script: &str, args: &[&std::ffi::OsStr]) -> Option<Vec<u8>> {
    let python = cargo_crate::workspace().join("target/tools/venv/bin/python");
    if !python.is_file() {
        return None;
    }
    let out = Command::new(python)
        .args(["-c", script])
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let missing = stderr.contains("ModuleNotFoundError")
            || (stderr.contains("OSError") && stderr.contains("cairo"));
        assert!(missing, "{what} failed: {stderr}");
        return None;
    }
    Some(out.stdout)
}

/// The Khronos glTF validator's report on a glTF or GLB file, as JSON:
/// `None` when the validator (or `node`) is not installed, which the
/// caller says. External URIs are loaded from `resources` (the model's
/// source folder), percent-decoded as the spec says.
pub fn khronos_gltf_report(model: &[u8], resources: &Path) -> Option<Value> {
    let validator = gltf_validator_dir();
    if !validator.join("package.json").is_file() {
        return None;
    }
    let script = r#"
const [validatorDir, resources] = process.argv.slice(1);
const validator = require(validatorDir);
const fs = require('fs');
const path = require('path');
const data = new Uint8Array(fs.readFileSync(0));
validator.validateBytes(data, {
  maxIssues: 100,
  externalResourceFunction: uri =>
    fs.promises.readFile(path.join(resources, decodeURIComponent(uri))).then(b => new Uint8Array(b)),
}).then(report => console.log(JSON.stringify(report)))
  .catch(error => { console.error(String(error)); process.exit(2); });
"#;
    let mut child = Command::new("node")
        .args(["-e", script])
        .arg(&validator)
        .arg(resources)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(model).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the validator's report is JSON"))
}

/// The codes of a [`khronos_gltf_report`]'s errors (severity 0), sorted.
pub fn khronos_errors(report: &Value) -> Vec<String> {
    let messages = report["issues"]["messages"]
        .as_array()
        .into_iter()
        .flatten();
    let mut codes: Vec<String> = messages
        .filter(|m| m["severity"] == 0)
        .map(|m| {
            format!(
                "{} at {}",
                m["code"].as_str().unwrap_or("?"),
                m["pointer"].as_str().unwrap_or("")
            )
        })
        .collect();
    codes.sort();
    codes
}

/// A real sound file as a sound tool exports it (libsndfile: 0.25 s stereo
/// at 22,050 Hz, 5,512 frames): `ext` is `wav`, `ogg`, `flac` or `mp3`
/// (see `assets-build/tests/fixtures/audio/README.md`).
pub fn sound(ext: &str) -> Vec<u8> {
    let path =
        cargo_crate::workspace().join(format!("assets-build/tests/fixtures/audio/chirp.{ext}"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// [`sound`]`("wav")` with one sample changed by `edit`: another valid WAV
/// of the same length, for an edit that must rebuild a sound.
pub fn edited_wav(edit: u8) -> Vec<u8> {
    let mut wav = sound("wav");
    let last = wav.len() - 1;
    wav[last] ^= edit;
    wav
}
