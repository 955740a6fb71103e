//! [`ParcelError`]: why bytes are not a valid parcel, or a resource could not be read.

use std::fmt;

/// Why a parcel was rejected, or one of its resources could not be read.
/// Every variant says where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParcelError {
    /// Fewer bytes than a header.
    TooShort {
        /// The length given.
        len: usize,
    },
    /// The first eight bytes are not `CAPARCEL`.
    BadMagic,
    /// A format version this reader does not know.
    UnsupportedVersion {
        /// The file's version.
        found: u16,
        /// The version this reader reads.
        supported: u16,
    },
    /// A header field is impossible.
    BadHeader {
        /// Which field, and why.
        what: &'static str,
    },
    /// The header or tables do not match their checksum.
    TableChecksum,
    /// An entry is inconsistent.
    BadEntry {
        /// Index in the entry table.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// Two resources share bytes.
    Overlap {
        /// Entry indexes.
        first: usize,
        /// Entry indexes.
        second: usize,
    },
    /// A byte outside every resource is not zero.
    NonZeroPadding {
        /// Its offset in the file.
        offset: usize,
    },
    /// A resource's bytes do not match their checksum.
    DataChecksum {
        /// The resource's name.
        name: String,
    },
    /// A sprite, or a glyph of a font, does not lie within an image of the parcel.
    BadSprite {
        /// The sprite's (or font's) name.
        name: String,
        /// What is wrong.
        what: &'static str,
    },
    /// No resource has the id asked for.
    Missing {
        /// The id.
        id: crate::ResourceId,
    },
    /// The resource is not of the kind asked for.
    WrongKind {
        /// The resource's name.
        name: String,
        /// Its kind.
        kind: String,
        /// The kind asked for.
        expected: &'static str,
    },
    /// A compressed resource does not decompress to the length recorded for it.
    Decompress {
        /// The resource's name.
        name: String,
        /// Its compression's name.
        compression: &'static str,
    },
    /// A compressed resource uses a codec this build of assets-runtime leaves out.
    Disabled {
        /// The resource's name.
        name: String,
        /// The cargo feature of assets-runtime that reads it.
        feature: &'static str,
    },
    /// A compressed text resource is not UTF-8 once decompressed.
    NotUtf8 {
        /// The resource's name.
        name: String,
    },
    /// A tile map resource's layout is malformed (see [`crate::tilemap`]).
    BadTileMap {
        /// The resource's name.
        name: String,
    },
    /// A patch does not fit the rules of [`crate::patch`].
    BadPatch {
        /// The resource's name.
        name: String,
        /// What is wrong.
        what: &'static str,
    },
    /// A patch that may lean on its base's pages (header flag
    /// [`crate::format::FLAG_PATCH`]), read as a whole parcel.
    IsPatch,
    /// Reading the file failed.
    Io {
        /// The OS error's message.
        message: String,
    },
}

impl fmt::Display for ParcelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParcelError::TooShort { len } => write!(
                f,
                "not a parcel: {len} bytes is shorter than a parcel header"
            ),
            ParcelError::BadMagic => f.write_str("not a parcel: wrong magic bytes"),
            ParcelError::UnsupportedVersion { found, supported } => write!(
                f,
                "parcel format version {found} is not supported by this reader (it reads version {supported}); rebuild the parcel with the matching cargo-assets, or update assets-runtime"
            ),
            ParcelError::BadHeader { what } => write!(f, "corrupt parcel header: {what}"),
            ParcelError::TableChecksum => {
                f.write_str("corrupt parcel: header or tables do not match their checksum")
            }
            ParcelError::BadEntry { index, what } => {
                write!(f, "corrupt parcel: entry {index}: {what}")
            }
            ParcelError::Overlap { first, second } => {
                write!(f, "corrupt parcel: entries {first} and {second} overlap")
            }
            ParcelError::NonZeroPadding { offset } => {
                write!(f, "corrupt parcel: non-zero padding at byte {offset}")
            }
            ParcelError::DataChecksum { name } => {
                write!(
                    f,
                    "corrupt parcel: resource `{name}` does not match its checksum"
                )
            }
            ParcelError::BadSprite { name, what } => {
                write!(f, "corrupt parcel: sprite or font `{name}`: {what}")
            }
            ParcelError::BadPatch { name, what } => {
                write!(f, "corrupt parcel patch: resource `{name}`: {what}")
            }
            ParcelError::IsPatch => f.write_str(
                "a parcel patch, not a parcel: it is read through the parcel it patches \
                 (`PatchedBuf::open(parcel, Some(patch))`)",
            ),
            ParcelError::Missing { id } => {
                write!(f, "the parcel has no resource with id {:016x}", id.raw())
            }
            ParcelError::WrongKind {
                name,
                kind,
                expected,
            } => write!(f, "resource `{name}` is of kind `{kind}`, not `{expected}`"),
            ParcelError::Decompress { name, compression } => write!(
                f,
                "corrupt parcel: resource `{name}` does not decompress ({compression}) to its recorded length"
            ),
            ParcelError::Disabled { name, feature } => write!(
                f,
                "resource `{name}` is compressed with {feature}; enable the `{feature}` feature of assets-runtime"
            ),
            ParcelError::NotUtf8 { name } => {
                write!(f, "corrupt parcel: text resource `{name}` is not UTF-8")
            }
            ParcelError::BadTileMap { name } => {
                write!(f, "corrupt parcel: tile map `{name}` is malformed")
            }
            ParcelError::Io { message } => write!(f, "could not read parcel: {message}"),
        }
    }
}

impl std::error::Error for ParcelError {}
