//! Pack files: small blobs appended to a few large files, so that a cold
//! build of ten thousand sprites does not create ten thousand files (a
//! create and a rename cost ~0.1 ms each on a plain disk, and disks throttle
//! after a burst of them), and a no-op build checks its outputs with a
//! lookup in memory instead of a `stat` each.
//!
//! # Layout
//!
//! Pack `n` is two files (paths from [`CacheLayout`]): `packs/0000000n.pack`,
//! an 8-byte magic followed by blobs back to back, and `0000000n.idx`, an
//! 8-byte magic followed by one 48-byte entry per blob: its blake3 hash,
//! offset (u64), length (u32), and the first four bytes of the blake3 hash
//! of those 44 bytes (all little-endian). Git keeps small objects in packs
//! with an index for the same reason; ours is simpler because nothing is
//! ever deleted in place (see garbage below).
//!
//! # Crash safety
//!
//! A blob's bytes are appended to the pack **before** its entry is appended
//! to the index, and a record is appended to its log after its blobs'
//! entries (the store's rule 2). So after a kill:
//!
//! - an index is read up to its first entry that is torn, fails its check,
//!   or points past the end of its pack; everything after is ignored, so a
//!   blob is either found whole or not found (and its step reruns);
//! - bytes appended to a pack without an entry are never read.
//!
//! Appends are gathered in memory and written in batches of [`FLUSH_AT`]
//! bytes (blobs first, then their entries), and when the build is done
//! storing ([`Packs::flush`]); a read of a blob not yet written is served
//! from memory. A kill loses the batch, as if those blobs were never
//! stored: the record log writes a record only after its blobs' batch.
//!
//! A build appends to the newest pack while it is under
//! [`PACK_TARGET`] bytes, after cutting both files back to their valid
//! prefix (only the build holding the cache's lock writes); otherwise it
//! starts the next number. A later entry for a hash wins over an earlier
//! one (packs are read in number order). A blob found corrupt on read is
//! dropped from the index in memory and gets a **tombstone**, an entry of
//! length 0 (which no blob but the empty one has) appended to the index:
//! this build and later ones find it missing, so its step reruns (also
//! when what found it was `verify`, which stores nothing) and appends a
//! fresh copy, whose entry wins over the tombstone. An older reader takes a
//! tombstone for a corrupt empty blob, to the same effect; `gc` drops both.
//!
//! # Kept between builds
//!
//! A long-lived pipeline (`watch`) opens a store for each build, and the
//! first blob a build stored or looked up read every index again: 350 ms
//! of a 2.6 s watched edit at a million files. Such a pipeline hands each
//! `Packs` a [`KeptIndex`]: the map, and where each index file's valid
//! prefix ended (its length, its last entry's bytes, its pack's end). The
//! next build reads only what was appended after those marks, as long as
//! every marked index still ends its marked prefix with the same entry
//! and only the newest marked pack, or packs numbered after it, gained
//! entries (the only ones a build appends to). Anything else (a `gc`, a
//! `clean`, a pack gone) reads every index, as a fresh process does. A
//! build's first append, which cuts the newest pack back to its valid
//! prefix, finds that prefix's end from the same marks.
//!
//! # Garbage
//!
//! Entries are never removed in place. `gc` copies the live blobs of every
//! pack holding a dead one into a new pack, and only then removes the old
//! packs (index first); a kill between leaves duplicates, which are
//! harmless and go at the next `gc`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::cache_layout::CacheLayout;
use crate::hash::ContentHash;

/// Blobs up to this size go into packs; larger ones (atlas pages, textures)
/// are files of their own, which `gc` frees without copying anything.
/// Measured (BENCHMARKS.md): at 64 KiB the 10k corpus still created 169
/// files of 64-100 KiB (its larger images), and a cold build spent ~0.3 s
/// more system time than at 1 MiB, which leaves 8 (the atlas pages).
pub(crate) const PACK_MAX_BLOB: usize = 1 << 20;

/// A build starts a new pack once the newest is this large.
pub(crate) const PACK_TARGET: u64 = 64 << 20;

