//! The parcel stage: after every step, each parcel of the manifest is
//! assembled from the outputs of the assets its globs select.
//!
//! A resource is named by its asset path, or `<asset>#<label>` for a labelled
//! output, and has its output's kind. The format is [`assets_runtime::format`].
//!
//! Files, in the parcel directory (by default `<cache>/parcels/<package>/<variant>/`,
//! see [`default_parcel_dir`]; a build script uses `OUT_DIR`): `<name>.parcel`;
//! its table of contents `<name>.parcel.toc` (see [`assets_runtime::toc`]); and
//! `<name>.parcel.key`, the hash of the parcel's resource list (names, kinds,
//! blob hashes). A parcel whose key is unchanged is not read or rewritten, so
//! a no-op build costs no parcel I/O beyond two small reads. A changed parcel
//! is written to a temp file and renamed (a game holding the old file is
//! never torn), then its table of contents, then its key; a kill in between
//! only means it is rewritten next time.
//!
//! Resources are compressed as the parcel's `compression` key (or its
//! variant's default, see [`ParcelSpec::compression_for`]) asks, by the
//! writer, resource by resource where it pays (see
//! [`assets_runtime::write`]); the choice is part of the parcel's key, so
//! changing it rewrites the parcel.
//!
//! A parcel that holds a failed or skipped asset is, as the build's
//! [`OnFailure`] says, either not written (the last good one stays, and the
//! report says why: release builds) or written anyway, the asset's last good
//! outputs standing in for it, or without it if it never built (development
//! builds and `watch`, so a game keeps running); the report lists each.
//!
//! Sprites are the exception to "an asset's outputs are its resources": a
//! sprite's own output is an intermediate (decoded pixels for its atlas), and
//! its resource is its frame, cut from its atlas's frame table; the atlas's
//! pages join every parcel holding one of its sprites (see [`crate::unstable::atlas`]).

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use assets_runtime::Compression;
use assets_runtime::format::KIND_IMAGE;
use assets_runtime::toc;
use assets_runtime::write::{ParcelWriter, Payload, WriteError, Written};
use assets_runtime::{ParcelBuf, Resource};

use crate::asset_path::AssetPath;
use crate::hash::ContentHash;
use crate::manifest::Manifest;
use crate::parcel_sums;
use crate::plan::{Group, Plan};
use crate::report::{OnFailure, ParcelOutcome, ParcelReport, Retired, StepReport};
use crate::store::{Store, StoreError};

mod aliases;
mod damage;
mod patch;
mod select;

use damage::{DamageCheck, KeyFile, Stamp, damage};
pub(crate) use select::KeptChoices;

/// Where the parcels of `package`'s `variant` go by default, under the
/// cache directory: `<cache>/parcels/<package>/<variant>/`.
pub fn default_parcel_dir(cache_dir: &Path, package: &str, variant: &str) -> PathBuf {
    crate::cache_layout::CacheLayout::new(cache_dir).parcel_dir(package, variant)
}

