//! [`BlobMemory`]: blobs' bytes, and what they decode to, kept in memory
//! across the builds of a long-lived pipeline (`watch`), bounded, by build
//! generation. The [`Store`](super::Store) asks it before the disk and
//! tells it what it wrote or verified.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::in_parcels::KeptSums;
use super::pack::KeptIndex;
use crate::buffers::Buffers;
use crate::hash::ContentHash;
use crate::record::FileStamp;

/// Blobs' bytes by hash, kept in memory across builds by a long-lived
/// pipeline (`watch`): an atlas re-pack after one edit reads its sprites and
/// its unchanged pages from here, and the parcel stage the pages just made.
///
/// Bounded: blobs up to [`BlobMemory::MAX_BLOB`], at most
/// [`BlobMemory::capacity_for`] the machine's memory in all: an eighth of
/// it, between [`BlobMemory::CAPACITY`] and [`BlobMemory::MAX_CAPACITY`].
/// Each build is a generation; when a blob does not fit, what the current
/// build has not used goes, least recently used first, until it fits, and
/// if it still does not fit it is not kept. A project whose largest atlas (its sprites and pages) does not
/// fit decodes it again on every edit: 512 MiB held 1M files'
/// 137,000-sprite atlas in part, and an edit took 6–8 s, 4.8–5 s with 3 GiB.
///
/// Facts ([`BlobMemory::fact`]: a sprite's size, a layout, which blob a
/// page's inputs made) are kept apart, with a bound of their own, so that
/// the blobs and decoded values cannot push them out.
#[derive(Debug)]
pub struct BlobMemory {
    inner: Mutex<MemoryInner>,
    capacity: usize,
    facts_capacity: usize,
    /// Large buffers for the next build's atlas pages (`buffers.rs`).
    pub(super) buffers: Arc<Buffers>,
    /// The pack files' index, read again only where they grew (`pack.rs`,
    /// "Kept between builds").
    pub(super) pack_index: Arc<Mutex<Option<KeptIndex>>>,
    /// Text files read whole on every build, by path ([`BlobMemory::text`]).
    texts: Mutex<HashMap<PathBuf, (FileStamp, Arc<str>)>>,
    /// Small values a hash names ([`BlobMemory::fact`]), bounded apart
    /// from the blobs and what they decode to.
    facts: Mutex<MemoryInner>,
    /// The parcels' `.sums` files as read, while they are the same files
    /// (one per parcel, outside the capacity, as the texts are).
    pub(super) kept_sums: KeptSums,
}

impl Default for BlobMemory {
    fn default() -> Self {
        BlobMemory::with_capacity(BlobMemory::capacity_for(total_memory()))
    }
}

/// The machine's memory in bytes, if known.
fn total_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let info = rustix::system::sysinfo();
        #[allow(clippy::useless_conversion)]
        let total = u64::from(info.totalram).saturating_mul(u64::from(info.mem_unit.max(1)));
        Some(total)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[derive(Default)]
struct MemoryInner {
    /// Bytes, and the generation that last used them. Shared with the
    /// build that keeps them for a parcel ([`Store::put_deferred`]).
    blobs: HashMap<ContentHash, (Arc<Vec<u8>>, u64)>,
    /// What blobs decode to, for readers that would decode them again each
    /// build (an atlas's sprites' pixels), with its size and the generation
    /// that last used it ([`Store::decoded`]).
    decoded: HashMap<ContentHash, (Decoded, usize, u64)>,
    /// Of `blobs` and `decoded` together.
    bytes: usize,
    generation: u64,
    /// What this generation may drop to make room, the least recently
    /// used last ([`MemoryInner::make_room`]), and the generation it was
    /// listed for.
    victims: Vec<Victim>,
    victims_of: Option<u64>,
}

/// A blob decoded, shared with its readers.
pub(super) type Decoded = Arc<dyn std::any::Any + Send + Sync>;

