//! The `sprite` resource: where one sprite lies in an atlas page.
//!
//! A sprite's pixels live in a page (an `image` resource, named
//! `atlas:<atlas>#<page>`); the sprite resource, named by the sprite's own
//! asset path, is a fixed 72-byte frame record saying where:
//!
//! ```text
//! offset size
//!      0    4  magic "ASPR"
//!      4    2  layout version, 1
//!      6    2  flags: bit 0 = rotated; other bits zero
//!      8    8  page: ResourceId of the page image
//!     16    4  page index within the atlas
//!     20   16  x, y, w, h: the rectangle the sprite occupies in the page, in pixels
//!     36    8  trim x, trim y: where that rectangle's content sits in the source image
//!     44    8  source width, source height: the image as authored, before trimming
//!     52   16  u0, v0, u1, v1 (f32): the rectangle in page texture coordinates
//!     68    4  zero
//! ```
//!
//! **Trimming.** Transparent borders may have been cut off at build time; draw
//! the frame at `(trim_x, trim_y)` inside a `source_width × source_height` box
//! to place it where the artist put it. A fully transparent sprite has
//! `w = h = 0`.
//!
//! **Rotation.** A rotated sprite is stored turned 90° clockwise, so its
//! rectangle is `h` wide and `w` tall in source terms: `w` and `h` above are
//! the page rectangle, and the trimmed content is `h × w`. Source pixel
//! `(sx, sy)` of the trimmed content is page pixel `(x + w - 1 - sy, y + sx)`.
//!
//! A parcel is rejected at open if a sprite's page is missing, is not an
//! image, or does not contain the sprite's rectangle, so [`crate::Parcel::sprite`]
//! never fails for a sprite id.

use crate::format::{u16_at, u32_at, u64_at};
use crate::id::ResourceId;
use crate::image::Image;

/// Magic bytes of a sprite resource.
pub const SPRITE_MAGIC: [u8; 4] = *b"ASPR";
/// Length of a sprite resource.
pub const SPRITE_LEN: usize = 72;

/// Where a sprite lies in its atlas page. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpriteFrame {
    /// The page image's resource id.
    pub page: ResourceId,
    /// The page's index within its atlas.
    pub page_index: u32,
    /// Left edge in the page.
    pub x: u32,
    /// Top edge in the page.
    pub y: u32,
    /// Width in the page (the content's height when rotated).
    pub w: u32,
    /// Height in the page (the content's width when rotated).
    pub h: u32,
    /// Stored turned 90° clockwise.
    pub rotated: bool,
    /// Left edge of the content within the source image.
    pub trim_x: u32,
    /// Top edge of the content within the source image.
    pub trim_y: u32,
    /// The source image's width before trimming.
    pub source_width: u32,
    /// The source image's height before trimming.
    pub source_height: u32,
    /// The page rectangle in texture coordinates: `[u0, v0, u1, v1]`.
    pub uv: [f32; 4],
}

impl SpriteFrame {
    /// The content's size in source orientation: `(w, h)` unrotated.
    pub fn content_size(&self) -> (u32, u32) {
        if self.rotated {
            (self.h, self.w)
        } else {
            (self.w, self.h)
        }
    }

