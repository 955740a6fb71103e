//! [`RecordLog`]: every step's [`Record`] of one variant, in one append-only file.
//!
//! `records/<package>/<variant>.records` holds a header line, then one frame
//! per written record:
//!
//! ```text
//! cargo-assets records 2\n                      (the header, once)
//! <u32 length> <u64 xxh3 of the payload> <payload: the record, see record_codec.rs>
//! ```
//!
//! Later frames win over earlier frames for the same asset. Why one file
//! and not a file per step: a no-op build of 10,000 assets then reads one
//! file instead of opening 10,000, and a step that runs appends a frame
//! instead of creating and renaming a file (both cost ~0.1 ms or more on
//! ext4). Why binary: reading every record is the longest part of a no-op
//! build, and JSON lines took ~6× as long (`record_codec.rs` says more).
//! The log of the format before, `<variant>.jsonl`, is removed when the new
//! one is opened: its records are not read, and every step runs once.
//!
//! Crash safety, in order:
//!
//! 1. A record is appended only after all of its blobs are in the store,
//!    and written only after them: frames are written in batches (at most
//!    about a second old, see [`RecordLog::append`]), each after the
//!    store's packs, which batch their small blobs too. A kill loses the
//!    batch, and those steps run again.
//! 2. A kill can tear the last frame: it is cut off when the log is next
//!    opened, so that step simply reruns and later appends start cleanly.
//!    A frame whose checksum fails, or whose record does not decode, is
//!    skipped; a damaged length, which leaves nothing to resynchronize on,
//!    ends the log there (what follows is cut off and rebuilt).
//! 3. Any record that is read is a valid memo ("with this key and these inputs,
//!    the outputs were these blobs"), even an old one, so replaying a log that
//!    lost its last frames is never wrong, only less fresh.
//! 4. Compaction (once superseded frames pass half the live ones, by count or
//!    by bytes: an atlas's record lists every sprite, so a few edits can
//!    leave megabytes of superseded frames) writes the live records to a temp
//!    file and renames it over the log. The check is made when the log is
//!    read whole (against its own records) and at the end of a build that
//!    appended more than a little since the last check (against the
//!    plan's assets, so the records of assets that left the tree go too).
//!
//! The log is read and written only under the build lock.
//!
//! **Platforms.** Each platform of a variant has its own log
//! (`<variant>.<platform>.records`, see [`crate::cache_layout::variant_slot`]).
//! A step whose key is the same on every platform (its rule has no settings
//! for the platform, see [`crate::plan`]) finds its record in a sibling log
//! when its own has none with that key ([`RecordLog::shared`]): the record
//! is checked for freshness like any other and copied into this log, so a
//! step that does not differ between platforms is built once.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::xxh3_64;

use crate::asset_path::{AssetMap, AssetPath};
use crate::cache_layout::{RECORD_LOG_EXTENSION, variant_slot};
use crate::hash::ContentHash;
use crate::parallel;
use crate::record::{RECORD_FORMAT, Record};
use crate::record_codec;
use crate::store::{Store, StoreError};

/// The first bytes of every log: what the file is, and its layout's
/// version (the 1 was the JSON lines of `<variant>.jsonl`).
const HEADER: &[u8] = b"cargo-assets records 2\n";

/// A frame's length and checksum, before its payload.
const FRAME_HEAD: usize = 4 + 8;

/// The records of one variant, loaded, plus the open log to append to.
#[derive(Debug)]
pub struct RecordLog {
    path: PathBuf,
    /// The variant, whose other platforms' logs are siblings.
    variant: String,
    /// The sibling logs' records, read when first needed.
    siblings: OnceLock<Vec<HashMap<AssetPath, Arc<Record>>>>,
    /// The log's bytes as it was opened: compaction copies live frames from
    /// here instead of encoding their records again.
    bytes: Vec<u8>,
    /// The frames in `bytes`, valid or not.
    frames: usize,
    /// The latest record per asset, with where its frame is in `bytes`.
    records: AssetMap<(Arc<Record>, Range<usize>)>,
    /// The assets whose record may differ from the `previous` log's this
    /// one was opened with; `None` if it was read whole.
    changed: Option<HashSet<AssetPath>>,
    /// Which file `bytes` were read from (device and inode), where the
    /// platform says: the next [`RecordLog::open`] reads only what was
    /// appended to that same file since.
    file_id: Option<(u64, u64)>,
    appender: Mutex<Appender>,
}

