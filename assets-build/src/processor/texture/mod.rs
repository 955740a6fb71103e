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
//! | `format` | `"bc7"` | `"uastc"` (Basis Universal: one file every native GPU takes, transcoded when loaded to ASTC, BC7, ETC2 or RGBA8; 8 bits a pixel, a little below BC7's quality; refused for `wasm32-*`, where a Rust game has no transcoder; feature `basis`), `"rgba8"`, `"bc1"` (opaque, or 1-bit alpha where the source has pixels under half alpha, 4 bits a pixel), `"bc3"`, `"bc4"` (one channel), `"bc5"` (two channels: normal maps), `"bc7"` (best desktop quality), `"etc2"` (RGB, no alpha: mobile GPUs), `"etc2-rgba"` (RGBA, 8 bits a pixel), `"astc-4x4"`, `"astc-6x6"`, `"astc-8x8"` (RGBA at 8, 3.56 or 2 bits a pixel: phones and Apple GPUs; feature `astc`) |
//! | `color` | `"srgb"` | `"srgb"` for color, `"linear"` for data (masks, roughness); `bc4` and `bc5` are always linear |
//! | `normal-map` | `false` | tangent-space normals: linear, averaged as vectors and renormalized in the mips |
//! | `mipmaps` | `true` | the full chain down to 1×1 |
//! | `quality` | `"fastest"` in dev builds, `"basic"` in release ([`Quality::default_for`]) | `"fastest"`, `"fast"`, `"basic"` or `"slow"` (BC7, BC6H, ASTC and UASTC encoder effort: Intel's BC7 `veryfast`, `fast`, `basic`, `slow` profiles, astcenc's `fastest`, `fast`, `medium`, `thorough` presets, basisu's UASTC levels 1, 1, 2, 3 (its level 0 loses up to 5 dB); BC6H has `veryfast`, and BC1 with 1-bit alpha texpresso's range fit, for the two quickest, its cluster fit otherwise; the other formats have one) |
//! | `max-dimension` | `16384` | width or height above this is an error |
//! | `allow-optional-format` | `false` | build a format not every GPU of the target supports (the game checks the adapter's features) |
//! | `max-size` | none | the largest width or height shipped (a platform's budget: `platforms.mobile = { max-size = 1024 }`): a larger image is halved with the mips' filter until it fits, its top levels dropped, as Unity's "Max Size" and Godot's size limit do |
//! | `block-fit` | `"scale"` | a size that is not whole blocks of the format (which WebGPU, wgpu and Bevy refuse): `"scale"` it up to the next whole blocks, filtered as the mips are ([`mips::scaled`]), or `"keep"` it, padded, with a warning (Vulkan, Direct3D 12 and Metal take it) |
//! | `uastc-rdo` | none | `uastc` only: Basis Universal's rate-distortion optimization at this lambda, `0.1` to `10` (`1.0` is a common choice): blocks zstd compresses far smaller, at some quality (BENCHMARKS.md, "KTX2 supercompression") |
//! | `supercompression` | `"none"` | `"zstd"`: each level one zstd frame (KTX2's scheme 2, as `toktx --zcmp` writes), for KTX2 files shipped or served as they are; the runtime and `bevy_cargo_assets` decompress a level when it is read, where a plain one is borrowed in place. Inside a parcel it saves 3–15% over the parcel's own compression and costs decompression when read (BENCHMARKS.md, "KTX2 supercompression"). Feature `zstd` |
//!
//! Mips are filtered gamma-correct and alpha-aware ([`mips`]). BC comes
//! from Intel's ISPC kernels (`intel_tex_2`, whose ASTC path is
//! unimplemented; BC1 with alpha from `texpresso`), ETC2 from etcpak
//! (`ctt-etcpak`), ASTC from ARM's reference encoder (`ctt-astcenc`, behind
//! the `astc` feature because it compiles C++; [`encode`]), UASTC from
//! Binomial's Basis Universal encoder (`basis-universal`, feature `basis`,
//! C++ too; `uastc`). Choosing
//! an sRGB format for `bc4`/`bc5`, or `normal-map` with `color = "srgb"`,
//! is an error that says why.
//!
//! **Formats a target's GPUs lack.** When the build knows its target triple
//! (a build script always does, `cargo assets build --target` too), a
//! format that not every GPU of that target supports is an error before
//! anything runs, at the `format` key, naming the format to build instead:
//! any block format on `wasm32-*` (WebGPU and WebGL2 make them all
//! optional), BC on Android, ETC2 and ASTC on Windows ([`GpuFamily`]). As Godot's
//! export refuses a platform whose texture compression was not imported.
//! Targets whose GPUs differ (Linux, macOS, iOS) are not checked.