const PACK_MAGIC: &[u8; 8] = b"CApack01";
const INDEX_MAGIC: &[u8; 8] = b"CAindx01";
const ENTRY: usize = 48;

/// Where a stored blob's bytes are: a whole file, or a range of a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobLocation {
    /// The file holding it.
    pub path: PathBuf,
    /// Where its bytes start in that file.
    pub offset: u64,
    /// How many bytes it has.
    pub len: u64,
}

impl BlobLocation {
    /// Reads the blob's bytes (not checked against its hash).
    pub fn read(&self) -> io::Result<Vec<u8>> {
        let file = File::open(&self.path)?;
        let mut bytes = vec![0; usize::try_from(self.len).map_err(io::Error::other)?];
        read_at(&file, &mut bytes, self.offset)?;
        Ok(bytes)
    }
}

/// Where in which pack a blob is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub pack: u32,
    pub offset: u64,
    pub len: u32,
}

/// The index of every packed blob, as a long-lived pipeline keeps it
/// between builds (see the module docs, "Kept between builds").
#[derive(Debug, Default)]
pub(crate) struct KeptIndex {
    map: HashMap<ContentHash, Slot>,
    marks: BTreeMap<u32, Mark>,
}

/// Where the valid prefix of one pack's index ended when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    /// The prefix's length, magic included.
    index_len: u64,
    /// The last entry of the prefix (all zeros if it has none).
    last: [u8; ENTRY],
    /// Where that entry's bytes end in the pack.
    pack_end: u64,
}

impl Mark {
    /// The mark of an index with no entry: its magic alone.
    fn start() -> Mark {
        Mark {
            index_len: INDEX_MAGIC.len() as u64,
            last: [0; ENTRY],
            pack_end: PACK_MAGIC.len() as u64,
        }
    }
}

/// The packs of one cache: the index of every packed blob (read on first
/// use), the pack this handle appends to, and open pack files for reading.
#[derive(Debug)]
pub(crate) struct Packs {
    layout: CacheLayout,
    index: OnceLock<RwLock<HashMap<ContentHash, Slot>>>,
    /// Where the index comes from and goes back to (a long-lived
    /// pipeline's; see the module docs).
    kept: Option<Arc<Mutex<Option<KeptIndex>>>>,
    /// The marks of what `index` holds; `None` before it is read, and once
    /// they are not known (a failed write, a `gc`): then nothing is kept.
    marks: Mutex<Option<BTreeMap<u32, Mark>>>,
    writer: Mutex<Option<Writer>>,
    readers: Mutex<HashMap<u32, Arc<File>>>,
    /// [`PACK_TARGET`], smaller in tests.
    target: u64,
}

/// Appended bytes a writer gathers before writing them out: a cold build
/// of ten thousand small blobs made two `write` calls per blob (blob, then
/// entry), and those calls were 2% of its time (BENCHMARKS.md).
const FLUSH_AT: usize = 256 << 10;

#[derive(Debug)]
struct Writer {
    number: u32,
    pack: File,
    index: File,
    /// The pack's length, the pending bytes included: where the next blob goes.
    len: u64,
    /// The index's length on disk, the pending entries not included.
    index_len: u64,
    /// Blob bytes appended but not yet written; they go at
    /// [`Writer::pending_start`]. Reads of them are served from here.
    pending: Vec<u8>,
    /// Their index entries, written after them.
    pending_entries: Vec<u8>,
    /// The index's last entry on disk (all zeros if it has none): the
    /// [`Mark`] a long-lived pipeline keeps.
    last: [u8; ENTRY],
}

impl Writer {
    fn new(number: u32, pack: File, index: File, at: Mark) -> Writer {
        Writer {
            number,
            pack,
            index,
            len: at.pack_end,
            index_len: at.index_len,
            pending: Vec::new(),
            pending_entries: Vec::new(),
            last: at.last,
        }
    }

    /// Where the index ends once the pending entries are written.
    fn mark(&self) -> Mark {
        Mark {
            index_len: self.index_len,
            last: self.last,
            pack_end: self.len,
        }
    }

