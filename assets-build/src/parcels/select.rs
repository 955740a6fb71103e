//! Choosing a parcel's resources: the outputs of the steps its globs
//! select, in plan order, then the pages of the atlases their sprites are
//! on (see the parent module for what a resource is).
//!
//! The steps are taken in runs of 256, on every core: on one core,
//! following 10,000 records' outputs was a tenth of a no-op build. A
//! watched pipeline keeps each parcel's last choice ([`Kept`]): the
//! reports it was made from, and what each run brought. A run whose
//! reports are all the same ones (`Arc::ptr_eq`: a report the verdicts
//! reused unchecked, see `verdicts.rs`), as are those of the atlases its
//! sprites are on, brings what it brought before, moved over, not chosen
//! again. After a one-sprite edit at 10k that is every run but those
//! holding the atlas's sprites.
//!
//! A choice made in place says which resources it chose again
//! ([`Chosen::fresh`]): every other one is the same resource as last time,
//! so the patch of a watched build compares only those with its base
//! (`patch.rs`, [`PatchMemo`]), not every resource.
//!
//! A parcel's steps are those its globs select and those they refer to
//! ([`with_references`]): a model's textures are resources of their own,
//! which the model names, so they go wherever the model goes.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use assets_runtime::format::{KIND_IMAGE, KIND_SPRITE};
use assets_runtime::sprite::SPRITE_LEN;

use super::patch::PatchMemo;
use super::{Planned, Source, resource_name};
use crate::atlas::{FRAMES_LABEL, SPRITES_LABEL, member_label};
use crate::parallel;
use crate::plan::{Group, Plan};
use crate::record::Record;
use crate::report::{OnFailure, StandIn, StepReport};

/// How many steps a run holds.
const RUN: usize = 256;

/// Each parcel's last choice, by parcel name, as a watched pipeline keeps
/// it between builds.
#[derive(Default)]
pub(crate) struct KeptChoices(HashMap<String, Kept>);

impl KeptChoices {
    /// The last choice for the parcel `name`, taken out (it is put back
    /// with [`KeptChoices::keep`]).
    pub(super) fn take(&mut self, name: &str) -> Option<Kept> {
        self.0.remove(name)
    }

    /// Keeps `chosen`, made from the reports `steps` of the steps
    /// `selected`, as the last choice for the parcel `name`. Only a
    /// watched pipeline keeps choices, so only it copies the reports.
    pub(super) fn keep(
        &mut self,
        name: &str,
        chosen: Chosen,
        selected: &[bool],
        steps: &[Arc<StepReport>],
    ) {
        // The last choice's reports, where only those that changed are
        // replaced: at 1M assets, a copy of every report (and the old
        // copy dropped) touched two million reference counts per edit.
        let mut kept_steps = chosen.steps;
        if kept_steps.len() == steps.len() {
            for (kept, step) in kept_steps.iter_mut().zip(steps) {
                if !Arc::ptr_eq(kept, step) {
                    *kept = Arc::clone(step);
                }
            }
        } else {
            kept_steps = steps.to_vec();
        }
        let kept = Kept {
            selected: selected.to_vec(),
            steps: kept_steps,
            runs: chosen.runs,
            planned: chosen.planned,
            patch: chosen.patch,
        };
        self.0.insert(name.to_owned(), kept);
    }
}

/// One parcel's last choice.
pub(super) struct Kept {
    /// Which steps it selected, and the reports it chose from.
    selected: Vec<bool>,
    steps: Vec<Arc<StepReport>>,
    /// What each run brought: how many resources, from which atlases.
    runs: Vec<(usize, BTreeSet<usize>)>,
    /// The resources, in order (the atlases' pages last).
    planned: Vec<Planned>,
    /// The patch last written for these resources, if any.
    patch: Option<Box<PatchMemo>>,
}

/// A parcel's resources, as [`choose`] chose them.
pub(super) struct Chosen {
    /// What each run brought (as [`Kept::runs`]).
    runs: Vec<(usize, BTreeSet<usize>)>,
    planned: Vec<Planned>,
    /// The reports of the last choice it was made from, if any, to be
    /// kept again where they are the same ([`KeptChoices::keep`]).
    steps: Vec<Arc<StepReport>>,
    /// The failed assets whose last good outputs stand in, or that are
    /// left out, sorted ([`OnFailure::StandIn`]).
    pub stand_ins: Vec<StandIn>,
    /// The ranges of `planned` chosen again, in order; `None` when the
    /// list was made anew (see [`Chosen::fresh`]).
    fresh: Option<Vec<Range<usize>>>,
    /// The patch last written for the parcel, kept with the choice: it
    /// describes the same resources where `fresh` is known, and is taken
    /// and replaced by the parcel stage.
    pub patch: Option<Box<PatchMemo>>,
}

impl Chosen {
    /// The resources, sorted as planned.
    pub(super) fn planned(&self) -> &[Planned] {
        &self.planned
    }

    /// The resources, to read their frames ([`super::FromStore::resolve`]).
    pub(super) fn planned_mut(&mut self) -> &mut [Planned] {
        &mut self.planned
    }

