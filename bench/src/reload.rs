//! Save-to-notified latency: `cargo assets watch` on a 2,000-sprite atlas
//! (the project of [`crate::atlas`]), a game-side [`ReloadClient`] polling,
//! and one sprite saved; the time from just before the write to the notice
//! naming it. It covers the file event, the settle window
//! (`QUIET` in cargo-assets's `commands/watch.rs`), the build (the sprite, its
//! atlas, the parcel) and the notice.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use assets_runtime::reload::ReloadClient;

use crate::atlas::{generate, sprite_png};
use crate::measure::Sample;

/// Median latency over a few saves, as a Markdown table; and the project,
/// which the watcher (a thread that never ends) keeps using.
pub fn run(quick: bool) -> (String, tempfile::TempDir) {
    let (n, saves) = if quick { (100, 2) } else { (2_000, 21) };
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().to_owned();
    generate(&dir, n);
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let manifest = dir.join("Cargo.toml");
    let target = dir.join("target");
    // Built first, as after a `cargo build`: the watcher's own first build is
    // then a no-op, and the first save cannot be mistaken for it.
    let code = cargo_assets::run(
        [
            "cargo-assets".into(),
            "build".into(),
            "--quiet".into(),
            "--manifest-path".into(),
            manifest.clone().into_os_string(),
            "--target-dir".into(),
            target.clone().into_os_string(),
        ],
        &[],
    );
    assert!(
        code == std::process::ExitCode::SUCCESS,
        "the first build failed"
    );
    std::thread::spawn(move || {
        let args = [
            "cargo-assets".into(),
            "watch".into(),
            "--quiet".into(),
            "--port".into(),
            port.to_string().into(),
            "--manifest-path".into(),
            manifest.into_os_string(),
            "--target-dir".into(),
            target.into_os_string(),
        ];
        cargo_assets::run(args, &[]);
    });
    let mut client = ReloadClient::new(("127.0.0.1", port)).expect("address");
    // The first build happens before the client can tell; wait for a connection
    // and then for a quiet moment.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !client.is_connected() {
        client.poll();
        assert!(Instant::now() < deadline, "the watcher did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(2500));
    client.poll();
    // Two kinds of save: a sprite redrawn at another size (the atlas packs
    // anew) and one redrawn at its own size and trim (every other sprite
    // keeps its place).
    let mut s = 0;
    let mut save = |same_size: bool| {
        let i = (s * 211 + usize::from(same_size) * 97) % n as usize;
        let name = format!("sprites/d{:02}/s{i}.png", i / 100);
        let path = dir.join("assets").join(&name);
        let bytes = if same_size {
            recolored(&std::fs::read(&path).expect("read sprite"))
        } else {
            sprite_png(40, 30, 2, 20_000 + s as u32)
        };
        s += 1;
        let start = Instant::now();
        std::fs::write(&path, bytes).expect("save sprite");
        let t = loop {
            if client
                .poll()
                .iter()
                .any(|notice| notice.changed.contains(&name))
            {
                break start.elapsed();
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no notice for {name}"
            );
            // Poll like a game at 1,000 fps; spinning would steal a core from the build.
            std::thread::sleep(Duration::from_millis(1));
        };
        std::thread::sleep(Duration::from_millis(300));
        t
    };
    let resized = Sample::of(saves, || save(false));
    let same = Sample::of(saves, || save(true));
    let table = format!(
        "| sprites in the atlas | the saved sprite | saves | save → notified, median (min–max) ms |\n|---:|---|---:|---:|\n\
         | {n} | redrawn at another size | {saves} | {} |\n\
         | {n} | redrawn at its own size | {saves} | {} |\n",
        resized.ms(),
        same.ms()
    );
    (table, tmp)
}

/// The PNG `bytes` with every visible pixel's colour inverted: the same
/// size and the same transparent border, so the same trimmed size.
fn recolored(bytes: &[u8]) -> Vec<u8> {
    let mut img = image::load_from_memory(bytes)
        .expect("a PNG sprite")
        .to_rgba8();
    for p in img.pixels_mut() {
        if p[3] > 0 {
            p[0] = !p[0];
            p[1] = !p[1];
            p[2] = !p[2];
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .expect("encode");
    out.into_inner()
}
