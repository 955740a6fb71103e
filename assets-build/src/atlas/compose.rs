//! Drawing pages: every sprite's pixels copied once into its frame, turned if
//! rotated, then its border extruded. O(pixels of the pages), unlike exporters
//! that test every pixel against every frame.

use super::layout::Frame;
use super::pack::Size;
use crate::processor::sprite_source::SpriteSource;

/// Draws one page of `size` into `pixels` (its RGBA8 rows, cleared): each
/// of `sprites`, the frames on that page with their sprites, into its
/// frame, with `extrude` pixels of each sprite's edge repeated around it.
/// Pages are independent, so they can be drawn in parallel; a page is
/// drawn from its own sprites alone, so a re-pack that draws one page
/// reads the pixels of that page's sprites only.
pub fn draw_page<'s>(
    size: Size,
    sprites: impl IntoIterator<Item = (&'s Frame, &'s SpriteSource)>,
    extrude: u32,
    pixels: &mut [u8],
) {
    assert_eq!(
        pixels.len(),
        size.area() as usize * 4,
        "a page buffer matches its size"
    );
    for (frame, source) in sprites {
        if frame.w == 0 || frame.h == 0 {
            continue;
        }
        blit(pixels, size, frame, source);
        extrude_border(pixels, size, frame, extrude);
    }
}

fn blit(page: &mut [u8], size: Size, f: &Frame, s: &SpriteSource) {
    let stride = size.w as usize * 4;
    let src_row = s.width as usize * 4;
    if !f.rotated {
        for row in 0..s.height as usize {
            let dst = (f.y as usize + row) * stride + f.x as usize * 4;
            page[dst..dst + src_row].copy_from_slice(&s.pixels[row * src_row..(row + 1) * src_row]);
        }
        return;
    }
    // Turned clockwise: source (sx, sy) goes to page (x + w - 1 - sy, y + sx).
    for sy in 0..s.height as usize {
        let px = (f.x + f.w) as usize - 1 - sy;
        for sx in 0..s.width as usize {
            let dst = (f.y as usize + sx) * stride + px * 4;
            let src = sy * src_row + sx * 4;
            page[dst..dst + 4].copy_from_slice(&s.pixels[src..src + 4]);
        }
    }
}

/// Repeats the frame's outermost pixels `n` times outward, corners included,
/// so texture filtering at the edge samples the sprite, not its neighbour.
fn extrude_border(page: &mut [u8], size: Size, f: &Frame, n: u32) {
    if n == 0 {
        return;
    }
    let stride = size.w as usize * 4;
    let (x0, x1) = (f.x as usize * 4, (f.x + f.w) as usize * 4);
    for k in 1..=n as usize {
        let (top, bottom) = (f.y as usize, (f.y + f.h) as usize - 1);
        page.copy_within(
            top * stride + x0..top * stride + x1,
            (top - k) * stride + x0,
        );
        page.copy_within(
            bottom * stride + x0..bottom * stride + x1,
            (bottom + k) * stride + x0,
        );
    }
    let rows = (f.y - n) as usize..(f.y + f.h + n) as usize;
    for row in rows {
        let left = row * stride + f.x as usize * 4;
        let right = row * stride + (f.x + f.w) as usize * 4 - 4;
        for k in 1..=n as usize {
            page.copy_within(left..left + 4, left - 4 * k);
            page.copy_within(right..right + 4, right + 4 * k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::AtlasLayout;
    use super::*;

    fn source(w: u32, h: u32) -> SpriteSource {
        let pixels = (0..w * h)
            .flat_map(|i| [(i % w) as u8, (i / w) as u8, 200, 255])
            .collect();
        SpriteSource {
            source_width: w,
            source_height: h,
            trim_x: 0,
            trim_y: 0,
            width: w,
            height: h,
            pixels,
        }
    }

    fn pixel(page: &[u8], size: Size, x: u32, y: u32) -> [u8; 4] {
        let at = ((y * size.w + x) * 4) as usize;
        page[at..at + 4].try_into().unwrap()
    }

    #[test]
    fn rotated_sprites_turn_clockwise_and_borders_are_extruded() {
        let s = source(3, 2);
        let layout = AtlasLayout {
            pages: vec![Size { w: 6, h: 7 }],
            frames: vec![Frame {
                page: 0,
                x: 2,
                y: 2,
                w: 2,
                h: 3,
                rotated: true,
            }],
        };
        let size = layout.pages[0];
        let mut page = vec![0; size.area() as usize * 4];
        draw_page(size, [(&layout.frames[0], &s)], 1, &mut page);
        let pages = [page];
        for sy in 0..2 {
            for sx in 0..3 {
                let want = [sx as u8, sy as u8, 200, 255];
                assert_eq!(
                    pixel(&pages[0], size, 2 + 2 - 1 - sy, 2 + sx),
                    want,
                    "({sx},{sy})"
                );
            }
        }
        // The corner above-left repeats the frame's top-left pixel.
        assert_eq!(pixel(&pages[0], size, 1, 1), pixel(&pages[0], size, 2, 2));
        assert_eq!(pixel(&pages[0], size, 4, 5), pixel(&pages[0], size, 3, 4));
        assert_eq!(
            pixel(&pages[0], size, 0, 0),
            [0; 4],
            "outside the border stays clear"
        );
    }
}
