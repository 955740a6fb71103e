//! [`ParcelImageLoader`]: Bevy [`Image`]s from the parcel's `image`
//! resources (and its sprites, which the reader cuts from their pages into
//! such a resource; see [`crate::source`]).
//!
//! The rows are RGBA8, top row first, as the pipeline stored them: raw, or
//! LZ4 or zstd compressed (decompressed here by `assets-runtime`'s pure-Rust
//! decoders; a PNG-encoded image is refused, since the game can load that
//! PNG with Bevy's own loader). They become an `Rgba8UnormSrgb` image, or
//! `Rgba8Unorm` with `is_srgb: false` in the loader's settings (data
//! textures: masks, normals), as Bevy's own image loader does.

use assets_runtime::image::{IMAGE_HEADER_LEN, Image as ParcelImage, ImageHeader};
use bevy_asset::io::Reader;
use bevy_asset::meta::{AssetAction, AssetMeta, AssetMetaDyn};
use bevy_asset::{AssetLoader, LoadContext, RenderAssetUsages};
use bevy_image::Image;
use bevy_reflect::TypePath;
use serde::{Deserialize, Serialize};
use wgpu_types::{Extent3d, TextureDimension, TextureFormat};

/// Loads a parcel `image` resource as a Bevy [`Image`]. Chosen by the meta
/// [`ParcelReader`](crate::ParcelReader) supplies, not by extension.
#[derive(Debug, Default, Clone, Copy, TypePath)]
pub struct ParcelImageLoader;

/// How [`ParcelImageLoader`] makes the image.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ParcelImageSettings {
    /// sRGB colour (the default) or linear data.
    pub is_srgb: bool,
    /// Where the image is used (main world, render world).
    pub asset_usage: RenderAssetUsages,
}

impl Default for ParcelImageSettings {
    fn default() -> ParcelImageSettings {
        ParcelImageSettings {
            is_srgb: true,
            asset_usage: RenderAssetUsages::default(),
        }
    }
}

/// Why a parcel image could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParcelImageError {
    /// Reading the bytes failed.
    #[error("could not read the image: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not an `image` resource.
    #[error("not a parcel image resource (bad header)")]
    NotAnImage,
    /// The rows could not be had (a PNG-encoded image, a codec left out,
    /// or rows that do not decompress to the size).
    #[error("the image's pixels: {0}")]
    Pixels(assets_runtime::image::PixelsError),
}

impl ParcelImageLoader {
    /// The meta (Bevy's `.meta` format, written by Bevy's own serializer)
    /// that names this loader, with its default settings.
    pub fn meta() -> Vec<u8> {
        let action = AssetAction::Load {
            loader: ParcelImageLoader::type_path().to_owned(),
            settings: ParcelImageSettings::default(),
        };
        AssetMetaDyn::serialize(&AssetMeta::<ParcelImageLoader, ()>::new(action))
    }

    /// The Bevy image of `bytes`, an `image` resource.
    pub fn image(bytes: &[u8], settings: &ParcelImageSettings) -> Result<Image, ParcelImageError> {
        let header = ImageHeader::parse(bytes).ok_or(ParcelImageError::NotAnImage)?;
        let data = bytes
            .get(IMAGE_HEADER_LEN..)
            .ok_or(ParcelImageError::NotAnImage)?;
        let rows = (ParcelImage { header, data })
            .pixels()
            .map_err(ParcelImageError::Pixels)?;
        let format = if settings.is_srgb {
            TextureFormat::Rgba8UnormSrgb
        } else {
            TextureFormat::Rgba8Unorm
        };
        let size = Extent3d {
            width: header.width,
            height: header.height,
            depth_or_array_layers: 1,
        };
        Ok(Image::new(
            size,
            TextureDimension::D2,
            rows.into_owned(),
            format,
            settings.asset_usage,
        ))
    }
}

impl AssetLoader for ParcelImageLoader {
    type Asset = Image;
    type Settings = ParcelImageSettings;
    type Error = ParcelImageError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &ParcelImageSettings,
        _: &mut LoadContext<'_>,
    ) -> Result<Image, ParcelImageError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        ParcelImageLoader::image(&bytes, settings)
    }
}
