//! The torture suite: the real binary killed with SIGKILL at random moments
//! (cold builds, rebuilds, `watch` rebuilds), builds run two at a time,
//! files edited while a build reads them, and a `watch` kept running through
//! a checkout that replaces thousands of files. After each fault, a build
//! must give the parcel a clean build of the same sources gives, and every
//! blob the records name must be whole.
//!
//! The short form runs with the other tests. The full form, whose figures
//! RELIABILITY.md reports:
//!
//! ```sh
//! TORTURE=full cargo test --release -p cargo-assets --test torture -- --nocapture
//! ```
//!
//! Each part prints what it did (`torture: ...` lines). The random moments
//! come from a fixed seed (`TORTURE_SEED` to change it), so a failure can be
//! replayed.

use std::process::Stdio;
use std::time::{Duration, Instant};

use assets_test_support::{
    Lcg, Project, Run, cache_outputs, encode_png, gltf_bin, gltf_json, png_bytes, sprite_image,
};

/// How much of each part to do.
struct Scale {
    kills: u64,
    concurrent_rounds: u64,
    edit_rounds: u64,
    checkout_files: usize,
}

fn scale() -> Scale {
    match std::env::var("TORTURE").as_deref() {
        Ok("full") => Scale {
            kills: 500,
            concurrent_rounds: 50,
            edit_rounds: 50,
            checkout_files: 10_000,
        },
        _ => Scale {
            kills: 12,
            concurrent_rounds: 3,
            edit_rounds: 3,
            checkout_files: 500,
        },
    }
}

