//! Patches: how a watched build writes a changed parcel in the size of the
//! change, not of the parcel (the format, and the game's side of it, are
//! [`assets_runtime::patch`]).
//!
//! Asked for by [`BuildOptions::patch_parcels`](crate::unstable::BuildOptions), which
//! only `cargo assets watch` sets. Files beside `<name>.parcel`:
//!
//! - `<name>.parcel.patch`: the resources whose content differs from the
//!   base's (by their `.sums` contents), and a removal mark for each name
//!   the base holds and the build does not. An atlas's pages are among them
//!   only when they changed: a frame in the patch may lie on a page of the
//!   base, so the patch is written with the patch flag and read only
//!   through its base;
//! - `<name>.parcel.patch.sums`: what each resource of the patch holds, in
//!   the `.sums` format (a removal mark's content is `-`), its header naming
//!   the patch's table checksum: with the base's `.sums`, what a game holds,
//!   which the next reload notice is measured against;
//! - `<name>.parcel.patch.key`: the parcel key of that whole, so a build
//!   that changes nothing leaves the patch alone.
//!
//! The base's own files (`.parcel`, `.toc`, `.sums`, `.key`) stay as the
//! last whole write left them: the store keeps reading the blobs the base
//! holds through its `.sums`, and those the patch holds through the
//! patch's (`store::in_parcels`), so neither is stored again: an edit's
//! redrawn atlas pages are compressed once, into the patch. (They were
//! also stored, which at 100k assets was a sixth of an edit's time.) A
//! patch is written in the
//! order key removed, patch, sums, key, each by rename: a kill leaves a
//! patch without its key, which the next build writes again.
//!
//! A patch is not written, and the parcel is written whole instead, when
//! there is no base to patch (none, its `.sums` does not describe it, or
//! it was written with another compression), or when the patch would hold
//! more than three quarters of the bytes of the parcel's resources: past that, writing the
//! whole costs little more, and the game reads one file again. (A quarter
//! was the limit before: one page of a two-page atlas, half the parcel,
//! was then written whole on every edit.) Every whole write removes the patch
//! ([`remove`]), so a build without patches (`cargo assets build`, a build
//! script, `watch` once idle) leaves the base alone, byte for byte what a
//! cold build writes.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use assets_runtime::Compression;
use assets_runtime::format::KIND_REMOVED;
use assets_runtime::write::{ParcelWriter, Payload};

use super::{FromStore, Held, Planned, declare, place, remove_if_present, sums_describe};
use crate::hash::ContentHash;
use crate::parcel_sums;
use crate::record::FileStamp;
use crate::stat_cache::stat;
use crate::report::{ParcelOutcome, Retired};
use crate::store::{Store, StoreError};

/// A patch may hold at most this many quarters of the bytes of the
/// parcel's resources: past
/// that, writing the parcel whole costs little more than the patch, and
/// spares the game reading through two files.
const MAX_QUARTERS: u64 = 3;

/// The content a patch's `.sums` gives a removal mark.
const REMOVED: &str = "-";

/// The files of the patch of the parcel at some path.
pub(super) struct PatchFiles {
    pub(super) patch: PathBuf,
    sums: PathBuf,
    key: PathBuf,
}

impl PatchFiles {
    pub(super) fn of(parcel: &Path) -> PatchFiles {
        PatchFiles {
            patch: assets_runtime::patch::path_of(parcel),
            sums: parcel.with_extension("parcel.patch.sums"),
            key: parcel.with_extension("parcel.patch.key"),
        }
    }

    /// The `.sums` text of the patch, if it describes the patch on disk.
    pub(super) fn sums(&self) -> Option<String> {
        let text = fs::read_to_string(&self.sums).ok()?;
        let (_, checksum) = parcel_sums::header(&text)?;
        parcel_sums::describes(checksum, &self.patch).then_some(text)
    }

    /// Removes the patch, key first; whether there was one.
    pub(super) fn remove(&self) -> Result<bool, StoreError> {
        remove_if_present(&self.key)?;
        let had = remove_if_present(&self.patch)?;
        remove_if_present(&self.sums)?;
        Ok(had)
    }
}