    /// Which resources may differ from the last choice's, if it was made
    /// in place: the runs chosen again (same names, at the same places)
    /// and the atlases' pages. Every resource outside them is the last
    /// choice's, unchanged. `None` when the list was made anew.
    pub(super) fn fresh(&self) -> Option<&[Range<usize>]> {
        self.fresh.as_deref()
    }
}

/// `selected`, with every step that a selected step refers to (see
/// [`crate::record::Record::references`]), and so on: a parcel
/// holding a model holds the textures it names, whatever its globs say.
/// Borrowed when no selected step refers to anything.
pub(super) fn with_references<'s>(
    selected: &'s [bool],
    plan: &Plan,
    steps: &[Arc<StepReport>],
) -> Cow<'s, [bool]> {
    let references = |i: usize| {
        let record = steps[i].record.as_deref();
        record.into_iter().flat_map(|r| &r.references)
    };
    let mut todo: Vec<usize> = (0..steps.len())
        .filter(|&i| selected[i] && references(i).next().is_some())
        .collect();
    if todo.is_empty() {
        return Cow::Borrowed(selected);
    }
    let mut with = selected.to_vec();
    while let Some(i) = todo.pop() {
        for asset in references(i) {
            if let Some(&t) = plan.index.get(asset)
                && !with[t]
            {
                with[t] = true;
                todo.push(t);
            }
        }
    }
    Cow::Owned(with)
}

/// The resources of the parcel that selects the steps `selected` (see
/// [`Plan::selected`]), sorted as planned, taking from `last` (the same
/// parcel's last choice) every run whose reports are the same; or the
/// failed and skipped steps that stop it from being written.
pub(super) fn choose(
    selected: &[bool],
    plan: &Plan,
    steps: &[Arc<StepReport>],
    last: Option<Kept>,
    on_failure: OnFailure,
) -> Result<Chosen, Vec<String>> {
    let runs: Vec<Range<usize>> = (0..plan.steps.len())
        .step_by(RUN)
        .map(|start| start..(start + RUN).min(plan.steps.len()))
        .collect();
    let last = last.filter(|k| {
        k.selected == selected && k.steps.len() == steps.len() && k.runs.len() == runs.len()
    });
    let same = |i: usize, k: &Kept| Arc::ptr_eq(&k.steps[i], &steps[i]);
    let indexed: Vec<(usize, Range<usize>)> = runs.into_iter().enumerate().collect();
    // `None`: the run brings what it brought before.
    let picked = parallel::map(&indexed, |(r, run)| {
        let reusable = last.as_ref().is_some_and(|k| {
            run.clone().all(|i| same(i, k)) && k.runs[*r].1.iter().all(|&a| same(a, k))
        });
        (!reusable).then(|| select_run(selected, plan, steps, run.clone(), on_failure))
    });
    let (before, before_runs, last_steps, last_patch) = match last {
        Some(k) => (k.planned, k.runs, k.steps, k.patch),
        None => (Vec::new(), Vec::new(), Vec::new(), None),
    };
    // When every run chosen again brings as many resources as before (an
    // edit: the same assets, other contents), they take their old places
    // in the last choice's list, and the runs kept stay where they are: a
    // million resources are not moved into a new list on every watched
    // edit (75–300 ms at 1M files, most of it first touches of the new
    // list's memory).
    let in_place = !before_runs.is_empty()
        && (picked.iter().zip(&before_runs))
            .all(|(p, (n, _))| p.as_ref().is_none_or(|p| p.planned.len() == *n));
    let (mut planned, mut before, old_pages) = if in_place {
        let mut planned = before;
        // Without the atlases' pages, which come last (kept aside to
        // compare their names with the new ones').
        let old_pages = planned.split_off(before_runs.iter().map(|(n, _)| n).sum());
        (planned, Vec::new().into_iter(), old_pages)
    } else {
        let planned = Vec::with_capacity(before.len().max(steps.len()));
        (planned, before.into_iter(), Vec::new())
    };
    // With `in_place`: the ranges chosen again, while every name stays.
    let mut fresh = in_place.then(Vec::new);
    let mut kept_runs = Vec::with_capacity(picked.len());
    let mut failed = Vec::new();
    let mut stand_ins = Vec::new();
    let mut atlases = BTreeSet::new();
    // Where the run's resources start in the last choice's list.
    let mut at = 0;
    for (r, p) in picked.into_iter().enumerate() {
        let was = before_runs.get(r).map_or(0, |(n, _)| *n);
        match p {
            None => {
                let (n, used) = &before_runs[r];
                if !in_place {
                    planned.extend(before.by_ref().take(*n));
                }
                atlases.extend(used);
                kept_runs.push((*n, used.clone()));
            }
            Some(p) => {
                kept_runs.push((p.planned.len(), p.atlases.clone()));
                if in_place {
                    let mut renamed = false;
                    for (slot, new) in planned[at..at + was].iter_mut().zip(p.planned) {
                        renamed |= slot.name != new.name;
                        *slot = new;
                    }
                    match &mut fresh {
                        Some(_) if renamed => fresh = None,
                        Some(ranges) => ranges.push(at..at + was),
                        None => {}
                    }
                } else {
                    before.by_ref().take(was).for_each(drop);
                    planned.extend(p.planned);
                }
                failed.extend(p.failed);
                stand_ins.extend(p.stand_ins);
                atlases.extend(p.atlases);
            }
        }
        at += was;
    }
    let pages_at = planned.len();
    for atlas in atlases {
        let Some(r) = built(&steps[atlas], on_failure) else {
            continue;
        };
        // Its pages; the frame table and completed member resources are
        // planned with their members above.
        for o in r.outputs.iter().filter(|o| o.kind == KIND_IMAGE) {
            planned.push(Planned {
                name: resource_name(&r.asset, &o.label),
                kind: o.kind.clone(),
                source: Source::Blob {
                    hash: o.hash,
                    len: o.size,
                },
                shows: None,
                compression: None,
                alias_of: None,
            });
        }
    }
    failed.sort();
    failed.dedup();
    if !failed.is_empty() {
        return Err(failed);
    }
    stand_ins.sort();
    stand_ins.dedup();
    // The pages, fresh too, unless they are other pages at those places
    // (an atlas with one page more, another with one fewer).
    fn name(p: &Planned) -> &str {
        &p.name
    }
    if fresh.is_some() && planned[pages_at..].iter().map(name).ne(old_pages.iter().map(name)) {
        fresh = None;
    }
    if let Some(ranges) = &mut fresh {
        ranges.push(pages_at..planned.len());
    }
    Ok(Chosen {
        runs: kept_runs,
        planned,
        steps: last_steps,
        stand_ins,
        patch: last_patch.filter(|_| fresh.is_some()),
        fresh,
    })
}

