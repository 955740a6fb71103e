//! The `texture` resource: a GPU-ready texture in a KTX2 container
//! (Khronos KTX 2.0), with its mip chain, block-compressed or not, made by
//! the `texture` processor.
//!
//! The resource is the KTX2 file as it is, so any KTX2 tool reads it; this
//! module reads the part a game needs without copying: the format, the size,
//! and each mip level's bytes, ready for `queue.write_texture` (wgpu) or
//! `glCompressedTexImage2D`. The container is read by the `ktx2` crate
//! (header, level index and bounds); a parcel is rejected at open if a
//! texture's format is not one of [`TextureFormat`], it is not a single 2D
//! image, or a level's length is not what its format and size make.
//!
//! **Zstandard supercompression** (KTX2's scheme 2: each level one zstd
//! frame, as `toktx --zcmp` and the `texture` processor's
//! `supercompression = "zstd"` write it) is read too: such a level is
//! decompressed when asked for ([`Texture::level`] gives it owned), every
//! other level is borrowed from the parcel as it is. At open only the
//! level index is checked (each level's uncompressed length is what its
//! size makes, and no more than its frame can hold); the frames
//! themselves are decoded by the runtime's pure-Rust zstd (feature
//! `zstd`, on by default), never to more than that length.
//!
//! | [`TextureFormat`] | wgpu | bytes per 4×4 block (or pixel) |
//! |---|---|---|
//! | `Rgba8Unorm` / `Rgba8UnormSrgb` | `Rgba8Unorm` / `Rgba8UnormSrgb` | 4 per pixel |
//! | `Bc1RgbaUnorm` / `Bc1RgbaUnormSrgb` | `Bc1RgbaUnorm` / `Bc1RgbaUnormSrgb` | 8 |
//! | `Bc3RgbaUnorm` / `Bc3RgbaUnormSrgb` | `Bc3RgbaUnorm` / `Bc3RgbaUnormSrgb` | 16 |
//! | `Bc4RUnorm` | `Bc4RUnorm` | 8 |
//! | `Bc5RgUnorm` | `Bc5RgUnorm` | 16 |
//! | `Bc7RgbaUnorm` / `Bc7RgbaUnormSrgb` | `Bc7RgbaUnorm` / `Bc7RgbaUnormSrgb` | 16 |
//! | `Etc2Rgb8Unorm` / `Etc2Rgb8UnormSrgb` | `Etc2Rgb8Unorm` / `Etc2Rgb8UnormSrgb` | 8 |
//! | `Etc2Rgba8Unorm` / `Etc2Rgba8UnormSrgb` | `Etc2Rgba8Unorm` / `Etc2Rgba8UnormSrgb` | 16 |
//! | `Astc4x4Unorm` / `Astc4x4UnormSrgb` | `Astc { block: B4x4, channel: Unorm / UnormSrgb }` | 16 |
//! | `Astc6x6Unorm` / `Astc6x6UnormSrgb` | `Astc { block: B6x6, channel: Unorm / UnormSrgb }` | 16 a 6×6 block |
//! | `Astc8x8Unorm` / `Astc8x8UnormSrgb` | `Astc { block: B8x8, channel: Unorm / UnormSrgb }` | 16 an 8×8 block |
//! | `Bc6hRgbUfloat` | `Bc6hRgbUfloat` | 16 (HDR: linear half floats, no alpha, nothing negative) |
//! | `Rgba16Float` | `Rgba16Float` | 8 per pixel (HDR: four linear half floats) |
//! | `Uastc4x4Unorm` / `Uastc4x4UnormSrgb` | none: transcoded first ([`TextureFormat::needs_transcoding`]) | 16 |
//!
//! Level `i` is `max(1, width >> i)` × `max(1, height >> i)` pixels; a
//! block-compressed level holds whole blocks (4×4, or ASTC's 6×6 and 8×8;
//! its last blocks padded),
//! rows of blocks top to bottom, as wgpu expects with `bytes_per_row` =
//! blocks across × block bytes.

use std::borrow::Cow;

use ktx2::{Format, SupercompressionScheme};

use crate::codec;
use crate::format::Compression;

