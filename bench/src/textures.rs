//! GPU textures: each encoder of the `texture` processor side by side in
//! one run, on the same images: textures per second (mip chain and
//! encoding, one core, as each texture step runs), quality as PSNR of level
//! 0 against the source (RGB; decoded by `texture2ddecoder`, an independent
//! decoder), and GPU memory for the whole chain against RGBA8. UASTC is
//! first transcoded as a loader would (Binomial's transcoder): to BC7, what
//! a desktop GPU is given, and to ASTC 4×4, a lossless step that shows
//! UASTC's own quality.
//!
//! The `supercompression` group ([`supercompression`]): the same textures'
//! files, plain and with each level a zstd frame at several levels, beside
//! what a release parcel's own compression makes of the plain file; the
//! time to compress, and to get every level back through the runtime's
//! reader.

use std::fmt::Write as _;
use std::path::Path;

use assets_build::unstable::builtins::texture::Quality;
use assets_build::unstable::builtins::texture::{Level, Texels, chain};
use assets_build::unstable::builtins::texture::{encode, encode_with};
use assets_runtime::TextureFormat;
use image::RgbaImage;

use crate::measure::{self, Sample};

/// The encoders compared, with the effort setting that applies.
const CASES: [(TextureFormat, Quality); 17] = [
    (TextureFormat::Rgba8UnormSrgb, Quality::Basic),
    (TextureFormat::Bc1RgbaUnormSrgb, Quality::Basic),
    (TextureFormat::Bc3RgbaUnormSrgb, Quality::Basic),
    (TextureFormat::Bc7RgbaUnormSrgb, Quality::Fastest),
    (TextureFormat::Bc7RgbaUnormSrgb, Quality::Fast),
    (TextureFormat::Bc7RgbaUnormSrgb, Quality::Basic),
    (TextureFormat::Bc7RgbaUnormSrgb, Quality::Slow),
    (TextureFormat::Etc2Rgb8UnormSrgb, Quality::Basic),
    (TextureFormat::Astc4x4UnormSrgb, Quality::Fastest),
    (TextureFormat::Astc4x4UnormSrgb, Quality::Fast),
    (TextureFormat::Astc4x4UnormSrgb, Quality::Basic),
    (TextureFormat::Astc4x4UnormSrgb, Quality::Slow),
    (TextureFormat::Astc6x6UnormSrgb, Quality::Basic),
    (TextureFormat::Astc8x8UnormSrgb, Quality::Basic),
    (TextureFormat::Uastc4x4UnormSrgb, Quality::Fast),
    (TextureFormat::Uastc4x4UnormSrgb, Quality::Basic),
    (TextureFormat::Uastc4x4UnormSrgb, Quality::Slow),
];

/// The art in `dir` (PNG files) or a generated set, and what it is.
fn art(quick: bool, dir: Option<&Path>) -> (Vec<RgbaImage>, String) {
    let (mut images, _, what) = match dir {
        Some(dir) => crate::encodings::load(dir),
        None => crate::encodings::generated(quick),
    };
    if quick {
        // A smoke run needs each encoder once, not the two 1024x512
        // backgrounds: they are most of the pixels, and of CI's minutes in
        // a debug build.
        images.retain(|i| i.width() * i.height() <= 256 * 256);
    }
    (images, what)
}

