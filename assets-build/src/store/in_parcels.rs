//! [`InParcels`]: the blobs the cache's own parcels hold whole, the second
//! place the store looks for a blob.
//!
//! Most of what a build makes ends up in a parcel as it is: a texture, a
//! level, a shader, an atlas page. Keeping each also as a blob in the store
//! held it twice (at 10k assets, 43 of a cold build's 122 MB). So an output
//! that a parcel of the same build stores whole is kept in memory while the
//! build runs ([`Store::put_deferred`](super::Store::put_deferred)), and at
//! the end written to the store only if no parcel took it
//! ([`Store::flush_deferred`](super::Store::flush_deferred)). Later builds
//! find it here.
//!
//! What a parcel holds is read from its `.sums` file ([`parcel_sums`]),
//! which maps each resource to its blob hash; its table checksum ties it
//! to the parcel file (whose header alone is read to compare), so lines
//! left by a build killed between writing the two are not trusted. The
//! `.sums` files are read when the store first misses a blob (a
//! long-lived pipeline keeps each as read while its file is the same,
//! [`KeptSums`]); a parcel is
//! opened (memory-mapped and validated) when a blob is first read from it,
//! and kept open for the rest of the build: a parcel this build replaces
//! (by rename, never in place) can still be read from the version that
//! was opened, and the parcel stage has each parcel it is about to replace
//! opened first ([`InParcels::keep_open`]). One replaced by another
//! program no longer matches its table checksum, and what it held is read
//! as missing (the steps that made it run again), not as corrupt.
//!
//! A blob read from a parcel is decompressed and checked against its hash.
//! One that does not match (a hand edit, disk corruption) is reported as
//! corrupt like a stored blob, and its parcel is trusted no more: its
//! `.sums` is removed, so what it held counts as missing (now and in later
//! builds) and the steps that made it run again. A step of the same build
//! that reads another of its blobs still gets it, checked against its
//! hash: under `verify`, which checks every step at once, such a step
//! failed with "could not read" when the damage was found a moment before.
//!
//! A parcel's patch (written by `watch` after an edit, see
//! `parcels/patch.rs`) is looked at as a parcel of its own, through its
//! `.patch.sums`: an atlas page redrawn by an edit is then held by the
//! patch alone, not compressed and stored a second time on the way from a
//! save to its reload notice. The base comes first where both hold a blob.
//! The patch is replaced by the next edit's (kept open first, as a parcel
//! is) and removed once `watch` writes the parcel whole, which then holds
//! what it held.
//!
//! Only the CLI's parcels are looked at (`parcels/<package>/<slot>/` in the
//! cache), never a build script's (in `OUT_DIR`, which Cargo may delete).
//! Deleting a parcel, or `clean -p` of its package, makes the steps whose
//! outputs only it held run again.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::sync::atomic::{AtomicBool, Ordering};

use assets_runtime::ParcelBuf;
use assets_runtime::line_escape::unescape;

use super::{BlobLocation, StoreError};
use crate::hash::ContentHash;
use crate::parcel_sums;
use crate::record::FileStamp;

/// The blobs a set of parcels holds whole, and the parcels.
#[derive(Debug, Default)]
pub(crate) struct InParcels {
    parcels: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    /// Whether it is a parcel's patch (opened as one).
    patch: bool,
    /// The parcel the `.sums` describes, opened (and validated) on the
    /// first read; `None` if it no longer opens as that parcel.
    buf: OnceLock<Option<ParcelBuf>>,
    /// What its `.sums` says.
    index: Arc<SumsIndex>,
    /// Set when one of its resources was found corrupt.
    distrusted: AtomicBool,
}

/// What one `.sums` file says: the table checksum of the parcel it
/// describes, and the resource holding each blob that parcel holds whole.
#[derive(Debug)]
pub(crate) struct SumsIndex {
    table_checksum: u64,
    blobs: HashMap<ContentHash, String>,
}

impl SumsIndex {
    /// The index of a `.sums` text; `None` without its header.
    pub(crate) fn of(text: &str) -> Option<SumsIndex> {
        let (_, table_checksum) = parcel_sums::header(text)?;
        let mut blobs = HashMap::new();
        for (content, name) in parcel_sums::lines(text) {
            if let Some(hash) = parcel_sums::whole_blob(content) {
                blobs
                    .entry(hash)
                    .or_insert_with(|| unescape(name).into_owned());
            }
        }
        Some(SumsIndex {
            table_checksum,
            blobs,
        })
    }
}

