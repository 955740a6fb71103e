//! Tests of the parent module.

use super::*;
use crate::record::OutputRecord;

fn record(asset: &str, size: u64) -> Record {
    Record {
        format: RECORD_FORMAT,
        asset: AssetPath::new(asset).unwrap(),
        variant: "dev".into(),
        processor: "copy".into(),
        processor_version: 1,
        processor_code: None,
        settings: "{}".into(),
        key: ContentHash::of(asset.as_bytes()),
        started_ns: 1,
        inputs: vec![],
        dependencies: vec![],
        references: vec![],
        diagnostics: vec![],
        outputs: vec![OutputRecord {
            label: String::new(),
            kind: "bytes".into(),
            size,
            hash: ContentHash::of(b"x"),
        }],
        reason: None,
        fetched_from: None,
        outputs_hash: Default::default(),
    }
}

#[test]
fn later_frames_win_and_torn_or_corrupt_frames_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.append(&store, &record("a", 1)).unwrap();
    log.append(&store, &record("b", 1)).unwrap();
    log.append(&store, &record("a", 2)).unwrap();
    drop(log);
    let path = log_path(dir.path(), "pkg", "dev");
    // Flip a byte inside b's record, then tear a half-written frame onto the end.
    let mut bytes = fs::read(&path).unwrap();
    let a_frame = frame_of(&record("a", 1)).len();
    bytes[HEADER.len() + a_frame + FRAME_HEAD + 3] ^= 1;
    let whole = bytes.len();
    bytes.extend_from_slice(&frame_of(&record("c", 1))[..50]);
    fs::write(&path, &bytes).unwrap();

    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(
        log.get(&AssetPath::new("a").unwrap()).unwrap().outputs[0].size,
        2
    );
    assert!(
        log.get(&AssetPath::new("b").unwrap()).is_none(),
        "corrupt frame is not trusted"
    );
    assert!(
        log.get(&AssetPath::new("c").unwrap()).is_none(),
        "torn frame is not trusted"
    );
    assert_eq!(
        fs::metadata(&path).unwrap().len() as usize,
        whole,
        "torn tail is cut"
    );
    log.append(&store, &record("c", 3)).unwrap();
    drop(log);
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(
        log.get(&AssetPath::new("c").unwrap()).unwrap().outputs[0].size,
        3
    );
}

#[test]
fn frames_are_written_in_batches_after_the_blobs_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let path = log_path(dir.path(), "pkg", "dev");
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    // A small blob waits in the packs' batch, its record in the log's.
    let blob = b"sprite pixels".to_vec();
    let hash = ContentHash::of(&blob);
    store.put_checked(hash, &blob).unwrap();
    log.append(&store, &record("a", 1)).unwrap();
    assert_eq!(fs::read(&path).unwrap(), HEADER, "the frame waits");
    assert!(
        !Store::open(dir.path())
            .unwrap()
            .has(&hash, blob.len() as u64)
    );
    log.flush(&store).unwrap();
    let other = Store::open(dir.path()).unwrap();
    assert!(
        other.has(&hash, blob.len() as u64),
        "the packs are written before the frame"
    );
    let reopened = RecordLog::open(&other, "pkg", "dev", None, None).unwrap();
    assert!(reopened.get(&AssetPath::new("a").unwrap()).is_some());

    // A batch past FLUSH_AT is written without a flush.
    let mut big = record("b", 2);
    big.settings = "x".repeat(FLUSH_AT);
    log.append(&store, &big).unwrap();
    let reopened = RecordLog::open(&other, "pkg", "dev", None, None).unwrap();
    assert!(reopened.get(&AssetPath::new("b").unwrap()).is_some());
}

