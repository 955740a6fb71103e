//! [`SpriteSource`]: one decoded sprite, trimmed, as the `sprite` processor
//! caches it for the atlas stage.
//!
//! This is an intermediate output (kind [`SPRITE_SOURCE_KIND`]): it lives in
//! the store, never in a parcel. Caching decoded pixels is what makes an atlas
//! re-pack after one sprite changes cost milliseconds: the others are read
//! back, not decoded again.
//!
//! ```text
//! offset size
//!      0    4  magic "ASR2"
//!      4    4  source width, source height (as authored)
//!     12    8  trim x, trim y (where the kept pixels start)
//!     20    8  width, height (the kept pixels)
//!     28    4  1 if the pixels are one LZ4 block, 0 if raw
//!     32    …  the kept pixels: width × height RGBA8, rows top to bottom,
//!              straight alpha; LZ4-compressed when that is smaller
//! ```
//!
//! Compressed because a cold build writes every sprite once and the atlas
//! reads every one back: LZ4 decodes at gigabytes a second, and drawn art
//! shrinks several times (noise does not, and stays raw).

use assets_runtime::image::{Encoding, encode_pixels};

use super::ProcessError;

/// Output kind of a cached sprite.
pub const SPRITE_SOURCE_KIND: &str = "sprite-source";
/// Output kind of several cached sprites in one blob (a font's glyphs): a
/// count, then each sprite's length and [`SpriteSource::encode`] bytes (u32
/// little-endian words). See [`SpriteSource::encode_list`].
pub const SPRITE_SOURCES_KIND: &str = "sprite-sources";
/// The label of a [`SPRITE_SOURCES_KIND`] output: an atlas member that
/// emits one brings all of them to its atlas (see [`crate::unstable::atlas`]).
pub const SPRITES_LABEL: &str = "sprites";
const MAGIC: [u8; 4] = *b"ASR2";
const HEADER_LEN: usize = 32;

/// A decoded sprite: the pixels kept after trimming, and where they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpriteSource {
    /// Width of the image as authored.
    pub source_width: u32,
    /// Height of the image as authored.
    pub source_height: u32,
    /// Left edge of the kept pixels in the image.
    pub trim_x: u32,
    /// Top edge of the kept pixels in the image.
    pub trim_y: u32,
    /// Width of the kept pixels.
    pub width: u32,
    /// Height of the kept pixels.
    pub height: u32,
    /// RGBA8 rows, straight alpha.
    pub pixels: Vec<u8>,
}

impl SpriteSource {
    /// `image` whole, or without its fully transparent borders when `trim`.
    /// A fully transparent image trims to 0 × 0. The image's buffer becomes
    /// the sprite's, its kept rows moved to its start: no copy of a sprite
    /// that has no border to cut.
    pub fn new(image: image::RgbaImage, trim: bool) -> SpriteSource {
        let (w, h) = image.dimensions();
        let (x0, y0, x1, y1) = if trim {
            opaque_bounds(&image).unwrap_or((0, 0, 0, 0))
        } else {
            (0, 0, w, h)
        };
        let (row, kept) = ((w * 4) as usize, ((x1 - x0) * 4) as usize);
        let mut pixels = image.into_raw();
        if kept != row {
            // Row by row, each to before where it was read from.
            for (i, y) in (y0..y1).enumerate() {
                let start = y as usize * row + x0 as usize * 4;
                pixels.copy_within(start..start + kept, i * kept);
            }
        } else if y0 > 0 {
            pixels.copy_within(y0 as usize * row..y1 as usize * row, 0);
        }
        pixels.truncate(kept * (y1 - y0) as usize);
        SpriteSource {
            source_width: w,
            source_height: h,
            trim_x: x0,
            trim_y: y0,
            width: x1 - x0,
            height: y1 - y0,
            pixels,
        }
    }