pub mod encode;
pub mod hdr;
pub mod mips;
// The encoder crate's calls are `unsafe` (its C++ checks few parameters):
// the one module of assets-build that makes them, each with its reason.
#[cfg(feature = "basis")]
#[allow(unsafe_code)]
pub mod uastc;

use assets_runtime::TextureFormat;
use serde::Deserialize;

use super::image::{default_max_dimension, reserve_decode};
use super::{Context, ProcessError, Processor};
use crate::manifest::SettingsError;
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
    /// ETC2 RGBA (EAC alpha).
    #[serde(rename = "etc2-rgba")]
    Etc2Rgba,
    /// ASTC, 4×4 blocks.
    #[serde(rename = "astc-4x4")]
    Astc4x4,
    /// ASTC, 6×6 blocks.
    #[serde(rename = "astc-6x6")]
    Astc6x6,
    /// ASTC, 8×8 blocks.
    #[serde(rename = "astc-8x8")]
    Astc8x8,
    /// BC6H, unsigned: HDR RGB.
    Bc6h,
    /// Four half floats a pixel: HDR everywhere.
    Rgba16f,
    /// UASTC 4×4 (Basis Universal), transcoded for each GPU when loaded.
    Uastc,
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

/// Encoder effort for BC7, BC6H, ASTC, UASTC and BC1 with 1-bit alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quality {
    /// Quickest: the default outside `release` ([`Quality::default_for`]).
    Fastest,
    /// Quick.
    Fast,
    /// The default for `release`.
    Basic,
    /// Best.
    Slow,
}

impl Quality {
    /// The effort when a rule names none: `basic` for the `release`
    /// variant, what ships, and `fastest` for every other, where a build
    /// should be quick (as Unreal encodes textures fast in the editor and
    /// at full quality when cooking). The two are built apart anyway: a
    /// step's key holds its variant. On Bevy's textures `fastest` is four
    /// times quicker for BC7 and ASTC, 0.7 and 1.2 dB below (BENCHMARKS.md,
    /// "GPU textures").
    pub fn default_for(variant: &str) -> Quality {
        if crate::manifest::is_release(variant) {
            Quality::Basic
        } else {
            Quality::Fastest
        }
    }
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
    /// Encoder effort; unset, [`Quality::default_for`] the variant.
    #[serde(default)]
    pub quality: Option<Quality>,
    /// Largest accepted width or height.
    #[serde(default = "default_max_dimension")]
    pub max_dimension: u32,
    /// Build a format some GPUs of the target lack (see [`GpuFamily`]).
    #[serde(default)]
    pub allow_optional_format: bool,
    /// KTX2 supercompression of the levels.
    #[serde(default)]
    pub supercompression: Supercompression,
    /// UASTC's rate-distortion optimization, its lambda.
    #[serde(default)]
    pub uastc_rdo: Option<f32>,
    /// What to do with a size that is not whole blocks of the format.
    #[serde(default)]
    pub block_fit: BlockFit,
    /// The largest width or height shipped: a larger image is halved
    /// (its mips' filter) until it fits, as a platform's smaller budget.
    #[serde(default)]
    pub max_size: Option<u32>,
}

