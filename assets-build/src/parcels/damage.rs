//! Damage to a parcel done behind the build's back: the `.key` beside a
//! parcel records its contents' key and the file's length and mtime as the
//! build left them; a build that finds either changed reads the parcel
//! whole against its checksums (no decompression) and writes it again if
//! it is damaged, naming the resources that were.

use std::fs;
use std::path::Path;

use assets_runtime::ParcelBuf;

use crate::hash::ContentHash;

/// Whether [`write_one`](super::write_one) reads a parcel whose contents are to stay the
/// same against its checksums: when the file changed since it was written,
/// or `every_time` (`verify`). What it found damaged, if anything.
pub(super) struct DamageCheck {
    pub every_time: bool,
    pub found: Option<Vec<String>>,
}

/// A parcel's `.key` file: the key of its contents (see [`parcel_key`](super::parcel_key))
/// on the first line, and on the second the [`Stamp`] of the parcel file
/// as this build left it.
pub(super) struct KeyFile {
    pub key: String,
    pub stamp: Option<Stamp>,
}

impl KeyFile {
    pub fn read(path: &Path) -> Option<KeyFile> {
        let text = fs::read_to_string(path).ok()?;
        let mut lines = text.lines();
        let key = lines.next()?.trim().to_owned();
        let stamp = lines.next().and_then(Stamp::parse);
        Some(KeyFile { key, stamp })
    }

    pub fn text(key: &ContentHash, stamp: Option<Stamp>) -> String {
        match stamp {
            Some(Stamp { len, modified }) => format!("{key}\n{len} {modified}\n"),
            None => format!("{key}\n"),
        }
    }
}

/// A file's length and modification time (nanoseconds since the epoch):
/// what changes when anything but this build writes the file, as cheap to
/// compare as the source files' stat cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    len: u64,
    modified: u128,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = fs::metadata(path).ok()?;
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: modified.as_nanos(),
        })
    }

    fn parse(line: &str) -> Option<Stamp> {
        let (len, modified) = line.trim().split_once(' ')?;
        Some(Stamp {
            len: len.parse().ok()?,
            modified: modified.parse().ok()?,
        })
    }
}

/// What is damaged in the parcel file at `path`: `None` if nothing, else
/// the resources whose stored bytes no longer match their checksums (none
/// named when the damage is elsewhere: the file no longer validates as a
/// parcel, or has bytes in its padding).
pub(super) fn damage(path: &Path) -> Option<Vec<String>> {
    let Ok(buf) = ParcelBuf::open(path) else {
        return Some(Vec::new());
    };
    let parcel = buf.parcel();
    let mut names: Vec<String> = (parcel.iter())
        .filter(|r| r.verify_stored().is_err())
        .map(|r| r.name.to_owned())
        .collect();
    names.sort_unstable();
    if names.is_empty() && parcel.verify_stored().is_ok() {
        return None;
    }
    Some(names)
}
