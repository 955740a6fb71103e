//! [`RecordLog`]: every step's [`Record`] of one variant, in one append-only file.
//!
//! `records/<package>/<variant>.jsonl` holds one line per written record:
//!
//! ```text
//! <64 hex digits: blake3 of the JSON> <the record as one line of JSON>\n
//! ```
//!
//! Later lines win over earlier lines for the same asset. Why one file and
//! not a file per step: a no-op build of 10,000 assets then reads one file
//! instead of opening 10,000, and a step that runs appends a line instead of
//! creating and renaming a file (both cost ~0.1 ms or more on ext4).
//!
//! Crash safety, in order:
//!
//! 1. A record is appended only after all of its blobs are in the store.
//! 2. A kill can tear the last line. Its checksum then fails and the line is
//!    ignored, so that step simply reruns; a torn tail is cut off when the log
//!    is next opened, so later appends start on a fresh line.
//! 3. Any record that is read is a valid memo ("with this key and these inputs,
//!    the outputs were these blobs"), even an old one, so replaying a log that
//!    lost its last lines is never wrong, only less fresh.
//! 4. Compaction (once superseded lines pass half the live ones, by count or
//!    by bytes: an atlas's record lists every sprite, so a few edits can
//!    leave megabytes of superseded lines) writes the live records to a temp
//!    file and renames it over the log.
//!
//! The log is read and written only under the build lock.
//!
//! **Platforms.** Each platform of a variant has its own log
//! (`<variant>.<platform>.jsonl`, see [`crate::cache_layout::variant_slot`]).
//! A step whose key is the same on every platform (its rule has no settings
//! for the platform, see [`crate::plan`]) finds its record in a sibling log
//! when its own has none with that key ([`RecordLog::shared`]): the record
//! is checked for freshness like any other and copied into this log, so a
//! step that does not differ between platforms is built once.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::asset_path::AssetPath;
use crate::cache_layout::variant_slot;
use crate::hash::ContentHash;
use crate::parallel;
use crate::record::{RECORD_FORMAT, Record};
use crate::store::{Store, StoreError};

/// The records of one variant, loaded, plus the open log to append to.
#[derive(Debug)]
pub struct RecordLog {
    path: PathBuf,
    /// The variant, whose other platforms' logs are siblings.
    variant: String,
    /// The sibling logs' records, read when first needed.
    siblings: OnceLock<Vec<HashMap<AssetPath, Arc<Record>>>>,
    /// The log's text as it was opened: compaction copies live lines from
    /// here instead of serializing their records again.
    text: Vec<u8>,
    /// The latest record per asset, with where its line is in `text`.
    records: HashMap<AssetPath, (Arc<Record>, Range<usize>)>,
    appender: Mutex<Appender>,
}

/// The open file, and what has been appended to it.
#[derive(Debug)]
struct Appender {
    file: File,
    /// Lines in the file: read at open plus appended since.
    lines: usize,
    /// Bytes in the file.
    bytes: usize,
    /// The line of each appended record, latest per asset.
    appended: HashMap<AssetPath, String>,
}

impl RecordLog {
    /// Opens (creating if needed) the log of `package`'s `variant` on
    /// `platform` in `store` and loads it.
    pub fn open(
        store: &Store,
        package: &str,
        variant: &str,
        platform: Option<&str>,
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
        let mut bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io("could not read", e)),
        };
        let Parsed {
            records,
            lines,
            valid_len,
        } = parse(&bytes);
        let file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io("could not open", e))?;
        if valid_len < bytes.len() {
            // Cut a line torn by a kill so the next append starts cleanly.
            file.set_len(valid_len as u64)
                .map_err(|e| io("could not repair", e))?;
        }
        bytes.truncate(valid_len);
        Ok(RecordLog {
            path,
            variant: variant.to_owned(),
            siblings: OnceLock::new(),
            text: bytes,
            records,
            appender: Mutex::new(Appender {
                file,
                lines,
                bytes: valid_len,
                appended: HashMap::new(),
            }),
        })
    }

    /// Reads the log of `package`'s `variant` without the build lock:
    /// nothing is created or repaired (a torn last line is just ignored).
    /// For queries; builds use [`RecordLog::open`].
    pub fn read(
        cache_dir: &Path,
        package: &str,
        variant: &str,
    ) -> Result<HashMap<AssetPath, Arc<Record>>, StoreError> {
        let path = log_path(cache_dir, package, variant);
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

    /// Appends `record`. Its blobs must already be stored.
    pub fn append(&self, record: &Record) -> Result<(), StoreError> {
        let line = line_of(record);
        let mut appender = self.appender.lock().unwrap_or_else(|p| p.into_inner());
        appender
            .file
            .write_all(line.as_bytes())
            .map_err(|source| StoreError::Io {
                action: "could not append to",
                path: self.path.clone(),
                source,
            })?;
        appender.lines += 1;
        appender.bytes += line.len();
        appender.appended.insert(record.asset.clone(), line);
        Ok(())
    }

    /// Ends the log's use in a build: rewrites it to hold just the latest
    /// lines of the `live` assets once superseded lines (or lines of assets
    /// that are gone) pass half the live ones, by count or by bytes.
    ///
    /// The live lines are copied as they are, not serialized again: after a
    /// touch-all build, which refreshes every record and so doubles the log,
    /// re-serializing 10,000 records cost more than the rest of the build.
    pub fn compact_if_worthwhile<'a>(
        &self,
        store: &Store,
        live: impl Iterator<Item = &'a AssetPath>,
    ) -> Result<(), StoreError> {
        let appender = self.appender.lock().unwrap_or_else(|p| p.into_inner());
        let lines: Vec<&[u8]> = live
            .filter_map(|asset| match appender.appended.get(asset) {
                Some(line) => Some(line.as_bytes()),
                None => self
                    .records
                    .get(asset)
                    .map(|(_, range)| &self.text[range.clone()]),
            })
            .collect();
        let live_bytes: usize = lines.iter().map(|l| l.len()).sum();
        let lines_ok = appender.lines <= lines.len() + lines.len() / 2 + 64;
        let bytes_ok = appender.bytes <= live_bytes + live_bytes / 2 + (1 << 20);
        if lines_ok && bytes_ok {
            return Ok(());
        }
        store.write_atomic_with(&self.path, |out| {
            lines.iter().try_for_each(|line| out.write_all(line))
        })
    }
}

