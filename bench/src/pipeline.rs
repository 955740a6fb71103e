//! The pipeline on a generated corpus, with its bounds and peers measured in
//! the same run:
//!
//! - **full build** from an empty cache (median of 3), against the *decode
//!   bound*: reading and decoding every input image once with the same
//!   `image` crate on all cores, which any pipeline must do;
//! - **peak memory** of a full build (max RSS of a child process doing it);
//! - **no-op** build, alternated with `ninja`'s no-op on a `build.ninja` with
//!   one copy edge per asset (skipped with a note if ninja is not installed);
//! - **touch-all**: every input's mtime changed, bytes the same: no processor
//!   may run, and the cost should be close to hashing every input once
//!   (measured on all cores), or to a no-op plus that hashing (what a
//!   touch-all must do at least: check every input, then read it);
//! - **edit one sprite**: a sprite replaced by a new image; two steps run (the
//!   sprite and its atlas). Shown against the full build and against the
//!   no-op, which every edit pays first (the checks of every other step);
//! - **rename storm**: every image (sprites and textures) renamed in its
//!   folder; their outputs are taken over, so only the atlases run, and the
//!   cost should be near a no-op plus hashing the renamed files;
//! - **watched no-op and edit**: the same, built as `cargo assets watch`
//!   builds: by one pipeline that keeps its state between builds, told
//!   which file changed (nothing, for the no-op), writing a changed parcel
//!   as a patch. Edits are timed two ways: **after idle**, each after the
//!   idle work `watch` does between a person's saves (the patched parcels
//!   written whole, untimed), so each patch holds one edit; and **in a
//!   row**, as saves under `watch`'s idle time apart come (a script, an
//!   exporter), each patch holding every edit since the last whole write.
//!   Then **written whole**: the idle build after those, timed.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use assets_build::{
    unstable::BuildOptions, unstable::BuildReport, unstable::Changes, unstable::Event,
    unstable::Pipeline, unstable::Verify,
};

use crate::corpus::{self, Corpus};
use crate::measure::{Sample, cold_builds, ms, paired_ratio, ratio, time};

/// The corpus seed of every published figure.
pub const SEED: u64 = 0x5eed_a55e;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// One build of the corpus at `dir` with its cache in `dir/target/assets`.
pub fn build(dir: &Path) -> (Duration, BuildReport) {
    build_into(dir, &dir.join("target/assets"))
}

/// One build of the corpus at `dir` with its cache in `cache`.
fn build_into(dir: &Path, cache: &Path) -> (Duration, BuildReport) {
    build_with(dir, cache, None)
}

/// One build, checking the fresh steps `verify` selects.
fn build_with(dir: &Path, cache: &Path, verify: Option<Verify>) -> (Duration, BuildReport) {
    build_configured(dir, cache, |options| options.verify = verify)
}

/// One timed build of the package at `dir` (the corpus's processors
/// registered) on every core, with options set by `configure`; it must
/// succeed.
pub fn build_configured(
    dir: &Path,
    cache: &Path,
    configure: impl FnOnce(&mut BuildOptions),
) -> (Duration, BuildReport) {
    timed_build(&pipeline(dir, cache, configure), Changes::Unknown)
}

/// A pipeline for the package at `dir` (the corpus's processors
/// registered) on every core, with options set by `configure`.
fn pipeline(dir: &Path, cache: &Path, configure: impl FnOnce(&mut BuildOptions)) -> Pipeline {
    let mut options = BuildOptions::new(dir.join("Cargo.toml"), cache.to_owned());
    options.jobs = cores();
    configure(&mut options);
    let mut pipeline = Pipeline::new(options);
    corpus::register(pipeline.registry_mut());
    pipeline
}

