//! Tests of the parent module.

use super::*;

fn packs(dir: &std::path::Path) -> Packs {
    Packs::keeping(CacheLayout::new(dir), None)
}

/// Packs at `dir` whose index is kept in `kept` between handles, as a
/// long-lived pipeline's are.
fn kept_packs(dir: &std::path::Path, kept: &Arc<Mutex<Option<KeptIndex>>>) -> Packs {
    Packs::keeping(CacheLayout::new(dir), Some(Arc::clone(kept)))
}

#[test]
fn blobs_appended_are_found_by_the_next_handle_in_the_same_pack() {
    let dir = tempfile::tempdir().unwrap();
    let a = ContentHash::of(b"alpha");
    let b = ContentHash::of(b"beta");
    {
        let p = packs(dir.path());
        p.append(a, b"alpha").unwrap();
        assert_eq!(p.read(p.find(&a).unwrap()).unwrap(), b"alpha");
    }
    let p = packs(dir.path());
    p.append(b, b"beta").unwrap();
    let (sa, sb) = (p.find(&a).unwrap(), p.find(&b).unwrap());
    assert_eq!((sa.pack, sb.pack), (1, 1), "the second build appends");
    assert_eq!(sb.offset, sa.offset + 5);
    p.flush().unwrap();
    assert_eq!(p.location(sb).read().unwrap(), b"beta");
    assert_eq!(numbers(&p.layout), vec![1]);
}

#[test]
fn appends_are_written_in_batches_blobs_before_entries_and_read_before() {
    let dir = tempfile::tempdir().unwrap();
    let layout = CacheLayout::new(dir.path());
    let on_disk = || {
        let len = |path: PathBuf| fs::metadata(path).map_or(0, |m| m.len());
        (len(layout.pack(1)), len(layout.pack_index(1)))
    };
    let p = packs(dir.path());
    let small: Vec<(ContentHash, Vec<u8>)> = (0..100u32)
        .map(|i| {
            let bytes = i.to_le_bytes().repeat(i as usize + 1);
            (ContentHash::of(&bytes), bytes)
        })
        .collect();
    for (hash, bytes) in &small {
        p.append(*hash, bytes).unwrap();
    }
    assert_eq!(on_disk(), (8, 8), "nothing but the magic is written yet");
    for (hash, bytes) in &small {
        assert_eq!(
            &p.read(p.find(hash).unwrap()).unwrap(),
            bytes,
            "read from memory"
        );
    }
    assert!(packs(dir.path()).find(&small[0].0).is_none());
    p.flush().unwrap();
    let total: u64 = small.iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!(on_disk(), (8 + total, 8 + 100 * ENTRY as u64));
    let fresh = packs(dir.path());
    for (hash, bytes) in &small {
        assert_eq!(&fresh.read(fresh.find(hash).unwrap()).unwrap(), bytes);
    }

    // A batch is written once it passes FLUSH_AT, without a flush.
    let big = vec![3u8; FLUSH_AT];
    let h = ContentHash::of(&big);
    p.append(h, &big).unwrap();
    assert_eq!(on_disk().0, 8 + total + FLUSH_AT as u64);
    assert!(packs(dir.path()).find(&h).is_some());
}

#[test]
fn a_torn_index_or_pack_tail_is_ignored_then_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let layout = CacheLayout::new(dir.path());
    let (a, b) = (ContentHash::of(b"alpha"), ContentHash::of(b"beta"));
    {
        let p = packs(dir.path());
        p.append(a, b"alpha").unwrap();
        p.append(b, b"beta").unwrap();
    }
    // Killed while appending: half an entry, and bytes with none.
    let mut index = OpenOptions::new()
        .append(true)
        .open(layout.pack_index(1))
        .unwrap();
    index.write_all(&[7; 20]).unwrap();
    let mut pack = OpenOptions::new()
        .append(true)
        .open(layout.pack(1))
        .unwrap();
    pack.write_all(b"orphan").unwrap();
    let p = packs(dir.path());
    assert!(p.find(&a).is_some() && p.find(&b).is_some());
    let c = ContentHash::of(b"gamma");
    p.append(c, b"gamma").unwrap();
    drop(p);
    let p = packs(dir.path());
    assert_eq!(p.read(p.find(&c).unwrap()).unwrap(), b"gamma");
    assert_eq!(
        fs::metadata(layout.pack_index(1)).unwrap().len(),
        (8 + 3 * ENTRY) as u64,
        "the torn entry was cut off before appending"
    );

    // An entry pointing past its pack (the pack lost its tail) ends the
    // valid prefix: it and every later entry are not found.
    let len = fs::metadata(layout.pack(1)).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(layout.pack(1))
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let p = packs(dir.path());
    assert!(p.find(&b).is_some());
    assert!(p.find(&c).is_none());
}

