//! Parcel open, validate, lookup and read, against `std::fs::read` of the
//! same bytes, in one run; and reading compressed resources, against
//! `std::fs::read` of the same resources stored as they are.
use std::fmt::Write as _;
use std::time::Duration;

use crate::measure::{self, Sample};

use assets_runtime::write::ParcelWriter;
use assets_runtime::{Compression, Parcel, ParcelBuf, ResourceId};

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
                std::hint::black_box(parcel.get(id).unwrap().stored().len());
            }
        }
    });
    let per_lookup = lookups.as_secs_f64() * 1e9 / (rounds * count) as f64;
    let by_name = time(5, || {
        for n in &names {
            std::hint::black_box(parcel.by_name(n).unwrap().stored().len());
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
                r.stored()
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

/// Level-like JSON text: what a game's data files look like to a
/// compressor (keys repeat, numbers vary). Deterministic in `seed`.
fn level_json(seed: usize, len: usize) -> Vec<u8> {
    let mut out = String::with_capacity(len + 200);
    out.push_str("{\"name\": \"level\", \"entities\": [\n");
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let kinds = ["tree", "coin", "slime", "door", "torch", "chest"];
    while out.len() < len {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let kind = kinds[(x >> 60) as usize % kinds.len()];
        writeln!(
            out,
            "  {{\"kind\": \"{kind}\", \"x\": {}, \"y\": {}, \"hp\": {}, \"tags\": [\"{kind}\", \"layer-{}\"]}},",
            (x >> 20) % 4096,
            (x >> 32) % 4096,
            (x >> 44) % 100,
            (x >> 52) % 8
        )
        .expect("write to String");
    }
    out.truncate(len);
    out.into_bytes()
}

/// Reading every resource's bytes of a parcel of level-like text stored
/// each way, beside `std::fs::read` of the uncompressed parcel; a Markdown
/// table.
pub fn decompression(quick: bool) -> String {
    let (count, size) = if quick {
        (64, 64 << 10)
    } else {
        (512, 256 << 10)
    };
    let dir = tempfile::tempdir().unwrap();
    let runs = if quick { 5 } else { 9 };
    let mut out = String::new();
    let mut plain_read = None;
    let total = (count * size) as f64 / f64::from(1 << 20);
    writeln!(
        out,
        "{count} text resources of {} KiB, {total:.0} MiB in all\n\n| stored | parcel size | read all bytes (`Resource::bytes`) | throughput | vs `fs::read` of the uncompressed parcel |\n|---|---:|---:|---:|---:|",
        size >> 10
    )
    .expect("write to String");
    for compression in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let mut writer = ParcelWriter::compressed(compression);
        for i in 0..count {
            writer.add(&format!("levels/{i:04}.json"), "text", level_json(i, size));
        }
        let bytes = writer.finish().unwrap();
        let path = dir.path().join(format!("{}.parcel", compression.name()));
        std::fs::write(&path, &bytes).unwrap();
        let fs_read = *plain_read.get_or_insert_with(|| {
            time(runs, || {
                std::hint::black_box(std::fs::read(&path).unwrap());
            })
        });
        // Opened once (as a game would); then every resource read in full.
        let buf = ParcelBuf::open(&path).unwrap();
        let read_all = time(runs, || {
            for r in buf.parcel().iter() {
                let bytes = r.bytes().unwrap();
                // Touch every page, so a borrowed resource pays its reads too.
                let sum: usize = bytes.iter().step_by(4096).map(|&b| usize::from(b)).sum();
                std::hint::black_box(sum);
            }
        });
        writeln!(
            out,
            "| {} | {:.1} MiB ({:.2}×) | {:.1} ms | {:.0} MiB/s | {:.2}× |",
            compression.name(),
            bytes.len() as f64 / f64::from(1 << 20),
            bytes.len() as f64 / (count * size) as f64,
            read_all.as_secs_f64() * 1e3,
            total / read_all.as_secs_f64(),
            read_all.as_secs_f64() / fs_read.as_secs_f64(),
        )
        .expect("write to String");
    }
    writeln!(
        out,
        "\n`fs::read` of the uncompressed parcel: {:.1} ms.",
        plain_read.unwrap_or_default().as_secs_f64() * 1e3
    )
    .expect("write to String");
    out
}