/// The open file, and what has been appended to it.
#[derive(Debug)]
struct Appender {
    file: File,
    /// Frames in the file: read at open plus appended since (the pending
    /// ones included).
    frames: usize,
    /// Bytes in the file, the pending ones included.
    bytes: usize,
    /// The frame of each appended record, latest per asset.
    appended: AssetMap<Vec<u8>>,
    /// Frames appended and not yet written, and since when the oldest
    /// waits (see [`RecordLog::append`]).
    pending: Vec<u8>,
    pending_since: Option<Instant>,
    /// `(frames, bytes)` when [`RecordLog::compact_if_worthwhile`] last
    /// found the log worth keeping as it is.
    checked_at: Option<(usize, usize)>,
}

impl Drop for Appender {
    /// A log dropped without [`RecordLog::flush`] (a build that ended in an
    /// error) still writes its last frames, if it can. The store's packs
    /// may then be written after them; a kill in between leaves a record
    /// naming a blob that is not stored, which the next build treats like
    /// any missing output, by running the step again (the store's rule 2).
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let _ = self.file.write_all(&self.pending);
        }
    }
}

/// Pending frames are written once they pass this many bytes ...
const FLUSH_AT: usize = 64 << 10;
/// ... or once the oldest has waited this long, so that a kill loses at
/// most about a second of records (their steps run again).
const FLUSH_AFTER: Duration = Duration::from_secs(1);

