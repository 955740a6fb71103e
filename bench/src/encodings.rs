//! How images are stored in parcels: size and speed of each encoding, side
//! by side in one run, on game art.
//!
//! The art is either a folder of PNGs (`--art DIR`: real art, such as the
//! example tilesets and sprites in Tiled's repository), or a generated set
//! shaped like 2D game art: flat fills, gradients, dark outlines, transparent
//! surroundings, and some dithered or noisy textures (a generator cannot be
//! real art, so the published table states which was used).
//!
//! For each encoding: bytes stored (against the source PNG files), the time
//! to make them (what a build pays), and the time to get raw rows back (what
//! a game pays at load: `Image::pixels`, or a PNG decode with `image`).

use std::fmt::Write as _;
use std::path::Path;

use assets_runtime::image::{
    Encoding, IMAGE_HEADER_LEN, Image, ImageHeader, PixelFormat, ZSTD_LEVEL, encode_pixels,
};
use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder, RgbaImage};

use crate::measure::{self, Sample};

/// One way to store an image, as the table names it.
#[derive(Clone, Copy)]
enum Way {
    Raw,
    Png,
    Lz4,
    Zstd(i32),
}

const WAYS: [Way; 7] = [
    Way::Raw,
    Way::Png,
    Way::Lz4,
    Way::Zstd(3),
    Way::Zstd(9),
    Way::Zstd(15),
    Way::Zstd(19),
];

impl Way {
    fn name(self) -> String {
        match self {
            Way::Raw => "raw".into(),
            Way::Png => "png (image crate, default)".into(),
            Way::Lz4 => "lz4 (dev default)".into(),
            Way::Zstd(level) if level == ZSTD_LEVEL => format!("zstd {level} (release default)"),
            Way::Zstd(level) => format!("zstd {level}"),
        }
    }

    fn encoding(self) -> Encoding {
        match self {
            Way::Raw => Encoding::Raw,
            Way::Png => Encoding::Png,
            Way::Lz4 => Encoding::Lz4,
            Way::Zstd(_) => Encoding::Zstd,
        }
    }

    /// The payload after the image header.
    fn encode(self, image: &RgbaImage) -> Vec<u8> {
        match self {
            Way::Raw => image.as_raw().clone(),
            Way::Png => png(image),
            Way::Lz4 => encode_pixels(Encoding::Lz4, image.as_raw()).expect("lz4 is always there"),
            Way::Zstd(level) => {
                zstd::bulk::compress(image.as_raw(), level).expect("compress to memory")
            }
        }
    }
}

fn png(image: &RgbaImage) -> Vec<u8> {
    let mut out = Vec::new();
    PngEncoder::new(&mut out)
        .write_image(
            image.as_raw(),
            image.width(),
            image.height(),
            ExtendedColorType::Rgba8,
        )
        .expect("encode PNG");
    out
}

