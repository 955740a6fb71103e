//! `texture`: an image made GPU-ready: a mip chain, block-compressed, in a
//! KTX2 container (feature `textures`; `cargo assets` has it). The output
//! (kind `texture`) is read with `Parcel::texture`, format, size and each
//! level's bytes, ready to upload; any KTX2 tool reads it too.
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "textures/**/*.png"
//! processor = "texture"
//! format = "bc7"
//! platforms.mobile = { format = "etc2" }
//! platforms.web = { format = "rgba8" }
//! ```
//!
//! or, for every texture rule at once, on the platform:
//! `[package.metadata.assets.platforms.mobile]` with
//! `settings.texture = { format = "etc2" }`.
//!
//! Settings (all optional):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `format` | `"bc7"` | `"rgba8"`, `"bc1"` (opaque or 1-bit alpha, 4 bits a pixel), `"bc3"`, `"bc4"` (one channel), `"bc5"` (two channels: normal maps), `"bc7"` (best desktop quality), `"etc2"` (RGB, no alpha: mobile GPUs) |
//! | `color` | `"srgb"` | `"srgb"` for color, `"linear"` for data (masks, roughness); `bc4` and `bc5` are always linear |
//! | `normal-map` | `false` | tangent-space normals: linear, averaged as vectors and renormalized in the mips |
//! | `mipmaps` | `true` | the full chain down to 1×1 |
//! | `quality` | `"basic"` | `"fast"`, `"basic"` or `"slow"` (BC7 encoder effort; ETC2 has one) |
//! | `max-dimension` | `16384` | width or height above this is an error |
//!
//! Mips are filtered gamma-correct and alpha-aware ([`mips`]). ASTC is not
//! offered: the crates.io encoder this uses (`intel_tex_2`) leaves its
//! ASTC path unimplemented; ETC2 covers phones, `rgba8` the rest. Choosing
//! an sRGB format for `bc4`/`bc5`, or `normal-map` with `color = "srgb"`,
//! is an error that says why.

pub mod encode;
pub mod mips;

use assets_runtime::TextureFormat;
use serde::Deserialize;

use super::image::{decode_rgba8, default_max_dimension};
use super::{Context, ProcessError, Processor};
use crate::manifest::{Settings, SettingsError};
use mips::{Level, Texels};

/// Makes GPU textures.
#[derive(Debug, Clone, Copy)]
pub struct Texture;

/// The `format` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormatSetting {
    /// Uncompressed.
    Rgba8,
    /// BC1.
    Bc1,
    /// BC3.
    Bc3,
    /// BC4.
    Bc4,
    /// BC5.
    Bc5,
    /// BC7.
    Bc7,
    /// ETC2 RGB.
    Etc2,
}

/// The `color` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColorSetting {
    /// sRGB-encoded color.
    Srgb,
    /// Linear data.
    Linear,
}

/// Encoder effort for BC7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quality {
    /// Quickest.
    Fast,
    /// The default.
    Basic,
    /// Best.
    Slow,
}

/// Settings of the `texture` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TextureSettings {
    /// The GPU format.
    #[serde(default = "default_format")]
    pub format: FormatSetting,
    /// sRGB or linear.
    #[serde(default)]
    pub color: Option<ColorSetting>,
    /// Tangent-space normals.
    #[serde(default)]
    pub normal_map: bool,
    /// Make the mip chain.
    #[serde(default = "super::text::yes")]
    pub mipmaps: bool,
    /// Encoder effort.
    #[serde(default = "default_quality")]
    pub quality: Quality,
    /// Largest accepted width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
}

fn default_format() -> FormatSetting {
    FormatSetting::Bc7
}

fn default_quality() -> Quality {
    Quality::Basic
}

impl TextureSettings {
    /// The GPU format and how to filter, or why the settings do not fit.
    pub fn resolve(&self) -> Result<(TextureFormat, Texels), String> {
        use FormatSetting as S;
        use TextureFormat as F;
        let data_only = matches!(self.format, S::Bc4 | S::Bc5);
        let srgb = match (self.color, self.normal_map, data_only) {
            (Some(ColorSetting::Srgb), true, _) => {
                return Err(
                    "`normal-map = true` stores vectors, not colors: drop `color = \"srgb\"`"
                        .into(),
                );
            }
            (Some(ColorSetting::Srgb), _, true) => {
                return Err(format!(
                    "`{}` holds data channels, which have no sRGB form: use `color = \"linear\"`, or `bc7` for color",
                    self.format_name()
                ));
            }
            (Some(ColorSetting::Srgb), false, false) => true,
            (Some(ColorSetting::Linear), _, _) => false,
            (None, normal, data) => !normal && !data,
        };
        let format = match (self.format, srgb) {
            (S::Rgba8, false) => F::Rgba8Unorm,
            (S::Rgba8, true) => F::Rgba8UnormSrgb,
            (S::Bc1, false) => F::Bc1RgbaUnorm,
            (S::Bc1, true) => F::Bc1RgbaUnormSrgb,
            (S::Bc3, false) => F::Bc3RgbaUnorm,
            (S::Bc3, true) => F::Bc3RgbaUnormSrgb,
            (S::Bc4, _) => F::Bc4RUnorm,
            (S::Bc5, _) => F::Bc5RgUnorm,
            (S::Bc7, false) => F::Bc7RgbaUnorm,
            (S::Bc7, true) => F::Bc7RgbaUnormSrgb,
            (S::Etc2, false) => F::Etc2Rgb8Unorm,
            (S::Etc2, true) => F::Etc2Rgb8UnormSrgb,
        };
        let texels = match (self.normal_map, srgb) {
            (true, _) => Texels::Normals,
            (false, true) => Texels::Srgb,
            (false, false) => Texels::Linear,
        };
        Ok((format, texels))
    }

    fn format_name(&self) -> &'static str {
        match self.format {
            FormatSetting::Rgba8 => "rgba8",
            FormatSetting::Bc1 => "bc1",
            FormatSetting::Bc3 => "bc3",
            FormatSetting::Bc4 => "bc4",
            FormatSetting::Bc5 => "bc5",
            FormatSetting::Bc7 => "bc7",
            FormatSetting::Etc2 => "etc2",
        }
    }
}

impl Processor for Texture {
    fn name(&self) -> &str {
        "texture"
    }

    fn version(&self) -> u32 {
        1
    }

    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError> {
        let s: TextureSettings = settings.get()?;
        s.resolve().map(drop).map_err(|message| SettingsError {
            message,
            help: None,
        })
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let settings: TextureSettings = ctx.settings()?;
        let (format, texels) = settings.resolve().map_err(ProcessError::msg)?;
        let bytes = ctx.source()?;
        let image = decode_rgba8(&bytes, settings.max_dimension)?;
        let (width, height) = image.dimensions();
        let alpha = image.pixels().any(|p| p[3] != 255);
        let base = Level {
            width,
            height,
            pixels: image.into_raw(),
        };
        let chain = mips::chain(base, texels, settings.mipmaps);
        let levels = crate::parallel::map(&chain, |level| {
            encode::encode(level, format, settings.quality, alpha)
        });
        let file = assets_runtime::texture::write::ktx2(format, width, height, &levels);
        ctx.emit(assets_runtime::format::KIND_TEXTURE, file)
    }
}
