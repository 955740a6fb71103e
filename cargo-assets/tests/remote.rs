//! The remote cache through the real binary against a real S3 server
//! process (`assets-s3-server`: s3s-fs over a temp directory), reached
//! through OpenDAL's S3 client exactly as a bucket would be.
//!
//! Two "machines" are two copies of the same package at different paths,
//! each with its own target directory: A builds and uploads, B builds from
//! the remote.

use assets_test_support::s3_server::S3Server;
use assets_test_support::{Lcg, Project, Run};

const METADATA: &str = r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"
atlas = "ui"

[[package.metadata.assets.rules]]
match = "data/*.bin"
processor = "copy"

[package.metadata.assets.atlases.ui]
max-size = 256
"#;

/// A package with sprites in an atlas, texts, images and one output large
/// enough to be a blob of its own on the remote (not inlined).
fn machine() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(METADATA);
    for i in 0..12 {
        p.png(&format!("assets/sprites/s{i:02}.png"), 16 + i, 12, i);
    }
    for i in 0..6 {
        p.file(&format!("assets/text/t{i}.txt"), format!("line {i}\n"));
        p.png(&format!("assets/images/i{i}.png"), 20, 20, 100 + i);
    }
    let mut rng = Lcg(7);
    let big: Vec<u8> = (0..400_000).map(|_| rng.below(256) as u8).collect();
    p.file("assets/data/level.bin", big);
    p
}

/// Every asset of [`machine`].
const ASSETS: usize = 12 + 6 + 6 + 1 + 1;

fn build(p: &Project, server: &S3Server, extra: &[&str]) -> Run {
    let mut args = vec!["build"];
    args.extend_from_slice(extra);
    p.run_with(&args, &server.env("team"))
}

fn remote_warnings(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.contains("warning") && l.contains("remote cache"))
        .collect()
}

/// A server, and machine A (kept alive with its files) after a writing
/// build from scratch into it.
fn uploaded_by_a() -> (S3Server, Project, Run) {
    let server = S3Server::start();
    let a = machine();
    let uploaded = build(&a, &server, &["--remote-write"]);
    assert!(uploaded.success(), "{}", uploaded.stderr);
    (server, a, uploaded)
}

fn parcel_bytes(run: &Run) -> Vec<u8> {
    std::fs::read(run.parcel("main")).unwrap()
}

#[test]
fn a_second_machine_builds_from_the_remote_with_no_processor_run() {
    let (server, a, uploaded) = uploaded_by_a();
    assert_eq!(uploaded.processed().len(), ASSETS);
    let remote = uploaded.build_finished().remote.clone().unwrap();
    assert_eq!(remote.uploaded, ASSETS, "{remote:?}");
    assert!(!remote.unavailable);
    // One entry per step; blobs only for outputs too large to ride inside.
    let objects = server.objects("team");
    let entries = objects.iter().filter(|o| o.starts_with("ac/")).count();
    let blobs = objects.iter().filter(|o| o.starts_with("cas/")).count();
    assert_eq!(entries, ASSETS, "{objects:?}");
    assert_eq!(blobs, 1, "only the 400 kB file: {objects:?}");
    // And one bundle per folder of two or more assets: sprites, text, images.
    let bundles = objects.iter().filter(|o| o.starts_with("bundle/")).count();
    assert_eq!(bundles, 3, "{objects:?}");

    let b = machine();
    assert_ne!(a.path(), b.path());
    let fetched = build(&b, &server, &[]);
    assert!(fetched.success(), "{}", fetched.stderr);
    assert_eq!(
        fetched.processed(),
        Vec::<String>::new(),
        "{}",
        fetched.stderr
    );
    let finished = fetched.build_finished();
    assert_eq!((finished.fetched, finished.ran), (ASSETS, 0));
    assert_eq!(finished.remote.as_ref().unwrap().uploaded, 0);
    assert!(finished.remote.as_ref().unwrap().bytes_down > 400_000);
    assert_eq!(parcel_bytes(&fetched), parcel_bytes(&uploaded));
    assert!(remote_warnings(&fetched).is_empty(), "{}", fetched.stderr);

    // Fetched steps are local now: the next build is a no-op without the remote.
    let again = b.build_ok();
    assert_eq!(again.build_finished().fresh, ASSETS);
    let why = b.run(&["why", "sprites/s03.png"]);
    let answer = why.with_reason("why").next().unwrap();
    assert_eq!(answer["fetched_from"], "s3://assets-cache/team", "{answer}");
    assert_eq!(answer["fresh"], true);

    // An edit on B: that sprite and its atlas run here; the rest came from A.
    let c = machine();
    c.png("assets/sprites/s05.png", 30, 30, 999);
    let edited = build(&c, &server, &[]);
    assert!(edited.success(), "{}", edited.stderr);
    assert_eq!(edited.processed(), ["atlas:ui", "sprites/s05.png"]);
    assert_eq!(edited.build_finished().fetched, ASSETS - 2);
}

