//! [`BuildReport`]: what a build did, step by step. The library returns it;
//! front-ends render it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::asset_path::AssetPath;
use crate::processor::ProcessError;
use crate::record::{Diagnostic, DirtyReason, Record};
use crate::store::StoreError;

/// What happened to one step.
#[derive(Debug)]
pub enum Outcome {
    /// Reused from the cache; no processor ran.
    Fresh,
    /// Fetched from the remote cache; no processor ran.
    Fetched,
    /// The processor ran, for this reason.
    Ran {
        /// Why it ran.
        reason: DirtyReason,
    },
    /// The processor ran and failed, or its outputs could not be stored.
    Failed {
        /// Why it ran, if it got that far.
        reason: Option<DirtyReason>,
        /// What went wrong.
        error: ProcessError,
    },
    /// Not built because an asset it depends on failed.
    Skipped {
        /// The failed dependency.
        dependency: AssetPath,
    },
}

/// One step of a build and its outcome.
#[derive(Debug)]
pub struct StepReport {
    /// The asset.
    pub asset: AssetPath,
    /// The processor that was (or would have been) used.
    pub processor: String,
    /// What happened.
    pub outcome: Outcome,
    /// The step's record when it succeeded: its outputs, inputs and dependencies.
    pub record: Option<Arc<Record>>,
    /// For a fresh step the build was asked to check ([`crate::unstable::Verify`]):
    /// what building it again found.
    pub verification: Option<crate::verify::Verification>,
    /// For a failed or skipped step of a build that writes parcels anyway
    /// ([`OnFailure::StandIn`]): its last good record, whose outputs are
    /// still in the store, standing in for it in parcels (and in an atlas,
    /// for a sprite).
    pub stand_in: Option<Arc<Record>>,
}

impl StepReport {
    /// A report of `outcome`, with no verification and no stand-in.
    pub(crate) fn new(
        asset: AssetPath,
        processor: String,
        outcome: Outcome,
        record: Option<Arc<Record>>,
    ) -> StepReport {
        StepReport {
            asset,
            processor,
            outcome,
            record,
            verification: None,
            stand_in: None,
        }
    }
}

/// What a build does with a parcel that holds an asset that failed (or
/// was skipped because one it depends on failed).
///
/// The asset fails the build either way (the report is not a success, the
/// CLI exits non-zero). The difference is what a game sees meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// Leave the parcel alone: the last good file stays, untouched. For
    /// release builds, which must never ship a parcel short of an asset.
    KeepParcel,
    /// Write the parcel anyway, each failed asset's last good outputs
    /// standing in for it, or without it if it never built (see
    /// [`StandIn`]); an atlas packs the sprites that did build. For
    /// development, so that one broken file does not stop the game.
    StandIn,
}

impl OnFailure {
    /// The default for a variant: [`OnFailure::KeepParcel`] for `release`,
    /// [`OnFailure::StandIn`] for every other.
    pub fn for_variant(variant: &str) -> OnFailure {
        if crate::manifest::is_release(variant) {
            OnFailure::KeepParcel
        } else {
            OnFailure::StandIn
        }
    }
}

/// A failed or skipped asset of a parcel written anyway
/// ([`OnFailure::StandIn`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum StandIn {
    /// Its last good outputs are in the parcel instead.
    LastGood {
        /// The asset.
        asset: String,
    },
    /// It never built (or what it last built is gone): the parcel is
    /// without it.
    LeftOut {
        /// The asset.
        asset: String,
    },
}

impl StandIn {
    /// The asset.
    pub fn asset(&self) -> &str {
        match self {
            StandIn::LastGood { asset } | StandIn::LeftOut { asset } => asset,
        }
    }
}

/// What happened to one parcel.
#[derive(Debug)]
pub struct ParcelReport {
    /// Its name in the manifest.
    pub name: String,
    /// Where it is (or would be) on disk.
    pub path: PathBuf,
    /// The patch it is seen through, if a watched build wrote one (see
    /// [`BuildOptions::patch_parcels`](crate::unstable::BuildOptions)).
    pub patch: Option<PathBuf>,
    /// What happened.
    pub outcome: ParcelOutcome,
    /// The failed assets it was written without, sorted (only with
    /// [`OnFailure::StandIn`]; else such a parcel is
    /// [`ParcelOutcome::Blocked`]).
    pub stand_ins: Vec<StandIn>,
    /// Set when the previous file, whose contents were to stay, was found
    /// damaged (changed since this tool wrote it, and failing its
    /// checksums), so it was written again: the resources that were
    /// damaged, sorted (empty when the damage was elsewhere: the file no
    /// longer opens as a parcel, or its padding is not zero).
    pub damaged: Option<Vec<String>>,
}