impl RecordLog {
    /// Opens (creating if needed) the log of `package`'s `variant` on
    /// `platform` in `store` and loads it.
    ///
    /// `previous` is the log as an earlier build of this process left it,
    /// with what that build appended. When the file still starts with the
    /// bytes `previous` read, only what follows them is parsed. Whoever appended it (this process or
    /// another), a log that starts with those bytes holds their records,
    /// overridden by the later frames; a log rewritten by compaction, or
    /// replaced, does not start with them and is read whole.
    pub fn open(
        store: &Store,
        package: &str,
        variant: &str,
        platform: Option<&str>,
        previous: Option<RecordLog>,
    ) -> Result<RecordLog, StoreError> {
        let path = log_path(store.dir(), package, &variant_slot(variant, platform));
        let io = |action, source| StoreError::Io {
            action,
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io("could not create", e))?;
        }
        // What the previous log has not written yet is read back below.
        if let Some(previous) = &previous {
            previous.flush(store)?;
        }
        // The log of the format before: never read again.
        let _ = fs::remove_file(path.with_extension("jsonl"));
        // The previous log's file, grown by appends only: its bytes are
        // taken as they are and the rest read (at 10k assets the log is a
        // few MB, which each watched build read and compared whole).
        let mut previous = previous.filter(|p| p.path == path);
        let prefix_len = previous.as_ref().map_or(0, |p| p.bytes.len());
        let grown = previous
            .as_mut()
            .and_then(|p| {
                let tail = read_after(&path, p.file_id?, &p.bytes)?;
                Some((p, tail))
            })
            .map(|(p, tail)| {
                let mut bytes = std::mem::take(&mut p.bytes);
                bytes.extend_from_slice(&tail);
                bytes
            });
        let (mut bytes, previous) = match grown {
            Some(bytes) => (bytes, previous),
            None => {
                let bytes = match fs::read(&path) {
                    Ok(b) => b,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
                    Err(e) => return Err(io("could not read", e)),
                };
                let previous = previous.filter(|p| bytes.starts_with(&p.bytes));
                (bytes, previous)
            }
        };
        let mut checked_at = None;
        let mut changed = None;
        let Parsed {
            records,
            frames,
            valid_len,
        } = match previous {
            Some(previous) => {
                let tail = parse_from(&bytes, prefix_len);
                checked_at = (previous.appender.into_inner())
                    .unwrap_or_else(|p| p.into_inner())
                    .checked_at
                    .take();
                let mut records = previous.records;
                changed = Some(tail.records.keys().cloned().collect());
                // In file order: the tail's frames are later, so they win.
                records.extend(tail.records);
                Parsed {
                    records,
                    frames: previous.frames + tail.frames,
                    valid_len: tail.valid_len,
                }
            }
            None => parse(&bytes),
        };
        let mut file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io("could not open", e))?;
        if valid_len < bytes.len() {
            // Cut a frame torn by a kill so the next append starts cleanly
            // (or all of a file that is not a log of this format).
            file.set_len(valid_len as u64)
                .map_err(|e| io("could not repair", e))?;
            bytes.truncate(valid_len);
        }
        if bytes.is_empty() {
            file.write_all(HEADER)
                .map_err(|e| io("could not write", e))?;
            bytes.extend_from_slice(HEADER);
        }
        let len = bytes.len();
        if changed.is_none() {
            // Read whole, the log is checked here against its own records,
            // which costs a pass over the map's values; the check against
            // the plan's assets at the end of the build reads every asset's
            // name and hashes it (2 s of a 12 s no-op at a million assets).
            // A log as tight as its own records is checked again once it
            // grew past the slack: the records of assets that left the tree
            // since go then, as in a watched session.
            let live_bytes = records.values().map(|(_, r)| r.len()).sum();
            if !worth_compacting(frames, len, records.len(), live_bytes) {
                checked_at = Some((frames, len));
            }
        }
        let file_id = file.metadata().ok().and_then(|m| file_id(&m));
        Ok(RecordLog {
            path,
            variant: variant.to_owned(),
            siblings: OnceLock::new(),
            bytes,
            frames,
            records,
            changed,
            file_id,
            appender: Mutex::new(Appender {
                file,
                frames,
                bytes: len,
                appended: AssetMap::default(),
                pending: Vec::new(),
                pending_since: None,
                checked_at,
            }),
        })
    }

    /// The assets whose record may differ from the one the `previous` log
    /// given to [`RecordLog::open`] held: those a frame read since is of.
    /// Every other asset's record is the same `Arc` as there. `None` if
    /// the log was read whole, when any may differ.
    pub fn changed_since_previous(&self) -> Option<&HashSet<AssetPath>> {
        self.changed.as_ref()
    }

    /// The latest record of every asset the log holds.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Record>> {
        self.records.values().map(|(r, _)| r)
    }

    /// The latest record of `asset`.
    pub fn get(&self, asset: &AssetPath) -> Option<&Arc<Record>> {
        self.records.get(asset).map(|(r, _)| r)
    }

    /// The records of `asset` with key `key` in the logs of this variant's
    /// other platforms (and of no platform): the same step, built there,
    /// each once. The caller checks them for freshness, and appends the one
    /// it uses here.
    pub fn shared(&self, asset: &AssetPath, key: &ContentHash) -> Vec<Arc<Record>> {
        let mut found: Vec<Arc<Record>> = Vec::new();
        let logs = self.siblings.get_or_init(|| self.read_siblings());
        for record in logs.iter().filter_map(|log| log.get(asset)) {
            if record.key == *key && !found.iter().any(|f| f == record) {
                found.push(Arc::clone(record));
            }
        }
        found
    }

    /// The records of this variant's other logs. Unreadable ones are
    /// skipped: sharing only saves work.
    fn read_siblings(&self) -> Vec<HashMap<AssetPath, Arc<Record>>> {
        sibling_logs(&self.path, &self.variant)
            .iter()
            .filter_map(|p| fs::read(p).ok())
            .map(|bytes| records_of(&bytes))
            .collect()
    }

    /// Appends `record`, whose blobs must already be in `store`.
    ///
    /// Frames are written in batches: one `write` per record was 2.5% of a
    /// cold build's time. A batch is written once it passes [`FLUSH_AT`]
    /// bytes or its oldest frame [`FLUSH_AFTER`], and by
    /// [`RecordLog::flush`]; the store's packs are written first, so a
    /// record on disk never names a blob that is not (rule 1).
    pub fn append(&self, store: &Store, record: &Record) -> Result<(), StoreError> {
        let frame = frame_of(record);
        let mut appender = self.lock();
        appender.pending.extend_from_slice(&frame);
        appender.pending_since.get_or_insert_with(Instant::now);
        appender.frames += 1;
        appender.bytes += frame.len();
        appender.appended.insert(record.asset.clone(), frame);
        let due = appender.pending.len() >= FLUSH_AT
            || appender
                .pending_since
                .is_some_and(|t| t.elapsed() >= FLUSH_AFTER);
        if due {
            appender.flush(store, &self.path)?;
        }
        Ok(())
    }

    /// Writes the frames appended and not yet written (after the store's
    /// packs). A build calls it when its steps are done.
    pub fn flush(&self, store: &Store) -> Result<(), StoreError> {
        self.lock().flush(store, &self.path)
    }

    fn lock(&self) -> MutexGuard<'_, Appender> {
        self.appender.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the log's use in a build: rewrites it to hold just the latest
    /// frames of the `live` assets (read only when the log is checked) and
    /// of the temporary builds their records name, once superseded frames
    /// (or frames of assets that are gone) pass half the live ones, by
    /// count or by bytes.
    ///
    /// The live frames are copied as they are, not encoded again: after a
    /// touch-all build, which refreshes every record and so doubles the log,
    /// serializing 10,000 records again cost more than the rest of the build
    /// (as JSON, when the log was JSON).
    ///
    /// A log that appended nothing (the build `watch` makes once idle)
    /// then holds the bytes it wrote, as if it had read them: the next
    /// [`RecordLog::open`] given it reads nothing back. Before, that open
    /// found a file it had not read and parsed it whole: at 1M assets
    /// 2.3 s of the next edit, for a log of 450 MB.
    pub fn compact_if_worthwhile<'a>(
        &mut self,
        store: &Store,
        live: impl Iterator<Item = &'a AssetPath>,
    ) -> Result<(), StoreError> {
        let this = &*self;
        let mut appender = this.lock();
        appender.flush(store, &this.path)?;
        // Within the thresholds' own slack of the last check that found
        // the log fine, it cannot have become worth compacting by much: a
        // watched edit appends a few frames, and the check reads every live
        // asset's frame (~4 ms at 10k).
        if let Some((frames, bytes)) = appender.checked_at
            && appender.frames < frames + RECHECK_FRAMES
            && appender.bytes < bytes + RECHECK_BYTES
        {
            return Ok(());
        }
        // An asset named twice (a temporary build several steps use) is
        // kept once. The temporary builds that the live assets' records
        // (as read) name are kept after the rest.
        let latest = |asset: &AssetPath| match appender.appended.get(asset) {
            Some(frame) => Some(frame.as_slice()),
            None => (this.records.get(asset)).map(|(_, range)| &this.bytes[range.clone()]),
        };
        let mut seen: HashSet<&AssetPath> = HashSet::new();
        let mut used_temporaries: Vec<&AssetPath> = Vec::new();
        let mut frames: Vec<(&AssetPath, &[u8])> = Vec::new();
        for asset in live {
            if seen.insert(asset) {
                frames.extend(latest(asset).map(|frame| (asset, frame)));
                if let Some((record, _)) = this.records.get(asset) {
                    let named = record.dependencies.iter().map(|d| &d.asset);
                    used_temporaries.extend(named.filter(|a| a.is_temporary()));
                }
            }
        }
        for asset in used_temporaries {
            if seen.insert(asset) {
                frames.extend(latest(asset).map(|frame| (asset, frame)));
            }
        }
        let live_bytes: usize = frames.iter().map(|(_, f)| f.len()).sum();
        if !worth_compacting(appender.frames, appender.bytes, frames.len(), live_bytes) {
            appender.checked_at = Some((appender.frames, appender.bytes));
            return Ok(());
        }
        if !appender.appended.is_empty() {
            // Records this log has not parsed (it appended them): the
            // next open reads the file whole, as another process's would.
            return store.write_atomic_with(&this.path, |out| {
                out.write_all(HEADER)?;
                frames.iter().try_for_each(|(_, frame)| out.write_all(frame))
            });
        }
        let mut bytes = Vec::with_capacity(HEADER.len() + live_bytes);
        bytes.extend_from_slice(HEADER);
        let placed: Vec<(AssetPath, Range<usize>)> = (frames.into_iter())
            .map(|(asset, frame)| {
                let start = bytes.len();
                bytes.extend_from_slice(frame);
                (asset.clone(), start..bytes.len())
            })
            .collect();
        drop(appender);
        store.write_atomic(&self.path, &bytes)?;
        let io = |action| {
            let path = self.path.clone();
            move |source| StoreError::Io {
                action,
                path,
                source,
            }
        };
        let file = File::options()
            .append(true)
            .open(&self.path)
            .map_err(io("could not open"))?;
        self.file_id = file.metadata().ok().and_then(|m| file_id(&m));
        let mut records = AssetMap::default();
        records.reserve(placed.len());
        for (asset, range) in placed {
            if let Some((record, _)) = self.records.remove(&asset) {
                records.insert(asset, (record, range));
            }
        }
        self.records = records;
        self.frames = self.records.len();
        self.bytes = bytes;
        let appender = self.appender.get_mut().unwrap_or_else(|p| p.into_inner());
        appender.file = file;
        appender.frames = self.frames;
        appender.bytes = self.bytes.len();
        appender.checked_at = Some((appender.frames, appender.bytes));
        Ok(())
    }
}

