//! The KTX2 container (Khronos KTX File Format 2.0): header, level index,
//! data format descriptor, then the levels, smallest first, each aligned to
//! its block size and 4 bytes. The header and index layouts are the `ktx2`
//! crate's (`Header`, `LevelIndex`, `DfdHeader`, `SampleInformation`).

use assets_runtime::TextureFormat;
use ktx2::{
    ChannelTypeQualifiers, ColorModel, ColorPrimaries, DataFormatFlags, DfdBlockHeaderBasic,
    DfdHeader, Header, Index, LevelIndex, SampleInformation, TransferFunction,
};

/// A KTX2 file of `format`, `width × height`, holding `levels` (level 0
/// first, each already in `format`).
pub fn write(format: TextureFormat, width: u32, height: u32, levels: &[Vec<u8>]) -> Vec<u8> {
    let dfd = descriptor(format);
    let index_at = Header::LENGTH;
    let dfd_at = index_at + levels.len() * LevelIndex::LENGTH;
    let mut data_at = dfd_at + dfd.len();
    let align = lcm(format.block_bytes() as usize, 4);
    // Levels lie smallest first; the index lists level 0 first.
    let mut offsets = vec![0usize; levels.len()];
    for (i, level) in levels.iter().enumerate().rev() {
        data_at = data_at.next_multiple_of(align);
        offsets[i] = data_at;
        data_at += level.len();
    }
    let header = Header {
        format: Some(format.vk_format()),
        type_size: 1,
        pixel_width: width,
        pixel_height: height,
        pixel_depth: 0,
        layer_count: 0,
        face_count: 1,
        level_count: levels.len() as u32,
        supercompression_scheme: None,
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
    for (level, &offset) in levels.iter().zip(&offsets) {
        let index = LevelIndex {
            byte_offset: offset as u64,
            byte_length: level.len() as u64,
            uncompressed_byte_length: level.len() as u64,
        };
        out.extend_from_slice(&index.as_bytes());
    }
    out.extend_from_slice(&dfd);
    for (i, level) in levels.iter().enumerate().rev() {
        out.resize(offsets[i], 0);
        out.extend_from_slice(level);
    }
    out
}

fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
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
        F::Bc1RgbaUnorm | F::Bc1RgbaUnormSrgb => (ColorModel::BC1A, vec![sample(0, 0, 64, false)]),
        F::Bc3RgbaUnorm | F::Bc3RgbaUnormSrgb => (
            ColorModel::BC3,
            vec![sample(15, 0, 64, true), sample(0, 64, 64, false)],
        ),
        F::Bc4RUnorm => (ColorModel::BC4, vec![sample(0, 0, 64, false)]),
        F::Bc5RgUnorm => (
            ColorModel::BC5,
            vec![sample(0, 0, 64, false), sample(1, 64, 64, false)],
        ),
        F::Bc7RgbaUnorm | F::Bc7RgbaUnormSrgb => (ColorModel::BC7, vec![sample(0, 0, 128, false)]),
        F::Etc2Rgb8Unorm | F::Etc2Rgb8UnormSrgb => {
            (ColorModel::ETC2, vec![sample(0, 0, 64, false)])
        }
        _ => (ColorModel::RGBSDA, Vec::new()),
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
    let block_size =
        DfdHeader::LENGTH + DfdBlockHeaderBasic::LENGTH + samples.len() * SampleInformation::LENGTH;
    let mut out = Vec::with_capacity(4 + block_size);
    out.extend_from_slice(&((4 + block_size) as u32).to_le_bytes());
    out.extend_from_slice(&DfdHeader::BASIC.as_bytes(block_size as u16));
    out.extend_from_slice(&basic.as_bytes());
    for s in samples {
        out.extend_from_slice(&s.as_bytes());
    }
    out
}