/// The `block-fit` setting: a texture whose size is not a whole number of
/// its format's blocks (a 745×745 PNG in BC7's 4×4), which WebGPU and so
/// wgpu and Bevy refuse to create.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockFit {
    /// Scaled up to the next whole blocks (748×748), bilinear, filtered as
    /// the mips are; UVs still cover the whole image.
    #[default]
    Scale,
    /// Kept at its size, the edge blocks padded, with a warning: for
    /// engines on Vulkan, Direct3D 12 or Metal, which take such sizes.
    Keep,
}

impl BlockFit {
    /// The size a `width × height` texture of `block`-sized blocks gets,
    /// or `None` when it keeps its own. A warning for `Keep` goes to
    /// `ctx`.
    fn fitted(
        self,
        ctx: &mut Context<'_>,
        (width, height): (u32, u32),
        block: u32,
        format: &str,
    ) -> Option<(u32, u32)> {
        if width % block == 0 && height % block == 0 {
            return None;
        }
        let fitted = (width.next_multiple_of(block), height.next_multiple_of(block));
        match self {
            BlockFit::Scale => Some(fitted),
            BlockFit::Keep => {
                // Encoded all the same (edge blocks padded), but refused
                // when loaded by wgpu, so by Bevy and on the web.
                ctx.warn(format!(
                    "a {width}x{height} `{format}` texture is not a whole number of its \
                     {block}x{block} blocks: WebGPU and wgpu (so Bevy) refuse to create it; \
                     resize or pad the image to {}x{}, or leave out `block-fit = \"keep\"` to \
                     have it scaled so",
                    fitted.0, fitted.1
                ));
                None
            }
        }
    }
}

/// The `supercompression` setting: how the KTX2 file stores its levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Supercompression {
    /// As they are, read in place.
    #[default]
    None,
    /// Each one a zstd frame at [`SUPERCOMPRESSION_ZSTD_LEVEL`].
    Zstd,
}

/// The zstd level of supercompressed levels: see BENCHMARKS.md, "KTX2
/// supercompression", for sizes and times against other levels.
pub const SUPERCOMPRESSION_ZSTD_LEVEL: i32 = 19;

/// The KTX2 file of `levels` (level 0 first), supercompressed as asked.
fn ktx2_file(
    format: TextureFormat,
    width: u32,
    height: u32,
    levels: &[Vec<u8>],
    supercompression: Supercompression,
) -> Result<Vec<u8>, ProcessError> {
    use assets_runtime::texture::write;
    match supercompression {
        Supercompression::None => Ok(write::ktx2(format, width, height, levels)),
        Supercompression::Zstd => {
            write::ktx2_zstd(format, width, height, levels, SUPERCOMPRESSION_ZSTD_LEVEL)
                .ok_or_else(|| ProcessError::msg(NEEDS_ZSTD))
        }
    }
}

/// Why zstd supercompression cannot be built here.
const NEEDS_ZSTD: &str =
    "`supercompression = \"zstd\"` needs assets-build's `zstd` feature (`cargo assets` and the `pipeline` feature have it)";

/// The GPUs a target triple's builds run on, where what they all support
/// is clear-cut. Other targets (Linux, macOS, iOS) are not checked: their
/// GPUs differ in what they take (Apple silicon takes BC and ETC2, Intel
/// Macs only BC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuFamily {
    /// `wasm32-*`: WebGPU and WebGL2 guarantee no block-compressed format.
    Web,
    /// `*-android*`: OpenGL ES 3 and Vulkan phones guarantee ETC2, and
    /// take ASTC; most have no BC.
    Android,
    /// `*-windows-*`: Direct3D has no ETC2 or ASTC, nor do most desktop
    /// GPUs.
    Windows,
}

impl GpuFamily {
    /// The family of `target`, if it is one of the clear-cut ones.
    pub fn of(target: &str) -> Option<GpuFamily> {
        if target.starts_with("wasm32-") {
            Some(GpuFamily::Web)
        } else if target.contains("-android") {
            Some(GpuFamily::Android)
        } else if target.contains("-windows") {
            Some(GpuFamily::Windows)
        } else {
            None
        }
    }

