//! Parcel open, validate, lookup and read, against `std::fs::read` of the
//! same bytes, in one run.
//!
use std::fmt::Write as _;
use std::time::Duration;

use crate::measure::{self, Sample};

use assets_runtime::write::ParcelWriter;
use assets_runtime::{Parcel, ParcelBuf, ResourceId};

/// The median of `runs` timings of `f`.
fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    Sample::of(runs, || measure::time(&mut f)).median()
}

/// Open, validate, look up and verify a 1 GiB parcel; a Markdown table.
pub fn run(quick: bool) -> String {
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
    let read = time(runs, || {
        std::hint::black_box(ParcelBuf::read(&path).unwrap());
    });
    // Mapped, then every resource touched once: what a game that uses it
    // all pays in the end (page faults instead of one big read).
    let open_and_touch = time(runs, || {
        let buf = ParcelBuf::open(&path).unwrap();
        let sum: usize = buf
            .parcel()
            .iter()
            .map(|r| {
                r.data
                    .iter()
                    .step_by(4096)
                    .map(|&b| usize::from(b))
                    .sum::<usize>()
            })
            .sum();
        std::hint::black_box(sum);
    });
    let gib = bytes.len() as f64 / f64::from(1 << 30);
    let mut out = format!(
        "{count} resources, {gib:.3} GiB\n\n| measure | median | per unit |\n|---|---:|---:|\n"
    );
    let mut row = |what: &str, median: String, unit: String| {
        writeln!(out, "| {what} | {median} | {unit} |").expect("write to String");
    };
    row(
        "validate (`Parcel::from_bytes`, in memory)",
        format!("{:.1} µs", validate.as_secs_f64() * 1e6),
        format!(
            "{:.0} ns/entry",
            validate.as_secs_f64() * 1e9 / count as f64
        ),
    );
    row("lookup by id", format!("{per_lookup:.1} ns"), String::new());
    row(
        "lookup by name (hash + compare)",
        format!("{per_name:.1} ns"),
        String::new(),
    );
    row(
        "verify all resource checksums (xxh3)",
        format!("{:.1} ms", verify.as_secs_f64() * 1e3),
        format!("{:.2} GiB/s", gib / verify.as_secs_f64()),
    );
    row(
        "`std::fs::read` of the file",
        format!("{:.1} ms", fs_read.as_secs_f64() * 1e3),
        format!("{:.2} GiB/s", gib / fs_read.as_secs_f64()),
    );
    row(
        "`ParcelBuf::open` (memory map + validate)",
        format!("{:.1} µs", open.as_secs_f64() * 1e6),
        format!(
            "{:.5}× `fs::read`",
            open.as_secs_f64() / fs_read.as_secs_f64()
        ),
    );
    row(
        "`ParcelBuf::open`, then one byte of every page read",
        format!("{:.1} ms", open_and_touch.as_secs_f64() * 1e3),
        format!(
            "{:.2}× `fs::read`",
            open_and_touch.as_secs_f64() / fs_read.as_secs_f64()
        ),
    );
    row(
        "`ParcelBuf::read` (read + validate, the fallback)",
        format!("{:.1} ms", read.as_secs_f64() * 1e3),
        format!(
            "{:.2}× `fs::read`",
            read.as_secs_f64() / fs_read.as_secs_f64()
        ),
    );
    out
}
