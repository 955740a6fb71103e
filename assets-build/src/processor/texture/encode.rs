//! Levels into a GPU format: RGBA8 as it is, BC blocks through Intel's
//! ISPC texture compressor (`intel_tex_2`: BC1, BC3, BC4, BC5, BC7; its
//! ASTC encoder is not implemented in the crate), ETC2 through etcpak
//! (`ctt-etcpak`: RGB, and RGBA with its EAC alpha block), or ASTC blocks
//! through ARM's astcenc (`ctt-astcenc`, feature `astc`), or UASTC blocks
//! through Basis Universal's encoder (feature `basis`, [`super::uastc`]). A level whose
//! sides are not multiples of 4 is padded for the 4×4 encoders by
//! repeating its last row and column, so edge blocks filter as the edge
//! does; astcenc pads partial blocks itself, the same way.
//!
//! Alpha is never dropped silently. Intel's BC1 kernel writes opaque
//! blocks only, so a level with pixels under half alpha goes to
//! `texpresso` (libsquish's BC1, which keeps them transparent: BC1's 1-bit
//! alpha); `etc2` (RGB) refuses an image with alpha (the processor says
//! so). Intel's ETC1 kernel, used for ETC2 RGB before, aborted the process
//! on some blocks (an assertion compiled into its prebuilt kernel, seen on
//! an icon with an antialiased rim): a crash no `catch_unwind` can turn
//! into an error, hence etcpak.

use assets_runtime::TextureFormat;
use intel_tex_2::{RSurface, RgSurface, RgbaSurface, bc1, bc3, bc4, bc5, bc7};

use super::Quality;
use super::mips::Level;

/// `level` in `format`; an error only from astcenc or Basis Universal's
/// encoder (which the settings checks should keep from happening).
pub fn encode(
    level: &Level,
    format: TextureFormat,
    quality: Quality,
    alpha: bool,
) -> Result<Vec<u8>, String> {
    encode_with(level, format, quality, alpha, None)
}

/// [`encode`], UASTC with Basis Universal's rate-distortion optimization
/// at lambda `uastc_rdo` where it is given (the `uastc-rdo` setting; no
/// other format reads it).
pub fn encode_with(
    level: &Level,
    format: TextureFormat,
    quality: Quality,
    alpha: bool,
    uastc_rdo: Option<f32>,
) -> Result<Vec<u8>, String> {
    use TextureFormat as F;
    if format.block_size() == 1 {
        return Ok(level.pixels.clone());
    }
    if format.is_astc() {
        return astc(level, format, quality);
    }
    if format.needs_transcoding() {
        return uastc(level, format, quality, uastc_rdo);
    }
    let (w, h, rgba) = padded(level);
    let surface = RgbaSurface {
        data: &rgba,
        width: w,
        height: h,
        stride: w * 4,
    };
    Ok(match format {
        F::Bc1RgbaUnorm | F::Bc1RgbaUnormSrgb if punched(&rgba) => {
            let format = texpresso::Format::Bc1;
            let (w, h) = (w as usize, h as usize);
            let mut out = vec![0; format.compressed_size(w, h)];
            let params = texpresso::Params {
                algorithm: match quality {
                    Quality::Fastest | Quality::Fast => texpresso::Algorithm::RangeFit,
                    Quality::Basic | Quality::Slow => texpresso::Algorithm::ClusterFit,
                },
                ..Default::default()
            };
            format.compress(&rgba, w, h, params, &mut out);
            out
        }
        F::Bc1RgbaUnorm | F::Bc1RgbaUnormSrgb => bc1::compress_blocks(&surface),
        F::Bc3RgbaUnorm | F::Bc3RgbaUnormSrgb => bc3::compress_blocks(&surface),
        F::Bc4RUnorm => {
            let red: Vec<u8> = rgba.chunks_exact(4).map(|p| p[0]).collect();
            bc4::compress_blocks(&RSurface {
                data: &red,
                width: w,
                height: h,
                stride: w,
            })
        }
        F::Bc5RgUnorm => {
            let rg: Vec<u8> = rgba.chunks_exact(4).flat_map(|p| [p[0], p[1]]).collect();
            bc5::compress_blocks(&RgSurface {
                data: &rg,
                width: w,
                height: h,
                stride: w * 2,
            })
        }
        F::Bc7RgbaUnorm | F::Bc7RgbaUnormSrgb => {
            let settings = match (quality, alpha) {
                (Quality::Fastest, false) => bc7::opaque_very_fast_settings(),
                (Quality::Fastest, true) => bc7::alpha_very_fast_settings(),
                (Quality::Fast, false) => bc7::opaque_fast_settings(),
                (Quality::Fast, true) => bc7::alpha_fast_settings(),
                (Quality::Basic, false) => bc7::opaque_basic_settings(),
                (Quality::Basic, true) => bc7::alpha_basic_settings(),
                (Quality::Slow, false) => bc7::opaque_slow_settings(),
                (Quality::Slow, true) => bc7::alpha_slow_settings(),
            };
            bc7::compress_blocks(&settings, &surface)
        }
        // etcpak reads BGRA; its heuristics trade quality for speed (off).
        F::Etc2Rgb8Unorm | F::Etc2Rgb8UnormSrgb => {
            let bgra = bgra(&rgba);
            let surface = ctt_etcpak::Surface::new(&bgra, w, h);
            ctt_etcpak::etc2_rgb::compress_blocks(&surface, false)
        }
        F::Etc2Rgba8Unorm | F::Etc2Rgba8UnormSrgb => {
            let bgra = bgra(&rgba);
            let surface = ctt_etcpak::Surface::new(&bgra, w, h);
            ctt_etcpak::etc2_rgba::compress_blocks(&surface, false)
        }
        _ => unreachable!("every block format is listed"),
    })
}

