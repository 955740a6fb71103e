//! Determinism, crash safety and concurrency, through the real binary
//! (design brief §3.4, §3.5).

use std::process::Stdio;
use std::time::{Duration, Instant};

use assets_test_support::{Lcg, Project, cache_outputs};

const METADATA: &str = r#"
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
premultiply = PREMULTIPLY

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
"#;

/// A project of `sprites` PNGs, text files and shaders with includes.
fn project(sprites: u32, premultiply: bool) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&METADATA.replace("PREMULTIPLY", &premultiply.to_string()));
    for i in 0..sprites {
        let size = 16 + (i * 7) % 48;
        p.png(
            &format!("assets/sprites/{}/s{i}.png", i % 5),
            size,
            size / 2 + 1,
            i,
        );
    }
    for i in 0..sprites / 4 {
        p.file(
            &format!("assets/data/d{i}.json"),
            format!("{{\"n\": {i}}}\n"),
        );
    }
    p.file("assets/shaders/common.wgsl", "const PI = 3.14;\n");
    for i in 0..10 {
        p.file(
            &format!("assets/shaders/s{i}.wgsl"),
            format!("#include \"common.wgsl\"\nfn f{i}() {{}}\n"),
        );
    }
    p
}

#[test]
fn outputs_are_identical_across_thread_counts_and_directories() {
    let one = project(40, false);
    let two = project(40, false);
    let run_one = one.run(&["build", "-j", "1"]);
    let run_two = two.run(&["build", "-j", "2"]);
    assert!(run_one.success() && run_two.success());
    let a = cache_outputs(&one.cache_dir(), "dev");
    let b = cache_outputs(&two.cache_dir(), "dev");
    assert_eq!(a.len(), 40 + 10 + 11);
    assert_eq!(a, b);
    let parcel = |run: &assets_test_support::Run| std::fs::read(run.parcel("main")).unwrap();
    assert_eq!(
        parcel(&run_one),
        parcel(&run_two),
        "parcels are byte-identical"
    );
}

#[test]
fn two_builds_started_together_both_succeed_with_identical_outputs() {
    let p = project(60, false);
    let reference = project(60, false);
    assert!(reference.run(&["build"]).success());
    let (a, b) = (p.spawn(&["build"]), p.spawn(&["build"]));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for out in [&a, &b] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runs = [
        assets_test_support::Run::from_output(a),
        assets_test_support::Run::from_output(b),
    ];
    let ran: u64 = runs
        .iter()
        .map(|r| r.finished()["ran"].as_u64().unwrap())
        .sum();
    assert_eq!(
        ran,
        60 + 15 + 11,
        "each asset is processed once, by one of the two builds"
    );
    assert_eq!(
        cache_outputs(&p.cache_dir(), "dev"),
        cache_outputs(&reference.cache_dir(), "dev")
    );
}