/// Writes every parcel of `manifest` for `variant` into `dir` from `steps`
/// (in plan order): whole, or as patches over the parcels there when
/// `patches` (see [`patch`]). Adds to `held` the blobs it looks for that
/// the parcels now in `dir` hold whole, each described by its `.sums`
/// (what [`Store::flush_deferred`] need not store). A watched pipeline passes
/// `choices`, each parcel's last choice of resources, to be chosen again
/// only where reports changed (see [`select`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_parcels(
    manifest: &Manifest,
    variant: &str,
    store: &Store,
    dir: &Path,
    plan: &Plan,
    steps: &[Arc<StepReport>],
    patches: bool,
    retired: &mut Retired,
    held: &mut Held,
    mut choices: Option<&mut KeptChoices>,
    on_failure: OnFailure,
    check_all: bool,
) -> Vec<ParcelReport> {
    let selected = plan.selected(manifest);
    // The atlases' frame tables, read once for every parcel.
    let mut frames = FromStore::new(store);
    (manifest.parcels.iter().zip(selected))
        .map(|(spec, selected)| {
            let path = dir.join(format!("{}.parcel", spec.name));
            let last = choices.as_deref_mut().and_then(|c| c.take(&spec.name));
            let selected = &*select::with_references(selected, plan, steps);
            let mut stand_ins = Vec::new();
            let mut check = DamageCheck {
                every_time: check_all,
                found: None,
            };
            let chosen = select::choose(selected, plan, steps, last, on_failure);
            let (outcome, patched) = match chosen {
                Ok(mut chosen) => 'chosen: {
                    stand_ins = std::mem::take(&mut chosen.stand_ins);
                    if let Err(error) = frames.resolve(chosen.planned_mut()) {
                        break 'chosen (ParcelOutcome::Failed { error }, false);
                    }
                    let last_patch = chosen.patch.take();
                    let aliased = aliases::with_aliases(chosen.planned(), &manifest.aliases, store);
                    let aliased = match aliased {
                        Ok(aliased) => aliased,
                        Err(error) => break 'chosen (ParcelOutcome::Failed { error }, false),
                    };
                    let selection = aliased.as_deref().unwrap_or(chosen.planned());
                    let compression = spec.compression_for(variant);
                    let key = parcel_key(selection, compression);
                    // A memo of the last patch describes the chosen list,
                    // not one with aliases added.
                    let unaliased = aliased.is_none();
                    let mut next_patch = None;
                    // The memo a whole write keeps if it finds the parcel
                    // unchanged, or replaces.
                    let mut memo = last_patch.filter(|_| unaliased);
                    let as_patch = if patches {
                        let recall = patch::Recall {
                            memo: memo.take(),
                            fresh: chosen.fresh().filter(|_| unaliased),
                        };
                        let r = patch::write(
                            store,
                            &path,
                            selection,
                            compression,
                            &key,
                            retired,
                            held,
                            recall,
                        );
                        match r {
                            Ok(patch::Written::AsPatch(p)) => {
                                next_patch = p.memo.filter(|_| unaliased);
                                Some(Ok((p.outcome, p.in_force)))
                            }
                            Ok(patch::Written::Whole(left)) => {
                                memo = left;
                                None
                            }
                            Err(e) => Some(Err(e)),
                        }
                    } else {
                        None
                    };
                    let mut written = as_patch
                        .unwrap_or_else(|| {
                            let whole = Whole {
                                key: &key,
                                compression,
                                check: &mut check,
                                memo: (choices.is_some() && unaliased).then_some(&mut memo),
                            };
                            let outcome = write_one(store, &path, selection, whole, retired)?;
                            next_patch = memo.take();
                            held.add(selection);
                            Ok((outcome, false))
                        })
                        .unwrap_or_else(|error| (ParcelOutcome::Failed { error }, false));
                    if let ParcelOutcome::Written { changed, .. } = &mut written.0 {
                        with_users(changed, selection, steps);
                    }
                    // A choice with stand-ins is made afresh next time:
                    // kept runs do not remember them.
                    if let Some(choices) = choices.as_deref_mut()
                        && stand_ins.is_empty()
                    {
                        chosen.patch = next_patch;
                        choices.keep(&spec.name, chosen, selected, steps);
                    }
                    written
                }
                Err(failed) => (ParcelOutcome::Blocked { failed }, false),
            };
            let patch = patch::PatchFiles::of(&path).patch;
            let in_force = patched
                || matches!(
                    outcome,
                    ParcelOutcome::Blocked { .. } | ParcelOutcome::Failed { .. }
                ) && patch.exists();
            ParcelReport {
                name: spec.name.clone(),
                path,
                patch: in_force.then_some(patch),
                outcome,
                stand_ins,
                damaged: check.found,
            }
        })
        .collect()
}

/// Which of the blobs the store holds back for the build's parcels
/// ([`Store::put_deferred`]) a parcel now holds whole: those
/// [`Store::flush_deferred`] need not store. Only they are looked for, so
/// a parcel adds nothing when nothing is held back (a set of every
/// resource's blob, made on each watched edit, was 50 ms at 1M files).
#[derive(Default)]
pub(crate) struct Held {
    wanted: HashSet<ContentHash>,
    found: HashSet<ContentHash>,
}

impl Held {
    /// Looking for the blobs `store` holds back now.
    pub(crate) fn of(store: &Store) -> Held {
        Held {
            wanted: store.deferred_hashes().into_iter().collect(),
            found: HashSet::new(),
        }
    }

