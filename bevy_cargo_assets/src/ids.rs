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
use bevy_asset::{Asset, AssetPath, AssetServer, Handle};
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Res, SystemParam};
use bevy_image::Image;

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
}

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

    /// The sprite `id`'s own pixels, cut from its atlas page.
    pub fn sprite(&self, id: impl IdOf<kind::Sprite>) -> Option<Handle<Image>> {
        self.load(id.resource_id())
    }
}