impl Appender {
    /// Writes the frames appended and not yet written to the log at
    /// `path`, after the store's packs.
    fn flush(&mut self, store: &Store, path: &Path) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        store.flush_packs()?;
        let pending = std::mem::take(&mut self.pending);
        self.pending_since = None;
        self.file.write_all(&pending).map_err(|source| StoreError::Io {
            action: "could not append to",
            path: path.to_owned(),
            source,
        })
    }
}

/// Whether a log of `frames` frames and `bytes` bytes is worth rewriting
/// to hold `live_frames` frames of `live_bytes` bytes: once the superseded
/// ones pass half the live ones, by count or by bytes (with some slack for
/// small logs).
fn worth_compacting(frames: usize, bytes: usize, live_frames: usize, live_bytes: usize) -> bool {
    let frames_ok = frames <= live_frames + live_frames / 2 + 64;
    let bytes_ok = bytes <= HEADER.len() + live_bytes + live_bytes / 2 + (1 << 20);
    !(frames_ok && bytes_ok)
}

/// How many frames, or bytes, a log may grow by after a check that found
/// it fine before [`RecordLog::compact_if_worthwhile`] checks again.
const RECHECK_FRAMES: usize = 64;
const RECHECK_BYTES: usize = 256 << 10;

/// What was appended after `prefix`, the bytes of the log at `path` as
/// last read, if it is still the file `id` names (not replaced by a
/// compaction), no shorter, and ends `prefix` the same way (an inode number
/// freed by a `clean` may come back for a new log).
fn read_after(path: &Path, id: (u64, u64), prefix: &[u8]) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if file_id(&meta)? != id || meta.len() < prefix.len() as u64 {
        return None;
    }
    let overlap = prefix.len().min(4096);
    let from = prefix.len() - overlap;
    file.seek(SeekFrom::Start(from as u64)).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    if tail.get(..overlap)? != &prefix[from..] {
        return None;
    }
    tail.drain(..overlap);
    Some(tail)
}