/// One timed build by `pipeline`, told `changes`; it must succeed.
///
/// With `ASSETS_BENCH_TRACE` set, says on stderr when the build planned and
/// when each step that ran started and finished (where a slow build's time
/// goes; the parcels are written after the last step).
fn timed_build(pipeline: &Pipeline, changes: Changes<'_>) -> (Duration, BuildReport) {
    let trace = std::env::var_os("ASSETS_BENCH_TRACE").is_some();
    let start = std::time::Instant::now();
    // When the last step finished, in µs since the start (then the parcels).
    let last_step = std::sync::atomic::AtomicU64::new(0);
    let on_event = |e: &Event<'_>| {
        if !trace {
            return;
        }
        // The time is read only for what is printed: a build tells of
        // every step it reused (a million at 1M files).
        let at = || start.elapsed().as_secs_f64() * 1e3;
        match e {
            Event::Planned { steps } => eprintln!("{:9.1} ms planned {steps} steps", at()),
            Event::Processing { asset, .. } => eprintln!("{:9.1} ms start {asset}", at()),
            Event::Finished { step } => {
                let us = start.elapsed().as_micros() as u64;
                last_step.fetch_max(us, std::sync::atomic::Ordering::Relaxed);
                if let assets_build::unstable::Outcome::Ran { reason } = &step.outcome {
                    eprintln!("{:9.1} ms done {} ({reason})", at(), step.asset)
                }
            }
            _ => {}
        }
    };
    let mut report = None;
    let t = time(|| {
        report = Some(
            pipeline
                .build_after(changes, &on_event)
                .expect("the corpus builds"),
        )
    });
    if trace {
        let last = last_step.into_inner() as f64 / 1e3;
        eprintln!("{last:9.1} ms last step finished");
        eprintln!("{:9.1} ms built", start.elapsed().as_secs_f64() * 1e3);
    }
    let report = report.expect("built");
    assert!(
        report.success(),
        "the corpus builds without failures: {}",
        report.failure_summary().unwrap_or_default()
    );
    (t, report)
}

/// Runs a cold build in a child process (this binary with `--child-build`)
/// and returns its peak resident memory in KiB.
fn peak_rss_kib(dir: &Path) -> Option<u64> {
    let out = Command::new(std::env::current_exe().ok()?)
        .arg("--child-build")
        .arg(dir)
        .output()
        .ok()?;
    let _ = std::fs::remove_dir_all(dir.join(CHILD_CACHE));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib ")?.trim().parse().ok())
}

/// Where the child of [`peak_rss_kib`] builds: a cache of its own.
const CHILD_CACHE: &str = "rss-cache";

/// The child side of [`peak_rss_kib`]: build, then print `VmHWM`.
pub fn child_build(dir: &Path) {
    // With `CARGO_ASSETS_REMOTE` set, against that remote (to profile a
    // build from the remote cache by hand).
    let remote = assets_build::unstable::RemoteConfig::from_env().expect("the remote's variables");
    build_configured(dir, &dir.join(CHILD_CACHE), |o| o.remote = remote);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kib) = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    {
        #[allow(clippy::print_stdout)]
        {
            println!("peak-rss-kib {kib}");
        }
    }
}

/// One watched pipeline on the corpus at `dir` (cache in `dir`, as
/// [`child_build`]): a build, then `n` no-ops told nothing changed, `n`
/// edits of one sprite told which, each after `watch`'s idle work (as a
/// person's saves come), `n` edits in a row, then the check `watch` makes
/// when idle (`Pipeline::drifted`) and the parcels written whole, each
/// one's time printed.
pub fn child_watched(dir: &Path, n: usize) {
    let mut watched = pipeline(dir, &dir.join(CHILD_CACHE), |o| o.patch_parcels = true);
    watched.keep_state_in_memory();
    timed_build(&watched, Changes::Unknown);
    // As `watch` once idle: atlases the build found fresh packed in memory.
    watched.warm_up();
    let mut sprites: Vec<_> = walkdir::WalkDir::new(dir.join("assets/sprites"))
        .into_iter()
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    sprites.sort();
    let nothing = HashSet::new();
    for i in 0..3 * n {
        if (n..2 * n).contains(&i) {
            settle(&mut watched);
        }
        let changed = if i < n {
            nothing.clone()
        } else {
            let sprite = sprites[(i * 7919) % sprites.len()].clone();
            // Pixels the sprite does not hold yet: an earlier run on the
            // same corpus may have saved `new_sprite(i)` there already.
            let was = image::open(&sprite).map(|i| i.into_rgba8()).ok();
            let image = (i..)
                .map(new_sprite)
                .find(|image| Some(image) != was.as_ref())
                .expect("256 images differ");
            image.save(&sprite).expect("write sprite");
            HashSet::from([sprite])
        };
        let (t, report) = timed_build(&watched, Changes::At(&changed));
        assert_eq!(report.ran(), 2 * changed.len(), "the sprite and its atlas");
        let what = match i / n {
            0 => "no-op",
            1 => "edit after idle",
            _ => "edit in a row",
        };
        #[allow(clippy::print_stdout)]
        {
            println!("{what} {}", ms(t));
        }
    }
    let mut drifted = Vec::new();
    let t = time(|| drifted = watched.drifted());
    assert!(
        drifted.is_empty(),
        "nothing changed unreported: {drifted:?}"
    );
    let whole = write_whole(&mut watched);
    #[allow(clippy::print_stdout)]
    {
        println!("drift check {}", ms(t));
        println!("written whole {}", ms(whole));
    }
}

