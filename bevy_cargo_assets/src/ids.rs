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

use crate::source::Parcels;

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
    /// [`TurnedSprite`](crate::source::TurnedSprite)).
    pub fn atlas_sprite(
        &mut self,
        id: impl IdOf<kind::Sprite>,
    ) -> Option<Result<AtlasSprite, crate::source::TurnedSprite>> {
        let slot = match self.parcels.atlas_slot(id.resource_id())? {
            Ok(slot) => slot,
            Err(turned) => return Some(Err(turned)),
        };
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
        Some(Ok(AtlasSprite {
            image,
            atlas: TextureAtlas {
                layout,
                index: slot.index,
            },
            frame: slot.frame,
        }))
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
