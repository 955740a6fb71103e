//! `assets-bench`: every figure of BENCHMARKS.md from one command.
//!
//! ```sh
//! cargo run --release -p assets-bench                 # everything, at 1k and 10k assets (~10 minutes on 2 cores)
//! cargo run --release -p assets-bench -- --quick      # a smoke run (tiny sizes, one run each; CI)
//! cargo run --release -p assets-bench -- --scales 1000,10000,100000 --only pipeline
//! ```
//!
//! Groups: `pipeline` (a generated corpus: full, no-op, touch-all and
//! edit-one builds against the decode bound, input hashing and ninja; peak
//! memory), `packing` (our packer beside `texture_packer`), `atlas` (one
//! 2,000-sprite atlas), `reload` (save-to-notified latency of `cargo assets
//! watch` on that atlas), `parcel` (open, validate and look up a 1 GiB
//! parcel), `encodings` (size and speed of each way to store images),
//! `textures` (each GPU texture encoder: speed, PSNR, GPU memory),
//! `supercompression` (KTX2 files with zstd levels beside a parcel's own
//! compression), `remote`
//! (the remote cache against a real S3 server process: upload, and a build
//! from an empty local cache with a warm remote).
//! Markdown goes to stdout, progress to stderr. Every comparison is measured
//! side by side in the same run.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod atlas;
mod corpus;
mod encodings;
mod measure;
mod packing;
mod parcel;
mod pipeline;
mod reload;
mod remote;
mod textures;

use std::time::Instant;

const GROUPS: [&str; 9] = [
    "pipeline",
    "remote",
    "packing",
    "atlas",
    "reload",
    "parcel",
    "encodings",
    "textures",
    "supercompression",
];

/// The CLI's allocator: a child build (`--child-build`, `--child-watched`)
/// stands for a `cargo assets build` process, the README's way (the build
/// script runs the installed binary), so it allocates as that does. Every
/// group runs on it since 2026-11-27 (BENCHMARKS.md says which figures
/// came before).
#[global_allocator]
static ALLOCATOR: cargo_assets::Allocator = cargo_assets::Allocator;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = args.as_slice()
        && flag == "--child-build"
    {
        pipeline::child_build(std::path::Path::new(dir));
        return;
    }
    // A watched pipeline's no-ops, to profile by hand (`perf record
    // assets-bench --child-watched DIR 20`).
    if let [flag, dir, n] = args.as_slice()
        && flag == "--child-watched"
    {
        let n = n.parse().expect("a number of no-ops");
        pipeline::child_watched(std::path::Path::new(dir), n);
        return;
    }
    // The pipeline's corpus left on disk, to profile a build of it by hand
    // (`perf record assets-bench --child-build DIR`; BENCHMARKS.md).
    if let [flag, dir, n] = args.as_slice()
        && flag == "--generate"
    {
        let n = n
            .parse()
            .expect("--generate DIR N: N is a number of assets");
        let dir = std::path::Path::new(dir);
        std::fs::create_dir_all(dir).expect("create the corpus folder");
        corpus::generate(dir, n, pipeline::SEED);
        return;
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "assets-bench: the figures of BENCHMARKS.md\n\n\
             Usage: assets-bench [--quick] [--scales N,N...] [--only GROUP,GROUP...]\n\n\
             --quick         a smoke run: tiny sizes, one run each (CI)\n\
             --scales        corpus sizes of the pipeline group (default 1000,10000,100000)\n\
             --only          groups to run: {}\n\
             --art DIR       PNGs for the encodings and textures groups (default: generated art)\n\
             --generate DIR N  only write the pipeline's corpus of N assets to DIR (to profile by hand)\n\
             --child-build DIR only build the corpus at DIR once (cache in DIR), printing peak RSS\n\
             --child-watched DIR N  build it as `watch` does, then N no-ops, N one-sprite edits each after the idle work, N in a row, and its idle check, printing each one's ms\n\n\
             Markdown goes to stdout, progress to stderr.",
            GROUPS.join(", ")
        );
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let scales: Vec<usize> = match value("--scales") {
        Some(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("--scales takes numbers, e.g. 1000,10000")
            })
            .collect(),
        None if quick => vec![300],
        None => vec![1_000, 10_000, 100_000],
    };
    // The remote group uploads and fetches every step through a local S3
    // server: at 100k, minutes for little more than 10k says; its default
    // stops there.
    let remote_scales: Vec<usize> = match value("--scales") {
        Some(_) => scales.clone(),
        None => scales.iter().copied().filter(|&n| n <= 10_000).collect(),
    };
    let only = value("--only");
    let selected = |group: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|g| g == group))
    };
    if let Some(o) = &only
        && let Some(bad) = o.split(',').find(|g| !GROUPS.contains(g))
    {
        eprintln!(
            "error: unknown group `{bad}`; groups: {}",
            GROUPS.join(", ")
        );
        std::process::exit(1);
    }
    let mut watched = None;
    let start = Instant::now();
    let progress = |what: &str| eprintln!("[{:>5.1}s] {what}", start.elapsed().as_secs_f64());
    println!(
        "# cargo-assets benchmarks{}\n",
        if quick {
            " (quick smoke run, not for publishing)"
        } else {
            ""
        }
    );
    println!("{}\n", machine());
    if selected("pipeline") {
        progress("pipeline");
        println!(
            "## Pipeline on a generated corpus\n\n{}",
            pipeline::run(&scales, quick, &progress)
        );
    }
    if selected("remote") {
        progress("remote");
        println!(
            "## Remote cache\n\n{}",
            remote::run(&remote_scales, quick, &progress)
        );
    }
    if selected("packing") {
        progress("packing");
        println!("## Atlas packing\n\n{}", packing::run(quick));
        println!(
            "### Small sets, one page sized to them\n\n{}",
            packing::small_sets(quick)
        );
    }
    if selected("atlas") {
        progress("atlas");
        println!("## One 2,000-sprite atlas\n\n{}", atlas::run(quick));
    }
    if selected("reload") {
        progress("reload");
        let (table, project) = reload::run(quick);
        println!("## Hot reload latency\n\n{table}");
        // The watcher it started runs until the process ends; removing its
        // project now would only make it report a missing manifest.
        watched = Some(project);
    }
    if selected("parcel") {
        progress("parcel");
        println!("## Parcels\n\n{}", parcel::run(quick));
        println!(
            "### Reading compressed resources\n\n{}",
            parcel::decompression(quick)
        );
    }
    if selected("encodings") {
        progress("encodings");
        let art = value("--art").map(std::path::PathBuf::from);
        println!(
            "## Image encodings\n\n{}",
            encodings::run(quick, art.as_deref())
        );
    }
    if selected("textures") {
        progress("textures");
        let art = value("--art").map(std::path::PathBuf::from);
        println!(
            "## GPU textures\n\n{}",
            textures::run(quick, art.as_deref())
        );
    }
    if selected("supercompression") {
        progress("supercompression");
        let art = value("--art").map(std::path::PathBuf::from);
        println!(
            "## KTX2 supercompression\n\n{}",
            textures::supercompression(quick, art.as_deref())
        );
    }
    progress("done");
    drop(watched);
}

/// CPU model, core count, memory and OS, as far as Linux tells.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, m)| m.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                let kib: f64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(format!("{:.0} GiB", kib / 1024.0 / 1024.0))
            })
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "Machine: {cpu}, {cores} cores, {mem}, Linux {}.",
        kernel.trim()
    )
}
