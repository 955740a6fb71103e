//! Mip chains: each level half the one before (rounded down, at least 1),
//! down to 1×1.
//!
//! Filtering is a 2×2 box (the last row or column of an odd size folded
//! into its neighbour's box), done as a graphics programmer expects:
//!
//! - **gamma-correct**: sRGB color is averaged as light (decoded to linear,
//!   averaged, encoded again), so a checkerboard of black and white becomes
//!   the grey of half the light (188), not the darker 128;
//! - **alpha-aware**: color is weighted by alpha, so the color of fully
//!   transparent pixels (often black, or garbage) does not bleed into the
//!   edges of what is visible;
//! - **normal maps** are averaged as vectors and renormalized.

/// How the texels of an image are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texels {
    /// sRGB-encoded color and linear alpha.
    Srgb,
    /// Linear values (data, masks, roughness).
    Linear,
    /// Tangent-space normals in RGB (0..255 for -1..1), alpha kept linear.
    Normals,
}

/// One level: RGBA8 rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGBA8 rows, top first.
    pub pixels: Vec<u8>,
}

/// Level 0 (`base`) and every smaller level, down to 1×1, or only `base`
/// when `mipmaps` is false.
pub fn chain(base: Level, texels: Texels, mipmaps: bool) -> Vec<Level> {
    successive(base, mipmaps, |l| (l.width, l.height), |l| half(l, texels))
}

/// The source pixels along one axis (of `len`) that texel `i` of the next
/// level (of `next_len`) averages: two, three at an odd edge, and the one
/// there is where the axis is a single pixel already.
pub fn source_span(i: u32, next_len: u32, len: u32) -> std::ops::Range<u32> {
    let end = if i == next_len - 1 { len } else { 2 * i + 2 };
    2 * i..end.max(2 * i + 1)
}

/// `base` and, when `mipmaps`, each level `half` makes of the one before,
/// until one is 1×1 by `size`: the chain of any kind of level.
pub fn successive<L>(
    base: L,
    mipmaps: bool,
    size: impl Fn(&L) -> (u32, u32),
    half: impl Fn(&L) -> L,
) -> Vec<L> {
    let mut levels = vec![base];
    if !mipmaps {
        return levels;
    }
    loop {
        let last = levels.last().expect("level 0");
        if size(last) == (1, 1) {
            return levels;
        }
        let next = half(last);
        levels.push(next);
    }
}

/// The next level of `level`.
pub fn half(level: &Level, texels: Texels) -> Level {
    let (w, h) = (level.width, level.height);
    let (nw, nh) = ((w / 2).max(1), (h / 2).max(1));
    let to_linear = srgb_to_linear_table();
    let mut pixels = Vec::with_capacity((nw * nh * 4) as usize);
    for y in 0..nh {
        for x in 0..nw {
            let (xs, ys) = (source_span(x, nw, w), source_span(y, nh, h));
            let taps = ys.flat_map(|sy| xs.clone().map(move |sx| (sx, sy, 1.0)));
            pixels.extend(mean(level, texels, &to_linear, taps));
        }
    }
    Level {
        width: nw,
        height: nh,
        pixels,
    }
}

/// `level` resampled to `width × height` (bilinear, filtered as the
/// module doc says): how a texture is scaled up to whole blocks of its
/// format (the `block-fit` setting).
pub fn scaled(level: &Level, texels: Texels, width: u32, height: u32) -> Level {
    let to_linear = srgb_to_linear_table();
    let mut pixels = Vec::with_capacity((width * height * 4) as usize);
    for y in 0..height {
        let ys = bilinear_taps(y, height, level.height);
        for x in 0..width {
            let xs = bilinear_taps(x, width, level.width);
            let taps = ys.iter().flat_map(|&(sy, wy)| xs.iter().map(move |&(sx, wx)| (sx, sy, wx * wy)));
            pixels.extend(mean(level, texels, &to_linear, taps));
        }
    }
    Level {
        width,
        height,
        pixels,
    }
}

/// The two source pixels along one axis (of `len`) that texel `i` of a
/// resampled axis (of `new_len`) blends, with their weights: pixel
/// centres map to pixel centres, edges clamp.
pub fn bilinear_taps(i: u32, new_len: u32, len: u32) -> [(u32, f32); 2] {
    let at = ((i as f32 + 0.5) * len as f32 / new_len as f32 - 0.5).clamp(0.0, (len - 1) as f32);
    let first = at.floor();
    let t = at - first;
    let first = first as u32;
    [(first, 1.0 - t), ((first + 1).min(len - 1), t)]
}