/// Removes the patch of the parcel at `parcel`, if it has one: after a
/// whole write, or when the build wants the base alone.
pub(super) fn remove(parcel: &Path) -> Result<bool, StoreError> {
    PatchFiles::of(parcel).remove()
}

/// What a game holds of a parcel whose base holds `base` (its `.sums`
/// contents) and whose patch's `.sums` text is `patch`: name to content.
pub(super) fn seen_through<'s>(
    base: &parcel_sums::Contents<'s>,
    patch: &'s str,
) -> parcel_sums::Contents<'s> {
    let mut seen = base.clone();
    for (name, content) in parcel_sums::contents(patch) {
        match content {
            REMOVED => seen.remove(&name),
            _ => seen.insert(name, content),
        };
    }
    seen
}

/// What a game holds of a resource of which a patch says `patch` (a
/// content, [`REMOVED`], or nothing) and the base holds `base`.
fn through<'s>(patch: Option<&'s str>, base: Option<&'s str>) -> Option<&'s str> {
    match patch {
        Some(REMOVED) => None,
        Some(content) => Some(content),
        None => base,
    }
}

/// What a watched pipeline keeps of the patch it last wrote for a
/// parcel, or of the parcel it last wrote whole ([`PatchMemo::whole`]),
/// with that parcel's choice of resources (`select.rs`): which resources
/// differ from the base, and where each one's line is in the base's
/// `.sums`. The next build compares only the resources it chose again
/// ([`super::select::Chosen::fresh`]) with the base, instead of every
/// resource (and reads no patch `.sums` back): the rest are the same
/// resources, so they differ from the base as they did, and the game holds
/// them as they are. It holds while the base's `.sums` is the file it was
/// made with (by its stamp), and the patch is the one written with it
/// (its files' stamps and its key), or there is none if none was; anything
/// else compares every resource.
///
/// The memo of a whole write is what spares the first edit after `watch`
/// writes its parcels whole once idle from reading the new base's `.sums`
/// back and comparing every resource with it: at 1M files, 141 MB read
/// and a million lines compared, 225 to 310 ms of an edit.
pub(crate) struct PatchMemo {
    compression: Compression,
    base_sums: FileStamp,
    /// The patch in force, as written; `None` after a whole write.
    patch: Option<WrittenPatch>,
    /// For each resource, by its place in the parcel's list: where its
    /// content starts in the base's `.sums`, if the base holds it.
    base_lines: Vec<Option<usize>>,
    /// The resources whose content differs from the base's (the patch's),
    /// by place, in order, with that content.
    taken: Vec<(usize, String)>,
    /// The names the base holds and the parcel does not, sorted.
    removed: Vec<String>,
}

/// A patch's files as written, and its key.
struct WrittenPatch {
    key: ContentHash,
    sums: FileStamp,
    file: FileStamp,
}

impl PatchMemo {
    /// The memo of a parcel that is its base, whole, with no patch (just
    /// written whole with `compression`, found so, or an edit undone):
    /// its `.sums` has the stamp `base_sums`, and each resource's content
    /// starts at `base_lines` in it, in the parcel's order (as
    /// [`parcel_sums::write_placing`] gives them).
    pub(super) fn whole(
        compression: Compression,
        base_sums: FileStamp,
        base_lines: Vec<Option<usize>>,
    ) -> Box<PatchMemo> {
        Box::new(PatchMemo {
            compression,
            base_sums,
            patch: None,
            base_lines,
            taken: Vec::new(),
            removed: Vec::new(),
        })
    }