    /// Where the pending bytes go in the pack.
    fn pending_start(&self) -> u64 {
        self.len - self.pending.len() as u64
    }

    /// Writes the pending blobs, then their entries (the order of the
    /// module docs' crash safety). On an error nothing more is written
    /// through this writer: the caller drops it, and the next append opens
    /// the pack again, cut back to its valid prefix.
    fn flush(&mut self) -> io::Result<()> {
        if self.pending_entries.is_empty() {
            return Ok(());
        }
        (&self.pack).write_all(&self.pending)?;
        self.pending.clear();
        (&self.index).write_all(&self.pending_entries)?;
        self.index_len += self.pending_entries.len() as u64;
        let last = self.pending_entries.len() - ENTRY;
        self.last.copy_from_slice(&self.pending_entries[last..]);
        self.pending_entries.clear();
        Ok(())
    }

    /// Cuts both files back to what they held before the pending batch,
    /// after a failed [`Writer::flush`]: a full disk keeps none of the
    /// batch's bytes (a megabyte of blobs no entry points at would
    /// otherwise stay until a later build appends to this pack, and one
    /// that needs the space first would fail for want of it). Best effort.
    fn cut_back(&self) {
        let _ = self.pack.set_len(self.pending_start());
        let _ = self.index.set_len(self.index_len);
    }

    /// The hashes of the pending entries (to forget them when they cannot
    /// be written).
    fn pending_hashes(&self) -> impl Iterator<Item = ContentHash> + '_ {
        self.pending_entries
            .chunks_exact(ENTRY)
            .map(|e| ContentHash::from_bytes(e[..32].try_into().expect("32 bytes")))
    }
}

impl Drop for Writer {
    /// A writer dropped without [`Packs::flush`] (a build returning early
    /// on an error) still writes what it holds; if that fails, those blobs
    /// are simply not stored, and their steps run again next time.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl Packs {
    /// Packs whose index is taken from `kept` when first needed, and put
    /// back there when dropped (see the module docs, "Kept between builds").
    pub fn keeping(layout: CacheLayout, kept: Option<Arc<Mutex<Option<KeptIndex>>>>) -> Packs {
        Packs {
            layout,
            index: OnceLock::new(),
            kept,
            marks: Mutex::new(None),
            writer: Mutex::new(None),
            readers: Mutex::new(HashMap::new()),
            target: PACK_TARGET,
        }
    }

    fn index(&self) -> &RwLock<HashMap<ContentHash, Slot>> {
        self.index.get_or_init(|| {
            let kept = (self.kept.as_ref()).and_then(|k| lock(k).take());
            let (map, marks) = match kept.and_then(|kept| self.refresh(kept)) {
                Some(kept) => (kept.map, kept.marks),
                None => self.read_all(),
            };
            *lock(&self.marks) = Some(marks);
            RwLock::new(map)
        })
    }

    /// Every index, read whole, and its mark.
    fn read_all(&self) -> (HashMap<ContentHash, Slot>, BTreeMap<u32, Mark>) {
        let mut map = HashMap::new();
        let mut marks = BTreeMap::new();
        for number in numbers(&self.layout) {
            let read = self.read_index(number, None);
            marks.extend(read.end.map(|m| (number, m)));
            apply(&mut map, read.entries);
        }
        (map, marks)
    }

    /// `kept` brought up to date with what was appended to the indexes
    /// since its marks, or `None` if the packs changed otherwise.
    fn refresh(&self, mut kept: KeptIndex) -> Option<KeptIndex> {
        let on_disk = numbers(&self.layout);
        let newest = kept.marks.last_key_value().map(|(&n, _)| n);
        if kept.marks.keys().any(|n| on_disk.binary_search(n).is_err()) {
            return None;
        }
        for number in on_disk {
            let mark = kept.marks.get(&number).copied();
            let older = newest.is_some_and(|newest| number < newest);
            let read = self.read_index(number, mark);
            let unchanged = read.entries.is_empty();
            if (mark.is_none() && older)
                || (mark.is_some() && read.end.is_none())
                || (mark.is_some() && older && !unchanged)
            {
                return None;
            }
            if let Some(m) = read.end {
                kept.marks.insert(number, m);
            }
            apply(&mut kept.map, read.entries);
        }
        Some(kept)
    }