impl std::fmt::Debug for MemoryInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryInner")
            .field("blobs", &self.blobs.len())
            .field("decoded", &self.decoded.len())
            .field("bytes", &self.bytes)
            .field("generation", &self.generation)
            .finish()
    }
}

/// An entry the memory may drop: the generation that last used it,
/// whether it is a decoded value (else bytes), its hash.
type Victim = (u64, bool, ContentHash);

impl MemoryInner {
    /// Makes room for `len` more bytes by dropping what the current
    /// generation has not used, least recently used first (by generation;
    /// bytes before what they decode to, which costs more to make again),
    /// no more than that; whether `len` fits now.
    ///
    /// Only as much as that goes: a watched edit re-packs one group of an
    /// atlas, and the pages the edit before made for it, now replaced, were
    /// last used a generation before the pages still in the atlas. Dropping
    /// every unused entry at once (as this did) dropped the pages the
    /// running atlas step had not looked up yet, and at 1M files half the
    /// atlas was drawn again on every edit.
    ///
    /// The entries are listed and sorted once a generation, when the
    /// first blob does not fit; later ones take the next from that list.
    /// (Sweeping every entry for each blob offered was a third of a
    /// watched edit's CPU at 1M files.)
    fn make_room(&mut self, len: usize, capacity: usize) -> bool {
        if self.bytes + len <= capacity {
            return true;
        }
        let generation = self.generation;
        if self.victims_of != Some(generation) {
            self.victims_of = Some(generation);
            let mut victims: Vec<Victim> = (self.blobs.iter())
                .filter(|(_, (_, used))| *used != generation)
                .map(|(hash, (_, used))| (*used, false, *hash))
                .chain(
                    (self.decoded.iter())
                        .filter(|(_, (_, _, used))| *used != generation)
                        .map(|(hash, (_, _, used))| (*used, true, *hash)),
                )
                .collect();
            // The least recently used last, where `pop` takes it.
            victims.sort_unstable_by(|a, b| b.cmp(a));
            self.victims = victims;
        }
        while self.bytes + len > capacity {
            let Some((_, decoded, hash)) = self.victims.pop() else {
                return false;
            };
            // Gone since, or used since the list was made: not a victim.
            let size = if decoded {
                match self.decoded.get(&hash) {
                    Some(&(_, size, used)) if used != generation => {
                        self.decoded.remove(&hash);
                        size
                    }
                    _ => continue,
                }
            } else {
                match self.blobs.get(&hash) {
                    Some((bytes, used)) if *used != generation => {
                        let size = bytes.len();
                        self.blobs.remove(&hash);
                        size
                    }
                    _ => continue,
                }
            };
            self.bytes -= size;
        }
        true
    }
}

impl BlobMemory {
    /// The largest blob kept: a 4096x4096 RGBA8 page.
    pub const MAX_BLOB: usize = 64 << 20;
    /// The fewest bytes kept in all, and all when the machine's memory is
    /// unknown.
    pub const CAPACITY: usize = 512 << 20;
    /// The most bytes kept in all, however much memory there is.
    pub const MAX_CAPACITY: usize = 4 << 30;

    /// What is kept on a machine with `memory` bytes: an eighth of it,
    /// within [`Self::CAPACITY`] and [`Self::MAX_CAPACITY`].
    pub fn capacity_for(memory: Option<u64>) -> usize {
        let eighth = memory.map_or(0, |m| usize::try_from(m / 8).unwrap_or(usize::MAX));
        eighth.clamp(Self::CAPACITY, Self::MAX_CAPACITY)
    }

    /// A memory of `capacity` bytes, and an eighth of that for facts
    /// ([`BlobMemory::fact`]).
    pub(super) fn with_capacity(capacity: usize) -> BlobMemory {
        BlobMemory::with_capacities(capacity, capacity / 8)
    }

