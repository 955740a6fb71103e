//! Tests of the parent module.

use super::*;

fn packs(dir: &std::path::Path) -> Packs {
    Packs::new(CacheLayout::new(dir))
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
    let small = || Packs {
        target: 350,
        ..packs(dir.path())
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
    let small = || Packs {
        target: 16,
        ..packs(dir.path())
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
        .map(|n| after.read_index(n).entries.len())
        .sum();
    assert_eq!(entries, 2, "one entry per live blob, no tombstone");
}
