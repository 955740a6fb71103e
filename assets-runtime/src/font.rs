//! The `font` resource: a font baked into glyphs at fixed sizes, each glyph a
//! frame in an atlas page, with the metrics and kerning to lay out text.
//!
//! The `font` processor rasterizes the declared characters at the declared
//! pixel sizes; the glyphs are packed into atlas pages with the sprites (so
//! pages, trimming and compression are the atlas's), and the resource,
//! named by the font's asset path, says where each glyph lies and how far
//! the pen moves:
//!
//! ```text
//! offset     size  field
//!      0        4  magic "AFNT"
//!      4        2  layout version, 1
//!      6        2  flags: bit 0 = signed distance field; other bits zero
//!      8        4  S: sizes
//!     12        4  G: glyphs (over all sizes)
//!     16        4  K: kerning pairs
//!     20        4  distance field spread in pixels (f32; 0 for coverage bitmaps)
//!     24        8  zero
//!     32   S × 24  sizes, by pixel size ascending:
//!                  px, ascent, descent, line gap (f32), first glyph, glyph count (u32)
//!      …   G × 16  glyphs, each size's together, by character ascending:
//!                  character (u32), advance, left, top (f32)
//!      …   K × 12  kerning, by (left, right) ascending:
//!                  left, right (u32), adjustment per pixel of size (f32)
//!      …   G × 72  each glyph's frame, in glyph order: a sprite frame
//!                  ([`crate::sprite`] layout) in a page of the parcel
//! ```
//!
//! **Placing a glyph.** With the pen at `(x, baseline)` in y-down pixels, the
//! glyph's bitmap box has its top-left corner at `(x + left, baseline -
//! top)`; its content (the frame, trimmed of empty borders) sits at the
//! frame's trim offset inside that box ([`Glyph::origin`] does the sum).
//! Then the pen moves by `advance`, plus the kerning of the pair
//! ([`Font::kerning`]) before the next glyph. A distance field glyph's box
//! is `spread` pixels larger on each side than the outline; its alpha is 0.5
//! on the outline, falling to 0 at `spread` pixels outside and rising to 1
//! at `spread` inside.
//!
//! Glyph pixels are white with the coverage (or distance) in alpha, so a
//! game tints them with its text colour.
//!
//! A parcel is rejected at open if a font's tables are out of order or
//! inconsistent, or a glyph's page is missing or does not contain its frame,
//! so [`crate::Parcel::font`] never fails for a font id, and nothing here
//! panics on any bytes.

use crate::format::{tables_len, u16_at, u32_at};
use crate::sprite::{SPRITE_LEN, SpriteFrame};

/// Magic bytes of a font resource.
pub const FONT_MAGIC: [u8; 4] = *b"AFNT";
const HEADER_LEN: usize = 32;
const SIZE_LEN: usize = 24;
const GLYPH_LEN: usize = 16;
const KERN_LEN: usize = 12;

/// One baked size's line metrics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FontSize {
    /// The size in pixels per em.
    pub px: f32,
    /// Distance from the baseline to the top of the tallest glyphs (positive).
    pub ascent: f32,
    /// Distance from the baseline to the bottom of the deepest glyphs
    /// (negative, as fonts state it).
    pub descent: f32,
    /// Extra space between lines.
    pub line_gap: f32,
}

impl FontSize {
    /// Baseline to baseline: `ascent - descent + line_gap`.
    pub fn line_height(&self) -> f32 {
        self.ascent - self.descent + self.line_gap
    }
}

/// One glyph at one size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glyph {
    /// The character it draws.
    pub ch: char,
    /// How far the pen moves after it, in pixels.
    pub advance: f32,
    /// From the pen to the left edge of the glyph's box.
    pub left: f32,
    /// From the baseline up to the top edge of the glyph's box.
    pub top: f32,
    /// Where its pixels lie (`w = h = 0` for a blank glyph such as a space).
    pub frame: SpriteFrame,
}

impl Glyph {
    /// Where the frame's top-left pixel goes, for the pen at `(x, baseline)`
    /// in y-down coordinates (see the [module docs](self)).
    pub fn origin(&self, x: f32, baseline: f32) -> (f32, f32) {
        (
            x + self.left + self.frame.trim_x as f32,
            baseline - self.top + self.frame.trim_y as f32,
        )
    }
}

/// A validated font resource. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Font<'a> {
    bytes: &'a [u8],
    sizes: usize,
    glyphs: usize,
    kerning: usize,
}