/// The table, for the art in `dir` (PNG files) or a generated set.
pub fn run(quick: bool, dir: Option<&Path>) -> String {
    let (images, what) = art(quick, dir);
    let runs = if quick { 1 } else { 3 };
    let pixels: u64 = images
        .iter()
        .map(|i| u64::from(i.width()) * u64::from(i.height()))
        .sum();
    let mut out = format!(
        "{what}: {} images, {:.2} Mpixels at level 0.\n\n\
         | format | effort | textures/s (mips + encode, 1 core) | PSNR RGB, level 0 (all images; worst image) | GPU bytes, all levels | / RGBA8 |\n\
         |---|---|---:|---:|---:|---:|\n",
        images.len(),
        pixels as f64 / 1e6,
    );
    let rgba8_bytes: u64 = images
        .iter()
        .map(|i| gpu_bytes(TextureFormat::Rgba8UnormSrgb, i.width(), i.height()))
        .sum();
    // The slowest BC7 effort takes most of the group's time: not in a smoke run.
    let cases = CASES.iter().filter(|(_, q)| !quick || *q != Quality::Slow);
    for &(format, quality) in cases {
        let build = |image: &RgbaImage| -> Vec<Vec<u8>> {
            let base = Level {
                width: image.width(),
                height: image.height(),
                pixels: image.as_raw().clone(),
            };
            let alpha = image.pixels().any(|p| p[3] != 255);
            chain(base, Texels::Srgb, true)
                .iter()
                .map(|level| encode(level, format, quality, alpha).expect("encodes"))
                .collect()
        };
        let time = Sample::of(runs, || {
            measure::time(|| {
                for image in &images {
                    std::hint::black_box(build(image));
                }
            })
        });
        let level0: Vec<Vec<u8>> = images.iter().map(|i| build(i).swap_remove(0)).collect();
        // Over all images' pixels together, and the worst single image,
        // as `format` is decoded (UASTC: transcoded to `to` first).
        let psnr_as = |to: Option<basis_universal::TranscoderBlockFormat>| {
            let errors: Vec<(f64, usize)> = (images.iter().zip(&level0))
                .map(|(image, level)| {
                    let (w, h) = (image.width(), image.height());
                    let decoded = match to {
                        Some(to) => decode_uastc(level, w, h, to),
                        None => decode(format, level, w, h),
                    };
                    squared_error(image, &decoded)
                })
                .collect();
            let all = psnr(
                errors.iter().map(|e| e.0).sum(),
                errors.iter().map(|e| e.1).sum(),
            );
            let worst = (errors.iter())
                .map(|&(se, n)| psnr(se, n))
                .fold(f64::INFINITY, f64::min);
            (all, worst)
        };
        let shown = |(all, worst): (f64, f64)| {
            if all.is_finite() {
                format!("{all:.1} dB, {worst:.1} dB")
            } else {
                "lossless".into()
            }
        };
        let psnr_cell = if format.needs_transcoding() {
            use basis_universal::TranscoderBlockFormat as To;
            format!(
                "as BC7: {}; as ASTC 4x4: {}",
                shown(psnr_as(Some(To::BC7))),
                shown(psnr_as(Some(To::ASTC_4x4)))
            )
        } else {
            shown(psnr_as(None))
        };
        let bytes: u64 = images
            .iter()
            .map(|i| gpu_bytes(format, i.width(), i.height()))
            .sum();
        let per_second = images.len() as f64 / time.median().as_secs_f64();
        let effort = match (format.block_size(), format) {
            (1, _)
            | (
                _,
                TextureFormat::Bc1RgbaUnormSrgb
                | TextureFormat::Bc3RgbaUnormSrgb
                | TextureFormat::Etc2Rgb8UnormSrgb,
            ) => "-",
            _ => match quality {
                Quality::Fastest => "fastest",
                Quality::Fast => "fast",
                Quality::Basic => "basic",
                Quality::Slow => "slow",
            },
        };
        let _ = writeln!(
            out,
            "| {} | {effort} | {per_second:.1} | {psnr_cell} | {:.2} MB | {:.3} |",
            format.name(),
            bytes as f64 / 1e6,
            bytes as f64 / rgba8_bytes as f64,
        );
    }
    out
}

/// The formats the supercompression table compares: uncompressed, the two
/// BC sizes, ETC2, and UASTC without and with RDO (its lambda), which is
/// made for zstd.
const SUPERCOMPRESSED: [(TextureFormat, Option<f32>); 6] = [
    (TextureFormat::Rgba8UnormSrgb, None),
    (TextureFormat::Bc1RgbaUnormSrgb, None),
    (TextureFormat::Bc7RgbaUnormSrgb, None),
    (TextureFormat::Etc2Rgb8UnormSrgb, None),
    (TextureFormat::Uastc4x4UnormSrgb, None),
    (TextureFormat::Uastc4x4UnormSrgb, Some(1.0)),
];

/// zstd levels of the supercompression table: toktx's default (3), the
/// runtime's image rows (9), the `texture` processor's (19).
const SUPERCOMPRESSION_LEVELS: [i32; 3] = [3, 9, 19];