    /// The bytes stored in the cache.
    pub fn encode(&self) -> Vec<u8> {
        let packed = encode_pixels(Encoding::Lz4, &self.pixels).expect("LZ4 is always built");
        let compressed = packed.len() < self.pixels.len();
        let pixels = if compressed { &packed } else { &self.pixels };
        let mut out = Vec::with_capacity(HEADER_LEN + pixels.len());
        out.extend_from_slice(&MAGIC);
        for v in [
            self.source_width,
            self.source_height,
            self.trim_x,
            self.trim_y,
            self.width,
            self.height,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&u32::from(compressed).to_le_bytes());
        out.extend_from_slice(pixels);
        out
    }

    /// Reads bytes made by [`SpriteSource::encode`].
    pub fn decode(bytes: &[u8]) -> Result<SpriteSource, ProcessError> {
        let bad = || ProcessError::msg("cached sprite data is malformed");
        if bytes.len() < HEADER_LEN || bytes[..4] != MAGIC {
            return Err(bad());
        }
        let word =
            |i: usize| u32::from_le_bytes(bytes[4 + 4 * i..8 + 4 * i].try_into().expect("4 bytes"));
        let (width, height) = (word(4), word(5));
        let len = u64::from(width)
            .checked_mul(u64::from(height))
            .and_then(|n| n.checked_mul(4))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(bad)?;
        let stored = &bytes[HEADER_LEN..];
        let pixels = match word(6) {
            0 if stored.len() == len => stored.to_vec(),
            // A block expands at most 255-fold: more is corrupt, refused
            // before allocating for it.
            1 if len / 255 <= stored.len() => {
                let mut pixels = vec![0; len];
                match lz4_flex::block::decompress_into(stored, &mut pixels) {
                    Ok(n) if n == len => pixels,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        };
        Ok(SpriteSource {
            source_width: word(0),
            source_height: word(1),
            trim_x: word(2),
            trim_y: word(3),
            width,
            height,
            pixels,
        })
    }
}

impl SpriteSource {
    /// The bytes of several sprites in one output ([`SPRITE_SOURCES_KIND`]).
    pub fn encode_list(sprites: &[SpriteSource]) -> Vec<u8> {
        let mut out = (sprites.len() as u32).to_le_bytes().to_vec();
        for s in sprites {
            let bytes = s.encode();
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        out
    }

    /// Reads bytes made by [`SpriteSource::encode_list`].
    pub fn decode_list(bytes: &[u8]) -> Result<Vec<SpriteSource>, ProcessError> {
        let bad = || ProcessError::msg("cached sprite list is malformed");
        let word = |at: usize| -> Result<usize, ProcessError> {
            let b = bytes.get(at..at + 4).ok_or_else(bad)?;
            Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        };
        let count = word(0)?;
        let mut at = 4;
        let mut sprites = Vec::with_capacity(count.min(bytes.len() / HEADER_LEN));
        for _ in 0..count {
            let len = word(at)?;
            let one = bytes.get(at + 4..at + 4 + len).ok_or_else(bad)?;
            sprites.push(SpriteSource::decode(one)?);
            at += 4 + len;
        }
        if at != bytes.len() {
            return Err(bad());
        }
        Ok(sprites)
    }
}

/// The smallest rectangle `(x0, y0, x1, y1)` holding every pixel with alpha
/// above zero; `None` if there is none.
fn opaque_bounds(image: &image::RgbaImage) -> Option<(u32, u32, u32, u32)> {
    let (w, h) = image.dimensions();
    let opaque = |x: u32, y: u32| image.get_pixel(x, y)[3] != 0;
    let row_used = |y: u32| (0..w).any(|x| opaque(x, y));
    let y0 = (0..h).find(|&y| row_used(y))?;
    let y1 = (0..h).rev().find(|&y| row_used(y)).expect("row y0 is used") + 1;
    let column_used = |x: u32| (y0..y1).any(|y| opaque(x, y));
    let x0 = (0..w)
        .find(|&x| column_used(x))
        .expect("a used row has a used column");
    let x1 = (0..w).rev().find(|&x| column_used(x)).expect("x0 is used") + 1;
    Some((x0, y0, x1, y1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

    #[test]
    fn trimming_keeps_the_opaque_box_and_where_it_was() {
        let mut img = RgbaImage::new(10, 8);
        img.put_pixel(3, 2, Rgba([1, 2, 3, 255]));
        img.put_pixel(6, 4, Rgba([4, 5, 6, 1]));
        let s = SpriteSource::new(img.clone(), true);
        assert_eq!((s.trim_x, s.trim_y, s.width, s.height), (3, 2, 4, 3));
        assert_eq!((s.source_width, s.source_height), (10, 8));
        assert_eq!(s.pixels[..4], [1, 2, 3, 255]);
        assert_eq!(SpriteSource::decode(&s.encode()).unwrap(), s);
        let untrimmed = SpriteSource::new(img, false);
        assert_eq!((untrimmed.width, untrimmed.height), (10, 8));
    }

    #[test]
    fn trimmed_pixels_are_the_opaque_box_row_by_row() {
        let mut img = RgbaImage::from_fn(9, 7, |x, y| Rgba([x as u8, y as u8, 50, 200]));
        for (x, y, p) in img.enumerate_pixels_mut() {
            // Borders: two columns left, one right, one row on top, two below.
            if !(2..=7).contains(&x) || !(1..=4).contains(&y) {
                p[3] = 0;
            }
        }
        let kept = image::imageops::crop_imm(&img, 2, 1, 6, 4).to_image();
        let s = SpriteSource::new(img.clone(), true);
        assert_eq!((s.trim_x, s.trim_y, s.width, s.height), (2, 1, 6, 4));
        assert_eq!(s.pixels, kept.into_raw());
        // Only rows cut: whole rows move up.
        let mut rows = RgbaImage::from_fn(3, 5, |x, y| Rgba([x as u8, y as u8, 1, 255]));
        for x in 0..3 {
            rows.put_pixel(x, 0, Rgba([0; 4]));
        }
        let kept = image::imageops::crop_imm(&rows, 0, 1, 3, 4).to_image();
        assert_eq!(SpriteSource::new(rows, true).pixels, kept.into_raw());
    }

    #[test]
    fn a_fully_transparent_sprite_trims_to_nothing() {
        let s = SpriteSource::new(RgbaImage::new(5, 5), true);
        assert_eq!((s.width, s.height, s.pixels.len()), (0, 0, 0));
        assert_eq!((s.source_width, s.source_height), (5, 5));
    }

    #[test]
    fn drawn_pixels_are_stored_compressed_and_noise_raw() {
        let flat = RgbaImage::from_fn(40, 30, |x, _| Rgba([(x / 10) as u8 * 60, 10, 20, 255]));
        let s = SpriteSource::new(flat, false);
        let bytes = s.encode();
        assert!(
            bytes.len() < HEADER_LEN + s.pixels.len() / 4,
            "{} bytes",
            bytes.len()
        );
        assert_eq!(SpriteSource::decode(&bytes).unwrap(), s);
        let mut seed = 1u32;
        let noise = RgbaImage::from_fn(16, 16, |_, _| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            Rgba(seed.to_le_bytes())
        });
        let s = SpriteSource::new(noise, false);
        let bytes = s.encode();
        assert_eq!(bytes.len(), HEADER_LEN + s.pixels.len());
        assert_eq!(SpriteSource::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn lists_round_trip_and_truncated_lists_are_errors() {
        let a = SpriteSource::new(RgbaImage::from_pixel(2, 3, Rgba([9; 4])), false);
        let b = SpriteSource::new(RgbaImage::new(4, 4), true);
        let bytes = SpriteSource::encode_list(&[a.clone(), b.clone()]);
        assert_eq!(SpriteSource::decode_list(&bytes).unwrap(), [a, b]);
        assert!(
            SpriteSource::decode_list(&SpriteSource::encode_list(&[]))
                .unwrap()
                .is_empty()
        );
        for len in 0..bytes.len() {
            assert!(SpriteSource::decode_list(&bytes[..len]).is_err(), "{len}");
        }
    }

    #[test]
    fn truncated_cache_data_is_an_error() {
        let s = SpriteSource::new(RgbaImage::from_pixel(2, 2, Rgba([9; 4])), false);
        let mut bytes = s.encode();
        bytes.pop();
        assert!(SpriteSource::decode(&bytes).is_err());
    }
}
