//! The two compressors the parcel format uses, in one place: LZ4 (one block,
//! `lz4_flex`'s block format with no size prefix; fast to decode, the dev
//! default) and zstd (one frame; smaller, the release default). Both the
//! image layout's compressed rows and compressed resources use them.
//!
//! Decoding takes the length the caller was told to expect (the image
//! header's `width × height × 4`, or the entry's uncompressed length) and
//! fails unless exactly that many bytes come out. It never allocates more
//! than the real output: LZ4 expands at most 255-fold, so a claim beyond
//! that is refused before allocating, and zstd is read as a stream that
//! stops one byte past the claim. A claim within those bounds is still
//! allocated as the output grows: a game reading parcels it did not build
//! checks the claimed length against its own limit first.
//!
//! Decoders are pure Rust (features `lz4` and `zstd` of this crate, on by
//! default), so they build for wasm32 and in build scripts without a C
//! compiler. The writer's zstd is the C library (feature `write-zstd`).

use crate::format::Compression;
#[cfg(feature = "write")]
pub(crate) use crate::lz4_pieces::{compress_lz4_in_pieces, lz4_block_bound};

/// Why compressed bytes gave nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// This build leaves the codec out; the named cargo feature brings it.
    #[cfg_attr(all(feature = "lz4", feature = "zstd"), allow(dead_code))]
    Disabled(&'static str),
    /// The bytes are not a stream of the codec, or do not decompress to the
    /// length expected.
    Corrupt,
}

/// LZ4 expands at most 255-fold (plus a few bytes): the most `stored`
/// compressed bytes can claim.
pub(crate) fn lz4_bound(stored: usize) -> usize {
    stored.saturating_mul(255).saturating_add(16)
}

/// The most `stored` bytes of `compression` can decompress to: a zstd block
/// of at least 4 bytes (an RLE block: 3 of header, 1 to repeat) gives at
/// most 128 KiB.
pub(crate) fn expand_bound(compression: Compression, stored: usize) -> usize {
    match compression {
        Compression::None => stored,
        Compression::Lz4 => lz4_bound(stored),
        Compression::Zstd => stored.div_ceil(4).saturating_mul(128 << 10),
    }
}

/// Decompresses `data` to exactly `len` bytes.
pub(crate) fn decode(
    compression: Compression,
    data: &[u8],
    len: usize,
) -> Result<Vec<u8>, DecodeError> {
    match compression {
        Compression::None if data.len() == len => Ok(data.to_vec()),
        Compression::None => Err(DecodeError::Corrupt),
        Compression::Lz4 => decode_lz4(data, len),
        Compression::Zstd => decode_zstd(data, len),
    }
}

/// `raw` compressed with `compression`; `None` for zstd without the
/// `write-zstd` feature.
#[cfg(feature = "write")]
pub(crate) fn encode(compression: Compression, raw: &[u8]) -> Option<Vec<u8>> {
    match compression {
        Compression::None => Some(raw.to_vec()),
        Compression::Lz4 => Some(encode_lz4(raw)),
        Compression::Zstd => encode_zstd(raw, RESOURCE_ZSTD_LEVEL),
    }
}

#[cfg(feature = "lz4")]
pub(crate) fn decode_lz4(data: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
    if len > lz4_bound(data.len()) {
        return Err(DecodeError::Corrupt);
    }
    let mut out = vec![0; len];
    match lz4_flex::block::decompress_into(data, &mut out) {
        Ok(n) if n == len => Ok(out),
        _ => Err(DecodeError::Corrupt),
    }
}

#[cfg(not(feature = "lz4"))]
pub(crate) fn decode_lz4(_: &[u8], _: usize) -> Result<Vec<u8>, DecodeError> {
    Err(DecodeError::Disabled("lz4"))
}

#[cfg(feature = "zstd")]
pub(crate) fn decode_zstd(data: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
    use std::io::Read as _;
    let decoder =
        ruzstd::decoding::StreamingDecoder::new(data).map_err(|_| DecodeError::Corrupt)?;
    // Grows with the real output (at most one byte past the claim), so a
    // frame that claims more than it holds costs only what it holds.
    let mut out = Vec::with_capacity(len.min(data.len().saturating_mul(8)));
    let limit = u64::try_from(len).map_or(u64::MAX, |n| n.saturating_add(1));
    match decoder.take(limit).read_to_end(&mut out) {
        Ok(n) if n == len => Ok(out),
        _ => Err(DecodeError::Corrupt),
    }
}

#[cfg(not(feature = "zstd"))]
pub(crate) fn decode_zstd(_: &[u8], _: usize) -> Result<Vec<u8>, DecodeError> {
    Err(DecodeError::Disabled("zstd"))
}

/// The zstd level of image rows: measured on game art in BENCHMARKS.md (the
/// "Image encodings" table): level 3 leaves real art at 1.15× its PNG files,
/// level 9 at 0.98×.
#[cfg(feature = "write")]
pub const ZSTD_LEVEL: i32 = 9;