    /// A memory of `blobs` bytes for blobs and what they decode to, and
    /// `facts` bytes for facts.
    pub fn with_capacities(blobs: usize, facts: usize) -> BlobMemory {
        BlobMemory {
            inner: Mutex::default(),
            capacity: blobs,
            facts_capacity: facts,
            buffers: Arc::default(),
            pack_index: Arc::default(),
            texts: Mutex::default(),
            facts: Mutex::default(),
            kept_sums: KeptSums::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a generation: what the next build uses is kept before what
    /// earlier builds used.
    pub(super) fn next_generation(&self) {
        for memory in [&self.inner, &self.facts] {
            let mut inner = memory.lock().unwrap_or_else(|p| p.into_inner());
            inner.victims = Vec::new();
            inner.generation += 1;
        }
    }

    pub(super) fn get(&self, hash: &ContentHash) -> Option<Vec<u8>> {
        // Copied outside the lock: an atlas reads its members on every core.
        self.get_shared(hash).map(|b| b.to_vec())
    }

    /// The bytes of blob `hash`, if kept, not copied.
    pub(super) fn get_shared(&self, hash: &ContentHash) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.lock();
        let generation = inner.generation;
        inner.blobs.get_mut(hash).map(|(bytes, used)| {
            *used = generation;
            Arc::clone(bytes)
        })
    }

    pub(super) fn keep(&self, hash: ContentHash, bytes: &[u8]) {
        self.keep_shared(hash, || Arc::new(bytes.to_vec()), bytes.len());
    }

    /// [`BlobMemory::keep`] of `len` bytes that `bytes` gives, shared (made
    /// only if they are to be kept).
    pub(super) fn keep_shared(
        &self,
        hash: ContentHash,
        bytes: impl FnOnce() -> Arc<Vec<u8>>,
        len: usize,
    ) {
        if len > Self::MAX_BLOB {
            return;
        }
        let mut inner = self.lock();
        let inner = &mut *inner;
        if let Some((_, used)) = inner.blobs.get_mut(&hash) {
            *used = inner.generation;
            return;
        }
        if !inner.make_room(len, self.capacity) {
            return;
        }
        inner.bytes += len;
        inner.blobs.insert(hash, (bytes(), inner.generation));
    }

    /// The text of the file at `path`, read again only when the path names
    /// another file than last time (by its [`FileStamp`]: device, inode,
    /// length and times; these files are replaced by rename, never written
    /// in place): the parcel stage of a watched build reads a base
    /// parcel's `.sums` on every edit, and it changes only when the parcel
    /// is written whole (140 MB at 1M files,
    /// a tenth of an edit). One text is kept per path, outside the
    /// capacity: it is one file per parcel, and what it replaces is gone.
    pub(super) fn text(&self, path: &Path) -> io::Result<(FileStamp, Arc<str>)> {
        let mut file = fs::File::open(path)?;
        let id = FileStamp::of(&file.metadata()?);
        let mut texts = self.texts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kept, text)) = texts.get(path)
            && *kept == id
        {
            return Ok((id, Arc::clone(text)));
        }
        texts.remove(path);
        drop(texts);
        // Read from the file whose identity was taken, not the path again.
        let mut text = String::with_capacity(id.size as usize);
        file.read_to_string(&mut text)?;
        let text: Arc<str> = Arc::from(text);
        let mut texts = self.texts.lock().unwrap_or_else(|p| p.into_inner());
        texts.insert(path.to_owned(), (id, Arc::clone(&text)));
        Ok((id, text))
    }

    /// Keeps `text` as the text of the file at `path` while it has
    /// `stamp`: one just written there ([`Store::write_text`]).
    ///
    /// [`Store::write_text`]: super::Store::write_text
    pub(super) fn keep_text(&self, path: &Path, stamp: FileStamp, text: Arc<str>) {
        let mut texts = self.texts.lock().unwrap_or_else(|p| p.into_inner());
        texts.insert(path.to_owned(), (stamp, text));
    }

    /// What blob `hash` decoded to, if kept.
    pub(super) fn decoded(&self, hash: &ContentHash) -> Option<Decoded> {
        let mut inner = self.lock();
        let generation = inner.generation;
        inner.decoded.get_mut(hash).map(|(value, _, used)| {
            *used = generation;
            Arc::clone(value)
        })
    }

    /// Keeps what blob `hash` decoded to, `size` bytes of it, as
    /// [`BlobMemory::keep`] keeps bytes.
    pub(super) fn keep_decoded(&self, hash: ContentHash, value: Decoded, size: usize) {
        if size > Self::MAX_BLOB {
            return;
        }
        let mut inner = self.lock();
        let inner = &mut *inner;
        if inner.decoded.contains_key(&hash) || !inner.make_room(size, self.capacity) {
            return;
        }
        inner.bytes += size;
        inner.decoded.insert(hash, (value, size, inner.generation));
    }
}

