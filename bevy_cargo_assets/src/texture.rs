//! [`ParcelTextureLoader`]: Bevy [`Image`]s in GPU formats from the
//! parcel's `texture` resources (KTX2 files the `texture` and `ktx2`
//! processors made or checked), with their whole mip chain, ready for the
//! GPU without decoding: BC1/3/4/5/7, ETC2 (RGB and RGBA), ASTC 4×4, 6×6
//! and 8×8, or RGBA8, sRGB or linear as the file says. A zstd-supercompressed
//! file's levels are decompressed here (the runtime's pure-Rust zstd), so
//! `bevy_image`'s `zstd` features are not needed for it.
//!
//! A UASTC texture (Basis Universal: `format = "uastc"`) is transcoded here,
//! level by level, to what the GPU takes, as Bevy's own KTX2 loader does:
//! ASTC 4×4 (losslessly), else BC7, else ETC2 RGBA, else RGBA8, by the
//! `CompressedImageFormatSupport` the renderer publishes (RGBA8 without
//! one). That needs this crate's `basis-universal` feature (Binomial's
//! transcoder, compiled from C++, the crate Bevy's own feature of that
//! name uses; it does not compile for wasm32, bevyengine/bevy#17657, so
//! not for a web build); without it such a texture is an error that says
//! so.
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
use bevy_image::{CompressedImageFormats, Image};
use bevy_reflect::TypePath;
use serde::{Deserialize, Serialize};
use wgpu_types::{AstcBlock, AstcChannel, Extent3d, TextureDimension, TextureFormat};

/// Loads a parcel `texture` resource as a Bevy [`Image`] in its GPU format.
#[derive(Debug, Clone, Copy, TypePath)]
pub struct ParcelTextureLoader {
    /// The block formats the GPU takes: what UASTC is transcoded to.
    formats: CompressedImageFormats,
}

impl Default for ParcelTextureLoader {
    /// A loader for no GPU in particular: UASTC becomes RGBA8.
    fn default() -> Self {
        ParcelTextureLoader::new(CompressedImageFormats::NONE)
    }
}

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
    /// A UASTC texture, in a build without the `basis-universal` feature,
    /// or whose level the transcoder refused.
    #[error("{0}")]
    Transcoding(String),
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
    /// A loader for a GPU that takes `formats` (Bevy's renderer publishes
    /// them as `CompressedImageFormatSupport`; the plugin reads that).
    pub fn new(formats: CompressedImageFormats) -> Self {
        ParcelTextureLoader { formats }
    }

    /// The meta (Bevy's `.meta` format) that names this loader.
    pub fn meta() -> Vec<u8> {
        let action = AssetAction::Load {
            loader: ParcelTextureLoader::type_path().to_owned(),
            settings: ParcelTextureSettings::default(),
        };
        AssetMetaDyn::serialize(&AssetMeta::<ParcelTextureLoader, ()>::new(action))
    }

    /// The Bevy image of `bytes`, a `texture` resource: every level, level
    /// 0 first, as wgpu lays a mip chain out; a UASTC one transcoded for
    /// this loader's GPU.
    pub fn image(
        &self,
        bytes: &[u8],
        settings: &ParcelTextureSettings,
    ) -> Result<Image, ParcelTextureError> {
        let texture =
            Texture::check(bytes).map_err(|e| ParcelTextureError::NotATexture(e.to_string()))?;
        let mut levels = Vec::with_capacity(texture.levels as usize);
        for i in 0..texture.levels {
            levels.push(texture.level(i).ok_or_else(|| {
                ParcelTextureError::NotATexture(format!(
                    "level {i} is missing, or its zstd frame is damaged"
                ))
            })?);
        }
        let (format, data) = if texture.format.needs_transcoding() {
            transcode(&texture, &levels, self.formats)?
        } else {
            let format = gpu_format(texture.format).ok_or_else(|| {
                ParcelTextureError::NotATexture(format!(
                    "no wgpu format for {}",
                    texture.format.name()
                ))
            })?;
            (format, levels.concat())
        };
        let size = Extent3d {
            width: texture.width,
            height: texture.height,
            depth_or_array_layers: 1,
        };
        // Not `Image::new`, which asserts that an uncompressed format's
        // data is level 0 alone (an `rgba8` texture has its mips too).
        let mut image = Image::new_uninit(size, TextureDimension::D2, format, settings.asset_usage);
        image.data = Some(data);
        image.texture_descriptor.mip_level_count = texture.levels;
        Ok(image)
    }
}

