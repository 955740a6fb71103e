//! HDR textures: light brighter than white, kept as floats.
//!
//! Sources are Radiance `.hdr` and OpenEXR `.exr` files (decoded with the
//! feature `hdr`), whose values are linear light, or any 8-bit image, whose
//! colour is sRGB-decoded to linear. Formats:
//!
//! - `bc6h`: BC6H unsigned (Intel's ISPC kernel, `intel_tex_2`): RGB half
//!   floats at 8 bits a pixel, negative values clamped to 0, no alpha. On
//!   desktop GPUs (Direct3D 11 and later, Vulkan, Metal on Macs).
//! - `rgba16f`: four half floats a pixel, uncompressed: every GPU, WebGPU
//!   and WebGL2 included, at 8 times BC6H's size; the fallback where BC6H
//!   is missing.
//!
//! Mips are 2×2 box averages of the linear values (no alpha weighting:
//! environment maps and light maps are opaque), the last row or column of
//! an odd size folded into its neighbour's box, as the 8-bit chain does.

use assets_runtime::TextureFormat;
use half::f16;
use image::DynamicImage;

use super::Quality;
use crate::processor::ProcessError;

/// One level: RGBA rows of linear `f32`s.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatLevel {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGBA, four floats a pixel, rows top first.
    pub pixels: Vec<f32>,
}

/// The image in `bytes` as linear RGBA floats: an HDR or EXR file's as
/// they are, an 8- or 16-bit file's with its colour (sRGB-encoded when
/// `srgb`) decoded to linear.
pub fn decode(bytes: &[u8], max_dimension: u32, srgb: bool) -> Result<FloatLevel, ProcessError> {
    let image = crate::processor::image::decode_dynamic(bytes, max_dimension)?;
    let floats = matches!(image, DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_));
    let (width, height) = (image.width(), image.height());
    let mut pixels = image.into_rgba32f().into_raw();
    if !floats && srgb {
        for p in pixels.chunks_exact_mut(4) {
            for c in &mut p[..3] {
                *c = srgb_to_linear(*c);
            }
        }
    }
    Ok(FloatLevel {
        width,
        height,
        pixels,
    })
}

/// The largest colour value of a float image (above 1.0: light brighter
/// than white, which 8-bit formats clamp); `None` for other images.
pub fn brightest(image: &DynamicImage) -> Option<f32> {
    let (values, channels) = match image {
        DynamicImage::ImageRgb32F(i) => (i.as_raw(), 3),
        DynamicImage::ImageRgba32F(i) => (i.as_raw(), 4),
        _ => return None,
    };
    Some(
        (values.chunks_exact(channels))
            .flat_map(|p| p[..3].iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0, f32::max),
    )
}

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Level 0 and, when `mipmaps`, every smaller level down to 1×1.
pub fn chain(base: FloatLevel, mipmaps: bool) -> Vec<FloatLevel> {
    super::mips::successive(base, mipmaps, |l| (l.width, l.height), half_size)
}

/// The next level of `level`.
pub fn half_size(level: &FloatLevel) -> FloatLevel {
    let (w, h) = (level.width, level.height);
    let (nw, nh) = ((w / 2).max(1), (h / 2).max(1));
    let mut pixels = Vec::with_capacity((nw * nh * 4) as usize);
    for y in 0..nh {
        for x in 0..nw {
            let (xs, ys) = (
                super::mips::source_span(x, nw, w),
                super::mips::source_span(y, nh, h),
            );
            let mut sum = [0f32; 4];
            let mut count = 0f32;
            for sy in ys {
                for sx in xs.clone() {
                    let at = ((sy.min(h - 1) * w + sx.min(w - 1)) * 4) as usize;
                    for (s, v) in sum.iter_mut().zip(&level.pixels[at..at + 4]) {
                        *s += v;
                    }
                    count += 1.0;
                }
            }
            pixels.extend(sum.map(|s| s / count));
        }
    }
    FloatLevel {
        width: nw,
        height: nh,
        pixels,
    }
}