impl<'a> Font<'a> {
    /// Parses and checks a font resource's bytes: lengths, order, finite
    /// metrics, valid characters, well-formed frames. Whether each frame's
    /// page exists is the parcel's check (see [`Font::frames`]).
    pub fn parse(bytes: &'a [u8]) -> Option<Font<'a>> {
        if bytes.len() < HEADER_LEN || bytes[..4] != FONT_MAGIC || u16_at(bytes, 4) != 1 {
            return None;
        }
        if u16_at(bytes, 6) > 1 || bytes[24..32].iter().any(|&b| b != 0) {
            return None;
        }
        let (sizes, glyphs, kerning) = (
            u32_at(bytes, 8) as usize,
            u32_at(bytes, 12) as usize,
            u32_at(bytes, 16) as usize,
        );
        let len = tables_len(
            HEADER_LEN,
            &[
                (sizes, SIZE_LEN),
                (glyphs, GLYPH_LEN + SPRITE_LEN),
                (kerning, KERN_LEN),
            ],
        )?;
        if len != bytes.len() {
            return None;
        }
        let font = Font {
            bytes,
            sizes,
            glyphs,
            kerning,
        };
        let spread = f32_at(bytes, 20);
        if !spread.is_finite() || spread < 0.0 || (spread > 0.0) != font.is_distance_field() {
            return None;
        }
        font.check_tables().then_some(font)
    }

    fn check_tables(&self) -> bool {
        let mut next_glyph = 0usize;
        let mut last_px = f32::NEG_INFINITY;
        for s in 0..self.sizes {
            let at = HEADER_LEN + s * SIZE_LEN;
            let size = self.size_at(s);
            let metrics = [size.px, size.ascent, size.descent, size.line_gap];
            if metrics.iter().any(|v| !v.is_finite()) || size.px <= last_px || size.px <= 0.0 {
                return false;
            }
            last_px = size.px;
            let (first, count) = (
                u32_at(self.bytes, at + 16) as usize,
                u32_at(self.bytes, at + 20) as usize,
            );
            if first != next_glyph {
                return false;
            }
            next_glyph = match first.checked_add(count) {
                Some(n) if n <= self.glyphs => n,
                _ => return false,
            };
            let mut last_char = None;
            for g in first..first + count {
                let at = self.glyphs_at() + g * GLYPH_LEN;
                let Some(ch) = char::from_u32(u32_at(self.bytes, at)) else {
                    return false;
                };
                if last_char.is_some_and(|c| c >= ch)
                    || (1..4).any(|i| !f32_at(self.bytes, at + 4 * i).is_finite())
                {
                    return false;
                }
                last_char = Some(ch);
            }
        }
        if next_glyph != self.glyphs {
            return false;
        }
        let mut last_pair = None;
        for k in 0..self.kerning {
            let at = self.kerning_at() + k * KERN_LEN;
            let pair = (u32_at(self.bytes, at), u32_at(self.bytes, at + 4));
            if last_pair.is_some_and(|p| p >= pair) || !f32_at(self.bytes, at + 8).is_finite() {
                return false;
            }
            last_pair = Some(pair);
        }
        (0..self.glyphs).all(|g| self.frame(g).is_some())
    }

    /// Whether the glyphs are signed distance fields rather than coverage.
    pub fn is_distance_field(&self) -> bool {
        u16_at(self.bytes, 6) & 1 == 1
    }

    /// A distance field's spread in pixels (0 for coverage bitmaps).
    pub fn spread(&self) -> f32 {
        f32_at(self.bytes, 20)
    }

    /// How many glyphs, over all sizes.
    pub fn glyph_count(&self) -> usize {
        self.glyphs
    }

    /// How many kerning pairs.
    pub fn kerning_pairs(&self) -> usize {
        self.kerning
    }

    /// The baked sizes, smallest first.
    pub fn sizes(&self) -> impl Iterator<Item = FontSize> + '_ {
        (0..self.sizes).map(|s| self.size_at(s))
    }

    /// The baked size of exactly `px` pixels, if there is one.
    pub fn size(&self, px: f32) -> Option<FontSize> {
        self.size_index(px).map(|s| self.size_at(s))
    }

