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

use assets_runtime::TileMap;
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
        let map = TileMap::parse(bytes).ok_or(ParcelTileMapError::Malformed)?;
        let names = image_names(&map);
        // From the source the map came from (the default, or the name the
        // plugin serves its parcels as).
        let source = load_context.path().source().clone_owned();
        let images = (names.iter())
            .map(|name| {
                load_context.load(AssetPath::from(name.clone()).with_source(source.clone()))
            })
            .collect();
        Ok(ParcelTileMap { images, names, map })
    }
}
