//! Freshness: may a step's previous record be reused, and if not, why.
//!
//! A step is identified by its **key**, the hash of:
//!
//! | hashed into the key            | never hashed                         |
//! |--------------------------------|--------------------------------------|
//! | processor name and version     | absolute paths                       |
//! | the processor's code fingerprint | the code's path on this machine    |
//! | canonical settings (JSON)      | mtimes, the time of the build        |
//! | asset path, variant            | thread count, discovery order        |
//!
//! Its record then lists what the last run actually touched. The check
//! stops at the first difference and names it as a [`DirtyReason`]:
//!
//! 1. the key (processor, version, code, settings changed?);
//! 2. every input: its stamp first (size, mtime, ctime, inode, device: see
//!    [`FileStamp`]); only when it differs, or when the
//!    file was modified within [`RACY_WINDOW_NS`] of the step (a later write in
//!    the same timestamp tick would be invisible), is it re-hashed. A file
//!    whose bytes are unchanged does not make the step stale (touch is free),
//!    and the record is refreshed with the new stamps so the next check is
//!    cheap again. An input recorded as absent must still be absent;
//! 3. every dependency, built first if needed: its outputs must hash as they
//!    did when used. A dependency that rebuilt to identical bytes does not
//!    make this step stale (early cutoff); every reference (a model's
//!    texture) must still be an asset, whatever its contents;
//! 4. the outputs are still in the store. Last, though it is usually a
//!    lookup in memory: an output that a parcel holds (an atlas page) is
//!    found through the parcels' `.sums`, which the store reads on its
//!    first miss in a build (10,000 lines at 10k assets), and a step that
//!    an input or a dependency makes stale (an atlas after a sprite's edit
//!    in `watch`) need not pay for that.
//!
//! Known limit: where the stamp is size and mtime only (no ctime or inode:
//! Windows), a change that keeps the size and restores the mtime is not
//! seen, nor one hidden by a clock that runs backwards; `cargo assets clean`
//! recovers. On Unix the ctime, which user space cannot set, catches both.

use std::fs;
use std::path::Path;

use crate::asset_path::{AssetMap, AssetPath};
use crate::hash::ContentHash;
use crate::record::{DirtyReason, FileStamp, InputState, Record};
use crate::stat_cache::{StatCache, stat};
use crate::store::Store;

/// Inputs whose mtime lies this close before (or after) the step's start are
/// re-hashed instead of trusted: 2 s, the coarsest common timestamp granularity.
pub const RACY_WINDOW_NS: u64 = 2_000_000_000;

/// The verdict on a previous record.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Reuse it; `Some` is an updated record to write (new stamps, same content).
    Fresh(Option<Box<Record>>),
    /// Rerun the step.
    Stale(DirtyReason),
    /// A dependency failed; the step can neither be reused nor run.
    DependencyFailed(AssetPath),
}

/// What a dependency looks like now, as the check needs it.
pub(crate) enum DependencyState {
    /// Built; its current outputs hash.
    Built(ContentHash),
    /// No longer an asset.
    Gone,
    /// Waiting for it would close a dependency cycle. Not a failure of the
    /// dependency: the step runs, asks for it again, and fails naming the
    /// cycle (else every step of the cycle was skipped and none said why).
    Cycle,
    /// Failed or skipped.
    Failed,
}

/// What the step would be now, to compare with its record.
pub(crate) struct Current<'a> {
    pub key: ContentHash,
    pub processor: &'a str,
    pub version: u32,
    pub code: Option<u64>,
    pub settings_json: &'a str,
    pub package_dir: &'a Path,
    pub now_ns: u64,
    /// Where a watched pipeline keeps its stats, if it does.
    pub stats: Option<&'a StatCache>,
    /// The assets of the build, for the step's references.
    pub assets: &'a AssetMap<usize>,
}

