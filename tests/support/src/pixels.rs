//! Sprites read back from a parcel's atlas pages, as a game draws them, to
//! compare with the images they were made from.

use assets_runtime::{Parcel, SpriteFrame};
use image::RgbaImage;

/// The sprite at `frame` as an image of its source size: the trimmed
/// pixels read from its page, put back at their offset, the rest clear.
/// Panics for a frame the atlas turned (atlases turn nothing unless asked).
pub fn frame_image(parcel: &Parcel<'_>, frame: SpriteFrame) -> RgbaImage {
    let mut out = RgbaImage::new(frame.source_width, frame.source_height);
    assert!(!frame.rotated, "atlases do not rotate unless asked");
    if frame.w == 0 {
        return out;
    }
    let page = parcel.image(frame.page).expect("the frame's page");
    let pixels = page.pixels().expect("the page decodes");
    let stride = page.header.width as usize * 4;
    for y in 0..frame.h {
        for x in 0..frame.w {
            let at = (frame.y + y) as usize * stride + (frame.x + x) as usize * 4;
            let p: [u8; 4] = pixels[at..at + 4].try_into().expect("4 bytes");
            out.put_pixel(frame.trim_x + x, frame.trim_y + y, image::Rgba(p));
        }
    }
    out
}

/// The pixels of `image` with every fully transparent one's colour
/// cleared: exporters differ there, and nothing draws it.
pub fn visible(image: &RgbaImage) -> Vec<[u8; 4]> {
    (image.pixels())
        .map(|p| if p.0[3] == 0 { [0; 4] } else { p.0 })
        .collect()
}