#[test]
fn reopening_reads_only_what_was_appended_unless_the_log_was_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let size = |log: &RecordLog, a: &str| {
        log.get(&AssetPath::new(a).unwrap())
            .map(|r| r.outputs[0].size)
    };
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.append(&store, &record("a", 1)).unwrap();
    log.append(&store, &record("b", 1)).unwrap();
    // What this process appended, then what another appended.
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    let (parsed, frames) = (log.bytes.len(), log.frames);
    log.append(&store, &record("a", 2)).unwrap();
    let other = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    other.append(&store, &record("c", 3)).unwrap();
    drop(other);
    let mut log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    assert_eq!(
        [size(&log, "a"), size(&log, "b"), size(&log, "c")],
        [Some(2), Some(1), Some(3)]
    );
    assert_eq!(log.frames, frames + 2, "two frames parsed, not five");
    assert!(log.bytes.len() > parsed);

    // Compacted (rewritten by rename) with `a` gone, then a record for
    // `a` appended by hand past a torn frame: the kept bytes no longer
    // lead the file, so it is read whole and repaired.
    log.compact_if_worthwhile(&store, [AssetPath::new("b").unwrap()].iter())
        .unwrap();
    let path = log_path(dir.path(), "pkg", "dev");
    let mut rewritten = HEADER.to_vec();
    rewritten.extend(frame_of(&record("b", 5)));
    rewritten.extend(&frame_of(&record("d", 1))[..20]);
    fs::write(&path, &rewritten).unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    assert_eq!(
        [
            size(&log, "a"),
            size(&log, "b"),
            size(&log, "c"),
            size(&log, "d")
        ],
        [None, Some(5), None, None]
    );
    assert_eq!(fs::read(&path).unwrap().len(), rewritten.len() - 20);
}

#[test]
fn a_log_rewritten_in_place_is_read_whole() {
    // The same inode, other frames (as when a freed inode number comes
    // back for a new log): the kept bytes are not trusted.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.append(&store, &record("a", 1)).unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    let path = log_path(dir.path(), "pkg", "dev");
    let mut other = HEADER.to_vec();
    other.extend(frame_of(&record("b", 7)));
    other.extend(frame_of(&record("c", 8)));
    assert!(other.len() >= log.bytes.len());
    fs::File::options()
        .write(true)
        .truncate(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&other))
        .unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    assert!(log.get(&AssetPath::new("a").unwrap()).is_none());
    assert_eq!(
        log.get(&AssetPath::new("c").unwrap()).unwrap().outputs[0].size,
        8
    );
    assert!(log.changed_since_previous().is_none(), "read whole");
}

/// A store in a temp dir, and a log of it with one record appended for
/// each of 100 assets.
fn hundred_records() -> (tempfile::TempDir, Store, Vec<Record>, RecordLog) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let records: Vec<Record> = (0..100).map(|i| record(&format!("s{i}"), 1)).collect();
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    records.iter().for_each(|r| log.append(&store, r).unwrap());
    (dir, store, records, log)
}

#[test]
fn compaction_is_checked_again_once_the_log_grew_past_the_slack() {
    let (dir, store, records, mut log) = hundred_records();
    let path = log_path(dir.path(), "pkg", "dev");
    log.compact_if_worthwhile(&store, records.iter().map(|r| &r.asset))
        .unwrap();
    let full = fs::read(&path).unwrap().len();
    // Builds by one watched pipeline: each reopens the log with the
    // last, appends a frame, and has one asset live. The check that
    // found the log fine holds for the next 63 frames.
    let mut log = log;
    for i in 0..RECHECK_FRAMES {
        log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
        log.append(&store, &record("s0", 2 + i as u64)).unwrap();
        log.compact_if_worthwhile(&store, std::iter::once(&records[0].asset))
            .unwrap();
        let len = fs::read(&path).unwrap().len();
        if i + 1 < RECHECK_FRAMES {
            assert!(len > full, "compacted after {} frames", i + 1);
        } else {
            assert!(len < full / 10, "still {len} bytes after {} frames", i + 1);
        }
    }
}

