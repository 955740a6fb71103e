//! [`Parcel`]: a validated view of parcel bytes, and [`ParcelBuf`], which owns them.
//!
//! `Parcel::from_bytes` checks everything that can be checked without reading
//! every resource byte (see [`crate::format`]); afterwards lookups are
//! infallible and copy nothing. Reading a resource's bytes or text returns a
//! `Result` (a missing resource, a wrong kind, or compressed bytes that turn
//! out corrupt when decompressed); images and sprites, never compressed and
//! checked at open, are `Option`s: absence is their only failure. Values are read with `from_le_bytes` on
//! slices, never by casting, so the bytes may sit at any alignment (as
//! `include_bytes!` data does).

use std::borrow::Cow;
use std::path::Path;

use crate::animation::Animation;
use crate::audio::Audio;
use crate::codec::{self, DecodeError};
use crate::error::ParcelError;
use crate::font::Font;
use crate::format::{
    Compression, ENTRY_LEN, FLAG_PATCH, HEADER_LEN, KIND_ALIAS, KIND_ANIMATION, KIND_AUDIO,
    KIND_FONT, KIND_GLTF, KIND_IMAGE, KIND_SHADER, KIND_SPRITE, KIND_TEXT, KIND_TEXTURE,
    KIND_TILEMAP, bucket_of, data_checksum, u32_at, u64_at,
};
use crate::id::ResourceId;
use crate::image::{IMAGE_HEADER_LEN, Image, ImageHeader};
use crate::mapped::Backing;
use crate::sprite::{Sprite, SpriteFrame};
use crate::texture::Texture;
use crate::tilemap::TileMap;
use crate::typed::{IdOf, kind};
use crate::validate::{Layout, Role, Validated, validate};

/// A validated parcel borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Parcel<'a> {
    bytes: &'a [u8],
    layout: Layout,
}

/// One resource of a parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource<'a> {
    /// Its id.
    pub id: ResourceId,
    /// Its name: the asset path, plus `#label` for a sub-resource.
    pub name: &'a str,
    /// Its kind: `bytes`, `text`, `image`, or a user processor's kind.
    pub kind: &'a str,
    stored: &'a [u8],
    compression: Compression,
    len: u64,
    stored_checksum: u64,
    checksum: u64,
}

/// `found`, or, if it is an alias, the resource it names as `find` finds
/// it: once (an alias of an alias is none), and only under that very name.
pub(crate) fn follow_alias<'a>(
    found: Resource<'a>,
    find: impl Fn(ResourceId) -> Option<Resource<'a>>,
) -> Option<Resource<'a>> {
    if found.kind != KIND_ALIAS {
        return Some(found);
    }
    let target = found.alias_of()?;
    find(ResourceId::of_runtime(target)).filter(|r| r.name == target && r.kind != KIND_ALIAS)
}

