//! `font`: a TrueType or OpenType font baked into glyphs at fixed pixel
//! sizes, packed into an atlas with the sprites (feature `fonts`, on by
//! default).
//!
//! Not the default for `.ttf`/`.otf` (those are copied as bytes, which
//! engines that lay out text at run time, Bevy's among them, read): a rule
//! asks for it.
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! glob = "fonts/*.ttf"
//! processor = "font"
//! sizes = [16, 32]
//! atlas = "ui"
//! ```
//!
//! Settings (all optional; `atlas` is read by the planner, as for sprites):
//!
//! | key       | default | meaning |
//! |-----------|---------|---------|
//! | `sizes`   | `[32]`  | pixel sizes (pixels per em) to bake, each in `1..=512` |
//! | `chars`   | printable ASCII | the characters to bake, as a string; each must be in the font |
//! | `ranges`  | none    | code point ranges to bake too, `[[0xA0, 0xFF]]`; characters the font lacks are skipped |
//! | `mode`    | `"bitmap"` | `"bitmap"`: coverage; `"sdf"`: signed distance field |
//! | `spread`  | `4`     | a distance field's reach in pixels, each side of the outline (`1..=32`) |
//! | `kerning` | `true`  | keep the font's pair kerning |
//! | `atlas`   | `"main"` | the atlas the glyphs are packed into |
//!
//! When `ranges` is given without `chars`, only the ranges are baked.
//!
//! Glyphs are rasterized by `fontdue` (its outlines prepared for the
//! largest size baked, which fontdue renders best); each is a sprite (white, coverage in
//! alpha), trimmed and packed by the atlas step like any other. The main
//! output is the font's tables ([`assets_runtime::font`]: sizes with line
//! metrics, glyph advances and bearings, kerning), which the atlas
//! completes with each glyph's frame; `Parcel::font` reads the result.
//!
//! Kerning: fontdue reads only the old `kern` table, and most fonts made in
//! the last decade (Fira, Noto, Inter) kern through GPOS, so the pairs are
//! read with `ttf-parser`: GPOS pair adjustments of the `kern` feature when
//! the font has them (first subtable that covers the pair, per lookup, as a
//! shaper applies them), else the `kern` table. Pairs are stored per pixel
//! of size (font units over units per em) for the characters baked, zero
//! pairs left out.
//!
//! A distance field is computed from the coverage bitmap at the baked size
//! (exact Euclidean distance to the nearest pixel across the outline, within
//! `spread`), so its precision is about half a pixel at that size: bake the
//! size text is drawn at most often, and scale from there.

use std::collections::BTreeSet;

use assets_runtime::FontSize;
use assets_runtime::font::write::{FontTables, GlyphMetrics};
use serde::Deserialize;

use super::sprite_source::{SPRITE_SOURCES_KIND, SPRITES_LABEL, SpriteSource};
use super::{Context, ProcessError, Processor};

/// Bakes fonts into glyph atlases.
#[derive(Debug, Clone, Copy)]
pub struct Font;

/// Coverage or distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GlyphMode {
    /// Anti-aliased coverage, drawn at the baked size.
    #[default]
    Bitmap,
    /// Signed distance field, for text scaled or outlined at run time.
    Sdf,
}

/// Settings of the `font` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FontSettings {
    /// Pixel sizes to bake.
    #[serde(default = "default_sizes")]
    pub sizes: Vec<f32>,
    /// Characters to bake (each must be in the font).
    #[serde(default)]
    pub chars: Option<String>,
    /// Inclusive code point ranges to bake (characters the font lacks are skipped).
    #[serde(default)]
    pub ranges: Vec<[u32; 2]>,
    /// Coverage or distance field.
    #[serde(default)]
    pub mode: GlyphMode,
    /// A distance field's reach each side of the outline, in pixels.
    #[serde(default = "default_spread")]
    pub spread: u32,
    /// Keep pair kerning.
    #[serde(default = "super::text::yes")]
    pub kerning: bool,
}

fn default_sizes() -> Vec<f32> {
    vec![32.0]
}

fn default_spread() -> u32 {
    4
}

/// Printable ASCII, the default character set.
const ASCII: std::ops::RangeInclusive<u32> = 0x20..=0x7e;
const MAX_SIZE: f32 = 512.0;
const MAX_SPREAD: u32 = 32;
const MAX_GLYPHS: usize = 65_536;