    /// The memo of the parcel `planned` as found written whole, unchanged,
    /// with `compression`, its `.sums` at `sums` (which describes it):
    /// what a watched pipeline makes once, on its first build, so that its
    /// first edit compares as later ones do. `None` if the `.sums` cannot
    /// be read or does not hold `planned` as it is.
    pub(super) fn of_base(
        store: &Store,
        sums: &Path,
        planned: &[Planned],
        compression: Compression,
    ) -> Option<Box<PatchMemo>> {
        let (stamp, text) = store.read_text(sums).ok()?;
        let (written_with, _) = parcel_sums::header(&text)?;
        if written_with != compression.name() {
            return None;
        }
        let compared = compare_all(&text, planned, None);
        (compared.taken.is_empty() && compared.removed.is_empty())
            .then(|| PatchMemo::whole(compression, stamp, compared.base_lines))
    }

    /// Whether the patch files `files` (whose key file holds `key_on_disk`)
    /// are as this memo left them: the patch it wrote, or none.
    fn patch_is_as_left(&self, files: &PatchFiles, key_on_disk: Option<&str>) -> bool {
        match &self.patch {
            Some(written) => {
                key_on_disk == Some(&*written.key.to_hex())
                    && stat(&files.sums) == Some(written.sums)
                    && stat(&files.patch) == Some(written.file)
            }
            None => {
                key_on_disk.is_none()
                    && stat(&files.sums).is_none()
                    && stat(&files.patch).is_none()
            }
        }
    }
}

/// What [`write`] did.
pub(super) struct Patched {
    pub(super) outcome: ParcelOutcome,
    /// Whether a patch is in force after it.
    pub(super) in_force: bool,
    /// What to keep of the patch in force, for the next build.
    pub(super) memo: Option<Box<PatchMemo>>,
}

/// How [`write`] left the parcel.
pub(super) enum Written {
    /// As a patch says (written now, or found so), or as its base is again.
    AsPatch(Patched),
    /// Not written: the parcel is to be written whole, because no patch
    /// stands on what is there (no base, a base of another compression or
    /// torn, a key that differs in what contents do not say) or because the
    /// patch would take too large a share of the base (see the module's
    /// docs). With the memo [`Recall`] gave, when it was not used: the
    /// whole write keeps it if it finds the parcel unchanged.
    Whole(Option<Box<PatchMemo>>),
}

/// The last patch written for a parcel, and which of its resources were
/// chosen again since ([`super::select::Chosen::fresh`]).
pub(super) struct Recall<'r> {
    pub(super) memo: Option<Box<PatchMemo>>,
    pub(super) fresh: Option<&'r [Range<usize>]>,
}

/// How the resources compare with the base and with what the game holds.
struct Compared {
    /// Where each resource's content starts in the base's `.sums`.
    base_lines: Vec<Option<usize>>,
    /// Those that differ from the base, by place, with their contents.
    taken: Vec<(usize, String)>,
    /// The names the base holds and the parcel does not, sorted.
    removed: Vec<String>,
    /// The names whose content differs from what the game holds (in no
    /// order, perhaps twice).
    changed: Vec<String>,
}