/// The build `watch` makes once idle: nothing changed, the patched parcels
/// written whole. Its time.
fn write_whole(watched: &mut Pipeline) -> Duration {
    watched.set_patch_parcels(false);
    let (t, report) = timed_build(watched, Changes::At(&HashSet::new()));
    watched.set_patch_parcels(true);
    assert_eq!(report.ran(), 0, "writing whole runs nothing");
    assert!(report.parcels.iter().all(|p| p.patch.is_none()));
    t
}

/// `watch`'s idle work: the kept state checked against the disk, then the
/// patched parcels written whole; then the disk given the time a person
/// takes before the next save to write those back (`sync`), so the next
/// edit is not timed while tens of megabytes of parcel are flushed.
fn settle(watched: &mut Pipeline) {
    let drifted = watched.drifted();
    assert!(
        drifted.is_empty(),
        "nothing changed unreported: {drifted:?}"
    );
    write_whole(watched);
    // Best effort: without `sync` the edit is timed during the flush.
    let _ = Command::new("sync").status();
}

/// The image an edit saves over a sprite, the `e`th edit's.
fn new_sprite(e: usize) -> image::RgbaImage {
    image::RgbaImage::from_fn(33, 21, |x, y| {
        image::Rgba([x as u8 * 7, y as u8 * 11, e as u8, 255])
    })
}

/// Reads and decodes every image on all cores: the floor of a full build.
fn decode_bound(images: &[std::path::PathBuf]) -> Duration {
    let chunk = images.len().div_ceil(cores()).max(1);
    time(|| {
        std::thread::scope(|s| {
            for part in images.chunks(chunk) {
                s.spawn(move || {
                    for p in part {
                        let bytes = std::fs::read(p).expect("read image");
                        std::hint::black_box(
                            image::load_from_memory(&bytes)
                                .expect("decode")
                                .into_rgba8(),
                        );
                    }
                });
            }
        });
    })
}

/// Reads and blake3-hashes every input on all cores.
fn hash_all(files: &[std::path::PathBuf]) -> Duration {
    let chunk = files.len().div_ceil(cores()).max(1);
    time(|| {
        std::thread::scope(|s| {
            for part in files.chunks(chunk) {
                s.spawn(move || {
                    for p in part {
                        std::hint::black_box(blake3::hash(&std::fs::read(p).expect("read")));
                    }
                });
            }
        });
    })
}

/// Sets every file's mtime to `when`, bytes untouched.
fn touch_all(files: &[std::path::PathBuf], when: SystemTime) {
    for f in files {
        std::fs::File::options()
            .append(true)
            .open(f)
            .and_then(|file| file.set_modified(when))
            .expect("touch");
    }
}