impl<'a> Resource<'a> {
    /// For an alias (kind `alias`: an old name kept after a rename), the
    /// name of the resource it stands for; `None` for any other kind.
    /// [`Parcel::get`] follows aliases; iteration shows them as they are.
    pub fn alias_of(&self) -> Option<&'a str> {
        if self.kind != KIND_ALIAS || self.compression != Compression::None {
            return None;
        }
        std::str::from_utf8(self.stored).ok()
    }

    /// Its bytes: borrowed from the parcel when stored as they are (the
    /// parcel's writer never compresses `image` or `sprite` resources),
    /// else decompressed, after checking the stored bytes against their
    /// checksum, and checked against the length and checksum recorded for
    /// them. A game reading parcels it did not build checks
    /// [`len`](Resource::len) against its own limit first: that many bytes
    /// may be allocated.
    pub fn bytes(&self) -> Result<Cow<'a, [u8]>, ParcelError> {
        if self.compression == Compression::None {
            return Ok(Cow::Borrowed(self.stored));
        }
        self.verify_stored()?;
        let corrupt = || ParcelError::Decompress {
            name: self.name.to_owned(),
            compression: self.compression.name(),
        };
        // Validated at open: a compressed length is within what the stored
        // bytes can expand to, which is less than the address space.
        let len = usize::try_from(self.len).map_err(|_| corrupt())?;
        let bytes = codec::decode(self.compression, self.stored, len).map_err(|e| match e {
            DecodeError::Disabled(feature) => ParcelError::Disabled {
                name: self.name.to_owned(),
                feature,
            },
            DecodeError::Corrupt => corrupt(),
        })?;
        if data_checksum(&bytes) != self.checksum {
            return Err(ParcelError::DataChecksum {
                name: self.name.to_owned(),
            });
        }
        Ok(Cow::Owned(bytes))
    }

    /// The text of a `text` or `shader` resource: borrowed when stored as
    /// it is (checked to be UTF-8 at open), else decompressed and checked.
    pub fn text(&self) -> Result<Cow<'a, str>, ParcelError> {
        if self.kind != KIND_TEXT && self.kind != KIND_SHADER {
            return Err(self.wrong_kind(KIND_TEXT));
        }
        let not_utf8 = || ParcelError::NotUtf8 {
            name: self.name.to_owned(),
        };
        Ok(match self.bytes()? {
            Cow::Borrowed(b) => Cow::Borrowed(std::str::from_utf8(b).map_err(|_| not_utf8())?),
            Cow::Owned(b) => Cow::Owned(String::from_utf8(b).map_err(|_| not_utf8())?),
        })
    }

    pub(crate) fn wrong_kind(&self, expected: &'static str) -> ParcelError {
        ParcelError::WrongKind {
            name: self.name.to_owned(),
            kind: self.kind.to_owned(),
            expected,
        }
    }

    /// The image, if this is an `image` resource (header checked at open).
    pub fn image(&self) -> Option<Image<'a>> {
        if self.kind != KIND_IMAGE {
            return None;
        }
        let header = ImageHeader::parse(self.stored)?;
        Some(Image {
            header,
            data: &self.stored[IMAGE_HEADER_LEN..],
        })
    }

    /// The frame, if this is a `sprite` resource (checked at open).
    pub fn sprite_frame(&self) -> Option<SpriteFrame> {
        (self.kind == KIND_SPRITE)
            .then(|| SpriteFrame::parse(self.stored))
            .flatten()
    }

    /// The font, if this is a `font` resource (checked at open).
    pub fn font(&self) -> Option<Font<'a>> {
        (self.kind == KIND_FONT)
            .then(|| Font::parse(self.stored))
            .flatten()
    }

    /// The animation, if this is an `animation` resource (checked at open).
    pub fn animation(&self) -> Option<Animation<'a>> {
        (self.kind == KIND_ANIMATION)
            .then(|| Animation::parse(self.stored))
            .flatten()
    }

    /// The texture, if this is a `texture` resource (checked at open).
    pub fn texture(&self) -> Option<Texture<'a>> {
        (self.kind == KIND_TEXTURE)
            .then(|| Texture::parse(self.stored))
            .flatten()
    }

    /// The sound, if this is an `audio` resource (header checked at open).
    pub fn audio(&self) -> Option<Audio<'a>> {
        (self.kind == KIND_AUDIO)
            .then(|| Audio::parse(self.stored))
            .flatten()
    }

    /// The tile map of a `tilemap` resource: borrowed when stored as it
    /// is, else decompressed; checked whole either way (see
    /// [`crate::tilemap`]).
    pub fn tilemap(&self) -> Result<TileMap<'a>, ParcelError> {
        if self.kind != KIND_TILEMAP {
            return Err(self.wrong_kind(KIND_TILEMAP));
        }
        TileMap::parse(self.bytes()?).ok_or_else(|| ParcelError::BadTileMap {
            name: self.name.to_owned(),
        })
    }

    /// Its length once decompressed: what [`bytes`](Resource::bytes) gives.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How its bytes are stored.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Its bytes as stored in the parcel (compressed, if it is).
    pub fn stored(&self) -> &'a [u8] {
        self.stored
    }

    /// The xxh3-64 checksum of its stored bytes.
    pub fn stored_checksum(&self) -> u64 {
        self.stored_checksum
    }

    /// The xxh3-64 checksum of its bytes once decompressed: the same
    /// whichever compression stores them.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Checks the stored bytes against their checksum and, when compressed,
    /// that they decompress to what the entry records (and, for text, to
    /// UTF-8).
    pub fn verify(&self) -> Result<(), ParcelError> {
        match self.compression {
            Compression::None => self.verify_stored(),
            _ if self.kind == KIND_TEXT || self.kind == KIND_SHADER => self.text().map(drop),
            _ => self.bytes().map(drop),
        }
    }

    /// Checks the stored bytes against their checksum, without
    /// decompressing them.
    pub fn verify_stored(&self) -> Result<(), ParcelError> {
        if data_checksum(self.stored) == self.stored_checksum {
            Ok(())
        } else {
            Err(ParcelError::DataChecksum {
                name: self.name.to_owned(),
            })
        }
    }
}

