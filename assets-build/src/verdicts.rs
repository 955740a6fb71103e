//! The last build's verdict on each step, kept by a watched pipeline and
//! reused where no change reaches.
//!
//! A no-op build of 10,000 assets still checks every step. Each check is a
//! few microseconds: stats (kept in memory, see `stat_cache.rs`), a store
//! lookup per output, a hash of each dependency's outputs. At 10k that
//! was all of a watched no-op (~40 ms) and a sixth of a watched edit.
//! Yet the watcher has already said what changed. A step that none of the
//! changes reaches gets the same verdict as last time, so a watched
//! pipeline keeps each step's report and reuses it. This is how tup and
//! Bazel's Skyframe work: they start from the changes and walk to what
//! depends on them, instead of checking everything.
//!
//! A step's report is kept (it is *trusted*) after a build where:
//! - it succeeded (fresh, fetched or ran) and has a record;
//! - none of its inputs is unsettled (a tool saw it change while running);
//! - the stat of every input is kept by the stat cache. That rules out the
//!   inputs the watcher is not sure to report: files outside the asset
//!   roots, and links. Such a step is checked in every build, as before.
//!
//! A change to a path forgets every trusted step with an input at that
//! path or under it (the path may be a folder). A build then reuses a
//! kept report when all of these hold:
//! - the step is still trusted;
//! - the record log holds the same record for it (no other process built
//!   it since);
//! - every asset it depends on is reused too.
//!
//! The assets a step refers to (a model's textures) are not walked: a
//! reference changes the step only when its asset is gone, and that is a
//! new plan, which keeps no verdict.
//!
//! All other steps are checked as before. Those are the changed steps and
//! everything that depends on them. The early cutoff still applies: a
//! dependent whose dependency rebuilt to the same bytes stays fresh.
//!
//! A reused step's outputs are not looked up in the store. A blob lost
//! since the last build is found when something reads it: a parcel being
//! written, or a step that depends on it. Both heal the cache as they do
//! for a corrupt blob. Kept verdicts are dropped with the plan they index
//! (a new or removed file, a changed manifest), and by
//! [`crate::Changes::Unknown`]; a build asked to verify the cache
//! ([`crate::unstable::Verify`]) checks every step and reuses none.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::plan::Plan;
use crate::record::InputState;
use crate::record_log::RecordLog;
use crate::report::{Outcome, StepReport};
use crate::stat_cache::StatCache;

/// Per step of a kept plan, in plan order: its last report, if trusted.
pub(crate) struct Verdicts {
    reports: Vec<Option<Arc<StepReport>>>,
    /// Per step, the plan indices of what its report's record depends on
    /// (`None` if one is not in the plan). Carried from build to build with
    /// the report, so that only the steps that ran look their
    /// dependencies up by name: at 100k assets, looking up every step's
    /// was a tenth of a watched edit.
    dependencies: Vec<Option<Box<[usize]>>>,
}

impl Verdicts {
    /// The verdicts of a build of `plan` that produced `steps` (in plan
    /// order), where `reused` says which steps took their report from
    /// [`Verdicts::reusable`] of `previous`: those stay trusted, with the
    /// dependencies `previous` had for them. Every other step's inputs are
    /// looked up in `stats`.
    ///
    /// Made from `previous` in place: a reused step's report is written
    /// only when it is not the kept one already (one that ran is reused as
    /// fresh, a report of its own), so a build that reuses a million steps
    /// touches none of them (rebuilding both lists was 50–65 ms of a
    /// watched edit at 1M assets).
    pub fn after_build(
        plan: &Plan,
        steps: &[Arc<StepReport>],
        reused: &[bool],
        previous: Option<Verdicts>,
        stats: &StatCache,
        package_dir: &Path,
    ) -> Verdicts {
        let n = steps.len();
        let (mut verdicts, carried) = match previous.filter(|v| v.reports.len() == n) {
            Some(previous) => (previous, true),
            None => (
                Verdicts {
                    reports: vec![None; n],
                    dependencies: vec![None; n],
                },
                false,
            ),
        };
        for (i, step) in steps.iter().enumerate() {
            let kept = &mut verdicts.reports[i];
            if carried && reused.get(i) == Some(&true) {
                if !kept.as_ref().is_some_and(|k| Arc::ptr_eq(k, step)) {
                    *kept = Some(Arc::clone(step));
                }
                continue;
            }
            let trusted = trusted(step, stats, package_dir);
            *kept = trusted.then(|| Arc::clone(step));
            verdicts.dependencies[i] = if trusted { indices(step, plan) } else { None };
        }
        verdicts
    }

    /// Stops trusting each step with an input at a path in `changed`, or
    /// under one (a changed path may be a folder). `package_dir` is what
    /// the records' input paths are relative to. A change above the package
    /// folder forgets every step.
    pub fn forget(&mut self, changed: &HashSet<PathBuf>, package_dir: &Path) {
        let mut relative = Vec::new();
        for path in changed {
            match path.strip_prefix(package_dir) {
                // A name that is not UTF-8 is not one a record holds: no
                // input is there.
                Ok(rel) => relative
                    .extend((rel.to_str()).map(|rel| rel.replace(std::path::MAIN_SEPARATOR, "/"))),
                Err(_) if package_dir.starts_with(path) => {
                    self.reports.iter_mut().for_each(|r| *r = None);
                    return;
                }
                Err(_) => {}
            }
        }
        if relative.is_empty() {
            return;
        }
        for slot in &mut self.reports {
            let reached = slot.as_ref().is_some_and(|report| {
                (report.record.iter().flat_map(|r| &r.inputs))
                    .any(|input| relative.iter().any(|c| at_or_under(&input.path, c)))
            });
            if reached {
                *slot = None;
            }
        }
    }