/// `level` in an ASTC `format`, with astcenc's preset for `quality`.
#[cfg(feature = "astc")]
fn astc(level: &Level, format: TextureFormat, quality: Quality) -> Result<Vec<u8>, String> {
    use ctt_astcenc::{Context, Flags, Preset, Profile, Swizzle, config_init};
    let profile = if format.is_srgb() {
        Profile::LdrSrgb
    } else {
        Profile::Ldr
    };
    let preset = match quality {
        Quality::Fastest => Preset::Fastest,
        Quality::Fast => Preset::Fast,
        Quality::Basic => Preset::Medium,
        Quality::Slow => Preset::Thorough,
    };
    let block = format.block_size();
    let failed = |e: ctt_astcenc::Error| format!("the ASTC encoder failed: {e}");
    let config = config_init(profile, block, block, 1, preset, Flags::empty()).map_err(failed)?;
    let mut context = Context::new(&config).map_err(failed)?;
    // astcenc reads the pixels through this one-plane pointer table; the
    // copy is only read (the C API's pointer is not const), and both live
    // until `compress` returns.
    let mut pixels = level.pixels.clone();
    let mut plane = pixels.as_mut_ptr().cast::<std::ffi::c_void>();
    let mut image = ctt_astcenc::bindings::astcenc_image {
        dim_x: level.width,
        dim_y: level.height,
        dim_z: 1,
        data_type: ctt_astcenc::bindings::astcenc_type_ASTCENC_TYPE_U8,
        data: &mut plane,
    };
    let mut out = vec![0; format.level_len(level.width, level.height) as usize];
    context
        .compress(&mut image, Swizzle::IDENTITY, &mut out)
        .map_err(failed)?;
    Ok(out)
}

#[cfg(not(feature = "astc"))]
fn astc(_: &Level, _: TextureFormat, _: Quality) -> Result<Vec<u8>, String> {
    Err(super::NEEDS_ASTC.to_owned())
}

/// `rgba` with red and blue swapped, as etcpak reads it.
fn bgra(rgba: &[u8]) -> Vec<u8> {
    (rgba.chunks_exact(4))
        .flat_map(|p| [p[2], p[1], p[0], p[3]])
        .collect()
}

/// Whether BC1 needs its transparent colour for these pixels: some are
/// under half alpha, which BC1 (as GPUs decode it) makes transparent.
fn punched(rgba: &[u8]) -> bool {
    rgba.chunks_exact(4).any(|p| p[3] < 128)
}

/// The level's pixels padded to whole 4×4 blocks, edges repeated.
fn padded(level: &Level) -> (u32, u32, Vec<u8>) {
    let (w, h) = (
        level.width.next_multiple_of(4),
        level.height.next_multiple_of(4),
    );
    if (w, h) == (level.width, level.height) {
        return (w, h, level.pixels.clone());
    }
    let mut out = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        let row = y.min(level.height - 1) * level.width * 4;
        for x in 0..w {
            let at = (row + x.min(level.width - 1) * 4) as usize;
            out.extend_from_slice(&level.pixels[at..at + 4]);
        }
    }
    (w, h, out)
}

/// `level` in UASTC, through Basis Universal's encoder.
#[cfg(feature = "basis")]
fn uastc(
    level: &Level,
    format: TextureFormat,
    quality: Quality,
    rdo: Option<f32>,
) -> Result<Vec<u8>, String> {
    super::uastc::encode(level, quality, format.is_srgb(), rdo)
}

#[cfg(not(feature = "basis"))]
fn uastc(_: &Level, _: TextureFormat, _: Quality, _: Option<f32>) -> Result<Vec<u8>, String> {
    Err(super::NEEDS_BASIS.to_owned())
}