    /// Why these GPUs cannot all take `format`, and the format to build
    /// instead; `None` if they all take it.
    pub fn lacks(self, format: FormatSetting) -> Option<(&'static str, &'static str)> {
        use FormatSetting as S;
        match (self, format) {
            (_, S::Rgba8) => None,
            // The GPU takes what it is transcoded to when loaded, but a
            // Rust game has no transcoder that compiles for the web.
            (GpuFamily::Web, S::Uastc) => Some((
                "a UASTC texture is transcoded when loaded, and Basis Universal's transcoder (the \
                 `basis-universal` crate, which bevy_cargo_assets uses) does not compile for wasm32 \
                 (bevyengine/bevy#17657)",
                "rgba8",
            )),
            (_, S::Uastc) => None,
            (GpuFamily::Web | GpuFamily::Android, S::Rgba16f) => None,
            (GpuFamily::Web | GpuFamily::Android, S::Bc6h) => Some((
                "BC6H is a desktop format: WebGPU, WebGL2 and most Android GPUs lack it",
                "rgba16f",
            )),
            (GpuFamily::Web, _) => Some((
                "WebGPU and WebGL2 make every block-compressed format an optional feature",
                "rgba8",
            )),
            // ASTC: every Android GPU of the last decade, and Google's
            // advice; not in OpenGL ES 3.0's guarantee, but the Vulkan
            // baseline profiles require it.
            (GpuFamily::Android, S::Etc2 | S::Etc2Rgba | S::Astc4x4 | S::Astc6x6 | S::Astc8x8) => {
                None
            }
            (GpuFamily::Android, _) => Some((
                "most Android GPUs have no BC formats (OpenGL ES 3 and Vulkan guarantee ETC2 there, and take ASTC: `etc2-rgba` or `astc-4x4` where alpha matters)",
                "etc2",
            )),
            (GpuFamily::Windows, S::Etc2 | S::Etc2Rgba) => Some((
                "Direct3D has no ETC2 formats, nor do most desktop GPUs",
                "bc1",
            )),
            (GpuFamily::Windows, S::Astc4x4 | S::Astc6x6 | S::Astc8x8) => Some((
                "Direct3D has no ASTC formats, nor do most desktop GPUs",
                "bc7",
            )),
            (GpuFamily::Windows, _) => None,
        }
    }
}

/// Why an ASTC format cannot be built here.
const NEEDS_ASTC: &str =
    "the ASTC formats need assets-build's `astc` feature (`cargo assets` has it)";

/// Why UASTC cannot be built here.
const NEEDS_BASIS: &str =
    "`uastc` needs assets-build's `basis` feature (`cargo assets` has it)";

fn default_format() -> FormatSetting {
    FormatSetting::Bc7
}

impl TextureSettings {
    /// The encoder effort in `variant`: as written, else
    /// [`Quality::default_for`] it.
    pub fn quality_in(&self, variant: &str) -> Quality {
        self.quality.unwrap_or_else(|| Quality::default_for(variant))
    }

