//! `sprite`: decode an image once and cache it, trimmed, for its atlas.
//!
//! Settings (all optional; `atlas` is read by the planner, not by this processor):
//!
//! | key             | default  | meaning |
//! |-----------------|----------|---------|
//! | `atlas`         | `"main"` | the atlas the sprite is packed into |
//! | `trim`          | `true`   | cut fully transparent borders (the frame keeps the original size and offset) |
//! | `max-dimension` | `16384`  | width or height above this is an error |
//!
//! The output is a [`SpriteSource`], an
//! intermediate the atlas stage reads; the parcel gets the sprite's frame
//! from the atlas instead. See [`crate::unstable::atlas`].

use serde::Deserialize;

use super::image::{decode_rgba8, default_max_dimension, reserve_decode};
use super::sprite_source::{SPRITE_SOURCE_KIND, SpriteSource};
use super::{Context, ProcessError, Processor};

/// Decodes a sprite for an atlas.
#[derive(Debug, Clone, Copy)]
pub struct Sprite;

/// Settings of the `sprite` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SpriteSettings {
    /// Cut fully transparent borders.
    #[serde(default = "yes")]
    pub trim: bool,
    /// Largest accepted width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
}

fn yes() -> bool {
    true
}

impl Processor for Sprite {
    type Settings = SpriteSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "sprite"
    }

    fn version(&self) -> u32 {
        // 2: pixels cached LZ4-compressed; 3: LZ4 finds matches in sprites
        // under 64 KiB (a third of the bytes on flat-coloured art); 4: pixels
        // past 1 MiB compressed in pieces, joined (`lz4_pieces`)
        4
    }

    fn packs_into_atlas(&self) -> bool {
        true
    }

    fn process(&self, ctx: &mut Context<'_>, settings: SpriteSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        // The pixels, and their LZ4 block and cached bytes.
        reserve_decode(ctx, &bytes, settings.max_dimension, 3)?;
        let image = decode_rgba8(&bytes, settings.max_dimension)?;
        let sprite = SpriteSource::new(image, settings.trim);
        if settings.trim && sprite.width == 0 {
            ctx.warn(format!(
                "is fully transparent: trimmed, it takes no room in its atlas, and draws nothing ({}x{} empty)",
                sprite.source_width, sprite.source_height
            ));
        }
        ctx.emit(SPRITE_SOURCE_KIND, sprite.encode())
    }
}
