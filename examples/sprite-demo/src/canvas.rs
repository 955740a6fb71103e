//! A software canvas: draws sprites from their atlas page, premultiplied
//! alpha "over" an opaque background, and saves a scaled PNG.
//!
//! Pages are decoded once, on first use, as a game uploads each page to the
//! GPU once: `Image::pixels` decompresses (LZ4 in dev builds, zstd in
//! release); a PNG page is decoded with the `image` crate.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use assets_runtime::image::{Image, PixelFormat, PixelsError};
use assets_runtime::{ResourceId, Sprite};

/// An opaque RGBA8 image.
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<[u8; 4]>,
    pages: HashMap<ResourceId, Vec<u8>>,
}

/// The raw RGBA8 rows of `page`.
fn decode(page: &Image<'_>) -> Result<Vec<u8>, String> {
    match page.pixels() {
        Ok(rows) => Ok(rows.into_owned()),
        Err(PixelsError::Png) => Ok(image::load_from_memory(page.data)
            .map_err(|e| format!("atlas page: {e}"))?
            .into_rgba8()
            .into_raw()),
        Err(e) => Err(format!("atlas page: {e}")),
    }
}

impl Canvas {
    pub fn new(width: u32, height: u32, background: [u8; 4]) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![background; (width * height) as usize],
            pages: HashMap::new(),
        }
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    /// Draws `sprite` with its authored (untrimmed) top-left corner at `(x, y)`.
    pub fn draw(&mut self, sprite: &Sprite<'_>, x: u32, y: u32) -> Result<(), String> {
        let page = &sprite.page;
        let pixels = match self.pages.entry(sprite.frame.page) {
            Entry::Occupied(decoded) => decoded.into_mut(),
            Entry::Vacant(slot) => slot.insert(decode(page)?),
        };
        let premultiplied = page.header.format == PixelFormat::Rgba8Premultiplied;
        let f = &sprite.frame;
        let (w, h) = f.content_size();
        for sy in 0..h {
            for sx in 0..w {
                // A rotated frame holds the content turned clockwise.
                let (px, py) = if f.rotated {
                    (f.x + f.w - 1 - sy, f.y + sx)
                } else {
                    (f.x + sx, f.y + sy)
                };
                let at = ((py * page.header.width + px) * 4) as usize;
                let mut p: [u8; 4] = pixels[at..at + 4].try_into().expect("4 bytes");
                if !premultiplied {
                    p = premultiply(p);
                }
                let (cx, cy) = (x + f.trim_x + sx, y + f.trim_y + sy);
                if cx < self.width && cy < self.height {
                    let dst = &mut self.pixels[(cy * self.width + cx) as usize];
                    *dst = over(p, *dst);
                }
            }
        }
        Ok(())
    }

    /// Writes the canvas as a PNG, each pixel `scale` × `scale`.
    pub fn save(&self, path: &Path, scale: u32) -> Result<(), String> {
        let image = image::RgbaImage::from_fn(self.width * scale, self.height * scale, |x, y| {
            image::Rgba(self.pixels[((y / scale) * self.width + x / scale) as usize])
        });
        image
            .save(path)
            .map_err(|e| format!("could not write {}: {e}", path.display()))
    }
}

fn premultiply([r, g, b, a]: [u8; 4]) -> [u8; 4] {
    let m = |c: u8| ((u16::from(c) * u16::from(a) + 127) / 255) as u8;
    [m(r), m(g), m(b), a]
}

/// Premultiplied `src` over opaque `dst`.
fn over(src: [u8; 4], dst: [u8; 4]) -> [u8; 4] {
    let keep = 255 - u16::from(src[3]);
    let c = |i: usize| (u16::from(src[i]) + (u16::from(dst[i]) * keep + 127) / 255).min(255) as u8;
    [c(0), c(1), c(2), 255]
}