/// Writes `build.ninja` (one `cp` edge per asset), builds it once, and
/// returns a function timing one no-op run; `None` if ninja is not installed.
fn ninja(corpus: &Corpus) -> Option<impl Fn() -> Duration + '_> {
    Command::new("ninja").arg("--version").output().ok()?;
    let dir = &corpus.dir;
    let mut rules = String::from("rule cp\n  command = cp $in $out\n");
    for f in &corpus.files {
        let rel = f
            .strip_prefix(dir)
            .expect("inside")
            .to_str()
            .expect("UTF-8");
        rules.push_str(&format!("build out/{rel}: cp {rel}\n"));
    }
    std::fs::write(dir.join("build.ninja"), rules).expect("write build.ninja");
    let run = move || {
        time(|| {
            let out = Command::new("ninja")
                .arg("-C")
                .arg(dir)
                .arg(format!("-j{}", cores()))
                .output()
                .expect("run ninja");
            assert!(out.status.success(), "ninja failed");
        })
    };
    run();
    run();
    Some(run)
}

/// Every figure for each corpus size; Markdown tables.
pub fn run(scales: &[usize], quick: bool, progress: &dyn Fn(&str)) -> String {
    let mut full_table = String::from(
        "| assets | images | full build, median (min–max) ms | decode bound (ms) | full / decode (paired) | peak RSS (MiB) | steps run | inputs (MB) | cache after it (MB) | cache / inputs | parcel (MB) | parcel / inputs |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut incr_table = String::from(
        "| assets | no-op median (min–max) ms | ninja no-op (ms) | no-op / ninja (paired) | hash all inputs (ms) | touch-all median (min–max) ms | touch-all / hash | touch-all / (no-op + hash) | edit one sprite median (min–max) ms | edit / full | edit / no-op |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut watched_table = String::from(
        "| assets | watched no-op median (min–max) ms | watched edit after idle, median (min–max) ms | watched edit / full | watched edit / edit | watched edits in a row, median (min–max) ms | in a row / full | written whole once idle (ms) |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut rename_table = String::from(
        "| assets | files renamed | rename storm median (min–max) ms | steps run | hash the renamed files (ms) | storm / (no-op + hash) | storm / full |\n|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut verify_table = String::from(
        "| assets | steps checked | verify every step, ms | verify / full build | outputs that differ |\n|---:|---:|---:|---:|---:|\n",
    );
    // Watched edits are cheap, and fall on atlases of different sizes
    // (ui, chars, env, fx): 5 of them left the median to which atlases
    // came up, 64 to 80 ms in one run.
    let (cold_runs, noop_runs, touch_runs, edits, watched_edits) = if quick {
        (1, 3, 1, 1, 1)
    } else {
        (5, 11, 3, 5, 15)
    };
    for &n in scales {
        let tmp = tempfile::tempdir().expect("temp dir");
        progress(&format!("generating {n} assets"));
        let corpus = corpus::generate(tmp.path(), n, SEED);
        progress(&format!("{n}: full builds"));
        let mut steps = 0;
        // Each build paired with a decode bound timed beside it: the
        // machine's speed drifts by a tenth within a minute, and the ratio
        // of two medians taken a few seconds apart moved with it. Before
        // and after it by turns, so that neither side always runs while
        // the other's writes are flushed.
        let (mut builds, mut decodes) = (Vec::new(), Vec::new());
        let full = cold_builds(tmp.path(), cold_runs, |cache| {
            let decode_first = builds.len() % 2 == 1;
            if decode_first {
                decodes.push(decode_bound(&corpus.images));
            }
            let (t, report) = build_into(tmp.path(), cache);
            steps = report.ran();
            builds.push(t);
            if !decode_first {
                decodes.push(decode_bound(&corpus.images));
            }
            t
        });
        let decode = Sample::from(decodes.clone());
        progress(&format!("{n}: peak memory"));
        let rss =
            peak_rss_kib(tmp.path()).map_or("-".into(), |k| format!("{:.0}", k as f64 / 1024.0));
        let inputs: u64 = corpus.files.iter().map(|f| file_len(f)).sum();
        let cache = tmp.path().join("target/assets");
        let written = tree_len(&cache);
        let parcel = tree_len(&cache.join("parcels"));
        let mb = |bytes: u64| format!("{:.1}", bytes as f64 / 1e6);
        let per_input = |bytes: u64| format!("{:.2}", bytes as f64 / inputs as f64);
        writeln!(
            full_table,
            "| {n} | {} | {} | {} | {} | {rss} | {steps} | {} | {} | {} | {} | {} |",
            corpus.images.len(),
            full.ms(),
            ms(decode.median()),
            paired_ratio(&builds, &decodes),
            mb(inputs),
            mb(written),
            per_input(written),
            mb(parcel),
            per_input(parcel),
        )
        .expect("write to String");

        // Settle past the racy-mtime window, and let one build refresh records.
        std::thread::sleep(Duration::from_millis(2100));
        build(tmp.path());
        progress(&format!("{n}: no-op against ninja"));
        let ninja = ninja(&corpus);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..noop_runs {
            let (t, report) = build(tmp.path());
            assert_eq!(report.ran(), 0, "a no-op runs nothing");
            ours.push(t);
            if let Some(ninja) = &ninja {
                theirs.push(ninja());
            }
        }
        let noop = Sample::from(ours.clone());
        let (ninja_ms, noop_ratio) = if theirs.is_empty() {
            ("not installed".to_owned(), "-".to_owned())
        } else {
            (
                ms(Sample::from(theirs.clone()).median()),
                paired_ratio(&ours, &theirs),
            )
        };
        progress(&format!("{n}: touch-all"));
        let hash = Sample::of(noop_runs.min(5), || hash_all(&corpus.files));
        let mut when = SystemTime::now();
        let touch = Sample::of(touch_runs, || {
            when += Duration::from_secs(1);
            touch_all(&corpus.files, when);
            let (t, report) = build(tmp.path());
            assert_eq!(report.ran(), 0, "touching runs no processor");
            t
        });
        progress(&format!("{n}: edit one sprite"));
        let mut e = 0;
        let mut edit_one = || {
            let sprite = &corpus.sprites[(e * 7919) % corpus.sprites.len()];
            e += 1;
            new_sprite(e).save(sprite).expect("write sprite");
            sprite.clone()
        };
        let edit = Sample::of(edits, || {
            edit_one();
            let (t, report) = build(tmp.path());
            assert_eq!(report.ran(), 2, "the sprite and its atlas");
            t
        });
        // The same, as `watch` builds: one pipeline that keeps its state,
        // told which file changed.
        progress(&format!("{n}: watched no-op and edit"));
        // Past the racy window of the touch-all's mtimes (set up to 3 s
        // ahead) and of the edits', or every check would hash every input
        // again, and no kept verdict would let `warm_up` pack an atlas.
        let settled = when.max(SystemTime::now()) + Duration::from_millis(2100);
        if let Ok(wait) = settled.duration_since(SystemTime::now()) {
            std::thread::sleep(wait);
        }
        // One build to settle the records the touch-all left with stamps in
        // the racy window: a watcher starts on files older than that, and
        // no verdict on a step with an unsettled input is kept.
        build(tmp.path());
        let mut watched = pipeline(tmp.path(), &cache, |o| o.patch_parcels = true);
        watched.keep_state_in_memory();
        timed_build(&watched, Changes::Unknown);
        // What `watch` does once idle after its first build: the atlases,
        // all fresh in the cache, packed into memory.
        assert_eq!(watched.warm_up(), 4, "every atlas packed into memory");
        let nothing = HashSet::new();
        let watched_noop = Sample::of(noop_runs, || {
            let (t, report) = timed_build(&watched, Changes::At(&nothing));
            assert_eq!(report.ran(), 0, "a no-op runs nothing");
            t
        });
        let mut watched_edit_one = |watched: &Pipeline| {
            let changed = HashSet::from([edit_one()]);
            let (t, report) = timed_build(watched, Changes::At(&changed));
            assert_eq!(report.ran(), 2, "the sprite and its atlas");
            t
        };
        // A person's saves are seconds apart: `watch` is idle between them
        // (250 ms without a change), and its idle work writes the patched
        // parcels whole, so each save patches the parcel alone.
        let watched_edit = Sample::of(watched_edits, || {
            settle(&mut watched);
            watched_edit_one(&watched)
        });
        // Saves under 250 ms apart (a script, an exporter writing file by
        // file): no idle moment between them, so each patch holds every
        // change since the last whole write.
        settle(&mut watched);
        let in_a_row = Sample::of(watched_edits, || watched_edit_one(&watched));
        let whole = write_whole(&mut watched);
        drop(watched);
        writeln!(
            watched_table,
            "| {n} | {} | {} | {} | {} | {} | {} | {} |",
            watched_noop.ms(),
            watched_edit.ms(),
            ratio(watched_edit.median(), full.median()),
            ratio(watched_edit.median(), edit.median()),
            in_a_row.ms(),
            ratio(in_a_row.median(), full.median()),
            ms(whole),
        )
        .expect("write to String");
        writeln!(
            incr_table,
            "| {n} | {} | {ninja_ms} | {noop_ratio} | {} | {} | {} | {} | {} | {} | {} |",
            noop.ms(),
            ms(hash.median()),
            touch.ms(),
            ratio(touch.median(), hash.median()),
            ratio(touch.median(), noop.median() + hash.median()),
            edit.ms(),
            ratio(edit.median(), full.median()),
            ratio(edit.median(), noop.median()),
        )
        .expect("write to String");

        // Every fresh step built again and compared: every built-in
        // processor and the corpus's own is deterministic.
        progress(&format!("{n}: verify"));
        let (t, report) = build_with(tmp.path(), &cache, Some(Verify::all()));
        let differ = report.unreproduced();
        writeln!(
            verify_table,
            "| {n} | {} | {} | {} | {} |",
            report.verified(),
            ms(t),
            ratio(t, full.median()),
            differ.len(),
        )
        .expect("write to String");
        assert!(
            differ.is_empty(),
            "steps that do not reproduce the cache: {:?}",
            differ.iter().map(|s| s.asset.as_str()).collect::<Vec<_>>()
        );

        // Every image renamed at once (a folder reorganized, a naming
        // scheme changed): the sprites and textures, whose processors'
        // outputs do not depend on the path and which no other file names.
        // Each storm gives every one a new name (a new prefix, so each
        // folder keeps its order), so each takes over the outputs of a path
        // that vanished, and each atlas its last record: no processor runs.
        progress(&format!("{n}: rename storm"));
        let mut images = corpus.images.clone();
        let renamed_hash = Sample::of(noop_runs.min(5), || hash_all(&images));
        let mut storm_no = 0;
        let mut steps_run = 0;
        let storm = Sample::of(touch_runs, || {
            storm_no += 1;
            images = rename_all(&images, storm_no);
            let (t, report) = build(tmp.path());
            steps_run = report.ran();
            assert_eq!(steps_run, 0, "a rename storm runs no processor");
            t
        });
        writeln!(
            rename_table,
            "| {n} | {} | {} | {steps_run} | {} | {} | {} |",
            images.len(),
            storm.ms(),
            ms(renamed_hash.median()),
            ratio(storm.median(), noop.median() + renamed_hash.median()),
            ratio(storm.median(), full.median()),
        )
        .expect("write to String");
    }
    format!("{full_table}\n{incr_table}\n{watched_table}\n{rename_table}\n{verify_table}")
}

/// Renames each of `files` in its folder to `r<storm>-<name>` (its
/// original name, a storm's prefix replaced); the new paths.
fn rename_all(files: &[std::path::PathBuf], storm: usize) -> Vec<std::path::PathBuf> {
    files
        .iter()
        .map(|from| {
            let name = from
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a UTF-8 name");
            let original = name.split_once('-').map_or(name, |(_, rest)| rest);
            let to = from.with_file_name(format!("r{storm}-{original}"));
            std::fs::rename(from, &to).expect("rename");
            to
        })
        .collect()
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Bytes in the files under `dir`.
fn tree_len(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}
