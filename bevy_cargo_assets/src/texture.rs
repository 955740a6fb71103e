//! [`ParcelTextureLoader`]: Bevy [`Image`]s in GPU formats from the
//! parcel's `texture` resources (KTX2 files the `texture` and `ktx2`
//! processors made or checked), with their whole mip chain, ready for the
//! GPU without decoding: BC1/3/4/5/7, ETC2 (RGB and RGBA), ASTC 4×4, 6×6
//! and 8×8, or RGBA8, sRGB or linear as the file says. A zstd-supercompressed
//! file's levels are decompressed here (the runtime's pure-Rust zstd), so
//! `bevy_image`'s `zstd` features are not needed for it.
//!
//! Bevy's own KTX2 loader needs `bevy_image`'s `ktx2` feature and takes the
//! file by extension; a parcel's texture keeps its source's name
//! (`textures/ground.png`), so the reader names this loader in the meta it
//! supplies instead.

use assets_runtime::TextureFormat as Parcel;
use assets_runtime::texture::Texture;
use bevy_asset::io::Reader;
use bevy_asset::meta::{AssetAction, AssetMeta, AssetMetaDyn};
use bevy_asset::{AssetLoader, LoadContext, RenderAssetUsages};
use bevy_image::Image;
use bevy_reflect::TypePath;
use serde::{Deserialize, Serialize};
use wgpu_types::{AstcBlock, AstcChannel, Extent3d, TextureDimension, TextureFormat};

/// Loads a parcel `texture` resource as a Bevy [`Image`] in its GPU format.
#[derive(Debug, Default, Clone, Copy, TypePath)]
pub struct ParcelTextureLoader;

/// How [`ParcelTextureLoader`] makes the image.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct ParcelTextureSettings {
    /// Where the image is used (main world, render world).
    pub asset_usage: RenderAssetUsages,
}

/// Why a parcel texture could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParcelTextureError {
    /// Reading the bytes failed.
    #[error("could not read the texture: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a texture the runtime reads.
    #[error("not a parcel texture: {0}")]
    NotATexture(String),
}

/// The wgpu format of a parcel texture format.
pub fn gpu_format(format: Parcel) -> Option<TextureFormat> {
    let astc = |block, srgb| TextureFormat::Astc {
        block,
        channel: if srgb {
            AstcChannel::UnormSrgb
        } else {
            AstcChannel::Unorm
        },
    };
    Some(match format {
        Parcel::Rgba8Unorm => TextureFormat::Rgba8Unorm,
        Parcel::Rgba8UnormSrgb => TextureFormat::Rgba8UnormSrgb,
        Parcel::Bc1RgbaUnorm => TextureFormat::Bc1RgbaUnorm,
        Parcel::Bc1RgbaUnormSrgb => TextureFormat::Bc1RgbaUnormSrgb,
        Parcel::Bc3RgbaUnorm => TextureFormat::Bc3RgbaUnorm,
        Parcel::Bc3RgbaUnormSrgb => TextureFormat::Bc3RgbaUnormSrgb,
        Parcel::Bc4RUnorm => TextureFormat::Bc4RUnorm,
        Parcel::Bc5RgUnorm => TextureFormat::Bc5RgUnorm,
        Parcel::Bc7RgbaUnorm => TextureFormat::Bc7RgbaUnorm,
        Parcel::Bc7RgbaUnormSrgb => TextureFormat::Bc7RgbaUnormSrgb,
        Parcel::Etc2Rgb8Unorm => TextureFormat::Etc2Rgb8Unorm,
        Parcel::Etc2Rgb8UnormSrgb => TextureFormat::Etc2Rgb8UnormSrgb,
        Parcel::Etc2Rgba8Unorm => TextureFormat::Etc2Rgba8Unorm,
        Parcel::Etc2Rgba8UnormSrgb => TextureFormat::Etc2Rgba8UnormSrgb,
        Parcel::Astc4x4Unorm => astc(AstcBlock::B4x4, false),
        Parcel::Astc4x4UnormSrgb => astc(AstcBlock::B4x4, true),
        Parcel::Astc6x6Unorm => astc(AstcBlock::B6x6, false),
        Parcel::Astc6x6UnormSrgb => astc(AstcBlock::B6x6, true),
        Parcel::Astc8x8Unorm => astc(AstcBlock::B8x8, false),
        Parcel::Astc8x8UnormSrgb => astc(AstcBlock::B8x8, true),
        Parcel::Bc6hRgbUfloat => TextureFormat::Bc6hRgbUfloat,
        Parcel::Rgba16Float => TextureFormat::Rgba16Float,
        _ => return None,
    })
}

impl ParcelTextureLoader {
    /// The meta (Bevy's `.meta` format) that names this loader.
    pub fn meta() -> Vec<u8> {
        let action = AssetAction::Load {
            loader: ParcelTextureLoader::type_path().to_owned(),
            settings: ParcelTextureSettings::default(),
        };
        AssetMetaDyn::serialize(&AssetMeta::<ParcelTextureLoader, ()>::new(action))
    }

    /// The Bevy image of `bytes`, a `texture` resource: every level, level
    /// 0 first, as wgpu lays a mip chain out.
    pub fn image(
        bytes: &[u8],
        settings: &ParcelTextureSettings,
    ) -> Result<Image, ParcelTextureError> {
        let texture =
            Texture::check(bytes).map_err(|e| ParcelTextureError::NotATexture(e.to_string()))?;
        let format = gpu_format(texture.format).ok_or_else(|| {
            ParcelTextureError::NotATexture(format!("no wgpu format for {}", texture.format.name()))
        })?;
        let mut data = Vec::new();
        for i in 0..texture.levels {
            let level = texture.level(i).ok_or_else(|| {
                ParcelTextureError::NotATexture(format!(
                    "level {i} is missing, or its zstd frame is damaged"
                ))
            })?;
            data.extend_from_slice(&level);
        }
        let size = Extent3d {
            width: texture.width,
            height: texture.height,
            depth_or_array_layers: 1,
        };
        let mut image = Image::new(
            size,
            TextureDimension::D2,
            data,
            format,
            settings.asset_usage,
        );
        image.texture_descriptor.mip_level_count = texture.levels;
        Ok(image)
    }
}

impl AssetLoader for ParcelTextureLoader {
    type Asset = Image;
    type Settings = ParcelTextureSettings;
    type Error = ParcelTextureError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &ParcelTextureSettings,
        _: &mut LoadContext<'_>,
    ) -> Result<Image, ParcelTextureError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        ParcelTextureLoader::image(&bytes, settings)
    }
}