    /// Those of `planned`'s whole blobs looked for are held.
    fn add(&mut self, planned: &[Planned]) {
        if self.wanted.is_empty() {
            return;
        }
        let blobs = planned.iter().filter_map(Planned::whole_blob);
        self.found
            .extend(blobs.filter(|hash| self.wanted.contains(hash)));
    }

    /// Whether a parcel holds `hash` whole.
    pub(crate) fn contains(&self, hash: &ContentHash) -> bool {
        self.found.contains(hash)
    }
}

/// Which of a step's outputs a parcel of the build holds whole, so that
/// the store need not keep them as well (see [`Store::put_deferred`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParcelBound {
    /// None: no parcel selects the step, or its output is an intermediate
    /// (a sprite's pixels, of which the parcel holds the frame).
    None,
    /// Every output.
    All,
    /// The outputs of this kind: an atlas's pages (its frame table is cut
    /// into frames, not held whole).
    Kind(&'static str),
}

impl ParcelBound {
    /// Whether an output of `kind` is held whole.
    pub(crate) fn holds(self, kind: &str) -> bool {
        match self {
            ParcelBound::None => false,
            ParcelBound::All => true,
            ParcelBound::Kind(k) => k == kind,
        }
    }
}

/// For each step of `plan`, which outputs the parcels of `manifest` hold
/// whole when written: the same choice [`select`] makes, from the plan
/// alone, before any step runs. A step that only a reference brings (a
/// model's texture outside the parcel's globs) is not bound: references
/// are known once steps ran, so the store keeps its outputs as well.
pub(crate) fn parcel_bound(manifest: &Manifest, plan: &Plan) -> Vec<ParcelBound> {
    let mut bound = vec![ParcelBound::None; plan.steps.len()];
    let selected = plan.selected(manifest);
    for (i, step) in plan.steps.iter().enumerate() {
        if !selected.iter().any(|s| s[i]) {
            continue;
        }
        match step.group {
            Group::Sprite { atlas, .. } => bound[atlas] = ParcelBound::Kind(KIND_IMAGE),
            Group::None => bound[i] = ParcelBound::All,
        }
    }
    bound
}

/// Where a resource's bytes come from.
#[derive(Clone, Copy)]
enum Source {
    /// A whole blob of `len` bytes.
    Blob { hash: ContentHash, len: u64 },
    /// Bytes `start..start + len` of a blob: one frame of an atlas's table,
    /// as [`select`] chooses it. Its bytes are read before the parcel's key
    /// is made ([`FromStore::resolve`]), and it becomes a [`Source::Frame`].
    Slice {
        hash: ContentHash,
        start: usize,
        len: usize,
    },
    /// A [`Source::Slice`] whose bytes were read: their hash (`digest`)
    /// is the resource's content, so that a frame the atlas left where it
    /// was is the same resource again, though the table it is cut from
    /// changed (another sprite moved), and neither a patch nor a reload
    /// notice holds it.
    Frame {
        table: ContentHash,
        start: usize,
        len: usize,
        digest: ContentHash,
    },
}

/// One resource to be: name, kind, bytes.
#[derive(Clone)]
struct Planned {
    name: String,
    kind: String,
    source: Source,
    /// For a sprite, the hash of its own step's outputs (its pixels): its
    /// frame can stay the same while what the frame shows changes, and the
    /// reload notice must still name it.
    shows: Option<ContentHash>,
    /// Its rule's `compression`, over the parcel's.
    compression: Option<Compression>,
    /// For an alias (see [`aliases`]), the name it stands for.
    alias_of: Option<String>,
}

/// `asset`, or `asset#label` for a labelled output.
pub(crate) fn resource_name(asset: &AssetPath, label: &str) -> String {
    if label.is_empty() {
        asset.to_string()
    } else {
        format!("{asset}#{label}")
    }
}

/// How [`write_one`] writes a parcel whole.
struct Whole<'w> {
    /// The parcel's key.
    key: &'w ContentHash,
    compression: Compression,
    check: &'w mut DamageCheck,
    /// Where a watched pipeline keeps what the next patch of the parcel
    /// starts from ([`patch::PatchMemo`]): left as it is if the parcel is
    /// unchanged (made from its `.sums` if there is none), replaced if it
    /// is written.
    memo: Option<&'w mut Option<Box<patch::PatchMemo>>>,
}

