//! The `image` resource: a 16-byte header and pixels.
//!
//! ```text
//! offset size
//!      0    4  magic "AIMG"
//!      4    2  layout version, 1
//!      6    1  pixel format: 1 = RGBA8 straight alpha, 2 = RGBA8 premultiplied
//!      7    1  encoding: 0 = raw rows, top to bottom; 1 = a PNG stream;
//!              2 = the raw rows as one LZ4 block; 3 = the raw rows as one zstd frame
//!      8    4  width
//!     12    4  height
//!     16    …  payload: width × height × 4 bytes when raw
//! ```
//!
//! The header stays uncompressed whatever the encoding, so a parcel is
//! validated at open (sizes, sprites inside their pages) without
//! decompressing anything. [`Image::pixels`] gives the raw rows: borrowed
//! when raw, decompressed otherwise (features `lz4` and `zstd`, default).
//! It allocates up to the declared `width × height × 4` bytes: a game
//! reading parcels it did not build checks [`ImageHeader::raw_len`] against
//! its own limit first. The writer's half, `encode_pixels`, is behind `write`.

use std::borrow::Cow;
use std::fmt;

use crate::codec::{self, DecodeError};
use crate::format::{u16_at, u32_at};

/// Magic bytes of an image resource.
pub const IMAGE_MAGIC: [u8; 4] = *b"AIMG";
/// Length of the image header.
pub const IMAGE_HEADER_LEN: usize = 16;

/// How pixel channels relate to alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// RGBA, 8 bits each, straight alpha.
    Rgba8,
    /// RGBA, 8 bits each, color multiplied by alpha.
    Rgba8Premultiplied,
}

/// How the pixels are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Raw rows, ready to upload.
    Raw,
    /// A PNG stream, to decode first (with an image library).
    Png,
    /// Raw rows compressed as one LZ4 block (`lz4_flex`'s block format, no
    /// size prefix): fast to decode.
    Lz4,
    /// Raw rows compressed as one zstd frame: smaller.
    Zstd,
}

impl Encoding {
    /// Its name, as the pipeline's `encoding` setting spells it: `raw`,
    /// `png`, `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Raw => "raw",
            Encoding::Png => "png",
            Encoding::Lz4 => "lz4",
            Encoding::Zstd => "zstd",
        }
    }

    fn byte(self) -> u8 {
        match self {
            Encoding::Raw => 0,
            Encoding::Png => 1,
            Encoding::Lz4 => 2,
            Encoding::Zstd => 3,
        }
    }

    fn from_byte(byte: u8) -> Option<Encoding> {
        Some(match byte {
            0 => Encoding::Raw,
            1 => Encoding::Png,
            2 => Encoding::Lz4,
            3 => Encoding::Zstd,
            _ => return None,
        })
    }
}

/// The header of an image resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageHeader {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Channel layout.
    pub format: PixelFormat,
    /// Storage.
    pub encoding: Encoding,
}

impl ImageHeader {
    /// The 16 header bytes.
    pub fn encode(&self) -> [u8; IMAGE_HEADER_LEN] {
        let mut out = [0u8; IMAGE_HEADER_LEN];
        out[..4].copy_from_slice(&IMAGE_MAGIC);
        out[4..6].copy_from_slice(&1u16.to_le_bytes());
        out[6] = match self.format {
            PixelFormat::Rgba8 => 1,
            PixelFormat::Rgba8Premultiplied => 2,
        };
        out[7] = self.encoding.byte();
        out[8..12].copy_from_slice(&self.width.to_le_bytes());
        out[12..16].copy_from_slice(&self.height.to_le_bytes());
        out
    }

    /// The length of the raw rows, `width × height × 4`; `None` if that
    /// does not fit in memory's address space.
    pub fn raw_len(&self) -> Option<usize> {
        let len = u64::from(self.width)
            .checked_mul(u64::from(self.height))?
            .checked_mul(4)?;
        usize::try_from(len)
            .ok()
            .filter(|&n| n <= isize::MAX as usize)
    }

    /// Parses the header of an image resource and checks that a raw payload
    /// has exactly `width × height × 4` bytes (a compressed one is checked
    /// when decompressed). `None` if it is not an image.
    pub fn parse(bytes: &[u8]) -> Option<ImageHeader> {
        if bytes.len() < IMAGE_HEADER_LEN || bytes[..4] != IMAGE_MAGIC || u16_at(bytes, 4) != 1 {
            return None;
        }
        let format = match bytes[6] {
            1 => PixelFormat::Rgba8,
            2 => PixelFormat::Rgba8Premultiplied,
            _ => return None,
        };
        let header = ImageHeader {
            width: u32_at(bytes, 8),
            height: u32_at(bytes, 12),
            format,
            encoding: Encoding::from_byte(bytes[7])?,
        };
        let payload = bytes.len() - IMAGE_HEADER_LEN;
        match header.encoding {
            // Checked: a hostile header can claim 2^32 × 2^32 pixels (found by fuzzing).
            Encoding::Raw => (header.raw_len() == Some(payload)).then_some(header),
            Encoding::Lz4 | Encoding::Zstd => header.raw_len().map(|_| header),
            Encoding::Png => Some(header),
        }
    }
}