impl Processor for Font {
    type Settings = FontSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "font"
    }

    fn version(&self) -> u32 {
        2 // 2: glyphs cached with LZ4 that finds matches in small sprites
    }

    fn packs_into_atlas(&self) -> bool {
        true
    }

    fn process(&self, ctx: &mut Context<'_>, settings: FontSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        let (tables, sprites, skipped) = bake(&bytes, &settings)?;
        for warning in skipped {
            ctx.warn(warning);
        }
        ctx.emit(assets_runtime::format::KIND_FONT, tables.encode())?;
        ctx.emit_labeled(
            SPRITES_LABEL,
            SPRITE_SOURCES_KIND,
            SpriteSource::encode_list(&sprites),
        )
    }
}

/// The font in `bytes` (an untrusted file) baked as `settings` ask: its
/// tables, and one sprite per glyph and size.
/// The font's tables and glyph sprites, and what a user should know of
/// what was left out (see [`character_set`]).
pub(crate) fn bake(
    bytes: &[u8],
    settings: &FontSettings,
) -> Result<(FontTables, Vec<SpriteSource>, Vec<String>), ProcessError> {
    let sizes = checked_sizes(settings)?;
    check_cmap(bytes).map_err(ProcessError::msg)?;
    let font = fontdue::Font::from_bytes(
        bytes,
        fontdue::FontSettings {
            scale: sizes.last().copied().unwrap_or(32.0),
            ..fontdue::FontSettings::default()
        },
    )
    .map_err(|e| ProcessError::msg(format!("not a font fontdue can read: {e}")))?;
    let (chars, skipped) = character_set(settings, |c| font.lookup_glyph_index(c) != 0)?;
    if chars.len() * sizes.len() > MAX_GLYPHS {
        return Err(ProcessError::msg(format!(
            "{} characters at {} sizes are {} glyphs, more than {MAX_GLYPHS}; bake fewer",
            chars.len(),
            sizes.len(),
            chars.len() * sizes.len()
        )));
    }
    let pad = match settings.mode {
        GlyphMode::Bitmap => 0,
        GlyphMode::Sdf => settings.spread,
    };
    let mut tables = FontTables {
        spread: pad as f32,
        ..FontTables::default()
    };
    let mut sprites = Vec::with_capacity(chars.len() * sizes.len());
    for &px in &sizes {
        let line = font
            .horizontal_line_metrics(px)
            .ok_or_else(|| ProcessError::msg("the font has no horizontal line metrics (`hhea`)"))?;
        let size = FontSize {
            px,
            ascent: line.ascent,
            descent: line.descent,
            line_gap: line.line_gap,
        };
        let mut glyphs = Vec::with_capacity(chars.len());
        for &ch in &chars {
            let (m, coverage) = font.rasterize(ch, px);
            let glyph = GlyphBitmap {
                width: m.width as u32,
                height: m.height as u32,
                alpha: coverage,
            };
            let glyph = match settings.mode {
                GlyphMode::Bitmap => glyph,
                GlyphMode::Sdf => distance_field(&glyph, pad),
            };
            glyphs.push(GlyphMetrics {
                ch,
                advance: m.advance_width,
                left: m.xmin as f32 - pad as f32,
                top: (m.ymin + m.height as i32) as f32 + pad as f32,
            });
            sprites.push(SpriteSource::new(glyph.to_rgba(), true));
        }
        tables.sizes.push((size, glyphs));
    }
    if settings.kerning {
        tables.kerning = kerning::pairs(bytes, &chars)?;
    }
    Ok((tables, sprites, skipped))
}

/// The sizes, sorted, each once; an error names a bad one.
/// The last Unicode code point.
const LAST_CODE_POINT: u32 = 0x10_FFFF;

