//! No-op and full-build benchmark of the pipeline, with its baselines measured
//! in the same run: statting every input, hashing every input, and `ninja`'s
//! no-op on a `build.ninja` with one copy edge per asset (skipped with a note
//! when `ninja` is not installed).
//!
//! Run: `cargo bench -p assets-build --bench noop` (add `-- --quick` for a
//! smoke run at 200 assets). Prints a Markdown table for BENCHMARKS.md.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use assets_build::{BuildOptions, Event, Pipeline};

/// Every fifth asset is a 16×16 PNG; the rest are small text files, in
/// folders of 100.
fn generate(dir: &Path, n: usize) {
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"bench\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let png = {
        let img = image::RgbaImage::from_fn(16, 16, |x, y| {
            image::Rgba([x as u8 * 16, y as u8 * 16, 0, 255])
        });
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    for i in 0..n {
        let folder = dir.join(format!("assets/d{:03}", i / 100));
        std::fs::create_dir_all(&folder).unwrap();
        if i % 5 == 0 {
            std::fs::write(folder.join(format!("a{i}.png")), &png).unwrap();
        } else {
            std::fs::write(folder.join(format!("a{i}.txt")), format!("asset {i}\n")).unwrap();
        }
    }
}

fn build(dir: &Path, jobs: usize) -> (Duration, usize) {
    let mut options = BuildOptions::new(dir.join("Cargo.toml"), dir.join("target/assets"));
    options.jobs = jobs;
    let pipeline = Pipeline::new(options);
    let start = Instant::now();
    let report = pipeline.build(&|_: &Event<'_>| {}).unwrap();
    let elapsed = start.elapsed();
    assert!(report.success());
    (elapsed, report.ran())
}

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir.join("assets"))
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

/// Median and spread (min–max) of `times`.
fn summary(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

/// Median of `runs` timings of `f`.
fn median_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    summary((0..runs).map(|_| f()).collect()).0
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// Writes `build.ninja` (one copy edge per asset), builds it once, and
/// returns a function timing one no-op run; `None` if ninja is not installed.
fn ninja_setup(dir: &Path) -> Option<impl Fn() -> Duration + '_> {
    Command::new("ninja").arg("--version").output().ok()?;
    let mut rules = String::from("rule cp\n  command = cp $in $out\n");
    for f in files(dir) {
        let rel = f.strip_prefix(dir).unwrap().to_str().unwrap().to_owned();
        rules.push_str(&format!("build out/{rel}: cp {rel}\n"));
    }
    std::fs::write(dir.join("build.ninja"), rules).unwrap();
    let run = move || {
        let start = Instant::now();
        let out = Command::new("ninja")
            .arg("-C")
            .arg(dir)
            .arg("-j2")
            .output()
            .unwrap();
        assert!(out.status.success());
        start.elapsed()
    };
    run();
    run();
    Some(run)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[200] } else { &[1_000, 10_000] };
    let runs = if quick { 3 } else { 21 };
    let jobs = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "| assets | full build (ms) | assets/s | no-op median (min–max) ms | stat all (ms) | hash all (ms) | ninja no-op median (ms) | no-op / ninja (median of paired runs) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        generate(dir, n);
        let (full, ran) = build(dir, jobs);
        assert_eq!(ran, n);
        // Inputs written less than 2 s before a build are re-hashed (racy
        // mtimes); wait that out and let one build refresh the records.
        std::thread::sleep(Duration::from_millis(2100));
        build(dir, jobs);
        // Our no-op and ninja's alternate, so drift in the machine's speed
        // hits both alike; the ratio is the median of the paired ratios.
        let ninja = ninja_setup(dir);
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (t, ran) = build(dir, jobs);
            assert_eq!(ran, 0);
            ours.push(t);
            if let Some(ninja) = &ninja {
                let other = ninja();
                theirs.push(other);
                ratios.push(t.as_secs_f64() / other.as_secs_f64());
            }
        }
        let noop = summary(ours);
        let paths = files(dir);
        let stat = median_of(5, || {
            let start = Instant::now();
            for p in files(dir) {
                std::hint::black_box(std::fs::metadata(p).unwrap().len());
            }
            start.elapsed()
        });
        let hash = median_of(5, || {
            let start = Instant::now();
            for p in &paths {
                std::hint::black_box(blake3::hash(&std::fs::read(p).unwrap()));
            }
            start.elapsed()
        });
        let (ninja_ms, ratio) = if theirs.is_empty() {
            ("not installed".to_owned(), "-".to_owned())
        } else {
            ratios.sort_by(f64::total_cmp);
            (
                ms(summary(theirs).0),
                format!("{:.2}", ratios[ratios.len() / 2]),
            )
        };
        println!(
            "| {n} | {} | {:.0} | {} ({}–{}) | {} | {} | {} | {} |",
            ms(full),
            n as f64 / full.as_secs_f64(),
            ms(noop.0),
            ms(noop.1),
            ms(noop.2),
            ms(stat),
            ms(hash),
            ninja_ms,
            ratio
        );
    }
}