/// An image resource in a parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image<'a> {
    /// Its header.
    pub header: ImageHeader,
    /// The payload after the header: raw rows, a PNG stream, or compressed rows.
    pub data: &'a [u8],
}

impl<'a> Image<'a> {
    /// The raw rows (`width × height × 4` bytes, top to bottom): borrowed
    /// when stored raw, else decompressed. A PNG is not decoded here.
    pub fn pixels(&self) -> Result<Cow<'a, [u8]>, PixelsError> {
        let len = self.header.raw_len().ok_or(PixelsError::Corrupt)?;
        match self.header.encoding {
            Encoding::Raw => Ok(Cow::Borrowed(self.data)),
            Encoding::Png => Err(PixelsError::Png),
            Encoding::Lz4 => Ok(Cow::Owned(codec::decode_lz4(self.data, len)?)),
            Encoding::Zstd => Ok(Cow::Owned(codec::decode_zstd(self.data, len)?)),
        }
    }
}

/// Why [`Image::pixels`] gave no pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PixelsError {
    /// The image is a PNG stream: decode it with an image library.
    Png,
    /// The image is compressed with a codec this build leaves out.
    Disabled {
        /// The cargo feature of `assets-runtime` that decodes it.
        feature: &'static str,
    },
    /// The compressed rows do not decompress to `width × height × 4` bytes.
    Corrupt,
}

impl fmt::Display for PixelsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PixelsError::Png => {
                f.write_str("the image is a PNG stream; decode it with an image library")
            }
            PixelsError::Disabled { feature } => {
                write!(
                    f,
                    "the image is compressed with {feature}; enable the `{feature}` feature of assets-runtime"
                )
            }
            PixelsError::Corrupt => f.write_str("the image's compressed pixels are corrupt"),
        }
    }
}

impl std::error::Error for PixelsError {}

impl From<DecodeError> for PixelsError {
    fn from(e: DecodeError) -> PixelsError {
        match e {
            DecodeError::Disabled(feature) => PixelsError::Disabled { feature },
            DecodeError::Corrupt => PixelsError::Corrupt,
        }
    }
}

/// The payload of an image stored with `encoding` whose raw rows are `raw`
/// (feature `write`; zstd needs `write-zstd`, else `None`). PNG is not
/// made here: the pipeline encodes it with an image library.
#[cfg(feature = "write")]
pub fn encode_pixels(encoding: Encoding, raw: &[u8]) -> Option<Vec<u8>> {
    match encoding {
        Encoding::Raw => Some(raw.to_vec()),
        Encoding::Png => None,
        Encoding::Lz4 => Some(codec::encode_lz4(raw)),
        Encoding::Zstd => codec::encode_zstd(raw, ZSTD_LEVEL),
    }
}

/// [`encode_pixels`] written to the start of `scratch`, which grows as
/// needed and is never shrunk: the payload is `scratch[..len]` for the
/// returned `len`. For LZ4 the block is compressed straight into it, so a
/// caller that encodes many large images (an atlas's pages) reuses one
/// buffer instead of a worst case's worth of fresh memory for each; other
/// encodings are copied in.
#[cfg(feature = "write")]
pub fn encode_pixels_into(encoding: Encoding, raw: &[u8], scratch: &mut Vec<u8>) -> Option<usize> {
    if encoding == Encoding::Lz4 {
        return Some(codec::encode_lz4_into(raw, scratch));
    }
    let payload = encode_pixels(encoding, raw)?;
    if scratch.len() < payload.len() {
        scratch.resize(payload.len(), 0);
    }
    scratch[..payload.len()].copy_from_slice(&payload);
    Some(payload.len())
}

