//! [`Store`]: the cache directory: content-addressed blobs, step records,
//! temp files and the build lock.
//!
//! The paths are [`CacheLayout`]'s (the whole tree is drawn there); the store
//! owns `lock`, `tmp/`, `packs/` and `blobs/`. Blobs up to 1 MiB (sprite
//! sources, images, text: nearly all outputs) are appended to pack files
//! ([`pack`]: their format and crash safety); larger ones (atlas pages,
//! GPU textures) are files of their own,
//! `blobs/3f/3fa9…`, where one being written is `blobs/3f/.<pid>-<n>.tmp`
//! beside its final name.
//!
//! An output that a parcel of the same build holds whole (a texture, a
//! level, an atlas page) is not stored twice: it waits in memory until the
//! parcels are written, and is stored only if none took it; afterwards it
//! is read from the parcel ([`in_parcels`]: the design, and what deleting
//! a parcel costs).
//!
//! Crash safety rests on three rules:
//!
//! 1. Every file is written under a temporary name and renamed into place
//!    (or, replacing a file, swapped with it: [`Store::replace_keeping_old`]),
//!    so a blob or a record is either absent or complete (a packed blob's
//!    index entry is appended after its bytes, to the same effect). Blobs are written
//!    beside their final name (a cold build writes thousands, and a rename
//!    across folders takes a file-system-wide lock, and one shared folder a
//!    lock per create, that had two workers spinning on each other); other
//!    files in `tmp/`. A build that writes blobs marks it in `tmp/`, so that
//!    after a kill the next build knows to look for orphans in `blobs/`.
//! 2. A record is appended after all of its blobs, so a record never points at
//!    a blob that was not fully written; a torn record line fails its checksum.
//!    (A blob waiting for its parcel is the exception: a kill before the
//!    parcel lands leaves its record naming a missing blob, which the next
//!    build treats like any missing output, by running the step again.)
//! 3. A blob is checked against its name when read; one that does not match
//!    (disk corruption, a hand edit) is reported as corrupt and its step rebuilt.
//!    A blob this `Store` wrote itself is trusted without re-hashing: an
//!    atlas's pages are tens of megabytes, read back by the parcel stage
//!    moments after they were stored.
//!
//! A long-lived pipeline (`cargo assets watch`) can also keep blobs in memory
//! across builds ([`BlobMemory`]): an atlas re-pack after one edit reads back
//! thousands of cached sprites, the parcel stage reads back the pages, and
//! the bytes of a given hash never change. Only bytes that were hashed on
//! the way in (written, or read and verified) are kept. It keeps what a blob
//! decodes to as well, for a reader that asks ([`Store::decoded`]): an
//! atlas's sprites, whose decoding was a tenth of a watched edit; and small
//! facts a hash names ([`Store::fact`]), in a bound of their own.
//!
//! Files are not fsynced: the rules above survive a killed process, and after a
//! power loss rule 3 and unreadable records make the next build redo the work.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::buffers::Buffers;
use crate::cache_layout::CacheLayout;
use crate::hash::ContentHash;
use crate::record::FileStamp;

mod atomic;
mod in_parcels;
mod memory;
pub(crate) mod pack;

use atomic::write_then_rename;
pub(crate) use in_parcels::BlobSource;
use in_parcels::{InParcels, KeptSums, SumsIndex};
pub use memory::BlobMemory;
pub use pack::BlobLocation;
use pack::{PACK_MAX_BLOB, Packs};

