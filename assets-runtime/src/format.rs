//! The parcel file format, version 2. Every integer is little-endian.
//!
//! ```text
//! offset        size            contents
//! 0             64              header
//! 64            4 × (B + 1)     bucket table: B = 2^bucket_bits; u32 start index per bucket, then count
//! …             72 × count      entry table, sorted by id
//! names_offset  names_len       UTF-8 names and kind names, referenced by entries
//! …             0–15            zero padding to a multiple of 16
//! data_offset   data_len        resource bytes as stored, each starting at a multiple of 16, zero padding between
//!
//! header
//!  0   8  magic            "CAPARCEL"
//!  8   2  version          2; a reader rejects any other
//! 10   2  header_len       64
//! 12   4  flags            0, or FLAG_PATCH (1) in a patch whose sprites and fonts may lie on its base's pages
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
//! 32   8  stored_len       bytes in the data area
//! 40   8  stored_checksum  xxh3-64 of the stored bytes
//! 48   8  len              bytes once decompressed; = stored_len when not compressed
//! 56   8  checksum         xxh3-64 of the bytes once decompressed; = stored_checksum when not compressed
//! 64   1  compression      0 = none, 1 = one LZ4 block, 2 = one zstd frame (see `Compression`)
//! 65   7  zero (reserved)
//! ```
//!
//! Version 2 added compression (version 1 entries were 48 bytes: no
//! `len`, `checksum` or `compression`). Compression is per resource: the
//! writer compresses a resource when that makes it smaller, and never
//! compresses `image` and `sprite` resources, whose layouts the reader
//! checks at open (an image's rows have their own encodings, see
//! [`crate::image`]). A resource that is not compressed is read in place,
//! without a copy; a compressed one is decompressed when asked for.
//!
//! What is checked, and when:
//!
//! | when                  | what |
//! |-----------------------|------|
//! | `Parcel::from_bytes`  | magic, version, every offset and length (with overflow checks), the table checksum, buckets consistent with ids, ids strictly increasing, names and kinds UTF-8, resources inside the data area, 16-aligned, not overlapping, zero padding in the tables and names, known compression and zero reserved bytes, lengths and checksums equal when not compressed, no compressed image or sprite, a compressed length within what its codec can expand to, text and shader resources UTF-8 (when not compressed), image headers consistent with their length, sprite frames well-formed and inside an image resource of the parcel (a patch's: of the patch, or of its base when `Patched::new` joins them) |
//! | reading a compressed resource | its stored checksum, that it decompresses to exactly `len` bytes with `checksum`, and (text, shader) UTF-8 |
//! | `Parcel::verify`      | each resource's stored checksum, each compressed resource as when read, and the zero padding between resources (reading every byte of the data area, so it is not done at open) |
//!
//! Every byte of a file is therefore covered: the header and tables by the
//! table checksum, padding by the zero checks (the tables' at open, the data
//! area's by `verify`), resource bytes by their checksums.

/// Header flag of a patch (see [`crate::patch`]) that holds only the pages
/// that changed: its sprites and fonts may lie on its base's pages, so it
/// is read through its base, never alone. Any other flag is rejected.
pub const FLAG_PATCH: u32 = 1;

/// The first eight bytes of every parcel.
pub const MAGIC: [u8; 8] = *b"CAPARCEL";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 2;
/// Length of the header.
pub const HEADER_LEN: usize = 64;
/// Length of one entry.
pub const ENTRY_LEN: usize = 72;
/// Alignment of the data area and of every resource in it.
pub const DATA_ALIGN: usize = 16;
/// The largest `bucket_bits` a reader accepts (16M buckets).
pub const MAX_BUCKET_BITS: u32 = 24;

/// How a resource's bytes are stored: the entry's `compression` byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// As they are: read in place.
    None,
    /// One LZ4 block (`lz4_flex`'s block format, no size prefix): fast to
    /// decompress (feature `lz4`).
    Lz4,
    /// One zstd frame: smaller (feature `zstd`).
    Zstd,
}