/// The table, for the art in `dir` (PNG files) or a generated set.
pub fn run(quick: bool, dir: Option<&Path>) -> String {
    let (images, source_bytes, what) = match dir {
        Some(dir) => load(dir),
        None => generated(quick),
    };
    let raw_bytes: usize = images.iter().map(|i| i.as_raw().len()).sum();
    let runs = if quick { 1 } else { 5 };
    let mut out = format!(
        "{what}: {} images, {:.1} MB as PNG files, {:.1} MB as raw RGBA8.\n\n\
         | encoding | stored | / PNG files | encode, all images | decode to rows, all images |\n\
         |---|---:|---:|---:|---:|\n",
        images.len(),
        source_bytes as f64 / 1e6,
        raw_bytes as f64 / 1e6,
    );
    for way in &WAYS {
        let payloads: Vec<Vec<u8>> = images.iter().map(|i| way.encode(i)).collect();
        let encode = Sample::of(runs, || {
            measure::time(|| {
                for image in &images {
                    std::hint::black_box(way.encode(image));
                }
            })
        });
        let resources: Vec<Vec<u8>> = images
            .iter()
            .zip(&payloads)
            .map(|(image, payload)| {
                let header = ImageHeader {
                    width: image.width(),
                    height: image.height(),
                    format: PixelFormat::Rgba8,
                    encoding: way.encoding(),
                };
                let mut bytes = header.encode().to_vec();
                bytes.extend_from_slice(payload);
                bytes
            })
            .collect();
        let decode = Sample::of(runs, || measure::time(|| decode_all(&resources, &images)));
        let stored: usize = resources.iter().map(Vec::len).sum();
        let _ = writeln!(
            out,
            "| {} | {:.2} MB | {:.2} | {} ms | {} ms |",
            way.name(),
            stored as f64 / 1e6,
            stored as f64 / source_bytes as f64,
            measure::ms(encode.median()),
            measure::ms(decode.median()),
        );
    }
    out.push_str(&format!(
        "\nEncode: one core, every image once (a build spreads images over the cores). \
         Decode: `Image::pixels` (LZ4 with `lz4_flex`, zstd with `ruzstd`, both pure Rust), \
         or the `image` crate for PNG. Median of {runs}. Every decoded image is checked \
         against its source pixels.\n"
    ));
    out.push_str(&sources(&images, runs));
    out
}

/// Writes an image as a file of some format.
type Encoder<'a> = &'a dyn Fn(&RgbaImage) -> Vec<u8>;

/// What a build pays to decode its sources: the same images as PNG and as
/// lossless WebP files, decoded by the pipeline's own decoding
/// (`decode_rgba8`), side by side.
fn sources(images: &[RgbaImage], runs: usize) -> String {
    let webp = |image: &RgbaImage| {
        let mut out = Vec::new();
        image::codecs::webp::WebPEncoder::new_lossless(&mut out)
            .encode(
                image.as_raw(),
                image.width(),
                image.height(),
                ExtendedColorType::Rgba8,
            )
            .expect("encode lossless WebP");
        out
    };
    let formats: [(&str, Encoder<'_>); 2] = [
        ("PNG (`image`'s encoder)", &png),
        ("WebP, lossless (`image`'s encoder)", &webp),
    ];
    let mut out = String::from(
        "\nSource files: what a build decodes. The same images as files of each format, \
         decoded to RGBA8 by the pipeline's `decode_rgba8` (the `image` crate: `png`, and \
         `image-webp`), one core, median of the runs; every decode is checked against the \
         source pixels. Lossy WebP is not measured: no pure-Rust encoder writes it.\n\n\
         | source format | files | decode, all images | / PNG |\n|---|---:|---:|---:|\n",
    );
    let mut png_ms = None;
    for (name, encode) in formats {
        let files: Vec<Vec<u8>> = images.iter().map(encode).collect();
        let decode = Sample::of(runs, || {
            measure::time(|| {
                for (file, image) in files.iter().zip(images) {
                    let decoded =
                        assets_build::unstable::images::decode_rgba8(file, 16384).expect("decodes");
                    assert!(
                        decoded.as_raw() == image.as_raw(),
                        "{name} changed the pixels"
                    );
                }
            })
        });
        let seconds = decode.median().as_secs_f64();
        let png = *png_ms.get_or_insert(seconds);
        let ratio = format!("{:.2}", seconds / png);
        let ms = measure::ms(decode.median());
        let bytes: usize = files.iter().map(Vec::len).sum();
        let _ = writeln!(
            out,
            "| {name} | {:.2} MB | {ms} ms | {ratio} |",
            bytes as f64 / 1e6
        );
    }
    out
}

/// Decodes every resource to raw rows and checks them against `images`.
fn decode_all(resources: &[Vec<u8>], images: &[RgbaImage]) {
    for (bytes, image) in resources.iter().zip(images) {
        let header = ImageHeader::parse(bytes).expect("a valid image resource");
        let payload = &bytes[IMAGE_HEADER_LEN..];
        let rows: Vec<u8> = match header.encoding {
            Encoding::Png => image::load_from_memory(payload)
                .expect("PNG")
                .into_rgba8()
                .into_raw(),
            _ => Image {
                header,
                data: payload,
            }
            .pixels()
            .expect("decodes")
            .into_owned(),
        };
        assert!(rows == *image.as_raw(), "an encoding changed the pixels");
    }
}

/// Every PNG under `dir`, decoded, and their file sizes' sum.
pub(crate) fn load(dir: &Path) -> (Vec<RgbaImage>, usize, String) {
    let mut paths: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("png"))
        })
        .map(|e| e.into_path())
        .collect();
    paths.sort();
    let mut bytes = 0;
    let images = paths
        .iter()
        .map(|p| {
            let data = std::fs::read(p).expect("read a PNG");
            bytes += data.len();
            image::load_from_memory(&data)
                .expect("decode a PNG")
                .into_rgba8()
        })
        .collect();
    (
        images,
        bytes,
        format!("PNG files under `{}`", dir.display()),
    )
}

