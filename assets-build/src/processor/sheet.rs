//! `sheet`: a sprite sheet exported with its JSON (Aseprite's "Export
//! Sprite Sheet", TexturePacker's JSON hash or array) cut back into its
//! frames, which are packed into an atlas with the sprites, and read as an
//! animation with named frames.
//!
//! A rule asks for it (`.json` files are text by default):
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "sheets/*.json"
//! processor = "sheet"
//! ```
//!
//! Settings (all optional; `atlas` is read by the planner, as for sprites):
//!
//! | key             | default  | meaning |
//! |-----------------|----------|---------|
//! | `atlas`         | `"main"` | the atlas the frames are packed into |
//! | `trim`          | `true`   | cut each frame's fully transparent borders |
//! | `max-dimension` | `16384`  | a sheet image or frame wider or taller than this is an error |
//!
//! The JSON's `meta.image` names the sheet's image, relative to the JSON
//! (read as an input: editing it reruns the sheet). Each frame is cut from
//! it (`frame`; a `rotated` frame is stored turned 90° clockwise, as
//! TexturePacker writes it) and put back at its place in its source
//! (`spriteSourceSize` inside `sourceSize`), so a frame keeps the offset
//! the exporter trimmed away. Frames keep the JSON's order (a hash's keys
//! as written) and names, and Aseprite's `duration`, `meta.frameTags` and
//! `meta.slices` become the animation's durations, tags and slices. The
//! output is an
//! [`assets_runtime::animation`] resource, as the `aseprite` processor's;
//! its canvas is the frames' source size, or 0×0 when they differ.
//!
//! The sheet's image is an asset of its own too, unless an `ignore` glob
//! leaves it out.

use std::fmt;

use assets_runtime::animation::write::{AnimationTables, SliceKeySpec, TagSpec, UserDataSpec};
use assets_runtime::animation::{Direction, SliceCenter};
use assets_runtime::format::KIND_ANIMATION;
use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};

use super::image::{decode_rgba8, default_max_dimension, reserve_decode};
use super::sprite_source::{SPRITE_SOURCES_KIND, SPRITES_LABEL, SpriteSource};
use super::{Context, ProcessError, Processor};

/// Cuts a sprite sheet back into its frames.
#[derive(Debug, Clone, Copy)]
pub struct Sheet;

/// Settings of the `sheet` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SheetSettings {
    /// Cut each frame's fully transparent borders.
    #[serde(default = "super::text::yes")]
    pub trim: bool,
    /// Largest accepted width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
}

impl Processor for Sheet {
    type Settings = SheetSettings;

    fn name(&self) -> &str {
        "sheet"
    }

    fn version(&self) -> u32 {
        // 2: `meta.slices` read; 3: tags' and slices' `color` and `data`;
        // 4: frames past 1 MiB of pixels compressed in pieces, joined.
        4
    }

    fn packs_into_atlas(&self) -> bool {
        true
    }

    fn process(&self, ctx: &mut Context<'_>, settings: SheetSettings) -> Result<(), ProcessError> {
        let json = ctx.source()?;
        let sheet: SheetJson = serde_json::from_slice(&json).map_err(|e| {
            ProcessError::msg(format!(
                "not a sprite sheet's JSON (Aseprite or TexturePacker, hash or array): {e}"
            ))
        })?;
        let image_name = (sheet.meta.image.as_deref())
            .ok_or_else(|| ProcessError::msg("`meta.image` does not name the sheet's image"))?;
        let image_path = ctx.asset().sibling(image_name)?;
        let bytes = ctx.read(image_path.as_str())?;
        reserve_decode(ctx, &bytes, settings.max_dimension, 2)?;
        let image = decode_rgba8(&bytes, settings.max_dimension)
            .map_err(|e| ProcessError::msg(format!("its image `{image_path}`: {e}")))?;
        // The largest frame's canvas, and its trimmed copy.
        let largest = (sheet.frames.0.iter())
            .filter_map(|(_, f)| f.source_size)
            .map(|s| u64::from(s.w) * u64::from(s.h) * 4 * 2)
            .max()
            .unwrap_or(0);
        if largest >= 16 << 20 {
            ctx.reserve_memory(largest, "the sheet's largest frame")?;
        }
        let (tables, sprites) = cut(&sheet, &image, &settings)?;
        ctx.emit(KIND_ANIMATION, tables.encode())?;
        ctx.emit_labeled(
            SPRITES_LABEL,
            SPRITE_SOURCES_KIND,
            SpriteSource::encode_list(&sprites),
        )
    }
}

