//! [`ParcelError`]: why bytes are not a valid parcel.

use std::fmt;

/// Why a parcel was rejected. Every variant says where.
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
    /// A sprite does not lie within an image of the parcel.
    BadSprite {
        /// The sprite's name.
        name: String,
        /// What is wrong.
        what: &'static str,
    },
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
                write!(f, "corrupt parcel: sprite `{name}`: {what}")
            }
            ParcelError::Io { message } => write!(f, "could not read parcel: {message}"),
        }
    }
}

impl std::error::Error for ParcelError {}