    /// Where the packed blob `hash` is, if it is packed.
    pub fn find(&self, hash: &ContentHash) -> Option<Slot> {
        read_lock(self.index()).get(hash).copied()
    }

    /// Every packed blob.
    pub fn all(&self) -> Vec<(ContentHash, Slot)> {
        read_lock(self.index())
            .iter()
            .map(|(h, s)| (*h, *s))
            .collect()
    }

    /// Forgets where `hash` is (it was found corrupt), so that storing it
    /// again appends a fresh copy, in this build and in later ones: a
    /// tombstone entry is appended to the index (see the module docs), as
    /// a later entry for the hash would be. If that cannot be written, the
    /// blob is forgotten in memory only and found corrupt again next time.
    pub fn forget(&self, hash: &ContentHash) {
        write_lock(self.index()).remove(hash);
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if writer.is_none() {
            match self.open_writer() {
                Ok(w) => *writer = Some(w),
                Err(_) => return,
            }
        }
        let w = writer.as_mut().expect("opened above");
        let tombstone = Slot {
            pack: w.number,
            offset: w.len,
            len: 0,
        };
        w.pending_entries
            .extend_from_slice(&encode_entry(hash, tombstone));
        let _ = self.flush_locked(&mut writer);
    }

    /// The location of a slot, as a path and a range.
    pub fn location(&self, slot: Slot) -> BlobLocation {
        BlobLocation {
            path: self.layout.pack(slot.pack),
            offset: slot.offset,
            len: u64::from(slot.len),
        }
    }