/// A texture format the parcel reader knows. See the [module docs](self)
/// for the wgpu format each one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TextureFormat {
    /// 8-bit RGBA, linear.
    Rgba8Unorm,
    /// 8-bit RGBA, sRGB color.
    Rgba8UnormSrgb,
    /// BC1 (DXT1): RGB and 1-bit alpha, 4 bits a pixel.
    Bc1RgbaUnorm,
    /// BC1, sRGB color.
    Bc1RgbaUnormSrgb,
    /// BC3 (DXT5): RGBA, 8 bits a pixel.
    Bc3RgbaUnorm,
    /// BC3, sRGB color.
    Bc3RgbaUnormSrgb,
    /// BC4: one channel (roughness, height), 4 bits a pixel.
    Bc4RUnorm,
    /// BC5: two channels (normal maps' X and Y), 8 bits a pixel.
    Bc5RgUnorm,
    /// BC7: high-quality RGBA, 8 bits a pixel.
    Bc7RgbaUnorm,
    /// BC7, sRGB color.
    Bc7RgbaUnormSrgb,
    /// ETC2 RGB (mobile GPUs, WebGL2 on phones), 4 bits a pixel, no alpha.
    Etc2Rgb8Unorm,
    /// ETC2 RGB, sRGB color.
    Etc2Rgb8UnormSrgb,
    /// ETC2 RGBA (an EAC alpha block beside an ETC2 color block), 8 bits a
    /// pixel: mobile GPUs, where alpha matters.
    Etc2Rgba8Unorm,
    /// ETC2 RGBA, sRGB color.
    Etc2Rgba8UnormSrgb,
    /// ASTC 4×4: RGBA, 8 bits a pixel (phones, Apple GPUs).
    Astc4x4Unorm,
    /// ASTC 4×4, sRGB color.
    Astc4x4UnormSrgb,
    /// ASTC 6×6: RGBA, 3.56 bits a pixel.
    Astc6x6Unorm,
    /// ASTC 6×6, sRGB color.
    Astc6x6UnormSrgb,
    /// ASTC 8×8: RGBA, 2 bits a pixel.
    Astc8x8Unorm,
    /// ASTC 8×8, sRGB color.
    Astc8x8UnormSrgb,
    /// BC6H unsigned: HDR RGB (linear half floats, 0 and up), 8 bits a
    /// pixel (desktop GPUs).
    Bc6hRgbUfloat,
    /// Four linear half floats a pixel: HDR on every GPU, 64 bits a pixel.
    Rgba16Float,
    /// UASTC 4×4 (Basis Universal): RGBA, 8 bits a pixel, which no GPU
    /// samples as it is: it is transcoded when loaded, to ASTC 4×4, BC7,
    /// ETC2 or RGBA8, whichever the GPU takes (see
    /// [`needs_transcoding`](TextureFormat::needs_transcoding)). One file
    /// for every GPU (a browser's engine transcodes it with Basis
    /// Universal's JavaScript transcoder; no Rust one compiles for wasm32).
    Uastc4x4Unorm,
    /// UASTC 4×4, sRGB color.
    Uastc4x4UnormSrgb,
}