/// The `.sums` files a long-lived pipeline has read, by path, each with
/// the stamp of the file it was read from: a build's store reads again
/// only those another file has replaced since. At 1M files the parcel's
/// `.sums` is 141 MB, and reading it again took 0.35 s of each watched
/// edit (an atlas asks whether the parcel holds its pages, `Memo::held`).
#[derive(Debug, Default)]
pub(crate) struct KeptSums(Mutex<HashMap<PathBuf, (FileStamp, Arc<SumsIndex>)>>);

impl KeptSums {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (FileStamp, Arc<SumsIndex>)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `index`, of the text just written to the `.sums` at `path`,
    /// whose stamp is now `stamp`: the next build's store then reads
    /// nothing of it (a watched pipeline writes its parcels whole when
    /// idle, and the first edit after would read them back).
    pub(crate) fn keep(&self, path: &Path, stamp: FileStamp, index: SumsIndex) {
        self.lock().insert(path.to_owned(), (stamp, Arc::new(index)));
    }
}

/// The file name ending of a parcel's `.sums`.
const SUMS_SUFFIX: &str = ".parcel.sums";
/// The file name ending of a parcel's patch's `.sums`.
const PATCH_SUMS_SUFFIX: &str = ".parcel.patch.sums";

impl InParcels {
    /// The parcels of every package and variant under `parcels` (the
    /// cache's `parcels/`, laid out `<package>/<slot>/`). Reads each
    /// `.sums` (but those `kept` has, as they were), and each parcel's
    /// header only: a no-op build asks whether outputs exist, and reads
    /// none.
    pub(crate) fn load(parcels: &Path, kept: Option<&KeptSums>) -> InParcels {
        let mut held = InParcels::default();
        let mut seen = Vec::new();
        for package in sorted_entries(parcels) {
            for slot in sorted_entries(&package) {
                held.add_dir(&slot, kept, &mut seen);
            }
        }
        // What is gone, or was not read again, is not kept.
        if let Some(kept) = kept {
            kept.lock().retain(|path, _| seen.contains(path));
        }
        held
    }

    fn add_dir(&mut self, dir: &Path, kept: Option<&KeptSums>, seen: &mut Vec<PathBuf>) {
        for sums in sorted_entries(dir) {
            let Some(name) = sums.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            // Sorted, so a parcel's `.sums` comes before its patch's.
            let (parcel, patch) = if let Some(stem) = name.strip_suffix(SUMS_SUFFIX) {
                (dir.join(format!("{stem}.parcel")), false)
            } else if let Some(stem) = name.strip_suffix(PATCH_SUMS_SUFFIX) {
                (dir.join(format!("{stem}.parcel.patch")), true)
            } else {
                continue;
            };
            if let Some(index) = index_of(&sums, kept) {
                seen.push(sums);
                self.add(parcel, index, patch);
            }
        }
    }

    /// Adds the parcel (or `patch`) at `path` if the `.sums` read into
    /// `index` describes it.
    fn add(&mut self, path: PathBuf, index: Arc<SumsIndex>, patch: bool) {
        if !parcel_sums::describes(index.table_checksum, &path) {
            return;
        }
        self.parcels.push(Held {
            path,
            patch,
            buf: OnceLock::new(),
            index,
            distrusted: AtomicBool::new(false),
        });
    }

    /// The first parcel holding the blob `hash`, and the resource's name.
    fn first(&self, hash: &ContentHash) -> Option<(&Held, &str)> {
        (self.parcels.iter()).find_map(|h| h.index.blobs.get(hash).map(|n| (h, n.as_str())))
    }

    /// Whether a parcel holds the blob `hash`. (Its size is not checked
    /// here: the hash names the bytes, and reading them checks both.)
    pub(crate) fn has(&self, hash: &ContentHash) -> bool {
        self.first(hash)
            .is_some_and(|(held, _)| !held.distrusted.load(Ordering::Relaxed))
    }

    /// Opens the parcel at `path`, if it is one of these, so that it can
    /// still be read after it is replaced: the parcel stage calls this
    /// (through [`Store::keep_open`](super::Store::keep_open)) before it
    /// replaces a parcel, since another parcel written later may need a
    /// blob only the old version held (an asset moved between parcels).
    pub(crate) fn keep_open(&self, path: &Path) {
        if let Some(held) = self.parcels.iter().find(|h| h.path == path) {
            held.open();
        }
    }

    /// Which parcel holds the blob `hash`, to read it later.
    pub(crate) fn source(&self, hash: &ContentHash) -> Option<BlobSource> {
        let (held, name) = self.first(hash)?;
        (!held.distrusted.load(Ordering::Relaxed)).then(|| BlobSource::InParcel {
            parcel: held.path.clone(),
            patch: held.patch,
            name: name.to_owned(),
        })
    }