/// The weighted mean of the texels `taps` names (x, y, weight) in
/// `level`, as the module doc says: sRGB as light, colour weighted by
/// alpha, normals as vectors.
fn mean(
    level: &Level,
    texels: Texels,
    to_linear: &[f32; 256],
    taps: impl Iterator<Item = (u32, u32, f32)>,
) -> [u8; 4] {
    let (w, h) = (level.width, level.height);
    let mut sum = [0f32; 4];
    let mut weight = 0f32;
    let mut count = 0f32;
    for (sx, sy, tap) in taps {
        let at = ((sy.min(h - 1) * w + sx.min(w - 1)) * 4) as usize;
        let p = &level.pixels[at..at + 4];
        let a = f32::from(p[3]) / 255.0;
        let rgb = |i: usize| match texels {
            Texels::Srgb => to_linear[p[i] as usize],
            Texels::Linear => f32::from(p[i]) / 255.0,
            Texels::Normals => f32::from(p[i]) / 255.0 * 2.0 - 1.0,
        };
        // Normals are not weighted by alpha: alpha is data there.
        let wgt = (if texels == Texels::Normals { 1.0 } else { a }) * tap;
        for (i, s) in sum.iter_mut().take(3).enumerate() {
            *s += rgb(i) * wgt;
        }
        sum[3] += a * tap;
        weight += wgt;
        count += tap;
    }
    let alpha = sum[3] / count;
    let mut rgb = [0f32; 3];
    if weight > 0.0 {
        for (i, c) in rgb.iter_mut().enumerate() {
            *c = sum[i] / weight;
        }
    }
    if texels == Texels::Normals {
        let len = (rgb[0] * rgb[0] + rgb[1] * rgb[1] + rgb[2] * rgb[2]).sqrt();
        let n = if len > 1e-6 {
            rgb.map(|c| c / len)
        } else {
            [0.0, 0.0, 1.0]
        };
        rgb = n.map(|c| c * 0.5 + 0.5);
    }
    let encode = |c: f32| match texels {
        Texels::Srgb => linear_to_srgb(c),
        Texels::Linear | Texels::Normals => c,
    };
    [
        unit_to_byte(encode(rgb[0])),
        unit_to_byte(encode(rgb[1])),
        unit_to_byte(encode(rgb[2])),
        unit_to_byte(alpha),
    ]
}

fn unit_to_byte(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// sRGB byte → linear light, for all 256 values.
fn srgb_to_linear_table() -> [f32; 256] {
    std::array::from_fn(|i| {
        let c = i as f32 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    })
}

fn linear_to_srgb(c: f32) -> f32 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// A `width × height` level whose pixel at `(x, y)` is `f(x, y)`, for
/// the texture modules' tests.
#[cfg(test)]
pub(super) fn level_of(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Level {
    let pixels = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .flat_map(|(x, y)| f(x, y))
        .collect();
    Level {
        width,
        height,
        pixels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;


    #[test]
    fn scaling_up_maps_centres_and_filters_as_mips_do() {
        // The same size samples each pixel at its centre, alone.
        for i in 0..5 {
            assert_eq!(bilinear_taps(i, 5, 5)[0], (i, 1.0));
        }
        // A flat image stays flat, sRGB round-tripped exactly.
        let flat = scaled(&level_of(6, 3, |_, _| [200, 100, 50, 255]), Texels::Srgb, 8, 4);
        assert_eq!((flat.width, flat.height), (8, 4));
        assert!(flat.pixels.chunks(4).all(|p| p == [200, 100, 50, 255]));
        // A 1-pixel axis is repeated.
        let lut = scaled(&level_of(3, 1, |x, _| [x as u8 * 100, 0, 0, 255]), Texels::Linear, 3, 4);
        assert!(lut.pixels.chunks(12).all(|row| row == &lut.pixels[..12]));
        assert_eq!(&lut.pixels[..12], [0, 0, 0, 255, 100, 0, 0, 255, 200, 0, 0, 255]);
        // Between a red and a transparent pixel: red, fading out, never
        // darkened by the transparent pixel's black.
        let edge = scaled(&level_of(2, 1, |x, _| if x == 0 { [255, 0, 0, 255] } else { [0; 4] }), Texels::Srgb, 4, 1);
        for p in edge.pixels.chunks(4).filter(|p| p[3] > 0) {
            assert_eq!(&p[..3], [255, 0, 0], "{:?}", edge.pixels);
        }
        assert!(edge.pixels[3] == 255 && edge.pixels[7] > 0 && edge.pixels[7] < 255, "{:?}", edge.pixels);
        // Normals stay unit vectors.
        let normals = scaled(&level_of(2, 1, |x, _| if x == 0 { [255, 128, 128, 255] } else { [128, 128, 255, 255] }), Texels::Normals, 3, 1);
        let middle: Vec<f32> = normals.pixels[4..7].iter().map(|&c| f32::from(c) / 255.0 * 2.0 - 1.0).collect();
        let len = middle.iter().map(|c| c * c).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 0.02, "{middle:?}");
    }

    #[test]
    fn a_chain_halves_to_one_pixel_rounding_down() {
        let sizes: Vec<(u32, u32)> = chain(level_of(13, 5, |_, _| [9; 4]), Texels::Srgb, true)
            .iter()
            .map(|l| (l.width, l.height))
            .collect();
        assert_eq!(sizes, [(13, 5), (6, 2), (3, 1), (1, 1)]);
        assert_eq!(
            chain(level_of(4, 4, |_, _| [9; 4]), Texels::Srgb, false).len(),
            1
        );
    }

    #[test]
    fn srgb_is_averaged_as_light_and_transparent_color_does_not_bleed() {
        let checker = level_of(2, 2, |x, y| {
            if (x + y) % 2 == 0 {
                [255; 4]
            } else {
                [0, 0, 0, 255]
            }
        });
        let srgb = chain(checker.clone(), Texels::Srgb, true);
        assert_eq!(srgb[1].pixels, [188, 188, 188, 255], "half the light");
        let linear = chain(checker, Texels::Linear, true);
        assert_eq!(linear[1].pixels, [128, 128, 128, 255]);
        // Red where visible, black where transparent: stays red, half alpha.
        let edge = level_of(2, 2, |x, _| {
            if x == 0 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 0, 0]
            }
        });
        assert_eq!(chain(edge, Texels::Srgb, true)[1].pixels, [255, 0, 0, 128]);
    }

    #[test]
    fn normals_are_renormalized() {
        // Two normals leaning opposite ways average to straight up.
        let n = level_of(2, 1, |x, _| {
            if x == 0 {
                [218, 128, 218, 255]
            } else {
                [37, 128, 218, 255]
            }
        });
        let up = &chain(n, Texels::Normals, true)[1].pixels;
        assert_eq!(up[..3], [128, 128, 255], "{up:?}");
    }
}