/// The record whose outputs a parcel takes for `step`: its own, else
/// (writing parcels anyway) the last good one standing in for it.
fn built(step: &StepReport, on_failure: OnFailure) -> Option<&Record> {
    match (&step.record, on_failure) {
        (Some(r), _) => Some(r),
        (None, OnFailure::StandIn) => step.stand_in.as_deref(),
        (None, OnFailure::KeepParcel) => None,
    }
}

/// What the steps of one run bring to a parcel, in plan order: resources,
/// the failed or skipped assets that stop it, and the atlases whose pages
/// it needs.
struct Picked {
    planned: Vec<Planned>,
    failed: Vec<String>,
    stand_ins: Vec<StandIn>,
    atlases: BTreeSet<usize>,
}

/// [`choose`] over the steps `run` of the plan (every atlas's pages aside).
fn select_run(
    selected: &[bool],
    plan: &Plan,
    steps: &[Arc<StepReport>],
    run: Range<usize>,
    on_failure: OnFailure,
) -> Picked {
    let mut planned = Vec::new();
    let mut failed = Vec::new();
    let mut stand_ins = Vec::new();
    let mut atlases = BTreeSet::new();
    // The record step `i` brings, noting a failed one: as what stops the
    // parcel, or as what stands in or is left out.
    let mut record = |i: usize| {
        let step = &steps[i];
        let r = built(step, on_failure);
        if step.record.is_none() {
            let asset = step.asset.to_string();
            match (on_failure, r) {
                (OnFailure::KeepParcel, _) => failed.push(asset),
                (OnFailure::StandIn, Some(_)) => stand_ins.push(StandIn::LastGood { asset }),
                (OnFailure::StandIn, None) => stand_ins.push(StandIn::LeftOut { asset }),
            }
        }
        r
    };
    for (i, step) in run.clone().zip(&plan.steps[run]) {
        if !selected[i] {
            continue;
        }
        let Some(own) = record(i) else {
            continue;
        };
        if let Group::Sprite { atlas, slot } = step.group {
            atlases.insert(atlas);
            let Some(packed) = record(atlas) else {
                continue;
            };
            // A member with several sprites (a font): the atlas completed
            // its resource; a sprite: its frame, a slice of the table.
            let several = own.output(SPRITES_LABEL).is_some();
            let (kind, source) = match (several, packed.output(FRAMES_LABEL)) {
                (true, _) => match packed.output(&member_label(slot)) {
                    Some(o) => (
                        o.kind.clone(),
                        Source::Blob {
                            hash: o.hash,
                            len: o.size,
                        },
                    ),
                    None => continue,
                },
                (false, Some(table)) => (
                    KIND_SPRITE.to_owned(),
                    Source::Slice {
                        hash: table.hash,
                        start: slot * SPRITE_LEN,
                        len: SPRITE_LEN,
                    },
                ),
                (false, None) => continue,
            };
            planned.push(Planned {
                name: step.asset.as_str().to_owned(),
                kind,
                source,
                shows: Some(own.outputs_hash()),
                compression: step.compression,
                alias_of: None,
            });
            continue;
        }
        for o in &own.outputs {
            planned.push(Planned {
                name: resource_name(&step.asset, &o.label),
                kind: o.kind.clone(),
                source: Source::Blob {
                    hash: o.hash,
                    len: o.size,
                },
                shows: None,
                compression: step.compression,
                alias_of: None,
            });
        }
    }
    Picked {
        planned,
        failed,
        stand_ins,
        atlases,
    }
}