/// The frames of `sheet` cut from `image`, and the animation's tables.
fn cut(
    sheet: &SheetJson,
    image: &image::RgbaImage,
    settings: &SheetSettings,
) -> Result<(AnimationTables, Vec<SpriteSource>), ProcessError> {
    let frames = &sheet.frames.0;
    if frames.is_empty() {
        return Err(ProcessError::msg("the sheet lists no frames"));
    }
    let mut sprites = Vec::with_capacity(frames.len());
    let mut tables = AnimationTables::default();
    for (name, f) in frames {
        let source = f.source_size.unwrap_or(Size {
            w: f.frame.w,
            h: f.frame.h,
        });
        let placed = f.sprite_source_size.unwrap_or(Rect {
            x: 0,
            y: 0,
            w: f.frame.w,
            h: f.frame.h,
        });
        if source.w.max(source.h) > settings.max_dimension {
            return Err(ProcessError::msg(format!(
                "frame `{name}` is {}x{}, over `max-dimension` ({})",
                source.w, source.h, settings.max_dimension
            )));
        }
        // The region the frame takes in the sheet: turned, it is as wide
        // as the frame is tall.
        let (w, h) = if f.rotated {
            (f.frame.h, f.frame.w)
        } else {
            (f.frame.w, f.frame.h)
        };
        let inside = |at: u32, len: u32, total: u32| at.checked_add(len).is_some_and(|e| e <= total);
        if !inside(f.frame.x, w, image.width()) || !inside(f.frame.y, h, image.height()) {
            return Err(ProcessError::msg(format!(
                "frame `{name}` at {},{} {w}x{h} lies outside the {}x{} image",
                f.frame.x,
                f.frame.y,
                image.width(),
                image.height()
            )));
        }
        if (placed.w, placed.h) != (f.frame.w, f.frame.h)
            || !inside(placed.x, placed.w, source.w)
            || !inside(placed.y, placed.h, source.h)
        {
            return Err(ProcessError::msg(format!(
                "frame `{name}`: its `spriteSourceSize` ({},{} {}x{}) does not fit its `frame` \
                 size inside its `sourceSize` ({}x{})",
                placed.x, placed.y, placed.w, placed.h, source.w, source.h
            )));
        }
        let region = image::imageops::crop_imm(image, f.frame.x, f.frame.y, w, h).to_image();
        let region = if f.rotated {
            image::imageops::rotate270(&region)
        } else {
            region
        };
        let mut canvas = image::RgbaImage::new(source.w, source.h);
        image::imageops::replace(&mut canvas, &region, i64::from(placed.x), i64::from(placed.y));
        sprites.push(SpriteSource::new(canvas, settings.trim));
        tables.durations.push(f.duration.unwrap_or(0));
        tables.names.push(name.clone());
    }
    let first = (sprites[0].source_width, sprites[0].source_height);
    let same = (sprites.iter()).all(|s| (s.source_width, s.source_height) == first);
    tables.canvas = if same { first } else { (0, 0) };
    for tag in &sheet.meta.frame_tags {
        tables.tags.push(tag.spec(frames.len())?);
    }
    for slice in &sheet.meta.slices {
        let what = format!("slice `{}`", slice.name);
        let user_data = user_data(&what, &slice.color, &slice.data)?;
        let keys = (slice.keys.iter()).map(|k| SliceKeySpec {
            name: slice.name.clone(),
            from: k.frame,
            bounds: (k.bounds.x, k.bounds.y, k.bounds.w, k.bounds.h),
            center: k.center.map(|c| SliceCenter {
                x: c.x,
                y: c.y,
                width: c.w,
                height: c.h,
            }),
            pivot: k.pivot.map(|p| (p.x, p.y)),
            user_data: user_data.clone(),
        });
        super::slices::push(keys.collect(), frames.len(), &mut tables.slices)?;
    }
    Ok((tables, sprites))
}

/// The JSON both exporters write (the fields read; others are ignored).
#[derive(Debug, Deserialize)]
struct SheetJson {
    frames: Frames,
    meta: Meta,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    image: Option<String>,
    #[serde(default)]
    frame_tags: Vec<FrameTag>,
    #[serde(default)]
    slices: Vec<SliceJson>,
}