impl Compression {
    /// Its name, as the pipeline's `compression` setting spells it: `none`,
    /// `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The compression named `name`, as [`name`](Compression::name) spells it.
    pub fn from_name(name: &str) -> Option<Compression> {
        [Compression::None, Compression::Lz4, Compression::Zstd]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// The entry's byte for it.
    pub fn byte(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd => 2,
        }
    }

    /// The compression an entry's byte names, if any.
    pub fn from_byte(byte: u8) -> Option<Compression> {
        Some(match byte {
            0 => Compression::None,
            1 => Compression::Lz4,
            2 => Compression::Zstd,
            _ => return None,
        })
    }
}

/// Kind name of raw bytes.
pub const KIND_BYTES: &str = "bytes";
/// Kind name of UTF-8 text.
pub const KIND_TEXT: &str = "text";
/// Kind name of shader source (WGSL, WESL): UTF-8 text, checked as text is.
pub const KIND_SHADER: &str = "shader";
/// Kind name of images (see [`crate::image`]).
pub const KIND_IMAGE: &str = "image";
/// Kind name of sprite frames (see [`crate::sprite`]).
pub const KIND_SPRITE: &str = "sprite";
/// Kind name of baked fonts (see [`crate::font`]).
pub const KIND_FONT: &str = "font";
/// Kind name of GPU textures in a KTX2 container (see [`crate::texture`]).
pub const KIND_TEXTURE: &str = "texture";
/// Kind name of glTF models: one binary glTF (GLB) each, whose external
/// buffers and textures are resources of their own, named by URI.
pub const KIND_GLTF: &str = "gltf";
/// Kind name of sounds (see [`crate::audio`]).
pub const KIND_AUDIO: &str = "audio";
/// Kind name of animations: frames in atlas pages, their durations and
/// tags (see [`crate::animation`]).
pub const KIND_ANIMATION: &str = "animation";
/// Kind name of tile maps: layers of cells, tilesets, objects and
/// properties (see [`crate::tilemap`]).
pub const KIND_TILEMAP: &str = "tilemap";
/// Kind name of a removal mark: in a patch (see [`crate::patch`]), an empty
/// resource saying that the base's resource of that name is gone.
pub const KIND_REMOVED: &str = "removed";
/// Kind name of an alias: an old name kept answering after its asset was
/// renamed (the manifest's `aliases`). Its bytes are the UTF-8 name of the
/// resource it stands for; `Parcel::get` and `by_name` follow it, once.
pub const KIND_ALIAS: &str = "alias";

/// Whether resources of `kind` are always stored as they are: images,
/// sprites, fonts, animations, textures and sounds, whose layouts are checked when the
/// parcel is opened (a sprite or glyph against its page) and read in place
/// (a texture's levels go to the GPU as they lie in the parcel; a sound's
/// file is compressed already).
pub fn stored_uncompressed(kind: &str) -> bool {
    matches!(
        kind,
        KIND_IMAGE
            | KIND_SPRITE
            | KIND_FONT
            | KIND_ANIMATION
            | KIND_TEXTURE
            | KIND_AUDIO
            | KIND_ALIAS
    )
}

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

/// The length of a layout of a `header` followed by tables of `(count,
/// bytes each)`, or `None` if it overflows: what a resource whose header
/// states its counts must be exactly (fonts, animations).
pub(crate) fn tables_len(header: usize, tables: &[(usize, usize)]) -> Option<usize> {
    (tables.iter()).try_fold(header, |sum, &(n, each)| {
        n.checked_mul(each).and_then(|b| b.checked_add(sum))
    })
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

/// The table checksum a parcel's header states (bytes 56..64), if `header`
/// is at least a header's length and starts with [`MAGIC`]. Not checked
/// against the tables (opening the parcel does that): enough for a
/// program that wrote the parcel to tell which version of it a file is
/// without reading more than its header.
pub fn stated_table_checksum(header: &[u8]) -> Option<u64> {
    (header.len() >= HEADER_LEN && header.starts_with(&MAGIC)).then(|| u64_at(header, 56))
}

/// The checksum of one resource's bytes.
pub(crate) fn data_checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