/// Writes the parcel at `path`, whose contents are `planned` and whose key
/// is `key`, as a patch over the base there, unless it is to be written
/// whole. Adds to `held` the blobs the base still holds for it.
#[allow(clippy::too_many_arguments)]
pub(super) fn write(
    store: &Store,
    path: &Path,
    planned: &[Planned],
    compression: Compression,
    key: &ContentHash,
    retired: &mut Retired,
    held: &mut Held,
    recall: Recall<'_>,
) -> Result<Written, StoreError> {
    let files = PatchFiles::of(path);
    let resources = planned.len();
    let key_on_disk = fs::read_to_string(&files.key).ok();
    let key_on_disk = key_on_disk.as_deref().map(str::trim);
    if key_on_disk == Some(&*key.to_hex()) && sums_describe(&files.sums, &files.patch) {
        return Ok(Written::AsPatch(Patched {
            outcome: ParcelOutcome::Unchanged { resources },
            in_force: true,
            memo: recall.memo,
        }));
    }
    let base_key = fs::read_to_string(path.with_extension("parcel.key")).ok();
    let is_base = base_key
        .as_deref()
        .is_some_and(|k| k.lines().next().map(str::trim) == Some(&key.to_hex()));
    if is_base && !files.patch.exists() {
        // Unchanged, as the whole write's check finds at less cost.
        return Ok(Written::Whole(recall.memo));
    }
    let Ok((base_stamp, base_sums)) =
        store.read_text(&path.with_extension("parcel.sums"))
    else {
        return Ok(Written::Whole(recall.memo));
    };
    let Some((written_with, checksum)) = parcel_sums::header(&base_sums) else {
        return Ok(Written::Whole(recall.memo));
    };
    if written_with != compression.name() || !parcel_sums::describes(checksum, path) {
        return Ok(Written::Whole(recall.memo));
    }
    let recalled = recall.memo.zip(recall.fresh).filter(|(m, _)| {
        m.compression == compression
            && m.base_sums == base_stamp
            && m.base_lines.len() == planned.len()
            && m.patch_is_as_left(&files, key_on_disk)
    });
    let compared = match recalled {
        Some((memo, fresh)) => compare_fresh(&base_sums, planned, memo, fresh),
        None => compare_all(&base_sums, planned, files.sums().as_deref()),
    };
    let Compared {
        base_lines,
        taken,
        removed,
        mut changed,
    } = compared;
    changed.sort_unstable();
    changed.dedup();
    if taken.is_empty() && removed.is_empty() {
        // The base is the parcel again (an edit undone, say): no patch. Its
        // key must agree, or what differs is not in the contents (a kind).
        if !is_base {
            return Ok(Written::Whole(None));
        }
        held.add(planned);
        let had = files.remove()?;
        return Ok(Written::AsPatch(Patched {
            outcome: if had {
                ParcelOutcome::Written { resources, changed }
            } else {
                ParcelOutcome::Unchanged { resources }
            },
            in_force: false,
            // The next edit compares from the base as it is.
            memo: Some(PatchMemo::whole(compression, base_stamp, base_lines)),
        }));
    }
    // Measured against the parcel's resources, not its file: in a small
    // parcel the header and table are most of the file.
    let bytes: u64 = taken.iter().map(|&(i, _)| planned[i].len()).sum();
    let all: u64 = planned.iter().map(Planned::len).sum();
    if bytes.saturating_mul(4) > all.saturating_mul(MAX_QUARTERS) {
        return Ok(Written::Whole(None));
    }
    write_files(store, &files, planned, &taken, &removed, compression)
        .map(|replaced| retired.0.extend(replaced))
        .and_then(|()| store.write_atomic(&files.key, format!("{key}\n").as_bytes()))?;
    // What the patch does not take, the base holds.
    held.add(planned);
    let written = stat(&files.sums).zip(stat(&files.patch));
    let memo = written.map(|(sums, file)| {
        Box::new(PatchMemo {
            compression,
            base_sums: base_stamp,
            patch: Some(WrittenPatch {
                key: *key,
                sums,
                file,
            }),
            base_lines,
            taken,
            removed,
        })
    });
    Ok(Written::AsPatch(Patched {
        outcome: ParcelOutcome::Written { resources, changed },
        in_force: true,
        memo,
    }))
}