/// A slice of Aseprite's `meta.slices`: its name, keys and user data.
#[derive(Debug, Deserialize)]
struct SliceJson {
    name: String,
    keys: Vec<SliceKeyJson>,
    color: Option<String>,
    data: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SliceKeyJson {
    frame: u32,
    bounds: SignedRect,
    center: Option<SignedRect>,
    pivot: Option<Point>,
}

/// A rectangle whose corner may lie off the canvas (a slice's bounds; a
/// centre, which the check keeps inside them).
#[derive(Debug, Clone, Copy, Deserialize)]
struct SignedRect {
    x: i32,
    y: i32,
    w: u32,
    h: u32,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameJson {
    /// Its name, in the array form.
    filename: Option<String>,
    frame: Rect,
    #[serde(default)]
    rotated: bool,
    sprite_source_size: Option<Rect>,
    source_size: Option<Size>,
    duration: Option<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct Rect {
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct Size {
    w: u32,
    h: u32,
}

#[derive(Debug, Deserialize)]
struct FrameTag {
    name: String,
    from: u32,
    to: u32,
    #[serde(default)]
    direction: Option<String>,
    /// Aseprite writes the count as a string (`"3"`), and only when set.
    #[serde(default)]
    repeat: Option<serde_json::Value>,
    /// Its user data's colour, `"#rrggbbaa"` (Aseprite 1.3).
    color: Option<String>,
    /// Its user data's text.
    data: Option<String>,
}

impl FrameTag {
    fn spec(&self, frames: usize) -> Result<TagSpec, ProcessError> {
        let name = &self.name;
        let direction = match self.direction.as_deref().unwrap_or("forward") {
            "forward" => Direction::Forward,
            "reverse" => Direction::Reverse,
            "pingpong" => Direction::PingPong,
            "pingpong_reverse" => Direction::PingPongReverse,
            other => {
                return Err(ProcessError::msg(format!(
                    "tag `{name}` has direction `{other}`; Aseprite writes `forward`, \
                     `reverse`, `pingpong` or `pingpong_reverse`"
                )));
            }
        };
        let repeat = match &self.repeat {
            None => Some(0),
            Some(serde_json::Value::String(s)) => s.parse().ok(),
            Some(serde_json::Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Some(_) => None,
        }
        .ok_or_else(|| {
            ProcessError::msg(format!("tag `{name}` has a `repeat` that is not a count"))
        })?;
        if self.from > self.to || self.to as usize >= frames {
            return Err(ProcessError::msg(format!(
                "tag `{name}` runs from frame {} to {}, outside the sheet's {frames} frames",
                self.from, self.to
            )));
        }
        Ok(TagSpec {
            name: name.clone(),
            from: self.from,
            to: self.to,
            direction,
            repeat,
            user_data: user_data(&format!("tag `{name}`"), &self.color, &self.data)?,
        })
    }
}

/// A tag's or slice's user data from its JSON `color` (`"#rrggbbaa"`, or
/// `"#rrggbb"`, opaque) and `data`; `what` names it in the error.
fn user_data(
    what: &str,
    color: &Option<String>,
    data: &Option<String>,
) -> Result<UserDataSpec, ProcessError> {
    let color = match color.as_deref() {
        None => None,
        Some(hex) => {
            let digits = hex.strip_prefix('#').unwrap_or(hex);
            let byte = |i: usize| u8::from_str_radix(digits.get(2 * i..2 * i + 2)?, 16).ok();
            let rgba = match digits.len() {
                8 => [byte(0), byte(1), byte(2), byte(3)],
                6 => [byte(0), byte(1), byte(2), Some(255)],
                _ => [None; 4],
            };
            let rgba = rgba.into_iter().collect::<Option<Vec<u8>>>().ok_or_else(|| {
                ProcessError::msg(format!(
                    "{what} has colour `{hex}`; Aseprite writes `#rrggbbaa`"
                ))
            })?;
            Some([rgba[0], rgba[1], rgba[2], rgba[3]])
        }
    };
    Ok(UserDataSpec {
        text: data.clone(),
        color,
    })
}

/// The frames with their names, in the order the JSON lists them, from
/// either form: an object keyed by name (the hash form; its order is the
/// frames' order, which a sorted map would lose) or an array whose entries
/// carry a `filename`.
#[derive(Debug)]
struct Frames(Vec<(String, FrameJson)>);

impl<'de> Deserialize<'de> for Frames {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Frames, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = Frames;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("frames as an object keyed by name or an array")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Frames, A::Error> {
                let mut frames = Vec::new();
                while let Some((name, frame)) = map.next_entry::<String, FrameJson>()? {
                    frames.push((name, frame));
                }
                Ok(Frames(frames))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Frames, A::Error> {
                let mut frames = Vec::new();
                while let Some(frame) = seq.next_element::<FrameJson>()? {
                    let name = frame.filename.clone().unwrap_or_default();
                    frames.push((name, frame));
                }
                Ok(Frames(frames))
            }
        }
        deserializer.deserialize_any(Either)
    }
}
