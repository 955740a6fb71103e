//! `aseprite`: an Aseprite file's frames packed into an atlas, with its
//! tags and frame durations as an animation (feature `aseprite`, in
//! `pipeline`; the default for `.aseprite` and `.ase`).
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "characters/*.aseprite"
//! atlas = "characters"
//! ```
//!
//! Settings (all optional; `atlas` is read by the planner, as for sprites):
//!
//! | key             | default  | meaning |
//! |-----------------|----------|---------|
//! | `atlas`         | `"main"` | the atlas the frames are packed into |
//! | `trim`          | `true`   | cut each frame's fully transparent borders (its frame keeps the canvas size and offset) |
//! | `max-dimension` | `16384`  | a canvas width or height above this is an error |
//!
//! Each frame is flattened as Aseprite flattens it when it exports: its
//! visible layers blended in order with their opacity and blend mode,
//! linked cels followed, tilemap layers drawn from their tilesets (the
//! `asefile` crate does the reading and blending). The frames are sprites
//! of the atlas like any other; the main output is the animation's tables
//! ([`assets_runtime::animation`]: the canvas size, each frame's duration,
//! the tags, the slices), which the atlas completes with each frame's
//! place, and `Parcel::animation` reads the result.
//!
//! Slices (a hitbox, an attachment point, a button's 9-slice borders) are
//! kept with every key: the frame it starts at, its bounds on the canvas,
//! its 9-slice centre and pivot if it has them, read through `asefile`.
//! A key past the last frame or a centre outside its bounds fails the
//! file by the slice's name. Their user data is not kept.
//!
//! Tags are read here, from the file's tags chunk, rather than through
//! `asefile`: its release takes only three directions and refuses a file
//! with a ping-pong-reverse tag (Aseprite 1.3), so that direction is read
//! here and shown to `asefile` as ping-pong, which it then ignores.

use std::borrow::Cow;

use assets_runtime::animation::{Direction, SliceCenter};
use assets_runtime::animation::write::{AnimationTables, SliceKeySpec, UserDataSpec};
use assets_runtime::format::KIND_ANIMATION;
use serde::Deserialize;

mod chunks;

use super::image::default_max_dimension;
use super::sprite_source::{SPRITE_SOURCES_KIND, SPRITES_LABEL, SpriteSource};
use super::{Context, ProcessError, Processor};

/// Packs an Aseprite file's frames and reads its tags.
#[derive(Debug, Clone, Copy)]
pub struct Aseprite;

/// Settings of the `aseprite` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AsepriteSettings {
    /// Cut each frame's fully transparent borders.
    #[serde(default = "super::text::yes")]
    pub trim: bool,
    /// Largest accepted canvas width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
}

impl Processor for Aseprite {
    type Settings = AsepriteSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "aseprite"
    }

    fn version(&self) -> u32 {
        // 2: slices read; 3: tags' and slices' user data; 4: frames past
        // 1 MiB of pixels compressed in pieces, joined (`lz4_pieces`).
        4
    }

    fn packs_into_atlas(&self) -> bool {
        true
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        settings: AsepriteSettings,
    ) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        let layout = chunks::walk(&bytes, settings.max_dimension)?;
        // What the reader inflates (and its RGBA copies), the frame being
        // flattened, and every frame kept trimmed with its LZ4 block.
        let canvas = u64::from(layout.width) * u64::from(layout.height) * 4;
        let held = layout.pixel_bytes * 4 + canvas + u64::from(layout.frames) * canvas * 2;
        if held >= 16 << 20 {
            let what = format!(
                "{} frames of {}x{}",
                layout.frames, layout.width, layout.height
            );
            ctx.reserve_memory(held, &what)?;
        }
        let (tables, sprites) = bake(&bytes, layout, settings.trim)?;
        if sprites.iter().all(|s| s.width == 0) {
            ctx.warn(format!(
                "every one of its {} frames is fully transparent: it draws nothing \
                 (are its layers hidden?)",
                sprites.len()
            ));
        }
        ctx.emit(KIND_ANIMATION, tables.encode())?;
        ctx.emit_labeled(
            SPRITES_LABEL,
            SPRITE_SOURCES_KIND,
            SpriteSource::encode_list(&sprites),
        )
    }
}

/// Reads the Aseprite file in `bytes` (untrusted) and flattens its frames:
/// its tables, and one sprite per frame (what the fuzz target runs).
#[cfg(fuzzing)]
pub(crate) fn read(
    bytes: &[u8],
    max_dimension: u32,
    trim: bool,
) -> Result<(AnimationTables, Vec<SpriteSource>), ProcessError> {
    bake(bytes, chunks::walk(bytes, max_dimension)?, trim)
}