    /// The GPU format and how to filter, or why the settings do not fit.
    pub fn resolve(&self) -> Result<(TextureFormat, Texels), String> {
        use FormatSetting as S;
        use TextureFormat as F;
        let floats = matches!(self.format, S::Bc6h | S::Rgba16f);
        if floats && (self.color == Some(ColorSetting::Srgb) || self.normal_map) {
            return Err(format!(
                "`{}` stores linear light as floats: drop `color = \"srgb\"` and `normal-map` \
                 (8-bit sources are decoded from sRGB to linear for it)",
                self.format_name()
            ));
        }
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
            (S::Etc2Rgba, false) => F::Etc2Rgba8Unorm,
            (S::Etc2Rgba, true) => F::Etc2Rgba8UnormSrgb,
            (S::Astc4x4 | S::Astc6x6 | S::Astc8x8, _) if !cfg!(feature = "astc") => {
                return Err(NEEDS_ASTC.to_owned());
            }
            (S::Astc4x4, false) => F::Astc4x4Unorm,
            (S::Astc4x4, true) => F::Astc4x4UnormSrgb,
            (S::Astc6x6, false) => F::Astc6x6Unorm,
            (S::Astc6x6, true) => F::Astc6x6UnormSrgb,
            (S::Astc8x8, false) => F::Astc8x8Unorm,
            (S::Astc8x8, true) => F::Astc8x8UnormSrgb,
            (S::Bc6h, _) => F::Bc6hRgbUfloat,
            (S::Rgba16f, _) => F::Rgba16Float,
            (S::Uastc, _) if !cfg!(feature = "basis") => return Err(NEEDS_BASIS.to_owned()),
            (S::Uastc, false) => F::Uastc4x4Unorm,
            (S::Uastc, true) => F::Uastc4x4UnormSrgb,
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
            FormatSetting::Etc2Rgba => "etc2-rgba",
            FormatSetting::Astc4x4 => "astc-4x4",
            FormatSetting::Astc6x6 => "astc-6x6",
            FormatSetting::Astc8x8 => "astc-8x8",
            FormatSetting::Bc6h => "bc6h",
            FormatSetting::Rgba16f => "rgba16f",
            FormatSetting::Uastc => "uastc",
        }
    }
}

