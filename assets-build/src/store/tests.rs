//! Tests of the parent module.

use super::*;

/// Flips one byte of a stored blob where it is, keeping its size.
pub(super) fn corrupt(store: &Store, hash: &ContentHash) {
    let at = store.locate(hash).expect("stored");
    let mut bytes = fs::read(&at.path).unwrap();
    bytes[(at.offset + at.len / 2) as usize] ^= 1;
    fs::write(&at.path, bytes).unwrap();
}

/// Writes a parcel `main` into `dir` holding `bytes` whole as
/// `levels/one.lvl`, zstd-compressed, with a `.sums` as the parcel
/// stage writes it, saying the resource is the blob `claimed`.
fn parcel(dir: &Path, bytes: &[u8], claimed: ContentHash) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let mut writer =
        assets_runtime::write::ParcelWriter::compressed(assets_runtime::Compression::Zstd);
    writer.add("levels/one.lvl", "bytes", bytes.to_vec());
    let bytes = writer.finish().unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let path = dir.join("main.parcel");
    fs::write(&path, &bytes).unwrap();
    let claimed = claimed.to_hex();
    let sums = crate::parcel_sums::write(
        "zstd",
        parcel.table_checksum(),
        [(claimed.as_str(), "levels/one.lvl")].into_iter(),
    );
    fs::write(path.with_extension("parcel.sums"), sums).unwrap();
    path
}

/// Each store a build opens, a long-lived pipeline's too: its memory keeps
/// the `.sums` files read (`in_parcels::KeptSums`; no blob, which would be
/// served before a parcel is asked), and must read one again once another
/// file replaces it, and forget one removed.
#[test]
fn deferred_blobs_are_stored_only_if_no_parcel_took_them_and_then_read_from_it() {
    for memory in [None, Some(Arc::new(BlobMemory::with_capacities(0, 0)))] {
        deferred_blobs_in(&memory);
    }
}

fn deferred_blobs_in(memory: &Option<Arc<BlobMemory>>) {
    let dir = tempfile::tempdir().unwrap();
    let open = |dir: &Path| Store::open_with_memory(dir, memory.clone());
    let parcels = CacheLayout::new(dir.path()).parcel_dir("game", "dev");
    let level = vec![7u8; 5000];
    let (held, left) = (ContentHash::of(&level), ContentHash::of(b"left out"));
    {
        let store = open(dir.path()).unwrap();
        store.put_deferred(held, Arc::new(level.clone())).unwrap();
        store
            .put_deferred(left, Arc::new(b"left out".to_vec()))
            .unwrap();
        assert!(store.has(&held, 5000) && store.get(&held).unwrap() == level);
        assert!(store.locate(&held).is_none(), "in memory until the flush");
        // The parcel stage writes a parcel holding one of them.
        parcel(&parcels, &level, held);
        assert_eq!(store.flush_deferred(|h| *h == held).unwrap(), 8);
        assert!(store.locate(&left).is_some() && store.locate(&held).is_none());
    }
    // A later build finds it in the parcel, decompressed and checked.
    let store = open(dir.path()).unwrap();
    assert!(store.has(&held, 5000));
    assert_eq!(store.get(&held).unwrap(), level);

    // A `.sums` of another version of the parcel is not trusted.
    let sums = parcels.join("main.parcel.sums");
    let text = fs::read_to_string(&sums).unwrap();
    fs::write(&sums, text.replacen("zstd ", "zstd 1", 1)).unwrap();
    assert!(!open(dir.path()).unwrap().has(&held, 5000));

    // A resource whose bytes are not the blob its `.sums` names (its
    // own checksums intact: rewritten by hand): corrupt, and the parcel
    // is trusted no more, by this store and by later ones.
    let path = parcel(&parcels, &[8u8; 5000], held);
    let store = open(dir.path()).unwrap();
    assert!(store.has(&held, 5000));
    assert!(matches!(
        store.get(&held),
        Err(StoreError::CorruptBlob { path: p, .. }) if p == path
    ));
    assert!(!store.has(&held, 5000) && store.get(&held).is_err());
    assert!(!sums.exists());
    assert!(!open(dir.path()).unwrap().has(&held, 5000));
}

/// `verify` checks every step at once: one step finding a blob of a
/// parcel corrupt must not fail another that reads a whole blob of the
/// same parcel a moment later (it did, as "could not read", one run in
/// thirty under load).
#[test]
fn a_parcel_found_damaged_still_serves_its_whole_blobs_to_the_build_that_found_it() {
    let dir = tempfile::tempdir().unwrap();
    let parcels = CacheLayout::new(dir.path()).parcel_dir("game", "dev");
    fs::create_dir_all(&parcels).unwrap();
    let (good, bad) = (vec![1u8; 3000], vec![2u8; 3000]);
    let mut writer = assets_runtime::write::ParcelWriter::compressed(assets_runtime::Compression::Lz4);
    writer.add("levels/good.lvl", "bytes", good.clone());
    writer.add("levels/bad.lvl", "bytes", bad.clone());
    let bytes = writer.finish().unwrap();
    let table_checksum = assets_runtime::Parcel::from_bytes(&bytes).unwrap().table_checksum();
    let path = parcels.join("main.parcel");
    fs::write(&path, &bytes).unwrap();
    // The `.sums` names another blob for `bad.lvl`: its bytes do not match.
    let (good_hash, claimed) = (ContentHash::of(&good), ContentHash::of(b"other"));
    let (good_hex, claimed_hex) = (good_hash.to_hex(), claimed.to_hex());
    let lines = [
        (good_hex.as_str(), "levels/good.lvl"),
        (claimed_hex.as_str(), "levels/bad.lvl"),
    ];
    let sums = crate::parcel_sums::write("lz4", table_checksum, lines.into_iter());
    fs::write(path.with_extension("parcel.sums"), sums).unwrap();

    let store = Store::open(dir.path()).unwrap();
    assert!(store.has(&good_hash, 3000) && store.has(&claimed, 5));
    assert!(matches!(
        store.get(&claimed),
        Err(StoreError::CorruptBlob { path: p, .. }) if p == path
    ));
    // Trusted no more: what it held counts as missing, so its steps run
    // again; but the whole blob still reads, checked, in this build.
    assert!(!store.has(&good_hash, 3000));
    assert_eq!(store.get(&good_hash).unwrap(), good);
    assert!(store.get(&claimed).is_err());
    // A later build does not look at it.
    let later = Store::open(dir.path()).unwrap();
    assert!(!later.has(&good_hash, 3000) && later.get(&good_hash).is_err());
}