/// A file's device and inode, where the platform has them.
#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// `record`'s frame: length, checksum, payload.
fn frame_of(record: &Record) -> Vec<u8> {
    let mut frame = vec![0; FRAME_HEAD];
    record_codec::encode(record, &mut frame);
    let payload = &frame[FRAME_HEAD..];
    let len = u32::try_from(payload.len()).expect("a record under 4 GiB");
    let sum = xxh3_64(payload);
    frame[..4].copy_from_slice(&len.to_le_bytes());
    frame[4..FRAME_HEAD].copy_from_slice(&sum.to_le_bytes());
    frame
}

/// What a log's bytes hold.
struct Parsed {
    /// The latest valid record per asset, with where its frame is.
    records: AssetMap<(Arc<Record>, Range<usize>)>,
    /// Frames, valid or not.
    frames: usize,
    /// The length of the prefix made of the header and whole frames; 0 if
    /// the bytes are not a log of this format.
    valid_len: usize,
}

/// Parses a log. Reading is the bulk of a no-op build's reading, so the
/// frames are found first (a jump from length to length), then checked and
/// decoded on every core; they are merged in file order so later frames
/// still win.
fn parse(bytes: &[u8]) -> Parsed {
    if !bytes.starts_with(HEADER) {
        return Parsed {
            records: AssetMap::default(),
            frames: 0,
            valid_len: 0,
        };
    }
    parse_from(bytes, HEADER.len())
}