/// The zstd level of [`encode_pixels`] (and of compressed resources).
#[cfg(feature = "write")]
pub use crate::codec::ZSTD_LEVEL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_checks_the_payload_length() {
        let h = ImageHeader {
            width: 3,
            height: 2,
            format: PixelFormat::Rgba8Premultiplied,
            encoding: Encoding::Raw,
        };
        let mut bytes = h.encode().to_vec();
        assert_eq!(
            bytes,
            [b'A', b'I', b'M', b'G', 1, 0, 2, 0, 3, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(ImageHeader::parse(&bytes), None, "no pixels yet");
        bytes.extend_from_slice(&[0; 24]);
        assert_eq!(ImageHeader::parse(&bytes), Some(h));
        bytes.push(0);
        assert_eq!(ImageHeader::parse(&bytes), None);
    }

    /// Flat-coloured art under 64 KiB (4 × 4 px to a colour, as pixel art
    /// drawn at 4×) compresses as liblz4 compresses it, about tenfold:
    /// `lz4_flex`'s own table for small inputs hashes one pixel and made
    /// three times the bytes (`codec::encode_lz4`).
    #[cfg(feature = "write")]
    #[test]
    fn small_flat_coloured_art_compresses_tenfold_with_lz4() {
        let (width, height) = (76u32, 28u32);
        let mut raw = Vec::new();
        for y in 0..height {
            for x in 0..width {
                let v = (x / 4).wrapping_mul(0x9e37_79b9) ^ (y / 4).wrapping_mul(0x85eb_ca6b);
                raw.extend_from_slice(&[v as u8, (v >> 8) as u8, (v >> 16) as u8, 255]);
            }
        }
        let payload = encode_pixels(Encoding::Lz4, &raw).unwrap();
        assert!(
            payload.len() * 8 < raw.len(),
            "{} of {} bytes",
            payload.len(),
            raw.len()
        );
        let image = Image {
            header: ImageHeader {
                width,
                height,
                format: PixelFormat::Rgba8,
                encoding: Encoding::Lz4,
            },
            data: &payload,
        };
        assert_eq!(image.pixels().unwrap(), raw.as_slice());
    }

    /// Every encoding the writer makes decodes back to the same rows, and
    /// damaged or lying payloads are refused, not trusted.
    #[cfg(feature = "write-zstd")]
    #[test]
    fn compressed_pixels_round_trip_and_corruption_is_refused() {
        let (width, height) = (37u32, 11u32);
        let raw: Vec<u8> = (0..width * height * 4)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        for encoding in [Encoding::Raw, Encoding::Lz4, Encoding::Zstd] {
            let header = ImageHeader {
                width,
                height,
                format: PixelFormat::Rgba8,
                encoding,
            };
            let payload = encode_pixels(encoding, &raw).unwrap();
            let mut bytes = header.encode().to_vec();
            bytes.extend_from_slice(&payload);
            let parsed = ImageHeader::parse(&bytes).unwrap();
            let image = Image {
                header: parsed,
                data: &bytes[IMAGE_HEADER_LEN..],
            };
            assert_eq!(image.pixels().unwrap(), raw.as_slice(), "{encoding:?}");
            if encoding != Encoding::Raw {
                assert!(
                    payload.len() < raw.len() / 2,
                    "{encoding:?}: {} bytes",
                    payload.len()
                );
                let truncated = Image {
                    header: parsed,
                    data: &payload[..payload.len() / 2],
                };
                assert_eq!(
                    truncated.pixels(),
                    Err(PixelsError::Corrupt),
                    "{encoding:?}"
                );
                let taller = ImageHeader {
                    height: height + 1,
                    ..parsed
                };
                let lying = Image {
                    header: taller,
                    data: &payload,
                };
                assert_eq!(lying.pixels(), Err(PixelsError::Corrupt), "{encoding:?}");
            }
        }
        let png = Image {
            header: ImageHeader {
                width,
                height,
                format: PixelFormat::Rgba8,
                encoding: Encoding::Png,
            },
            data: b"not decoded here",
        };
        assert_eq!(png.pixels(), Err(PixelsError::Png));
    }

    #[test]
    fn an_lz4_header_claiming_far_more_than_its_payload_is_refused_before_allocating() {
        let huge = ImageHeader {
            width: 60_000,
            height: 60_000,
            format: PixelFormat::Rgba8,
            encoding: Encoding::Lz4,
        };
        let image = Image {
            header: huge,
            data: &[0; 64],
        };
        assert_eq!(image.pixels(), Err(PixelsError::Corrupt));
    }

    #[test]
    fn a_header_claiming_four_billion_squared_pixels_is_rejected_not_overflowed() {
        // Regression: fuzz/artifacts crash-d1038f04 (width × height × 4 overflowed u64).
        let huge = ImageHeader {
            width: u32::MAX,
            height: u32::MAX,
            format: PixelFormat::Rgba8,
            encoding: Encoding::Raw,
        };
        let mut bytes = huge.encode().to_vec();
        bytes.extend_from_slice(&[0; 64]);
        assert_eq!(ImageHeader::parse(&bytes), None);
    }
}