/// `level` resampled to `width × height`, bilinear: how a float texture is
/// scaled up to whole blocks of its format (the `block-fit` setting).
pub fn scaled(level: &FloatLevel, width: u32, height: u32) -> FloatLevel {
    let mut pixels = Vec::with_capacity((width * height * 4) as usize);
    for y in 0..height {
        let ys = super::mips::bilinear_taps(y, height, level.height);
        for x in 0..width {
            let xs = super::mips::bilinear_taps(x, width, level.width);
            let mut sum = [0f32; 4];
            for &(sy, wy) in &ys {
                for &(sx, wx) in &xs {
                    let at = ((sy * level.width + sx) * 4) as usize;
                    for (s, v) in sum.iter_mut().zip(&level.pixels[at..at + 4]) {
                        *s += v * wx * wy;
                    }
                }
            }
            pixels.extend(sum);
        }
    }
    FloatLevel {
        width,
        height,
        pixels,
    }
}

/// `level` as half floats, RGBA, padded to `(w, h)` with its edges
/// repeated, no value below `floor`.
fn halves(level: &FloatLevel, w: u32, h: u32, floor: f32) -> Vec<u8> {
    let mut out = Vec::with_capacity((w * h * 8) as usize);
    for y in 0..h {
        let row = y.min(level.height - 1) * level.width;
        for x in 0..w {
            let at = ((row + x.min(level.width - 1)) * 4) as usize;
            for &v in &level.pixels[at..at + 4] {
                // Half floats top out at 65504; NaN becomes 0.
                // `<=`: -0.0 is the floor 0.0 too, without its sign bit.
                let v = if v.is_nan() {
                    0.0
                } else if v <= floor {
                    floor
                } else {
                    v.min(65504.0)
                };
                out.extend_from_slice(&f16::from_f32(v).to_le_bytes());
            }
        }
    }
    out
}

/// `level` in the float `format`, with `quality`'s BC6H effort.
pub fn encode(level: &FloatLevel, format: TextureFormat, quality: Quality) -> Vec<u8> {
    match format {
        TextureFormat::Bc6hRgbUfloat => {
            let (w, h) = (
                level.width.next_multiple_of(4),
                level.height.next_multiple_of(4),
            );
            // The unsigned kernel reads a negative half's sign bit as a
            // huge magnitude: a distance field's inside came out 65504.
            let data = halves(level, w, h, 0.0);
            let settings = match quality {
                Quality::Fastest | Quality::Fast => intel_tex_2::bc6h::very_fast_settings(),
                Quality::Basic => intel_tex_2::bc6h::basic_settings(),
                Quality::Slow => intel_tex_2::bc6h::slow_settings(),
            };
            intel_tex_2::bc6h::compress_blocks(
                &settings,
                &intel_tex_2::RgbaSurface {
                    data: &data,
                    width: w,
                    height: h,
                    stride: w * 8,
                },
            )
        }
        _ => halves(level, level.width, level.height, -65504.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mips_average_light_and_halves_round_trip() {
        let base = FloatLevel {
            width: 2,
            height: 1,
            pixels: vec![4.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 1.0],
        };
        let chain = chain(base, true);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1].pixels, [2.0, 1.0, 1.0, 1.0]);
        let bytes = encode(&chain[0], TextureFormat::Rgba16Float, Quality::Basic);
        let back: Vec<f32> = (bytes.chunks_exact(2))
            .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        assert_eq!(back, chain[0].pixels);
        // Negative values stay in half floats, and are 0 for BC6H unsigned.
        let signed = FloatLevel {
            width: 1,
            height: 1,
            pixels: vec![-3.5, 0.25, -0.0, 1.0],
        };
        let bytes = encode(&signed, TextureFormat::Rgba16Float, Quality::Basic);
        assert_eq!(f16::from_le_bytes([bytes[0], bytes[1]]).to_f32(), -3.5);
        let unsigned = halves(&signed, 1, 1, 0.0);
        assert_eq!(unsigned[..2], [0, 0], "-3.5");
        assert_eq!(unsigned[4..6], [0, 0], "-0.0, whose sign bit is a huge unsigned value");
        // Scaled up to whole blocks: light blended linearly, edges kept.
        let wide = scaled(&chain[0], 4, 1);
        assert_eq!(wide.pixels[..4], [4.0, 0.0, 1.0, 1.0]);
        assert_eq!(wide.pixels[4..8], [3.0, 0.5, 1.0, 1.0]);
        assert_eq!(wide.pixels[12..], [0.0, 2.0, 1.0, 1.0]);
        let image = image::Rgb32FImage::from_raw(2, 1, vec![4.0, 0.0, 1.0, 0.0, 2.0, 1.0]);
        assert_eq!(brightest(&DynamicImage::ImageRgb32F(image.unwrap())), Some(4.0));
    }
}
