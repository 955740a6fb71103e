//! Opening a parcel: every check of [`crate::format`] but the resources'
//! checksums, made once, so that afterwards every lookup is a slice into
//! bytes known to be well-formed (see the table in `format.rs` for what is
//! checked and why). Split from `parcel.rs`, which reads what this accepts.

use crate::animation::Animation;
use crate::audio::Audio;
use crate::codec;
use crate::error::ParcelError;
use crate::font::Font;
use crate::format::{
    Compression, DATA_ALIGN, ENTRY_LEN, FLAG_PATCH, HEADER_LEN, KIND_ANIMATION, KIND_AUDIO,
    KIND_FONT, KIND_IMAGE, KIND_SHADER, KIND_SPRITE, KIND_TEXT, KIND_TEXTURE, MAGIC,
    MAX_BUCKET_BITS, VERSION, bucket_of, stored_uncompressed, table_checksum, u16_at, u32_at,
    u64_at,
};
use crate::id::ResourceId;
use crate::image::ImageHeader;
use crate::sprite::SpriteFrame;
use crate::texture::Texture;

/// Where things are in a validated parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub count: usize,
    pub bucket_bits: u32,
    pub entries_at: usize,
    pub names_at: usize,
    pub data_at: usize,
}

/// What [`validate`] found: where things are, and the sprite frames (with
/// their resources' indices) whose pages the reader checks next, through
/// lookups these checks made safe (in `parcel.rs`).
pub(crate) struct Validated {
    pub layout: Layout,
    pub sprites: Vec<(usize, SpriteFrame)>,
    /// Whether every page must be in these bytes (not a patch's, whose
    /// pages may be its base's: checked with the base).
    pub own_pages: bool,
}

/// What bytes are validated as: a parcel read on its own, or a patch read
/// through its base (see [`crate::patch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Whole,
    Patch,
}