    /// Per step of `plan`, the report to reuse without a check: trusted,
    /// the same record as `records` holds now, and every dependency reused
    /// too. A reused report says the step was fresh.
    ///
    /// Without `records`, the records are taken as the reports say: for
    /// work that stores and records nothing (packing atlases into memory,
    /// [`crate::Pipeline::warm_up`]), where a record another process wrote
    /// since costs nothing but the work. (A record the last build itself
    /// refreshed, a sprite saved within the racy window of its step, is
    /// appended to the log but not yet read back, so the log's copy differs
    /// until the next build: compared, every atlas holding such a sprite
    /// was left cold, and after a checkout, which touches every file,
    /// every atlas was.)
    pub fn reusable(
        &self,
        plan: &Plan,
        records: Option<&RecordLog>,
    ) -> Vec<Option<Arc<StepReport>>> {
        let n = plan.steps.len();
        if self.reports.len() != n {
            return vec![None; n];
        }
        // The steps whose record the log may hold anew: the few it read
        // since the previous build, looked up here once, not each step in
        // that set (or all of them, when the log was read whole).
        let maybe_changed: Option<Vec<bool>> = match records {
            Some(records) => records.changed_since_previous().map(|changed| {
                let mut maybe = vec![false; n];
                for &i in changed.iter().filter_map(|asset| plan.index.get(asset)) {
                    maybe[i] = true;
                }
                maybe
            }),
            None => Some(vec![false; n]),
        };
        // Touching no report where the log says its record is the same:
        // at 1M assets, reading each report (and both names, to compare
        // them) was a tenth of a watched edit. Verdicts are kept only with
        // the plan they index, and a kept report always has a record.
        let mut ok: Vec<bool> = (0..n)
            .map(|i| {
                let Some(report) = &self.reports[i] else {
                    return false;
                };
                debug_assert_eq!(report.asset, plan.steps[i].asset, "verdicts index their plan");
                if maybe_changed.as_ref().is_some_and(|m| !m[i]) {
                    return true;
                }
                report.record.as_ref().is_some_and(|kept| {
                    (records.and_then(|r| r.get(&report.asset)))
                        .is_some_and(|now| Arc::ptr_eq(now, kept) || now == kept)
                })
            })
            .collect();
        // A step is reused only if all it depends on is (a dependency
        // outside the plan is not): passes until nothing changes, as many
        // as the longest chain of dependencies (a sprite and its atlas:
        // two). A step's users were a list each: half a million
        // allocations at 1M assets.
        let mut changed = true;
        while changed {
            changed = false;
            for (i, dependencies) in self.dependencies.iter().enumerate() {
                if ok[i] && dependencies.as_ref().is_none_or(|d| d.iter().any(|&d| !ok[d])) {
                    ok[i] = false;
                    changed = true;
                }
            }
        }
        (self.reports.iter().zip(ok))
            .map(|(report, ok)| {
                let report = report.as_ref().filter(|_| ok)?;
                Some(match report.outcome {
                    Outcome::Fresh if report.verification.is_none() => Arc::clone(report),
                    _ => Arc::new(StepReport::new(
                        report.asset.clone(),
                        report.processor.clone(),
                        Outcome::Fresh,
                        report.record.clone(),
                    )),
                })
            })
            .collect()
    }
}

/// The plan indices of what `step`'s record depends on; `None` if one is
/// not in `plan`, or there is no record.
fn indices(step: &StepReport, plan: &Plan) -> Option<Box<[usize]>> {
    let record = step.record.as_ref()?;
    (record.dependencies.iter())
        .map(|d| plan.index.get(&d.asset).copied())
        .collect()
}

/// Whether `step` may be kept: it succeeded, no input is unsettled, and the
/// stat of every input is kept by `stats`.
fn trusted(step: &StepReport, stats: &StatCache, package_dir: &Path) -> bool {
    let succeeded = matches!(
        step.outcome,
        Outcome::Fresh | Outcome::Fetched | Outcome::Ran { .. }
    );
    let Some(record) = step.record.as_ref().filter(|_| succeeded) else {
        return false;
    };
    record.inputs.iter().all(|input| {
        !matches!(input.state, InputState::Unsettled { .. })
            && stats.holds(&package_dir.join(&input.path))
    })
}

/// Whether the `/`-separated relative path `input` is `changed` or lies
/// under it.
fn at_or_under(input: &str, changed: &str) -> bool {
    changed.is_empty()
        || input
            .strip_prefix(changed)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_reaches_the_path_itself_and_what_is_under_it() {
        assert!(at_or_under("assets/a.png", "assets/a.png"));
        assert!(at_or_under("assets/sprites/a.png", "assets/sprites"));
        assert!(at_or_under("assets/sprites/a.png", ""));
        assert!(!at_or_under("assets/sprites2/a.png", "assets/sprites"));
        assert!(!at_or_under("assets/a.png", "assets/a.png~"));
        assert!(!at_or_under("assets", "assets/a.png"));
    }
}