    /// The 72 bytes of the resource.
    pub fn encode(&self) -> [u8; SPRITE_LEN] {
        let mut out = [0u8; SPRITE_LEN];
        out[..4].copy_from_slice(&SPRITE_MAGIC);
        out[4..6].copy_from_slice(&1u16.to_le_bytes());
        out[6..8].copy_from_slice(&u16::from(self.rotated).to_le_bytes());
        out[8..16].copy_from_slice(&self.page.raw().to_le_bytes());
        let words = [
            self.page_index,
            self.x,
            self.y,
            self.w,
            self.h,
            self.trim_x,
            self.trim_y,
            self.source_width,
            self.source_height,
        ];
        for (i, w) in words.iter().enumerate() {
            out[16 + 4 * i..20 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        for (i, f) in self.uv.iter().enumerate() {
            out[52 + 4 * i..56 + 4 * i].copy_from_slice(&f.to_le_bytes());
        }
        out
    }

    /// Parses a sprite resource; `None` if the bytes are not one (wrong
    /// length, magic, version or flags, or a rectangle that overflows).
    pub fn parse(bytes: &[u8]) -> Option<SpriteFrame> {
        if bytes.len() != SPRITE_LEN || bytes[..4] != SPRITE_MAGIC || u16_at(bytes, 4) != 1 {
            return None;
        }
        let flags = u16_at(bytes, 6);
        if flags > 1 || u32_at(bytes, 68) != 0 {
            return None;
        }
        let word = |i: usize| u32_at(bytes, 16 + 4 * i);
        let float = |i: usize| {
            f32::from_le_bytes(bytes[52 + 4 * i..56 + 4 * i].try_into().expect("4 bytes"))
        };
        let frame = SpriteFrame {
            page: ResourceId::from_raw(u64_at(bytes, 8)),
            page_index: word(0),
            x: word(1),
            y: word(2),
            w: word(3),
            h: word(4),
            rotated: flags == 1,
            trim_x: word(5),
            trim_y: word(6),
            source_width: word(7),
            source_height: word(8),
            uv: [float(0), float(1), float(2), float(3)],
        };
        let (cw, ch) = frame.content_size();
        let fits =
            |offset: u32, len: u32, total: u32| offset.checked_add(len).is_some_and(|e| e <= total);
        let consistent = frame.x.checked_add(frame.w).is_some()
            && frame.y.checked_add(frame.h).is_some()
            && fits(frame.trim_x, cw, frame.source_width)
            && fits(frame.trim_y, ch, frame.source_height);
        consistent.then_some(frame)
    }

    /// Whether the frame's rectangle lies within a `width × height` page.
    pub fn fits_in(&self, width: u32, height: u32) -> bool {
        // `parse` checked these sums do not overflow.
        self.x + self.w <= width && self.y + self.h <= height
    }
}

/// A 4×5 frame at `x` on the first page of atlas `main`, trimmed by (1, 2)
/// out of a `source` image: what the layouts that append frames (fonts,
/// animations) hold in their tests.
#[cfg(test)]
pub(crate) fn test_frame(x: u32, source: (u32, u32)) -> SpriteFrame {
    SpriteFrame {
        page: crate::ResourceId::of("atlas:main#0"),
        page_index: 0,
        x,
        y: 0,
        w: 4,
        h: 5,
        rotated: false,
        trim_x: 1,
        trim_y: 2,
        source_width: source.0,
        source_height: source.1,
        uv: [0.0; 4],
    }
}

/// A sprite resource with its page: everything needed to draw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprite<'a> {
    /// Where it lies.
    pub frame: SpriteFrame,
    /// The page image holding its pixels.
    pub page: Image<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> SpriteFrame {
        SpriteFrame {
            page: ResourceId::of("atlas:main#0"),
            page_index: 0,
            x: 10,
            y: 20,
            w: 5,
            h: 7,
            rotated: true,
            trim_x: 1,
            trim_y: 2,
            source_width: 9,
            source_height: 8,
            uv: [0.25, 0.5, 0.375, 0.625],
        }
    }

    #[test]
    fn frames_round_trip_through_their_72_bytes() {
        let bytes = frame().encode();
        assert_eq!(bytes[..8], [b'A', b'S', b'P', b'R', 1, 0, 1, 0]);
        assert_eq!(bytes[16..20], [0, 0, 0, 0], "page index");
        assert_eq!(bytes[20..24], [10, 0, 0, 0], "x");
        assert_eq!(SpriteFrame::parse(&bytes), Some(frame()));
        assert_eq!(frame().content_size(), (7, 5));
    }

    #[test]
    fn inconsistent_frames_are_not_sprites() {
        let mut short = frame().encode().to_vec();
        short.pop();
        assert_eq!(SpriteFrame::parse(&short), None);
        let mut flags = frame().encode();
        flags[6] = 2;
        assert_eq!(SpriteFrame::parse(&flags), None);
        let outside = SpriteFrame {
            trim_x: 3,
            ..frame()
        };
        assert_eq!(
            SpriteFrame::parse(&outside.encode()),
            None,
            "content wider than the source"
        );
        let overflow = SpriteFrame {
            x: u32::MAX,
            ..frame()
        };
        assert_eq!(SpriteFrame::parse(&overflow.encode()), None);
    }
}
