//! `inspect --atlas`: an atlas's pages as PNG files a person can look at.
//!
//! Each page is drawn over a checkerboard (so transparency shows), and each
//! sprite's rectangle (and each font glyph's) gets a one-pixel outline in a
//! color derived from its name, so neighbours differ and the same sprite
//! keeps its color between runs.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use assets_runtime::image::{PixelFormat, PixelsError};
use assets_runtime::{Patched, ResourceId, SpriteFrame};
use image::{Rgba, RgbaImage};

/// One picture written.
pub struct Picture {
    /// Where.
    pub path: PathBuf,
    /// Page size.
    pub width: u32,
    /// Page size.
    pub height: u32,
    /// Sprites outlined on it.
    pub sprites: usize,
}

/// Draws every page of atlas `atlas` in `parcel` (seen through its patch,
/// if any) into `out_dir/<atlas>-<page>.png`.
pub fn draw(parcel: &Patched<'_>, atlas: &str, out_dir: &Path) -> anyhow::Result<Vec<Picture>> {
    // Sprites by name, each font's glyphs as `<font>#<glyph index>` and
    // each animation's frames as `<animation>#<frame index>`.
    let mut sprites: Vec<(String, SpriteFrame)> = Vec::new();
    for r in parcel.iter() {
        if let Some(frame) = r.sprite_frame() {
            sprites.push((r.name.to_owned(), frame));
        }
        if let Some(font) = r.font() {
            let glyphs = font.frames().enumerate();
            sprites.extend(glyphs.map(|(i, frame)| (format!("{}#{i}", r.name), frame)));
        }
        if let Some(animation) = r.animation() {
            let frames = animation.sprite_frames().enumerate();
            sprites.extend(frames.map(|(i, frame)| (format!("{}#{i}", r.name), frame)));
        }
    }
    sprites.sort_by(|a, b| a.0.cmp(&b.0));
    let mut pictures = Vec::new();
    for page_index in 0.. {
        let name = format!("atlas:{atlas}#{page_index}");
        let Some(page) = parcel.image(ResourceId::of(&name)) else {
            break;
        };
        let mut canvas = checkerboard(page.header.width, page.header.height);
        let (width, height) = (page.header.width, page.header.height);
        let pixels = match page.pixels() {
            Ok(rows) => RgbaImage::from_raw(width, height, rows.into_owned()),
            Err(PixelsError::Png) => image::load_from_memory(page.data)
                .ok()
                .map(|i| i.into_rgba8()),
            Err(_) => None,
        }
        .with_context(|| format!("page `{name}` cannot be decoded"))?;
        let premultiplied = page.header.format == PixelFormat::Rgba8Premultiplied;
        for (dst, src) in canvas.pixels_mut().zip(pixels.pixels()) {
            *dst = over(*src, *dst, premultiplied);
        }
        let on_page: Vec<_> = sprites
            .iter()
            .filter(|(_, f)| f.page == ResourceId::of(&name) && f.w > 0 && f.h > 0)
            .collect();
        for (sprite, frame) in &on_page {
            outline(&mut canvas, frame, color_of(sprite));
        }
        std::fs::create_dir_all(out_dir)
            .with_context(|| format!("could not create `{}`", out_dir.display()))?;
        let path = out_dir.join(format!("{atlas}-{page_index}.png"));
        canvas
            .save(&path)
            .with_context(|| format!("could not write `{}`", path.display()))?;
        pictures.push(Picture {
            path,
            width: page.header.width,
            height: page.header.height,
            sprites: on_page.len(),
        });
    }
    if pictures.is_empty() {
        let atlases: std::collections::BTreeSet<&str> = parcel
            .iter()
            .filter_map(|r| r.name.strip_prefix("atlas:")?.split('#').next())
            .collect();
        if atlases.is_empty() {
            bail!("the parcel holds no atlas pages");
        }
        bail!(
            "the parcel holds no atlas `{atlas}`; its atlases: {}",
            atlases.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(pictures)
}

fn checkerboard(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        let v = if (x / 8 + y / 8) % 2 == 0 { 48 } else { 72 };
        Rgba([v, v, v, 255])
    })
}

/// `src` over opaque `dst`.
fn over(src: Rgba<u8>, dst: Rgba<u8>, premultiplied: bool) -> Rgba<u8> {
    let a = u32::from(src[3]);
    let mut out = [0, 0, 0, 255];
    for c in 0..3 {
        let s = if premultiplied {
            u32::from(src[c]) * 255
        } else {
            u32::from(src[c]) * a
        };
        out[c] = ((s + u32::from(dst[c]) * (255 - a) + 127) / 255).min(255) as u8;
    }
    Rgba(out)
}

fn outline(canvas: &mut RgbaImage, f: &SpriteFrame, color: Rgba<u8>) {
    let (x1, y1) = (f.x + f.w - 1, f.y + f.h - 1);
    for x in f.x..=x1 {
        canvas.put_pixel(x, f.y, color);
        canvas.put_pixel(x, y1, color);
    }
    for y in f.y..=y1 {
        canvas.put_pixel(f.x, y, color);
        canvas.put_pixel(x1, y, color);
    }
}

/// A bright color from a name's id: stable, and different for neighbours.
fn color_of(name: &str) -> Rgba<u8> {
    let id = ResourceId::of(name).raw().to_le_bytes();
    Rgba([128 | id[0], 128 | id[1], 128 | id[2], 255])
}