/// A tiny deterministic generator for kill delays.
#[test]
fn killing_a_build_at_any_moment_never_leaves_a_cache_that_is_trusted_wrongly() {
    const KILLS: u64 = 24;
    let p = project(120, false);
    // Reference outputs for both settings, from clean builds elsewhere.
    let references: Vec<_> = [false, true]
        .iter()
        .map(|&premultiply| {
            let r = project(120, premultiply);
            let start = Instant::now();
            let run = r.run(&["build"]);
            assert!(run.success());
            let parcel = std::fs::read(run.parcel("main")).unwrap();
            (
                (cache_outputs(&r.cache_dir(), "dev"), parcel),
                start.elapsed(),
            )
        })
        .collect();
    // The faster of the two: under load a slow reference would put most
    // kills after the build has finished.
    let full_build = references.iter().map(|(_, t)| *t).min().unwrap();
    let mut rng = Lcg(0x5eed);
    let mut killed_mid_build = 0;
    // At least KILLS kills, and more (up to 3x) while fewer than a third hit
    // a running build: under load a build's length varies, and a kill after
    // the end tests nothing.
    for i in 0..KILLS * 3 {
        if i >= KILLS && killed_mid_build >= KILLS / 3 {
            break;
        }
        let premultiply = i % 2 == 1;
        p.metadata(&METADATA.replace("PREMULTIPLY", &premultiply.to_string()));
        if i % 3 == 0 {
            let _ = std::fs::remove_dir_all(p.cache_dir());
        }
        let mut child = p
            .command(["build", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = rng.below(full_build.as_micros() as u64 * 9 / 10);
        std::thread::sleep(Duration::from_micros(delay));
        if child.try_wait().unwrap().is_none() {
            killed_mid_build += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let run = p.run(&["build"]);
        assert!(
            run.success(),
            "build after kill {i} failed:\n{}",
            run.stderr
        );
        let (expected, expected_parcel) = &references[usize::from(premultiply)].0;
        assert_eq!(
            &cache_outputs(&p.cache_dir(), "dev"),
            expected,
            "after kill {i} (delay {delay} µs)"
        );
        let parcel = std::fs::read(run.parcel("main")).unwrap();
        assert!(
            parcel == *expected_parcel,
            "parcel after kill {i} differs from a clean build's"
        );
        let tmp = std::fs::read_dir(p.cache_dir().join("tmp"))
            .unwrap()
            .count();
        assert_eq!(tmp, 0, "temp files are cleaned up after kill {i}");
    }
    assert!(
        killed_mid_build >= KILLS / 3,
        "only {killed_mid_build} of {} kills hit a running build",
        KILLS * 3
    );
}

/// Flips one byte in every blob of the cache, packed or not, keeping every
/// size, so that only reading a blob can tell; returns how many there were.
fn corrupt_every_blob(p: &Project) -> usize {
    let store = assets_build::unstable::Store::open(&p.cache_dir()).unwrap();
    let mut n = 0;
    for (_, at) in store.locations() {
        if at.len == 0 {
            continue;
        }
        let mut bytes = std::fs::read(&at.path).unwrap();
        bytes[(at.offset + at.len / 2) as usize] ^= 0x5A;
        std::fs::write(&at.path, bytes).unwrap();
        n += 1;
    }
    n
}

#[test]
fn one_build_heals_a_cache_whose_every_blob_is_corrupt() {
    let p = project(12, false);
    p.metadata(&format!(
        "{}\n[[package.metadata.assets.rules]]\nmatch = \"atlas/*.png\"\nprocessor = \"sprite\"\n",
        METADATA.replace("PREMULTIPLY", "false")
    ));
    for i in 0..6 {
        p.png(&format!("assets/atlas/a{i}.png"), 8 + i, 5 + 2 * i, 100 + i);
    }
    let parcel = |run: &assets_test_support::Run| std::fs::read(run.parcel("main")).unwrap();
    let clean = parcel(&p.build_ok());

    // Every blob corrupt and the parcel gone: writing it meets the corrupt
    // blobs, whose steps rerun in the same build. (The store holds the six
    // sprites' pixels and the frame table; what the parcel held whole, it
    // alone held, and is gone with it.)
    assert_eq!(corrupt_every_blob(&p), 7);
    std::fs::remove_dir_all(p.cache_dir().join("parcels")).unwrap();
    let run = p.build_ok();
    assert_eq!(parcel(&run), clean, "the healed parcel is the clean one");
    cache_outputs(&p.cache_dir(), "dev"); // panics on any corrupt blob a record names

    // Every blob corrupt and one atlas sprite edited: the atlas step reads
    // every sprite's cached pixels, finds them corrupt, has them rebuilt,
    // and packs, in the same build.
    corrupt_every_blob(&p);
    p.png("assets/atlas/a0.png", 8, 5, 999);
    let healed = parcel(&p.build_ok());
    cache_outputs(&p.cache_dir(), "dev");
    assert!(p.run(&["clean"]).success());
    assert_eq!(healed, parcel(&p.build_ok()), "as a build from nothing");
}

/// The offset in the parcel file at `path` of the stored bytes of its
/// largest resource, and their length.
fn largest_resource(path: &std::path::Path) -> (usize, usize) {
    let bytes = std::fs::read(path).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let r = parcel.iter().max_by_key(|r| r.stored().len()).unwrap();
    let at = r.stored().as_ptr() as usize - bytes.as_ptr() as usize;
    (at, r.stored().len())
}

#[test]
fn damage_inside_a_parcel_is_found_by_the_next_build_or_verify_and_repaired() {
    let p = project(12, false);
    let run = p.build_ok();
    let path = run.parcel("main");
    let clean = std::fs::read(&path).unwrap();
    let flip = |at: usize, n: usize| {
        let mut bytes = std::fs::read(&path).unwrap();
        for b in &mut bytes[at..at + n] {
            *b ^= 0xA5;
        }
        std::fs::write(&path, bytes).unwrap();
    };
    let (at, len) = largest_resource(&path);
    assert!(len >= 40, "{len}");

    // Forty bytes of a resource (the only copy the cache has of it: the
    // parcel holds it whole): the next build sees the file changed, reads
    // it, and writes it again from what it can still trust, rebuilding
    // what only the damaged copy held.
    // (In the middle: a resource's header is validated when the parcel
    // is opened, which finds the damage too but cannot name it.)
    flip(at + len / 2 - 20, 40);
    assert!(!p.run(&["inspect", path.to_str().unwrap()]).success());
    let run = p.build_ok();
    assert!(
        run.stderr.contains("parcel `main` had been changed since it was written (1 resource no longer matched its checksum: ")
            && run.stderr.contains("it was written again from the cache"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), clean, "as it was built");
    assert!(p.run(&["inspect", path.to_str().unwrap()]).success());
    cache_outputs(&p.cache_dir(), "dev");
    // Checked once; trusted again until it changes.
    let again = p.build_ok();
    assert!(
        !again.stderr.contains("had been changed"),
        "{}",
        again.stderr
    );

    // A flipped bit in the zero padding after a resource hurts no
    // resource, but the file is not what was written: `inspect` says so,
    // and the next build writes it again.
    let last = clean.len() - 1;
    assert_eq!(clean[last], 0, "the parcel ends in padding");
    flip(last, 1);
    let inspect = p.run(&["inspect", path.to_str().unwrap()]);
    assert!(!inspect.success());
    assert!(
        inspect.stderr.contains("non-zero padding at byte"),
        "{}",
        inspect.stderr
    );
    let run = p.build_ok();
    assert!(
        run.stderr
            .contains("(it no longer opened as the parcel written, or its padding was not zero)"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), clean);

    // Damage that keeps the file's length and time (bit rot) is not seen
    // by a build, which trusts what it wrote; `verify` reads every cached
    // output and every parcel whole, reports the damage (a failed run),
    // and repairs it.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    flip(at + len / 2, 8);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    assert!(!p.build_ok().stderr.contains("had been changed"));
    let verify = p.run(&["verify"]);
    assert!(!verify.success());
    assert!(
        verify.with_reason("cache-damaged").count() == 1
            && verify.stderr.contains("main.parcel` was corrupt"),
        "{}",
        verify.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), clean);
    assert!(p.run(&["verify"]).success());
}

#[test]
fn verify_finds_a_damaged_cached_output_and_the_next_build_makes_it_again() {
    let p = project(12, false);
    p.file(
        "Cargo.toml",
        std::fs::read_to_string(p.path().join("Cargo.toml")).unwrap()
            + "\n[[package.metadata.assets.rules]]\nmatch = \"atlas/*.png\"\nprocessor = \"sprite\"\n",
    );
    for i in 0..4 {
        p.png(&format!("assets/atlas/a{i}.png"), 8 + i, 5 + 2 * i, 100 + i);
    }
    p.build_ok();
    // One packed blob damaged: a sprite's pixels, read by no-op builds
    // from nowhere (a build trusts what it stored until it reads it).
    let store = assets_build::unstable::Store::open(&p.cache_dir()).unwrap();
    let (hash, at) = (store.locations())
        .into_iter()
        .find(|(_, at)| at.path.extension().is_some_and(|e| e == "pack") && at.len > 16)
        .expect("a packed blob");
    drop(store);
    let mut bytes = std::fs::read(&at.path).unwrap();
    bytes[(at.offset + at.len / 2) as usize] ^= 0x5A;
    std::fs::write(&at.path, bytes).unwrap();
    assert_eq!(p.build_ok().build_finished().ran, 0);

    let run = p.run(&["verify"]);
    assert!(!run.success(), "{}", run.stderr);
    let damaged: Vec<_> = run.with_reason("cache-damaged").collect();
    assert!(!damaged.is_empty(), "{}", run.stderr);
    assert!(
        damaged[0]["error"]
            .as_str()
            .unwrap()
            .contains(&hash.to_hex()),
        "{damaged:?}"
    );
    assert_eq!(
        run.with_reason("asset-unreproduced").count(),
        0,
        "damage is not a processor that does not reproduce: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("the next build makes them again"),
        "{}",
        run.stderr
    );
    // The advice holds: the next build makes it again (the damaged copy
    // stays forgotten, though `verify` stores nothing), and `verify` then
    // passes, also after `gc`.
    let build = p.build_ok();
    assert!(build.build_finished().ran >= 1, "{}", build.stderr);
    assert!(p.run(&["verify"]).success());
    assert!(p.run(&["gc"]).success());
    assert!(p.run(&["verify"]).success());
    cache_outputs(&p.cache_dir(), "dev");
}

/// The script `a_full_disk_…` runs in a mount namespace of its own: a
/// tmpfs of 8 MiB, filled but for a megabyte, a build, the space freed,
/// builds after. Each command's exit status and stderr are written to
/// `$OUT`, and the cache as the failed build left it is copied there.
const FULL_DISK: &str = r#"
set -u
mnt="$OUT/mnt"
mkdir -p "$mnt"
mount -t tmpfs -o size=8m tmpfs "$mnt" || exit 90
cp -r "$PROJECT" "$mnt/p"
cd "$mnt/p"
avail=$(df -k --output=avail "$mnt" | tail -1)
head -c $(( (avail - 1024) * 1024 )) /dev/zero > "$mnt/filler"
step() { name=$1; shift; "$BIN" assets "$@" > /dev/null 2> "$OUT/$name.err"; echo $? > "$OUT/$name.rc"; }
step full build
cp -r target "$OUT/after-full"
rm "$mnt/filler"
step build build
step gc gc
step verify verify
"#;

#[test]
#[ignore = "needs a mount namespace (unshare -rm) for a small file system; .ci/run runs it"]
fn a_full_disk_fails_the_build_once_and_leaves_nothing_that_stops_the_next() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata("");
    // Noise, which no compressor shrinks: 1.3 MB of images whose outputs
    // do not fit in the megabyte left.
    let mut rng = Lcg(7);
    for i in 0..5 {
        let image = image::RgbaImage::from_fn(256, 256, |_, _| {
            image::Rgba([0, 1, 2, 3].map(|_| rng.below(256) as u8))
        });
        p.file(
            &format!("assets/noise/n{i}.png"),
            assets_test_support::encode_png(&image),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", FULL_DISK])
        .env("OUT", out.path())
        .env("PROJECT", p.path())
        .env("BIN", env!("CARGO_BIN_EXE_cargo-assets"))
        .status()
        .expect("unshare runs");
    assert!(status.success(), "the script: {status}");
    let read = |name: &str| std::fs::read_to_string(out.path().join(name)).unwrap();
    let rc = |name: &str| read(&format!("{name}.rc")).trim().parse::<i32>().unwrap();

    // The full disk fails the build, saying so once per line.
    assert_eq!(rc("full"), 101, "{}", read("full.err"));
    let full = read("full.err");
    assert!(full.contains("No space left on device"), "{full}");
    for line in full.lines() {
        assert!(
            line.matches("No space left on device").count() <= 1,
            "said twice: {line}"
        );
    }
    // It keeps no bytes that no index entry points at: a pack ends where
    // its last entry does.
    let cache = out.path().join("after-full/assets");
    let store = assets_build::unstable::Store::open(&cache).unwrap();
    let mut ends: std::collections::HashMap<std::path::PathBuf, u64> = Default::default();
    for (_, at) in store.locations() {
        let end = ends.entry(at.path.clone()).or_default();
        *end = (*end).max(at.offset + at.len);
    }
    drop(store);
    for entry in std::fs::read_dir(cache.join("packs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "pack") {
            let len = std::fs::metadata(&path).unwrap().len();
            let end = ends.get(&path).copied().unwrap_or(8);
            assert_eq!(len, end, "{} ends in unindexed bytes", path.display());
        }
    }
    // Once the space is freed, the next build, `gc` and `verify` succeed.
    for name in ["build", "gc", "verify"] {
        assert_eq!(rc(name), 0, "{name}: {}", read(&format!("{name}.err")));
    }
}