/// Facts: small values that a hash names, each a pure function of what
/// the hash names (a sprite's size, an atlas group's layout, which blob a
/// page's inputs made). They are kept apart from the blobs and what these
/// decode to, in a memory of their own: at 1M files an atlas's decoded
/// sprites are gigabytes, and kept with them, the few megabytes that let
/// a re-pack skip reading the sprites were pushed out with them.
impl BlobMemory {
    /// The fact kept under `key`, if any (the store asks for several at
    /// once, [`BlobMemory::facts`]).
    #[cfg(test)]
    fn fact(&self, key: &ContentHash) -> Option<Decoded> {
        self.facts(std::slice::from_ref(key)).pop().flatten()
    }

    /// The facts `keys` name, each if kept, looked up together: an atlas
    /// asks for each of its members' (137,000 at 1M files), and one lock
    /// apiece, taken by every core at once, cost more than the lookups.
    pub(super) fn facts(&self, keys: &[ContentHash]) -> Vec<Option<Decoded>> {
        let mut facts = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        let generation = facts.generation;
        (keys.iter())
            .map(|key| {
                facts.decoded.get_mut(key).map(|(value, _, used)| {
                    *used = generation;
                    Arc::clone(value)
                })
            })
            .collect()
    }

    /// Keeps `value`, `size` bytes, as the fact `key` names (one kept
    /// already is marked as used instead); the least recently used facts
    /// go when they would be more than their share.
    pub(super) fn keep_fact(&self, key: ContentHash, value: Decoded, size: usize) {
        let capacity = self.facts_capacity;
        let mut facts = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        let facts = &mut *facts;
        if let Some((_, _, used)) = facts.decoded.get_mut(&key) {
            *used = facts.generation;
            return;
        }
        if !facts.make_room(size, capacity) {
            return;
        }
        facts.bytes += size;
        facts.decoded.insert(key, (value, size, facts.generation));
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::tests::corrupt;
    use super::super::{Store, StoreError};
    use super::*;

    #[test]
    fn memory_serves_small_blobs_across_handles_and_only_verified_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Arc::new(BlobMemory::default());
        let put = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        let small = put.put(b"sprite").unwrap();
        let big_bytes = vec![7u8; BlobMemory::MAX_BLOB + 1];
        let big = put.put(&big_bytes).unwrap();
        // Another build's handle, the files gone: small from memory, big not.
        fs::remove_dir_all(dir.path().join("packs")).unwrap();
        fs::remove_file(put.locate(&big).unwrap().path).unwrap();
        drop(put);
        let next = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        assert_eq!(next.get(&small).unwrap(), b"sprite");
        assert!(next.get(&big).is_err());
        // A blob read from disk is kept only once it proved to be itself.
        let other = Store::open(dir.path()).unwrap().put(b"other").unwrap();
        let next = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        corrupt(&next, &other);
        assert!(matches!(
            next.get(&other),
            Err(StoreError::CorruptBlob { .. })
        ));
        assert!(memory.get(&other).is_none());
    }