/// Writes the parcel at `path`, whose resources are `planned`, whole,
/// unless the one there is it already (by its key, and undamaged).
fn write_one(
    store: &Store,
    path: &Path,
    planned: &[Planned],
    whole: Whole<'_>,
    retired: &mut Retired,
) -> Result<ParcelOutcome, StoreError> {
    let Whole {
        key,
        compression,
        check,
        memo,
    } = whole;
    let key_path = path.with_extension("parcel.key");
    let toc_path = path.with_extension("parcel.toc");
    let resources = planned.len();
    let sums_path = path.with_extension("parcel.sums");
    let recorded = KeyFile::read(&key_path);
    // The `.sums` too: the store finds what the parcel holds through it.
    let unchanged = recorded.as_ref().is_some_and(|k| k.key == key.to_hex())
        && toc_describes(&toc_path, path)
        && sums_describe(&sums_path, path);
    if unchanged {
        // The file as written is trusted; one changed since (by its length
        // and modification time), or every one when asked, is read whole
        // and checked, and written again if damaged.
        let stamp = Stamp::of(path);
        let same = stamp.is_some() && recorded.and_then(|k| k.stamp) == stamp;
        check.found = if same && !check.every_time {
            None
        } else {
            damage(path)
        };
        if check.found.is_none() {
            if !same {
                store.write_atomic(&key_path, KeyFile::text(key, stamp).as_bytes())?;
            }
            // A patch left by a watch killed before it wrote the base whole.
            patch::remove(path)?;
            if let Some(memo) = memo
                && memo.is_none()
            {
                *memo = patch::PatchMemo::of_base(store, &sums_path, planned, compression);
            }
            return Ok(ParcelOutcome::Unchanged { resources });
        }
    }
    // Streamed: one resource's bytes in memory at a time, read from the
    // store (and checked against its hash) as it is written; or, when the
    // previous version of the parcel holds it unchanged, copied from there
    // as stored (no store read, no compression).
    let before = fs::read_to_string(&sums_path).unwrap_or_default();
    let before_contents = parcel_sums::contents(&before);
    let contents: Vec<String> = planned.iter().map(Planned::content).collect();
    let previous = Previous::open(path, &before, &before_contents, compression);
    let mut writer = ParcelWriter::compressed(compression);
    declare(&mut writer, planned.iter());
    let fetch = |from_store: &mut FromStore<'_>, i: usize| -> Result<Payload<'_>, WriteError> {
        if let Some(r) = previous
            .as_ref()
            .and_then(|p| p.unchanged(&planned[i], &contents[i]))
        {
            return Ok(Payload::Stored(r));
        }
        from_store.fetch(&planned[i])
    };
    // The key goes before the parcel is replaced: a kill after the rename
    // and before the new key is written must not leave the old key beside
    // the new parcel (the table of contents' length check cannot tell two
    // parcels of one length apart), or the next build would keep a parcel
    // that its key does not describe.
    remove_if_present(&key_path)?;
    // The previous parcel is freed later, not by the rename below, and
    // stays readable to the store (a parcel written after this one may
    // need a blob only it held).
    store.keep_open(path);
    let (written, replaced) = place(store, path, writer, fetch)?;
    retired.0.extend(replaced);
    let toc = toc::write(
        written.len,
        (planned.iter()).map(|p| (p.kind.as_str(), p.name.as_str(), p.alias_of.as_deref())),
    );
    store.write_atomic(&toc_path, toc.as_bytes())?;
    let mut lines = Vec::with_capacity(if memo.is_some() { planned.len() } else { 0 });
    let now = parcel_sums::write_placing(
        compression.name(),
        written.table_checksum,
        contents
            .iter()
            .map(String::as_str)
            .zip(planned.iter().map(|p| p.name.as_str())),
        |at| {
            if memo.is_some() {
                lines.push(Some(at));
            }
        },
    );
    // Measured against what a game holds: the base and its patch, if any.
    let patched = patch::PatchFiles::of(path).sums();
    let mut changed = match &patched {
        Some(sums) => changed_names(
            &patch::seen_through(&before_contents, sums),
            planned,
            &contents,
        ),
        None => changed_names(&before_contents, planned, &contents),
    };
    // A game that read a damaged resource reads it again.
    if let Some(damaged) = &check.found {
        changed.extend(damaged.iter().cloned());
        changed.sort_unstable();
        changed.dedup();
    }
    let sums_stamp = store.write_sums(&sums_path, now)?;
    store.write_atomic(&key_path, KeyFile::text(key, Stamp::of(path)).as_bytes())?;
    patch::remove(path)?;
    if let Some(memo) = memo {
        *memo = Some(patch::PatchMemo::whole(compression, sums_stamp, lines));
    }
    Ok(ParcelOutcome::Written { resources, changed })
}