/// Checks `record` against the world now. See the module docs for the order.
pub(crate) fn check(
    record: &Record,
    current: &Current<'_>,
    store: &Store,
    dependency: impl FnMut(&AssetPath) -> DependencyState,
) -> Verdict {
    if record.key != current.key {
        return Verdict::Stale(key_change(record, current));
    }
    let verdict = check_inputs(record, current, dependency);
    if !matches!(verdict, Verdict::Fresh(_)) {
        return verdict;
    }
    match record.outputs.iter().find(|o| !store.has(&o.hash, o.size)) {
        Some(o) => Verdict::Stale(DirtyReason::OutputMissing {
            label: o.label.clone(),
        }),
        None => verdict,
    }
}

/// Steps 2 and 3 of [`check`]: the inputs and dependencies of a record
/// whose key matches, its outputs not looked at. For a record from
/// elsewhere (a remote cache), whose outputs are fetched only if it is
/// fresh.
pub(crate) fn check_inputs(
    record: &Record,
    current: &Current<'_>,
    mut dependency: impl FnMut(&AssetPath) -> DependencyState,
) -> Verdict {
    let mut refresh: Option<Record> = None;
    for (i, input) in record.inputs.iter().enumerate() {
        let path = || input.path.clone();
        let full = current.package_dir.join(&input.path);
        let now = match current.stats {
            Some(cache) => cache.stat(&full),
            None => stat(&full),
        };
        match (&input.state, now) {
            (InputState::Unsettled { .. }, _) => {
                return Verdict::Stale(DirtyReason::InputChanged { path: path() });
            }
            (InputState::Absent { .. }, None) => {}
            (InputState::Absent { .. }, Some(_)) => {
                return Verdict::Stale(DirtyReason::InputAppeared { path: path() });
            }
            (InputState::Present { .. }, None) => {
                return Verdict::Stale(DirtyReason::InputRemoved { path: path() });
            }
            (InputState::Present { stamp, hash }, Some(now)) => {
                let racy =
                    |s: &FileStamp| s.mtime_ns.saturating_add(RACY_WINDOW_NS) >= record.started_ns;
                if now == *stamp && !racy(stamp) {
                    continue;
                }
                match fs::read(&full) {
                    Ok(bytes) if ContentHash::of(&bytes) == *hash => {}
                    _ => return Verdict::Stale(DirtyReason::InputChanged { path: path() }),
                }
                // Same bytes. Remember the new stamp unless it is still racy now.
                let settled = now.mtime_ns.saturating_add(RACY_WINDOW_NS) < current.now_ns;
                if now != *stamp || settled {
                    let r = refresh.get_or_insert_with(|| Record {
                        started_ns: current.now_ns,
                        ..record.clone()
                    });
                    r.inputs[i].state = InputState::Present {
                        stamp: now,
                        hash: *hash,
                    };
                }
            }
        }
    }
    for dep in &record.dependencies {
        match dependency(&dep.asset) {
            DependencyState::Built(h) if h == dep.outputs_hash => {}
            DependencyState::Built(_) | DependencyState::Gone | DependencyState::Cycle => {
                return Verdict::Stale(DirtyReason::DependencyChanged {
                    asset: dep.asset.clone(),
                });
            }
            DependencyState::Failed => return Verdict::DependencyFailed(dep.asset.clone()),
        }
    }
    // A reference names an asset's resources: whatever they are now, they
    // are the ones named, as long as it is an asset.
    if let Some(gone) = record
        .references
        .iter()
        .find(|r| !current.assets.contains_key(*r))
    {
        return Verdict::Stale(DirtyReason::DependencyChanged {
            asset: gone.clone(),
        });
    }
    // A refreshed record moves `started_ns` to now, which only widens the
    // margin of the inputs trusted by stamp above.
    Verdict::Fresh(refresh.map(Box::new))
}

fn key_change(record: &Record, current: &Current<'_>) -> DirtyReason {
    if record.processor != current.processor {
        DirtyReason::ProcessorChanged {
            previous: record.processor.clone(),
        }
    } else if record.processor_version != current.version {
        DirtyReason::ProcessorVersionChanged {
            previous: record.processor_version,
            current: current.version,
        }
    } else if record.processor_code != current.code {
        DirtyReason::ProcessorCodeChanged
    } else {
        DirtyReason::SettingsChanged {
            previous: record.settings.clone(),
            current: current.settings_json.to_owned(),
        }
    }
}