/// The KTX2 supercompression table, for the art in `dir` or a generated
/// set: file bytes plain, in a release parcel (the plain file compressed
/// whole at the parcel's resource level, where that saves enough), and
/// supercompressed at each level; the time to compress (all textures, one
/// core) and to read every level back with `Texture::level`.
pub fn supercompression(quick: bool, dir: Option<&Path>) -> String {
    use assets_runtime::texture::{Texture, write};
    let (images, what) = art(quick, dir);
    let runs = if quick { 1 } else { 3 };
    let mut out = format!(
        "{what}: {} images, full mip chains.\n\n\
         | format | file | bytes | / plain | compress (s, 1 core) | read all levels (ms) |\n\
         |---|---|---:|---:|---:|---:|\n",
        images.len()
    );
    for (format, rdo) in SUPERCOMPRESSED {
        let textures: Vec<(u32, u32, Vec<Vec<u8>>)> = images
            .iter()
            .map(|image| {
                let base = Level {
                    width: image.width(),
                    height: image.height(),
                    pixels: image.as_raw().clone(),
                };
                let alpha = image.pixels().any(|p| p[3] != 255);
                let levels = chain(base, Texels::Srgb, true)
                    .iter()
                    .map(|level| {
                        encode_with(level, format, Quality::Fast, alpha, rdo).expect("encodes")
                    })
                    .collect();
                (image.width(), image.height(), levels)
            })
            .collect();
        // UASTC's quality, with RDO's cost: level 0 as a desktop GPU gets it.
        let name = if format.needs_transcoding() {
            let (mut se, mut n) = (0.0, 0);
            for (image, (w, h, levels)) in images.iter().zip(&textures) {
                let decoded = decode_uastc(
                    &levels[0],
                    *w,
                    *h,
                    basis_universal::TranscoderBlockFormat::BC7,
                );
                let (e, k) = squared_error(image, &decoded);
                (se, n) = (se + e, n + k);
            }
            let rdo = rdo.map_or("no RDO".into(), |l| format!("RDO {l}"));
            format!("{} ({rdo}; {:.1} dB as BC7)", format.name(), psnr(se, n))
        } else {
            format.name().to_owned()
        };
        let plain: Vec<Vec<u8>> = textures
            .iter()
            .map(|(w, h, levels)| write::ktx2(format, *w, *h, levels))
            .collect();
        let plain_bytes: usize = plain.iter().map(Vec::len).sum();
        let read_all = |files: &[Vec<u8>]| {
            Sample::of(runs, || {
                measure::time(|| {
                    for file in files {
                        let t = Texture::check(file).expect("a texture");
                        for i in 0..t.levels {
                            std::hint::black_box(t.level(i).expect("a level"));
                        }
                    }
                })
            })
        };
        let seconds = |s: Option<Sample>, scale: f64, digits: usize| {
            s.map_or("-".into(), |s| {
                format!("{:.digits$}", s.median().as_secs_f64() * scale)
            })
        };
        let mut row = |file: &str, bytes: usize, compress: Option<Sample>, read: Option<Sample>| {
            let _ = writeln!(
                out,
                "| {name} | {file} | {:.2} MB | {:.3} | {} | {} |",
                bytes as f64 / 1e6,
                bytes as f64 / plain_bytes as f64,
                seconds(compress, 1.0, 2),
                seconds(read, 1e3, 1),
            );
        };
        row("plain", plain_bytes, None, Some(read_all(&plain)));
        // A release parcel compresses a resource whole (zstd at its resource
        // level), keeping the result only where it saves a 32nd.
        let parcel_level = assets_runtime::write::RESOURCE_ZSTD_LEVEL;
        let compress_whole = || -> Vec<usize> {
            plain
                .iter()
                .map(|f| {
                    let z = zstd::bulk::compress(f, parcel_level).expect("compresses");
                    if z.len() <= f.len() - f.len() / 32 {
                        z.len()
                    } else {
                        f.len()
                    }
                })
                .collect()
        };
        let time = Sample::of(runs, || {
            measure::time(|| {
                std::hint::black_box(compress_whole());
            })
        });
        let parcel_bytes: usize = compress_whole().iter().sum();
        row(
            &format!("plain, in a release parcel (zstd {parcel_level}, whole file)"),
            parcel_bytes,
            Some(time),
            None,
        );
        for level in SUPERCOMPRESSION_LEVELS {
            let supercompress = || -> Vec<Vec<u8>> {
                textures
                    .iter()
                    .map(|(w, h, levels)| {
                        write::ktx2_zstd(format, *w, *h, levels, level).expect("write-zstd")
                    })
                    .collect()
            };
            let time = Sample::of(runs, || {
                measure::time(|| {
                    std::hint::black_box(supercompress());
                })
            });
            let files = supercompress();
            let bytes = files.iter().map(Vec::len).sum();
            row(
                &format!("supercompressed, zstd {level}"),
                bytes,
                Some(time),
                Some(read_all(&files)),
            );
        }
    }
    out
}