/// The zstd level of compressed resources (text, models, bytes): on the
/// non-image files of a real tree (BENCHMARKS.md, "A real asset tree"),
/// level 9 saves 1.3% over level 3 for four times the time, a cost every
/// release build that rewrites a parcel would pay.
#[cfg(feature = "write")]
pub const RESOURCE_ZSTD_LEVEL: i32 = 3;

/// One LZ4 block of `raw`: compressed in pieces past
/// [`LZ4_PIECE`](crate::lz4_pieces::LZ4_PIECE) bytes
/// and joined (see `lz4_pieces.rs`), so a writer with cores to spare makes
/// the same bytes in parallel.
#[cfg(feature = "write")]
pub(crate) fn encode_lz4(raw: &[u8]) -> Vec<u8> {
    // Written into this thread's scratch buffer and copied out at its real
    // size. A buffer of the bound made afresh for each image was zeroed
    // whole (and its pages faulted in) to receive a block a tenth its
    // size: a tenth of a cold build's time went there. Past the scratch's
    // size (atlas pages), a buffer of the bound is made for the one block.
    if lz4_block_bound(raw.len()) > LZ4_SCRATCH_MAX {
        let mut out = Vec::new();
        let len = encode_lz4_into(raw, &mut out);
        out.truncate(len);
        return out;
    }
    LZ4_SCRATCH.with_borrow_mut(|scratch| {
        let len = encode_lz4_into(raw, scratch);
        scratch[..len].to_vec()
    })
}

/// [`encode_lz4`]'s block written to the start of `scratch`, grown (never
/// shrunk) to the worst case first; its length. A caller compressing many
/// large images reuses one scratch buffer instead of a bound's worth of
/// fresh memory each.
#[cfg(feature = "write")]
pub(crate) fn encode_lz4_into(raw: &[u8], scratch: &mut Vec<u8>) -> usize {
    let bound = lz4_block_bound(raw.len());
    if scratch.len() < bound {
        scratch.resize(bound, 0);
    }
    LZ4_PIECE_SCRATCH.with_borrow_mut(|piece| compress_lz4_in_pieces(raw, scratch, piece))
}

/// The largest LZ4 bound served from [`LZ4_SCRATCH`]: an image of 4 MiB of
/// rows (1024 × 1024 RGBA8) and everything smaller, the bulk of a game's
/// images; larger ones (atlas pages) allocate, rarely enough not to matter,
/// and no thread keeps tens of megabytes for them.
#[cfg(feature = "write")]
const LZ4_SCRATCH_MAX: usize = lz4_flex::block::get_maximum_output_size(4 << 20);

#[cfg(feature = "write")]
thread_local! {
    static LZ4_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// One piece's block, before it is joined (a piece's bound: 1 MiB).
    static LZ4_PIECE_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `None` without the `write-zstd` feature (the C library).
#[cfg(feature = "write-zstd")]
pub(crate) fn encode_zstd(raw: &[u8], level: i32) -> Option<Vec<u8>> {
    Some(zstd_encoder::bulk::compress(raw, level).expect("compressing to memory cannot fail"))
}

#[cfg(all(feature = "write", not(feature = "write-zstd")))]
pub(crate) fn encode_zstd(_: &[u8], _: i32) -> Option<Vec<u8>> {
    None
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::*;

    /// A block is the same bytes whichever way it is made: into a scratch
    /// buffer holding an earlier block's bytes, or (past the thread's
    /// scratch size) into a buffer of its own; in pieces past one piece.
    #[test]
    fn a_block_is_the_same_into_a_dirty_scratch_buffer_and_past_the_scratch_size() {
        let reference = |raw: &[u8]| {
            let mut out = vec![0; lz4_block_bound(raw.len())];
            let len = compress_lz4_in_pieces(raw, &mut out, &mut Vec::new());
            out.truncate(len);
            out
        };
        let large: Vec<u8> = (0..(5u32 << 20))
            .map(|i| ((i / 4096) ^ (i % 97)) as u8)
            .collect();
        let small: Vec<u8> = (0..50_000u32).map(|i| (i / 16) as u8).collect();
        let mut scratch = vec![0xAA; 7];
        for raw in [&large, &small] {
            assert_eq!(encode_lz4(raw), reference(raw));
            let len = encode_lz4_into(raw, &mut scratch);
            assert_eq!(scratch[..len], reference(raw)[..]);
        }
    }

    /// The scratch buffer keeps the bytes of the last (larger) block; a
    /// smaller block after it must come out alone and whole, as must one
    /// too large for the scratch buffer.
    #[test]
    fn blocks_after_a_larger_one_and_past_the_scratch_size_round_trip() {
        let noisy: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let small: Vec<u8> = (0..5_000u32).map(|i| (i / 64) as u8).collect();
        let large = vec![9u8; (4 << 20) + 1];
        for raw in [&noisy, &small, &large, &small] {
            let block = encode_lz4(raw);
            assert_eq!(decode_lz4(&block, raw.len()).as_deref(), Ok(raw.as_slice()));
        }
    }
}
