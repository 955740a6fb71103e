//! [`ParcelTileMapLoader`]: a parcel's `tilemap` resources (Tiled maps the
//! `tilemap` processor converted) as [`ParcelTileMap`] assets, with a
//! handle to every image the map draws with loaded as its dependency, so
//! the map counts as loaded once its tilesets are.
//!
//! The map is read with `assets_runtime`'s [`TileMap`]: tilesets, layers of
//! cells, objects and properties. How a game draws it (sprites per cell, a
//! tile map crate's chunks) is the game's; [`ParcelTileMap::image`] gives
//! the `Handle<Image>` of the image a tileset, a tile or an image layer
//! names. A game that reads maps with a Tiled plugin of its own
//! (`bevy_ecs_tiled`) keeps them as text instead (`output = "text"` on the
//! rule), and its plugin reads them from the parcel as from files.
//!
//! An LDtk project's levels are resources `World.ldtk#Level_0`, which is
//! what Bevy's asset paths call the sub-asset `Level_0` of `World.ldtk`. So
//! [`ParcelLdtkLoader`] loads a project that has levels in the parcel as a
//! [`ParcelLdtkProject`], each level one of its labelled [`ParcelTileMap`]s:
//! `asset_server.load::<ParcelTileMap>("World.ldtk#Level_0")` works as it
//! does for a glTF file's scenes. (A project kept as text, `output =
//! "text"`, has no levels and goes to Bevy's loader for `.ldtk`, a plugin's
//! such as `bevy_ecs_ldtk`.)

use assets_runtime::TileMap;

use crate::Parcels;
use bevy_asset::io::Reader;
use bevy_asset::meta::{AssetAction, AssetMeta, AssetMetaDyn};
use bevy_asset::{Asset, AssetLoader, AssetPath, Handle, LoadContext};
use bevy_image::Image;
use bevy_reflect::TypePath;

/// A tile map from a parcel, and handles to the images it names.
#[derive(Asset, TypePath, Debug)]
pub struct ParcelTileMap {
    #[dependency]
    images: Vec<Handle<Image>>,
    names: Vec<String>,
    map: TileMap<'static>,
}

impl ParcelTileMap {
    /// The map: its tilesets, layers, objects and properties.
    pub fn map(&self) -> &TileMap<'static> {
        &self.map
    }

    /// The image named `name` (as [`Tileset::image`], [`Tile::image`] or
    /// [`Layer::image`] name it), if the map names it.
    ///
    /// [`Tileset::image`]: assets_runtime::tilemap::Tileset::image
    /// [`Tile::image`]: assets_runtime::tilemap::Tile::image
    /// [`Layer::image`]: assets_runtime::tilemap::Layer::image
    pub fn image(&self, name: &str) -> Option<&Handle<Image>> {
        let i = self.names.iter().position(|n| n == name)?;
        self.images.get(i)
    }
}

/// Loads a parcel `tilemap` resource as a [`ParcelTileMap`].
#[derive(Debug, Default, Clone, Copy, TypePath)]
pub struct ParcelTileMapLoader;

/// Why a parcel tile map could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParcelTileMapError {
    /// Reading the bytes failed.
    #[error("could not read the tile map: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a tile map the runtime reads.
    #[error("not a parcel tile map (its layout is malformed)")]
    Malformed,
}

impl ParcelTileMapLoader {
    /// The meta that names this loader.
    pub fn meta() -> Vec<u8> {
        let action = AssetAction::Load {
            loader: ParcelTileMapLoader::type_path().to_owned(),
            settings: (),
        };
        AssetMetaDyn::serialize(&AssetMeta::<ParcelTileMapLoader, ()>::new(action))
    }
}

/// Every image `map` names, once each, in the order it names them.
fn image_names(map: &TileMap<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    for tileset in map.tilesets() {
        add(tileset.image());
        for tile in tileset.tiles() {
            add(tile.image());
        }
    }
    for layer in map.layers() {
        add(layer.image());
    }
    names
}

/// A parcel tile map's bytes as a [`ParcelTileMap`], each image it names
/// loaded as a dependency through `load_context`.
fn tile_map(
    bytes: Vec<u8>,
    load_context: &mut LoadContext<'_>,
) -> Result<ParcelTileMap, ParcelTileMapError> {
    let map = TileMap::parse(bytes).ok_or(ParcelTileMapError::Malformed)?;
    let names = image_names(&map);
    // From the source the map came from (the default, or the name the
    // plugin serves its parcels as).
    let source = load_context.path().source().clone_owned();
    let images = (names.iter())
        .map(|name| load_context.load(AssetPath::from(name.clone()).with_source(source.clone())))
        .collect();
    Ok(ParcelTileMap { images, names, map })
}

impl AssetLoader for ParcelTileMapLoader {
    type Asset = ParcelTileMap;
    type Settings = ();
    type Error = ParcelTileMapError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<ParcelTileMap, ParcelTileMapError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        tile_map(bytes, load_context)
    }
}

/// An LDtk project from a parcel: its JSON as written, and its levels as
/// labelled [`ParcelTileMap`]s (`World.ldtk#Level_0`).
#[derive(Asset, TypePath, Debug)]
pub struct ParcelLdtkProject {
    /// The project file as LDtk wrote it.
    pub json: String,
    /// Each level's map, labelled by its identifier.
    #[dependency]
    pub levels: Vec<Handle<ParcelTileMap>>,
    /// The levels' identifiers, beside [`ParcelLdtkProject::levels`].
    pub identifiers: Vec<String>,
}

/// Loads an LDtk project that has levels in the parcels served, as a
/// [`ParcelLdtkProject`] with each level a labelled [`ParcelTileMap`].
#[derive(Clone, TypePath)]
pub struct ParcelLdtkLoader {
    parcels: Parcels,
}

impl ParcelLdtkLoader {
    /// A loader reading levels from `parcels` (the plugin's).
    pub fn new(parcels: Parcels) -> ParcelLdtkLoader {
        ParcelLdtkLoader { parcels }
    }

    /// The meta that names this loader.
    pub fn meta() -> Vec<u8> {
        let action = AssetAction::Load {
            loader: ParcelLdtkLoader::type_path().to_owned(),
            settings: (),
        };
        AssetMetaDyn::serialize(&AssetMeta::<ParcelLdtkLoader, ()>::new(action))
    }
}

impl AssetLoader for ParcelLdtkLoader {
    type Asset = ParcelLdtkProject;
    type Settings = ();
    type Error = ParcelTileMapError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<ParcelLdtkProject, ParcelTileMapError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let json = String::from_utf8(bytes).map_err(|_| ParcelTileMapError::Malformed)?;
        let project = crate::source::name_of(load_context.path().path());
        let (mut levels, mut identifiers) = (Vec::new(), Vec::new());
        for (label, bytes) in self.parcels.levels_of(&project) {
            let mut level = load_context.begin_labeled_asset();
            let map = tile_map(bytes, &mut level)?;
            let loaded = level.finish(map);
            levels.push(load_context.add_loaded_labeled_asset(label.clone(), loaded));
            identifiers.push(label);
        }
        Ok(ParcelLdtkProject {
            json,
            levels,
            identifiers,
        })
    }
}