    /// Every glyph of every size: the frames a parcel checks against its pages.
    pub fn frames(&self) -> impl Iterator<Item = SpriteFrame> + '_ {
        (0..self.glyphs).filter_map(|g| self.frame(g))
    }

    /// The glyph for `ch` at size `px` (a baked size), if the font has it.
    pub fn glyph(&self, px: f32, ch: char) -> Option<Glyph> {
        let s = self.size_index(px)?;
        let at = HEADER_LEN + s * SIZE_LEN;
        let first = u32_at(self.bytes, at + 16) as usize;
        let count = u32_at(self.bytes, at + 20) as usize;
        let found = binary_search(count, |i| {
            u32_at(self.bytes, self.glyphs_at() + (first + i) * GLYPH_LEN).cmp(&(ch as u32))
        })?;
        let g = first + found;
        let at = self.glyphs_at() + g * GLYPH_LEN;
        Some(Glyph {
            ch,
            advance: f32_at(self.bytes, at + 4),
            left: f32_at(self.bytes, at + 8),
            top: f32_at(self.bytes, at + 12),
            frame: self.frame(g)?,
        })
    }

    /// How much to move the pen between `left` and `right` at size `px`, on
    /// top of `left`'s advance (usually negative; 0 for most pairs).
    pub fn kerning(&self, left: char, right: char, px: f32) -> f32 {
        let pair = (left as u32, right as u32);
        binary_search(self.kerning, |k| {
            let at = self.kerning_at() + k * KERN_LEN;
            (u32_at(self.bytes, at), u32_at(self.bytes, at + 4)).cmp(&pair)
        })
        .map_or(0.0, |k| {
            f32_at(self.bytes, self.kerning_at() + k * KERN_LEN + 8) * px
        })
    }

    /// The width of `text` laid out on one line at size `px`, advances and
    /// kerning included; characters the font lacks count as nothing.
    pub fn measure(&self, text: &str, px: f32) -> f32 {
        let mut width = 0.0;
        let mut previous = None;
        for ch in text.chars() {
            let Some(glyph) = self.glyph(px, ch) else {
                continue;
            };
            if let Some(p) = previous {
                width += self.kerning(p, ch, px);
            }
            width += glyph.advance;
            previous = Some(ch);
        }
        width
    }

    fn size_index(&self, px: f32) -> Option<usize> {
        (0..self.sizes).find(|&s| self.size_at(s).px == px)
    }

    fn size_at(&self, s: usize) -> FontSize {
        let at = HEADER_LEN + s * SIZE_LEN;
        FontSize {
            px: f32_at(self.bytes, at),
            ascent: f32_at(self.bytes, at + 4),
            descent: f32_at(self.bytes, at + 8),
            line_gap: f32_at(self.bytes, at + 12),
        }
    }

    fn frame(&self, g: usize) -> Option<SpriteFrame> {
        let at = self.frames_at() + g * SPRITE_LEN;
        SpriteFrame::parse(self.bytes.get(at..at + SPRITE_LEN)?)
    }

    fn glyphs_at(&self) -> usize {
        HEADER_LEN + self.sizes * SIZE_LEN
    }

    fn kerning_at(&self) -> usize {
        self.glyphs_at() + self.glyphs * GLYPH_LEN
    }

    fn frames_at(&self) -> usize {
        self.kerning_at() + self.kerning * KERN_LEN
    }
}

/// The index in `0..len` where `cmp` says `Equal`, for an ascending table.
fn binary_search(len: usize, cmp: impl Fn(usize) -> std::cmp::Ordering) -> Option<usize> {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(mid) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

fn f32_at(bytes: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(bytes, at))
}

/// The writer's half: the font processor writes the tables, the atlas adds
/// the frames (behind the `write` feature).
#[cfg(feature = "write")]
pub mod write {
    use super::{FONT_MAGIC, FontSize};