/// A generated set shaped like 2D game art, and its size as PNG files.
pub(crate) fn generated(quick: bool) -> (Vec<RgbaImage>, usize, String) {
    let mut rng = crate::corpus::Rng::new(0xa27);
    let count = if quick { 12 } else { 120 };
    let images: Vec<RgbaImage> = (0..count)
        .map(|i| {
            let (w, h) = match i % 10 {
                0 => (1024, 512),                              // a background
                1 | 2 => (256, 256),                           // a tileset
                _ => (rng.range(24, 160), rng.range(24, 160)), // sprites
            };
            art(w, h, i % 10 == 0 || i % 7 == 3, &mut rng)
        })
        .collect();
    let bytes = images.iter().map(|i| png(i).len()).sum();
    (
        images,
        bytes,
        "Generated 2D art (`assets-bench --only encodings`)".into(),
    )
}

/// Shapes with flat or gradient fills and dark outlines on transparency;
/// `textured` adds per-pixel noise of a few levels, as painted or dithered
/// art has.
fn art(w: u32, h: u32, textured: bool, rng: &mut crate::corpus::Rng) -> RgbaImage {
    let mut image = RgbaImage::new(w, h);
    let shapes = rng.range(2, 7);
    for _ in 0..shapes {
        let (cx, cy) = (rng.range(0, w) as i64, rng.range(0, h) as i64);
        let r = rng.range(w.min(h) / 6 + 1, w.min(h) / 2 + 2) as i64;
        let base = [
            rng.range(0, 255) as u8,
            rng.range(0, 255) as u8,
            rng.range(0, 255) as u8,
        ];
        let gradient = rng.range(0, 1) == 1;
        let round = rng.range(0, 1) == 1;
        for y in (cy - r).max(0)..(cy + r).min(h as i64) {
            for x in (cx - r).max(0)..(cx + r).min(w as i64) {
                let (dx, dy) = (x - cx, y - cy);
                let d = if round {
                    ((dx * dx + dy * dy) as f64).sqrt()
                } else {
                    dx.abs().max(dy.abs()) as f64
                };
                if d >= r as f64 {
                    continue;
                }
                let shade = if gradient {
                    (y - (cy - r)) as f64 / (2 * r) as f64
                } else {
                    0.5
                };
                let mut c = base.map(|v| (v as f64 * (0.6 + 0.8 * shade)).min(255.0) as u8);
                if d >= r as f64 - 1.5 {
                    c = c.map(|v| v / 4); // the outline
                } else if textured {
                    let n = rng.range(0, 4) as u8 * 6;
                    c = c.map(|v| v.saturating_add(n));
                }
                image.put_pixel(x as u32, y as u32, image::Rgba([c[0], c[1], c[2], 255]));
            }
        }
    }
    image
}
