//! The atlas step: packs every sprite of one atlas into pages.
//!
//! It is an ordinary step of the scheduler with a generated name,
//! `atlas:<name>`, planned after every asset, whose settings are the atlas's
//! settings plus the sorted list of its sprites. So:
//!
//! - adding or removing a sprite changes the step's key, and it reruns;
//! - each sprite is a dependency: a sprite whose cached pixels changed reruns
//!   the atlas, one touched but unchanged does not (early cutoff);
//! - the sprites are read back from the store, never decoded here, so a
//!   re-pack after one edit costs the packing and the page drawing only.
//!
//! Outputs: pages labelled `0`, `1`, … (kind `image`, resources
//! `atlas:<name>#0`…), and `frames` (kind [`FRAMES_KIND`]): one 72-byte
//! [`SpriteFrame`] per sprite, in the order of the sprite list. The parcel
//! stage gives each sprite its frame as a resource named by its own path.

use assets_runtime::ResourceId;
use assets_runtime::sprite::SpriteFrame;
use serde::Deserialize;

use super::compose::draw_page;
use super::layout::lay_out;
use super::maxrects::MaxRects;
use super::pack::{Size, TooLarge};
use crate::manifest::{AtlasSpec, Encoding};
use crate::parallel;
use crate::processor::image::ImageResource;
use crate::processor::sprite_source::SpriteSource;
use crate::processor::{Context, DependencyOutputs, ProcessError, Processor};

/// Output kind of an atlas's frame table (an intermediate, never in a parcel).
pub const FRAMES_KIND: &str = "atlas-frames";
/// Label of the frame table output.
pub const FRAMES_LABEL: &str = "frames";

/// The settings of an atlas step, as the planner writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AtlasStepSettings {
    pub atlas: AtlasSpec,
    pub sprites: Vec<String>,
}

/// Packs the sprites of one atlas. Planned by the pipeline, never by rules.
#[derive(Debug, Clone, Copy)]
pub struct AtlasPacker;

impl Processor for AtlasPacker {
    fn name(&self) -> &str {
        "atlas"
    }

    fn version(&self) -> u32 {
        2 // 2: pages compressed by default (lz4 in dev, zstd in release)
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let settings: AtlasStepSettings = ctx.settings()?;
        let spec = &settings.atlas;
        let sprites = settings
            .sprites
            .iter()
            .map(|s| ctx.dependency(s))
            .collect::<Result<Vec<_>, _>>()?;
        let sources = read_sources(&sprites)?;
        let sizes: Vec<Size> = sources
            .iter()
            .map(|s| Size {
                w: s.width,
                h: s.height,
            })
            .collect();
        let name = ctx.asset().to_string();
        let layout = lay_out(&sizes, spec, &MaxRects::default())
            .map_err(|e| too_large(&settings, &sizes, &name, e))?;
        let refs: Vec<&SpriteSource> = sources.iter().collect();
        let indices: Vec<u32> = (0..layout.pages.len() as u32).collect();
        let encoding = spec
            .encoding
            .unwrap_or_else(|| Encoding::default_for(ctx.variant()));
        let pages = parallel::map(&indices, |&i| {
            let size = layout.pages[i as usize];
            let mut page = ImageResource::new(size.w, size.h);
            draw_page(&layout, i, &refs, spec.extrude, page.pixels_mut());
            page.finish(spec.premultiply, encoding)
        });
        for (i, page) in pages.into_iter().enumerate() {
            ctx.emit_labeled(&i.to_string(), assets_runtime::format::KIND_IMAGE, page?)?;
        }
        let mut table = Vec::with_capacity(sources.len() * assets_runtime::sprite::SPRITE_LEN);
        for (frame, source) in layout.frames.iter().zip(&sources) {
            let page = layout.pages[frame.page as usize];
            let (pw, ph) = (page.w as f32, page.h as f32);
            let record = SpriteFrame {
                page: ResourceId::of(&format!("{name}#{}", frame.page)),
                page_index: frame.page,
                x: frame.x,
                y: frame.y,
                w: frame.w,
                h: frame.h,
                rotated: frame.rotated,
                trim_x: source.trim_x,
                trim_y: source.trim_y,
                source_width: source.source_width,
                source_height: source.source_height,
                uv: [
                    frame.x as f32 / pw,
                    frame.y as f32 / ph,
                    (frame.x + frame.w) as f32 / pw,
                    (frame.y + frame.h) as f32 / ph,
                ],
            };
            table.extend_from_slice(&record.encode());
        }
        ctx.emit_labeled(FRAMES_LABEL, FRAMES_KIND, table)
    }
}

/// The error for sprites that fit no page: every one of them, so that one
/// build shows all there is to fix. `first` is the one the packer hit.
fn too_large(
    settings: &AtlasStepSettings,
    sizes: &[Size],
    name: &str,
    first: TooLarge,
) -> ProcessError {
    let spec = &settings.atlas;
    // Each sprite on its own tells whether it fits (only on this error path).
    let mut oversized: Vec<usize> = (0..sizes.len())
        .filter(|&i| lay_out(&sizes[i..=i], spec, &MaxRects::default()).is_err())
        .collect();
    if oversized.is_empty() {
        oversized.push(first.index);
    }
    let describe = |i: usize| {
        format!(
            "sprite `{}` is {}x{} pixels (after trimming)",
            settings.sprites[i], sizes[i].w, sizes[i].h
        )
    };
    let mut list: Vec<String> = oversized.iter().take(10).map(|&i| describe(i)).collect();
    if oversized.len() > 10 {
        list.push(format!("{} more", oversized.len() - 10));
    }
    let list = match list.as_slice() {
        [one] => format!("{one} and does not fit"),
        [rest @ .., last] => format!("{}, and {last}; none of them fits", rest.join(", ")),
        [] => unreachable!("at least one sprite is listed"),
    };
    let turned = if spec.rotate {
        ""
    } else {
        ", or set `rotate = true` if they fit turned"
    };
    ProcessError::msg(format!(
        "{list} a {}x{} page of `{name}`; \
         raise `max-size` in [package.metadata.assets.atlases.{}] (at most 16384){turned}, or make the sprite smaller",
        first.page.w,
        first.page.h,
        name.trim_start_matches("atlas:"),
    ))
}

/// Reads the sprites' cached pixels, on every core: the atlas step often
/// runs alone at the end of a build, and thousands of small reads are most of
/// its time after an edit.
fn read_sources(sprites: &[DependencyOutputs<'_>]) -> Result<Vec<SpriteSource>, ProcessError> {
    parallel::map(sprites, |d| SpriteSource::decode(&d.bytes("")?))
        .into_iter()
        .collect()
}