/// Bytes of the full mip chain of a `w × h` texture in `format`.
fn gpu_bytes(format: TextureFormat, w: u32, h: u32) -> u64 {
    let levels = 32 - w.max(h).leading_zeros();
    (0..levels)
        .map(|i| format.level_len((w >> i).max(1), (h >> i).max(1)))
        .sum()
}

/// Level 0 decoded to RGBA8 rows.
fn decode(format: TextureFormat, data: &[u8], w: u32, h: u32) -> Vec<[u8; 4]> {
    if format.block_size() == 1 {
        return data
            .chunks_exact(4)
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect();
    }
    let mut out = vec![0u32; (w * h) as usize];
    let (w, h) = (w as usize, h as usize);
    match format {
        TextureFormat::Bc1RgbaUnormSrgb => texture2ddecoder::decode_bc1a(data, w, h, &mut out),
        TextureFormat::Bc3RgbaUnormSrgb => texture2ddecoder::decode_bc3(data, w, h, &mut out),
        TextureFormat::Bc7RgbaUnormSrgb => texture2ddecoder::decode_bc7(data, w, h, &mut out),
        TextureFormat::Etc2Rgb8UnormSrgb => texture2ddecoder::decode_etc2_rgb(data, w, h, &mut out),
        f if f.is_astc() => {
            let b = f.block_size() as usize;
            texture2ddecoder::decode_astc(data, w, h, b, b, &mut out)
        }
        other => panic!("no decoder for {other:?}"),
    }
    .expect("decodes");
    out.iter()
        .map(|p| {
            let [b, g, r, a] = p.to_le_bytes();
            [r, g, b, a]
        })
        .collect()
}

/// Level 0 of UASTC `blocks` transcoded to the block format `to` (BC7 or
/// ASTC 4×4) by Binomial's transcoder, then decoded by `texture2ddecoder`.
fn decode_uastc(
    blocks: &[u8],
    w: u32,
    h: u32,
    to: basis_universal::TranscoderBlockFormat,
) -> Vec<[u8; 4]> {
    use basis_universal::{DecodeFlags, LowLevelUastcTranscoder, SliceParametersUastc};
    let slice = SliceParametersUastc {
        num_blocks_x: w.div_ceil(4),
        num_blocks_y: h.div_ceil(4),
        has_alpha: true,
        original_width: w,
        original_height: h,
    };
    let transcoded = LowLevelUastcTranscoder::new()
        .transcode_slice(blocks, slice, DecodeFlags::HIGH_QUALITY, to)
        .expect("transcodes");
    let as_format = match to {
        basis_universal::TranscoderBlockFormat::BC7 => TextureFormat::Bc7RgbaUnormSrgb,
        _ => TextureFormat::Astc4x4UnormSrgb,
    };
    decode(as_format, &transcoded, w, h)
}

/// The summed squared error of the RGB channels where the source is not
/// fully transparent, and how many values that was.
fn squared_error(source: &RgbaImage, decoded: &[[u8; 4]]) -> (f64, usize) {
    let (mut sum, mut n) = (0f64, 0usize);
    for (s, d) in source.pixels().zip(decoded) {
        if s[3] == 0 {
            continue;
        }
        for c in 0..3 {
            let e = f64::from(s[c]) - f64::from(d[c]);
            sum += e * e;
        }
        n += 3;
    }
    (sum, n)
}

/// PSNR in dB of a squared error over `n` values (infinite when exact).
fn psnr(squared_error: f64, n: usize) -> f64 {
    if squared_error == 0.0 || n == 0 {
        return f64::INFINITY;
    }
    10.0 * (255.0 * 255.0 / (squared_error / n as f64)).log10()
}