/// Every resource compared with the base (its `.sums` text `base_sums`)
/// and with what the game holds: the base through the patch whose `.sums`
/// text is `patch_sums`, if there is one.
fn compare_all(base_sums: &str, planned: &[Planned], patch_sums: Option<&str>) -> Compared {
    // In the order the base's resources were written, which is the order
    // they are planned in again (see `InOrder`).
    let mut base = parcel_sums::InOrder::new(base_sums);
    // What the game holds now: the base through the patch, if any.
    let before = patch_sums.map(parcel_sums::contents);
    // What the patch says of `name`: a content, `REMOVED`, or nothing.
    let in_patch = |name: &str| before.as_ref().and_then(|b| b.get(name)).copied();
    // Whether the base holds each name the patch does, as found below.
    let mut patched_in_base: HashMap<&str, bool> = HashMap::new();
    // One pass, each content written into one buffer (10,000 resources at
    // 10k assets, each line a hash or two in hex): which resources differ
    // from the base (the patch, with their contents for its `.sums`), and
    // which from what the game holds (the notice).
    let mut base_lines = Vec::with_capacity(planned.len());
    let mut taken = Vec::new();
    let mut changed = Vec::new();
    let (mut in_base, mut in_seen) = (0, 0);
    let mut content = String::with_capacity(192);
    for (i, p) in planned.iter().enumerate() {
        content.clear();
        p.write_content(&mut content);
        let was = base.get(&p.name);
        base_lines.push(was.map(|was| parcel_sums::offset_of(base_sums, was)));
        in_base += usize::from(was.is_some());
        if was != Some(content.as_str()) {
            taken.push((i, content.clone()));
        }
        let patched = in_patch(&p.name);
        if patched.is_some() {
            patched_in_base.insert(&p.name, was.is_some());
        }
        let seen = through(patched, was);
        in_seen += usize::from(seen.is_some());
        if seen != Some(content.as_str()) {
            changed.push(p.name.clone());
        }
    }
    // Counted now: when every resource was found in order, that is all.
    let base_lines_held = base.len();
    // Names gone since the base, or since what the game holds: counted on
    // the way, and only then looked for in a set of the planned names.
    let seen_len = match &before {
        None => base_lines_held,
        Some(b) => b.iter().fold(base_lines_held, |n, (name, &content)| {
            let held = match patched_in_base.get(name.as_ref()) {
                Some(&held) => held,
                None => base.contains(name),
            };
            match (held, content == REMOVED) {
                (true, true) => n - 1,
                (false, false) => n + 1,
                _ => n,
            }
        }),
    };
    let mut removed = Vec::new();
    if in_base != base_lines_held || in_seen != seen_len {
        let planned_names: HashSet<&str> = planned.iter().map(|p| p.name.as_str()).collect();
        let gone = |name: &&str| !planned_names.contains(name);
        removed.extend(base.names().filter(gone).map(str::to_owned));
        let added = before.iter().flat_map(|b| b.iter());
        let added = added
            .filter(|&(_, c)| *c != REMOVED)
            .map(|(n, _)| n.as_ref());
        // Owned: looking each up moves the base's cursor (a rare path).
        let was_seen: Vec<String> = (base.names().chain(added))
            .filter(gone)
            .map(str::to_owned)
            .collect();
        for name in was_seen {
            if through(in_patch(&name), base.get(&name)).is_some() {
                changed.push(name);
            }
        }
    }
    removed.sort_unstable();
    Compared {
        base_lines,
        taken,
        removed,
        changed,
    }
}

/// [`compare_all`] after a patch this pipeline wrote (`memo`), where only
/// the resources in `fresh` were chosen again: each is compared with the
/// base's line the memo points at, and with what the game holds (the
/// memo's content for it if the patch holds it, else the base's); every
/// other resource stays as the memo says. Names are the memo's, so the
/// base's names missing from the parcel are too.
fn compare_fresh(
    base_sums: &str,
    planned: &[Planned],
    memo: Box<PatchMemo>,
    fresh: &[Range<usize>],
) -> Compared {
    let PatchMemo {
        base_lines,
        taken: before,
        removed,
        ..
    } = *memo;
    debug_assert!(
        fresh.windows(2).all(|w| w[0].end <= w[1].start)
            && fresh.last().is_none_or(|r| r.end <= planned.len()),
        "fresh ranges in order, within the list"
    );
    let mut taken = Vec::with_capacity(before.len());
    let mut before = before.into_iter().peekable();
    let mut changed = Vec::new();
    let mut content = String::with_capacity(192);
    for range in fresh {
        while let Some(kept) = before.next_if(|(i, _)| *i < range.start) {
            taken.push(kept);
        }
        for i in range.clone() {
            let patched = before.next_if(|(j, _)| *j == i).map(|(_, c)| c);
            let p = &planned[i];
            content.clear();
            p.write_content(&mut content);
            let was = base_lines[i].and_then(|at| parcel_sums::content_at(base_sums, at));
            if patched.as_deref().or(was) != Some(content.as_str()) {
                changed.push(p.name.clone());
            }
            if was != Some(content.as_str()) {
                taken.push((i, content.clone()));
            }
        }
    }
    taken.extend(before);
    Compared {
        base_lines,
        taken,
        removed,
        changed,
    }
}