/// [`parse`] of the frames from `start` on (where a frame begins), the
/// bytes before it already read; the ranges are of the whole `bytes`.
fn parse_from(bytes: &[u8], start: usize) -> Parsed {
    let mut frames = Vec::new();
    let mut at = start;
    while let Some(head) = bytes.get(at..at + FRAME_HEAD) {
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| (at + FRAME_HEAD).checked_add(len))
            .filter(|&end| end <= bytes.len());
        let Some(end) = end else { break };
        frames.push(at..end);
        at = end;
    }
    // A small log is decoded faster than threads start. Each record is
    // put in its `Arc`, and its key copied, on the thread that decoded it:
    // done in the loop below, that was a single-threaded tenth of a no-op.
    let entry = |f: &Range<usize>| {
        record_at(bytes, f).map(|(record, range)| (record.asset.clone(), Arc::new(record), range))
    };
    let decoded = if at - start < 1 << 20 {
        frames.iter().map(entry).collect()
    } else {
        parallel::map(&frames, entry)
    };
    let mut records = AssetMap::with_capacity_and_hasher(frames.len(), Default::default());
    for (asset, record, range) in decoded.into_iter().flatten() {
        records.insert(asset, (record, range));
    }
    Parsed {
        records,
        frames: frames.len(),
        valid_len: at,
    }
}

/// The record of the frame at `range` of `bytes`, if its checksum holds
/// and it decodes to a record of this format; with the range.
fn record_at(bytes: &[u8], range: &Range<usize>) -> Option<(Record, Range<usize>)> {
    let frame = &bytes[range.clone()];
    let (head, payload) = frame.split_at(FRAME_HEAD);
    let sum = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
    if xxh3_64(payload) != sum {
        return None;
    }
    let record = record_codec::decode(payload)?;
    (record.format == RECORD_FORMAT).then_some((record, range.clone()))
}

/// The other logs of `variant` beside the log at `own`, sorted:
/// `<variant>.records` and `<variant>.<platform>.records` (variant names
/// hold no `.`, so these are exactly its platforms' logs).
pub(crate) fn sibling_logs(own: &Path, variant: &str) -> Vec<PathBuf> {
    let Some(entries) = own.parent().and_then(|dir| fs::read_dir(dir).ok()) else {
        return Vec::new();
    };
    let suffix = format!(".{RECORD_LOG_EXTENSION}");
    let (base, prefix) = (format!("{variant}{suffix}"), format!("{variant}."));
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p != own)
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == base || (n.starts_with(&prefix) && n.ends_with(&suffix)))
        })
        .collect();
    paths.sort();
    paths
}

/// The latest record of each asset in a log's bytes.
pub(crate) fn records_of(bytes: &[u8]) -> HashMap<AssetPath, Arc<Record>> {
    parse(bytes)
        .records
        .into_iter()
        .map(|(asset, (record, _))| (asset, record))
        .collect()
}

/// The latest valid record of each asset in a log's bytes.
pub(crate) fn latest(bytes: &[u8]) -> impl Iterator<Item = Arc<Record>> {
    parse(bytes).records.into_values().map(|(record, _)| record)
}

/// The latest record of each asset in the log of `package`'s `slot` (a
/// variant, or `variant.platform`: see [`variant_slot`]) under
/// `cache_dir`, without the build lock: nothing is created or repaired (a
/// torn last frame is just ignored); empty if there is no log. For queries
/// and tools; builds open the log with `RecordLog::open`.
pub fn read_records(
    cache_dir: &Path,
    package: &str,
    slot: &str,
) -> Result<HashMap<AssetPath, Arc<Record>>, StoreError> {
    let path = log_path(cache_dir, package, slot);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(StoreError::Io {
                action: "could not read",
                path,
                source,
            });
        }
    };
    Ok(records_of(&bytes))
}

/// The path of the log of `package`'s `variant` under the cache directory
/// `cache_dir`. Packages of a workspace share the blobs of one cache, never
/// records: asset paths are only unique within a package.
pub fn log_path(cache_dir: &Path, package: &str, variant: &str) -> PathBuf {
    crate::cache_layout::CacheLayout::new(cache_dir).record_log(package, variant)
}

#[cfg(test)]
mod tests;