impl TextureFormat {
    /// The format's KTX2 / Vulkan name, e.g. `BC7_SRGB_BLOCK`.
    pub fn name(self) -> &'static str {
        match self {
            TextureFormat::Rgba8Unorm => "R8G8B8A8_UNORM",
            TextureFormat::Rgba8UnormSrgb => "R8G8B8A8_SRGB",
            TextureFormat::Bc1RgbaUnorm => "BC1_RGBA_UNORM_BLOCK",
            TextureFormat::Bc1RgbaUnormSrgb => "BC1_RGBA_SRGB_BLOCK",
            TextureFormat::Bc3RgbaUnorm => "BC3_UNORM_BLOCK",
            TextureFormat::Bc3RgbaUnormSrgb => "BC3_SRGB_BLOCK",
            TextureFormat::Bc4RUnorm => "BC4_UNORM_BLOCK",
            TextureFormat::Bc5RgUnorm => "BC5_UNORM_BLOCK",
            TextureFormat::Bc7RgbaUnorm => "BC7_UNORM_BLOCK",
            TextureFormat::Bc7RgbaUnormSrgb => "BC7_SRGB_BLOCK",
            TextureFormat::Etc2Rgb8Unorm => "ETC2_R8G8B8_UNORM_BLOCK",
            TextureFormat::Etc2Rgb8UnormSrgb => "ETC2_R8G8B8_SRGB_BLOCK",
            TextureFormat::Etc2Rgba8Unorm => "ETC2_R8G8B8A8_UNORM_BLOCK",
            TextureFormat::Etc2Rgba8UnormSrgb => "ETC2_R8G8B8A8_SRGB_BLOCK",
            TextureFormat::Astc4x4Unorm => "ASTC_4x4_UNORM_BLOCK",
            TextureFormat::Astc4x4UnormSrgb => "ASTC_4x4_SRGB_BLOCK",
            TextureFormat::Astc6x6Unorm => "ASTC_6x6_UNORM_BLOCK",
            TextureFormat::Astc6x6UnormSrgb => "ASTC_6x6_SRGB_BLOCK",
            TextureFormat::Astc8x8Unorm => "ASTC_8x8_UNORM_BLOCK",
            TextureFormat::Astc8x8UnormSrgb => "ASTC_8x8_SRGB_BLOCK",
            TextureFormat::Bc6hRgbUfloat => "BC6H_UFLOAT_BLOCK",
            TextureFormat::Rgba16Float => "R16G16B16A16_SFLOAT",
            TextureFormat::Uastc4x4Unorm => "UASTC_4x4",
            TextureFormat::Uastc4x4UnormSrgb => "UASTC_4x4_SRGB",
        }
    }

    /// The Vulkan (and KTX2) format number; `None` for UASTC, whose KTX2
    /// format is undefined (its data format descriptor names it).
    pub fn vk_format(self) -> Option<Format> {
        Some(match self {
            TextureFormat::Rgba8Unorm => Format::R8G8B8A8_UNORM,
            TextureFormat::Rgba8UnormSrgb => Format::R8G8B8A8_SRGB,
            TextureFormat::Bc1RgbaUnorm => Format::BC1_RGBA_UNORM_BLOCK,
            TextureFormat::Bc1RgbaUnormSrgb => Format::BC1_RGBA_SRGB_BLOCK,
            TextureFormat::Bc3RgbaUnorm => Format::BC3_UNORM_BLOCK,
            TextureFormat::Bc3RgbaUnormSrgb => Format::BC3_SRGB_BLOCK,
            TextureFormat::Bc4RUnorm => Format::BC4_UNORM_BLOCK,
            TextureFormat::Bc5RgUnorm => Format::BC5_UNORM_BLOCK,
            TextureFormat::Bc7RgbaUnorm => Format::BC7_UNORM_BLOCK,
            TextureFormat::Bc7RgbaUnormSrgb => Format::BC7_SRGB_BLOCK,
            TextureFormat::Etc2Rgb8Unorm => Format::ETC2_R8G8B8_UNORM_BLOCK,
            TextureFormat::Etc2Rgb8UnormSrgb => Format::ETC2_R8G8B8_SRGB_BLOCK,
            TextureFormat::Etc2Rgba8Unorm => Format::ETC2_R8G8B8A8_UNORM_BLOCK,
            TextureFormat::Etc2Rgba8UnormSrgb => Format::ETC2_R8G8B8A8_SRGB_BLOCK,
            TextureFormat::Astc4x4Unorm => Format::ASTC_4x4_UNORM_BLOCK,
            TextureFormat::Astc4x4UnormSrgb => Format::ASTC_4x4_SRGB_BLOCK,
            TextureFormat::Astc6x6Unorm => Format::ASTC_6x6_UNORM_BLOCK,
            TextureFormat::Astc6x6UnormSrgb => Format::ASTC_6x6_SRGB_BLOCK,
            TextureFormat::Astc8x8Unorm => Format::ASTC_8x8_UNORM_BLOCK,
            TextureFormat::Astc8x8UnormSrgb => Format::ASTC_8x8_SRGB_BLOCK,
            TextureFormat::Bc6hRgbUfloat => Format::BC6H_UFLOAT_BLOCK,
            TextureFormat::Rgba16Float => Format::R16G16B16A16_SFLOAT,
            TextureFormat::Uastc4x4Unorm | TextureFormat::Uastc4x4UnormSrgb => return None,
        })
    }

    /// The format of a Vulkan format number, if it is one of these.
    pub fn from_vk_format(format: Format) -> Option<TextureFormat> {
        ALL.iter().copied().find(|f| f.vk_format() == Some(format))
    }

    /// Whether no GPU samples this format as it is, so that a loader
    /// transcodes each level first: UASTC, through Basis Universal's
    /// transcoder (Bevy's `basis-universal` feature, three.js's and
    /// Godot's KTX2 loaders do), to ASTC 4×4 (losslessly), BC7, ETC2 or
    /// RGBA8, whichever the GPU takes.
    pub fn needs_transcoding(self) -> bool {
        matches!(
            self,
            TextureFormat::Uastc4x4Unorm | TextureFormat::Uastc4x4UnormSrgb
        )
    }

    /// Whether color is stored sRGB-encoded (the GPU decodes it on sampling).
    pub fn is_srgb(self) -> bool {
        matches!(
            self,
            TextureFormat::Rgba8UnormSrgb
                | TextureFormat::Bc1RgbaUnormSrgb
                | TextureFormat::Bc3RgbaUnormSrgb
                | TextureFormat::Bc7RgbaUnormSrgb
                | TextureFormat::Etc2Rgb8UnormSrgb
                | TextureFormat::Etc2Rgba8UnormSrgb
                | TextureFormat::Astc4x4UnormSrgb
                | TextureFormat::Astc6x6UnormSrgb
                | TextureFormat::Astc8x8UnormSrgb
                | TextureFormat::Uastc4x4UnormSrgb
        )
    }

    /// Whether texels are floats (HDR): BC6H and RGBA16F.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            TextureFormat::Bc6hRgbUfloat | TextureFormat::Rgba16Float
        )
    }

    /// Pixels per block side (blocks are square): 1 for RGBA8 and RGBA16F,
    /// 4 for BC and ETC2, 4, 6 or 8 for ASTC.
    pub fn block_size(self) -> u32 {
        match self {
            TextureFormat::Rgba8Unorm
            | TextureFormat::Rgba8UnormSrgb
            | TextureFormat::Rgba16Float => 1,
            TextureFormat::Astc6x6Unorm | TextureFormat::Astc6x6UnormSrgb => 6,
            TextureFormat::Astc8x8Unorm | TextureFormat::Astc8x8UnormSrgb => 8,
            _ => 4,
        }
    }

    /// Whether this is an ASTC format.
    pub fn is_astc(self) -> bool {
        matches!(
            self,
            TextureFormat::Astc4x4Unorm
                | TextureFormat::Astc4x4UnormSrgb
                | TextureFormat::Astc6x6Unorm
                | TextureFormat::Astc6x6UnormSrgb
                | TextureFormat::Astc8x8Unorm
                | TextureFormat::Astc8x8UnormSrgb
        )
    }

    /// Bytes per block (per pixel for RGBA8).
    pub fn block_bytes(self) -> u32 {
        match self {
            TextureFormat::Rgba8Unorm | TextureFormat::Rgba8UnormSrgb => 4,
            TextureFormat::Bc1RgbaUnorm
            | TextureFormat::Rgba16Float
            | TextureFormat::Bc1RgbaUnormSrgb
            | TextureFormat::Bc4RUnorm
            | TextureFormat::Etc2Rgb8Unorm
            | TextureFormat::Etc2Rgb8UnormSrgb => 8,
            _ => 16,
        }
    }

    /// The bytes of a `width × height` level in this format.
    pub fn level_len(self, width: u32, height: u32) -> u64 {
        let b = self.block_size();
        u64::from(width.div_ceil(b)) * u64::from(height.div_ceil(b)) * u64::from(self.block_bytes())
    }
}

