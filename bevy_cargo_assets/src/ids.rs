//! Typed IDs to handles: the constants `include_parcel!` generates load
//! directly, so the compile-time check on asset names carries into Bevy
//! code.
//!
//! ```ignore
//! fn setup(assets: ParcelAssets, mut commands: Commands) {
//!     let hero: Handle<Image> = assets.sprite(main::sprites::HERO);   // a SpriteId
//!     let sky: Handle<Image> = assets.image(main::textures::SKY);     // an ImageId
//!     let level: Handle<MyLevel> = assets.load(main::levels::ONE);    // any kind, your loader
//! }
//! ```

use assets_runtime::typed::kind;
use assets_runtime::{IdOf, ResourceId};
use std::collections::HashMap;

use bevy_asset::{Asset, AssetPath, AssetServer, Assets, Handle};
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Res, ResMut, SystemParam};
use bevy_image::{Image, TextureAtlas, TextureAtlasLayout};
use bevy_math::{URect, UVec2};

/// A sprite as Bevy draws it from its atlas page
/// ([`ParcelAssets::atlas_sprite`]): `Sprite::from_atlas_image(image, atlas)`.
#[derive(Debug, Clone)]
pub struct AtlasSprite {
    /// The page.
    pub image: Handle<Image>,
    /// Its layout and this sprite's index in it.
    pub atlas: TextureAtlas,
    /// The sprite's frame: trim offsets and source size.
    pub frame: assets_runtime::SpriteFrame,
}

use crate::source::{AnimationSlice, AnimationTag, AtlasSlot, Parcels, TurnedSprite};

/// An animation as Bevy draws it ([`ParcelAssets::atlas_animation`]): each
/// frame an [`AtlasSprite`], with the durations and tags to play them.
#[derive(Debug, Clone)]
pub struct AtlasAnimation {
    /// Each frame, in order: `Sprite::from_atlas_image(f.image.clone(), f.atlas.clone())`.
    pub frames: Vec<AtlasSprite>,
    /// Each frame's duration in milliseconds, in order.
    pub durations_ms: Vec<u32>,
    /// The tags, as authored.
    pub tags: Vec<AnimationTag>,
    /// The slices' keys (hitboxes, attachment points, 9-slice borders),
    /// each slice's in frame order.
    pub slices: Vec<AnimationSlice>,
}

impl AtlasAnimation {
    /// The tag named `name`, if there is one.
    pub fn tag(&self, name: &str) -> Option<&AnimationTag> {
        self.tags.iter().find(|t| t.name == name)
    }

    /// The key the slice named `name` holds at `frame`: of its keys, the
    /// last that starts at or before `frame` (as
    /// [`assets_runtime::Animation::slice`]).
    pub fn slice(&self, name: &str, frame: usize) -> Option<&AnimationSlice> {
        (self.slices.iter())
            .filter(|k| k.name == name && k.from as usize <= frame)
            .max_by_key(|k| k.from)
    }

    /// The frame `tag` (every frame, forward, forever, for `None`) shows
    /// `elapsed` after it started, as Aseprite plays it.
    pub fn frame_at(&self, tag: Option<&AnimationTag>, elapsed: std::time::Duration) -> usize {
        let duration = |f: u32| self.durations_ms.get(f as usize).copied().unwrap_or(0);
        let shown = match tag {
            Some(tag) => tag.as_tag().frame_at(elapsed, duration),
            None => assets_runtime::Tag {
                name: "",
                from: 0,
                to: self.frames.len().saturating_sub(1) as u32,
                direction: assets_runtime::Direction::Forward,
                repeat: 0,
                user_data: assets_runtime::UserData::default(),
            }
            .frame_at(elapsed, duration),
        };
        (shown as usize).min(self.frames.len().saturating_sub(1))
    }
}

/// The asset source the parcels are served as: `None` for Bevy's default
/// source, else a named one (`parcel://sprites/hero.png`).
#[derive(Debug, Clone, Resource)]
pub struct ServedAs(pub Option<&'static str>);

/// Loads parcel resources by their typed IDs. A system parameter.
#[derive(SystemParam)]
pub struct ParcelAssets<'w> {
    server: Res<'w, AssetServer>,
    parcels: Res<'w, Parcels>,
    served_as: Res<'w, ServedAs>,
    layouts: ResMut<'w, Assets<TextureAtlasLayout>>,
    pages: ResMut<'w, PageLayouts>,
}

