//! Bevy games load cargo-assets parcels.
//!
//! cargo-assets builds a game's content at `cargo build` time into parcels;
//! this crate serves them to Bevy's `AssetServer`, so that a game's
//! `asset_server.load("sprites/hero.png")` reads from a parcel with no other
//! change to its code:
//!
//! ```ignore
//! assets_runtime::include_parcel!("main");
//!
//! App::new()
//!     // Before DefaultPlugins: it replaces the default asset source.
//!     .add_plugins(CargoAssetsPlugin::embedded(&main::PARCEL))
//!     .add_plugins(DefaultPlugins)
//!     .run();
//! ```
//!
//! - [`source`]: the parcels ([`Parcels`]) and the [`ParcelReader`] over
//!   them: paths are resource names, folders are their folders, and no
//!   `.meta` file is ever looked for (the reader supplies the metas).
//! - [`image`]: [`ParcelImageLoader`], Bevy [`Image`](bevy_image::Image)s
//!   from parcel images, and from sprites cut from their atlas pages.
//! - [`texture`]: [`ParcelTextureLoader`], GPU-format `Image`s (BC, ETC2,
//!   ASTC) with their mips from the parcel's KTX2 textures.
//! - [`tilemap`]: [`ParcelTileMapLoader`], [`ParcelTileMap`] assets from
//!   the parcel's Tiled maps, their images loaded as dependencies;
//!   [`ParcelLdtkLoader`], an LDtk project's levels as its labelled maps.
//! - [`ids`]: [`ParcelAssets`], handles from `include_parcel!`'s typed
//!   constants.
//! - [`reload`]: [`ReloadWatcher`], hot reload from `cargo assets watch`.
//!
//! Resources Bevy's own loaders read (text, bytes, glTF models) are handed
//! to them as the parcel stores them; a model's buffers and textures are
//! resources of the parcel, found by the URIs the model names.
//!
//! Bevy versions: 0.20 (this crate depends on `bevy_app`, `bevy_asset`,
//! `bevy_ecs`, `bevy_image` and `bevy_reflect`, never on `bevy`).

pub mod ids;
pub mod image;
pub mod reload;
pub mod source;
pub mod texture;
pub mod tilemap;

use assets_runtime::StaticParcel;
use bevy_app::{App, Plugin};
use bevy_asset::io::{AssetSourceBuilder, AssetSourceId};
use bevy_asset::{AssetApp, Assets};

pub use ids::{AtlasAnimation, AtlasSprite, PageLayouts, ParcelAssets, ServedAs};
pub use image::{ParcelImageLoader, ParcelImageSettings};
pub use reload::ReloadWatcher;
pub use source::{OpenError, ParcelReader, Parcels};
pub use texture::{ParcelTextureLoader, ParcelTextureSettings};
pub use tilemap::{ParcelLdtkLoader, ParcelLdtkProject, ParcelTileMap, ParcelTileMapLoader};

/// Serves parcels to Bevy's asset server: as the default asset source (a
/// drop-in for loose files) or as a named one. Add it before `AssetPlugin`
/// (before `DefaultPlugins`), since asset sources are fixed when that builds.
pub struct CargoAssetsPlugin {
    parcels: Parcels,
    served_as: Option<&'static str>,
    reload_port: Option<u16>,
}

impl CargoAssetsPlugin {
    /// Serves the parcel `include_parcel!` embedded (`&main::PARCEL`) as the
    /// default source.
    pub fn embedded(parcel: &'static StaticParcel) -> CargoAssetsPlugin {
        let parcels = Parcels::default();
        parcels.add_static(parcel);
        CargoAssetsPlugin {
            parcels,
            served_as: None,
            reload_port: None,
        }
    }

    /// Serves the parcel in the file at `path` (`main::PATH` names the one
    /// the build script wrote) as the default source.
    pub fn file(path: impl Into<std::path::PathBuf>) -> Result<CargoAssetsPlugin, OpenError> {
        let parcels = Parcels::default();
        parcels.add_file(path)?;
        Ok(CargoAssetsPlugin {
            parcels,
            served_as: None,
            reload_port: None,
        })
    }

    /// Serves another embedded parcel too, searched after the ones before.
    pub fn with_embedded(self, parcel: &'static StaticParcel) -> CargoAssetsPlugin {
        self.parcels.add_static(parcel);
        self
    }

    /// Serves another parcel file too, searched after the ones before.
    pub fn with_file(
        self,
        path: impl Into<std::path::PathBuf>,
    ) -> Result<CargoAssetsPlugin, OpenError> {
        self.parcels.add_file(path)?;
        Ok(self)
    }

    /// Reloads what `cargo assets watch --port PORT` rebuilds (see
    /// [`reload`]). Bevy starts the watcher only when it watches for
    /// changes: `AssetPlugin { watch_for_changes_override: Some(true), .. }`.
    pub fn hot_reload(mut self, port: u16) -> CargoAssetsPlugin {
        self.reload_port = Some(port);
        self
    }

    /// Serves the parcels as the named source `name` (paths
    /// `name://sprites/hero.png`), leaving Bevy's default source as it is.
    pub fn as_source(mut self, name: &'static str) -> CargoAssetsPlugin {
        self.served_as = Some(name);
        self
    }
}

impl Plugin for CargoAssetsPlugin {
    fn build(&self, app: &mut App) {
        let parcels = self.parcels.clone();
        let mut source =
            AssetSourceBuilder::new(move || Box::new(ParcelReader::new(parcels.clone())));
        if let Some(port) = self.reload_port {
            let parcels = self.parcels.clone();
            source = source.with_watcher(move |sender| {
                let watcher = ReloadWatcher::start(port, parcels.clone(), sender)?;
                Some(Box::new(watcher))
            });
        }
        let id = match self.served_as {
            Some(name) => AssetSourceId::from(name),
            None => AssetSourceId::Default,
        };
        app.register_asset_source(id, source)
            .insert_resource(self.parcels.clone())
            .insert_resource(ServedAs(self.served_as));
    }

    fn finish(&self, app: &mut App) {
        // Loaders register once the asset server exists (after AssetPlugin).
        if !app.world().contains_resource::<Assets<bevy_image::Image>>() {
            app.init_asset::<bevy_image::Image>();
        }
        if !(app.world()).contains_resource::<Assets<bevy_image::TextureAtlasLayout>>() {
            app.init_asset::<bevy_image::TextureAtlasLayout>();
        }
        app.init_resource::<PageLayouts>();
        app.init_asset::<ParcelTileMap>()
            .init_asset::<ParcelLdtkProject>();
        let textures = ParcelTextureLoader::new(gpu_formats(app));
        app.register_asset_loader(ParcelImageLoader)
            .register_asset_loader(textures)
            .register_asset_loader(ParcelTileMapLoader)
            .register_asset_loader(ParcelLdtkLoader::new(self.parcels.clone()));
    }
}

/// The block formats the GPU takes, as Bevy's renderer publishes them
/// (`CompressedImageFormatSupport`, in its `finish`); none without a
/// renderer, or when this plugin finishes before it.
fn gpu_formats(app: &App) -> bevy_image::CompressedImageFormats {
    (app.world()
        .get_resource::<bevy_image::CompressedImageFormatSupport>())
    .map_or(bevy_image::CompressedImageFormats::NONE, |s| s.0)
}