impl<'a> Parcel<'a> {
    /// Validates `bytes` as a parcel. See [`crate::format`] for what is
    /// checked. A patch is refused ([`ParcelError::IsPatch`]): it is read
    /// through its base.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Parcel<'a>, ParcelError> {
        let layout = open(bytes, Role::Whole)?;
        Ok(Parcel { bytes, layout })
    }

    /// Validates `bytes` as a patch: as [`Parcel::from_bytes`] does, except
    /// that a sprite's or font's page may be missing, to be found in the
    /// base. Use it through [`crate::Patched::new`], which checks those
    /// pages there; alone, such a sprite has no page
    /// ([`Parcel::sprite`] gives `None`).
    pub fn patch_from_bytes(bytes: &'a [u8]) -> Result<Parcel<'a>, ParcelError> {
        let layout = open(bytes, Role::Patch)?;
        Ok(Parcel { bytes, layout })
    }

    /// Whether it is a patch whose sprites and fonts may lie on its base's
    /// pages (header flag [`FLAG_PATCH`]).
    pub fn is_patch(&self) -> bool {
        u32_at(self.bytes, 12) & FLAG_PATCH != 0
    }

    /// How many resources it holds.
    pub fn len(&self) -> usize {
        self.layout.count
    }

    /// Whether it holds no resources.
    pub fn is_empty(&self) -> bool {
        self.layout.count == 0
    }

    /// The whole file.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Its table checksum (header bytes 56..64), checked at open: it covers
    /// the header and every entry, so it names this parcel's contents.
    pub fn table_checksum(&self) -> u64 {
        u64_at(self.bytes, 56)
    }

    /// The resource with `id`: one bucket lookup, then a scan of the few
    /// entries in that bucket (about one). An alias (an old name kept after
    /// a rename) gives the resource it stands for.
    pub fn get(&self, id: impl Into<ResourceId>) -> Option<Resource<'a>> {
        follow_alias(self.find(id.into())?, |id| self.find(id))
    }

    /// The entry with `id` as it is, an alias not followed.
    pub(crate) fn find(&self, id: ResourceId) -> Option<Resource<'a>> {
        let bucket = bucket_of(id.raw(), self.layout.bucket_bits);
        let start = u32_at(self.bytes, HEADER_LEN + 4 * bucket) as usize;
        let end = u32_at(self.bytes, HEADER_LEN + 4 * (bucket + 1)) as usize;
        // Compare raw ids first; build the resource (UTF-8 views of its name
        // and kind) only for the match.
        (start..end)
            .find(|&i| u64_at(self.bytes, self.layout.entries_at + i * ENTRY_LEN) == id.raw())
            .map(|i| self.entry(i))
    }

    /// The resource named `name` (an alias's: the one it stands for).
    pub fn by_name(&self, name: &str) -> Option<Resource<'a>> {
        let found = self.find(ResourceId::of_runtime(name))?;
        follow_alias((found.name == name).then_some(found)?, |id| self.find(id))
    }

    /// The resource that `uri`, written in the resource named `base`,
    /// refers to, as a glTF model's images name their textures: see
    /// [`crate::uri::resolve`]. `None` when it names none of this parcel's.
    ///
    /// ```
    /// # fn textures(parcel: &assets_runtime::Parcel<'_>, model: &str, uri: &str) {
    /// // `model` = "models/FlightHelmet/FlightHelmet.gltf", `uri` = "Leather%20Parts.png"
    /// if let Some(texture) = parcel.by_uri(model, uri) {
    ///     assert_eq!(texture.name, "models/FlightHelmet/Leather Parts.png");
    /// }
    /// # }
    /// ```
    pub fn by_uri(&self, base: &str, uri: &str) -> Option<Resource<'a>> {
        self.by_name(&crate::uri::resolve(base, uri).ok()?)
    }

    /// The resource with `id`, or [`ParcelError::Missing`].
    fn require(&self, id: ResourceId) -> Result<Resource<'a>, ParcelError> {
        self.get(id).ok_or(ParcelError::Missing { id })
    }

    /// The bytes of resource `id`, whatever its kind: borrowed when stored
    /// as they are, else decompressed (see [`Resource::bytes`]).
    pub fn bytes(&self, id: impl Into<ResourceId>) -> Result<Cow<'a, [u8]>, ParcelError> {
        self.require(id.into())?.bytes()
    }

    /// The text of resource `id`, which must be a `text` resource (see
    /// [`Resource::text`]).
    pub fn text(&self, id: impl IdOf<kind::Text>) -> Result<Cow<'a, str>, ParcelError> {
        self.require(id.resource_id())?.text()
    }

    /// The source of shader `id` (WGSL or WESL, imports as written), which
    /// must be a `shader` resource; its reflection is the `text` resource
    /// named `<shader>#reflection`.
    pub fn shader(&self, id: impl IdOf<kind::Shader>) -> Result<Cow<'a, str>, ParcelError> {
        let r = self.require(id.resource_id())?;
        if r.kind != KIND_SHADER {
            return Err(r.wrong_kind(KIND_SHADER));
        }
        r.text()
    }

    /// The GLB of model `id`, which must be a `gltf` resource: borrowed
    /// when stored as it is, else decompressed. The files it names by URI
    /// are resources too: [`Parcel::by_uri`] with the model's name finds them.
    pub fn model(&self, id: impl IdOf<kind::Model>) -> Result<Cow<'a, [u8]>, ParcelError> {
        let r = self.require(id.resource_id())?;
        if r.kind != KIND_GLTF {
            return Err(r.wrong_kind(KIND_GLTF));
        }
        r.bytes()
    }

    /// The image of resource `id`, if it is an `image` resource.
    pub fn image(&self, id: impl IdOf<kind::Image>) -> Option<Image<'a>> {
        self.get(id.resource_id())?.image()
    }

    /// The sprite `id` with its page, if it is a `sprite` resource. A valid
    /// parcel's sprites always have their page (checked at open), unless it
    /// is a patch: read a patch's sprites through [`crate::Patched`].
    pub fn sprite(&self, id: impl IdOf<kind::Sprite>) -> Option<Sprite<'a>> {
        let frame = self.get(id.resource_id())?.sprite_frame()?;
        let page = self.image(frame.page)?;
        Some(Sprite { frame, page })
    }

    /// The font `id`, if it is a `font` resource: its sizes, glyphs and
    /// kerning; each glyph's frame lies in a page of this parcel (checked
    /// at open), read with [`Parcel::image`].
    pub fn font(&self, id: impl IdOf<kind::Font>) -> Option<Font<'a>> {
        self.get(id.resource_id())?.font()
    }

    /// The animation `id`, if it is an `animation` resource: its frames,
    /// their durations and its tags; each frame lies in a page of this
    /// parcel (checked at open), read with [`Parcel::image`].
    pub fn animation(&self, id: impl IdOf<kind::Animation>) -> Option<Animation<'a>> {
        self.get(id.resource_id())?.animation()
    }

    /// The texture `id`, if it is a `texture` resource: format, size and
    /// each mip level's bytes, ready to upload (see [`crate::texture`]).
    pub fn texture(&self, id: impl IdOf<kind::Texture>) -> Option<Texture<'a>> {
        self.get(id.resource_id())?.texture()
    }

    /// The sound `id`, if it is an `audio` resource: its format, channels,
    /// sample rate and length, and the file's bytes (see [`crate::audio`]).
    pub fn audio(&self, id: impl IdOf<kind::Audio>) -> Option<Audio<'a>> {
        self.get(id.resource_id())?.audio()
    }

    /// The tile map `id` (see [`crate::tilemap`]): its tilesets, layers of
    /// cells, objects and properties. Decompressed if it is stored
    /// compressed, and checked whole on each call: read it once per level
    /// load and keep it.
    pub fn tilemap(&self, id: impl IdOf<kind::TileMap>) -> Result<TileMap<'a>, ParcelError> {
        let id = id.resource_id();
        self.get(id).ok_or(ParcelError::Missing { id })?.tilemap()
    }

    /// Every resource, in id order.
    pub fn iter(&self) -> impl Iterator<Item = Resource<'a>> + use<'a> {
        let this = *self;
        (0..self.layout.count).map(move |i| this.entry(i))
    }

    /// Checks every resource's bytes against its checksums (decompressing
    /// the compressed ones), and that the padding between resources is zero:
    /// every byte of the data area, which opening does not read (a mapped
    /// parcel's resource pages stay untouched until used).
    pub fn verify(&self) -> Result<(), ParcelError> {
        self.iter().try_for_each(|r| r.verify())?;
        self.verify_padding()
    }

    /// [`Parcel::verify`] without decompressing: every resource's stored
    /// bytes against their checksum, and the padding. What a build checks
    /// of a parcel file that changed behind its back, at the cost of one
    /// read of the file.
    pub fn verify_stored(&self) -> Result<(), ParcelError> {
        self.iter().try_for_each(|r| r.verify_stored())?;
        self.verify_padding()
    }

    /// Whether the bytes between resources (and after the last) are zero.
    fn verify_padding(&self) -> Result<(), ParcelError> {
        let l = &self.layout;
        let data = &self.bytes[l.data_at..];
        // Validation checked that spans lie inside the data area and do not
        // overlap; sorted, the gaps between them are the padding.
        let mut spans: Vec<(usize, usize)> = (0..l.count)
            .map(|i| {
                let e = l.entries_at + i * ENTRY_LEN;
                (
                    u64_at(self.bytes, e + 24) as usize,
                    u64_at(self.bytes, e + 32) as usize,
                )
            })
            .collect();
        spans.sort_unstable();
        let mut cursor = 0;
        for (start, len) in spans.into_iter().chain([(data.len(), 0)]) {
            if let Some(i) = data[cursor..start].iter().position(|&b| b != 0) {
                return Err(ParcelError::NonZeroPadding {
                    offset: l.data_at + cursor + i,
                });
            }
            cursor = start + len;
        }
        Ok(())
    }

    fn entry(&self, i: usize) -> Resource<'a> {
        let l = &self.layout;
        let e = l.entries_at + i * ENTRY_LEN;
        let b = self.bytes;
        let text = |offset_at: usize, len_at: usize| {
            let start = l.names_at + u32_at(b, e + offset_at) as usize;
            let len = u32_at(b, e + len_at) as usize;
            std::str::from_utf8(&b[start..start + len]).unwrap_or_default()
        };
        let data_start = l.data_at + u64_at(b, e + 24) as usize;
        let stored_len = u64_at(b, e + 32) as usize;
        Resource {
            id: ResourceId::from_raw(u64_at(b, e)),
            name: text(8, 12),
            kind: text(16, 20),
            stored: &b[data_start..data_start + stored_len],
            stored_checksum: u64_at(b, e + 40),
            len: u64_at(b, e + 48),
            checksum: u64_at(b, e + 56),
            compression: Compression::from_byte(b[e + 64]).unwrap_or(Compression::None),
        }
    }
}

