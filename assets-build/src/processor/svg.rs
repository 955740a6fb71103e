//! SVG images, rasterized at their declared size where the `image`,
//! `sprite` and `texture` processors decode pixels (feature `svg`; without
//! it an SVG given to them fails saying so).
//!
//! `.svg` files are copied as bytes by default, for engines that draw
//! vectors themselves; a rule that names one of those processors for them
//! rasterizes them instead:
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "icons/*.svg"
//! processor = "sprite"
//! ```
//!
//! The size is the one the file declares (`width` and `height`, else its
//! `viewBox`), rounded to whole pixels; pixels come out RGBA8 with straight
//! alpha, like a decoded PNG's. resvg renders them, without its font and
//! raster-image support: text is not drawn (the processors warn; convert it
//! to paths in the editor), and the file reads nothing else, so it is its
//! own only input.

use image::RgbaImage;

use super::ProcessError;

/// Whether `bytes` are an SVG document: after an optional byte order mark,
/// white space, XML declaration, comments and doctype, an `<svg` element.
pub(crate) fn is_svg(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let Ok(text) = std::str::from_utf8(head).or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
    else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        let skipped = [("<?", "?>"), ("<!--", "-->"), ("<!", ">")]
            .iter()
            .find(|(open, _)| rest.starts_with(open))
            .and_then(|(open, close)| rest[open.len()..].find(close).map(|i| open.len() + i + close.len()));
        match skipped {
            Some(n) => rest = &rest[n..],
            None => break,
        }
    }
    rest.strip_prefix("<svg")
        .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/'))
}

/// Whether the SVG in `bytes` has text, which is not drawn.
pub(crate) fn has_text(bytes: &[u8]) -> bool {
    bytes.windows(5).any(|w| w == b"<text")
}

#[cfg(feature = "svg")]
mod render {
    use super::*;

    /// The SVG in `bytes` parsed, with the size it declares in whole pixels,
    /// refused if wider or taller than `max_dimension`.
    fn parse(bytes: &[u8], max_dimension: u32) -> Result<(resvg::usvg::Tree, u32, u32), ProcessError> {
        let tree = resvg::usvg::Tree::from_data(bytes, &resvg::usvg::Options::default())
            .map_err(|e| ProcessError::msg(format!("not an SVG image resvg can read: {e}")))?;
        let size = tree.size();
        let (w, h) = (size.width().round(), size.height().round());
        if !(w >= 1.0 && h >= 1.0) {
            return Err(ProcessError::msg(format!(
                "the SVG declares a size of {}x{}, under a pixel",
                size.width(),
                size.height()
            )));
        }
        if w > max_dimension as f32 || h > max_dimension as f32 {
            return Err(ProcessError::msg(format!(
                "the SVG declares {w}x{h} pixels, over `max-dimension` ({max_dimension}); \
                 raise it in the rule, or set a smaller `width` and `height` in the file"
            )));
        }
        Ok((tree, w as u32, h as u32))
    }

    /// The size the SVG in `bytes` declares, in whole pixels.
    pub(crate) fn dimensions(bytes: &[u8], max_dimension: u32) -> Result<(u32, u32), ProcessError> {
        parse(bytes, max_dimension).map(|(_, w, h)| (w, h))
    }

    /// The SVG in `bytes` rasterized at its declared size.
    pub(crate) fn rasterize(bytes: &[u8], max_dimension: u32) -> Result<RgbaImage, ProcessError> {
        let (tree, w, h) = parse(bytes, max_dimension)?;
        let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h)
            .ok_or_else(|| ProcessError::msg(format!("cannot make a {w}x{h} canvas")))?;
        let size = tree.size();
        let scale = resvg::tiny_skia::Transform::from_scale(
            w as f32 / size.width(),
            h as f32 / size.height(),
        );
        resvg::render(&tree, scale, &mut pixmap.as_mut());
        RgbaImage::from_raw(w, h, pixmap.take_demultiplied())
            .ok_or_else(|| ProcessError::msg("the rasterized SVG has the wrong length"))
    }
}

#[cfg(not(feature = "svg"))]
mod render {
    use super::*;

    fn unsupported() -> ProcessError {
        ProcessError::msg(
            "an SVG image: rasterizing it needs assets-build's `svg` feature \
             (`cargo assets` has it; a build script that compiles the pipeline in can turn it on)",
        )
    }

    pub(crate) fn dimensions(_: &[u8], _: u32) -> Result<(u32, u32), ProcessError> {
        Err(unsupported())
    }

    pub(crate) fn rasterize(_: &[u8], _: u32) -> Result<RgbaImage, ProcessError> {
        Err(unsupported())
    }
}

pub(crate) use render::{dimensions, rasterize};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_documents_are_told_from_other_files() {
        for svg in [
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
            "\u{feff}<?xml version=\"1.0\"?>\n<!-- Inkscape -->\n<!DOCTYPE svg>\n<svg width=\"4\">",
            "  \n<svg\nwidth=\"1\"></svg>",
        ] {
            assert!(is_svg(svg.as_bytes()), "{svg}");
        }
        for other in ["<svgx/>", "<html><svg/></html>", "\u{89}PNG", "", "<!-- unclosed"] {
            assert!(!is_svg(other.as_bytes()), "{other}");
        }
    }
}