impl ParcelReport {
    /// If the parcel file was found damaged (see
    /// [`ParcelReport::damaged`]), a sentence saying so and what was done.
    pub fn repair_note(&self) -> Option<String> {
        let damaged = self.damaged.as_ref()?;
        let what = match damaged.len() {
            0 => {
                "it no longer opened as the parcel written, or its padding was not zero".to_owned()
            }
            n => {
                let shown: Vec<&str> = damaged.iter().take(5).map(String::as_str).collect();
                let more = match n - shown.len() {
                    0 => String::new(),
                    more => format!(" and {more} more"),
                };
                format!(
                    "{} no longer matched {} checksum: {}{more}",
                    plural(n, "resource"),
                    if n == 1 { "its" } else { "their" },
                    shown.join(", ")
                )
            }
        };
        let done = match self.outcome {
            ParcelOutcome::Written { .. } => "it was written again from the cache",
            _ => "it could not be written again",
        };
        Some(format!(
            "parcel `{}` had been changed since it was written ({what}); {done}",
            self.name
        ))
    }
}

/// Whether a parcel was written.
#[derive(Debug)]
pub enum ParcelOutcome {
    /// Its contents changed and it was rewritten.
    Written {
        /// Resources in it.
        resources: usize,
        /// Names of the resources added, changed or removed since the
        /// previous file (all of them when there was none), sorted: what a
        /// running game must reload.
        changed: Vec<String>,
    },
    /// Its contents are as before; the file was left alone.
    Unchanged {
        /// Resources in it.
        resources: usize,
    },
    /// Not written, because an asset in it failed or skipped; the previous
    /// file, if any, is kept.
    Blocked {
        /// The failed assets, sorted.
        failed: Vec<String>,
    },
    /// Writing failed.
    Failed {
        /// Why.
        error: StoreError,
    },
}

/// The result of a build.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// Every step, sorted by asset path.
    pub steps: Vec<Arc<StepReport>>,
    /// Every parcel of the manifest, sorted by name.
    pub parcels: Vec<ParcelReport>,
    /// Wall time of the whole build.
    pub elapsed: Duration,
    /// The files this build replaced, removed when the report is dropped.
    pub retired: Retired,
    /// The platform built for, if any.
    pub platform: Option<String>,
    /// What the build did with the remote cache, if one was configured.
    pub remote: Option<crate::remote::RemoteStats>,
    /// Rules no asset came from (a glob with a typo, or one the rules
    /// before it shadow), each as a warning at its line.
    pub unused_rules: Vec<crate::manifest::ManifestError>,
    /// The manifest's aliases, each a warning at its line: old names that
    /// still answer for renamed assets.
    pub aliases: Vec<crate::manifest::ManifestError>,
    /// The checked steps (see [`crate::unstable::Verify`]) whose cached outputs, or
    /// outputs they read, were found damaged, sorted; recorded when found,
    /// so a step the same build then made again is still listed. Damage
    /// fails a checking build (it is what checking is for), never an
    /// unchecked one, which repairs what it meets in passing.
    pub cache_damage: Vec<AssetPath>,
}

/// Files a build replaced (a parcel's previous version), kept alive under a
/// second name in the cache's `tmp/` until this is dropped.
///
/// Replacing a file frees its blocks, and freeing tens of megabytes costs
/// about 10 ms on ext4: time a game waiting for a rebuilt parcel should not
/// wait. Keeping a link defers the freeing to the drop, which `watch` does
/// after it has told the games. A kill in between leaves the links in
/// `tmp/`, which the next build clears.
#[derive(Debug, Default)]
pub struct Retired(pub(crate) Vec<PathBuf>);

impl Drop for Retired {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl BuildReport {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.steps.iter().filter(|s| f(&s.outcome)).count()
    }

    /// Processor runs, successful or not.
    pub fn ran(&self) -> usize {
        self.count(|o| {
            matches!(
                o,
                Outcome::Ran { .. }
                    | Outcome::Failed {
                        reason: Some(_),
                        ..
                    }
            )
        })
    }

    /// Every warning and note of a step that succeeded (ran, fresh or
    /// fetched), with its step, in step order: what each processor said
    /// when it ran.
    pub fn diagnostics(&self) -> impl Iterator<Item = (&StepReport, &Diagnostic)> {
        self.steps.iter().flat_map(|s| {
            let record = s.record.as_deref();
            record
                .into_iter()
                .flat_map(move |r| r.diagnostics.iter().map(move |d| (&**s, d)))
        })
    }

    /// The warnings of [`BuildReport::diagnostics`]: what
    /// `--deny-warnings` counts.
    pub fn warnings(&self) -> impl Iterator<Item = (&StepReport, &Diagnostic)> {
        self.diagnostics().filter(|(_, d)| d.is_warning())
    }