/// Validates `bytes` as `role` has it (`validate.rs`), then each sprite's
/// page: everything before holds, so lookups are safe (a patch's page may
/// be its base's, checked with the base by [`crate::Patched::new`]).
fn open(bytes: &[u8], role: Role) -> Result<Layout, ParcelError> {
    let Validated {
        layout,
        sprites,
        own_pages,
    } = validate(bytes, role)?;
    let parcel = Parcel { bytes, layout };
    for (index, frame) in sprites {
        let bad = |what| ParcelError::BadSprite {
            name: parcel.entry(index).name.to_owned(),
            what,
        };
        let page = match parcel.get(frame.page) {
            None if !own_pages => continue,
            found => found.and_then(|r| r.image()),
        };
        let page = page.ok_or_else(|| bad("its page is not an image resource of the parcel"))?;
        if !frame.fits_in(page.header.width, page.header.height) {
            return Err(bad("its rectangle lies outside its page"));
        }
    }
    Ok(layout)
}

/// A validated parcel that owns its bytes: read from a file at run time (for
/// hot reload), where `include_bytes!` is not used.
#[derive(Debug, Clone)]
pub struct ParcelBuf {
    bytes: Backing,
    layout: Layout,
}

impl ParcelBuf {
    /// Validates `bytes` (as [`Parcel::from_bytes`]).
    pub fn from_vec(bytes: Vec<u8>) -> Result<ParcelBuf, ParcelError> {
        ParcelBuf::from_vec_as(bytes, Role::Whole)
    }