const ALL: [TextureFormat; 24] = [
    TextureFormat::Rgba8Unorm,
    TextureFormat::Rgba8UnormSrgb,
    TextureFormat::Bc1RgbaUnorm,
    TextureFormat::Bc1RgbaUnormSrgb,
    TextureFormat::Bc3RgbaUnorm,
    TextureFormat::Bc3RgbaUnormSrgb,
    TextureFormat::Bc4RUnorm,
    TextureFormat::Bc5RgUnorm,
    TextureFormat::Bc7RgbaUnorm,
    TextureFormat::Bc7RgbaUnormSrgb,
    TextureFormat::Etc2Rgb8Unorm,
    TextureFormat::Etc2Rgb8UnormSrgb,
    TextureFormat::Etc2Rgba8Unorm,
    TextureFormat::Etc2Rgba8UnormSrgb,
    TextureFormat::Astc4x4Unorm,
    TextureFormat::Astc4x4UnormSrgb,
    TextureFormat::Astc6x6Unorm,
    TextureFormat::Astc6x6UnormSrgb,
    TextureFormat::Astc8x8Unorm,
    TextureFormat::Astc8x8UnormSrgb,
    TextureFormat::Bc6hRgbUfloat,
    TextureFormat::Rgba16Float,
    TextureFormat::Uastc4x4Unorm,
    TextureFormat::Uastc4x4UnormSrgb,
];

/// The format of a KTX2 file whose `vkFormat` is undefined, from its data
/// format descriptor: UASTC (any channel layout); anything else (ETC1S
/// under BasisLZ, an unknown model) is beyond this reader.
fn described_format(reader: &ktx2::Reader<&[u8]>) -> Result<TextureFormat, NotATexture> {
    // The basic block's colour model and transfer function are its bytes 0
    // and 2, read here: the `ktx2` crate's parser of that block panics on
    // a texel block dimension of 255 (0.4.0 adds 1 to it unchecked), which
    // a hostile file may hold.
    let basic = reader
        .dfd_blocks()
        .find(|block| block.header.vendor_id == 0 && block.header.descriptor_type == 0)
        .and_then(|block| Some((*block.data.first()?, *block.data.get(2)?)));
    let model = basic.map(|(model, transfer)| {
        (
            ktx2::ColorModel::new(model),
            ktx2::TransferFunction::new(transfer),
        )
    });
    match model {
        Some((Some(ktx2::ColorModel::UASTC), Some(ktx2::TransferFunction::SRGB))) => {
            Ok(TextureFormat::Uastc4x4UnormSrgb)
        }
        Some((Some(ktx2::ColorModel::UASTC), _)) => Ok(TextureFormat::Uastc4x4Unorm),
        Some((Some(model), _)) => Err(NotATexture::Unsupported(format!(
            "its format is undefined and its data format descriptor says {model:?}, which the runtime does not read (UASTC it does; ETC1S needs an engine's Basis Universal loader)"
        ))),
        _ => Err(NotATexture::Unsupported(
            "its format is undefined and it has no data format descriptor that names one".into(),
        )),
    }
}

/// A validated texture resource. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Texture<'a> {
    bytes: &'a [u8],
    /// Its format.
    pub format: TextureFormat,
    /// Width of level 0, in pixels.
    pub width: u32,
    /// Height of level 0, in pixels.
    pub height: u32,
    /// How many mip levels.
    pub levels: u32,
    /// Whether each level is a zstd frame (KTX2 supercompression scheme 2).
    supercompressed: bool,
}

/// Why bytes are not a [`Texture`] this reader takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotATexture {
    /// A well-formed KTX2 file this reader does not read: a format it does
    /// not decode, a supercompression other than Zstandard, a cube, array,
    /// 3D or 1D texture. An engine's own KTX2 loader may read it.
    Unsupported(String),
    /// Not a KTX2 file, or one whose levels do not add up.
    Damaged(String),
}

impl NotATexture {
    /// Whether the file is well-formed, only beyond this reader.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, NotATexture::Unsupported(_))
    }
}