fn line_of(record: &Record) -> String {
    let json = serde_json::to_string(record).expect("records always serialize");
    format!("{} {json}\n", ContentHash::of(json.as_bytes()))
}

/// What a log's text holds.
struct Parsed {
    /// The latest valid record per asset, with where its line is (newline
    /// included).
    records: HashMap<AssetPath, (Arc<Record>, Range<usize>)>,
    /// Lines, valid or not.
    lines: usize,
    /// The length of the prefix made of whole lines.
    valid_len: usize,
}

/// Parses a log. Parsing is the bulk of a no-op build's reading, so the text
/// is cut at line boundaries into one chunk per core; chunks are merged in
/// file order so later lines still win.
fn parse(bytes: &[u8]) -> Parsed {
    let valid_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let whole = &bytes[..valid_len];
    let parts = if whole.len() < 1 << 20 {
        1
    } else {
        parallel::cores()
    };
    // Each chunk with its offset in the text.
    let mut chunks = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..=parts {
        let target = (whole.len() * k / parts).max(start);
        let end = match whole[target..].iter().position(|&b| b == b'\n') {
            Some(i) if k < parts => target + i + 1,
            _ => whole.len(),
        };
        chunks.push((start, &whole[start..end]));
        start = end;
    }
    let parsed: Vec<Chunk> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|&(offset, chunk)| s.spawn(move || parse_chunk(chunk, offset)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("parsing does not panic"))
            .collect()
    });
    let mut records = HashMap::with_capacity(parsed.iter().map(|(c, _)| c.len()).sum());
    let mut lines = 0;
    for (chunk, n) in parsed {
        lines += n;
        for (r, range) in chunk {
            records.insert(r.asset.clone(), (Arc::new(r), range));
        }
    }
    Parsed {
        records,
        lines,
        valid_len,
    }
}

/// What [`parse_chunk`] returns.
type Chunk = (Vec<(Record, Range<usize>)>, usize);

/// The valid records of whole lines, in order, each with where its line is
/// (newline included; `offset` is the chunk's place in the text), and the
/// number of lines.
fn parse_chunk(chunk: &[u8], offset: usize) -> Chunk {
    let mut records = Vec::new();
    let mut lines = 0;
    let mut start = offset;
    for line in chunk.split(|&b| b == b'\n') {
        let range = start..start + line.len() + 1;
        start = range.end;
        if line.is_empty() {
            continue;
        }
        lines += 1;
        records.extend(parse_line(line).map(|r| (r, range)));
    }
    (records, lines)
}

/// The other logs of `variant` beside the log at `own`, sorted:
/// `<variant>.jsonl` and `<variant>.<platform>.jsonl` (variant names hold
/// no `.`, so these are exactly its platforms' logs).
pub(crate) fn sibling_logs(own: &Path, variant: &str) -> Vec<PathBuf> {
    let Some(entries) = own.parent().and_then(|dir| fs::read_dir(dir).ok()) else {
        return Vec::new();
    };
    let (base, prefix) = (format!("{variant}.jsonl"), format!("{variant}."));
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p != own)
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == base || (n.starts_with(&prefix) && n.ends_with(".jsonl")))
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