/// One `TextureAtlasLayout` a page, made the first time one of its sprites
/// is asked for.
#[derive(Default, Resource)]
pub struct PageLayouts(HashMap<ResourceId, Handle<TextureAtlasLayout>>);

impl ParcelAssets<'_> {
    /// The Bevy asset path of resource `id`, if a served parcel holds it.
    pub fn path(&self, id: impl Into<ResourceId>) -> Option<AssetPath<'static>> {
        let name = self.parcels.name_of(id.into())?;
        let path = AssetPath::from(name);
        Some(match self.served_as.0 {
            Some(source) => path.with_source(source),
            None => path,
        })
    }

    /// Loads resource `id` as an `A` (through the loader its kind or
    /// extension picks). `None` if no served parcel holds it.
    pub fn load<A: Asset>(&self, id: impl Into<ResourceId>) -> Option<Handle<A>> {
        Some(self.server.load(self.path(id)?))
    }

    /// The image `id`.
    pub fn image(&self, id: impl IdOf<kind::Image>) -> Option<Handle<Image>> {
        self.load(id.resource_id())
    }

    /// The GPU texture `id`, in its block format, with its mips.
    pub fn texture(&self, id: impl IdOf<kind::Texture>) -> Option<Handle<Image>> {
        self.load(id.resource_id())
    }

    /// Sprite `id` as Bevy draws atlas sprites: its page's image, and its
    /// place in that page's `TextureAtlasLayout` (one a page), with its
    /// frame for the trim offsets. `None` if no served parcel holds it; an
    /// error for a sprite the atlas turned (see
    /// [`TurnedSprite`]).
    pub fn atlas_sprite(
        &mut self,
        id: impl IdOf<kind::Sprite>,
    ) -> Option<Result<AtlasSprite, TurnedSprite>> {
        let slot = match self.parcels.atlas_slot(id.resource_id())? {
            Ok(slot) => slot,
            Err(turned) => return Some(Err(turned)),
        };
        self.atlas_sprite_at(slot).map(Ok)
    }

    /// Animation `id` (an Aseprite file, a sprite sheet) as Bevy draws it:
    /// each frame's page and place in that page's `TextureAtlasLayout`, and
    /// the durations and tags to play it. `None` if no served parcel holds
    /// it; an error if the atlas turned one of its page's frames.
    pub fn atlas_animation(
        &mut self,
        id: impl IdOf<kind::Animation>,
    ) -> Option<Result<AtlasAnimation, TurnedSprite>> {
        let slots = match self.parcels.animation_slots(id.resource_id())? {
            Ok(slots) => slots,
            Err(turned) => return Some(Err(turned)),
        };
        let frames = (slots.slots.into_iter())
            .map(|slot| self.atlas_sprite_at(slot))
            .collect::<Option<Vec<_>>>()?;
        Some(Ok(AtlasAnimation {
            frames,
            durations_ms: slots.durations_ms,
            tags: slots.tags,
            slices: slots.slices,
        }))
    }

    /// The sprite at `slot`: its page's image and layout (one a page).
    fn atlas_sprite_at(&mut self, slot: AtlasSlot) -> Option<AtlasSprite> {
        let layouts = &mut self.layouts;
        let layout = (self.pages.0.entry(slot.page_id))
            .or_insert_with(|| {
                let mut layout =
                    TextureAtlasLayout::new_empty(UVec2::new(slot.size.0, slot.size.1));
                for [x, y, w, h] in &slot.rects {
                    layout.add_texture(URect::new(*x, *y, x + w, y + h));
                }
                layouts.add(layout)
            })
            .clone();
        let image = self.load_path(AssetPath::from(slot.page))?;
        Some(AtlasSprite {
            image,
            atlas: TextureAtlas {
                layout,
                index: slot.index,
            },
            frame: slot.frame,
        })
    }

    fn load_path<A: Asset>(&self, path: AssetPath<'static>) -> Option<Handle<A>> {
        Some(self.server.load(match self.served_as.0 {
            Some(source) => path.with_source(source),
            None => path,
        }))
    }

    /// The sprite `id`'s own pixels, cut from its atlas page.
    pub fn sprite(&self, id: impl IdOf<kind::Sprite>) -> Option<Handle<Image>> {
        self.load(id.resource_id())
    }
}