    /// Steps reused from the cache.
    pub fn fresh(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Fresh))
    }

    /// Steps fetched from the remote cache.
    pub fn fetched(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Fetched))
    }

    /// Steps that failed.
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed { .. }))
    }

    /// Steps skipped because a dependency failed.
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped { .. }))
    }

    /// Fresh steps built again to check the cache ([`crate::unstable::Verify`]).
    pub fn verified(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.verification.is_some())
            .count()
    }

    /// Checked steps whose rebuild did not reproduce the cache: different
    /// outputs, or a failure.
    pub fn unreproduced(&self) -> Vec<&StepReport> {
        self.steps
            .iter()
            .filter(|s| {
                s.verification.as_ref().is_some_and(|v| {
                    !matches!(
                        v,
                        crate::verify::Verification::Same | crate::verify::Verification::Damaged(_)
                    )
                })
            })
            .map(|s| &**s)
            .collect()
    }

    /// One line saying what failed, or `None` on success:
    /// `could not build 2 of 40 assets (1 skipped): a.png, b.wgsl`.
    pub fn failure_summary(&self) -> Option<String> {
        if self.success() {
            return None;
        }
        let (failed, skipped, total) = (self.failed(), self.skipped(), self.steps.len());
        let unreproduced = self.unreproduced();
        let damaged = &self.cache_damage;
        if (!unreproduced.is_empty() || !damaged.is_empty()) && failed == 0 && skipped == 0 {
            let mut lines = Vec::new();
            if !unreproduced.is_empty() {
                let names: Vec<&str> = unreproduced.iter().map(|s| s.asset.as_str()).collect();
                lines.push(format!(
                    "{} of {} checked did not reproduce the cache: {}",
                    plural(names.len(), "asset"),
                    self.verified(),
                    names.join(", ")
                ));
            }
            if !damaged.is_empty() {
                let names: Vec<&str> = damaged.iter().map(AssetPath::as_str).collect();
                lines.push(format!(
                    "the cache held damaged outputs of {} (removed; the next build makes them again): {}",
                    plural(names.len(), "asset"),
                    names.join(", ")
                ));
            }
            return Some(lines.join("; "));
        }
        if failed == 0 && skipped == 0 {
            let n = self
                .parcels
                .iter()
                .filter(|p| matches!(p.outcome, ParcelOutcome::Failed { .. }))
                .count();
            return Some(format!("could not write {}", plural(n, "parcel")));
        }
        let mut summary = format!("could not build {failed} of {}", plural(total, "asset"));
        if skipped > 0 {
            summary.push_str(&format!(" ({skipped} skipped)"));
        }
        let failures: Vec<&str> = self
            .steps
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Failed { .. }))
            .map(|s| s.asset.as_str())
            .collect();
        if !failures.is_empty() {
            summary.push_str(": ");
            summary.push_str(&failures[..failures.len().min(5)].join(", "));
            if failures.len() > 5 {
                summary.push_str(", ...");
            }
        }
        Some(summary)
    }

    /// When an asset failed, how to leave it out of the build, naming the
    /// first that failed: a file the game does not need (a draft, an
    /// editor's backup, a model whose buffer is missing) should not stop it.
    pub fn ignore_hint(&self) -> Option<String> {
        let first = self.steps.iter().find(|s| {
            matches!(s.outcome, Outcome::Failed { .. }) && s.asset.atlas_name().is_none()
        })?;
        Some(format!(
            "a file that is not an asset can be left out of the build: \
             `ignore = [\"{}\"]` under [package.metadata.assets] (globs, relative to the asset root)",
            first.asset
        ))
    }

    /// Inputs recorded outside every asset root (files an external tool
    /// reported reading, say `tools/lvlc.cfg`), relative to the package
    /// directory, sorted. Cargo's `rerun-if-changed` and `watch` look at the
    /// roots, so these must be watched one by one.
    pub fn inputs_outside(&self, roots: &[crate::manifest::AssetRoot]) -> Vec<&str> {
        let under_root = |path: &str| {
            roots.iter().any(|r| {
                r.name == "."
                    || path
                        .strip_prefix(r.name.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
        };
        let mut paths: Vec<&str> = self
            .steps
            .iter()
            .filter_map(|s| s.record.as_deref())
            .flat_map(|r| &r.inputs)
            .map(|i| i.path.as_str())
            .filter(|p| !under_root(p))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// Whether every step succeeded and every parcel was written.
    pub fn success(&self) -> bool {
        self.failed() == 0
            && self.skipped() == 0
            && self.unreproduced().is_empty()
            && self.cache_damage.is_empty()
            && self.parcels.iter().all(|p| {
                matches!(
                    p.outcome,
                    ParcelOutcome::Written { .. } | ParcelOutcome::Unchanged { .. }
                )
            })
    }
}

pub use crate::memory_budget::human_bytes;

/// `1 asset`, `2 assets`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