#[test]
fn a_flipped_index_byte_ends_the_valid_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let layout = CacheLayout::new(dir.path());
    let hashes: Vec<_> = (0..3u8)
        .map(|i| {
            let h = ContentHash::of(&[i]);
            packs(dir.path()).append(h, &[i]).unwrap();
            h
        })
        .collect();
    let mut bytes = fs::read(layout.pack_index(1)).unwrap();
    bytes[8 + ENTRY + 33] ^= 1; // the second entry's offset
    fs::write(layout.pack_index(1), bytes).unwrap();
    let p = packs(dir.path());
    assert!(p.find(&hashes[0]).is_some());
    assert!(p.find(&hashes[1]).is_none() && p.find(&hashes[2]).is_none());
}

#[test]
fn compaction_keeps_live_blobs_and_frees_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let layout = CacheLayout::new(dir.path());
    let blob = |i: u8| (ContentHash::of(&[i; 100]), [i; 100]);
    let small = || {
        let mut p = packs(dir.path());
        p.target = 350;
        p
    };
    // Packs 1 (blobs 0-3) and 2 (4-5).
    for i in 0..6 {
        let (h, b) = blob(i);
        small().append(h, &b).unwrap();
    }
    assert_eq!(numbers(&layout), vec![1, 2]);
    // An orphan pack (no index) goes too.
    fs::write(layout.pack(9), b"CApack01").unwrap();
    let live = [0, 1, 2, 3, 5].map(|i| blob(i).0);
    let done = packs(dir.path()).compact(|h| live.contains(h)).unwrap();
    assert_eq!((done.kept, done.removed), (5, 1));
    assert_eq!(
        numbers(&layout),
        vec![1, 10],
        "pack 2 replaced by a new one"
    );
    assert!(!layout.pack(2).exists() && !layout.pack(9).exists());
    assert_eq!(done.bytes_freed, 8 + 200 - 100 + 8);
    let p = packs(dir.path());
    for i in [0, 1, 2, 3, 5] {
        let (h, b) = blob(i);
        assert_eq!(p.read(p.find(&h).unwrap()).unwrap(), b);
    }
    assert!(p.find(&blob(4).0).is_none());
    // Nothing dead: nothing moves.
    let again = packs(dir.path()).compact(|h| live.contains(h)).unwrap();
    assert_eq!((again.kept, again.removed, again.bytes_freed), (5, 0, 0));
    // Everything dead: every pack goes, and no empty one is made.
    let all = packs(dir.path()).compact(|_| false).unwrap();
    assert_eq!((all.kept, all.removed), (0, 5));
    assert_eq!(numbers(&layout), Vec::<u32>::new());
}

#[test]
fn a_full_pack_is_followed_by_a_new_one_and_later_entries_win() {
    let dir = tempfile::tempdir().unwrap();
    let layout = CacheLayout::new(dir.path());
    let a = ContentHash::of(b"alpha");
    let small = || {
        let mut p = packs(dir.path());
        p.target = 16;
        p
    };
    small().append(a, b"alpha").unwrap();
    small().append(ContentHash::of(b"beta"), b"beta").unwrap();
    // 8 + 5 + 4 = 17 bytes: pack 1 is full.
    let p = small();
    assert_eq!(p.find(&a).unwrap().pack, 1);
    p.forget(&a);
    p.append(a, b"alpha").unwrap();
    assert_eq!(
        p.find(&a).unwrap().pack,
        2,
        "a full pack is not appended to"
    );
    p.flush().unwrap();
    assert_eq!(
        packs(dir.path()).find(&a).unwrap().pack,
        2,
        "the later entry wins"
    );
    assert_eq!(numbers(&layout), vec![1, 2]);
}