impl std::fmt::Display for NotATexture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotATexture::Unsupported(why) | NotATexture::Damaged(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for NotATexture {}

impl<'a> Texture<'a> {
    /// Reads and checks a KTX2 file's bytes: a single 2D image (no array,
    /// cube or depth) of a known format, stored as it is or
    /// zstd-supercompressed, whose every level's length is what its size
    /// makes. `None` otherwise.
    pub fn parse(bytes: &'a [u8]) -> Option<Texture<'a>> {
        Texture::check(bytes).ok()
    }

    /// [`Texture::parse`], saying why `bytes` is not a texture this reader
    /// takes (for a build to name the file and the reason), and whether
    /// that is the file's damage or what it is.
    pub fn check(bytes: &'a [u8]) -> Result<Texture<'a>, NotATexture> {
        use NotATexture::{Damaged, Unsupported};
        let reader =
            ktx2::Reader::new(bytes).map_err(|e| Damaged(format!("not a valid KTX2 file: {e}")))?;
        let header = reader.header();
        let format = match header.format {
            Some(f) => TextureFormat::from_vk_format(f).ok_or_else(|| {
                Unsupported(format!(
                    "its format {f:?} is not one the runtime reads (RGBA8, BC1/3/4/5/6H/7, ETC2, ASTC 4x4/6x6/8x8, RGBA16F, UASTC)"
                ))
            })?,
            None => described_format(&reader)?,
        };
        let supercompressed = match header.supercompression_scheme {
            None => false,
            Some(SupercompressionScheme::Zstandard) => true,
            Some(scheme) => {
                return Err(Unsupported(format!(
                    "it is supercompressed with {scheme:?}, which is not read (Zstandard is)"
                )));
            }
        };
        if header.pixel_depth != 0 || header.layer_count != 0 || header.face_count != 1 {
            return Err(Unsupported(
                "it is not a single 2D image (3D, array and cube textures are not read yet)".into(),
            ));
        }
        if header.pixel_height == 0 {
            return Err(Unsupported(
                "it has no height (1D textures are not read)".into(),
            ));
        }
        let levels = header.level_count.max(1);
        // A full chain ends at 1×1: floor(log2(largest side)) + 1 levels.
        let most = 32 - header.pixel_width.max(header.pixel_height).leading_zeros();
        if levels > most {
            return Err(Damaged(format!(
                "{levels} mip levels, more than its {most}-level chain"
            )));
        }
        let texture = Texture {
            bytes,
            format,
            width: header.pixel_width,
            height: header.pixel_height,
            levels,
            supercompressed,
        };
        for (i, level) in reader.levels().enumerate() {
            let (w, h) = texture.level_size(i as u32);
            let want = format.level_len(w, h);
            let holds = if supercompressed {
                level.uncompressed_byte_length
            } else {
                level.data.len() as u64
            };
            if holds != want {
                return Err(Damaged(format!(
                    "level {i} holds {holds} bytes; a {w}x{h} level of {} holds {want}",
                    format.name()
                )));
            }
            if supercompressed
                && want > codec::expand_bound(Compression::Zstd, level.data.len()) as u64
            {
                return Err(Damaged(format!(
                    "level {i}'s {} bytes of zstd cannot hold the {want} bytes it claims",
                    level.data.len()
                )));
            }
        }
        Ok(texture)
    }

    /// Whether the levels are stored zstd-supercompressed, so that
    /// [`level`](Texture::level) decompresses each one it gives.
    pub fn is_supercompressed(&self) -> bool {
        self.supercompressed
    }

    /// The size of level `i` in pixels.
    pub fn level_size(&self, i: u32) -> (u32, u32) {
        ((self.width >> i).max(1), (self.height >> i).max(1))
    }

    /// The bytes of level `i` (0 is the largest), if there is one:
    /// borrowed where they lie, or, in a supercompressed texture,
    /// decompressed (exactly [`TextureFormat::level_len`] bytes). `None`
    /// also for a supercompressed level whose frame does not decompress to
    /// that length (damaged), or in a build without this crate's `zstd`
    /// feature.
    pub fn level(&self, i: u32) -> Option<Cow<'a, [u8]>> {
        let reader = ktx2::Reader::new(self.bytes).ok()?;
        let level = reader.levels().nth(i as usize)?;
        // Borrow from `self.bytes`, not from the short-lived reader.
        let start = level.data.as_ptr() as usize - self.bytes.as_ptr() as usize;
        let stored = self.bytes.get(start..start + level.data.len())?;
        if !self.supercompressed {
            return Some(Cow::Borrowed(stored));
        }
        let (w, h) = self.level_size(i);
        let len = usize::try_from(self.format.level_len(w, h)).ok()?;
        codec::decode_zstd(stored, len).ok().map(Cow::Owned)
    }

    /// The whole KTX2 file, for tools that read it themselves.
    pub fn ktx2(&self) -> &'a [u8] {
        self.bytes
    }
}

/// The writer's half (behind the `write` feature): the KTX2 container
/// (Khronos KTX File Format 2.0) the `texture` processor writes. Header,
/// level index, data format descriptor, then the levels, smallest first,
/// each aligned to its block size and 4 bytes; the header and index
/// layouts are the `ktx2` crate's.
#[cfg(feature = "write")]
pub mod write {
    use super::TextureFormat;
    use ktx2::{
        ChannelTypeQualifiers, ColorModel, ColorPrimaries, DataFormatFlags, DfdBlockHeaderBasic,
        DfdHeader, Header, Index, LevelIndex, SampleInformation, SupercompressionScheme,
        TransferFunction,
    };

    /// A KTX2 file of `format`, `width × height`, holding `levels` (level 0
    /// first, each already in `format`).
    pub fn ktx2(format: TextureFormat, width: u32, height: u32, levels: &[Vec<u8>]) -> Vec<u8> {
        let stored: Vec<(&[u8], usize)> = levels.iter().map(|l| (&l[..], l.len())).collect();
        container(format, width, height, &stored, false)
    }

    /// [`ktx2()`] with each level one zstd frame at `zstd_level`, KTX2's
    /// supercompression scheme 2 (what `toktx --zcmp` writes); `None`
    /// without the `write-zstd` feature (the encoder is the C library).
    pub fn ktx2_zstd(
        format: TextureFormat,
        width: u32,
        height: u32,
        levels: &[Vec<u8>],
        zstd_level: i32,
    ) -> Option<Vec<u8>> {
        let frames = levels
            .iter()
            .map(|l| crate::codec::encode_zstd(l, zstd_level))
            .collect::<Option<Vec<_>>>()?;
        let stored: Vec<(&[u8], usize)> = frames
            .iter()
            .zip(levels)
            .map(|(frame, level)| (&frame[..], level.len()))
            .collect();
        Some(container(format, width, height, &stored, true))
    }

    /// The file: header, level index, data format descriptor, then the
    /// `stored` levels (their bytes and uncompressed lengths, level 0
    /// first) smallest first. Levels are aligned to the format's block
    /// bytes and 4, or, supercompressed, not at all (the spec's rule).
    fn container(
        format: TextureFormat,
        width: u32,
        height: u32,
        stored: &[(&[u8], usize)],
        zstd: bool,
    ) -> Vec<u8> {
        let dfd = descriptor(format);
        let index_at = Header::LENGTH;
        let dfd_at = index_at + stored.len() * LevelIndex::LENGTH;
        let mut data_at = dfd_at + dfd.len();
        let align = if zstd {
            1
        } else {
            lcm(format.block_bytes() as usize, 4)
        };
        // Levels lie smallest first; the index lists level 0 first.
        let mut offsets = vec![0usize; stored.len()];
        for (i, (bytes, _)) in stored.iter().enumerate().rev() {
            data_at = data_at.next_multiple_of(align);
            offsets[i] = data_at;
            data_at += bytes.len();
        }
        let header = Header {
            format: format.vk_format(),
            type_size: 1,
            pixel_width: width,
            pixel_height: height,
            pixel_depth: 0,
            layer_count: 0,
            face_count: 1,
            level_count: stored.len() as u32,
            supercompression_scheme: zstd.then_some(SupercompressionScheme::Zstandard),
            index: Index {
                dfd_byte_offset: dfd_at as u32,
                dfd_byte_length: dfd.len() as u32,
                kvd_byte_offset: 0,
                kvd_byte_length: 0,
                sgd_byte_offset: 0,
                sgd_byte_length: 0,
            },
        };
        let mut out = Vec::with_capacity(data_at);
        out.extend_from_slice(&header.as_bytes());
        for (&(bytes, raw), &offset) in stored.iter().zip(&offsets) {
            let index = LevelIndex {
                byte_offset: offset as u64,
                byte_length: bytes.len() as u64,
                uncompressed_byte_length: raw as u64,
            };
            out.extend_from_slice(&index.as_bytes());
        }
        out.extend_from_slice(&dfd);
        for (i, (bytes, _)) in stored.iter().enumerate().rev() {
            out.resize(offsets[i], 0);
            out.extend_from_slice(bytes);
        }
        out
    }

    fn lcm(a: usize, b: usize) -> usize {
        fn gcd(a: usize, b: usize) -> usize {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        a / gcd(a, b) * b
    }

    /// `sample` holding floats, signed or not (the data format spec's
    /// limits for floats: 0.0 or -1.0 to 1.0).
    fn float_sample(mut sample: SampleInformation, signed: bool) -> SampleInformation {
        sample.channel_type_qualifiers |= ChannelTypeQualifiers::FLOAT;
        sample.upper = 1.0f32.to_bits();
        sample.lower = 0;
        if signed {
            sample.channel_type_qualifiers |= ChannelTypeQualifiers::SIGNED;
            sample.lower = (-1.0f32).to_bits();
        }
        sample
    }

    /// The data format descriptor: its total size, then one basic block.
    fn descriptor(format: TextureFormat) -> Vec<u8> {
        use TextureFormat as F;
        let srgb = format.is_srgb();
        let transfer = if srgb {
            TransferFunction::SRGB
        } else {
            TransferFunction::Linear
        };
        let block = format.block_size() as u8;
        let sample = |channel: u8, offset: u16, bits: u8, linear: bool| SampleInformation {
            bit_offset: offset,
            bit_length: std::num::NonZeroU8::new(bits).expect("bits"),
            channel_type: channel,
            channel_type_qualifiers: if linear {
                ChannelTypeQualifiers::LINEAR
            } else {
                ChannelTypeQualifiers::empty()
            },
            sample_positions: [0; 4],
            lower: 0,
            upper: if bits >= 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            },
        };
        // Channel ids: RGBSDA's R, G, B, A are 0, 1, 2, 15; a block format's
        // one sample is its colour (0), or alpha (15) where it carries it.
        let (model, samples): (ColorModel, Vec<SampleInformation>) = match format {
            F::Rgba8Unorm | F::Rgba8UnormSrgb => (
                ColorModel::RGBSDA,
                vec![
                    sample(0, 0, 8, false),
                    sample(1, 8, 8, false),
                    sample(2, 16, 8, false),
                    sample(15, 24, 8, true),
                ],
            ),
            F::Bc1RgbaUnorm | F::Bc1RgbaUnormSrgb => {
                (ColorModel::BC1A, vec![sample(0, 0, 64, false)])
            }
            F::Bc3RgbaUnorm | F::Bc3RgbaUnormSrgb => (
                ColorModel::BC3,
                vec![sample(15, 0, 64, true), sample(0, 64, 64, false)],
            ),
            F::Bc4RUnorm => (ColorModel::BC4, vec![sample(0, 0, 64, false)]),
            F::Bc5RgUnorm => (
                ColorModel::BC5,
                vec![sample(0, 0, 64, false), sample(1, 64, 64, false)],
            ),
            F::Bc7RgbaUnorm | F::Bc7RgbaUnormSrgb => {
                (ColorModel::BC7, vec![sample(0, 0, 128, false)])
            }
            F::Etc2Rgb8Unorm | F::Etc2Rgb8UnormSrgb => {
                (ColorModel::ETC2, vec![sample(0, 0, 64, false)])
            }
            // ETC2's channel ids: alpha 15, colour 2; the alpha block first.
            F::Etc2Rgba8Unorm | F::Etc2Rgba8UnormSrgb => (
                ColorModel::ETC2,
                vec![sample(15, 0, 64, true), sample(2, 64, 64, false)],
            ),
            F::Astc4x4Unorm
            | F::Astc4x4UnormSrgb
            | F::Astc6x6Unorm
            | F::Astc6x6UnormSrgb
            | F::Astc8x8Unorm
            | F::Astc8x8UnormSrgb => (ColorModel::ASTC, vec![sample(0, 0, 128, false)]),
            // Floats: limits are IEEE 754 bit patterns, 0 or -1 to 1.
            F::Bc6hRgbUfloat => (
                ColorModel::BC6H,
                vec![float_sample(sample(0, 0, 128, false), false)],
            ),
            F::Rgba16Float => (
                ColorModel::RGBSDA,
                vec![
                    float_sample(sample(0, 0, 16, false), true),
                    float_sample(sample(1, 16, 16, false), true),
                    float_sample(sample(2, 32, 16, false), true),
                    float_sample(sample(15, 48, 16, true), true),
                ],
            ),
            // UASTC's channel id 3 is RGBA (0 would be RGB): a loader then
            // transcodes to a format that keeps alpha, which is never
            // wrong, where RGB would drop it from a texture that has it.
            F::Uastc4x4Unorm | F::Uastc4x4UnormSrgb => {
                (ColorModel::UASTC, vec![sample(3, 0, 128, false)])
            }
        };
        let mut bytes_planes = [0u8; 8];
        bytes_planes[0] = format.block_bytes() as u8;
        let basic = DfdBlockHeaderBasic {
            color_model: Some(model),
            color_primaries: Some(ColorPrimaries::BT709),
            transfer_function: Some(transfer),
            flags: DataFormatFlags::STRAIGHT_ALPHA,
            texel_block_dimensions: [block, block, 1, 1]
                .map(|d| std::num::NonZeroU8::new(d).expect("non-zero")),
            bytes_planes,
        };
        let block_size = DfdHeader::LENGTH
            + DfdBlockHeaderBasic::LENGTH
            + samples.len() * SampleInformation::LENGTH;
        let mut out = Vec::with_capacity(4 + block_size);
        out.extend_from_slice(&((4 + block_size) as u32).to_le_bytes());
        out.extend_from_slice(&DfdHeader::BASIC.as_bytes(block_size as u16));
        out.extend_from_slice(&basic.as_bytes());
        for s in samples {
            out.extend_from_slice(&s.as_bytes());
        }
        out
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::*;

    /// A 4x2 RGBA8 texture with its 3 levels.
    fn sample() -> Vec<u8> {
        let levels = [vec![1; 32], vec![2; 8], vec![3; 4]];
        write::ktx2(TextureFormat::Rgba8Unorm, 4, 2, &levels)
    }

    #[test]
    fn levels_are_read_in_place_with_their_sizes() {
        let bytes = sample();
        let t = Texture::parse(&bytes).expect("valid");
        assert_eq!(
            (t.format, t.width, t.height, t.levels),
            (TextureFormat::Rgba8Unorm, 4, 2, 3)
        );
        assert!(!t.is_supercompressed());
        assert!(matches!(t.level(0), Some(Cow::Borrowed(l)) if l == [1; 32]));
        assert_eq!(*t.level(2).unwrap(), [3; 4]);
        assert_eq!(t.level_size(2), (1, 1));
        assert!(t.level(3).is_none());
        assert_eq!(TextureFormat::Bc7RgbaUnormSrgb.level_len(5, 5), 4 * 16);
    }

    /// An 8x8 BC7 texture's two levels (4 blocks and 1) and its file,
    /// zstd-supercompressed.
    fn supercompressed() -> (Vec<Vec<u8>>, Vec<u8>) {
        let levels: Vec<Vec<u8>> =
            vec![(0..64u32).map(|i| (i * 7 % 5) as u8).collect(), vec![9; 16]];
        let file = write::ktx2_zstd(TextureFormat::Bc7RgbaUnorm, 8, 8, &levels, 3).unwrap();
        (levels, file)
    }

    #[test]
    fn zstd_supercompressed_levels_are_decompressed_when_asked_for() {
        let (levels, bytes) = supercompressed();
        let t = Texture::check(&bytes).expect("valid");
        assert!(t.is_supercompressed());
        assert_eq!((t.width, t.height, t.levels), (8, 8, 2));
        for (i, want) in levels.iter().enumerate() {
            assert!(matches!(t.level(i as u32), Some(Cow::Owned(l)) if &l == want));
        }
        assert!(t.level(2).is_none());
        let header = ktx2::Reader::new(&bytes[..]).unwrap().header();
        assert_eq!(
            header.supercompression_scheme,
            Some(SupercompressionScheme::Zstandard)
        );
    }

    #[test]
    fn a_level_claiming_more_than_its_frame_can_hold_is_refused_at_open() {
        let (_, mut bytes) = supercompressed();
        // A 16384x16384 texture of one level (header: width at 20, height
        // at 24, level count at 40) claims 256 MiB of BC7 from a frame of a
        // few dozen bytes (level 0's uncompressed length at 96).
        bytes[20..24].copy_from_slice(&16384u32.to_le_bytes());
        bytes[24..28].copy_from_slice(&16384u32.to_le_bytes());
        bytes[40..44].copy_from_slice(&1u32.to_le_bytes());
        let want = TextureFormat::Bc7RgbaUnorm.level_len(16384, 16384);
        bytes[96..104].copy_from_slice(&want.to_le_bytes());
        match Texture::check(&bytes) {
            Err(NotATexture::Damaged(why)) => assert!(why.contains("cannot hold"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    /// An 8x4 UASTC texture (sRGB) with its 4 levels: 2 blocks, then 1.
    fn uastc() -> Vec<u8> {
        let levels = [vec![7; 32], vec![8; 16], vec![9; 16], vec![10; 16]];
        write::ktx2(TextureFormat::Uastc4x4UnormSrgb, 8, 4, &levels)
    }

    #[test]
    fn uastc_is_named_by_the_descriptor_of_an_undefined_format() {
        let bytes = uastc();
        let reader = ktx2::Reader::new(&bytes[..]).unwrap();
        assert_eq!(reader.header().format, None);
        let t = Texture::check(&bytes).expect("a UASTC texture");
        assert_eq!(
            (t.format, t.width, t.height, t.levels),
            (TextureFormat::Uastc4x4UnormSrgb, 8, 4, 4)
        );
        assert!(t.format.needs_transcoding() && t.format.is_srgb());
        assert!(!TextureFormat::Bc7RgbaUnorm.needs_transcoding());
        assert_eq!(TextureFormat::Uastc4x4Unorm.vk_format(), None);
        assert_eq!(*t.level(1).unwrap(), [8; 16]);
        let linear = write::ktx2(TextureFormat::Uastc4x4Unorm, 4, 4, &[vec![0; 16]]);
        assert_eq!(
            Texture::check(&linear).unwrap().format,
            TextureFormat::Uastc4x4Unorm
        );
        // The descriptor's colour model (after the level index, the
        // descriptor's length and its block header) made ETC1S: beyond
        // this reader, and said so.
        let model = ktx2::Header::LENGTH + 4 * ktx2::LevelIndex::LENGTH + 4 + 8;
        assert_eq!(bytes[model], 166, "UASTC's model number");
        let mut etc1s = bytes.clone();
        etc1s[model] = 163;
        match Texture::check(&etc1s) {
            Err(NotATexture::Unsupported(why)) => assert!(why.contains("ETC1S"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_flipped_or_inconsistent_files_are_refused_without_panicking() {
        for (bytes, zstd) in [
            (sample(), false),
            (supercompressed().1, true),
            (uastc(), false),
        ] {
            for len in 0..bytes.len() {
                assert!(
                    Texture::parse(&bytes[..len]).is_none(),
                    "truncated to {len}"
                );
            }
            for at in 0..bytes.len() {
                for flip in [0x01, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] ^= flip;
                    let Some(t) = Texture::parse(&b) else {
                        continue;
                    };
                    for i in 0..t.levels {
                        let (w, h) = t.level_size(i);
                        let got = t.level(i).map(|l| l.len() as u64);
                        // A damaged frame gives nothing, never a wrong length.
                        if !(zstd && got.is_none()) {
                            assert_eq!(got, Some(t.format.level_len(w, h)));
                        }
                    }
                }
            }
        }
        let bytes = sample();
        // Too many levels for the size.
        let mut b = bytes.clone();
        b[40..44].copy_from_slice(&4u32.to_le_bytes());
        assert!(Texture::parse(&b).is_none());
    }
}