    /// Reads a slot's bytes (not checked against the hash).
    pub fn read(&self, slot: Slot) -> io::Result<Vec<u8>> {
        if let Some(w) = self
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            && slot.pack == w.number
            && slot.offset >= w.pending_start()
        {
            // Appended by this build and not written yet.
            let at = (slot.offset - w.pending_start()) as usize;
            return w
                .pending
                .get(at..at + slot.len as usize)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| io::Error::other("a pending blob's slot is out of range"));
        }
        let file = {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            match readers.get(&slot.pack) {
                Some(file) => Arc::clone(file),
                None => {
                    let file = Arc::new(File::open(self.layout.pack(slot.pack))?);
                    readers.insert(slot.pack, Arc::clone(&file));
                    file
                }
            }
        };
        let mut bytes = vec![0; slot.len as usize];
        read_at(&file, &mut bytes, slot.offset)?;
        Ok(bytes)
    }

    /// Appends `bytes` (at most [`PACK_MAX_BLOB`]) under `hash`: the bytes,
    /// then their index entry.
    pub fn append(&self, hash: ContentHash, bytes: &[u8]) -> io::Result<()> {
        debug_assert!(bytes.len() <= PACK_MAX_BLOB);
        let len = u32::try_from(bytes.len()).map_err(io::Error::other)?;
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if writer.is_none() {
            *writer = Some(self.open_writer()?);
        }
        let w = writer.as_mut().expect("opened above");
        let slot = Slot {
            pack: w.number,
            offset: w.len,
            len,
        };
        w.pending.extend_from_slice(bytes);
        w.len += u64::from(len);
        w.pending_entries
            .extend_from_slice(&encode_entry(&hash, slot));
        write_lock(self.index()).insert(hash, slot);
        if w.pending.len() >= FLUSH_AT {
            self.flush_locked(&mut writer)?;
        }
        Ok(())
    }

    /// Writes every appended blob and its entry to the pack files. A build
    /// calls it when it is done storing; until then blobs are written in
    /// batches of [`FLUSH_AT`] bytes.
    pub fn flush(&self) -> io::Result<()> {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        self.flush_locked(&mut writer)
    }

    fn flush_locked(&self, writer: &mut Option<Writer>) -> io::Result<()> {
        let Some(w) = writer.as_mut() else {
            return Ok(());
        };
        let Err(e) = w.flush() else {
            return Ok(());
        };
        // Those blobs are not stored: forget them, and the writer, whose
        // files may now end in a torn blob (see [`Writer::flush`]).
        w.cut_back();
        *lock(&self.marks) = None;
        let mut index = write_lock(self.index());
        for hash in w.pending_hashes() {
            index.remove(&hash);
        }
        w.pending.clear();
        w.pending_entries.clear();
        *writer = None;
        Err(e)
    }

    /// Removes the blobs `live` says no, and copies of blobs found again
    /// in a later pack: every pack holding one has its live blobs copied
    /// into a new pack (each checked against its hash on the way; a corrupt
    /// one is dropped), then is removed, index first. Packs without an index
    /// (a kill between creating the two files) are removed too. Call only
    /// under the cache's lock, on a fresh `Packs` that has not appended.
    pub fn compact(&self, live: impl Fn(&ContentHash) -> bool) -> io::Result<Compacted> {
        let mut done = Compacted::default();
        *lock(&self.marks) = None;
        let winners = read_lock(self.index()).clone();
        let mut doomed = Vec::new();
        for number in numbers(&self.layout) {
            let read = self.read_index(number, None);
            let pack_len = fs::metadata(self.layout.pack(number)).map_or(0, |m| m.len());
            let (pack_end, index_len) = read.end.map_or((0, 0), |m| (m.pack_end, m.index_len));
            let mut keep = Vec::new();
            let entries = read.entries.len();
            // A pack with no entry (its build stored nothing) goes too.
            let mut clean = pack_len == pack_end && !read.entries.is_empty();
            for (hash, slot) in read.entries {
                if winners.get(&hash) == Some(&slot) && live(&hash) {
                    keep.push((hash, slot));
                } else {
                    clean = false;
                    if winners.get(&hash) == Some(&slot) {
                        done.removed += 1;
                    }
                }
            }
            if clean {
                done.kept += keep.len() as u64;
                continue;
            }
            // Every entry live and only unindexed bytes after them (a batch
            // a kill tore): cut in place, which needs no free space, where
            // a copy would (and a disk just freed may not have it).
            if keep.len() == entries && entries > 0 && pack_len > pack_end {
                OpenOptions::new()
                    .write(true)
                    .open(self.layout.pack(number))?
                    .set_len(pack_end)?;
                OpenOptions::new()
                    .write(true)
                    .open(self.layout.pack_index(number))?
                    .set_len(index_len)?;
                done.kept += keep.len() as u64;
                done.bytes_freed += pack_len - pack_end;
                continue;
            }
            doomed.push((number, pack_len, keep));
        }
        if doomed.is_empty() {
            self.remove_packs_without_index(&mut done)?;
            return Ok(done);
        }
        let mut opened = false;
        for (number, pack_len, keep) in doomed {
            let mut copied = 0;
            for (hash, slot) in keep {
                let bytes = self.read(slot)?;
                if ContentHash::of(&bytes) == hash {
                    if !opened {
                        // Copies go into a pack of their own, never into
                        // one about to go (and none is made for no copy).
                        self.flush()?;
                        *self.writer.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(self.new_writer()?);
                        opened = true;
                    }
                    self.append(hash, &bytes)?;
                    copied += u64::from(slot.len);
                    done.kept += 1;
                } else {
                    done.removed += 1;
                }
            }
            // The copies are written before the pack they come from goes;
            // then its index first: a pack without one is never read.
            self.flush()?;
            fs::remove_file(self.layout.pack_index(number))?;
            fs::remove_file(self.layout.pack(number))?;
            self.readers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&number);
            done.bytes_freed += pack_len.saturating_sub(copied);
        }
        self.remove_packs_without_index(&mut done)?;
        Ok(done)
    }

    fn remove_packs_without_index(&self, done: &mut Compacted) -> io::Result<()> {
        let indexed = file_numbers(&self.layout, "idx");
        for number in file_numbers(&self.layout, "pack") {
            if !indexed.contains(&number) {
                let path = self.layout.pack(number);
                done.bytes_freed += fs::metadata(&path).map_or(0, |m| m.len());
                fs::remove_file(path)?;
            }
        }
        Ok(())
    }

    /// The pack a build appends to: the newest, cut back to its valid
    /// prefix, while it is under [`PACK_TARGET`]; else a new one.
    fn open_writer(&self) -> io::Result<Writer> {
        let dir = self.layout.packs();
        fs::create_dir_all(&dir)?;
        if let Some(&number) = numbers(&self.layout).last() {
            // Where the index was known to end when it was read (just now,
            // or brought up to date from a long-lived pipeline's marks):
            // only what follows is read again, not every entry (at 10k
            // assets that read was a tenth of a watched edit).
            self.index();
            let known = lock(&self.marks).as_ref().and_then(|m| m.get(&number).copied());
            let mut read = self.read_index(number, known);
            if known.is_some() && read.end.is_none() {
                read = self.read_index(number, None);
            }
            if let Some(at) = read.end.filter(|m| m.pack_end < self.target) {
                let pack = OpenOptions::new()
                    .append(true)
                    .open(self.layout.pack(number))?;
                pack.set_len(at.pack_end)?;
                let index = OpenOptions::new()
                    .append(true)
                    .open(self.layout.pack_index(number))?;
                index.set_len(at.index_len)?;
                return Ok(Writer::new(number, pack, index, at));
            }
        }
        self.new_writer()
    }

    /// A new pack, numbered after every file in `packs/`.
    fn new_writer(&self) -> io::Result<Writer> {
        fs::create_dir_all(self.layout.packs())?;
        let number = highest_file_number(&self.layout).map_or(1, |n| n + 1);
        let create = |path: PathBuf, magic: &[u8]| -> io::Result<File> {
            let mut file = OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(path)?;
            file.write_all(magic)?;
            Ok(file)
        };
        // The pack before its index: a listing goes by indexes, so a pack
        // without one is never read (and `gc` removes it).
        let pack = create(self.layout.pack(number), PACK_MAGIC)?;
        let index = create(self.layout.pack_index(number), INDEX_MAGIC)?;
        Ok(Writer::new(number, pack, index, Mark::start()))
    }

    /// Pack `number`'s valid entries, in order (see the module docs); with
    /// `after`, only those after that mark, and an invalid read (no entry,
    /// no end) if the index no longer ends the marked prefix with the
    /// marked entry.
    fn read_index(&self, number: u32, after: Option<Mark>) -> ReadIndex {
        let invalid = ReadIndex {
            entries: Vec::new(),
            end: None,
        };
        let Ok(pack_len) = fs::metadata(self.layout.pack(number)).map(|m| m.len()) else {
            return invalid;
        };
        if pack_len < PACK_MAGIC.len() as u64 {
            return invalid;
        }
        // From the marked entry (or the magic, if the mark has no entry).
        let (start, head): (u64, &[u8]) = match &after {
            Some(m) if m.index_len > INDEX_MAGIC.len() as u64 => (m.index_len - ENTRY as u64, &m.last),
            _ => (0, INDEX_MAGIC),
        };
        let Ok(bytes) = read_from(&self.layout.pack_index(number), start) else {
            return invalid;
        };
        let Some(rest) = bytes.strip_prefix(head) else {
            return invalid;
        };
        let mut at = after.unwrap_or_else(Mark::start);
        let mut entries = Vec::new();
        for chunk in rest.chunks_exact(ENTRY) {
            let Some((hash, slot)) = decode_entry(chunk, number) else {
                break;
            };
            let end = slot.offset + u64::from(slot.len);
            if slot.offset < at.pack_end || end > pack_len {
                break;
            }
            at.pack_end = end;
            at.index_len += ENTRY as u64;
            at.last.copy_from_slice(chunk);
            entries.push((hash, slot));
        }
        ReadIndex {
            entries,
            end: Some(at),
        }
    }
}