    #[test]
    fn decoded_blobs_are_kept_across_handles_and_share_the_memory_bound() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Arc::new(BlobMemory::with_capacity(100));
        let calls = std::cell::Cell::new(0);
        let decode = |store: &Store, hash: &ContentHash| -> Result<Arc<String>, StoreError> {
            store.decoded(
                hash,
                || {
                    calls.set(calls.get() + 1);
                    Ok(String::from_utf8(store.get(hash)?).unwrap().to_uppercase())
                },
                String::len,
            )
        };
        let first = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        let a = first.put(b"sprite a").unwrap();
        assert_eq!(*decode(&first, &a).unwrap(), "SPRITE A");
        drop(first);
        // The next build's handle: decoded once, never again.
        let next = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        assert_eq!(*decode(&next, &a).unwrap(), "SPRITE A");
        assert_eq!(calls.get(), 1);
        // Unused by this build, it goes when the bytes of another need room.
        drop(next);
        let last = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        let big = last.put(&[b'x'; 93]).unwrap();
        assert!(memory.get(&big).is_some());
        assert_eq!(*decode(&last, &a).unwrap(), "SPRITE A");
        assert_eq!(calls.get(), 2, "dropped for the 93 bytes after its own bytes, so decoded again");
        // Without a memory nothing is kept.
        let plain = Store::open(dir.path()).unwrap();
        decode(&plain, &a).unwrap();
        decode(&plain, &a).unwrap();
        assert_eq!(calls.get(), 4);
    }

    #[test]
    fn the_memory_kept_is_an_eighth_of_the_machines_within_bounds() {
        let gib = 1u64 << 30;
        assert_eq!(BlobMemory::capacity_for(None), BlobMemory::CAPACITY);
        assert_eq!(BlobMemory::capacity_for(Some(2 * gib)), BlobMemory::CAPACITY);
        assert_eq!(BlobMemory::capacity_for(Some(24 * gib)), 3 << 30);
        assert_eq!(BlobMemory::capacity_for(Some(256 * gib)), BlobMemory::MAX_CAPACITY);
        #[cfg(target_os = "linux")]
        assert!(total_memory().is_some_and(|m| m > 1 << 28), "{:?}", total_memory());
    }

    /// A kept text is read once while its path names the same file, and
    /// again once a rename puts another file there.
    #[test]
    fn a_text_is_read_again_only_when_its_path_names_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.parcel.sums");
        fs::write(&path, "first").unwrap();
        let memory = BlobMemory::with_capacity(100);
        let (stamp, first) = memory.text(&path).unwrap();
        assert_eq!(&*first, "first");
        let (again, kept) = memory.text(&path).unwrap();
        assert!(Arc::ptr_eq(&first, &kept) && again == stamp, "kept");
        // Replaced as the parcel stage replaces it: a new file renamed over.
        let next = dir.path().join("next");
        fs::write(&next, "second, longer").unwrap();
        fs::rename(&next, &path).unwrap();
        let (other, text) = memory.text(&path).unwrap();
        assert_eq!(&*text, "second, longer");
        assert_ne!(other, stamp);
        fs::remove_file(&path).unwrap();
        assert!(memory.text(&path).is_err(), "gone, not served from memory");
    }

    /// Room is made from the least recently used, and no more than needed:
    /// what the build before used stays while older entries can go.
    #[test]
    fn a_full_memory_drops_the_least_recently_used_first_and_only_what_it_needs() {
        let memory = BlobMemory::with_capacity(100);
        let hash = |n: u8| ContentHash::of(&[n]);
        // Blob 0 used two builds ago, 1 by the last build, 2 and 3 decoded
        // two builds ago and by the last.
        memory.keep(hash(0), &[0; 20]);
        memory.keep_decoded(hash(2), Arc::new(()), 20);
        memory.next_generation();
        memory.keep(hash(1), &[1; 20]);
        memory.keep_decoded(hash(3), Arc::new(()), 20);
        memory.next_generation();
        // 80 held; 30 more need 10 freed: blob 0 goes (the oldest, and
        // bytes before decoded values), nothing else.
        memory.keep(hash(4), &[4; 30]);
        assert!(memory.get(&hash(0)).is_none());
        assert!(memory.decoded(&hash(2)).is_some());
        assert!(memory.get(&hash(1)).is_some() && memory.decoded(&hash(3)).is_some());
        assert!(memory.get(&hash(4)).is_some());
        // Everything held is in use now: 11 more cannot be kept.
        memory.keep(hash(5), &[5; 11]);
        assert!(memory.get(&hash(5)).is_none());
        // In the next build, 2 and 4 are used before 50 more come: 1 and 3,
        // unused by it, go.
        memory.next_generation();
        assert!(memory.decoded(&hash(2)).is_some() && memory.get(&hash(4)).is_some());
        memory.keep(hash(6), &[6; 50]);
        assert!(memory.get(&hash(1)).is_none() && memory.decoded(&hash(3)).is_none());
        assert!(memory.get(&hash(6)).is_some());
    }

    /// Facts have their own bound: blobs that fill the memory push none
    /// out, and facts past their bound push out the least recently used
    /// fact only.
    #[test]
    fn facts_are_kept_apart_from_blobs_within_a_bound_of_their_own() {
        let memory = BlobMemory::with_capacities(10, 30);
        let hash = |n: u8| ContentHash::of(&[n]);
        memory.keep_fact(hash(0), Arc::new(0u32), 10);
        memory.keep_fact(hash(1), Arc::new(1u32), 10);
        memory.next_generation();
        memory.keep(hash(9), &[9; 10]);
        memory.next_generation();
        memory.keep(hash(8), &[8; 10]);
        assert!(memory.get(&hash(9)).is_none(), "a blob made room for a blob");
        assert!(memory.fact(&hash(0)).is_some() && memory.fact(&hash(1)).is_some());
        // Fact 1 is used (looked up with others, or kept again) by this
        // build, 0 not.
        memory.next_generation();
        let found = memory.facts(&[hash(7), hash(1)]);
        assert!(found[0].is_none() && found[1].is_some());
        memory.keep_fact(hash(1), Arc::new(1u32), 10);
        memory.keep_fact(hash(2), Arc::new(2u32), 20);
        assert!(memory.fact(&hash(0)).is_none(), "the least recently used fact went");
        assert!(memory.fact(&hash(1)).is_some() && memory.fact(&hash(2)).is_some());
        assert!(memory.get(&hash(8)).is_some(), "facts make no room among blobs");
    }

    #[test]
    fn a_full_memory_drops_what_the_current_build_has_not_used() {
        let memory = BlobMemory::with_capacity(10);
        let (a, b, c) = (
            ContentHash::of(b"a"),
            ContentHash::of(b"b"),
            ContentHash::of(b"c"),
        );
        memory.keep(a, b"aaaa");
        memory.keep(b, b"bbbb");
        memory.next_generation();
        assert!(memory.get(&a).is_some(), "used by this build");
        memory.keep(c, b"cccc");
        assert!(memory.get(&b).is_none(), "unused, dropped for c");
        assert_eq!(memory.get(&c).as_deref(), Some(&b"cccc"[..]));
        // Everything is in use now: a blob that does not fit is not kept.
        let d = ContentHash::of(b"d");
        memory.keep(d, b"dddd");
        assert!(memory.get(&d).is_none());
        assert!(memory.get(&a).is_some() && memory.get(&c).is_some());
        // The next build sweeps again: what it leaves unused makes room.
        memory.next_generation();
        assert!(memory.get(&a).is_some());
        let e = ContentHash::of(b"e");
        memory.keep(e, b"eeee");
        assert!(memory.get(&c).is_none(), "unused by this build, dropped for e");
        assert_eq!(memory.get(&e).as_deref(), Some(&b"eeee"[..]));
    }
}
