//! The `image` resource: a 16-byte header and pixels.
//!
//! ```text
//! offset size
//!      0    4  magic "AIMG"
//!      4    2  layout version, 1
//!      6    1  pixel format: 1 = RGBA8 straight alpha, 2 = RGBA8 premultiplied
//!      7    1  encoding: 0 = raw rows, top to bottom; 1 = a PNG stream
//!      8    4  width
//!     12    4  height
//!     16    …  payload: width × height × 4 bytes when raw
//! ```

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
    /// A PNG stream, to decode first.
    Png,
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
        out[7] = match self.encoding {
            Encoding::Raw => 0,
            Encoding::Png => 1,
        };
        out[8..12].copy_from_slice(&self.width.to_le_bytes());
        out[12..16].copy_from_slice(&self.height.to_le_bytes());
        out
    }

    /// Parses the header of an image resource and checks that a raw payload
    /// has exactly `width × height × 4` bytes. `None` if it is not an image.
    pub fn parse(bytes: &[u8]) -> Option<ImageHeader> {
        if bytes.len() < IMAGE_HEADER_LEN || bytes[..4] != IMAGE_MAGIC || u16_at(bytes, 4) != 1 {
            return None;
        }
        let format = match bytes[6] {
            1 => PixelFormat::Rgba8,
            2 => PixelFormat::Rgba8Premultiplied,
            _ => return None,
        };
        let encoding = match bytes[7] {
            0 => Encoding::Raw,
            1 => Encoding::Png,
            _ => return None,
        };
        let header = ImageHeader {
            width: u32_at(bytes, 8),
            height: u32_at(bytes, 12),
            format,
            encoding,
        };
        if encoding == Encoding::Raw {
            // Checked: a hostile header can claim 2^32 × 2^32 pixels (found by fuzzing).
            let expected = u64::from(header.width)
                .checked_mul(u64::from(header.height))
                .and_then(|n| n.checked_mul(4));
            if expected != Some((bytes.len() - IMAGE_HEADER_LEN) as u64) {
                return None;
            }
        }
        Some(header)
    }
}

/// An image resource in a parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image<'a> {
    /// Its header.
    pub header: ImageHeader,
    /// The payload after the header: raw rows or a PNG stream.
    pub data: &'a [u8],
}

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
