//! Loose-file output (`cargo assets build --out-dir DIR`): every resource
//! of the built parcels as a file under a folder, for web servers, modding,
//! and engines that read files.
//!
//! A resource `sprites/hero.png` is the file `DIR/sprites/hero.png`, its
//! bytes as the parcel holds them, decompressed (an `image` resource is the
//! parcel's image format; a model's GLB is a GLB); `asset#label` and
//! atlas pages (`atlas:ui#0`) keep their names. The folder is kept in sync,
//! not rewritten: a file whose bytes are already right is not touched (its
//! mtime kept, so a web server's caches and a file watcher see no change),
//! a changed one is written to a temporary name beside it and renamed (a
//! reader never sees half a file), and a file written by an earlier sync
//! and no longer produced is removed. What the sync wrote is listed in
//! `DIR/.cargo-assets-files`, so that files of anyone else in the folder are
//! never removed.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use assets_runtime::PatchedBuf;
use assets_runtime::format::KIND_REMOVED;

/// The list of files a sync wrote, in the folder, one name a line.
pub const LISTING: &str = ".cargo-assets-files";

/// What a sync did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutDirStats {
    /// Files written (new or changed).
    pub written: usize,
    /// Files already right, left alone.
    pub unchanged: usize,
    /// Files of an earlier sync no longer produced, removed.
    pub removed: usize,
}

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutDirError {
    /// A parcel could not be read.
    #[error("could not read parcel `{}`: {source}", path.display())]
    Parcel {
        /// The parcel.
        path: PathBuf,
        /// Why.
        #[source]
        source: assets_runtime::ParcelError,
    },
    /// A file of the folder could not be written or removed.
    #[error("could not write `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Writes every resource of the parcels at `parcels` under `dir`, in sync
/// with what an earlier call wrote there (see the module docs). Each parcel
/// is read through its patch, when `watch` has written one.
pub fn sync(
    dir: &Path,
    parcels: &[(PathBuf, Option<PathBuf>)],
) -> Result<OutDirStats, OutDirError> {
    let io_at = |path: &Path| {
        let path = path.to_owned();
        move |source| OutDirError::Io { path, source }
    };
    fs::create_dir_all(dir).map_err(io_at(dir))?;
    let listing = dir.join(LISTING);
    let before: BTreeSet<String> = fs::read_to_string(&listing)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut now = BTreeSet::new();
    let mut stats = OutDirStats::default();
    for (path, patch) in parcels {
        let buf =
            PatchedBuf::open(path, patch.as_deref()).map_err(|source| OutDirError::Parcel {
                path: path.clone(),
                source,
            })?;
        for r in buf.parcel().iter().filter(|r| r.kind != KIND_REMOVED) {
            // Names are asset paths: relative, `/`-separated, no `..`.
            if !now.insert(r.name.to_owned()) {
                continue;
            }
            // An alias is a file of its own here, holding what its
            // resource holds: loose files have no way to point.
            let name = r.name;
            let r = match r.alias_of() {
                Some(target) => match buf.parcel().by_name(target) {
                    Some(target) => target,
                    None => continue,
                },
                None => r,
            };
            let bytes = r.bytes().map_err(|source| OutDirError::Parcel {
                path: path.clone(),
                source,
            })?;
            let file = dir.join(name);
            if fs::read(&file).is_ok_and(|old| old == *bytes) {
                stats.unchanged += 1;
                continue;
            }
            write_atomically(&file, &bytes).map_err(io_at(&file))?;
            stats.written += 1;
        }
    }
    for stale in before.difference(&now) {
        let file = dir.join(stale);
        match fs::remove_file(&file) {
            Ok(()) => stats.removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_at(&file)(e)),
        }
    }
    let names: String = now.iter().map(|n| format!("{n}\n")).collect();
    write_atomically(&listing, names.as_bytes()).map_err(io_at(&listing))?;
    Ok(stats)
}

/// `bytes` at `path`, through a temporary file beside it.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}