#[test]
fn blobs_are_named_by_hash_and_checked_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let big_bytes = vec![3u8; PACK_MAX_BLOB + 1];
    let h = store.put(b"hello").unwrap();
    let big = store.put(&big_bytes).unwrap();
    assert_eq!(store.put(b"hello").unwrap(), h);
    assert!(store.has(&h, 5) && store.has(&big, big_bytes.len() as u64));
    assert!(!store.has(&h, 4));
    assert_eq!(store.get(&h).unwrap(), b"hello");
    assert!(
        store
            .locate(&h)
            .unwrap()
            .path
            .starts_with(dir.path().join("packs"))
    );
    assert_eq!(
        store.locate(&big).unwrap().path,
        CacheLayout::new(dir.path()).blob(&big)
    );
    assert_eq!(store.locations().len(), 2);
    corrupt(&store, &h);
    corrupt(&store, &big);
    // The next build (a new handle) checks what an earlier one wrote.
    let store = Store::open(dir.path()).unwrap();
    for (hash, len) in [(h, 5), (big, big_bytes.len() as u64)] {
        assert!(matches!(
            store.get(&hash),
            Err(StoreError::CorruptBlob { .. })
        ));
        assert!(
            !store.has(&hash, len),
            "a corrupt blob is removed when found"
        );
    }
    store.put(b"hello").unwrap();
    store.put(&big_bytes).unwrap();
    assert_eq!(store.get(&h).unwrap(), b"hello");
    // And the build after (once this one is done) reads the fresh copies.
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.get(&h).unwrap(), b"hello");
    assert_eq!(store.get(&big).unwrap(), big_bytes);
}

#[test]
fn half_written_blobs_of_a_killed_build_are_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let whole = vec![1u8; PACK_MAX_BLOB + 1];
    let h = store.put(&whole).unwrap();
    assert!(
        store.writing_marker().exists(),
        "marked while it writes blob files"
    );
    let half = store.locate(&h).unwrap().path.with_file_name(".1-0.tmp");
    fs::write(&half, b"ha").unwrap();
    // Killed: no drop, the mark stays.
    std::mem::forget(store);
    let next = Store::open(dir.path()).unwrap();
    next.remove_orphans().unwrap();
    assert!(!half.exists());
    assert!(!next.writing_marker().exists());
    assert_eq!(next.get(&h).unwrap(), whole);
    drop(next);
    // A build that ends normally takes its mark away.
    let store = Store::open(dir.path()).unwrap();
    store.put(&vec![2u8; PACK_MAX_BLOB + 1]).unwrap();
    drop(store);
    assert!(!dir.path().join("tmp/writing-blobs").exists());
}

#[test]
fn orphans_in_tmp_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    fs::write(store.temp_path("write"), b"half").unwrap();
    fs::create_dir(store.temp_path("step")).unwrap();
    store.remove_orphans().unwrap();
    assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
}

/// A text written through the store is read back from memory, by a later
/// store sharing it, while the file is the one written; one replaced by
/// another program is read from the file.
#[test]
fn a_text_written_is_read_back_from_memory_until_the_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Arc::new(BlobMemory::default());
    let path = dir.path().join("parcels/main.parcel.sums");
    let text = "#parcel lz4 0000000000000001\nabc levels/one two.lvl\n".to_owned();
    let stamp = {
        let store = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
        store.write_text(&path, text.clone()).unwrap()
    };
    assert_eq!(fs::read_to_string(&path).unwrap(), text, "written whole");
    let store = Store::open_with_memory(dir.path(), Some(Arc::clone(&memory))).unwrap();
    let (read_stamp, first) = store.read_text(&path).unwrap();
    assert_eq!((read_stamp, &*first), (stamp, text.as_str()));
    let (_, again) = store.read_text(&path).unwrap();
    assert!(Arc::ptr_eq(&first, &again), "kept, not read");
    let other = dir.path().join("other");
    fs::write(&other, "#parcel lz4 0000000000000002\n").unwrap();
    fs::rename(&other, &path).unwrap();
    let (new_stamp, now) = store.read_text(&path).unwrap();
    assert_eq!(&*now, "#parcel lz4 0000000000000002\n");
    assert_ne!(new_stamp, stamp);
    // Without a memory, the same file and stamp.
    let plain = Store::open(dir.path()).unwrap();
    let stamp = plain.write_text(&path, text.clone()).unwrap();
    assert_eq!(plain.read_text(&path).unwrap(), (stamp, Arc::from(text.as_str())));
}