/// What [`Packs::compact`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Compacted {
    /// Packed blobs kept.
    pub kept: u64,
    /// Packed blobs removed (dead or corrupt).
    pub removed: u64,
    /// Bytes of pack files freed.
    pub bytes_freed: u64,
}

#[derive(Debug)]
struct ReadIndex {
    entries: Vec<(ContentHash, Slot)>,
    /// Where the index's valid prefix ends; `None` if it has none (no
    /// magic, no pack, or not the marked prefix it was read after).
    end: Option<Mark>,
}

/// `entries` applied to `map` in order: a later entry for a hash wins, and a
/// tombstone (length 0, not the empty blob's) removes it.
fn apply(map: &mut HashMap<ContentHash, Slot>, entries: Vec<(ContentHash, Slot)>) {
    let empty = ContentHash::of(&[]);
    for (hash, slot) in entries {
        if slot.len == 0 && hash != empty {
            map.remove(&hash);
        } else {
            map.insert(hash, slot);
        }
    }
}

/// The bytes of the file at `path` from `offset` on.
fn read_from(path: &std::path::Path, offset: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let rest = usize::try_from(len.saturating_sub(offset)).map_err(io::Error::other)?;
    let mut bytes = vec![0; rest];
    read_at(&file, &mut bytes, offset)?;
    Ok(bytes)
}

