//! The bytes behind a [`ParcelBuf`](crate::ParcelBuf): a memory map of the
//! parcel file, or a buffer read from it. The crate's only `unsafe` is here.
//!
//! Mapping makes opening a parcel cost what validating its tables costs
//! (tens of microseconds for a 1 GiB, 10,000-resource file), where reading
//! it costs a copy of every byte; pages are then read on first touch.
//!
//! # The file must not change underneath
//!
//! A map shows the file's current bytes. If another program wrote into the
//! mapped file, bytes validated at open could change afterwards, and if it
//! truncated the file, reading past the new end would raise `SIGBUS`.
//! cargo-assets never does either: parcels are written to a temporary file
//! and renamed over the old one, so a mapped parcel keeps its inode and its
//! bytes, however often it is rebuilt, until the map is dropped (a game
//! reloading opens the new file). Editing a parcel in place while a game has
//! it open is not supported; [`ParcelBuf::read`](crate::ParcelBuf::read)
//! copies the file instead, for parcels that other tools may rewrite.

use std::fs::File;
use std::ops::Deref;

/// Parcel bytes, owned or mapped.
pub(crate) enum Backing {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Mapped from a file.
    #[cfg(feature = "mmap")]
    Mapped(memmap2::Mmap),
}

impl Backing {
    /// A read-only map of `file`, or `None` where mapping is not possible
    /// (an empty file, a file system without mmap).
    #[cfg(feature = "mmap")]
    pub(crate) fn map(file: &File) -> Option<Backing> {
        if file.metadata().ok()?.len() == 0 {
            return None;
        }
        // SAFETY: the map is read-only and lives as long as this `Backing`.
        // `memmap2` requires that the file is not modified or truncated while
        // mapped, which would change bytes behind a `&[u8]`. cargo-assets
        // writes parcels by temp file and rename, never in place (see the
        // module docs), so the mapped inode does not change; other writers
        // are documented as unsupported, with `ParcelBuf::read` as the copy.
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        populate_tables(&map);
        Some(Backing::Mapped(map))
    }

    /// Without the `mmap` feature, nothing is mapped.
    #[cfg(not(feature = "mmap"))]
    pub(crate) fn map(_file: &File) -> Option<Backing> {
        None
    }
}

/// Maps in the pages of the header and tables (everything before the data
/// area, which validation reads in full) with one call, instead of a page
/// fault per page: on Linux 5.14 and later (`MADV_POPULATE_READ`); where it
/// is refused, the pages fault in as they are read. The data area stays
/// untouched until used.
#[cfg(feature = "mmap")]
fn populate_tables(map: &memmap2::Mmap) {
    #[cfg(target_os = "linux")]
    if let Some(field) = map.get(40..48) {
        let data_at = u64::from_le_bytes(field.try_into().expect("8 bytes"));
        let len = usize::try_from(data_at).map_or(map.len(), |n| n.min(map.len()));
        let _ = map.advise_range(memmap2::Advice::PopulateRead, 0, len);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

impl Deref for Backing {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Backing::Owned(bytes) => bytes,
            #[cfg(feature = "mmap")]
            Backing::Mapped(map) => map,
        }
    }
}

impl Clone for Backing {
    /// A copy in memory (of a map too: the copy does not depend on the file).
    fn clone(&self) -> Backing {
        Backing::Owned(self.to_vec())
    }
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self {
            Backing::Owned(_) => "in memory",
            #[cfg(feature = "mmap")]
            Backing::Mapped(_) => "mapped",
        };
        write!(f, "{} bytes {how}", self.len())
    }
}