impl Planned {
    /// What the resource holds, as `.sums` records it (see
    /// [`parcel_sums`]): its blob hash (and range, for a frame, and the
    /// sprite's own pixels' hash after a `+`), and the compression its rule
    /// asks for after an `@`: a resource stored one way is not copied into
    /// a parcel that asks for another.
    /// Its length in bytes, as it comes from the store.
    fn len(&self) -> u64 {
        match self.source {
            Source::Blob { len, .. } => len,
            Source::Slice { len, .. } | Source::Frame { len, .. } => len as u64,
        }
    }

    /// The blob it is whole (not a slice of one).
    fn whole_blob(&self) -> Option<ContentHash> {
        match self.source {
            Source::Blob { hash, .. } => Some(hash),
            Source::Slice { .. } | Source::Frame { .. } => None,
        }
    }

    fn content(&self) -> String {
        let mut out = String::with_capacity(160);
        self.write_content(&mut out);
        out
    }

    /// [`Planned::content`], appended to `out`.
    fn write_content(&self, out: &mut String) {
        use std::fmt::Write as _;
        match self.source {
            Source::Blob { hash, .. } => out.push_str(&hash.hex()),
            Source::Slice { hash, start, len } => {
                let _ = write!(out, "{}:{start}:{len}", &*hash.hex());
            }
            Source::Frame { digest, .. } => {
                out.push_str(parcel_sums::FRAME);
                out.push_str(&digest.hex());
            }
        }
        if let Some(shows) = self.shows {
            out.push('+');
            out.push_str(&shows.hex());
        }
        if let Some(c) = self.compression {
            out.push('@');
            out.push_str(c.name());
        }
    }
}

/// Reads planned resources' bytes from the store: a whole blob as the
/// store shares it, a frame cut from its atlas's table (each table read
/// once). A store error is kept typed (a corrupt blob heals the cache) for
/// the caller to return; the writer only learns that it must stop.
struct FromStore<'s> {
    store: &'s Store,
    tables: HashMap<ContentHash, Arc<Vec<u8>>>,
    error: Option<StoreError>,
}

impl<'s> FromStore<'s> {
    fn new(store: &'s Store) -> FromStore<'s> {
        FromStore {
            store,
            tables: HashMap::new(),
            error: None,
        }
    }

    fn fetch<'p>(&mut self, p: &Planned) -> Result<Payload<'p>, WriteError> {
        let payload = match p.source {
            Source::Blob { hash, .. } => self.store.get_shared(&hash).map(Payload::Shared),
            Source::Slice {
                hash, start, len, ..
            }
            | Source::Frame {
                table: hash,
                start,
                len,
                ..
            } => self
                .frame(hash, start, len)
                .map(|frame| Payload::Bytes(frame.to_vec())),
        };
        payload.map_err(|e| {
            self.error = Some(e);
            WriteError::FetchFailed
        })
    }

    /// Bytes `start..start + len` of the table `hash` (empty past its end:
    /// the parcel's key and the written resource then say so alike).
    fn frame(&mut self, hash: ContentHash, start: usize, len: usize) -> Result<&[u8], StoreError> {
        let table = match self.tables.entry(hash) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(self.store.get_shared(&hash)?),
        };
        Ok(table.get(start..start + len).unwrap_or_default())
    }