impl Processor for Texture {
    type Settings = TextureSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "texture"
    }

    fn version(&self) -> u32 {
        // 2: BC1 keeps 1-bit alpha (it was dropped), ETC2 RGBA.
        // 3: BC6H (unsigned) stores negative values as 0, not as 65504;
        // a size that is not whole blocks is scaled up to them (`block-fit`).
        // 4: `quality` unset is `fastest` outside `release` (was `basic`).
        4
    }

    fn check_settings(&self, s: &TextureSettings) -> Result<(), SettingsError> {
        if let Some(rdo) = s.uastc_rdo {
            let message = if s.format != FormatSetting::Uastc {
                Some(format!(
                    "`uastc-rdo` tunes UASTC's encoder, and this rule's format is `{}`",
                    s.format_name()
                ))
            } else if !(0.1..=10.0).contains(&rdo) {
                Some(format!("`uastc-rdo = {rdo}` is outside 0.1 to 10"))
            } else {
                None
            };
            if let Some(message) = message {
                return Err(SettingsError {
                    message,
                    help: Some("`1.0` is a common choice with `format = \"uastc\"`".into()),
                    key: Some("uastc-rdo".into()),
                });
            }
        }
        if s.max_size == Some(0) {
            return Err(SettingsError {
                message: "`max-size = 0` leaves no texture".to_owned(),
                help: Some("a power of two that the platform's budget takes, such as `1024`".into()),
                key: Some("max-size".into()),
            });
        }
        if s.supercompression == Supercompression::Zstd && !cfg!(feature = "zstd") {
            return Err(SettingsError {
                message: NEEDS_ZSTD.to_owned(),
                help: None,
                key: Some("supercompression".into()),
            });
        }
        s.resolve().map(drop).map_err(|message| SettingsError {
            message,
            help: None,
            key: None,
        })
    }

    fn check_target(&self, s: &TextureSettings, target: &str) -> Result<(), SettingsError> {
        if s.allow_optional_format {
            return Ok(());
        }
        let Some(gpus) = GpuFamily::of(target) else {
            return Ok(());
        };
        let Some((why, instead)) = gpus.lacks(s.format) else {
            return Ok(());
        };
        let name = s.format_name();
        let (message, unless) = if s.format == FormatSetting::Uastc {
            let message = format!("format `{name}` cannot be loaded by a Rust game built for `{target}`: {why}");
            (message, "transcodes UASTC itself")
        } else {
            let message = format!("format `{name}` is not supported by every GPU a `{target}` build runs on: {why}");
            (message, "checks the GPU's features")
        };
        Err(SettingsError {
            message,
            help: Some(format!(
                "build `{instead}` for this target: on the platform whose `targets` cover `{target}` (declare one if none does), `settings.texture = {{ format = \"{instead}\" }}`, or on this rule `platforms.<platform> = {{ format = \"{instead}\" }}`; or set `allow-optional-format = true` if the game {unless}"
            )),
            key: Some("format".into()),
        })
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        settings: TextureSettings,
    ) -> Result<(), ProcessError> {
        let (format, texels) = settings.resolve().map_err(ProcessError::msg)?;
        let bytes = ctx.source()?;
        // The pixels, the mip chain (a third more), and the encoded blocks
        // and file.
        // Float levels are four times the bytes of RGBA8 ones.
        let copies = if format.is_float() { 16 } else { 4 };
        reserve_decode(ctx, &bytes, settings.max_dimension, copies)?;
        if format.is_float() {
            return self.float_texture(ctx, &bytes, format, &settings);
        }
        let decoded = crate::processor::image::decode_dynamic(&bytes, settings.max_dimension)?;
        if let Some(brightest) = hdr::brightest(&decoded).filter(|&b| b > 1.0) {
            ctx.warn(format!(
                "an HDR image (light up to {brightest:.1} times white) in 8-bit `{}` is clamped \
                 to white: use `format = \"bc6h\"` (desktop) or `\"rgba16f\"` to keep it",
                settings.format_name()
            ));
        }
        let image = decoded.into_rgba8();
        let (width, height) = image.dimensions();
        let alpha = image.pixels().any(|p| p[3] != 255);
        if alpha && settings.format == FormatSetting::Etc2 {
            let clear = image.pixels().filter(|p| p[3] != 255).count();
            let share = clear as f64 * 100.0 / image.pixels().len() as f64;
            return Err(ProcessError::msg(format!(
                "format `etc2` has no alpha, and {share:.1}% of this image's pixels are not opaque: \
                 use `etc2-rgba` (or `astc-4x4`) to keep them, or make the image opaque"
            )));
        }
        let mut base = Level {
            width,
            height,
            pixels: image.into_raw(),
        };
        while settings.max_size.is_some_and(|max| base.width.max(base.height) > max) {
            base = mips::half(&base, texels);
        }
        let size = (base.width, base.height);
        let fitted = (settings.block_fit).fitted(ctx, size, format.block_size(), settings.format_name());
        if let Some((w, h)) = fitted {
            base = mips::scaled(&base, texels, w, h);
        }
        let (width, height) = (base.width, base.height);
        let chain = mips::chain(base, texels, settings.mipmaps);
        let quality = settings.quality_in(ctx.variant());
        let levels = crate::parallel::map(&chain, |level| {
            encode::encode_with(level, format, quality, alpha, settings.uastc_rdo)
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(ProcessError::msg)?;
        let file = ktx2_file(format, width, height, &levels, settings.supercompression)?;
        ctx.emit(assets_runtime::format::KIND_TEXTURE, file)
    }
}

impl Texture {
    /// The float `format` texture of `bytes` (see [`hdr`]).
    fn float_texture(
        &self,
        ctx: &mut Context<'_>,
        bytes: &[u8],
        format: TextureFormat,
        settings: &TextureSettings,
    ) -> Result<(), ProcessError> {
        let srgb = settings.color != Some(ColorSetting::Linear);
        let mut base = hdr::decode(bytes, settings.max_dimension, srgb)?;
        while settings.max_size.is_some_and(|max| base.width.max(base.height) > max) {
            base = hdr::half_size(&base);
        }
        let size = (base.width, base.height);
        let fitted = (settings.block_fit).fitted(ctx, size, format.block_size(), settings.format_name());
        if let Some((w, h)) = fitted {
            base = hdr::scaled(&base, w, h);
        }
        let (width, height) = (base.width, base.height);
        let chain = hdr::chain(base, settings.mipmaps);
        let quality = settings.quality_in(ctx.variant());
        let levels = crate::parallel::map(&chain, |level| hdr::encode(level, format, quality));
        let file = ktx2_file(format, width, height, &levels, settings.supercompression)?;
        ctx.emit(assets_runtime::format::KIND_TEXTURE, file)
    }
}