fn rng() -> Lcg {
    let seed = std::env::var("TORTURE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x70_27_u64);
    Lcg(seed)
}

const METADATA: &str = r#"
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true

[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["sh", "-c", "cat \"$0\" assets/levels/palette.txt > \"$1\"; printf '%s: %s assets/levels/palette.txt\n' \"$1\" \"$0\" > \"$2\"", "{input}", "{output}", "{depfile}"]
"#;

/// A game-shaped project: an atlas of sprites, images, shaders with
/// includes, a tool with a depfile, a glTF. `state` (0 or 1) picks one of
/// two versions of a few files, so that a rebuild has work to do.
fn write_project(p: &Project, state: u32) {
    p.metadata(METADATA);
    for i in 0..40u32 {
        let seed = if i < 4 { i + 1000 * state } else { i };
        p.file(
            &format!("assets/sprites/{}/s{i}.png", i % 4),
            encode_png(&sprite_image(
                8 + (i * 5) % 40,
                6 + (i * 3) % 30,
                i % 3,
                seed,
            )),
        );
    }
    for i in 0..10u32 {
        p.png(
            &format!("assets/textures/t{i}.png"),
            32,
            16 + i,
            i + 50 * state,
        );
    }
    p.file(
        "assets/shaders/common.wgsl",
        format!("const V = {state};\n"),
    );
    for i in 0..8 {
        p.file(
            &format!("assets/shaders/s{i}.wgsl"),
            format!("#include \"common.wgsl\"\nfn f{i}() {{}}\n"),
        );
    }
    p.file("assets/levels/palette.txt", format!("palette {state}\n"));
    for i in 0..4 {
        p.file(&format!("assets/levels/l{i}.lvl"), format!("level {i}\n"));
    }
    p.file(
        "assets/models/Helmet/Helmet.gltf",
        gltf_json("Base%20Color.png"),
    )
    .file(
        "assets/models/Helmet/FlightHelmet.bin",
        gltf_bin(1.0 + state as f32),
    )
    .file("assets/models/Helmet/Base Color.png", png_bytes(8, 8, 7));
}

fn project(state: u32) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    write_project(&p, state);
    p
}

fn parcel(run: &Run) -> Vec<u8> {
    std::fs::read(run.parcel("main")).unwrap()
}

/// The parcels of clean builds of both states, and how long the faster
/// clean build took.
fn references() -> ([Vec<u8>; 2], Duration) {
    let mut fastest = Duration::MAX;
    let parcels = [0, 1].map(|state| {
        let r = project(state);
        let start = Instant::now();
        let run = r.build_ok();
        fastest = fastest.min(start.elapsed());
        parcel(&run)
    });
    (parcels, fastest)
}

/// A build after a fault: it succeeds, its parcel is the clean build's, and
/// every blob the records name is whole.
fn check_heals(p: &Project, reference: &[u8], what: &str) {
    let run = p.run(&["build"]);
    assert!(run.success(), "build after {what} failed:\n{}", run.stderr);
    assert!(
        parcel(&run) == reference,
        "parcel after {what} differs from a clean build's"
    );
    cache_outputs(&p.cache_dir(), "dev");
}

#[test]
fn builds_killed_at_random_moments_leave_a_cache_the_next_build_trusts_rightly() {
    let scale = scale();
    let (references, clean_build) = references();
    let p = project(0);
    p.build_ok();
    let mut rng = rng();
    let (mut hit_running, mut watch_kills) = (0, 0);
    let start = Instant::now();
    for i in 0..scale.kills {
        let state = (rng.below(2)) as u32;
        write_project(&p, state);
        let kind = i % 3;
        if kind == 0 {
            let _ = std::fs::remove_dir_all(p.cache_dir()); // a cold build
        }
        let delay = Duration::from_micros(rng.below(clean_build.as_micros() as u64));
        let mut child = if kind == 2 {
            // A watch that rebuilds: killed during its first build, or
            // after a save it is rebuilding for.
            watch_kills += 1;
            p.command(["watch", "--port", "0", "-q"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        } else {
            p.command(["build", "-q"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        std::thread::sleep(delay);
        if kind == 2 {
            write_project(&p, 1 - state);
            std::thread::sleep(Duration::from_micros(
                rng.below(clean_build.as_micros() as u64),
            ));
        }
        if child.try_wait().unwrap().is_none() {
            hit_running += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let state = if kind == 2 { 1 - state } else { state };
        check_heals(&p, &references[state as usize], &format!("kill {i}"));
    }
    println!(
        "torture: {} kill -9 ({} of watch), {hit_running} hit a running process; \
         {} builds after them, every parcel equal to a clean build's, every blob whole ({:.1} s)",
        scale.kills,
        watch_kills,
        scale.kills,
        start.elapsed().as_secs_f64()
    );
    assert!(
        hit_running >= scale.kills / 3,
        "only {hit_running} of {} kills hit a running process",
        scale.kills
    );
}

#[test]
fn two_builds_at_once_both_succeed_with_the_clean_builds_parcel() {
    let scale = scale();
    let (references, _) = references();
    let p = project(0);
    let mut rng = rng();
    let start = Instant::now();
    for round in 0..scale.concurrent_rounds {
        let state = rng.below(2) as u32;
        write_project(&p, state);
        if round % 4 == 0 {
            let _ = std::fs::remove_dir_all(p.cache_dir());
        }
        let (a, b) = (p.spawn(&["build"]), p.spawn(&["build"]));
        for child in [a, b] {
            let run = Run::from_output(child.wait_with_output().unwrap());
            assert!(run.success(), "round {round}: {}", run.stderr);
            assert!(
                parcel(&run) == references[state as usize],
                "round {round}: parcel differs from a clean build's"
            );
        }
        cache_outputs(&p.cache_dir(), "dev");
    }
    println!(
        "torture: {} rounds of two concurrent builds, all succeeded with the clean build's parcel ({:.1} s)",
        scale.concurrent_rounds,
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn files_edited_while_a_build_reads_them_are_never_lost() {
    let scale = scale();
    let p = project(0);
    p.build_ok();
    let mut rng = rng();
    let text = |run: &Run, name: &str| {
        let bytes = parcel(run);
        let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
        let text = parcel.text(assets_runtime::ResourceId::of(name));
        text.unwrap().into_owned()
    };
    let start = Instant::now();
    for round in 0..scale.edit_rounds {
        // A build with work to do (a new sprite page), and edits landing
        // at random moments while it runs.
        write_project(&p, (round % 2) as u32);
        let child = p
            .command(["build", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut last = String::new();
        for edit in 0..5 {
            std::thread::sleep(Duration::from_micros(rng.below(20_000)));
            // Sizes vary, so no edit hides behind a stamp.
            last = format!(
                "round {round} edit {edit}{}\n",
                "!".repeat(rng.below(5) as usize)
            );
            p.file("assets/notes.txt", &last);
        }
        let _ = child.wait_with_output().unwrap();
        let run = p.build_ok();
        assert_eq!(
            text(&run, "notes.txt"),
            last,
            "round {round}: the last edit is built"
        );
    }
    println!(
        "torture: {} rounds of 5 edits during a build; every next build had the final bytes ({:.1} s)",
        scale.edit_rounds,
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn watch_keeps_going_through_a_checkout_that_replaces_every_file() {
    let files = scale().checkout_files;
    // Two "branches" of many small files; a checkout replaces every one.
    let branch = |p: &Project, name: &str| {
        for i in 0..files {
            p.file(
                &format!("assets/data/{}/f{i}.txt", i % 100),
                format!("{name} {i}\n"),
            );
        }
    };
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    branch(&p, "main");
    let watch = p.watch();
    let start = Instant::now();
    branch(&p, "feature");
    // Builds follow until one sees the whole checkout.
    let reference = {
        let r = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
        branch(&r, "feature");
        parcel(&r.build_ok())
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut writes = 0;
    loop {
        // Each build's parcel, or its patch; and once idle the parcel
        // written whole, which must be the clean build's.
        let written = watch.next("parcel-written");
        writes += 1;
        let path = written["path"].as_str().unwrap();
        if written.get("patch").is_none() && std::fs::read(path).unwrap() == reference {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "watch never built the whole checkout"
        );
    }
    println!(
        "torture: watch through a {files}-file checkout: {writes} parcel write(s), the last equal to a clean build's ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
}