    /// Reads the bytes of every frame of `planned` still a
    /// [`Source::Slice`], making it a [`Source::Frame`]. A watched
    /// pipeline's kept choice holds frames read by earlier builds, so
    /// after an edit only the frames chosen again are read.
    fn resolve(&mut self, planned: &mut [Planned]) -> Result<(), StoreError> {
        for p in planned {
            if let Source::Slice { hash, start, len } = p.source {
                let digest = ContentHash::of(self.frame(hash, start, len)?);
                p.source = Source::Frame {
                    table: hash,
                    start,
                    len,
                    digest,
                };
            }
        }
        Ok(())
    }
}

/// Declares `planned` to `writer`, each to be fetched as it is written,
/// compressed as its rule asks.
fn declare<'a>(writer: &mut ParcelWriter, planned: impl Iterator<Item = &'a Planned>) {
    for p in planned {
        match p.compression {
            Some(c) => writer.add_later_compressed(&p.name, &p.kind, p.len(), c),
            None => writer.add_later(&p.name, &p.kind, p.len()),
        }
    }
}

/// Writes the parcel `writer` declares to `path` (by a swap: the file it
/// replaces is returned, retired), its `i`th resource's bytes from
/// `fetch`. A store error met while fetching is the one returned.
fn place<'p>(
    store: &Store,
    path: &Path,
    writer: ParcelWriter,
    mut fetch: impl FnMut(&mut FromStore<'_>, usize) -> Result<Payload<'p>, WriteError>,
) -> Result<(Written, Option<PathBuf>), StoreError> {
    let mut from_store = FromStore::new(store);
    let written = store.replace_keeping_old(path, |out| {
        writer
            .write_to(out, |i| fetch(&mut from_store, i))
            .map_err(std::io::Error::other)
    });
    match from_store.error {
        Some(e) => Err(e),
        None => written,
    }
}

/// Removes the file at `path`; nothing to do if there is none.
fn remove_if_present(path: &Path) -> Result<bool, StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(StoreError::Io {
            action: "could not remove",
            path: path.to_owned(),
            source,
        }),
    }
}

/// The previous version of a parcel, written with the same compression, and
/// what each of its resources held (its `.sums` lines, name to content).
struct Previous<'m, 's> {
    buf: ParcelBuf,
    contents: &'m parcel_sums::Contents<'s>,
    /// The other way, content to a name holding it, made on the first
    /// name it did not hold: a renamed file's resource is the same bytes
    /// under another name. (An edit, a name holding other bytes, makes
    /// none.) Hashed with foldhash, as the name maps are: a rename storm
    /// fills it with every resource (18,243 at 10k assets).
    names: std::cell::OnceCell<HashMap<&'s str, &'m str, foldhash::fast::RandomState>>,
}

impl<'m, 's> Previous<'m, 's> {
    /// The parcel at `path`, if it opens as a valid parcel and `sums` (its
    /// `.sums` text, whose lines are `contents`) describes it (by its table
    /// checksum) and says it was written with `compression`.
    fn open(
        path: &Path,
        sums: &str,
        contents: &'m parcel_sums::Contents<'s>,
        compression: Compression,
    ) -> Option<Previous<'m, 's>> {
        let (written_with, table_checksum) = parcel_sums::header(sums)?;
        if written_with != compression.name() {
            return None;
        }
        let buf = ParcelBuf::open(path).ok()?;
        if buf.parcel().table_checksum() != table_checksum {
            return None;
        }
        Some(Previous {
            buf,
            contents,
            names: std::cell::OnceCell::new(),
        })
    }

    /// `p` as this version stores it, if it held the same content (and
    /// kind), under its name or, renamed, under another, and its stored
    /// bytes still match their checksum. A rename storm (a folder of 6,081
    /// images renamed, at 10k assets) then copies every resource as
    /// stored, instead of reading each from the store and compressing it
    /// again.
    fn unchanged(&self, p: &Planned, content: &str) -> Option<Resource<'_>> {
        let name = match self.contents.get(p.name.as_str()) {
            Some(&held) if held == content => p.name.as_str(),
            // The same name holding other bytes: an edit, not a rename.
            Some(_) => return None,
            None => {
                let names = self.names.get_or_init(|| {
                    let mut names =
                        HashMap::with_capacity_and_hasher(self.contents.len(), Default::default());
                    for (name, &content) in self.contents {
                        names.entry(content).or_insert(name.as_ref());
                    }
                    names
                });
                names.get(content)?
            }
        };
        let r = self.buf.parcel().by_name(name)?;
        (r.kind == p.kind && r.verify_stored().is_ok()).then_some(r)
    }
}