/// Flattens the frames of the file in `bytes`, walked as `layout`.
fn bake(
    bytes: &[u8],
    layout: chunks::Layout,
    trim: bool,
) -> Result<(AnimationTables, Vec<SpriteSource>), ProcessError> {
    // The same file with its ping-pong-reverse tags shown as ping-pong.
    let mut readable = Cow::Borrowed(bytes);
    for &at in &layout.ping_pong_reverse {
        readable.to_mut()[at] = Direction::PingPong.code();
    }
    // The walk checked what the reader trusts; a panic it still finds is
    // this file's error, not the build's.
    let flattened = std::panic::catch_unwind(|| flatten(&readable, &layout, trim));
    let (durations, sprites, slices, tag_data) = flattened.unwrap_or_else(|panic| {
        Err(ProcessError::msg(format!(
            "the Aseprite reader (asefile) failed on it: {}; \
             the file is damaged, or uses something asefile does not read",
            super::panic_message(&panic)
        )))
    })?;
    // The walk read the tags (their directions as written); the reader,
    // their user data, in the same order.
    let mut tags = layout.tags;
    if tag_data.len() != tags.len() {
        return Err(ProcessError::msg(format!(
            "its tags chunk lists {} tags, and the reader found {}",
            tags.len(),
            tag_data.len()
        )));
    }
    for (tag, data) in tags.iter_mut().zip(tag_data) {
        tag.user_data = data;
    }
    let tables = AnimationTables {
        canvas: (layout.width, layout.height),
        durations,
        names: Vec::new(),
        tags,
        slices,
    };
    Ok((tables, sprites))
}

/// What [`flatten`] reads: each frame's duration and sprite, the slices'
/// keys, and each tag's user data.
type Flattened = (Vec<u32>, Vec<SpriteSource>, Vec<SliceKeySpec>, Vec<UserDataSpec>);

/// Each frame's duration, and its flattened pixels as a sprite (trimmed
/// when `trim`, so only one canvas is held at a time); and the slices.
fn flatten(bytes: &[u8], layout: &chunks::Layout, trim: bool) -> Result<Flattened, ProcessError> {
    let file = asefile::AsepriteFile::read(bytes)
        .map_err(|e| ProcessError::msg(format!("Aseprite file cannot be read: {e}")))?;
    let canvas = (layout.width as usize, layout.height as usize);
    if file.num_frames() != layout.frames || file.size() != canvas {
        return Err(ProcessError::msg(
            "its frames or canvas size disagree with its header",
        ));
    }
    let mut durations = Vec::with_capacity(layout.frames as usize);
    let mut sprites = Vec::with_capacity(layout.frames as usize);
    for f in 0..layout.frames {
        let frame = file.frame(f);
        durations.push(frame.duration());
        // `asefile` has its own `image` release: its buffer, as ours.
        let flat = frame.image();
        let (w, h) = flat.dimensions();
        let image = image::RgbaImage::from_raw(w, h, flat.into_raw())
            .ok_or_else(|| ProcessError::msg(format!("frame {f} has a malformed image")))?;
        sprites.push(SpriteSource::new(image, trim));
    }
    let tags = (0..file.num_tags()).map(|t| user_data(file.tag(t).user_data()));
    Ok((durations, sprites, slices(&file)?, tags.collect()))
}

/// User data as the animation holds it.
fn user_data(data: Option<&asefile::UserData>) -> UserDataSpec {
    UserDataSpec {
        text: data.and_then(|d| d.text.clone()),
        color: data.and_then(|d| d.color).map(|c| c.0),
    }
}

/// The file's slices' keys, each slice's in frame order, as the
/// animation resource holds them (checked by [`super::slices::push`]).
fn slices(file: &asefile::AsepriteFile) -> Result<Vec<SliceKeySpec>, ProcessError> {
    let mut keys = Vec::new();
    for slice in file.slices() {
        let own = (slice.keys.iter()).map(|key| SliceKeySpec {
            name: slice.name.clone(),
            from: key.from_frame,
            bounds: (key.origin.0, key.origin.1, key.size.0, key.size.1),
            center: key.slice9.as_ref().map(|c| SliceCenter {
                x: c.center_x,
                y: c.center_y,
                width: c.center_width,
                height: c.center_height,
            }),
            pivot: key.pivot,
            user_data: user_data(slice.user_data.as_ref()),
        });
        super::slices::push(own.collect(), file.num_frames() as usize, &mut keys)?;
    }
    Ok(keys)
}