/// One line's record, if the line is whole, checksummed and of this format.
fn parse_line(line: &[u8]) -> Option<Record> {
    let (hash, json) = line.split_at_checked(64)?;
    let json = json.strip_prefix(b" ")?;
    let hash: ContentHash = std::str::from_utf8(hash).ok()?.parse().ok()?;
    if ContentHash::of(json) != hash {
        return None;
    }
    let record: Record = serde_json::from_slice(json).ok()?;
    (record.format == RECORD_FORMAT).then_some(record)
}

/// The path of the log of `package`'s `variant` under the cache directory
/// `cache_dir`. Packages of a workspace share the blobs of one cache, never
/// records: asset paths are only unique within a package.
pub fn log_path(cache_dir: &Path, package: &str, variant: &str) -> PathBuf {
    crate::CacheLayout::new(cache_dir).record_log(package, variant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::OutputRecord;

    fn record(asset: &str, size: u64) -> Record {
        Record {
            format: RECORD_FORMAT,
            asset: AssetPath::new(asset).unwrap(),
            variant: "dev".into(),
            processor: "copy".into(),
            processor_version: 1,
            settings: "{}".into(),
            key: ContentHash::of(asset.as_bytes()),
            started_ns: 1,
            inputs: vec![],
            dependencies: vec![],
            outputs: vec![OutputRecord {
                label: String::new(),
                kind: "bytes".into(),
                size,
                hash: ContentHash::of(b"x"),
            }],
            reason: None,
            fetched_from: None,
        }
    }

    #[test]
    fn later_lines_win_and_torn_or_corrupt_lines_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        log.append(&record("a", 1)).unwrap();
        log.append(&record("b", 1)).unwrap();
        log.append(&record("a", 2)).unwrap();
        drop(log);
        let path = log_path(dir.path(), "pkg", "dev");
        // Flip a byte inside b's JSON, then tear a half-written line onto the end.
        let mut bytes = fs::read(&path).unwrap();
        let b_line = bytes.split(|&c| c == b'\n').nth(1).unwrap().len();
        let first = bytes.iter().position(|&c| c == b'\n').unwrap() + 1;
        bytes[first + b_line - 3] ^= 1;
        let whole = bytes.len();
        bytes.extend_from_slice(&line_of(&record("c", 1)).as_bytes()[..50]);
        fs::write(&path, &bytes).unwrap();

        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        assert_eq!(
            log.get(&AssetPath::new("a").unwrap()).unwrap().outputs[0].size,
            2
        );
        assert!(
            log.get(&AssetPath::new("b").unwrap()).is_none(),
            "corrupt line is not trusted"
        );
        assert!(
            log.get(&AssetPath::new("c").unwrap()).is_none(),
            "torn line is not trusted"
        );
        assert_eq!(
            fs::metadata(&path).unwrap().len() as usize,
            whole,
            "torn tail is cut"
        );
        log.append(&record("c", 3)).unwrap();
        drop(log);
        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        assert_eq!(
            log.get(&AssetPath::new("c").unwrap()).unwrap().outputs[0].size,
            3
        );
    }

    #[test]
    fn compaction_keeps_only_live_records() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        for i in 0..100 {
            log.append(&record("a", i)).unwrap();
        }
        let live = record("a", 99);
        log.compact_if_worthwhile(&store, std::iter::once(&live.asset))
            .unwrap();
        let text = fs::read_to_string(log_path(dir.path(), "pkg", "dev")).unwrap();
        assert_eq!(text.lines().count(), 1);
        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        assert_eq!(
            log.get(&AssetPath::new("a").unwrap()).unwrap().outputs[0].size,
            99
        );
    }

    #[test]
    fn a_few_superseded_huge_lines_are_compacted_away() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut big = record("atlas", 1);
        big.settings = "x".repeat(1_000_000);
        let small: Vec<Record> = (0..200).map(|i| record(&format!("s{i}"), 1)).collect();
        for build in 0..8 {
            let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
            if build == 0 {
                small.iter().for_each(|r| log.append(r).unwrap());
            }
            big.started_ns = build;
            log.append(&big).unwrap();
            log.compact_if_worthwhile(&store, small.iter().chain([&big]).map(|r| &r.asset))
                .unwrap();
        }
        let text = fs::read_to_string(log_path(dir.path(), "pkg", "dev")).unwrap();
        // Without compaction by bytes: 8 MB in 208 lines.
        assert!(
            text.len() < 3_700_000,
            "few lines, but {} bytes: superseded big lines were kept",
            text.len()
        );
        let log = RecordLog::open(&store, "pkg", "dev", None).unwrap();
        assert_eq!(log.get(&big.asset).unwrap().started_ns, 7);
        // The small records were copied from the text read at open, builds
        // after the one that appended them.
        for r in &small {
            assert_eq!(**log.get(&r.asset).unwrap(), *r, "{}", r.asset);
        }
    }
}