#[test]
fn a_forgotten_blob_stays_forgotten_until_stored_again_and_gc_drops_the_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (ContentHash::of(b"alpha"), ContentHash::of(b"beta"));
    let p = packs(dir.path());
    p.append(a, b"alpha").unwrap();
    p.append(b, b"beta").unwrap();
    p.flush().unwrap();
    drop(p);
    // Found corrupt by one handle (a `verify` that stores nothing).
    packs(dir.path()).forget(&a);
    let later = packs(dir.path());
    assert_eq!(later.find(&a), None, "the tombstone outlives the handle");
    assert!(later.find(&b).is_some(), "other blobs are untouched");
    // Its step runs again and stores a fresh copy, which wins.
    later.append(a, b"alpha").unwrap();
    later.flush().unwrap();
    let slot = packs(dir.path()).find(&a).expect("stored again");
    assert_eq!(packs(dir.path()).read(slot).unwrap(), b"alpha");
    // `gc` keeps the live copies and drops the dead entry and the
    // tombstone with it.
    let done = packs(dir.path()).compact(|_| true).unwrap();
    assert_eq!(done.kept, 2);
    let after = packs(dir.path());
    assert_eq!(after.read(after.find(&a).unwrap()).unwrap(), b"alpha");
    assert_eq!(after.read(after.find(&b).unwrap()).unwrap(), b"beta");
    let entries: usize = numbers(&CacheLayout::new(dir.path()))
        .into_iter()
        .map(|n| after.read_index(n, None).entries.len())
        .sum();
    assert_eq!(entries, 2, "one entry per live blob, no tombstone");
}

#[test]
fn a_kept_index_reads_only_what_was_appended_since() {
    let dir = tempfile::tempdir().unwrap();
    let kept = Arc::default();
    let [x, a, b, c] =
        [b"ex" as &[u8], b"alpha", b"beta", b"gamma"].map(|b| (ContentHash::of(b), b));
    {
        let p = kept_packs(dir.path(), &kept);
        p.append(x.0, x.1).unwrap();
        p.append(a.0, a.1).unwrap();
    }
    assert!(lock(&kept).is_some(), "handed back when dropped");
    // Another process appends to the same pack, and a tombstone.
    {
        let other = packs(dir.path());
        other.append(b.0, b.1).unwrap();
        other.append(c.0, c.1).unwrap();
        other.flush().unwrap();
        other.forget(&c.0);
    }
    // Proof that the kept handle does not read the whole index again: the
    // first entry, damaged on disk, is still found through the kept map.
    let index = CacheLayout::new(dir.path()).pack_index(1);
    let mut bytes = fs::read(&index).unwrap();
    bytes[INDEX_MAGIC.len()] ^= 1;
    fs::write(&index, &bytes).unwrap();
    let p = kept_packs(dir.path(), &kept);
    assert_eq!(p.read(p.find(&x.0).expect("kept")).unwrap(), x.1);
    assert_eq!(p.read(p.find(&b.0).expect("appended since")).unwrap(), b.1);
    assert_eq!(p.find(&c.0), None, "its tombstone was read too");
    // Nor does its first append, which reads the index only from its mark
    // on: a whole read would end the valid prefix at the damaged entry and
    // cut the index back to it.
    let d = ContentHash::of(b"delta");
    p.append(d, b"delta").unwrap();
    drop(p);
    assert_eq!(
        fs::metadata(&index).unwrap().len(),
        (INDEX_MAGIC.len() + 6 * ENTRY) as u64,
        "ex, alpha, beta, gamma, its tombstone, delta"
    );
    // A fresh handle reads every index: the damaged entry ends pack 1.
    assert_eq!(packs(dir.path()).find(&a.0), None);
}

#[test]
fn a_kept_index_is_read_again_after_gc_or_clean() {
    let dir = tempfile::tempdir().unwrap();
    let kept = Arc::default();
    let [a, b] = [b"alpha" as &[u8], b"beta"].map(|b| (ContentHash::of(b), b));
    {
        let p = kept_packs(dir.path(), &kept);
        p.append(a.0, a.1).unwrap();
        p.append(b.0, b.1).unwrap();
    }
    // `gc` drops `a`: its pack goes, the copy of `b` is in a new one.
    packs(dir.path()).compact(|h| *h != a.0).unwrap();
    {
        let p = kept_packs(dir.path(), &kept);
        assert_eq!(p.find(&a.0), None);
        assert_eq!(p.read(p.find(&b.0).unwrap()).unwrap(), b.1);
        assert_eq!(p.find(&b.0).unwrap().pack, 2);
    }
    // `clean`, then a build storing other blobs under the same numbers.
    fs::remove_dir_all(dir.path()).unwrap();
    {
        let other = packs(dir.path());
        other.append(a.0, a.1).unwrap();
        other.flush().unwrap();
    }
    let p = kept_packs(dir.path(), &kept);
    assert_eq!(p.find(&b.0), None, "what the cache held before is gone");
    assert_eq!(p.read(p.find(&a.0).unwrap()).unwrap(), a.1);
}