#[test]
fn a_corrupt_remote_blob_or_entry_is_rejected_and_built_here() {
    let (server, _a, uploaded) = uploaded_by_a();
    let bucket = server.root().join(assets_test_support::s3_server::BUCKET);
    // Entries one by one are checked here (bundles: the next test).
    std::fs::remove_dir_all(bucket.join("team/bundle")).unwrap();
    // The large blob: flip a byte in the middle.
    let blob = server
        .objects("team")
        .into_iter()
        .find(|o| o.starts_with("cas/"))
        .unwrap();
    let blob_path = bucket.join("team").join(&blob);
    let mut bytes = std::fs::read(&blob_path).unwrap();
    bytes[200_000] ^= 0x40;
    std::fs::write(&blob_path, bytes).unwrap();
    // A small output inside an entry: the text's, whose entry ends with it.
    let text_entry = server
        .objects("team")
        .into_iter()
        .filter(|o| o.starts_with("ac/"))
        .find(|o| {
            std::fs::read(bucket.join("team").join(o))
                .unwrap()
                .ends_with(b"line 3\n")
        })
        .unwrap();
    let entry_path = bucket.join("team").join(&text_entry);
    let mut bytes = std::fs::read(&entry_path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] = b'9';
    std::fs::write(&entry_path, bytes).unwrap();

    let b = machine();
    let run = build(&b, &server, &[]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed(), ["data/level.bin", "text/t3.txt"]);
    let warnings = remote_warnings(&run);
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    assert!(warnings.iter().any(|w| w.contains("`data/level.bin`")));
    assert!(warnings.iter().any(|w| w.contains("`text/t3.txt`")));
    assert_eq!(run.build_finished().remote.as_ref().unwrap().rejected, 2);
    assert_eq!(parcel_bytes(&run), parcel_bytes(&uploaded));
}

#[test]
fn a_folder_comes_in_one_bundle_and_a_corrupt_member_is_rejected() {
    let (server, _a, uploaded) = uploaded_by_a();
    let team = server
        .root()
        .join(assets_test_support::s3_server::BUCKET)
        .join("team");
    // Without the entries one by one, only bundles can serve a step: the
    // three folders' steps come from them; the lone level file and the
    // atlas (no bundle) run here.
    std::fs::remove_dir_all(team.join("ac")).unwrap();
    // One text's output inside the text folder's bundle: flipped.
    let text_bundle = server
        .objects("team")
        .into_iter()
        .filter(|o| o.starts_with("bundle/"))
        .find(|o| {
            let bytes = std::fs::read(team.join(o)).unwrap();
            bytes.windows(7).any(|w| w == b"line 3\n")
        })
        .expect("the text folder's bundle");
    let path = team.join(&text_bundle);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(7).position(|w| w == b"line 3\n").unwrap();
    bytes[at + 5] = b'9';
    std::fs::write(&path, bytes).unwrap();

    let b = machine();
    let run = build(&b, &server, &[]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.processed(),
        ["atlas:ui", "data/level.bin", "text/t3.txt"],
        "{}",
        run.stderr
    );
    assert_eq!(run.build_finished().fetched, ASSETS - 3);
    let warnings = remote_warnings(&run);
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("`text/t3.txt`"), "{}", warnings[0]);
    assert_eq!(parcel_bytes(&run), parcel_bytes(&uploaded));
}

