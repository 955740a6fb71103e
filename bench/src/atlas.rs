//! One atlas of 2,000 sprites through the whole pipeline: the cold build,
//! the no-op, and the build after editing one sprite (re-decode it, re-pack
//! the atlas from cached pixels, redraw and store the pages, rewrite the
//! parcel), side by side in one run.
//!
//! Sprites (fixed seed): sides uniform in 12–96 px, every third with a
//! transparent border of 1–4 px, on 2048×2048 pages with padding 2, raw
//! page encoding.
//!
//! The edit replaces a sprite with a new 40×30 image, a different one each
//! time, so every edit really re-decodes and re-packs.
//!

use std::path::Path;
use std::time::Duration;

use crate::measure::{Sample, cold_builds, ratio, time};

use assets_build::{unstable::BuildOptions, unstable::Event, unstable::Pipeline};

/// A `w`×`h` sprite PNG with a transparent border, its pixels from `seed`.
pub fn sprite_png(w: u32, h: u32, border: u32, seed: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        if x < border || y < border || x + border >= w || y + border >= h {
            return image::Rgba([0; 4]);
        }
        let v = (x.wrapping_mul(2246822519) ^ y.wrapping_mul(3266489917))
            .wrapping_add(seed.wrapping_mul(668265263));
        image::Rgba([v as u8, (v >> 8) as u8, (v >> 16) as u8, 255])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// Writes the 2,000-sprite (or `n`-sprite) atlas project into `dir`.
pub fn generate(dir: &Path, n: u32) {
    std::fs::write(
        dir.join("Cargo.toml"),
        r#"[package]
name = "bench"
version = "0.1.0"

[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"

[package.metadata.assets.atlases.main]
max-size = 2048
padding = 2
"#,
    )
    .unwrap();
    let mut state: u64 = 0xa71a5;
    let mut next = move |lo: u32, hi: u32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lo + (state % u64::from(hi - lo + 1)) as u32
    };
    for i in 0..n {
        let folder = dir.join(format!("assets/sprites/d{:02}", i / 100));
        std::fs::create_dir_all(&folder).unwrap();
        let (w, h) = (next(12, 96), next(12, 96));
        let border = if i % 3 == 0 { next(1, 4) } else { 0 };
        std::fs::write(
            folder.join(format!("s{i}.png")),
            sprite_png(w, h, border, i),
        )
        .unwrap();
    }
}

fn build(dir: &Path) -> (Duration, usize, usize) {
    build_into(dir, &dir.join("target/assets"))
}

fn build_into(dir: &Path, cache: &Path) -> (Duration, usize, usize) {
    let options = BuildOptions::new(dir.join("Cargo.toml"), cache.to_owned());
    let mut report = None;
    let elapsed = time(|| {
        report = Some(
            Pipeline::new(options)
                .build(&|_: &Event<'_>| {})
                .expect("builds"),
        );
    });
    let report = report.expect("built");
    assert!(report.success());
    let pages = report
        .steps
        .iter()
        .find(|s| s.asset.as_str() == "atlas:main")
        .and_then(|s| s.record.as_ref())
        .map_or(0, |r| r.outputs.len() - 1);
    (elapsed, report.ran(), pages)
}

/// The cold build, the no-op and one-sprite edits; a Markdown table.
pub fn run(quick: bool) -> String {
    let (n, edits) = if quick { (100, 2) } else { (2_000, 9) };
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    generate(dir, n);
    // Cold builds are noisy here (thousands of file creations on ext4):
    // the median of three, each from an empty cache.
    let mut pages = 0;
    let full = cold_builds(dir, 3, |cache| {
        let (t, ran, p) = build_into(dir, cache);
        assert_eq!(ran as u32, n + 1, "every sprite and the atlas");
        pages = p;
        t
    });
    std::thread::sleep(Duration::from_millis(2100)); // past the racy-mtime window
    build(dir);
    let noop = Sample::of(edits, || build(dir).0);
    let mut e = 0;
    let edit = Sample::of(edits, || {
        let i = (e * 211) % n;
        let path = dir.join(format!("assets/sprites/d{:02}/s{i}.png", i / 100));
        std::fs::write(&path, sprite_png(40, 30, 2, 10_000 + e)).expect("write sprite");
        e += 1;
        let (t, ran, _) = build(dir);
        assert_eq!(ran, 2, "the edited sprite and the atlas");
        t
    });
    format!(
        "| sprites | pages | full build, median (min–max) ms | no-op median (min–max) ms | edit one sprite median (min–max) ms | edit / full |\n\
         |---:|---:|---:|---:|---:|---:|\n\
         | {n} | {pages} | {} | {} | {} | {} |\n",
        full.ms(),
        noop.ms(),
        edit.ms(),
        ratio(edit.median(), full.median()),
    )
}
