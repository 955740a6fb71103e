//! `cargo assets watch` with a real game-side client: edits in place, saves by
//! rename, a file appearing where an include looked, and 2,000 files replaced
//! at once each end with the parcel rewritten on disk and a notice naming the
//! changed resources; a malformed client does not disturb it.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use assets_runtime::reload::{Notice, ReloadClient};
use assets_runtime::{ParcelBuf, ResourceId};
use assets_test_support::{Project, Watch, encode_png, sprite_image};
use serde_json::Value;

const FILES: usize = 2_000;

/// A game-side client of `watch`, once the watcher has greeted it.
fn connect(watch: &Watch) -> ReloadClient {
    let mut client = ReloadClient::new(("127.0.0.1", watch.port)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client.is_connected() {
        client.poll();
        assert!(Instant::now() < deadline, "could not connect");
        std::thread::sleep(Duration::from_millis(10));
    }
    client
}
/// Polls until notices name every resource of `names`; returns them.
fn notices_naming(client: &mut ReloadClient, names: &[&str]) -> Vec<Notice> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got: Vec<Notice> = Vec::new();
    loop {
        got.extend(client.poll());
        let seen = |n: &&str| got.iter().any(|g| g.changed.iter().any(|c| c == n));
        if names.iter().all(seen) {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "no notice naming {names:?}; got {got:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn sprite_width(notice: &Notice, name: &str) -> u32 {
    let parcel = notice.open().unwrap();
    let parcel = parcel.parcel();
    parcel
        .sprite(ResourceId::of(name))
        .unwrap()
        .frame
        .source_width
}

#[test]
fn watch_rebuilds_on_every_kind_of_save_and_notifies_the_game() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
include-dirs = ["lib"]
"#,
    )
    .png("assets/sprites/a.png", 4, 4, 1)
    .file("assets/lib/common.wgsl", "fn lib() {}\n")
    .file("assets/shaders/main.wgsl", "#include \"common.wgsl\"\n");
    for i in 0..FILES {
        p.file(&format!("assets/data/f{i:04}.txt"), format!("file {i}\n"));
    }
    let watch = p.watch();
    let mut client = connect(&watch);

    // A malformed client: it talks (the protocol is one-way) and is dropped.
    let mut rogue = TcpStream::connect(("127.0.0.1", watch.port)).unwrap();
    rogue.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();

    // (a) Overwritten in place.
    p.png("assets/sprites/a.png", 6, 4, 2);
    let notices = notices_naming(&mut client, &["sprites/a.png"]);
    assert_eq!(sprite_width(notices.last().unwrap(), "sprites/a.png"), 6);

    // (b) Saved by writing a temp file and renaming it over the original.
    p.png("assets/sprites/.a.png.swp", 7, 4, 3);
    std::fs::rename(
        p.path().join("assets/sprites/.a.png.swp"),
        p.path().join("assets/sprites/a.png"),
    )
    .unwrap();
    let notices = notices_naming(&mut client, &["sprites/a.png"]);
    assert_eq!(sprite_width(notices.last().unwrap(), "sprites/a.png"), 7);

    // (c) A file created where an include looked and found nothing.
    p.file("assets/shaders/common.wgsl", "fn nearer() {}\n");
    notices_naming(&mut client, &["shaders/main.wgsl", "shaders/common.wgsl"]);

    // (d) 2,000 files replaced at once: every one reported, in few builds.
    watch.drain();
    for i in 0..FILES {
        p.file(
            &format!("assets/data/f{i:04}.txt"),
            format!("file {i}, edited\n"),
        );
    }
    let names: Vec<String> = (0..FILES).map(|i| format!("data/f{i:04}.txt")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let notices = notices_naming(&mut client, &names);
    let parcel = notices.last().unwrap().open().unwrap();
    assert_eq!(
        parcel
            .parcel()
            .text(ResourceId::of("data/f1999.txt"))
            .unwrap(),
        "file 1999, edited\n"
    );
    let builds = watch
        .drain()
        .iter()
        .filter(|m| m["reason"] == "build-finished")
        .count();
    assert!(
        builds <= 4,
        "{builds} builds for one burst of {FILES} writes"
    );

    // The rogue client is gone, the good one still served.
    let mut byte = [0u8; 64];
    rogue
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut received = Vec::new();
    let closed = loop {
        match std::io::Read::read(&mut rogue, &mut byte) {
            Ok(0) => break true,
            Ok(n) => received.extend_from_slice(&byte[..n]),
            // Closed with its unread request still queued: a reset.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    assert!(closed, "the rogue client was not dropped");
    assert_eq!(
        received, b"cargo-assets-reload 2\n",
        "it got nothing but the greeting"
    );
    assert!(client.is_connected());
}

#[test]
fn a_failed_build_keeps_the_parcel_and_watching_goes_on() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.png("assets/a.png", 3, 3, 1);
    let watch = p.watch();
    p.file("assets/a.png", b"not a png");
    let finished = watch.next("build-finished");
    assert_eq!(finished["success"], false);
    p.png("assets/a.png", 5, 3, 2);
    let mut done = watch.next("build-finished");
    while done["success"] != true {
        done = watch.next("build-finished");
    }
    let parcel = ParcelBuf::open(std::path::Path::new(
        done["parcels"]["main"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(
        parcel
            .parcel()
            .image(ResourceId::of("a.png"))
            .unwrap()
            .header
            .width,
        5
    );
}

#[test]
fn an_idle_watcher_stays_idle_and_one_save_is_one_build() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "*.wgsl"
includes = true
"#,
    )
    .png("assets/a.png", 3, 3, 1)
    .file("assets/lib.wgsl", "fn lib() {}\n")
    .file("assets/main.wgsl", "#include \"lib.wgsl\"\n");
    let watch = p.watch();
    let builds = |wait_ms| {
        std::thread::sleep(Duration::from_millis(wait_ms));
        watch
            .drain()
            .iter()
            .filter(|m| m["reason"] == "build-finished")
            .count()
    };
    // Its own build opens every input and the manifest: that is no change.
    assert_eq!(builds(800), 0, "rebuilt with nothing changed");
    // Nor is someone else reading them (a game, an editor).
    for f in ["Cargo.toml", "assets/a.png", "assets/main.wgsl"] {
        std::fs::read(p.path().join(f)).unwrap();
    }
    assert_eq!(builds(500), 0, "rebuilt after files were only read");
    p.file("assets/lib.wgsl", "fn lib2() {}\n");
    watch.next("build-finished");
    assert_eq!(builds(800), 0, "one save, more than one build");
}

/// A virtual workspace of two packages with assets, `game` and `editor`;
/// `editor_metadata` is added to editor's `[package.metadata.assets]`.
fn two_package_workspace(editor_metadata: &str) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.remove("src/lib.rs");
    p.file(
        "Cargo.toml",
        "[workspace]\nmembers = [\"game\", \"editor\"]\nresolver = \"2\"\n",
    );
    for name in ["game", "editor"] {
        let extra = if name == "editor" {
            editor_metadata
        } else {
            ""
        };
        p.file(
            &format!("{name}/Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [package.metadata.assets]\nroot = \"assets\"\n{extra}"
            ),
        )
        .file(&format!("{name}/src/lib.rs"), "")
        .file(&format!("{name}/assets/{name}.txt"), format!("{name}\n"));
    }
    p
}

#[test]
fn a_workspace_is_watched_at_once_and_a_change_rebuilds_only_its_package() {
    let p = two_package_workspace("");
    let watch = p.watch();
    // `start` waited for the first package's build; the other follows.
    watch.next("build-finished");
    let mut client = connect(&watch);

    p.file("editor/assets/editor.txt", "edited\n");
    let notices = notices_naming(&mut client, &["editor.txt"]);
    let finished = watch.next("build-finished");
    assert_eq!(finished["package"], "editor");
    let parcel = notices[0].open().unwrap();
    let text = parcel.parcel().text(ResourceId::of("editor.txt")).unwrap();
    assert_eq!(text, "edited\n");
    std::thread::sleep(Duration::from_millis(500));
    let others: Vec<Value> = watch
        .drain()
        .into_iter()
        .filter(|m| m["reason"] == "build-finished")
        .collect();
    assert!(others.is_empty(), "`game` was rebuilt too: {others:?}");

    // Each package's manifest is watched, and names only its own package.
    p.file(
        "game/Cargo.toml",
        "[package]\nname = \"game\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [package.metadata.assets]\nroot = \"assets\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"*.txt\"\nprocessor = \"copy\"\n",
    );
    assert_eq!(watch.next("build-finished")["package"], "game");
}

#[test]
fn several_packages_with_processor_crates_ask_for_dash_p() {
    let p = two_package_workspace("processors = [\"level-processor\"]\n");
    let run = p.run(&["watch"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert!(
        run.stderr.contains("`editor` uses processor crates")
            && run
                .stderr
                .contains("help: watch it on its own with `-p editor`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_file_outside_the_roots_that_a_tool_read_is_watched_too() {
    // The tool reads `tools/palette.txt` (outside the asset root) and says
    // so in its depfile; editing it must rebuild the level while watching.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "*.lvl"
processor = "command"
command = ["sh", "-c", "cat \"$0\" tools/palette.txt > \"$1\"; echo \"$1: tools/palette.txt\" > \"$2\"", "{input}", "{output}", "{depfile}"]
"#,
    )
    .file("assets/one.lvl", "level\n")
    .file("tools/palette.txt", "red\n");
    let watch = p.watch();
    let mut client = connect(&watch);
    p.file("tools/palette.txt", "blue\n");
    let notices = notices_naming(&mut client, &["one.lvl"]);
    let parcel = notices.last().unwrap().open().unwrap();
    let bytes = parcel.parcel().bytes(ResourceId::of("one.lvl")).unwrap();
    assert_eq!(&*bytes, b"level\nblue\n");
}

/// Dates a file an hour back (a different second each time): freshness
/// re-hashes a file modified within two seconds of a build whatever its
/// stamp says, which would hide a change the watcher failed to report.
fn age(p: &Project, path: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let back = Duration::from_secs(3600 - CALLS.fetch_add(1, Ordering::Relaxed));
    let file = std::fs::File::options()
        .write(true)
        .open(p.path().join(path))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() - back)
        .unwrap();
}

/// Waits for the builds a change started to finish and the watcher to go
/// quiet; the names of the steps they ran.
fn settled(watch: &Watch) -> Vec<String> {
    let mut ran = Vec::new();
    let mut note = |messages: &[Value]| {
        for m in messages {
            if m["reason"] == "asset-processed" || m["reason"] == "asset-failed" {
                ran.push(m["asset"].as_str().unwrap_or_default().to_owned());
            }
        }
    };
    let mut finished = false;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let messages = watch.drain();
        note(&messages);
        finished |= messages.iter().any(|m| m["reason"] == "build-finished");
        if finished && messages.is_empty() {
            return ran;
        }
    }
}

#[test]
fn after_every_kind_of_change_watch_leaves_a_build_nothing_to_do() {
    // The watched pipeline trusts the watcher's reports: it keeps the walk
    // and every stat under the roots. Shaped like a real game's tree (a
    // glTF with its buffer and a texture whose name has a space, a shader
    // include looked for in a folder that does not exist yet, a sound
    // saved by rename), each change is checked the same way: once watch
    // has settled, `cargo assets build` must run nothing and rewrite no
    // parcel. Files are dated out of the racy window, so a change the
    // watcher did not report would stay unseen.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    const MODEL: &str = "assets/models/FlightHelmet/FlightHelmet.gltf";
    const BIN: &str = "assets/models/FlightHelmet/FlightHelmet.bin";
    const TEXTURE: &str = "assets/models/FlightHelmet/Leather Parts.png";
    const SOUND: &str = "assets/sounds/Windless Slopes.wav";
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
include-dirs = ["shaders/lib"]
"#,
    )
    .file(MODEL, assets_test_support::gltf_json("Leather%20Parts.png"))
    .file(BIN, assets_test_support::gltf_bin(1.0))
    .png(TEXTURE, 8, 8, 7)
    .file("assets/shaders/lib/Extra/Tint.wgsl", "fn tint() {}\n")
    .file("assets/shaders/main.wgsl", "#include \"Extra/Tint.wgsl\"\n")
    .file(SOUND, assets_test_support::edited_wav(1))
    .file("assets/branding/icon.svg", "<svg/>");
    for f in [MODEL, BIN, TEXTURE, SOUND] {
        age(&p, f);
    }
    let watch = p.watch();
    let check = |what: &str, must_run: &[&str]| {
        let ran = settled(&watch);
        for step in must_run {
            assert!(
                ran.iter().any(|r| r == step),
                "{what}: {step} did not run: {ran:?}"
            );
        }
        let after = p.build_ok();
        assert_eq!(
            after.finished()["ran"],
            0,
            "{what}: watch left work: {:?}",
            after.messages
        );
        assert_eq!(
            after.with_reason("parcel-written").count(),
            0,
            "{what}: a stale parcel"
        );
    };

    // A byte of the model's buffer, its size unchanged.
    let mut bin = p.read(BIN);
    bin[5] ^= 1;
    p.file(BIN, &bin);
    age(&p, BIN);
    check("buffer", &["models/FlightHelmet/FlightHelmet.gltf"]);

    // The texture the model names (the model only names it).
    p.png(TEXTURE, 8, 8, 8);
    age(&p, TEXTURE);
    check("texture", &["models/FlightHelmet/Leather Parts.png"]);

    // A folder created where the include looked first, with the file in it.
    p.file("assets/shaders/Extra/Tint.wgsl", "fn nearer() {}\n");
    age(&p, "assets/shaders/Extra/Tint.wgsl");
    check("new include folder", &["shaders/main.wgsl"]);

    // A sound saved by writing a hidden temporary file and renaming it.
    p.file(
        "assets/sounds/.Windless Slopes.wav.swp",
        assets_test_support::edited_wav(2),
    );
    age(&p, "assets/sounds/.Windless Slopes.wav.swp");
    std::fs::rename(
        p.path().join("assets/sounds/.Windless Slopes.wav.swp"),
        p.path().join(SOUND),
    )
    .unwrap();
    check("safe write", &["sounds/Windless Slopes.wav"]);

    // A new folder of levels, then the folder renamed.
    p.file("assets/levels/Act One/Intro Text.txt", "hello");
    check("new folder", &["levels/Act One/Intro Text.txt"]);
    std::fs::rename(
        p.path().join("assets/levels/Act One"),
        p.path().join("assets/levels/Act Two"),
    )
    .unwrap();
    check("renamed folder", &["levels/Act Two/Intro Text.txt"]);

    // A removed file, and the include's folder removed: back to the library.
    std::fs::remove_file(p.path().join("assets/branding/icon.svg")).unwrap();
    check("removed file", &[]);
    std::fs::remove_dir_all(p.path().join("assets/shaders/Extra")).unwrap();
    check("removed include folder", &["shaders/main.wgsl"]);
}

#[cfg(unix)]
#[test]
fn a_change_the_watcher_never_reported_is_built_once_watch_is_idle() {
    // A file under the root that is a hard link to one outside it: a
    // write through the outside name reaches the same bytes, but the
    // watcher, which watches the root's folders, hears nothing.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("shared/palette.txt", "red")
        .file("assets/other.txt", "one");
    std::fs::create_dir_all(p.path().join("assets/data")).unwrap();
    std::fs::hard_link(
        p.path().join("shared/palette.txt"),
        p.path().join("assets/data/palette.txt"),
    )
    .unwrap();
    age(&p, "assets/data/palette.txt");
    let watch = p.watch();
    let mut client = connect(&watch);
    // A save, so that a build finds the palette fresh and keeps its stat.
    p.file("assets/other.txt", "two");
    notices_naming(&mut client, &["other.txt"]);

    std::fs::write(p.path().join("shared/palette.txt"), "blue").unwrap();
    age(&p, "shared/palette.txt");
    // The next save is built as reported, the palette taken as kept; the
    // check that follows, once watch is idle, finds it changed and builds
    // it.
    p.file("assets/other.txt", "three");
    let notices = notices_naming(&mut client, &["data/palette.txt"]);
    let parcel = notices.last().unwrap().open().unwrap();
    let palette = parcel
        .parcel()
        .bytes(ResourceId::of("data/palette.txt"))
        .unwrap();
    assert_eq!(&*palette, b"blue");
    // Fresh in the save's builds (taken as kept, as designed), built in
    // the one after the check.
    let messages = watch.drain();
    let palette = |reason: &str| {
        messages
            .iter()
            .position(|m| m["reason"] == reason && m["asset"] == "data/palette.txt")
    };
    let built = palette("asset-processed").expect("the palette was built");
    let fresh_before = messages[..built]
        .iter()
        .filter(|m| m["reason"] == "asset-fresh" && m["asset"] == "data/palette.txt")
        .count();
    assert_eq!(fresh_before, 2, "{messages:?}");
}

#[test]
fn an_edit_reaches_the_game_as_a_patch_and_the_parcel_is_whole_once_idle() {
    // Shaped like a game whose parcel is mostly large resources (music,
    // other atlases): a sprite saved is a patch of a few kilobytes over a
    // parcel the watcher does not write again until it is idle.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"
atlas = "ui"

[package.metadata.assets.atlases.ui]
max-size = 256
"#,
    )
    .png("assets/sprites/button.png", 8, 6, 1)
    .png("assets/sprites/icons/Heart.png", 5, 5, 2)
    .file("assets/text/credits.txt", "made by us\n");
    let mut noise = assets_test_support::Lcg(7);
    let music: Vec<u8> = (0..600_000).map(|_| noise.below(256) as u8).collect();
    // Raw PCM, as a game streams its music: copied as it is.
    p.file("assets/sounds/Main Theme.raw", &music);
    let watch = p.watch();
    let mut client = connect(&watch);

    p.png("assets/sprites/button.png", 11, 6, 3);
    p.remove("assets/text/credits.txt");
    let notices = notices_naming(&mut client, &["sprites/button.png", "text/credits.txt"]);
    let notice = notices.last().unwrap();
    let patch = notice.patch.clone().expect("the change came as a patch");
    assert!(
        std::fs::metadata(&patch).unwrap().len() * 10
            < std::fs::metadata(&notice.path).unwrap().len(),
        "the patch is a small part of the parcel"
    );
    let seen = notice.open().unwrap();
    let seen = seen.parcel();
    assert_eq!(sprite_width(notice, "sprites/button.png"), 11);
    assert!(seen.by_name("text/credits.txt").is_none(), "removed");
    assert_eq!(
        &*seen.bytes(ResourceId::of("sounds/Main Theme.raw")).unwrap(),
        &music[..],
        "the base shows through"
    );
    // The base alone is still the parcel before the edit.
    let base = ParcelBuf::open(&notice.path).unwrap();
    assert!(base.parcel().by_name("text/credits.txt").is_some());
    let written = watch.next("parcel-written");
    assert_eq!(written["patch"].as_str(), Some(patch.to_str().unwrap()));

    // Once idle: the parcel written whole, the game told to drop the patch.
    let whole = loop {
        let mut got = client.poll();
        if let Some(n) = got.pop() {
            break n;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(whole.patch, None);
    assert_eq!(whole.changed, Vec::<String>::new(), "nothing new to show");
    assert!(!patch.exists());
    let parcel = whole.open().unwrap();
    assert_eq!(sprite_width(&whole, "sprites/button.png"), 11);
    assert!(parcel.parcel().by_name("text/credits.txt").is_none());
    // Said on the terminal too, and not as a build.
    while watch.next("parcel-written").get("patch").is_some() {}
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !watch
            .drain()
            .iter()
            .any(|m| m["reason"] == "build-finished"),
        "writing the parcel whole is no build"
    );
    drop(watch);

    // What `cargo assets build` would write: it finds nothing to do.
    let run = p.build_ok();
    assert_eq!(run.processed(), Vec::<String>::new());
    assert_eq!(run.with_reason("parcel-written").count(), 0);
}

/// Where sprites `a`, `b` and `c` lie (page, x, y, width, height), as
/// `sprite` gives their sprites.
fn places<'a>(
    sprite: impl Fn(ResourceId) -> Option<assets_runtime::Sprite<'a>>,
) -> [(u32, u32, u32, u32, u32); 3] {
    ["a", "b", "c"].map(|s| {
        let f = sprite(ResourceId::of(&format!("sprites/{s}.png")))
            .unwrap()
            .frame;
        (f.page_index, f.x, f.y, f.w, f.h)
    })
}

#[test]
fn a_sprite_redrawn_at_its_size_moves_nothing_and_reaches_the_game_as_its_page_alone() {
    // Three sprites, one page each: a sprite redrawn at its own size keeps
    // every frame where it was, and the patch holds its one page (a third
    // of the parcel, once over the limit of what a patch could hold).
    let sprite = |seed| encode_png(&sprite_image(200, 200, 3, seed));
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"

[package.metadata.assets.atlases.main]
max-size = 208
padding = 0
"#,
    )
    .file("assets/sprites/a.png", sprite(1))
    .file("assets/sprites/b.png", sprite(2))
    .file("assets/sprites/c.png", sprite(3));
    let watch = p.watch();
    let mut client = connect(&watch);
    let frames = |n: &Notice| {
        let seen = n.open().unwrap();
        places(|id| seen.parcel().sprite(id))
    };
    p.file("assets/sprites/b.png", sprite(9));
    let notices = notices_naming(&mut client, &["sprites/b.png"]);
    let notice = notices.last().unwrap();
    let written = watch.next("parcel-written");
    let page = format!("atlas:main#{}", frames(notice)[1].0);
    assert_eq!(
        written["changed"],
        serde_json::json!([page, "sprites/b.png"]),
        "{written}"
    );
    let patch = notice.patch.clone().expect("one page of three is a patch");
    let base = ParcelBuf::open(&notice.path).unwrap();
    let before = places(|id| base.parcel().sprite(id));
    assert_eq!(frames(notice), before, "every frame where it was");
    assert!(
        std::fs::metadata(&patch).unwrap().len() * 2
            < std::fs::metadata(&notice.path).unwrap().len()
    );
}

