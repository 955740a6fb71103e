//! The parcel file format, version 1. Every integer is little-endian.
//!
//! ```text
//! offset        size            contents
//! 0             64              header
//! 64            4 × (B + 1)     bucket table: B = 2^bucket_bits; u32 start index per bucket, then count
//! …             48 × count      entry table, sorted by id
//! names_offset  names_len       UTF-8 names and kind names, referenced by entries
//! …             0–15            zero padding to a multiple of 16
//! data_offset   data_len        resource bytes, each starting at a multiple of 16, zero padding between
//!
//! header
//!  0   8  magic            "CAPARCEL"
//!  8   2  version          1; a reader rejects any other
//! 10   2  header_len       64
//! 12   4  flags            0 (reserved)
//! 16   4  count            number of entries
//! 20   4  bucket_bits      B = 2^bucket_bits buckets; an id's bucket is its top bucket_bits bits
//! 24   8  names_offset
//! 32   8  names_len
//! 40   8  data_offset      a multiple of 16
//! 48   8  data_len         data_offset + data_len = file length
//! 56   8  table_checksum   xxh3-64 of bytes 0..56 and of everything from 64 up to data_offset
//!
//! entry
//!  0   8  id               ResourceId: xxh3-64 of the name (see `id`)
//!  8   4  name_offset      into the names area
//! 12   4  name_len
//! 16   4  kind_offset      into the names area: "bytes", "text", "image" or a user kind
//! 20   4  kind_len
//! 24   8  data_offset      relative to data_offset of the header, a multiple of 16
//! 32   8  data_len
//! 40   8  data_checksum    xxh3-64 of the resource bytes
//! ```
//!
//! What is checked, and when:
//!
//! | when                  | what |
//! |-----------------------|------|
//! | `Parcel::from_bytes`  | magic, version, every offset and length (with overflow checks), the table checksum, buckets consistent with ids, ids strictly increasing, names and kinds UTF-8, resources inside the data area, 16-aligned, not overlapping, zero padding in the tables and names, text resources UTF-8, image headers consistent with their length, sprite frames well-formed and inside an image resource of the parcel |
//! | `Parcel::verify`      | each resource's data checksum and the zero padding between resources (reading every byte of the data area, so it is not done at open) |
//!
//! Every byte of a file is therefore covered: the header and tables by the
//! table checksum, padding by the zero checks (the tables' at open, the data
//! area's by `verify`), resource bytes by their checksums.

/// The first eight bytes of every parcel.
pub const MAGIC: [u8; 8] = *b"CAPARCEL";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// Length of the header.
pub const HEADER_LEN: usize = 64;
/// Length of one entry.
pub const ENTRY_LEN: usize = 48;
/// Alignment of the data area and of every resource in it.
pub const DATA_ALIGN: usize = 16;
/// The largest `bucket_bits` a reader accepts (16M buckets).
pub const MAX_BUCKET_BITS: u32 = 24;

/// Kind name of raw bytes.
pub const KIND_BYTES: &str = "bytes";
/// Kind name of UTF-8 text.
pub const KIND_TEXT: &str = "text";
/// Kind name of images (see [`crate::image`]).
pub const KIND_IMAGE: &str = "image";
/// Kind name of sprite frames (see [`crate::sprite`]).
pub const KIND_SPRITE: &str = "sprite";

/// `bucket_bits` for `count` entries: about one entry per bucket.
pub fn bucket_bits_for(count: usize) -> u32 {
    (usize::BITS - count.saturating_sub(1).leading_zeros()).min(MAX_BUCKET_BITS)
}

/// The bucket of `id` with `bits` bucket bits.
pub fn bucket_of(id: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (id >> (64 - bits)) as usize
    }
}

/// Reads a little-endian u16 at `at`; the caller has checked bounds.
pub(crate) fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// Reads a little-endian u32 at `at`; the caller has checked bounds.
pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// Reads a little-endian u64 at `at`; the caller has checked bounds.
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The table checksum of a parcel whose header and tables are
/// `bytes[..data_offset]`: xxh3-64 of bytes 0..56, then of 64..data_offset.
/// `data_offset` must lie within `64..=bytes.len()`.
pub fn table_checksum(bytes: &[u8], data_offset: usize) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&bytes[..56]);
    h.update(&bytes[HEADER_LEN..data_offset]);
    h.digest()
}

/// The checksum of one resource's bytes.
pub(crate) fn data_checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