    /// One glyph's metrics, as the processor measured it.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct GlyphMetrics {
        /// The character.
        pub ch: char,
        /// Pen advance in pixels.
        pub advance: f32,
        /// Pen to the box's left edge.
        pub left: f32,
        /// Baseline up to the box's top edge.
        pub top: f32,
    }

    /// Everything of a font resource but its frames.
    #[derive(Debug, Clone, PartialEq, Default)]
    pub struct FontTables {
        /// Distance field spread in pixels; 0 for coverage bitmaps.
        pub spread: f32,
        /// Each size with its glyphs, sorted by character.
        pub sizes: Vec<(FontSize, Vec<GlyphMetrics>)>,
        /// `(left, right, adjustment per pixel of size)`, sorted by pair.
        pub kerning: Vec<(char, char, f32)>,
    }

    impl FontTables {
        /// How many glyphs, over all sizes: the frames to append, in order.
        pub fn glyph_count(&self) -> usize {
            self.sizes.iter().map(|(_, g)| g.len()).sum()
        }

        /// The resource's bytes up to its frames; appending one 72-byte
        /// sprite frame per glyph, in order, completes it.
        pub fn encode(&self) -> Vec<u8> {
            let word = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
            let float = |out: &mut Vec<u8>, v: f32| out.extend_from_slice(&v.to_le_bytes());
            let mut out = Vec::new();
            out.extend_from_slice(&FONT_MAGIC);
            out.extend_from_slice(&1u16.to_le_bytes());
            out.extend_from_slice(&u16::from(self.spread > 0.0).to_le_bytes());
            word(&mut out, self.sizes.len() as u32);
            word(&mut out, self.glyph_count() as u32);
            word(&mut out, self.kerning.len() as u32);
            float(&mut out, self.spread);
            out.extend_from_slice(&[0; 8]);
            let mut first = 0;
            for (size, glyphs) in &self.sizes {
                for v in [size.px, size.ascent, size.descent, size.line_gap] {
                    float(&mut out, v);
                }
                word(&mut out, first as u32);
                word(&mut out, glyphs.len() as u32);
                first += glyphs.len();
            }
            for g in self.sizes.iter().flat_map(|(_, g)| g) {
                word(&mut out, g.ch as u32);
                for v in [g.advance, g.left, g.top] {
                    float(&mut out, v);
                }
            }
            for &(l, r, k) in &self.kerning {
                word(&mut out, l as u32);
                word(&mut out, r as u32);
                float(&mut out, k);
            }
            out
        }
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::write::{FontTables, GlyphMetrics};
    use super::*;

    fn frame(x: u32) -> SpriteFrame {
        crate::sprite::test_frame(x, (6, 8))
    }

    fn sample() -> Vec<u8> {
        let glyph = |ch, advance| GlyphMetrics {
            ch,
            advance,
            left: 1.0,
            top: 7.0,
        };
        let size = |px| FontSize {
            px,
            ascent: px * 0.8,
            descent: px * -0.2,
            line_gap: 1.0,
        };
        let tables = FontTables {
            spread: 0.0,
            sizes: vec![
                (size(8.0), vec![glyph('A', 5.0), glyph('V', 6.0)]),
                (size(16.0), vec![glyph(' ', 4.0), glyph('A', 10.0)]),
            ],
            kerning: vec![('A', 'V', -0.125), ('V', 'A', -0.0625)],
        };
        let mut bytes = tables.encode();
        for g in 0..tables.glyph_count() {
            bytes.extend_from_slice(&frame(g as u32 * 10).encode());
        }
        bytes
    }

    #[test]
    fn tables_round_trip_and_lay_out_text() {
        let bytes = sample();
        let font = Font::parse(&bytes).expect("valid");
        assert_eq!(font.sizes().map(|s| s.px).collect::<Vec<_>>(), [8.0, 16.0]);
        assert_eq!(font.size(8.0).unwrap().line_height(), 6.4 + 1.6 + 1.0);
        let a = font.glyph(16.0, 'A').expect("A at 16");
        assert_eq!((a.advance, a.frame.x), (10.0, 30));
        assert_eq!(a.origin(100.0, 50.0), (102.0, 45.0));
        assert!(font.glyph(16.0, 'V').is_none());
        assert!(font.glyph(12.0, 'A').is_none());
        assert_eq!(font.kerning('A', 'V', 8.0), -1.0);
        assert_eq!(font.kerning('V', 'V', 8.0), 0.0);
        assert_eq!(font.measure("AVA", 8.0), 5.0 + 6.0 + 5.0 - 1.0 - 0.5);
        assert_eq!(font.frames().count(), 4);
    }

    #[test]
    fn every_truncation_and_many_byte_flips_are_refused_or_read_safely() {
        let bytes = sample();
        for len in 0..bytes.len() {
            assert!(Font::parse(&bytes[..len]).is_none(), "truncated to {len}");
        }
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= flip;
                if let Some(font) = Font::parse(&b) {
                    // Whatever survives still reads without panicking.
                    for s in font.sizes() {
                        let _ = font.glyph(s.px, 'A');
                        let _ = font.measure("AV A", s.px);
                    }
                }
            }
        }
    }

    #[test]
    fn out_of_order_tables_are_refused() {
        let mut bytes = sample();
        // Swap the two kerning pairs.
        let k = 32 + 2 * 24 + 4 * 16;
        let (a, b) = bytes[k..k + 24].split_at(12);
        let swapped = [b, a].concat();
        bytes[k..k + 24].copy_from_slice(&swapped);
        assert!(Font::parse(&bytes).is_none());
    }
}