#[test]
fn a_connection_flood_neither_wedges_watch_nor_holds_its_descriptors() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("assets/notes.txt", "one\n");
    let watch = p.watch();
    // Hundreds of idle connections, never read: the watcher keeps a bounded
    // number, the newest.
    let flood: Vec<std::net::TcpStream> = (0..400)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", watch.port)).unwrap())
        .collect();
    // A client that sends anything breaks the one-way protocol: it is
    // dropped without waiting for a notice.
    let mut garbage = std::net::TcpStream::connect(("127.0.0.1", watch.port)).unwrap();
    std::io::Write::write_all(&mut garbage, b"GET / HTTP/1.1\r\n\r\n").unwrap();
    garbage
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut seen = Vec::new();
    let closed = loop {
        let mut buf = [0u8; 256];
        match std::io::Read::read(&mut garbage, &mut buf) {
            Ok(0) => break true,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    assert!(
        closed,
        "the garbage sender was not dropped: {:?}",
        String::from_utf8_lossy(&seen)
    );
    // The watcher holds far fewer descriptors than connections came.
    let fds = std::fs::read_dir(format!("/proc/{}/fd", watch.child.id()));
    if let Ok(fds) = fds {
        let open = fds.count();
        assert!(
            open < 200,
            "the watcher holds {open} descriptors after 400 connections"
        );
    }
    drop(flood);
    // A game connecting now is served, and saves still build and notify.
    let mut client = connect(&watch);
    p.file("assets/notes.txt", "two\n");
    notices_naming(&mut client, &["notes.txt"]);
    watch.next("build-finished");
}
