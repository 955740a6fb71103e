//! From sprite sizes and atlas settings to pages and frames.
//!
//! Padding and extrusion are the layout's business, not the packer's: each
//! sprite is offered to the packer grown by `2 × extrude + padding`, on a page
//! grown by `padding`, so that sprites end up `padding` pixels apart (their
//! extruded borders included) and the last column and row need no trailing
//! gap. Pages are then cropped to what they use, and rounded up to powers of
//! two when asked.

use super::pack::{PackOptions, Packer, Size, TooLarge};
use crate::manifest::AtlasSpec;

/// Where one sprite's pixels go, without its extruded border.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Page index.
    pub page: u32,
    /// Left edge of the pixels in the page.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width in the page (the sprite's height when rotated).
    pub w: u32,
    /// Height in the page.
    pub h: u32,
    /// Turned 90° clockwise.
    pub rotated: bool,
}

/// Every page's size and every sprite's frame, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtlasLayout {
    /// Page sizes; at least one page, even for an atlas of empty sprites.
    pub pages: Vec<Size>,
    /// One frame per sprite; empty sprites have `w = h = 0` on page 0.
    pub frames: Vec<Frame>,
}

/// Lays out sprites of the given (trimmed) sizes.
pub fn lay_out(
    sizes: &[Size],
    spec: &AtlasSpec,
    packer: &dyn Packer,
) -> Result<AtlasLayout, TooLarge> {
    let border = 2 * spec.extrude + spec.padding;
    let grown: Vec<Size> = sizes
        .iter()
        .map(|s| {
            if s.area() == 0 {
                Size { w: 0, h: 0 }
            } else {
                Size {
                    w: s.w + border,
                    h: s.h + border,
                }
            }
        })
        .collect();
    let options = PackOptions {
        page_width: spec.max_size + spec.padding,
        page_height: spec.max_size + spec.padding,
        allow_rotation: spec.rotate,
    };
    let packing = packer.pack(&grown, &options).map_err(|e| TooLarge {
        size: sizes[e.index],
        page: Size {
            w: spec.max_size,
            h: spec.max_size,
        },
        ..e
    })?;
    let frames: Vec<Frame> = packing
        .placements
        .iter()
        .zip(sizes)
        .map(|(p, s)| {
            if s.area() == 0 {
                return Frame {
                    page: 0,
                    x: 0,
                    y: 0,
                    w: 0,
                    h: 0,
                    rotated: false,
                };
            }
            let (w, h) = if p.rotated { (s.h, s.w) } else { (s.w, s.h) };
            Frame {
                page: p.page,
                x: p.x + spec.extrude,
                y: p.y + spec.extrude,
                w,
                h,
                rotated: p.rotated,
            }
        })
        .collect();
    let mut pages = vec![Size { w: 1, h: 1 }; (packing.pages as usize).max(1)];
    for f in frames.iter().filter(|f| f.w > 0) {
        let page = &mut pages[f.page as usize];
        page.w = page.w.max(f.x + f.w + spec.extrude);
        page.h = page.h.max(f.y + f.h + spec.extrude);
    }
    if spec.power_of_two {
        for p in &mut pages {
            p.w = p.w.next_power_of_two();
            p.h = p.h.next_power_of_two();
        }
    }
    Ok(AtlasLayout { pages, frames })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atlas::MaxRects;

    fn spec(max_size: u32, padding: u32, extrude: u32) -> AtlasSpec {
        AtlasSpec {
            max_size,
            padding,
            extrude,
            ..AtlasSpec::default()
        }
    }

    #[test]
    fn pages_are_cropped_to_their_contents_or_rounded_to_powers_of_two() {
        let sizes = [Size { w: 10, h: 5 }, Size { w: 3, h: 3 }];
        let layout = lay_out(&sizes, &spec(64, 2, 1), &MaxRects::default()).unwrap();
        assert_eq!(layout.pages.len(), 1);
        let page = layout.pages[0];
        // Each frame sits inside its extruded border; the page ends at the last border.
        let right = layout.frames.iter().map(|f| f.x + f.w + 1).max().unwrap();
        let bottom = layout.frames.iter().map(|f| f.y + f.h + 1).max().unwrap();
        assert_eq!((page.w, page.h), (right, bottom));
        assert!(layout.frames.iter().all(|f| f.x >= 1 && f.y >= 1));
        let pot = lay_out(
            &sizes,
            &AtlasSpec {
                power_of_two: true,
                ..spec(64, 2, 1)
            },
            &MaxRects::default(),
        )
        .unwrap();
        assert!(pot.pages[0].w.is_power_of_two() && pot.pages[0].h.is_power_of_two());
        assert!(pot.pages[0].w >= page.w && pot.pages[0].h >= page.h);
    }

    #[test]
    fn a_sprite_that_fits_only_without_its_padding_still_fits() {
        // 64 wide with extrusion 0 on a 64 page: the trailing padding may
        // hang off the edge, so it fits; 65 does not.
        let layout = lay_out(
            &[Size { w: 64, h: 64 }],
            &spec(64, 4, 0),
            &MaxRects::default(),
        )
        .unwrap();
        assert_eq!(layout.pages, vec![Size { w: 64, h: 64 }]);
        let err = lay_out(
            &[Size { w: 65, h: 1 }],
            &spec(64, 4, 0),
            &MaxRects::default(),
        )
        .unwrap_err();
        assert_eq!(
            (err.size, err.page),
            (Size { w: 65, h: 1 }, Size { w: 64, h: 64 })
        );
    }

    #[test]
    fn an_atlas_of_empty_sprites_has_one_blank_page() {
        let layout = lay_out(
            &[Size { w: 0, h: 0 }],
            &spec(64, 2, 0),
            &MaxRects::default(),
        )
        .unwrap();
        assert_eq!(layout.pages, vec![Size { w: 1, h: 1 }]);
        assert_eq!((layout.frames[0].w, layout.frames[0].h), (0, 0));
    }
}