/// The cache directory of one target dir (`<target>/assets`).
#[derive(Debug)]
pub struct Store {
    /// Where everything is (`tmp` and `blobs` kept too: they are hot).
    layout: CacheLayout,
    tmp: PathBuf,
    blobs: PathBuf,
    counter: AtomicU64,
    /// Whether this handle has marked that it writes blobs.
    writing: AtomicBool,
    /// Blobs written through this handle, whose bytes need no re-check.
    written: Mutex<HashSet<ContentHash>>,
    /// Small blobs kept in memory, shared across builds.
    memory: Option<Arc<BlobMemory>>,
    /// Blobs up to [`PACK_MAX_BLOB`].
    packs: Packs,
    /// Outputs a parcel of this build is to hold, until the parcels are
    /// written ([`Store::put_deferred`]).
    deferred: Mutex<Deferred>,
    /// Whether `deferred` may hold any: a no-op build's thousands of `has`
    /// calls, on every worker, then skip its lock.
    deferring: AtomicBool,
    /// What the cache's parcels hold, read when first needed.
    in_parcels: OnceLock<InParcels>,
    /// Large buffers handed out and back by the build's steps: the
    /// memory's when there is one, so they outlive the build.
    buffers: Arc<Buffers>,
    /// Blobs this handle found corrupt (and removed), and where: a later
    /// read of one, until it is stored again, is told it was corrupt, not
    /// that it is missing (so a step reading it is healed, or `verify`
    /// reports damage, not a failure).
    found_corrupt: Mutex<HashMap<ContentHash, PathBuf>>,
}

/// Blobs kept in memory until the end of a build, and their bytes in all.
#[derive(Debug, Default)]
struct Deferred {
    /// Shared: the parcel stage reads them without copying
    /// ([`Store::get_shared`]).
    blobs: HashMap<ContentHash, Arc<Vec<u8>>>,
    bytes: usize,
}

/// A failure of the cache directory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file operation failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What we were doing, e.g. "could not write".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A blob's bytes do not hash to its name. It has been removed (or, in
    /// a pack, forgotten), so the step that wrote it runs again.
    #[error("blob {hash} in `{}` was corrupt (its contents did not match its hash) and has been removed; build again to rebuild it", path.display())]
    CorruptBlob {
        /// The blob's name.
        hash: ContentHash,
        /// The file that held it: the blob's own, or a pack.
        path: PathBuf,
    },
}

fn io_err<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> StoreError + 'p {
    move |source| StoreError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