/// Adds to `changed` (resource names, sorted) the resources in `planned`
/// of every step that used an asset whose resources changed, directly or
/// through other steps: a shader that imports an edited module keeps its
/// own bytes (imports are kept as written), but a game that composes it
/// with the module must load it again, so a reload notice names it too.
/// Atlases are not followed: a page whose sprites did not change is the
/// same page, and its sprites' own resources say which did.
fn with_users(changed: &mut Vec<String>, planned: &[Planned], steps: &[Arc<StepReport>]) {
    fn asset_of(name: &str) -> &str {
        name.split('#').next().unwrap_or(name)
    }
    let changed_assets: HashSet<&str> = changed.iter().map(|n| asset_of(n)).collect();
    if changed_assets.is_empty() {
        return;
    }
    // Passes over every step's dependencies until one reaches no new
    // user: one pass past the longest chain of users, usually two in
    // all, and no map of users made (at 100k assets, making one was most
    // of an edit's notice).
    let mut users: HashSet<&str> = HashSet::new();
    loop {
        let before = users.len();
        for step in steps.iter().filter(|s| s.asset.atlas_name().is_none()) {
            let asset = step.asset.as_str();
            if users.contains(asset) {
                continue;
            }
            let record = step.record.as_deref().or(step.stand_in.as_deref());
            let uses_changed = (record.into_iter().flat_map(|r| &r.dependencies)).any(|d| {
                let dep = d.asset.as_str();
                changed_assets.contains(dep) || users.contains(dep)
            });
            if uses_changed {
                users.insert(asset);
            }
        }
        if users.len() == before {
            break;
        }
    }
    // Only the users' resources are added: of the assets that changed,
    // `changed` already names the resources that did (one page of an atlas,
    // not all of them).
    users.retain(|u| !changed_assets.contains(u));
    if users.is_empty() {
        return;
    }
    changed.extend(
        (planned.iter())
            .map(|p| p.name.as_str())
            .filter(|name| users.contains(asset_of(name)))
            .map(str::to_owned),
    );
    changed.sort_unstable();
    changed.dedup();
}

/// Names whose content differs between the previous `.sums` (`before`,
/// name to content) and the resources now planned (with their `now`
/// contents), or that are in only one of them; sorted.
fn changed_names(
    before: &parcel_sums::Contents<'_>,
    planned: &[Planned],
    now: &[String],
) -> Vec<String> {
    let mut changed = BTreeSet::new();
    let mut kept = 0;
    for (p, content) in planned.iter().zip(now) {
        match before.get(p.name.as_str()) {
            Some(was) => {
                kept += 1;
                if *was != content {
                    changed.insert(p.name.as_str());
                }
            }
            None => {
                changed.insert(p.name.as_str());
            }
        }
    }
    if kept != before.len() {
        // Some name of `before` is gone.
        let planned_names: HashSet<&str> = planned.iter().map(|p| p.name.as_str()).collect();
        changed.extend(
            (before.keys())
                .map(|name| name.as_ref())
                .filter(|name| !planned_names.contains(name)),
        );
    }
    changed.into_iter().map(str::to_owned).collect()
}

/// Whether the `.sums` at `sums` was written with the parcel at `parcel`
/// (by its table checksum); only its header line is read.
fn sums_describe(sums: &Path, parcel: &Path) -> bool {
    let Ok(file) = fs::File::open(sums) else {
        return false;
    };
    let mut header = String::new();
    if BufReader::new(file).read_line(&mut header).is_err() {
        return false;
    }
    parcel_sums::header(&header).is_some_and(|(_, c)| parcel_sums::describes(c, parcel))
}

/// Whether the table of contents at `toc` is one and describes the parcel
/// file at `parcel` (by its length): otherwise both are rewritten.
fn toc_describes(toc: &Path, parcel: &Path) -> bool {
    let Ok(text) = fs::read_to_string(toc) else {
        return false;
    };
    let len = fs::metadata(parcel).map(|m| m.len()).ok();
    toc::check(&text).ok() == len
}