#[test]
fn read_only_mode_uploads_nothing() {
    let server = S3Server::start();
    let a = machine();
    let run = build(&a, &server, &[]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed().len(), ASSETS);
    assert_eq!(run.build_finished().remote.as_ref().unwrap().uploaded, 0);
    assert_eq!(server.objects("team"), Vec::<String>::new());
    // `CARGO_ASSETS_REMOTE_WRITE=1` does what `--remote-write` does.
    let b = machine();
    let mut env = server.env("team");
    env.push(("CARGO_ASSETS_REMOTE_WRITE", "1".into()));
    let run = b.run_with(&["build"], &env);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.build_finished().remote.as_ref().unwrap().uploaded,
        ASSETS
    );
}

#[test]
fn a_remote_that_is_down_or_hangs_costs_one_warning_and_the_build_succeeds() {
    let a = machine();
    let reference = a.build_ok();

    // Down from the start: connection refused.
    let mut server = S3Server::start();
    server.kill();
    let b = machine();
    let run = build(&b, &server, &["--remote-write"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed().len(), ASSETS);
    assert_eq!(remote_warnings(&run).len(), 1, "{}", run.stderr);
    assert!(run.build_finished().remote.as_ref().unwrap().unavailable);
    assert_eq!(parcel_bytes(&run), parcel_bytes(&reference));

    // Accepts connections and never answers: the timeout gives up on it.
    let stalled = S3Server::start_stalled();
    let c = machine();
    let mut env = stalled.env("team");
    env.push(("CARGO_ASSETS_REMOTE_TIMEOUT", "1".into()));
    let started = std::time::Instant::now();
    let run = c.run_with(&["build", "--remote-write"], &env);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(remote_warnings(&run).len(), 1, "{}", run.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "gave up in {:?}",
        started.elapsed()
    );
    assert_eq!(parcel_bytes(&run), parcel_bytes(&reference));

    // Killed while a build uploads: as soon as the first step is done,
    // with the others (and their uploads) still to come.
    server.restart();
    let d = machine();
    for i in 0..150 {
        d.file(
            &format!("assets/text/more{i:03}.txt"),
            format!("more {i}\n"),
        );
    }
    let mut child = d
        .command([
            "build",
            "--remote-write",
            "--message-format",
            "json",
            "-j",
            "1",
        ])
        .envs(server.env("team"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(n > 0, "the build ended before any step: {lines:?}");
        let processed = line.contains("\"asset-processed\"");
        lines.push(line);
        if processed {
            break;
        }
    }
    server.kill();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    let run = Run::from_output(std::process::Output {
        stdout: [lines.concat().into_bytes(), rest.into_bytes()].concat(),
        ..output
    });
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(remote_warnings(&run).len(), 1, "{}", run.stderr);
    let finished = run.build_finished();
    assert!(finished.remote.as_ref().unwrap().unavailable);
    assert_eq!(finished.ran, ASSETS + 150);
    assert!(finished.remote.as_ref().unwrap().uploaded < ASSETS + 150);
}

#[test]
fn a_shared_folder_is_a_remote_too_and_the_status_line_says_what_moved() {
    let shared = tempfile::tempdir().unwrap();
    let url = format!("fs://{}", shared.path().display());
    let env = [("CARGO_ASSETS_REMOTE", url.clone())];
    let a = machine();
    let run = a.run_with(&["build", "--remote-write"], &env);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.build_finished().remote.as_ref().unwrap().uploaded,
        ASSETS
    );
    let b = machine();
    let output = b
        .command(["build"])
        .envs(env.iter().cloned())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{status}");
    assert!(
        status.contains(&format!("({} fresh, {ASSETS} fetched from `{url}`", 0)),
        "{status}"
    );
    // A scheme this build cannot reach: one warning naming it, a local build.
    let c = machine();
    let run = c.run_with(&["build"], &[("CARGO_ASSETS_REMOTE", "ftp://files".into())]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed().len(), ASSETS);
    let warnings = remote_warnings(&run);
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("`ftp://files`"), "{}", warnings[0]);
}