    /// The blob `hash`, read from the parcel holding it and checked;
    /// `Ok(None)` if no parcel holds it, an error if the one that should
    /// is damaged.
    ///
    /// A parcel found damaged is trusted no more ([`InParcels::has`] is
    /// false for all it holds, so the steps that made it run again), but
    /// it still serves this build each other blob that checks against its
    /// hash: a step reading one at that moment (`verify` checks every step
    /// at once) is not failed, nor sent to heal, for a blob that is whole.
    pub(crate) fn read(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        let Some((held, name)) = self.first(hash) else {
            return Ok(None);
        };
        // Replaced since its `.sums` was read (and not kept open): what it
        // held is missing, not corrupt, and its new `.sums` is right.
        let Some(buf) = held.open() else {
            held.distrusted.store(true, Ordering::Relaxed);
            return Ok(None);
        };
        let bytes = buf
            .parcel()
            .by_name(name)
            .and_then(|r| r.bytes().ok())
            .filter(|b| ContentHash::of(b) == *hash);
        match bytes {
            Some(bytes) => Ok(Some(bytes.into_owned())),
            None => {
                held.distrusted.store(true, Ordering::Relaxed);
                let _ = fs::remove_file(held.sums_path());
                Err(StoreError::CorruptBlob {
                    hash: *hash,
                    path: held.path.clone(),
                })
            }
        }
    }
}

impl Held {
    /// The parcel, opened on first use if it is still the one its `.sums`
    /// describes.
    fn open(&self) -> &Option<ParcelBuf> {
        self.buf.get_or_init(|| {
            open(&self.path, self.patch)
                .ok()
                .filter(|b| b.parcel().table_checksum() == self.index.table_checksum)
        })
    }

    /// Its `.sums` file.
    fn sums_path(&self) -> PathBuf {
        if self.patch {
            let mut name = self.path.as_os_str().to_owned();
            name.push(".sums");
            PathBuf::from(name)
        } else {
            self.path.with_extension("parcel.sums")
        }
    }
}

/// The parcel (or a parcel's `patch`) at `path`, opened.
fn open(path: &Path, patch: bool) -> Result<ParcelBuf, assets_runtime::ParcelError> {
    if patch {
        ParcelBuf::open_patch(path)
    } else {
        ParcelBuf::open(path)
    }
}

/// Where a blob can be read later, without the store that found it (by a
/// remote cache upload running in the background): the result is checked
/// against the blob's hash by whoever reads it.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) enum BlobSource {
    /// In a pack or a file of its own.
    Stored(BlobLocation),
    /// Resource `name` of the parcel (or a parcel's `patch`) at `parcel`,
    /// which may have been replaced by then (a rewritten parcel usually
    /// still holds it).
    InParcel {
        parcel: PathBuf,
        patch: bool,
        name: String,
    },
}

#[cfg_attr(not(feature = "remote"), allow(dead_code))]
impl BlobSource {
    /// The bytes (not checked against their hash).
    pub(crate) fn read(&self) -> io::Result<Vec<u8>> {
        match self {
            BlobSource::Stored(at) => at.read(),
            BlobSource::InParcel {
                parcel,
                patch,
                name,
            } => {
                let buf = open(parcel, *patch).map_err(io::Error::other)?;
                let resource = buf.parcel().by_name(name).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::NotFound, format!("no resource `{name}`"))
                })?;
                let bytes = resource.bytes().map_err(io::Error::other)?;
                Ok(bytes.into_owned())
            }
        }
    }
}

/// The index of the `.sums` at `path`: as `kept` has it while the file is
/// the one it was read from, else read (and then kept).
fn index_of(path: &Path, kept: Option<&KeptSums>) -> Option<Arc<SumsIndex>> {
    let mut file = fs::File::open(path).ok()?;
    let stamp = FileStamp::of(&file.metadata().ok()?);
    if let Some((was, index)) = kept.and_then(|k| k.lock().get(path).cloned())
        && was == stamp
    {
        return Some(index);
    }
    let mut text = String::new();
    io::Read::read_to_string(&mut file, &mut text).ok()?;
    let index = Arc::new(SumsIndex::of(&text)?);
    if let Some(kept) = kept {
        kept.lock().insert(path.to_owned(), (stamp, Arc::clone(&index)));
    }
    Some(index)
}

/// The entries of `dir`, sorted (so that of two parcels holding one blob,
/// the same one is read on every machine); none if it cannot be listed.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}