/// Every check of [`crate::format`] except resource checksums; as `role`
/// has it, a patch's sprites and fonts may lack their pages, which
/// [`crate::Patched::new`] looks for in the base.
pub(crate) fn validate(bytes: &[u8], role: Role) -> Result<Validated, ParcelError> {
    let header = |what| ParcelError::BadHeader { what };
    if bytes.len() < HEADER_LEN {
        return Err(ParcelError::TooShort { len: bytes.len() });
    }
    if bytes[..8] != MAGIC {
        return Err(ParcelError::BadMagic);
    }
    let version = u16_at(bytes, 8);
    if version != VERSION {
        return Err(ParcelError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    if usize::from(u16_at(bytes, 10)) != HEADER_LEN {
        return Err(header("header length is not 64"));
    }
    let flags = u32_at(bytes, 12);
    match (flags, role) {
        (0, _) | (FLAG_PATCH, Role::Patch) => {}
        (FLAG_PATCH, Role::Whole) => return Err(ParcelError::IsPatch),
        _ => return Err(header("unknown flags")),
    }
    let own_pages = flags & FLAG_PATCH == 0;
    let count = u32_at(bytes, 16) as usize;
    let bucket_bits = u32_at(bytes, 20);
    if bucket_bits > MAX_BUCKET_BITS {
        return Err(header("too many buckets"));
    }
    let buckets = 1usize << bucket_bits;
    let entries_at = HEADER_LEN + 4 * (buckets + 1);
    let names_at = count
        .checked_mul(ENTRY_LEN)
        .and_then(|n| n.checked_add(entries_at))
        .ok_or(header("entry count overflows"))?;
    if to_usize(u64_at(bytes, 24), "names offset")? != names_at {
        return Err(header("names do not follow the entry table"));
    }
    let names_len = to_usize(u64_at(bytes, 32), "names length")?;
    let names_end = names_at
        .checked_add(names_len)
        .ok_or(header("names length overflows"))?;
    let data_at = names_end
        .checked_next_multiple_of(DATA_ALIGN)
        .ok_or(header("names length overflows"))?;
    if to_usize(u64_at(bytes, 40), "data offset")? != data_at {
        return Err(header("data does not follow the names"));
    }
    let data_len = to_usize(u64_at(bytes, 48), "data length")?;
    if data_at.checked_add(data_len) != Some(bytes.len()) {
        return Err(header("file length does not match the header"));
    }
    if table_checksum(bytes, data_at) != u64_at(bytes, 56) {
        return Err(ParcelError::TableChecksum);
    }
    if let Some(i) = bytes[names_end..data_at].iter().position(|&b| b != 0) {
        return Err(ParcelError::NonZeroPadding {
            offset: names_end + i,
        });
    }
    let bucket = |k: usize| u32_at(bytes, HEADER_LEN + 4 * k) as usize;
    if bucket(0) != 0 || bucket(buckets) != count || (0..buckets).any(|k| bucket(k) > bucket(k + 1))
    {
        return Err(header("bucket table is inconsistent"));
    }
    let names = &bytes[names_at..names_end];
    let data = &bytes[data_at..];
    let mut spans: Vec<(usize, usize, usize)> = Vec::with_capacity(count);
    let mut previous_id = None;
    let mut sprites = Vec::new();
    for index in 0..count {
        let bad = |what| ParcelError::BadEntry { index, what };
        let e = entries_at + index * ENTRY_LEN;
        let id = u64_at(bytes, e);
        if previous_id.is_some_and(|p| p >= id) {
            return Err(bad("ids are not strictly increasing"));
        }
        previous_id = Some(id);
        let b = bucket_of(id, bucket_bits);
        if !(bucket(b)..bucket(b + 1)).contains(&index) {
            return Err(bad("entry is not in its id's bucket"));
        }
        let text = |offset_at: usize, len_at: usize, what| {
            let start = u32_at(bytes, e + offset_at) as usize;
            let len = u32_at(bytes, e + len_at) as usize;
            let slice = start
                .checked_add(len)
                .and_then(|end| names.get(start..end))
                .ok_or(bad(what))?;
            std::str::from_utf8(slice).map_err(|_| bad("name or kind is not UTF-8"))
        };
        let name = text(8, 12, "name is outside the names area")?;
        if ResourceId::of_runtime(name).raw() != id {
            return Err(bad("id is not the hash of the name"));
        }
        let kind = text(16, 20, "kind is outside the names area")?;
        if kind.is_empty() {
            return Err(bad("kind is empty"));
        }
        let start = to_usize(u64_at(bytes, e + 24), "data offset")
            .map_err(|_| bad("data offset overflows"))?;
        let len = to_usize(u64_at(bytes, e + 32), "data length")
            .map_err(|_| bad("data length overflows"))?;
        if start % DATA_ALIGN != 0 {
            return Err(bad("data is not 16-byte aligned"));
        }
        let resource = start
            .checked_add(len)
            .and_then(|end| data.get(start..end))
            .ok_or(bad("data is outside the file"))?;
        let compression =
            Compression::from_byte(bytes[e + 64]).ok_or(bad("unknown compression"))?;
        if bytes[e + 65..e + ENTRY_LEN].iter().any(|&b| b != 0) {
            return Err(bad("reserved bytes are not zero"));
        }
        let stored_len = len as u64;
        let (stored_checksum, full_len, checksum) = (
            u64_at(bytes, e + 40),
            u64_at(bytes, e + 48),
            u64_at(bytes, e + 56),
        );
        if compression == Compression::None {
            if full_len != stored_len || checksum != stored_checksum {
                return Err(bad(
                    "an uncompressed resource's lengths or checksums differ",
                ));
            }
        } else {
            if stored_uncompressed(kind) {
                return Err(bad(
                    "image, sprite, font, animation, texture and audio resources are never compressed",
                ));
            }
            if usize::try_from(full_len).map_or(true, |n| n > codec::expand_bound(compression, len))
            {
                return Err(bad(
                    "compressed length is more than its bytes can expand to",
                ));
            }
        }
        if (kind == KIND_TEXT || kind == KIND_SHADER)
            && compression == Compression::None
            && std::str::from_utf8(resource).is_err()
        {
            return Err(bad("text resource is not UTF-8"));
        }
        if kind == KIND_IMAGE && ImageHeader::parse(resource).is_none() {
            return Err(bad("image resource has a bad header or length"));
        }
        if kind == KIND_SPRITE {
            let frame = SpriteFrame::parse(resource).ok_or(bad("sprite resource is malformed"))?;
            sprites.push((index, frame));
        }
        if kind == KIND_TEXTURE && Texture::parse(resource).is_none() {
            return Err(bad(
                "texture resource is not a KTX2 texture this reader knows",
            ));
        }
        if kind == KIND_AUDIO && Audio::parse(resource).is_none() {
            return Err(bad("audio resource has a bad header"));
        }
        if kind == KIND_FONT {
            let font = Font::parse(resource).ok_or(bad("font resource is malformed"))?;
            sprites.extend(font.frames().map(|frame| (index, frame)));
        }
        if kind == KIND_ANIMATION {
            let animation =
                Animation::parse(resource).ok_or(bad("animation resource is malformed"))?;
            sprites.extend(animation.sprite_frames().map(|frame| (index, frame)));
        }
        spans.push((start, len, index));
    }
    spans.sort_unstable();
    let mut cursor = 0;
    let mut last = None;
    for (start, len, index) in spans {
        if start < cursor {
            return Err(ParcelError::Overlap {
                first: last.unwrap_or(index),
                second: index,
            });
        }
        // The padding between resources is checked by `verify`, with their
        // bytes: reading it here would touch a page of the data area per
        // resource, and a mapped parcel would no longer open lazily.
        cursor = start + len;
        last = Some(index);
    }
    let layout = Layout {
        count,
        bucket_bits,
        entries_at,
        names_at,
        data_at,
    };
    Ok(Validated {
        layout,
        sprites,
        own_pages,
    })
}

/// A header field as a `usize`, or the header error naming it.
fn to_usize(v: u64, what: &'static str) -> Result<usize, ParcelError> {
    usize::try_from(v).map_err(|_| ParcelError::BadHeader { what })
}