/// The numbers of the packs that have an index, ascending.
pub(crate) fn numbers(layout: &CacheLayout) -> Vec<u32> {
    file_numbers(layout, "idx").into_iter().collect()
}

fn highest_file_number(layout: &CacheLayout) -> Option<u32> {
    let mut all = file_numbers(layout, "idx");
    all.extend(file_numbers(layout, "pack"));
    all.last().copied()
}

/// The numbers of files `packs/<number>.<extension>`.
fn file_numbers(layout: &CacheLayout, extension: &str) -> BTreeSet<u32> {
    let Ok(entries) = fs::read_dir(layout.packs()) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let (stem, ext) = name.to_str()?.split_once('.')?;
            (ext == extension && stem.len() == 8)
                .then(|| stem.parse().ok())
                .flatten()
        })
        .collect()
}

fn encode_entry(hash: &ContentHash, slot: Slot) -> [u8; ENTRY] {
    let mut entry = [0; ENTRY];
    entry[..32].copy_from_slice(hash.as_bytes());
    entry[32..40].copy_from_slice(&slot.offset.to_le_bytes());
    entry[40..44].copy_from_slice(&slot.len.to_le_bytes());
    let check = blake3::hash(&entry[..44]);
    entry[44..].copy_from_slice(&check.as_bytes()[..4]);
    entry
}

fn decode_entry(entry: &[u8], pack: u32) -> Option<(ContentHash, Slot)> {
    let check = blake3::hash(&entry[..44]);
    if entry[44..48] != check.as_bytes()[..4] {
        return None;
    }
    let hash = ContentHash::from_bytes(entry[..32].try_into().ok()?);
    let offset = u64::from_le_bytes(entry[32..40].try_into().ok()?);
    let len = u32::from_le_bytes(entry[40..44].try_into().ok()?);
    Some((hash, Slot { pack, offset, len }))
}

/// Puts the index back where it came from, with the marks of what it holds
/// once the pending blobs are written (see the module docs, "Kept between
/// builds"); nothing if those are not known.
impl Drop for Packs {
    fn drop(&mut self) {
        let Some(kept) = &self.kept else {
            return;
        };
        if self.index.get().is_none() || self.flush().is_err() {
            return;
        }
        let Some(mut marks) = lock(&self.marks).take() else {
            return;
        };
        if let Some(w) = lock(&self.writer).as_ref() {
            marks.insert(w.number, w.mark());
        }
        let Some(index) = self.index.take() else {
            return;
        };
        let map = index.into_inner().unwrap_or_else(|p| p.into_inner());
        *lock(kept) = Some(KeptIndex { map, marks });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn read_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

fn write_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

/// Fills `buf` from `file` at `offset`, without moving a shared cursor.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut buf) = (0u64, buf);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, offset + done)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    done += n as u64;
                    buf = &mut buf[n..];
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
