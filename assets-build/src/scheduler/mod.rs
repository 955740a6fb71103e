//! The scheduler: runs every step once, in parallel, building dependencies
//! on demand.
//!
//! Workers take steps in [`Plan::run_order`] from a shared counter. A step that needs
//! another asset (a dependency found while its processor runs, or one listed in
//! its record while checking freshness) calls [`Scheduler::ensure`]:
//!
//! - done: the result is returned at once;
//! - not started: the requesting thread claims it and runs it inline, so a
//!   chain of any depth progresses on one thread and never waits for a free
//!   worker (no deadlock on 2 cores);
//! - running on another thread: the requester waits for it.
//!
//! Before waiting, the requester follows the "waits for" edges from the step it
//! wants; if they lead back to itself, that is a cycle, reported as an error
//! naming every asset on it instead of a hang. Inline runs add their edge too,
//! so a cycle within one thread is found the same way.
//!
//! Processors are called inside `catch_unwind`: a panicking processor fails its
//! asset, not the build. So is the caller's event handler, on the workers'
//! threads: its panic is not left to kill a worker holding a step that
//! others wait for (a build that hung, lock held, when a progress printer's
//! pipe closed); the build finishes without calling the handler again, and
//! the panic goes on from there, in the caller's thread.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::asset_path::AssetPath;
use crate::event::{Event, EventHandler};
use crate::freshness::{self, DependencyState, Verdict};
use crate::hash::ContentHash;
use crate::manifest::Manifest;
use crate::memory_budget::MemoryBudget;
use crate::parallel;
use crate::parcels::ParcelBound;
use crate::plan::Plan;
use crate::manifest::Settings;
use crate::processor::{ProcessError, Registry, context::Dependencies};
use crate::record::{DependencyUse, DirtyReason, Record};
use crate::record_log::RecordLog;
use crate::remote::{self, Remote};
use crate::report::{OnFailure, Outcome, StepReport};
use crate::stat_cache::StatCache;
use crate::store::Store;
use crate::verify::Verify;

mod fetch;
mod renames;
mod run;
mod temporary;

pub(crate) use temporary::temporary_name;

use renames::RenameKey;
use run::Failure;

/// Stack size of worker threads: inline dependency chains recurse.
const WORKER_STACK: usize = 64 << 20;
/// How often the running steps' deadlines are checked.
const DEADLINE_CHECK: Duration = Duration::from_millis(100);
/// How long past its deadline a step is left to give up by itself (as the
/// `command` processor does, killing its tool: an error that fails only
/// that step) before the build reports it overdue.
const DEADLINE_GRACE: Duration = Duration::from_secs(2);

pub(crate) struct Scheduler<'a> {
    pub plan: &'a Plan,
    pub manifest: &'a Manifest,
    /// The processors, for the temporary builds steps ask for.
    registry: &'a Registry,
    pub store: &'a Store,
    pub variant: &'a str,
    pub records: &'a RecordLog,
    events: EventHandler<'a>,
    /// The first panic of `events`, resumed once the workers are done.
    events_panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    events_panicked: std::sync::atomic::AtomicBool,
    /// Each root's directory with links resolved, once per build.
    real_roots: Vec<PathBuf>,
    /// Which fresh steps to build again and compare.
    verify: Option<Verify>,
    /// The remote cache, asked when the local one cannot serve a step.
    remote: Option<&'a Remote>,
    /// The stats a watched pipeline keeps between builds.
    stats: Option<&'a StatCache>,
    /// Per step, the outputs a parcel of this build will hold whole,
    /// stored only if it does not ([`Store::put_deferred`]).
    parcel_bound: Vec<ParcelBound>,
    /// The result keys hashed for the remote's lookups, by step.
    result_keys: OnceLock<HashMap<usize, ContentHash>>,
    /// Whether a failed step's last good record stands in for it.
    on_failure: OnFailure,
    /// The records of assets no longer planned, by what a renamed file's
    /// step would match them on (see [`Scheduler::renamed`]); made when
    /// first needed.
    vanished: OnceLock<HashMap<RenameKey, Arc<Record>>>,
    /// What the steps may hold at once for large decodes.
    memory: MemoryBudget,
    /// How long a step may run unless its rule says (see
    /// [`Scheduler::watch_deadlines`]).
    step_timeout: Duration,
    /// The temporary builds asked for in this build (see `temporary.rs`).
    temps: Mutex<HashMap<AssetPath, temporary::Temporary>>,
    state: Mutex<State>,
    done: Condvar,
}

