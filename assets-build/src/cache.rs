//! The cache as a whole: the lock that builds and cleaners take turns on,
//! and the commands that remove from it: [`clean`] (everything),
//! [`clean_package`] (one package's records and parcels, as `cargo clean
//! -p`), and [`gc`] (blobs no live record uses). Paths come from
//! [`CacheLayout`]; reading and writing blobs is the [`Store`]'s.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use crate::cache_layout::{CacheLayout, RECORD_LOG_EXTENSION};
use crate::event::{Event, EventHandler};
use crate::hash::ContentHash;
use crate::record_log;
use crate::store::{Store, StoreError};

/// Holds the cache's lock for the build: two builds on one cache take turns.
pub(crate) fn lock(store: &Store, events: EventHandler<'_>) -> Result<File, StoreError> {
    let path = store.lock_path();
    let io = |source| StoreError::Io {
        action: "could not lock",
        path: path.clone(),
        source,
    };
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            events(&Event::WaitingForLock { path: &path });
            file.lock().map_err(io)?;
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    Ok(file)
}

/// What [`clean`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanStats {
    /// Files removed.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
}

/// Removes the cache directory, waiting for any build that uses it.
pub fn clean(
    cache_dir: &std::path::Path,
    events: EventHandler<'_>,
) -> Result<CleanStats, StoreError> {
    clean_dirs(cache_dir, &[cache_dir.to_owned()], events)
}

/// Removes one package's records and parcels (of every variant) from the
/// cache, as `cargo clean -p` does, waiting for any build that uses it.
/// Blobs are shared between packages and stay; [`gc`]
/// removes those no record uses any more.
pub fn clean_package(
    cache_dir: &std::path::Path,
    package: &str,
    events: EventHandler<'_>,
) -> Result<CleanStats, StoreError> {
    let layout = CacheLayout::new(cache_dir);
    let dirs = [
        layout.package_records(package),
        layout.package_parcels(package),
    ];
    clean_dirs(cache_dir, &dirs, events)
}

/// Removes `dirs` (those that exist) under the lock of the cache at
/// `cache_dir`, counting what they held.
fn clean_dirs(
    cache_dir: &std::path::Path,
    dirs: &[PathBuf],
    events: EventHandler<'_>,
) -> Result<CleanStats, StoreError> {
    let mut stats = CleanStats::default();
    if !cache_dir.exists() {
        return Ok(stats);
    }
    let store = Store::open(cache_dir)?;
    let _lock = lock(&store, events)?;
    for dir in dirs.iter().filter(|d| d.exists()) {
        let s = remove_counted(dir)?;
        stats.files += s.files;
        stats.bytes += s.bytes;
    }
    Ok(stats)
}

/// Removes `dir` and everything in it, counting the files and bytes.
fn remove_counted(dir: &std::path::Path) -> Result<CleanStats, StoreError> {
    let mut stats = CleanStats::default();
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            stats.files += 1;
            stats.bytes += entry.metadata().map_or(0, |m| m.len());
        }
    }
    std::fs::remove_dir_all(dir).map_err(|source| StoreError::Io {
        action: "could not remove",
        path: dir.to_owned(),
        source,
    })?;
    Ok(stats)
}

/// What [`gc`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Blobs kept: used by some record.
    pub kept: u64,
    /// Blobs removed.
    pub removed: u64,
    /// Their total size.
    pub bytes_freed: u64,
}

/// Removes every blob that no live record (the latest of each asset, in
/// every package's and variant's log) uses, under the build lock: blob
/// files are removed, packs holding dead blobs rewritten.
pub fn gc(cache_dir: &Path, events: EventHandler<'_>) -> Result<GcStats, StoreError> {
    let store = Store::open(cache_dir)?;
    let _lock = lock(&store, events)?;
    store.remove_orphans()?;
    // The latest record of each asset in each log: earlier lines are never
    // read again (later lines win), so their blobs are garbage.
    let mut used = HashSet::new();
    let layout = CacheLayout::new(cache_dir);
    for log in logs(&layout.records()) {
        let bytes = std::fs::read(&log).map_err(|source| StoreError::Io {
            action: "could not read",
            path: log.clone(),
            source,
        })?;
        for record in record_log::latest(&bytes) {
            used.extend(record.outputs.iter().map(|o| o.hash));
        }
    }
    let packed = store.compact_packs(|hash| used.contains(hash))?;
    let mut stats = GcStats {
        kept: packed.kept,
        removed: packed.removed,
        bytes_freed: packed.bytes_freed,
    };
    let mut by_name: BTreeMap<PathBuf, u64> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(layout.blobs()).into_iter().flatten() {
        if entry.file_type().is_file() {
            by_name.insert(
                entry.path().to_owned(),
                entry.metadata().map_or(0, |m| m.len()),
            );
        }
    }
    for (path, size) in by_name {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        match name.parse::<ContentHash>() {
            Ok(hash) if used.contains(&hash) => stats.kept += 1,
            _ => {
                std::fs::remove_file(&path).map_err(|source| StoreError::Io {
                    action: "could not remove",
                    path: path.clone(),
                    source,
                })?;
                stats.removed += 1;
                stats.bytes_freed += size;
            }
        }
    }
    Ok(stats)
}

/// Every record log under `records/` (logs of an older format, `*.jsonl`,
/// are not: their blobs are as good as unused, since no build reads them).
fn logs(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_type().is_file()
                && e.path()
                    .extension()
                    .is_some_and(|x| x == RECORD_LOG_EXTENSION)
        })
        .map(|e| e.into_path())
        .collect()
}