#[test]
fn a_log_read_whole_is_checked_against_its_own_records() {
    let (dir, store, records, log) = hundred_records();
    let path = log_path(dir.path(), "pkg", "dev");
    log.flush(&store).unwrap();
    drop(log);
    let tight = fs::read(&path).unwrap();
    // Another process: a log as tight as its own records is not checked
    // against the plan's assets (that reads every name) until it grew past
    // the slack, even with most of its assets gone from the tree.
    let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.compact_if_worthwhile(&store, std::iter::once(&records[0].asset))
        .unwrap();
    assert_eq!(fs::read(&path).unwrap(), tight, "rewritten without need");
    // Each record superseded twice over: read whole, the log is found
    // worth compacting, and is compacted though this process appended
    // nothing.
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    for round in 2..4 {
        records
            .iter()
            .for_each(|r| log.append(&store, &record(r.asset.as_str(), round)).unwrap());
    }
    log.flush(&store).unwrap();
    drop(log);
    let bloated = fs::read(&path).unwrap().len();
    let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.compact_if_worthwhile(&store, records.iter().map(|r| &r.asset))
        .unwrap();
    let compacted = fs::read(&path).unwrap().len();
    assert!(compacted * 2 < bloated, "{compacted} bytes of {bloated}");
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(log.get(&records[7].asset).unwrap().outputs[0].size, 3);
}

#[test]
fn a_file_of_another_format_is_replaced_and_the_old_log_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let path = log_path(dir.path(), "pkg", "dev");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let old = path.with_extension("jsonl");
    fs::write(&old, "0123 {\"format\":1}\n").unwrap();
    // A header torn by a kill, or bytes of some other file.
    for foreign in [&HEADER[..5], b"{\"format\":1}\n".as_slice()] {
        fs::write(&path, foreign).unwrap();
        let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
        assert!(log.get(&AssetPath::new("a").unwrap()).is_none());
        log.append(&store, &record("a", 4)).unwrap();
        drop(log);
        assert!(fs::read(&path).unwrap().starts_with(HEADER));
        let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
        assert_eq!(
            log.get(&AssetPath::new("a").unwrap()).unwrap().outputs[0].size,
            4
        );
    }
    assert!(
        !old.exists(),
        "the JSON log of the format before is removed"
    );
}

#[test]
fn a_large_log_decoded_on_every_core_keeps_the_latest_of_each() {
    // Over 1 MiB, so the frames are split into runs across threads.
    let mut bytes = HEADER.to_vec();
    for round in 0..4u64 {
        for i in 0..3000 {
            let mut r = record(&format!("sprites/s{i}.png"), round);
            r.settings = "x".repeat(100);
            bytes.extend(frame_of(&r));
        }
    }
    assert!(bytes.len() > 1 << 20);
    let parsed = parse(&bytes);
    assert_eq!((parsed.frames, parsed.valid_len), (12_000, bytes.len()));
    assert_eq!(parsed.records.len(), 3000);
    assert!(parsed.records.values().all(|(r, _)| r.outputs[0].size == 3));
}

#[test]
fn compaction_keeps_only_live_records() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    for i in 0..100 {
        log.append(&store, &record("a", i)).unwrap();
    }
    let live = record("a", 99);
    log.compact_if_worthwhile(&store, std::iter::once(&live.asset))
        .unwrap();
    let bytes = fs::read(log_path(dir.path(), "pkg", "dev")).unwrap();
    assert_eq!(bytes.len(), HEADER.len() + frame_of(&live).len());
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(
        log.get(&AssetPath::new("a").unwrap()).unwrap().outputs[0].size,
        99
    );
}