/// The levels of a UASTC `texture` transcoded, one after another, to the
/// best format of `formats` (see the module docs), and that format.
#[cfg(feature = "basis-universal")]
fn transcode(
    texture: &Texture<'_>,
    levels: &[std::borrow::Cow<'_, [u8]>],
    formats: CompressedImageFormats,
) -> Result<(TextureFormat, Vec<u8>), ParcelTextureError> {
    use basis_universal::{
        DecodeFlags, LowLevelUastcTranscoder, SliceParametersUastc, TranscoderBlockFormat as To,
    };
    // The parcel format each target is, so that `gpu_format` says its
    // wgpu format, sRGB as the texture is.
    let (to, linear, srgb) = if formats.contains(CompressedImageFormats::ASTC_LDR) {
        (To::ASTC_4x4, Parcel::Astc4x4Unorm, Parcel::Astc4x4UnormSrgb)
    } else if formats.contains(CompressedImageFormats::BC) {
        (To::BC7, Parcel::Bc7RgbaUnorm, Parcel::Bc7RgbaUnormSrgb)
    } else if formats.contains(CompressedImageFormats::ETC2) {
        (
            To::ETC2_RGBA,
            Parcel::Etc2Rgba8Unorm,
            Parcel::Etc2Rgba8UnormSrgb,
        )
    } else {
        (To::RGBA32, Parcel::Rgba8Unorm, Parcel::Rgba8UnormSrgb)
    };
    let target = if texture.format.is_srgb() {
        srgb
    } else {
        linear
    };
    let format = gpu_format(target).expect("every transcoding target has a wgpu format");
    let transcoder = LowLevelUastcTranscoder::new();
    let mut data = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        let (width, height) = texture.level_size(i as u32);
        let failed = || {
            ParcelTextureError::Transcoding(format!(
                "level {i} of a UASTC texture did not transcode to {to:?}"
            ))
        };
        if to == To::RGBA32 {
            data.extend_from_slice(&rgba8::transcode(level, width, height).ok_or_else(failed)?);
            continue;
        }
        let slice = SliceParametersUastc {
            num_blocks_x: width.div_ceil(4),
            num_blocks_y: height.div_ceil(4),
            has_alpha: true,
            original_width: width,
            original_height: height,
        };
        let out = transcoder
            .transcode_slice(level, slice, DecodeFlags::HIGH_QUALITY, to)
            .map_err(|_| failed())?;
        data.extend_from_slice(&out);
    }
    Ok((format, data))
}

/// UASTC to RGBA8 pixels, for a GPU that takes no block format.
///
/// The `basis-universal` crate's `transcode_slice` (0.3.1) passes the
/// transcoder a row pitch in blocks where an uncompressed target needs
/// pixels, so the C++ writes past its buffer (a crash, seen here); this
/// calls the transcoder with the pitch in pixels, as its header says.
#[cfg(feature = "basis-universal")]
#[allow(unsafe_code)]
mod rgba8 {
    use basis_universal::{DecodeFlags, TranscoderBlockFormat, sys};

    /// The `width × height` RGBA8 pixels of a level's UASTC `blocks`;
    /// `None` if they are too few or the transcoder fails.
    pub fn transcode(blocks: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
        let (across, down) = (width.div_ceil(4), height.div_ceil(4));
        let need = u64::from(across) * u64::from(down) * 16;
        if (blocks.len() as u64) < need {
            return None;
        }
        let mut out = vec![0u8; width as usize * height as usize * 4];
        basis_universal::transcoder_init();
        // SAFETY: the transcoder is made, used and deleted here; it reads
        // `across × down` 16-byte blocks of `blocks` (checked above) and
        // writes `height` rows of `width` 4-byte pixels (the pitch and row
        // count given) into `out`, which holds exactly that; no state.
        let ok = unsafe {
            let transcoder = sys::low_level_uastc_transcoder_new();
            let ok = sys::low_level_uastc_transcoder_transcode_slice(
                transcoder,
                out.as_mut_ptr().cast(),
                across,
                down,
                blocks.as_ptr(),
                blocks.len() as u32,
                TranscoderBlockFormat::RGBA32.into(),
                4,
                false,
                true,
                width,
                height,
                width,
                std::ptr::null_mut(),
                height,
                0,
                3,
                DecodeFlags::HIGH_QUALITY.bits(),
            );
            sys::low_level_uastc_transcoder_delete(transcoder);
            ok
        };
        ok.then_some(out)
    }
}

#[cfg(not(feature = "basis-universal"))]
fn transcode(
    texture: &Texture<'_>,
    _: &[std::borrow::Cow<'_, [u8]>],
    _: CompressedImageFormats,
) -> Result<(TextureFormat, Vec<u8>), ParcelTextureError> {
    Err(ParcelTextureError::Transcoding(format!(
        "a {} texture is transcoded for the GPU when loaded, which needs bevy_cargo_assets's \
         `basis-universal` feature (Basis Universal's transcoder)",
        texture.format.name()
    )))
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
        self.image(&bytes, settings)
    }
}