struct State {
    slots: Vec<Slot>,
    /// Step → the step it is waiting for (or running inline).
    waits_for: HashMap<usize, usize>,
    /// Per step, whether its report is the one [`Scheduler::reusing`]
    /// took (empty when it took none).
    reused: Vec<bool>,
}

enum Slot {
    Pending,
    /// Since when.
    Running(Instant),
    Done(Arc<StepReport>),
}

impl<'a> Scheduler<'a> {
    pub fn new(
        plan: &'a Plan,
        manifest: &'a Manifest,
        registry: &'a Registry,
        store: &'a Store,
        variant: &'a str,
        records: &'a RecordLog,
        events: EventHandler<'a>,
    ) -> Scheduler<'a> {
        let slots = plan.steps.iter().map(|_| Slot::Pending).collect();
        let real_roots = manifest
            .roots
            .iter()
            .map(|r| std::fs::canonicalize(&r.dir).unwrap_or_else(|_| r.dir.clone()))
            .collect();
        Scheduler {
            plan,
            manifest,
            registry,
            store,
            variant,
            records,
            events,
            events_panic: Mutex::new(None),
            events_panicked: Default::default(),
            real_roots,
            verify: None,
            remote: None,
            stats: None,
            parcel_bound: Vec::new(),
            result_keys: OnceLock::new(),
            on_failure: OnFailure::KeepParcel,
            vanished: OnceLock::new(),
            memory: MemoryBudget::new(crate::memory_budget::DEFAULT_MEMORY_BUDGET),
            step_timeout: crate::manifest::DEFAULT_STEP_TIMEOUT,
            temps: Mutex::new(HashMap::new()),
            state: Mutex::new(State {
                slots,
                waits_for: HashMap::new(),
                reused: Vec::new(),
            }),
            done: Condvar::new(),
        }
    }

    /// Steps may hold `bytes` at once for large decodes (see
    /// [`crate::memory_budget`]).
    pub fn with_memory_budget(mut self, bytes: u64) -> Scheduler<'a> {
        self.memory = MemoryBudget::new(bytes);
        self
    }

    /// Steps whose rule gives no `timeout` may run this long.
    pub fn with_step_timeout(mut self, timeout: Duration) -> Scheduler<'a> {
        self.step_timeout = timeout;
        self
    }

    /// Checks the fresh steps `verify` selects (see [`crate::unstable::verify`]).
    pub fn verifying(mut self, verify: Option<Verify>) -> Scheduler<'a> {
        self.verify = verify;
        self
    }

    /// With [`OnFailure::StandIn`], a failed or skipped step's last good
    /// record stands in for it (in its report for the parcels, and for the
    /// steps that can do without it, see [`Context::dependency_if_built`]:
    /// an atlas packs a broken sprite's last good pixels), and a step whose
    /// dependency failed runs anyway rather than being skipped, so that such
    /// a step can go on (the others fail asking for it, and are skipped).
    pub fn on_failure(mut self, on_failure: OnFailure) -> Scheduler<'a> {
        self.on_failure = on_failure;
        self
    }

    /// Asks `remote` for the steps the local cache cannot serve, and
    /// uploads the steps that run if it takes uploads.
    pub fn with_remote(mut self, remote: Option<&'a Remote>) -> Scheduler<'a> {
        self.remote = remote;
        self
    }

    /// Takes inputs' stats from `stats` where it keeps them (a watched
    /// pipeline's; see [`StatCache`]).
    pub fn with_stats(mut self, stats: Option<&'a StatCache>) -> Scheduler<'a> {
        self.stats = stats;
        self
    }

    /// Leaves the outputs `bound` says a parcel will hold whole (by step)
    /// in memory for the parcel stage, instead of storing them: see
    /// [`Store::put_deferred`]. The caller then calls
    /// [`Store::flush_deferred`].
    pub fn deferring(mut self, bound: Vec<ParcelBound>) -> Scheduler<'a> {
        self.parcel_bound = bound;
        self
    }

    /// Which of step `i`'s outputs a parcel of this build will hold whole.
    fn parcel_bound(&self, i: usize) -> ParcelBound {
        self.parcel_bound
            .get(i)
            .copied()
            .unwrap_or(ParcelBound::None)
    }

    /// Takes `kept[i]`, where there is one, as step `i`'s report without
    /// checking it (see `verdicts.rs`). Moved in, not copied: at 1M assets
    /// each copy of a million reports is a million reference counts
    /// touched in scattered memory.
    pub fn reusing(mut self, kept: Vec<Option<Arc<StepReport>>>) -> Scheduler<'a> {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        state.reused = kept.iter().map(Option::is_some).collect();
        for (slot, kept) in state.slots.iter_mut().zip(kept) {
            if let Some(report) = kept {
                *slot = Slot::Done(report);
            }
        }
        self
    }

    /// Per step, whether its report is the one [`Scheduler::reusing`]
    /// took: not run, nor run again by [`Scheduler::rebuild`].
    pub fn reused(&self) -> Vec<bool> {
        let state = self.lock();
        let mut reused = state.reused.clone();
        reused.resize(state.slots.len(), false);
        reused
    }

    /// Runs every step on `jobs` threads; returns reports in plan order.
    pub fn run(&self, jobs: usize) -> Vec<Arc<StepReport>> {
        if let Some(remote) = self.remote {
            // Steps without a local record of their key will ask the
            // remote: ask for all of them now, their asset files hashed on
            // every core, the requests in flight together.
            let asking: Vec<usize> = (0..self.plan.steps.len())
                .filter(|&i| {
                    let step = &self.plan.steps[i];
                    self.records
                        .get(&step.asset)
                        .is_none_or(|r| r.key != step.key)
                })
                .collect();
            let keys = parallel::map(&asking, |&i| self.result_key(i));
            self.prefetch(remote, &asking, &keys);
            let _ = self.result_keys.set(asking.into_iter().zip(keys).collect());
        }
        let mut order = self.plan.run_order();
        {
            let state = self.lock();
            order.retain(|&i| matches!(state.slots[i], Slot::Pending));
            // Told under the lock, which no worker wants yet: copying the
            // reports out first touched a million reference counts at 1M
            // assets. The handler cannot reach the scheduler.
            for slot in &state.slots {
                if let Slot::Done(step) = slot {
                    self.emit(&Event::Finished { step });
                }
            }
        }
        self.run_steps(&order, jobs);
        self.reports()
    }

    /// Runs `steps` alone, and the steps they ask for as they run (see
    /// [`crate::unstable::BuildOptions::only`]); the reports of the steps that ran or
    /// were reused, in plan order.
    pub fn run_only(&self, steps: &[usize], jobs: usize) -> Vec<Arc<StepReport>> {
        self.run_steps(steps, jobs);
        let state = self.lock();
        (state.slots.iter())
            .filter_map(|slot| match slot {
                Slot::Done(r) => Some(Arc::clone(r)),
                _ => None,
            })
            .collect()
    }

    /// Runs `steps` again (after a build found some of their output blobs
    /// corrupt and removed them: their freshness check now says
    /// `output-missing`, so they rerun); returns every report in plan order.
    pub fn rebuild(&self, steps: &[usize], jobs: usize) -> Vec<Arc<StepReport>> {
        {
            let mut state = self.lock();
            for &i in steps {
                state.slots[i] = Slot::Pending;
                if let Some(reused) = state.reused.get_mut(i) {
                    *reused = false;
                }
            }
        }
        self.run_steps(steps, jobs);
        self.reports()
    }

    fn run_steps(&self, steps: &[usize], jobs: usize) {
        let next = AtomicUsize::new(0);
        let worker = || {
            while let Some(&i) = steps.get(next.fetch_add(1, Ordering::Relaxed)) {
                if self.claim(i) {
                    self.execute_and_publish(i);
                }
            }
        };
        let workers = jobs.clamp(1, steps.len().max(1));
        // How many workers are still at it, and a signal when one is done:
        // the deadline watch ends with the last, not at its next check (a
        // no-op build would otherwise wait out the check's period).
        let working = (Mutex::new(workers), Condvar::new());
        let worker = || {
            worker();
            *working.0.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
            working.1.notify_all();
        };
        std::thread::scope(|s| {
            for _ in 0..workers {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(s, worker)
                    .expect("could not start a worker thread");
            }
            s.spawn(|| self.watch_deadlines(&working));
        });
        let panicked = self.events_panic.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(panic) = panicked {
            std::panic::resume_unwind(panic);
        }
    }

    /// Tells the caller's event handler of `event`, unless it panicked
    /// before (see the module docs).
    fn emit(&self, event: &Event<'_>) {
        // No lock on the way: a no-op build tells of every step.
        if self.events_panicked.load(Ordering::Relaxed) {
            return;
        }
        let call = std::panic::AssertUnwindSafe(|| (self.events)(event));
        if let Err(panic) = std::panic::catch_unwind(call) {
            self.events_panicked.store(true, Ordering::Relaxed);
            let mut first = self.events_panic.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(panic);
        }
    }

    /// Until every worker is done: reports each step that runs past its
    /// deadline and [`DEADLINE_GRACE`] ([`Event::Overdue`], once a step), not counting the time
    /// it waits for another step it needs. A running step cannot be
    /// stopped from outside (threads cannot be killed); the front-ends end
    /// the process, which is safe at any moment (see the store's crash
    /// safety), after naming the asset.
    fn watch_deadlines(&self, working: &(Mutex<usize>, Condvar)) {
        let mut reported = HashSet::new();
        loop {
            let left = working.0.lock().unwrap_or_else(|p| p.into_inner());
            let (left, _) = (working.1)
                .wait_timeout_while(left, DEADLINE_CHECK, |left| *left > 0)
                .unwrap_or_else(|p| p.into_inner());
            if *left == 0 {
                return;
            }
            drop(left);
            let overdue: Vec<(usize, Duration)> = {
                let state = self.lock();
                (state.slots.iter().enumerate())
                    .filter_map(|(i, slot)| match slot {
                        Slot::Running(since) => Some((i, since.elapsed())),
                        _ => None,
                    })
                    .filter(|&(i, elapsed)| {
                        elapsed > self.timeout_of(i) + DEADLINE_GRACE
                            && !state.waits_for.contains_key(&i)
                            && !reported.contains(&i)
                    })
                    .collect()
            };
            for (i, elapsed) in overdue {
                reported.insert(i);
                let step = &self.plan.steps[i];
                self.emit(&Event::Overdue {
                    asset: &step.asset,
                    processor: step.processor.name(),
                    elapsed,
                    timeout: self.timeout_of(i),
                });
            }
        }
    }

    /// How long step `i` may run: its rule's `timeout`, or the build's.
    fn timeout_of(&self, i: usize) -> Duration {
        (self.plan.steps[i].rule)
            .and_then(|r| self.manifest.rules[r].timeout)
            .unwrap_or(self.step_timeout)
    }

    fn reports(&self) -> Vec<Arc<StepReport>> {
        let state = self.lock();
        state
            .slots
            .iter()
            .map(|s| match s {
                Slot::Done(r) => Arc::clone(r),
                _ => unreachable!("every step is done when all workers have finished"),
            })
            .collect()
    }

    /// After step `requester` found a dependency's output corrupt: marks
    /// every dependency it used whose outputs are no longer all in the store
    /// (the corrupt blob was removed when found) to be built again, and
    /// builds them. Whether any was.
    fn heal_dependencies(&self, requester: usize, used: &[DependencyUse]) -> bool {
        let damaged: Vec<usize> = {
            let mut state = self.lock();
            let mut damaged = Vec::new();
            for u in used {
                let Some(&i) = self.plan.index.get(&u.asset) else {
                    continue;
                };
                let Slot::Done(report) = &state.slots[i] else {
                    continue;
                };
                let missing = report
                    .record
                    .as_ref()
                    .is_some_and(|r| r.outputs.iter().any(|o| !self.store.has(&o.hash, o.size)));
                if missing {
                    state.slots[i] = Slot::Pending;
                    damaged.push(i);
                }
            }
            damaged
        };
        for &i in &damaged {
            let _ = self.ensure(requester, i);
        }
        !damaged.is_empty()
    }

    /// The plan index of `asset`.
    fn index_of(&self, asset: &AssetPath) -> Result<usize, ProcessError> {
        (self.plan.index.get(asset).copied()).ok_or_else(|| ProcessError::NoSuchAsset {
            asset: asset.clone(),
        })
    }

    /// The record of step `target` (`asset`) once it is built, for
    /// `requester` (see [`Dependencies::record_of`]).
    fn record_at(
        &self,
        requester: usize,
        target: usize,
        asset: &AssetPath,
        stand_in: bool,
    ) -> Result<Arc<Record>, ProcessError> {
        let report = self
            .ensure(requester, target)
            .map_err(|cycle| ProcessError::Cycle { cycle })?;
        let stand_in = || match self.on_failure {
            OnFailure::StandIn if stand_in => report.stand_in.clone(),
            _ => None,
        };
        (report.record.clone())
            .or_else(stand_in)
            .ok_or_else(|| ProcessError::DependencyFailed {
                asset: asset.clone(),
            })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held, so poison cannot hide a bug.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claim(&self, i: usize) -> bool {
        let mut state = self.lock();
        let pending = matches!(state.slots[i], Slot::Pending);
        if pending {
            state.slots[i] = Slot::Running(Instant::now());
        }
        pending
    }

    fn execute_and_publish(&self, i: usize) -> Arc<StepReport> {
        let report = Arc::new(self.execute(i));
        self.emit(&Event::Finished { step: &report });
        let mut state = self.lock();
        state.slots[i] = Slot::Done(Arc::clone(&report));
        self.done.notify_all();
        report
    }

    /// Step `target`'s report, building it first if needed, for step `requester`.
    fn ensure(&self, requester: usize, target: usize) -> Result<Arc<StepReport>, Vec<AssetPath>> {
        let mut state = self.lock();
        loop {
            match &state.slots[target] {
                Slot::Done(r) => return Ok(Arc::clone(r)),
                Slot::Pending => {
                    state.slots[target] = Slot::Running(Instant::now());
                    state.waits_for.insert(requester, target);
                    drop(state);
                    let report = self.execute_and_publish(target);
                    self.lock().waits_for.remove(&requester);
                    return Ok(report);
                }
                Slot::Running(_) => {
                    if let Some(cycle) = self.find_cycle(&state, requester, target) {
                        return Err(cycle);
                    }
                    state.waits_for.insert(requester, target);
                    state = self.done.wait(state).unwrap_or_else(|p| p.into_inner());
                    state.waits_for.remove(&requester);
                }
            }
        }
    }

    /// The loop `requester -> target -> … -> requester`, if waiting would close one.
    fn find_cycle(&self, state: &State, requester: usize, target: usize) -> Option<Vec<AssetPath>> {
        let mut path = vec![requester];
        let mut at = target;
        while path.len() <= state.slots.len() {
            path.push(at);
            if at == requester {
                return Some(
                    path.into_iter()
                        .map(|i| self.plan.steps[i].asset.clone())
                        .collect(),
                );
            }
            at = *state.waits_for.get(&at)?;
        }
        None
    }

    fn execute(&self, i: usize) -> StepReport {
        let mut report = self.build_step(i);
        if report.record.is_none() && self.on_failure == OnFailure::StandIn {
            report.stand_in = self.stand_in(i);
        }
        report
    }

    /// The last good record of failed or skipped step `i`, if its outputs
    /// are all still in the store. The record log keeps it: a failure
    /// writes no record. An atlas's frames are the slots of its member
    /// list, so only a record of the same list (the same key) lines up
    /// with its sprites.
    fn stand_in(&self, i: usize) -> Option<Arc<Record>> {
        let step = &self.plan.steps[i];
        let record = self.records.get(&step.asset)?;
        if step.asset.atlas_name().is_some() && record.key != step.key {
            return None;
        }
        let stored = (record.outputs.iter()).all(|o| self.store.has(&o.hash, o.size));
        stored.then(|| Arc::clone(record))
    }

    /// Whether a step whose dependency failed (with nothing standing in)
    /// runs anyway rather than being skipped.
    fn runs_without_failed(&self) -> bool {
        self.on_failure == OnFailure::StandIn
    }

    fn build_step(&self, i: usize) -> StepReport {
        let step = &self.plan.steps[i];
        let report = |outcome, record| {
            StepReport::new(
                step.asset.clone(),
                step.processor.name().to_owned(),
                outcome,
                record,
            )
        };
        let fresh_report = |record: Arc<Record>| StepReport {
            verification: self
                .verify
                .filter(|v| v.selects(&step.asset))
                .map(|_| self.reproduce(i, &record)),
            ..report(Outcome::Fresh, Some(record))
        };
        let fresh = |record: Arc<Record>| {
            self.share_fresh(i, &record);
            fresh_report(record)
        };
        let adopt = |record: Record| match self.records.append(self.store, &record) {
            Ok(()) => fresh(Arc::new(record)),
            Err(e) => report(
                Outcome::Failed {
                    reason: None,
                    error: e.into(),
                },
                None,
            ),
        };
        // This log's record of the step; if it is not fresh, the same step
        // built on another platform (adopted into this log if fresh there);
        // else the reason to run, from this log's record.
        let own = self.records.get(&step.asset);
        let mut reason = None;
        if let Some(record) = own.filter(|r| r.key == step.key) {
            match self.check(i, record) {
                Verdict::Fresh(None) => return fresh(Arc::clone(record)),
                Verdict::Fresh(Some(refreshed)) => return adopt(*refreshed),
                Verdict::Stale(why) => reason = Some(why),
                Verdict::DependencyFailed(asset) if self.runs_without_failed() => {
                    reason = Some(DirtyReason::DependencyChanged { asset });
                }
                Verdict::DependencyFailed(dependency) => {
                    return report(Outcome::Skipped { dependency }, None);
                }
            }
        }
        for shared in self.records.shared(&step.asset, &step.key) {
            match self.check(i, &shared) {
                Verdict::Fresh(None) => return adopt((*shared).clone()),
                Verdict::Fresh(Some(refreshed)) => return adopt(*refreshed),
                Verdict::Stale(_) | Verdict::DependencyFailed(_) => {}
            }
        }
        if own.is_none()
            && let Some(record) = self.renamed(i)
        {
            return adopt(record);
        }
        if let Some(previous) = own.filter(|r| r.key != step.key)
            && let Some(record) = self.atlas_renamed(i, previous)
        {
            return adopt(record);
        }
        if let Some(report) = self.fetch(i) {
            return report;
        }
        let reason = match (reason, own) {
            (Some(reason), _) => reason,
            (None, None) => DirtyReason::NoRecord,
            (None, Some(record)) => match self.check(i, record) {
                Verdict::Stale(why) => why,
                Verdict::DependencyFailed(asset) if self.runs_without_failed() => {
                    DirtyReason::DependencyChanged { asset }
                }
                Verdict::DependencyFailed(dependency) => {
                    return report(Outcome::Skipped { dependency }, None);
                }
                // A record under another key cannot be fresh.
                Verdict::Fresh(_) => DirtyReason::NoRecord,
            },
        };
        self.emit(&Event::Processing {
            asset: &step.asset,
            processor: step.processor.name(),
            reason: &reason,
        });
        match self.process(i, &reason) {
            Ok(record) => report(Outcome::Ran { reason }, Some(Arc::new(record))),
            Err(Failure::Dependency(dependency)) => report(Outcome::Skipped { dependency }, None),
            Err(Failure::Error(error)) => report(
                Outcome::Failed {
                    reason: Some(reason),
                    error,
                },
                None,
            ),
        }
    }

    fn check(&self, i: usize, record: &Record) -> Verdict {
        let current = self.plan.current(i, &self.manifest.package_dir, self.stats);
        freshness::check(record, &current, self.store, |asset| {
            self.dependency_state(i, asset)
        })
    }

    /// What dependency `asset` of step `i` is now, built first if needed.
    fn dependency_state(&self, i: usize, asset: &AssetPath) -> DependencyState {
        if asset.is_temporary() {
            return self.temporary_state(i, asset);
        }
        match self.record_of(i, asset, false) {
            Ok(r) => DependencyState::Built(r.outputs_hash()),
            Err(ProcessError::NoSuchAsset { .. }) => DependencyState::Gone,
            Err(ProcessError::Cycle { .. }) => DependencyState::Cycle,
            Err(_) => DependencyState::Failed,
        }
    }

    /// Uploads fresh step `i` to a remote that takes uploads and lacks it.
    fn share_fresh(&self, i: usize, record: &Arc<Record>) {
        let Some(remote) = self.remote.filter(|r| r.writes()) else {
            return;
        };
        let Some(stored) = record
            .outputs
            .iter()
            .map(|o| self.store.source(&o.hash))
            .collect()
        else {
            return;
        };
        let outputs = remote::Outputs::Stored(stored);
        remote.upload(self.result_key(i), (**record).clone(), outputs);
    }
}