#[test]
fn a_few_superseded_huge_frames_are_compacted_away() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut big = record("atlas", 1);
    big.settings = "x".repeat(1_000_000);
    let small: Vec<Record> = (0..200).map(|i| record(&format!("s{i}"), 1)).collect();
    for build in 0..8 {
        let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
        if build == 0 {
            small.iter().for_each(|r| log.append(&store, r).unwrap());
        }
        big.started_ns = build;
        log.append(&store, &big).unwrap();
        log.compact_if_worthwhile(&store, small.iter().chain([&big]).map(|r| &r.asset))
            .unwrap();
    }
    let bytes = fs::read(log_path(dir.path(), "pkg", "dev")).unwrap();
    // Without compaction by bytes: 8 MB in 208 frames.
    assert!(
        bytes.len() < 3_700_000,
        "few frames, but {} bytes: superseded big frames were kept",
        bytes.len()
    );
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(log.get(&big.asset).unwrap().started_ns, 7);
    // The small records were copied from the bytes read at open, builds
    // after the one that appended them.
    for r in &small {
        assert_eq!(**log.get(&r.asset).unwrap(), *r, "{}", r.asset);
    }
}

/// A compaction by a log that appended nothing (the build `watch` makes
/// once idle) leaves the log holding what it wrote: the next open given
/// it reads nothing back, and later appends are read as a tail, as before.
#[test]
fn a_log_compacted_without_appending_is_not_read_again() {
    let (dir, store, records, log) = hundred_records();
    for round in 2..4 {
        records
            .iter()
            .for_each(|r| log.append(&store, &record(r.asset.as_str(), round)).unwrap());
    }
    drop(log);
    let path = log_path(dir.path(), "pkg", "dev");
    let bloated = fs::read(&path).unwrap().len();
    let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    let kept: Vec<Arc<Record>> = records.iter().map(|r| Arc::clone(log.get(&r.asset).unwrap())).collect();
    // `s0` left the tree.
    log.compact_if_worthwhile(&store, records[1..].iter().map(|r| &r.asset))
        .unwrap();
    let compacted = fs::read(&path).unwrap();
    assert!(compacted.len() * 2 < bloated, "compacted");
    assert_eq!(log.bytes, compacted, "holds what it wrote");
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    assert_eq!(log.changed_since_previous().map(HashSet::len), Some(0), "nothing read back");
    assert!(log.get(&records[0].asset).is_none(), "gone with its asset");
    for (r, kept) in records.iter().zip(&kept).skip(1) {
        assert!(Arc::ptr_eq(log.get(&r.asset).unwrap(), kept), "the same record");
    }
    // What a process reading the file whole finds, and each frame where
    // the log says it is.
    let whole = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert_eq!(whole.records.len(), log.records.len());
    for (asset, (record, range)) in &log.records {
        assert_eq!(whole.get(asset), Some(record));
        assert_eq!(&log.bytes[range.clone()], &frame_of(record)[..]);
    }
    drop(whole);
    log.append(&store, &record("s5", 9)).unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, Some(log)).unwrap();
    let changed = log.changed_since_previous().unwrap();
    assert!(changed.len() == 1 && changed.contains(&records[5].asset));
    assert_eq!(log.get(&records[5].asset).unwrap().outputs[0].size, 9);
}

/// A compaction keeps the records of the temporary builds that live
/// assets' records name, though the caller names only the assets.
#[test]
fn compaction_keeps_the_temporary_builds_that_live_records_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let temporary = AssetPath::temporary("noise", "3f2a9c01");
    let unused = AssetPath::temporary("noise", "0bad");
    let mut user = record("levels/one.lvl", 1);
    user.dependencies.push(crate::record::DependencyUse {
        asset: temporary.clone(),
        outputs_hash: ContentHash::of(b"noise"),
    });
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.append(&store, &user).unwrap();
    for asset in [&temporary, &unused] {
        let mut made = record("x", 1);
        made.asset = asset.clone();
        log.append(&store, &made).unwrap();
    }
    for i in 0..200 {
        log.append(&store, &record("gone.txt", i)).unwrap();
    }
    drop(log);
    let mut log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    log.compact_if_worthwhile(&store, std::iter::once(&user.asset))
        .unwrap();
    let log = RecordLog::open(&store, "pkg", "dev", None, None).unwrap();
    assert!(log.get(&user.asset).is_some() && log.get(&temporary).is_some());
    assert!(log.get(&unused).is_none() && log.get(&AssetPath::new("gone.txt").unwrap()).is_none());
}