impl Store {
    /// Opens (creating if needed) the cache at `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with_memory(dir, None)
    }

    /// [`Store::open`], keeping small blobs in `memory` too.
    pub fn open_with_memory(
        dir: &Path,
        memory: Option<Arc<BlobMemory>>,
    ) -> Result<Store, StoreError> {
        let layout = CacheLayout::new(dir);
        let store = Store {
            tmp: layout.tmp(),
            blobs: layout.blobs(),
            packs: Packs::keeping(
                layout.clone(),
                memory.as_ref().map(|m| Arc::clone(&m.pack_index)),
            ),
            layout,
            counter: AtomicU64::new(0),
            writing: AtomicBool::new(false),
            written: Mutex::new(HashSet::new()),
            deferred: Mutex::default(),
            deferring: AtomicBool::new(false),
            in_parcels: OnceLock::new(),
            found_corrupt: Mutex::default(),
            buffers: memory
                .as_ref()
                .map_or_else(Arc::default, |m| Arc::clone(&m.buffers)),
            memory,
        };
        if let Some(memory) = &store.memory {
            memory.next_generation();
        }
        for d in [&store.tmp, &store.blobs] {
            fs::create_dir_all(d).map_err(io_err("could not create", d))?;
        }
        Ok(store)
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        self.layout.root()
    }

    /// The lock file's path.
    pub fn lock_path(&self) -> PathBuf {
        self.layout.lock()
    }

    /// Removes files left by builds that were killed: everything in `tmp/`
    /// and, if one was writing blobs, its half-written ones. Call only while
    /// holding the build lock.
    pub fn remove_orphans(&self) -> Result<(), StoreError> {
        if self.writing_marker().exists() {
            self.remove_half_written_blobs()?;
        }
        let entries = fs::read_dir(&self.tmp).map_err(io_err("could not list", &self.tmp))?;
        for entry in entries.flatten() {
            let path = entry.path();
            // Best effort: a tool started by a killed build can outlive it
            // and still be writing into its step's directory (removal then
            // fails with "directory not empty"). Nothing here is ever read
            // again, and names are unique per process, so what cannot be
            // removed now is left for a later build.
            let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
        }
        Ok(())
    }

    fn writing_marker(&self) -> PathBuf {
        self.layout.writing_blobs_marker()
    }

    fn remove_half_written_blobs(&self) -> Result<(), StoreError> {
        let folders = fs::read_dir(&self.blobs).map_err(io_err("could not list", &self.blobs))?;
        for folder in folders.flatten() {
            let Ok(files) = fs::read_dir(folder.path()) else {
                continue;
            };
            for file in files.flatten() {
                if file.file_name().to_string_lossy().ends_with(".tmp") {
                    let path = file.path();
                    fs::remove_file(&path).map_err(io_err("could not remove", &path))?;
                }
            }
        }
        Ok(())
    }

    /// A fresh, unique path under `tmp/`.
    pub fn temp_path(&self, what: &str) -> PathBuf {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        self.tmp.join(format!("{what}-{}-{n}", std::process::id()))
    }

    /// Stores `bytes`, returning their hash. Storing bytes already present is cheap.
    pub fn put(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.put_checked(ContentHash::of(bytes), bytes)
    }

    /// [`Store::put`] of bytes the caller has just checked to hash to
    /// `hash` (outputs fetched from the remote cache), not hashed again.
    pub(crate) fn put_checked(
        &self,
        hash: ContentHash,
        bytes: &[u8],
    ) -> Result<ContentHash, StoreError> {
        debug_assert_eq!(hash, ContentHash::of(bytes));
        // Only this store's own files count: a parcel holding the blob may
        // be rewritten without it in this very build.
        if !self.has_stored(&hash, bytes.len() as u64) {
            if bytes.len() <= PACK_MAX_BLOB {
                let packs = self.layout.packs();
                self.packs
                    .append(hash, bytes)
                    .map_err(io_err("could not write to a pack in", &packs))?;
            } else {
                self.write_blob(&self.layout.blob(&hash), bytes)?;
            }
            self.written
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(hash);
        }
        if let Some(memory) = &self.memory {
            memory.keep(hash, bytes);
        }
        Ok(hash)
    }

    /// [`Store::put`] of an output a parcel of this build is to hold
    /// whole: kept in memory (up to [`Store::DEFERRED_CAPACITY`] bytes in
    /// all; past that, stored at once) until [`Store::flush_deferred`],
    /// which stores it only if no parcel took it. Until then it is read
    /// and found like any stored blob.
    ///
    /// A build killed before the flush loses these bytes, while its
    /// records name them: the next build finds those outputs missing and
    /// runs their steps again, as after any kill.
    ///
    /// `hash` is the bytes' hash, which the caller has just computed.
    ///
    /// The bytes are shared, not copied: with the long-lived pipeline's
    /// memory, and with whoever else holds them (the page memory of an
    /// atlas, `Memo::remembered`).
    pub(crate) fn put_deferred(
        &self,
        hash: ContentHash,
        mut bytes: Arc<Vec<u8>>,
    ) -> Result<(), StoreError> {
        debug_assert_eq!(hash, ContentHash::of(&bytes));
        if self.has_stored(&hash, bytes.len() as u64) {
            return Ok(());
        }
        // Kept until the end of the build: no spare capacity.
        if let Some(bytes) = Arc::get_mut(&mut bytes) {
            bytes.shrink_to_fit();
        }
        if let Some(memory) = &self.memory {
            memory.keep_shared(hash, || Arc::clone(&bytes), bytes.len());
        }
        let mut deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        if deferred.blobs.contains_key(&hash) {
            return Ok(());
        }
        if deferred.bytes + bytes.len() > Self::DEFERRED_CAPACITY {
            drop(deferred);
            return self.put_checked(hash, &bytes).map(drop);
        }
        deferred.bytes += bytes.len();
        deferred.blobs.insert(hash, bytes);
        self.deferring.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The text of the file at `path`, which is replaced by rename when
    /// it changes: kept by a long-lived pipeline's memory, and read again
    /// only when the path names another file (see `BlobMemory::text`).
    /// With the stamp of the file it was read from: what is derived from
    /// the text holds while the path has that stamp.
    pub(crate) fn read_text(&self, path: &Path) -> io::Result<(FileStamp, Arc<str>)> {
        match &self.memory {
            Some(memory) => memory.text(path),
            None => {
                let mut file = fs::File::open(path)?;
                let stamp = FileStamp::of(&file.metadata()?);
                let mut text = String::new();
                io::Read::read_to_string(&mut file, &mut text)?;
                Ok((stamp, Arc::from(text)))
            }
        }
    }

    /// Writes `text` to `path` as [`Store::write_atomic`] does, for
    /// [`Store::read_text`] to read back: a long-lived pipeline's memory
    /// keeps it as written, so that read reads nothing (a watched
    /// pipeline writes a parcel's `.sums` whole once idle, and the next
    /// edit's patch reads it: 141 MB at 1M files). The stamp of the file
    /// written, as [`Store::read_text`] gives it.
    pub(crate) fn write_text(&self, path: &Path, text: String) -> Result<FileStamp, StoreError> {
        self.write_atomic(path, text.as_bytes())?;
        let stamp = fs::metadata(path)
            .map(|meta| FileStamp::of(&meta))
            .map_err(io_err("could not read", path))?;
        if let Some(memory) = &self.memory {
            memory.keep_text(path, stamp, Arc::from(text));
        }
        Ok(stamp)
    }

    /// [`Store::write_text`] of a parcel's `.sums`: a long-lived
    /// pipeline's memory keeps what it says as well, so that the next
    /// build's store does not read it back (`in_parcels::KeptSums`).
    pub(crate) fn write_sums(&self, path: &Path, text: String) -> Result<FileStamp, StoreError> {
        let index = self.kept_sums().and_then(|_| SumsIndex::of(&text));
        let stamp = self.write_text(path, text)?;
        if let (Some(kept), Some(index)) = (self.kept_sums(), index) {
            kept.keep(path, stamp, index);
        }
        Ok(stamp)
    }

    /// The `.sums` files a long-lived pipeline keeps read.
    fn kept_sums(&self) -> Option<&KeptSums> {
        self.memory.as_ref().map(|m| &m.kept_sums)
    }

    /// The blobs [`Store::put_deferred`] holds back now.
    pub(crate) fn deferred_hashes(&self) -> Vec<ContentHash> {
        if !self.deferring.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        deferred.blobs.keys().copied().collect()
    }

    /// The most bytes [`Store::put_deferred`] keeps in memory.
    pub(crate) const DEFERRED_CAPACITY: usize = 256 << 20;

    /// Ends what [`Store::put_deferred`] started, once the parcels of the
    /// build are written: each blob `held` says a parcel in the cache
    /// holds whole, as its `.sums` says, is dropped; every other one
    /// stored. Returns how many bytes were stored.
    pub(crate) fn flush_deferred(
        &self,
        held: impl Fn(&ContentHash) -> bool,
    ) -> Result<u64, StoreError> {
        let deferred =
            std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|p| p.into_inner()));
        let mut left: Vec<_> = deferred
            .blobs
            .into_iter()
            .filter(|(hash, _)| !held(hash))
            .collect();
        // In hash order, so that packs come out the same on every run.
        left.sort_unstable_by_key(|(hash, _)| *hash);
        let mut stored = 0;
        for (hash, bytes) in left {
            self.put_checked(hash, &bytes)?;
            stored += bytes.len() as u64;
        }
        self.flush_packs()?;
        Ok(stored)
    }

    /// Writes out the small blobs appended to packs and not yet written
    /// (they are written in batches, see [`pack`]).
    pub(crate) fn flush_packs(&self) -> Result<(), StoreError> {
        let dir = self.layout.packs();
        self.packs
            .flush()
            .map_err(io_err("could not write to the packs in", &dir))
    }

    /// Keeps the parcel at `path` readable after it is replaced, if the
    /// store has looked at the cache's parcels in this build (see
    /// [`in_parcels`]). Call before replacing a parcel.
    pub(crate) fn keep_open(&self, path: &Path) {
        if let Some(in_parcels) = self.in_parcels.get() {
            in_parcels.keep_open(path);
        }
    }

    /// What the cache's parcels hold, read on first use.
    fn in_parcels(&self) -> &InParcels {
        self.in_parcels
            .get_or_init(|| InParcels::load(&self.layout.parcels(), self.kept_sums()))
    }

    /// Whether a blob with this hash and size is present: stored, kept in
    /// memory for a parcel this build writes, or held by a parcel of the
    /// cache. Does not read it: a packed blob is looked up in the index, a
    /// parcel's in its `.sums` (by hash alone: reading it checks the
    /// rest), another one `stat`ed.
    pub fn has(&self, hash: &ContentHash, size: u64) -> bool {
        // The lookups in memory before the `stat`.
        self.has_packed(hash, size)
            || self.deferred(hash, |b| b.len() as u64 == size) == Some(true)
            || self.in_parcels().has(hash)
            || self.has_file(hash, size)
    }

    /// `f` of the blob `hash` if it is kept in memory for a parcel. Takes
    /// no lock when nothing is kept: a no-op build asks this of every
    /// output, on every worker.
    fn deferred<R>(&self, hash: &ContentHash, f: impl FnOnce(&Arc<Vec<u8>>) -> R) -> Option<R> {
        if !self.deferring.load(Ordering::Relaxed) {
            return None;
        }
        let deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        deferred.blobs.get(hash).map(f)
    }

    /// Whether this store's own files hold it: a pack, or, for a blob too
    /// large for one, a blob file (only those are written as files). So
    /// storing a small blob, nearly every output, costs no `stat`; one
    /// left as a file by a cache that packed less would only be packed
    /// too.
    fn has_stored(&self, hash: &ContentHash, size: u64) -> bool {
        self.has_packed(hash, size) || (size > PACK_MAX_BLOB as u64 && self.has_file(hash, size))
    }

    fn has_packed(&self, hash: &ContentHash, size: u64) -> bool {
        self.packs
            .find(hash)
            .is_some_and(|slot| u64::from(slot.len) == size)
    }

    fn has_file(&self, hash: &ContentHash, size: u64) -> bool {
        fs::metadata(self.layout.blob(hash)).is_ok_and(|m| m.len() == size)
    }

    /// [`Store::get`], without a copy when the blob is kept in memory for
    /// a parcel of this build ([`Store::put_deferred`]): the parcel stage
    /// writes tens of megabytes of them, and copying each first was a
    /// tenth of its time.
    /// So are blobs a long-lived pipeline keeps in memory: a patch holds
    /// the pages every edit since the last whole write changed, most of
    /// them made by earlier builds.
    pub(crate) fn get_shared(&self, hash: &ContentHash) -> Result<Arc<Vec<u8>>, StoreError> {
        if let Some(bytes) = self.deferred(hash, Arc::clone) {
            return Ok(bytes);
        }
        if let Some(bytes) = self.memory.as_ref().and_then(|m| m.get_shared(hash)) {
            return Ok(bytes);
        }
        self.read(hash).map(Arc::new)
    }

    /// What blob `hash` decodes to: `load` reads and decodes it, and is to
    /// be a pure function of the blob's bytes. A long-lived pipeline keeps
    /// the result (`size` bytes of it) in memory, as it keeps bytes, and a
    /// later build's reader takes it without reading or decoding the blob
    /// again: an atlas re-pack after one edit reads every other sprite so.
    pub(crate) fn decoded<T, E>(
        &self,
        hash: &ContentHash,
        load: impl FnOnce() -> Result<T, E>,
        size: impl FnOnce(&T) -> usize,
    ) -> Result<Arc<T>, E>
    where
        T: Send + Sync + 'static,
    {
        if let Some(value) = self.kept_decoded(hash) {
            return Ok(value);
        }
        let value = Arc::new(load()?);
        if let Some(memory) = &self.memory {
            memory.keep_decoded(*hash, value.clone(), size(&value));
        }
        Ok(value)
    }

    /// What [`Store::decoded`] kept under `hash`, if a long-lived
    /// pipeline's memory holds it as a `T`: looked up (and so marked as
    /// used by this build) without making it.
    pub(crate) fn kept_decoded<T: Send + Sync + 'static>(&self, hash: &ContentHash) -> Option<Arc<T>> {
        (self.memory.as_ref())
            .and_then(|m| m.decoded(hash))
            .and_then(|value| value.downcast::<T>().ok())
    }

    /// The fact `key` names, if a long-lived pipeline's memory keeps it as
    /// a `T` (see `BlobMemory`'s facts).
    pub(crate) fn fact<T: Send + Sync + 'static>(&self, key: &ContentHash) -> Option<Arc<T>> {
        self.facts(std::slice::from_ref(key)).pop().flatten()
    }

    /// [`Store::fact`] of each of `keys`, looked up together.
    pub(crate) fn facts<T: Send + Sync + 'static>(&self, keys: &[ContentHash]) -> Vec<Option<Arc<T>>> {
        match &self.memory {
            Some(memory) => (memory.facts(keys).into_iter())
                .map(|value| value.and_then(|v| v.downcast::<T>().ok()))
                .collect(),
            None => vec![None; keys.len()],
        }
    }

    /// Keeps `value` (about `size` bytes) as the fact `key` names, a pure
    /// function of it, in a long-lived pipeline's memory; nothing without one.
    pub(crate) fn keep_fact<T: Send + Sync + 'static>(
        &self,
        key: ContentHash,
        value: Arc<T>,
        size: usize,
    ) {
        if let Some(memory) = &self.memory {
            memory.keep_fact(key, value, size);
        }
    }

    /// The pool of large buffers this build's steps share (kept across
    /// builds with the memory, when there is one).
    pub(crate) fn buffers(&self) -> &Buffers {
        &self.buffers
    }

    /// Reads a blob, checking it against its hash.
    pub fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        match self.deferred(hash, |b| b.to_vec()) {
            Some(bytes) => Ok(bytes),
            None => self.read(hash),
        }
    }

    /// A blob not kept for a parcel: from a long-lived pipeline's memory,
    /// a pack, its own file, or the parcel that holds it; checked against
    /// its hash.
    fn read(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        let read = self.read_checked(hash);
        let mut corrupt = self.found_corrupt.lock().unwrap_or_else(|p| p.into_inner());
        match read {
            Err(StoreError::CorruptBlob { hash, path }) => {
                corrupt.insert(hash, path.clone());
                Err(StoreError::CorruptBlob { hash, path })
            }
            Err(StoreError::Io { source, .. })
                if source.kind() == io::ErrorKind::NotFound && corrupt.contains_key(hash) =>
            {
                Err(StoreError::CorruptBlob {
                    hash: *hash,
                    path: corrupt[hash].clone(),
                })
            }
            read => read,
        }
    }

    /// [`Store::read`] without remembering what was found corrupt.
    fn read_checked(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        if let Some(bytes) = self.memory.as_ref().and_then(|m| m.get(hash)) {
            return Ok(bytes);
        }
        let (bytes, path) = match self.packs.find(hash) {
            Some(slot) => {
                let path = self.packs.location(slot).path;
                let bytes = self
                    .packs
                    .read(slot)
                    .map_err(io_err("could not read", &path))?;
                (bytes, path)
            }
            None => {
                let path = self.layout.blob(hash);
                match fs::read(&path) {
                    Ok(bytes) => (bytes, path),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Read and checked by the parcel that holds it.
                        let Some(bytes) = self.in_parcels().read(hash)? else {
                            return Err(io_err("could not read", &path)(e));
                        };
                        if let Some(memory) = &self.memory {
                            memory.keep(*hash, &bytes);
                        }
                        return Ok(bytes);
                    }
                    Err(e) => return Err(io_err("could not read", &path)(e)),
                }
            }
        };
        let trusted = self
            .written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(hash);
        if !trusted && ContentHash::of(&bytes) != *hash {
            // Remove it so that the next freshness check sees the output as
            // missing and reruns the step that makes it, whose bytes are
            // then stored again.
            if path.starts_with(&self.blobs) {
                let _ = fs::remove_file(&path);
            } else {
                self.packs.forget(hash);
            }
            return Err(StoreError::CorruptBlob { hash: *hash, path });
        }
        if let Some(memory) = &self.memory {
            memory.keep(*hash, &bytes);
        }
        Ok(bytes)
    }

    /// Rewrites the packs that hold blobs `live` says no to (see
    /// [`pack`]'s garbage). Call only under the build lock, before storing
    /// anything through this handle.
    pub(crate) fn compact_packs(
        &self,
        live: impl Fn(&ContentHash) -> bool,
    ) -> Result<pack::Compacted, StoreError> {
        let dir = self.layout.packs();
        self.packs
            .compact(live)
            .map_err(io_err("could not compact the packs in", &dir))
    }

    /// Where the blob named `hash` is, if it is stored in a pack or a file
    /// of its own (`None` for one only a parcel holds: read it with
    /// [`Store::get`]).
    pub fn locate(&self, hash: &ContentHash) -> Option<BlobLocation> {
        if self.packs.find(hash).is_some() {
            // Its bytes may still wait to be written, and a location is
            // read through the file.
            self.packs.flush().ok()?;
            return self.packs.find(hash).map(|slot| self.packs.location(slot));
        }
        let path = self.layout.blob(hash);
        let len = fs::metadata(&path).ok()?.len();
        Some(BlobLocation {
            path,
            offset: 0,
            len,
        })
    }

    /// Where the blob named `hash` can be read later, by another thread
    /// and without this store: where it is stored, or which parcel of the
    /// cache holds it. `None` for one waiting in memory for its parcel.
    pub(crate) fn source(&self, hash: &ContentHash) -> Option<BlobSource> {
        if let Some(at) = self.locate(hash) {
            return Some(BlobSource::Stored(at));
        }
        self.in_parcels().source(hash)
    }

    /// Every stored blob and where it is, packed ones first, each in order
    /// of its hash.
    pub fn locations(&self) -> Vec<(ContentHash, BlobLocation)> {
        // Unwritten blobs are forgotten if they cannot be written now.
        let _ = self.packs.flush();
        let mut packed = self.packs.all();
        packed.sort_by_key(|(hash, _)| *hash);
        let mut out: Vec<_> = packed
            .into_iter()
            .map(|(hash, slot)| (hash, self.packs.location(slot)))
            .collect();
        let mut files: Vec<_> = walkdir::WalkDir::new(&self.blobs)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                let hash = e.file_name().to_str()?.parse::<ContentHash>().ok()?;
                let len = e.metadata().ok()?.len();
                Some((
                    hash,
                    BlobLocation {
                        path: e.into_path(),
                        offset: 0,
                        len,
                    },
                ))
            })
            .collect();
        files.sort_by_key(|(hash, _)| *hash);
        out.extend(files);
        out
    }

    /// Writes a blob through a temp file beside it (see the module docs).
    fn write_blob(&self, dest: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        if !self.writing.swap(true, Ordering::Relaxed) {
            let marker = self.writing_marker();
            File::create(&marker).map_err(io_err("could not create", &marker))?;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = dest.with_file_name(format!(".{}-{n}.tmp", std::process::id()));
        write_then_rename(&tmp, dest, |mut f| f.write_all(bytes))
            .map_err(io_err("could not write", dest))
    }
}

impl Drop for Store {
    /// A build that ends, well or not, leaves no half-written blob: the mark
    /// goes. Only a kill leaves it, for the next build to act on.
    fn drop(&mut self) {
        if *self.writing.get_mut() {
            let _ = fs::remove_file(self.writing_marker());
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