    /// Validates `bytes` as a patch (as [`Parcel::patch_from_bytes`]).
    pub fn patch_from_vec(bytes: Vec<u8>) -> Result<ParcelBuf, ParcelError> {
        ParcelBuf::from_vec_as(bytes, Role::Patch)
    }

    fn from_vec_as(bytes: Vec<u8>, role: Role) -> Result<ParcelBuf, ParcelError> {
        let layout = open(&bytes, role)?;
        Ok(ParcelBuf {
            bytes: Backing::Owned(bytes),
            layout,
        })
    }

    /// Opens and validates the parcel at `path`, memory-mapped (feature
    /// `mmap`, on by default): opening costs what validating the tables
    /// costs, and resource bytes are read when first touched. Where the file
    /// cannot be mapped, it is read instead. The file must not be changed in
    /// place while the `ParcelBuf` lives; cargo-assets replaces parcels by
    /// rename, which is safe (see the stance in `mapped.rs`'s docs).
    pub fn open(path: &Path) -> Result<ParcelBuf, ParcelError> {
        ParcelBuf::open_as(path, Role::Whole)
    }

    /// Opens the patch at `path` as [`ParcelBuf::open`] opens a parcel,
    /// validated as [`Parcel::patch_from_bytes`] validates one: to be read
    /// through its base ([`crate::PatchedBuf`]).
    pub fn open_patch(path: &Path) -> Result<ParcelBuf, ParcelError> {
        ParcelBuf::open_as(path, Role::Patch)
    }

    fn open_as(path: &Path, role: Role) -> Result<ParcelBuf, ParcelError> {
        let io = |e: std::io::Error| ParcelError::Io {
            message: format!("{}: {e}", path.display()),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        match Backing::map(&file) {
            Some(bytes) => {
                let layout = open(&bytes, role)?;
                Ok(ParcelBuf { bytes, layout })
            }
            None => ParcelBuf::read_as(path, role),
        }
    }

    /// Reads the whole parcel at `path` into memory and validates it: for
    /// files another program may rewrite in place while they are open.
    pub fn read(path: &Path) -> Result<ParcelBuf, ParcelError> {
        ParcelBuf::read_as(path, Role::Whole)
    }

    fn read_as(path: &Path, role: Role) -> Result<ParcelBuf, ParcelError> {
        let bytes = std::fs::read(path).map_err(|e| ParcelError::Io {
            message: format!("{}: {e}", path.display()),
        })?;
        ParcelBuf::from_vec_as(bytes, role)
    }

    /// The parcel, without validating again.
    pub fn parcel(&self) -> Parcel<'_> {
        Parcel {
            bytes: &self.bytes,
            layout: self.layout,
        }
    }
}
