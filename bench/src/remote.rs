//! The remote cache on the generated corpus, against a real S3 server
//! process on this machine (`assets-s3-server`: s3s-fs over a temp
//! directory, reached over HTTP through OpenDAL's S3 client):
//!
//! - **upload**: a cold build that writes its results to an empty remote,
//!   against a cold build without a remote;
//! - **warm remote**: a build from an empty local cache with every result on
//!   the remote (a fresh CI runner or a new clone), against the cold local
//!   build and the warm local no-op, with the bytes it downloaded.
//!
//! Cold and warm-remote builds alternate, and the ratios are medians of the
//! pairs. The server shares the machine's cores with the build: a remote
//! across a network costs latency instead, which the requests in flight
//! (32 at once) are there to hide.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use assets_build::{unstable::BuildReport, unstable::RemoteConfig};
use assets_test_support::s3_server::S3Server;

use crate::corpus;
use crate::measure::{Sample, ms, paired_ratio};
use crate::pipeline::{SEED, build_configured};

fn build(dir: &Path, cache: &Path, remote: Option<RemoteConfig>) -> (Duration, BuildReport) {
    build_configured(dir, cache, |options| options.remote = remote)
}

/// The remote's URI with the test server's keys in it (the query is never
/// shown).
fn config(server: &S3Server, write: bool) -> RemoteConfig {
    let mut config = RemoteConfig::new(format!(
        "{}&access_key_id=assets-test&secret_access_key=assets-test-secret",
        server.url("bench")
    ));
    config.write = write;
    config
}

pub fn run(scales: &[usize], quick: bool, progress: &dyn Fn(&str)) -> String {
    let mut table = String::from(
        "| corpus | steps | cold local, median ms | cold + upload ms | upload / cold | uploaded (MB) | warm remote, empty local cache, median ms | warm remote / cold local (paired) | warm local no-op ms | warm remote / no-op | steps fetched | downloaded (MB) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let runs = if quick { 1 } else { 3 };
    for &n in scales {
        let tmp = tempfile::tempdir().expect("temp dir");
        progress(&format!("remote {n}: generating"));
        corpus::generate(tmp.path(), n, SEED);
        let row = measure(tmp.path(), runs, progress);
        writeln!(table, "| generated, {n} assets | {row}").expect("write to String");
    }
    // Where a remote pays most: steps that are expensive to run.
    let tmp = tempfile::tempdir().expect("temp dir");
    let (images, _, what) = crate::encodings::generated(quick);
    progress("remote: BC7 textures");
    textures(tmp.path(), &images);
    let row = measure(tmp.path(), runs, progress);
    writeln!(
        table,
        "| {what}, {} textures as BC7 with mips | {row}",
        images.len()
    )
    .expect("write to String");
    table
}

/// A package of `images` built by the `texture` processor as BC7.
fn textures(dir: &Path, images: &[image::RgbaImage]) {
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"textures\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"**/*.png\"\nprocessor = \"texture\"\nformat = \"bc7\"\n",
    )
    .expect("write Cargo.toml");
    std::fs::create_dir_all(dir.join("assets")).expect("assets folder");
    for (i, image) in images.iter().enumerate() {
        image
            .save(dir.join(format!("assets/t{i:03}.png")))
            .expect("write texture");
    }
}

/// One row of the table for the package at `dir` (from `steps` on).
fn measure(dir: &Path, runs: usize, progress: &dyn Fn(&str)) -> String {
    let server = S3Server::start();
    progress("cold build uploading");
    let (upload, uploaded) = build(dir, &dir.join("cache-upload"), Some(config(&server, true)));
    let stats = uploaded.remote.clone().expect("a remote");
    assert!(!stats.unavailable, "the server answers");
    assert_eq!(stats.uploaded, uploaded.ran(), "every step uploaded");
    progress("cold local and warm remote, alternated");
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    let mut fetched = 0;
    let mut down = 0;
    for k in 0..runs {
        cold.push(build(dir, &dir.join(format!("cache-cold-{k}")), None).0);
        let (t, report) = build(
            dir,
            &dir.join(format!("cache-warm-{k}")),
            Some(config(&server, false)),
        );
        assert_eq!(report.ran(), 0, "everything comes from the remote");
        fetched = report.fetched();
        down = report.remote.map_or(0, |r| r.bytes_down);
        warm.push(t);
    }
    let noop = Sample::of(runs.max(3), || {
        build(dir, &dir.join("cache-warm-0"), None).0
    });
    let (cold_s, warm_s) = (Sample::from(cold.clone()), Sample::from(warm.clone()));
    let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
    format!(
        "{} | {} | {} | {:.2} | {} | {} | {} | {} | {:.1} | {fetched} | {} |",
        uploaded.steps.len(),
        cold_s.ms(),
        ms(upload),
        upload.as_secs_f64() / cold_s.median().as_secs_f64(),
        mb(stats.bytes_up),
        warm_s.ms(),
        paired_ratio(&warm, &cold),
        noop.ms(),
        warm_s.median().as_secs_f64() / noop.median().as_secs_f64(),
        mb(down),
    )
}