/// The identity of a parcel's contents: the format version, the
/// compression, and every resource's name, kind, bytes (by blob hash, and
/// range for a slice) and its rule's compression.
fn parcel_key(planned: &[Planned], compression: Compression) -> ContentHash {
    // Laid out in a buffer and hashed a megabyte at a time: BLAKE3 hashes a
    // long input several chunks at a time, where 70,000 small updates
    // (10,000 resources) each paid for one; and a buffer of the whole (128
    // MB at 1M files, new on every watched edit) cost more in first
    // touches of its memory than the hashing. The key is the hash of the
    // same bytes either way.
    const FLUSH_AT: usize = 1 << 20;
    let mut hasher = blake3::Hasher::new();
    let mut key = Vec::with_capacity(FLUSH_AT + 512);
    key.extend(assets_runtime::format::VERSION.to_le_bytes());
    key.push(compression.byte());
    for p in planned {
        let (hash, range) = match p.source {
            Source::Blob { hash, .. } => (hash, None),
            Source::Slice { hash, start, len } => (hash, Some((start as u64, len as u64))),
            // By what it holds, as its content: a frame that stayed where
            // it was leaves the key as it was.
            Source::Frame { digest, len, .. } => (digest, Some((u64::MAX, len as u64))),
        };
        for field in [p.name.as_bytes(), p.kind.as_bytes(), hash.as_bytes()] {
            key.extend((field.len() as u64).to_le_bytes());
            key.extend_from_slice(field);
        }
        if let Some((start, len)) = range {
            key.extend(start.to_le_bytes());
            key.extend(len.to_le_bytes());
        }
        if let Some(c) = p.compression {
            key.extend([b'@', c.byte()]);
        }
        if key.len() >= FLUSH_AT {
            hasher.update(&key);
            key.clear();
        }
    }
    hasher.update(&key);
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parcel written whole takes a resource as the previous version
    /// stores it under its own name or, renamed, under the name that held
    /// the same content; never one of another kind or content.
    #[test]
    fn the_previous_parcel_gives_a_renamed_resource_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.parcel");
        let mut writer = ParcelWriter::compressed(Compression::Lz4);
        writer.add("sounds/old name.raw", "bytes", vec![7; 4096]);
        writer.add("notes.txt", "text", b"kept".to_vec());
        let bytes = writer.finish().unwrap();
        fs::write(&path, &bytes).unwrap();
        let checksum = assets_runtime::Parcel::from_bytes(&bytes)
            .unwrap()
            .table_checksum();
        let (sound, notes) = (ContentHash::of(&[7; 4096]), ContentHash::of(b"kept"));
        let (sound_hex, notes_hex) = (sound.to_hex(), notes.to_hex());
        let sums = parcel_sums::write(
            "lz4",
            checksum,
            [
                (sound_hex.as_str(), "sounds/old name.raw"),
                (notes_hex.as_str(), "notes.txt"),
            ]
            .into_iter(),
        );
        let contents = parcel_sums::contents(&sums);
        let previous = Previous::open(&path, &sums, &contents, Compression::Lz4).unwrap();
        let planned = |name: &str, kind: &str, hash: ContentHash, len: u64| Planned {
            name: name.to_owned(),
            kind: kind.to_owned(),
            source: Source::Blob { hash, len },
            shows: None,
            compression: None,
            alias_of: None,
        };
        let renamed = planned("sounds/new name.raw", "bytes", sound, 4096);
        let stored = previous.unchanged(&renamed, &renamed.content()).expect("as stored");
        assert_eq!(stored.name, "sounds/old name.raw");
        assert_eq!(stored.bytes().unwrap(), &[7; 4096][..]);
        let same = planned("notes.txt", "text", notes, 4);
        assert_eq!(previous.unchanged(&same, &same.content()).unwrap().name, "notes.txt");
        let other_kind = planned("sounds/new name.raw", "text", sound, 4096);
        assert!(previous.unchanged(&other_kind, &other_kind.content()).is_none());
        let other = planned("sounds/new name.raw", "bytes", ContentHash::of(b"other"), 5);
        assert!(previous.unchanged(&other, &other.content()).is_none());
        // Written with another compression: nothing is taken.
        assert!(Previous::open(&path, &sums, &contents, Compression::Zstd).is_none());
    }
}