/// Refuses a font whose character map claims code points past Unicode's
/// last: fontdue visits every code point a `cmap` subtable covers, and a
/// format 12 or 13 group ending at `0x7FFFFFFF` (4 flipped bytes of a real
/// font) kept one core busy for minutes before failing. ttf-parser keeps
/// the groups private, so their ranges are read here from the table's
/// bytes: a record count and 12-byte groups of `start, end, glyph`, each
/// read bounds-checked (OpenType's `cmap`, formats 12 and 13).
fn check_cmap(font: &[u8]) -> Result<(), String> {
    let Ok(face) = ttf_parser::RawFace::parse(font, 0) else {
        return Ok(()); // fontdue says what is wrong with the file
    };
    let Some(cmap) = face.table(ttf_parser::Tag::from_bytes(b"cmap")) else {
        return Ok(());
    };
    let u16_at = |at: usize| Some(u16::from_be_bytes(cmap.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_be_bytes(cmap.get(at..at + 4)?.try_into().ok()?));
    let tables = u16_at(2).unwrap_or(0) as usize;
    for record in 0..tables {
        let Some(offset) = u32_at(4 + record * 8 + 4) else {
            break;
        };
        let at = offset as usize;
        let format = u16_at(at);
        if !matches!(format, Some(12 | 13)) {
            continue;
        }
        let groups = u32_at(at + 12).unwrap_or(0) as usize;
        for g in 0..groups {
            let group = at + 16 + g * 12;
            let (Some(start), Some(end)) = (u32_at(group), u32_at(group + 4)) else {
                break; // past the table: ttf-parser stops there too
            };
            if start > end || end > LAST_CODE_POINT {
                return Err(format!(
                    "its character map (cmap format {}) claims code points {start:#X} to {end:#X}, \
                     past Unicode's last ({LAST_CODE_POINT:#X}): the font is corrupt",
                    format.unwrap_or_default()
                ));
            }
        }
    }
    Ok(())
}

fn checked_sizes(settings: &FontSettings) -> Result<Vec<f32>, ProcessError> {
    if let Some(bad) = (settings.sizes.iter()).find(|&&px| !(1.0..=MAX_SIZE).contains(&px)) {
        return Err(ProcessError::msg(format!(
            "`sizes` holds {bad}; each size must be from 1 to {MAX_SIZE} pixels"
        )));
    }
    if settings.sizes.is_empty() {
        return Err(ProcessError::msg(
            "`sizes` is empty; name at least one pixel size",
        ));
    }
    if settings.mode == GlyphMode::Sdf && !(1..=MAX_SPREAD).contains(&settings.spread) {
        return Err(ProcessError::msg(format!(
            "`spread` is {}; it must be from 1 to {MAX_SPREAD} pixels",
            settings.spread
        )));
    }
    let mut sizes = settings.sizes.clone();
    sizes.sort_by(f32::total_cmp);
    sizes.dedup();
    Ok(sizes)
}

/// The characters to bake, sorted: `chars` (each must be in the font,
/// `has`), then `ranges` (those the font lacks skipped), or printable
/// ASCII when neither is given. Beside them, a warning per range whose
/// characters the font lacks some of: a game that shows one gets a blank.
fn character_set(
    settings: &FontSettings,
    has: impl Fn(char) -> bool,
) -> Result<(Vec<char>, Vec<String>), ProcessError> {
    let mut skipped = Vec::new();
    let mut set = BTreeSet::new();
    if let Some(chars) = &settings.chars {
        let missing: BTreeSet<char> = chars.chars().filter(|&c| !has(c)).collect();
        if !missing.is_empty() {
            let list: String = missing.iter().flat_map(|c| c.escape_debug()).collect();
            return Err(ProcessError::msg(format!(
                "the font has no glyph for {} of `chars`: \"{list}\"; remove them, or use a font that has them",
                missing.len()
            )));
        }
        set.extend(chars.chars());
    }
    for &[lo, hi] in &settings.ranges {
        if lo > hi || hi > 0x10_ffff {
            return Err(ProcessError::msg(format!(
                "`ranges` holds [{lo:#x}, {hi:#x}]; a range is [first, last] code points, first <= last <= 0x10FFFF"
            )));
        }
        let (found, lacking): (Vec<char>, Vec<char>) =
            (lo..=hi).filter_map(char::from_u32).partition(|&c| has(c));
        if !lacking.is_empty() {
            let shown: String = (lacking.iter().take(8))
                .map(|c| format!(" U+{:04X}", u32::from(*c)))
                .collect();
            let more = if lacking.len() > 8 { " ..." } else { "" };
            skipped.push(format!(
                "the font has no glyph for {} of the {} characters of range [{lo:#x}, {hi:#x}] (skipped:{shown}{more}); a game that shows one draws nothing",
                lacking.len(),
                lacking.len() + found.len()
            ));
        }
        set.extend(found);
    }
    if settings.chars.is_none() && settings.ranges.is_empty() {
        set.extend(ASCII.filter_map(char::from_u32).filter(|&c| has(c)));
    }
    Ok((set.into_iter().collect(), skipped))
}

/// One glyph's alpha, rows top to bottom.
struct GlyphBitmap {
    width: u32,
    height: u32,
    alpha: Vec<u8>,
}

impl GlyphBitmap {
    /// White pixels with the alpha: what an atlas page holds for a glyph.
    fn to_rgba(&self) -> image::RgbaImage {
        let pixels = self
            .alpha
            .iter()
            .flat_map(|&a| [255, 255, 255, a])
            .collect();
        image::RgbaImage::from_raw(self.width, self.height, pixels)
            .expect("one alpha byte per pixel")
    }
}

/// The signed distance field of `glyph` grown by `pad` pixels each side:
/// alpha 128 on the outline (coverage one half), 0 at `pad` pixels outside,
/// 255 at `pad` inside. Exact Euclidean distance between pixel centres to
/// the nearest pixel on the other side, less half a pixel, searched within
/// `pad + 1`.
fn distance_field(glyph: &GlyphBitmap, pad: u32) -> GlyphBitmap {
    let (w, h) = (glyph.width + 2 * pad, glyph.height + 2 * pad);
    let inside = |x: i64, y: i64| -> bool {
        let (gx, gy) = (x - i64::from(pad), y - i64::from(pad));
        gx >= 0
            && gy >= 0
            && gx < i64::from(glyph.width)
            && gy < i64::from(glyph.height)
            && glyph.alpha[(gy * i64::from(glyph.width) + gx) as usize] >= 128
    };
    let reach = i64::from(pad) + 1;
    let mut alpha = Vec::with_capacity((w * h) as usize);
    for y in 0..i64::from(h) {
        for x in 0..i64::from(w) {
            let here = inside(x, y);
            let mut nearest = (reach * reach) as f32;
            for dy in -reach..=reach {
                for dx in -reach..=reach {
                    let d = (dx * dx + dy * dy) as f32;
                    if d < nearest && inside(x + dx, y + dy) != here {
                        nearest = d;
                    }
                }
            }
            let distance = nearest.sqrt() - 0.5;
            let signed = if here { -distance } else { distance };
            let a = 0.5 - signed / (2.0 * pad as f32);
            alpha.push((a.clamp(0.0, 1.0) * 255.0).round() as u8);
        }
    }
    GlyphBitmap {
        width: w,
        height: h,
        alpha,
    }
}

/// Pair kerning read with ttf-parser: GPOS first, the `kern` table else.
mod kerning {
    use ttf_parser::gpos::{PairAdjustment, PositioningSubtable};
    use ttf_parser::{Face, GlyphId, Tag};

    use crate::processor::ProcessError;

    /// Every non-zero pair among `chars`, sorted, per pixel of size.
    pub(super) fn pairs(
        bytes: &[u8],
        chars: &[char],
    ) -> Result<Vec<(char, char, f32)>, ProcessError> {
        let face = Face::parse(bytes, 0)
            .map_err(|e| ProcessError::msg(format!("not a font ttf-parser can read: {e}")))?;
        let per_unit = 1.0 / f32::from(face.units_per_em());
        let glyphs: Vec<(char, GlyphId)> = chars
            .iter()
            .filter_map(|&c| Some((c, face.glyph_index(c)?)))
            .collect();
        let lookups = gpos_kern_lookups(&face);
        let mut out = Vec::new();
        for &(l, lg) in &glyphs {
            for &(r, rg) in &glyphs {
                let units = if lookups.is_empty() {
                    kern_table(&face, lg, rg)
                } else {
                    lookups.iter().map(|&i| gpos_pair(&face, i, lg, rg)).sum()
                };
                if units != 0 {
                    out.push((l, r, units as f32 * per_unit));
                }
            }
        }
        Ok(out)
    }

    /// The lookups of GPOS's `kern` feature, each once, in order.
    fn gpos_kern_lookups(face: &Face<'_>) -> Vec<u16> {
        let Some(gpos) = face.tables().gpos else {
            return Vec::new();
        };
        let kern = Tag::from_bytes(b"kern");
        let mut lookups: Vec<u16> = gpos
            .features
            .into_iter()
            .filter(|f| f.tag == kern)
            .flat_map(|f| f.lookup_indices)
            .collect();
        lookups.sort_unstable();
        lookups.dedup();
        lookups
    }

    /// The advance adjustment of lookup `index` for the pair: from the first
    /// pair subtable that covers `left`, as a shaper applies it.
    fn gpos_pair(face: &Face<'_>, index: u16, left: GlyphId, right: GlyphId) -> i32 {
        let Some(lookup) = face.tables().gpos.and_then(|g| g.lookups.get(index)) else {
            return 0;
        };
        for subtable in lookup.subtables.into_iter::<PositioningSubtable<'_>>() {
            let PositioningSubtable::Pair(pair) = subtable else {
                continue;
            };
            let value = match pair {
                PairAdjustment::Format1 { coverage, sets } => {
                    let Some(i) = coverage.get(left) else {
                        continue;
                    };
                    sets.get(i).and_then(|set| set.get(right))
                }
                PairAdjustment::Format2 {
                    coverage,
                    classes,
                    matrix,
                } => {
                    if coverage.get(left).is_none() {
                        continue;
                    }
                    matrix.get((classes.0.get(left), classes.1.get(right)))
                }
            };
            return value.map_or(0, |(first, _)| i32::from(first.x_advance));
        }
        0
    }

    /// The sum of the `kern` table's horizontal pair subtables.
    fn kern_table(face: &Face<'_>, left: GlyphId, right: GlyphId) -> i32 {
        let Some(kern) = face.tables().kern else {
            return 0;
        };
        kern.subtables
            .into_iter()
            .filter(|s| s.horizontal && !s.variable && !s.has_cross_stream && !s.has_state_machine)
            .filter_map(|s| s.glyphs_kerning(left, right))
            .map(i32::from)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(toml: &str) -> FontSettings {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn character_sets_default_to_ascii_and_name_what_the_font_lacks() {
        let has = |c: char| c != 'é';
        let (ascii, skipped) = character_set(&settings(""), has).unwrap();
        assert_eq!(ascii.len(), 95);
        assert_eq!((ascii[0], ascii[94]), (' ', '~'));
        assert!(skipped.is_empty());
        let (ranged, skipped) = character_set(&settings("ranges = [[0xe0, 0xea]]"), has).unwrap();
        assert_eq!(ranged.len(), 10, "é is skipped, nothing else is added");
        assert_eq!(
            skipped,
            [
                "the font has no glyph for 1 of the 11 characters of range [0xe0, 0xea] (skipped: U+00E9); a game that shows one draws nothing"
            ]
        );
        let both = character_set(&settings("chars = \"ba\"\nranges = [[0x61, 0x62]]"), has);
        assert_eq!(both.unwrap().0, ['a', 'b']);
        let err = character_set(&settings("chars = \"café\""), has).unwrap_err();
        assert!(err.to_string().contains("\"é\""), "{err}");
        let err = character_set(&settings("ranges = [[0x62, 0x61]]"), has).unwrap_err();
        assert!(err.to_string().contains("first <= last"), "{err}");
    }

    #[test]
    fn sizes_are_sorted_once_and_bad_ones_named() {
        assert_eq!(
            checked_sizes(&settings("sizes = [32, 16, 32]")).unwrap(),
            [16.0, 32.0]
        );
        for bad in [
            "sizes = [0]",
            "sizes = [600]",
            "sizes = []",
            "mode = \"sdf\"\nspread = 0",
        ] {
            assert!(checked_sizes(&settings(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_distance_field_is_half_on_the_outline_and_falls_off_by_spread() {
        // A 6x6 solid square.
        let square = GlyphBitmap {
            width: 6,
            height: 6,
            alpha: vec![255; 36],
        };
        let field = distance_field(&square, 4);
        assert_eq!((field.width, field.height), (14, 14));
        let at = |x: u32, y: u32| field.alpha[(y * field.width + x) as usize];
        // Just inside the edge (half a pixel in), just outside, far out, deep in.
        assert!((at(4, 7) as i32 - 144).abs() <= 1, "{}", at(4, 7));
        assert!((at(3, 7) as i32 - 112).abs() <= 1, "{}", at(3, 7));
        assert_eq!(at(0, 7), 16);
        assert_eq!(at(0, 0), 0);
        assert!(at(7, 7) > 200);
    }
}