/// Writes the patch file holding `planned[taken]` (whose contents are
/// `contents`) and the marks of `removed`, then its `.sums`; returns the
/// files they replace, retired. Both are swapped in, not renamed over
/// the old ones: a rename that replaces a file makes ext4 write the new
/// one out at once (see [`Store::replace_keeping_old`]), ~2 ms for the
/// `.sums` of a patch of 5,000 frames.
fn write_files(
    store: &Store,
    files: &PatchFiles,
    planned: &[Planned],
    taken: &[(usize, String)],
    removed: &[String],
    compression: Compression,
) -> Result<Vec<PathBuf>, StoreError> {
    remove_if_present(&files.key)?;
    // Readable to the store after it is replaced, as a parcel is.
    store.keep_open(&files.patch);
    let mut writer = ParcelWriter::compressed(compression).patch();
    declare(&mut writer, taken.iter().map(|&(i, _)| &planned[i]));
    for name in removed {
        writer.add_later(name, KIND_REMOVED, 0);
    }
    let fetch = |from_store: &mut FromStore<'_>, i: usize| match taken.get(i) {
        Some(&(p, _)) => from_store.fetch(&planned[p]),
        None => Ok(Payload::Bytes(Vec::new())),
    };
    let (written, replaced) = place(store, &files.patch, writer, fetch)?;
    let held = (taken.iter()).map(|(i, content)| (content.as_str(), planned[*i].name.as_str()));
    let marks = removed.iter().map(|name| (REMOVED, name.as_str()));
    let sums = parcel_sums::write(
        compression.name(),
        written.table_checksum,
        held.chain(marks),
    );
    let ((), old_sums) =
        store.replace_keeping_old(&files.sums, |out| out.write_all(sums.as_bytes()))?;
    Ok(replaced.into_iter().chain(old_sums).collect())
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;

    /// Resource `i` at `version` (0: as the base holds it): odd names,
    /// as a package's files have them.
    fn resource(i: usize, version: u64) -> Planned {
        Planned {
            name: format!("levels/r{i:03} é\\{}.txt", i % 3),
            kind: "text".to_owned(),
            source: Source::Blob {
                hash: ContentHash::of(format!("{i}:{version}").as_bytes()),
                len: 10 + i as u64,
            },
            shows: None,
            compression: None,
            alias_of: None,
        }
    }

    /// The `.sums` text of `held` (content, name) and removal marks.
    fn sums(held: &[(String, String)], removed: &[String]) -> String {
        let held = held.iter().map(|(c, n)| (c.as_str(), n.as_str()));
        let marks = removed.iter().map(|n| (REMOVED, n.as_str()));
        parcel_sums::write("lz4", 0, held.chain(marks))
    }

    /// A stamp for memos that are not checked against files.
    const STAMP: FileStamp = FileStamp {
        size: 0,
        mtime_ns: 0,
        ctime_ns: 0,
        ino: 0,
        dev: 0,
    };

    fn memo(compared: Compared) -> Box<PatchMemo> {
        let stamp = STAMP;
        Box::new(PatchMemo {
            compression: Compression::Lz4,
            base_sums: stamp,
            patch: Some(WrittenPatch {
                key: ContentHash::of(b"key"),
                sums: stamp,
                file: stamp,
            }),
            base_lines: compared.base_lines,
            taken: compared.taken,
            removed: compared.removed,
        })
    }

    /// Edits after edits, each compared both ways: every resource against
    /// the base and the patch's `.sums` (`compare_all`), and only the runs
    /// chosen again against the memo of the last comparison
    /// (`compare_fresh`); both must find the same. Edits move resources
    /// away from the base, to other contents, and back to the base's; the
    /// base holds a name the parcel no longer does.
    #[test]
    fn comparing_only_what_was_chosen_again_finds_what_comparing_everything_does() {
        edits_compared_both_ways(false);
    }

    /// The same, the first edit made on a parcel just written whole, from
    /// the memo that write leaves ([`PatchMemo::whole`]).
    #[test]
    fn after_a_whole_write_its_memo_finds_what_comparing_everything_does() {
        edits_compared_both_ways(true);
    }

    fn edits_compared_both_ways(from_whole_write: bool) {
        const N: usize = 300;
        const RUN: usize = 16;
        let mut versions = vec![0u64; N];
        let planned_at = |versions: &[u64]| -> Vec<Planned> {
            versions.iter().enumerate().map(|(i, &v)| resource(i, v)).collect()
        };
        let (base, mut patch, mut last) = if from_whole_write {
            let planned = planned_at(&versions);
            let contents: Vec<String> = planned.iter().map(Planned::content).collect();
            let held = contents.iter().map(String::as_str);
            let mut lines = Vec::new();
            let base = parcel_sums::write_placing(
                "lz4",
                0,
                held.zip(planned.iter().map(|p| p.name.as_str())),
                |at| lines.push(Some(at)),
            );
            let whole = PatchMemo::whole(Compression::Lz4, STAMP, lines);
            let all = compare_all(&base, &planned, None);
            assert_eq!(whole.base_lines, all.base_lines, "the writer's places");
            assert!(all.taken.is_empty() && all.removed.is_empty() && all.changed.is_empty());
            (base, String::new(), whole)
        } else {
            let base_held: Vec<(String, String)> = (0..N)
                .map(|i| resource(i, 0))
                .map(|p| (p.content(), p.name))
                .chain([("0".repeat(64), "gone.txt".to_owned())])
                .collect();
            let base = sums(&base_held, &[]);
            let first = compare_all(&base, &planned_at(&versions), None);
            assert_eq!(first.removed, ["gone.txt"]);
            let patch = sums(&[], &first.removed);
            (base, patch, memo(first))
        };
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for edit in 1..=60u64 {
            let before = versions.clone();
            let mut fresh_runs = std::collections::BTreeSet::new();
            for _ in 0..1 + next(4) {
                let i = next(N as u64) as usize;
                versions[i] = match next(3) {
                    0 => 0,
                    1 => edit,
                    _ => versions[i],
                };
                fresh_runs.insert(i / RUN);
            }
            // A run chosen again without a change in it, now and then.
            if next(2) == 0 {
                fresh_runs.insert(next((N / RUN) as u64) as usize);
            }
            let fresh: Vec<Range<usize>> = fresh_runs
                .iter()
                .map(|&r| r * RUN..((r + 1) * RUN).min(N))
                .collect();
            let planned = planned_at(&versions);
            let in_force = (!patch.is_empty()).then_some(patch.as_str());
            let all = compare_all(&base, &planned, in_force);
            let only = compare_fresh(&base, &planned, last, &fresh);
            assert_eq!(only.taken, all.taken, "edit {edit}: what differs from the base");
            assert_eq!(only.removed, all.removed, "edit {edit}");
            assert_eq!(only.base_lines, all.base_lines, "edit {edit}");
            let sorted = |mut v: Vec<String>| {
                v.sort();
                v.dedup();
                v
            };
            let moved: Vec<String> = (0..N)
                .filter(|&i| versions[i] != before[i])
                .map(|i| planned[i].name.clone())
                .collect();
            assert_eq!(sorted(only.changed.clone()), sorted(all.changed), "edit {edit}");
            assert_eq!(sorted(only.changed.clone()), sorted(moved), "edit {edit}: the notice");
            let held: Vec<(String, String)> = (only.taken.iter())
                .map(|(i, c)| (c.clone(), planned[*i].name.clone()))
                .collect();
            patch = sums(&held, &only.removed);
            last = memo(only);
        }
    }
}
