//! Parcel open, validate, lookup and read, against `std::fs::read` of the
//! same bytes, in one run.
//!
//! Run: `cargo bench -p assets-runtime --features write --bench parcel`
//! (`-- --quick` for a smoke run on a small parcel).
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use assets_runtime::write::ParcelWriter;
use assets_runtime::{Parcel, ParcelBuf, ResourceId};

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (count, size) = if quick {
        (1_000, 1_000)
    } else {
        (10_000, 107_374)
    }; // 10k × 105 KiB ≈ 1 GiB
    let names: Vec<String> = (0..count)
        .map(|i| format!("assets/d{:03}/resource{i}.bin", i / 100))
        .collect();
    let mut writer = ParcelWriter::new();
    for (i, name) in names.iter().enumerate() {
        let data: Vec<u8> = (0..size).map(|j| (i * 31 + j * 7) as u8).collect();
        writer.add(name, "bytes", data);
    }
    let bytes = writer.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parcel");
    std::fs::write(&path, &bytes).unwrap();
    let ids: Vec<ResourceId> = names.iter().map(|n| ResourceId::of(n)).collect();

    let validate = time(21, || {
        std::hint::black_box(Parcel::from_bytes(&bytes).unwrap());
    });
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let rounds = if quick { 10 } else { 100 };
    let lookups = time(5, || {
        for _ in 0..rounds {
            for &id in &ids {
                std::hint::black_box(parcel.get(id).unwrap().data.len());
            }
        }
    });
    let per_lookup = lookups.as_secs_f64() * 1e9 / (rounds * count) as f64;
    let by_name = time(5, || {
        for n in &names {
            std::hint::black_box(parcel.by_name(n).unwrap().data.len());
        }
    });
    let per_name = by_name.as_secs_f64() * 1e9 / count as f64;
    let verify = time(3, || parcel.verify().unwrap());
    let runs = if quick { 5 } else { 7 };
    let fs_read = time(runs, || {
        std::hint::black_box(std::fs::read(&path).unwrap());
    });
    let open = time(runs, || {
        std::hint::black_box(ParcelBuf::open(&path).unwrap());
    });
    let gib = bytes.len() as f64 / f64::from(1 << 30);
    println!("parcel: {count} resources, {:.3} GiB", gib);
    println!("| measure | median | per unit |");
    println!("|---|---:|---:|");
    println!(
        "| validate (from_bytes, in memory) | {:.1} µs | {:.0} ns/entry |",
        validate.as_secs_f64() * 1e6,
        validate.as_secs_f64() * 1e9 / count as f64
    );
    println!("| lookup by id | {:.1} ns | |", per_lookup);
    println!("| lookup by name (hash + compare) | {:.1} ns | |", per_name);
    println!(
        "| verify all checksums | {:.1} ms | {:.2} GiB/s |",
        verify.as_secs_f64() * 1e3,
        gib / verify.as_secs_f64()
    );
    println!(
        "| std::fs::read of the file | {:.1} ms | {:.2} GiB/s |",
        fs_read.as_secs_f64() * 1e3,
        gib / fs_read.as_secs_f64()
    );
    println!(
        "| ParcelBuf::open (read + validate) | {:.1} ms | ratio to fs::read {:.3} |",
        open.as_secs_f64() * 1e3,
        open.as_secs_f64() / fs_read.as_secs_f64()
    );
}