#[test]
fn the_remote_can_be_configured_in_cargo_config_env() {
    let shared = tempfile::tempdir().unwrap();
    let url = format!("fs://{}", shared.path().display());
    let a = machine();
    a.file(
        ".cargo/config.toml",
        format!("[env]\nCARGO_ASSETS_REMOTE = \"{url}\"\nCARGO_ASSETS_REMOTE_WRITE = \"1\"\n"),
    );
    let run = a.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.build_finished().remote.as_ref().unwrap().uploaded,
        ASSETS
    );
    // The environment wins over the file, as with Cargo: here, read-only.
    let b = machine();
    b.file(
        ".cargo/config.toml",
        format!("[env]\nCARGO_ASSETS_REMOTE = \"{url}\"\nCARGO_ASSETS_REMOTE_WRITE = \"1\"\n"),
    );
    b.png("assets/sprites/s01.png", 40, 40, 77);
    let run = b.run_with(&["build"], &[("CARGO_ASSETS_REMOTE_WRITE", "0".into())]);
    assert!(run.success(), "{}", run.stderr);
    let finished = run.build_finished();
    assert_eq!(finished.fetched, ASSETS - 2);
    assert_eq!(finished.remote.as_ref().unwrap().uploaded, 0);
}

#[test]
fn a_warm_local_cache_fills_an_empty_remote_once() {
    let server = S3Server::start();
    let a = machine();
    let local = a.build_ok();
    assert_eq!(local.processed().len(), ASSETS);
    // The remote is set up after the cache was warm: nothing runs, the
    // steps it lacks are uploaded from the local store.
    let run = build(&a, &server, &["--remote-write"]);
    assert!(run.success(), "{}", run.stderr);
    let finished = run.build_finished();
    assert_eq!((finished.ran, finished.fresh), (0, ASSETS));
    assert_eq!(finished.remote.as_ref().unwrap().uploaded, ASSETS);
    let again = build(&a, &server, &["--remote-write"]);
    assert_eq!(again.build_finished().remote.as_ref().unwrap().uploaded, 0);
    let b = machine();
    let fetched = build(&b, &server, &[]);
    assert!(fetched.success(), "{}", fetched.stderr);
    assert_eq!(fetched.build_finished().fetched, ASSETS);
    assert_eq!(parcel_bytes(&fetched), parcel_bytes(&local));
    // Fetched outputs the parcel holds whole are kept only there, as a
    // build's own are: every one is still found, and a no-op needs nothing.
    assets_test_support::cache_outputs(&b.cache_dir(), "dev");
    let noop = build(&b, &server, &[]).build_finished().clone();
    assert_eq!((noop.ran, noop.fetched), (0, 0));
}

#[test]
fn a_remote_that_freezes_during_uploads_holds_the_build_for_one_timeout() {
    // Lookups answered (nothing there), every upload left unanswered.
    let server = S3Server::start_stalling_writes();
    let p = machine();
    let mut env = server.env("team");
    env.push(("CARGO_ASSETS_REMOTE_TIMEOUT", "3".into()));
    let started = std::time::Instant::now();
    let run = p.run_with(&["build", "--remote-write"], &env);
    let took = started.elapsed();
    assert!(run.success(), "{}", run.stderr);
    let warnings = remote_warnings(&run);
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].contains("failed while writing"),
        "{}",
        warnings[0]
    );
    assert_eq!(run.processed().len(), ASSETS);
    // Each request is bounded as a whole: the uploads in flight give up
    // together, after one timeout (the build itself takes about a second).
    assert!(
        took < std::time::Duration::from_secs(8),
        "the build waited {took:?} for a frozen remote with a 3 s timeout"
    );
}