impl Dependencies for Scheduler<'_> {
    fn record_of(
        &self,
        requester: usize,
        asset: &AssetPath,
        stand_in: bool,
    ) -> Result<Arc<Record>, ProcessError> {
        let target = self.index_of(asset)?;
        self.record_at(requester, target, asset, stand_in)
    }

    fn record_of_near(
        &self,
        requester: usize,
        asset: &AssetPath,
        stand_in: bool,
        near: &mut usize,
    ) -> Result<Arc<Record>, ProcessError> {
        // The step after the one asked for last is tried first: an atlas
        // asks for its sprites in name order, which is plan order, and a
        // name compared next to the last one costs less than a lookup in
        // the plan's index (at 1M assets, cache misses on a table of a
        // million: a tenth of a watched edit, over an atlas's 137,000).
        let next = near.wrapping_add(1);
        let target = match self.plan.steps.get(next) {
            Some(step) if step.asset == *asset => next,
            _ => self.index_of(asset)?,
        };
        *near = target;
        self.record_at(requester, target, asset, stand_in)
    }

    fn temporary(
        &self,
        requester: usize,
        processor: &str,
        settings: Settings,
    ) -> Result<Arc<Record>, ProcessError> {
        Scheduler::temporary(self, requester, processor, settings)
    }

    fn runs_without_failed(&self) -> bool {
        Scheduler::runs_without_failed(self)
    }

    fn memory(&self) -> &MemoryBudget {
        &self.memory
    }

    fn discovered(&self, requester: usize, asset: &AssetPath) -> bool {
        let root = self.plan.steps[requester].root;
        self.plan
            .index
            .get(asset)
            .is_some_and(|&i| self.plan.steps[i].root == root && asset.atlas_name().is_none())
    }
}
