//! [`Pipeline`]: one build, from `Cargo.toml` to cached outputs.
//!
//! ```text
//! lock cache → load manifest → discover → plan → schedule (check | process)
//!            → write parcels → report
//! ```
//!
//! Fatal problems (bad manifest, unreadable roots, a cache that cannot be
//! written) are a [`BuildError`]; a failing asset is not: it is an
//! [`Outcome::Failed`](crate::Outcome) in the report, and every other asset
//! still builds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::asset_path::AssetPath;
use crate::cache::lock;
use crate::cache_layout::variant_slot;
use crate::discover::{DiscoveryError, discover};
use crate::event::{Event, EventHandler};
use crate::manifest::{Manifest, ManifestError};
use crate::parallel;
use crate::parcels::{Held, default_parcel_dir, parcel_bound, write_parcels};
use crate::plan::plan;
use crate::processor::Registry;
use crate::record_log::RecordLog;
use crate::remote::{Remote, RemoteConfig, RemoteStats};
use crate::report::{BuildReport, OnFailure, Outcome, ParcelOutcome, Retired, StepReport};
use crate::scheduler::Scheduler;
use crate::store::{BlobMemory, Store, StoreError};
use crate::verdicts::Verdicts;
use crate::verify::{Verification, Verify};
use crate::warm::{Changes, Walk, Warm};

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The package's `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// The cache directory, conventionally `<target dir>/assets`.
    pub cache_dir: PathBuf,
    /// The build variant passed to processors: `dev`, `release`, ...
    pub variant: String,
    /// Worker threads.
    pub jobs: usize,
    /// Where parcels are written; `None` for the cache's
    /// `parcels/<package>/<variant>/` (`<variant>.<platform>/` on a
    /// platform; see [`CacheLayout`](crate::cache_layout::CacheLayout)).
    pub parcel_dir: Option<PathBuf>,
    /// Fresh steps to build again and compare with the cache (see
    /// [`crate::unstable::verify`]); `None` trusts the cache.
    pub verify: Option<Verify>,
    /// The platform to build for, by name (declared under
    /// `[package.metadata.assets.platforms]`).
    pub platform: Option<String>,
    /// A target triple to choose the platform by, when `platform` is
    /// `None`: the platform whose `targets` cover it, if any.
    pub target: Option<String>,
    /// The remote cache to read (and, if it says so, write), if any:
    /// usually [`RemoteConfig::from_env`]. See [`crate::unstable::remote`].
    pub remote: Option<RemoteConfig>,
    /// Write a changed parcel as a patch over the one on disk, in the size
    /// of the change, where that pays (see `parcels/patch.rs`); a build
    /// without it writes parcels whole and removes their patches. Only for
    /// a watcher whose game reads patches (`assets_runtime::patch`):
    /// `include_parcel!` and build scripts never see them.
    pub patch_parcels: bool,
    /// What happens to a parcel holding an asset that failed: kept as it
    /// was, or written with stand-ins (see [`OnFailure`]). By default
    /// [`OnFailure::for_variant`] of `variant`, when the build starts.
    pub on_failure: Option<OnFailure>,
    /// The bytes the build's steps may hold at once for large decodes (see
    /// [`crate::memory_budget::DEFAULT_MEMORY_BUDGET`] and `Context::reserve_memory`).
    pub memory_budget: u64,
    /// How long a step may run unless its rule's `timeout` says otherwise
    /// (see [`crate::unstable::DEFAULT_STEP_TIMEOUT`] and [`Event::Overdue`]).
    pub step_timeout: std::time::Duration,
    /// Build only these assets (paths under the root, or `atlas:<name>`)
    /// and what they need; no parcel is written. `None`: everything.
    pub only: Option<Vec<String>>,
}

impl BuildOptions {
    /// Options for `manifest_path` with its cache in `cache_dir`, variant
    /// `dev`, one job per core.
    pub fn new(manifest_path: impl Into<PathBuf>, cache_dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            manifest_path: manifest_path.into(),
            cache_dir: cache_dir.into(),
            variant: "dev".into(),
            jobs: parallel::cores(),
            parcel_dir: None,
            verify: None,
            platform: None,
            target: None,
            remote: None,
            patch_parcels: false,
            on_failure: None,
            memory_budget: crate::memory_budget::DEFAULT_MEMORY_BUDGET,
            step_timeout: crate::manifest::DEFAULT_STEP_TIMEOUT,
            only: None,
        }
    }
}

impl BuildOptions {
    /// The platform these options build for in `manifest`: `platform` if
    /// set (it must be declared), else the one covering `target`, if any.
    pub fn platform_of(&self, manifest: &Manifest) -> Result<Option<String>, ManifestError> {
        if let Some(name) = &self.platform {
            return manifest.platform(name).map(|p| Some(p.name.clone()));
        }
        match &self.target {
            Some(triple) => Ok(manifest
                .platform_for_target(triple)?
                .map(|p| p.name.clone())),
            None => Ok(None),
        }
    }
}

/// A build that could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// `Cargo.toml` is wrong.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The asset roots hold files that cannot be assets.
    #[error("{}", list(.0))]
    Discovery(Vec<DiscoveryError>),
    /// The cache directory failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The variant name cannot be a directory name.
    #[error("invalid variant `{0}`: use letters, digits, `-` and `_`")]
    BadVariant(String),
    /// An asset asked for by [`BuildOptions::only`] is not in the package.
    #[error("no asset named `{asset}`{}", .suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    NoSuchAsset {
        /// The name asked for.
        asset: String,
        /// The closest asset name, if one is close.
        suggestion: Option<String>,
    },
}

fn list(errors: &[DiscoveryError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds a package's assets with a set of processors.
#[derive(Debug)]
pub struct Pipeline {
    options: BuildOptions,
    registry: Registry,
    memory: Option<Arc<BlobMemory>>,
    /// What this pipeline keeps between builds, if it keeps anything (see
    /// [`crate::unstable::warm`]).
    warm: Option<Mutex<Warm>>,
}

impl Clone for Pipeline {
    /// The same options, processors and blobs in memory (blobs are named
    /// by their hash, so sharing them is safe), with no kept state yet:
    /// what one pipeline kept is only true of the builds it saw.
    fn clone(&self) -> Pipeline {
        Pipeline {
            options: self.options.clone(),
            registry: self.registry.clone(),
            memory: self.memory.clone(),
            warm: self.warm.as_ref().map(|_| Mutex::default()),
        }
    }
}

impl Pipeline {
    /// A pipeline with the built-in processors.
    pub fn new(options: BuildOptions) -> Pipeline {
        Pipeline {
            options,
            registry: Registry::with_builtins(),
            memory: None,
            warm: None,
        }
    }

    /// Keeps state from one build to the next, for a pipeline that builds
    /// again and again (`watch`), told what changed by
    /// [`Pipeline::build_after`]. It keeps small blobs (bounded), so an
    /// atlas re-packed after one edit reads its sprites from memory. It
    /// also keeps the record log, the walk of the roots, the plan and the
    /// inputs' stats, so an edit's build does not start from scratch (see
    /// [`crate::unstable::warm`]).
    pub fn keep_state_in_memory(&mut self) {
        self.memory.get_or_insert_with(Arc::default);
        self.warm.get_or_insert_with(Mutex::default);
    }

    /// [`Pipeline::keep_state_in_memory`], keeping at most `blobs` bytes
    /// of blobs and what they decode to, and `facts` bytes of the small
    /// values made from them (see `BlobMemory`), in place of the bounds
    /// the machine's memory sets: for tests and benchmarks of a memory
    /// too small for a project. Replaces a memory kept before.
    #[doc(hidden)]
    pub fn keep_state_in_memory_bounded(&mut self, blobs: usize, facts: usize) {
        self.memory = Some(Arc::new(BlobMemory::with_capacities(blobs, facts)));
        self.warm.get_or_insert_with(Mutex::default);
    }

    /// Adds or replaces processors. What the pipeline kept is dropped.
    pub fn registry_mut(&mut self) -> &mut Registry {
        self.forget_all();
        &mut self.registry
    }

    /// The options.
    pub fn options(&self) -> &BuildOptions {
        &self.options
    }

    /// The options, to change before a build. What the pipeline kept is
    /// dropped.
    pub fn options_mut(&mut self) -> &mut BuildOptions {
        self.forget_all();
        &mut self.options
    }

    /// Sets [`BuildOptions::patch_parcels`] and keeps what the pipeline
    /// kept (unlike [`Pipeline::options_mut`]): it changes how parcels are
    /// written, nothing a build keeps. `watch` turns it off for the build
    /// that writes patched parcels whole once idle.
    pub fn set_patch_parcels(&mut self, patches: bool) {
        self.options.patch_parcels = patches;
    }

    fn forget_all(&mut self) {
        if let Some(warm) = &mut self.warm {
            *warm = Mutex::default();
        }
    }

    /// Runs one build, reporting progress to `events`. Anything on disk
    /// may have changed since the previous one: [`Changes::Unknown`].
    pub fn build(&self, events: EventHandler<'_>) -> Result<BuildReport, BuildError> {
        self.build_after(Changes::Unknown, events)
    }

    /// Compares what this pipeline keeps ([`Pipeline::keep_state_in_memory`])
    /// with the disk: the paths that changed though no build was told of
    /// them, because the watcher missed an event. A watcher calls it when
    /// it is idle, and builds after them if there are any
    /// ([`Changes::At`]). Empty when nothing is kept or nothing drifted.
    /// It walks the roots and stats every kept path: about a no-op's
    /// checks, off the path from a save to its notice.
    pub fn drifted(&self) -> Vec<PathBuf> {
        match &self.warm {
            Some(w) => (w.lock().unwrap_or_else(PoisonError::into_inner)).drifted(),
            None => Vec::new(),
        }
    }

    /// What a watcher calls when idle after a build: each atlas this
    /// pipeline has not packed yet is packed once more in memory, its
    /// sprites decoded and its pages drawn, and kept (see
    /// [`Pipeline::keep_state_in_memory`]), so that the first edit of each
    /// atlas re-packs as fast as later ones instead of reading every sprite
    /// from the cache and drawing every page. What a re-pack needs that is
    /// small (the sprites' sizes, the layout, which output each page is)
    /// is kept apart from the pixels and pages, so it stays when these do
    /// not fit and later atlases push them out. Nothing is stored, recorded
    /// or written. An atlas is packed only if the last build found it, and
    /// all it packs, fresh. The number of atlases packed: 0 for a pipeline
    /// that keeps nothing, and once each atlas has been packed.
    pub fn warm_up(&self) -> usize {
        self.warm_up_while(|| true)
    }

    /// [`Pipeline::warm_up`], asking `go_on` before each atlas and stopping
    /// at the first `false`: a watcher stops when a file is saved, so that
    /// the build waits for one atlas at most (tens of milliseconds), not
    /// for all. An atlas not packed is packed by a later call.
    pub fn warm_up_while(&self, mut go_on: impl FnMut() -> bool) -> usize {
        let (Some(warm), Some(memory)) = (&self.warm, &self.memory) else {
            return 0;
        };
        let mut warm = warm.lock().unwrap_or_else(PoisonError::into_inner);
        let w = &mut *warm;
        let (Some(manifest), Some(plan), Some(verdicts), Some(records)) =
            (&w.manifest, &w.plan, &w.verdicts, &w.records)
        else {
            return 0;
        };
        let atlases: Vec<usize> = (0..plan.steps.len())
            .filter(|&i| {
                let asset = &plan.steps[i].asset;
                asset.atlas_name().is_some() && !w.packed.contains(asset)
            })
            .collect();
        if atlases.is_empty() {
            return 0;
        }
        let Ok(store) = Store::open_with_memory(&self.options.cache_dir, Some(Arc::clone(memory)))
        else {
            return 0;
        };
        let Ok(_lock) = lock(&store, &|_: &Event<'_>| {}) else {
            return 0;
        };
        let reused = verdicts.reusable(plan, None);
        let scheduler = Scheduler::new(
            plan,
            manifest,
            &self.registry,
            &store,
            &self.options.variant,
            records,
            &|_| {},
        )
        .with_memory_budget(self.options.memory_budget)
        .with_stats(Some(&w.stats))
        .reusing(reused);
        let reusable = scheduler.reused();
        let mut packed = 0;
        for i in atlases {
            if !go_on() {
                break;
            }
            if reusable[i] && scheduler.warm(i) {
                w.packed.insert(plan.steps[i].asset.clone());
                packed += 1;
            }
        }
        packed
    }

    /// Runs one build, told by a file watcher what `changes` there were
    /// since this pipeline's previous build. A pipeline that keeps its
    /// state ([`Pipeline::keep_state_in_memory`]) then skips what they
    /// leave intact. It trusts them: a change they do not name goes unseen
    /// until [`Pipeline::drifted`] names it or a build is told
    /// [`Changes::Unknown`].
    pub fn build_after(
        &self,
        changes: Changes<'_>,
        events: EventHandler<'_>,
    ) -> Result<BuildReport, BuildError> {
        let start = Instant::now();
        let mut warm = self
            .warm
            .as_ref()
            .map(|w| w.lock().unwrap_or_else(PoisonError::into_inner));
        let mut warm = warm.as_deref_mut();
        if let Some(w) = warm.as_deref_mut() {
            w.forget(changes);
        }
        let o = &self.options;
        let variant_ok = !o.variant.is_empty()
            && o.variant
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !variant_ok {
            return Err(BuildError::BadVariant(o.variant.clone()));
        }
        let manifest = Manifest::load(&o.manifest_path)?;
        let platform = o.platform_of(&manifest)?;
        let platform = platform.as_deref();
        let store = Store::open_with_memory(&o.cache_dir, self.memory.clone())?;
        let _lock = lock(&store, events)?;
        store.remove_orphans()?;
        let (kept_walk, kept_plan, kept_records) = match warm.as_deref_mut() {
            Some(w) => {
                w.stats
                    .set_roots(manifest.roots.iter().map(|r| r.dir.clone()).collect());
                let kept = w.manifest.take();
                let walk = (w.walk.take())
                    .filter(|_| kept.as_ref().is_some_and(|m| m.roots == manifest.roots));
                let plan = (w.plan.take()).filter(|_| {
                    walk.is_some() && kept.is_some_and(|m| m.source == manifest.source)
                });
                // Verdicts index the plan's steps, and are not reused by a
                // build asked to check fresh steps again.
                let verdicts = (w.verdicts.take()).filter(|_| plan.is_some() && o.verify.is_none());
                (walk, plan.map(|p| (p, verdicts)), w.records.take())
            }
            None => (None, None, None),
        };
        // Walking the roots and parsing the record log are independent; on a
        // no-op build they are most of the time, so they overlap.
        let (walk, records) = std::thread::scope(|s| {
            let walk = s.spawn(|| match kept_walk {
                Some(walk) => Ok(walk),
                None => discover(&manifest).map(Walk::new),
            });
            let records = RecordLog::open(
                &store,
                package_key(&manifest),
                &o.variant,
                platform,
                kept_records,
            );
            (walk.join().expect("discovery does not panic"), records)
        });
        let walk = walk.map_err(BuildError::Discovery)?;
        let mut records = records?;
        let target = o.target.as_deref();
        let (plan, reused, verdicts) = match kept_plan {
            Some((plan, verdicts)) => {
                let reused = match &verdicts {
                    Some(v) => v.reusable(&plan, Some(&records)),
                    None => Vec::new(),
                };
                (plan, reused, verdicts)
            }
            None => (
                plan(
                    &manifest,
                    &self.registry,
                    &walk.assets,
                    &o.variant,
                    platform,
                    target,
                )?,
                Vec::new(),
                None,
            ),
        };
        events(&Event::Planned {
            steps: plan.steps.len(),
        });
        let remote = connect(o.remote.as_ref(), events);
        let parcel_dir = match &o.parcel_dir {
            Some(dir) => dir.clone(),
            None => default_parcel_dir(
                store.dir(),
                package_key(&manifest),
                &variant_slot(&o.variant, platform),
            ),
        };
        // What a parcel in the cache holds is not stored again (the store
        // reads it from there); a build script's parcels, outside the
        // cache, are not looked at, so everything is stored for them.
        let bound = if o.parcel_dir.is_none() {
            parcel_bound(&manifest, &plan)
        } else {
            Vec::new()
        };
        // Out of the kept state while the scheduler borrows it, and put
        // back after the parcels are written.
        let mut choices = warm.as_deref_mut().map(|w| std::mem::take(&mut w.choices));
        let on_failure = (o.on_failure).unwrap_or_else(|| OnFailure::for_variant(&o.variant));
        let unused_rules = manifest.unused_rules(plan.steps.iter().filter_map(|s| s.rule));
        let aliases = manifest.alias_warnings();
        let scheduler = Scheduler::new(&plan, &manifest, &self.registry, &store, &o.variant, &records, events)
            .on_failure(on_failure)
            .with_memory_budget(o.memory_budget)
            .with_step_timeout(o.step_timeout)
            .verifying(o.verify)
            .with_remote(remote.as_ref())
            .deferring(bound)
            .with_stats(warm.as_deref().map(|w| &w.stats))
            .reusing(reused);
        let selected = match &o.only {
            Some(names) => Some(selected_steps(&plan, names)?),
            None => None,
        };
        let mut steps = match &selected {
            Some(selected) => scheduler.run_only(selected, o.jobs),
            None => scheduler.run(o.jobs),
        };
        let cache_damage: Vec<AssetPath> = (steps.iter())
            .filter(|s| matches!(s.verification, Some(Verification::Damaged(_))))
            .map(|s| s.asset.clone())
            .collect();
        let mut retired = Retired::default();
        // The blobs the parcels hold whole, as the last round wrote them.
        // None until a round of parcels is written (a build of chosen
        // assets writes none).
        let mut held = Held::default();
        let mut write = |steps: &[Arc<StepReport>], retired: &mut Retired| {
            // Asked anew each round: a second round's steps hold back more.
            held = Held::of(&store);
            write_parcels(
                &manifest,
                &o.variant,
                &store,
                &parcel_dir,
                &plan,
                steps,
                o.patch_parcels,
                retired,
                &mut held,
                choices.as_mut(),
                on_failure,
                // `verify` reads every parcel whole, as it checks every step.
                o.verify.is_some(),
            )
        };
        // A build of chosen assets writes no parcel: what the others hold
        // was not built.
        let mut parcels = match selected {
            Some(_) => Vec::new(),
            None => write(&steps, &mut retired),
        };
        // A parcel that could not be written may have met a corrupt blob
        // (removed when found). Then every output is checked at once, the
        // steps that made damaged ones run again, and the parcels are
        // written again: one build heals the cache.
        if parcels
            .iter()
            .any(|p| matches!(p.outcome, ParcelOutcome::Failed { .. }))
        {
            let damaged = damaged_steps(&store, &steps);
            if !damaged.is_empty() {
                steps = scheduler.rebuild(&damaged, o.jobs);
                let first = std::mem::replace(&mut parcels, write(&steps, &mut retired));
                // What the first round found damaged is why the second
                // wrote the parcel again.
                for (again, first) in parcels.iter_mut().zip(first) {
                    again.damaged = again.damaged.take().or(first.damaged);
                }
            }
        }
        let temporaries = scheduler.temporaries();
        let reused = scheduler.reused();
        drop(scheduler);
        store.flush_deferred(|hash| held.contains(hash))?;
        let remote = remote.map(|remote| finish_remote(&remote, events));
        // Keep the latest record of every planned asset, also of failed ones:
        // they still say why the next build will rerun them; and of the
        // temporary builds they use, asked for in this build or named by a
        // record it reused unchecked (a watched build's kept verdicts: the
        // log keeps those its records name). Read only when the log is
        // checked, not on every build.
        // A watched edit (one writing patches) leaves the check to the
        // build `watch` makes once idle, which writes the parcels whole: an
        // atlas's record names every sprite, so at 100k assets each edit
        // appended more than the check's slack, and the check (every live
        // asset's frame looked up) was a sixth of the edit.
        if o.patch_parcels {
            records.flush(&store)?;
        } else {
            let live = (plan.steps.iter().map(|s| &s.asset)).chain(&temporaries);
            records.compact_if_worthwhile(&store, live)?;
        }
        match warm {
            Some(w) => {
                w.choices = choices.unwrap_or_default();
                w.packed.extend(
                    (steps.iter())
                        .filter(|s| {
                            matches!(s.outcome, Outcome::Ran { .. })
                                && s.asset.atlas_name().is_some()
                        })
                        .map(|s| s.asset.clone()),
                );
                w.verdicts = Some(Verdicts::after_build(
                    &plan,
                    &steps,
                    &reused,
                    verdicts,
                    &w.stats,
                    &manifest.package_dir,
                ));
                w.walk = Some(walk);
                w.plan = Some(plan);
                w.records = Some(records);
                w.manifest = Some(manifest);
            }
            // Memory only: the records' log is written and unbuffered, and
            // the store, which holds the cache's lock, is dropped here.
            None => parallel::drop_in_background((plan, walk, records)),
        }
        Ok(BuildReport {
            steps,
            parcels,
            elapsed: start.elapsed(),
            retired,
            platform: platform.map(str::to_owned),
            remote,
            unused_rules,
            aliases,
            cache_damage,
        })
    }
}

/// The plan's indices of the assets `names` (see [`BuildOptions::only`]).
fn selected_steps(plan: &crate::plan::Plan, names: &[String]) -> Result<Vec<usize>, BuildError> {
    names
        .iter()
        .map(|name| {
            AssetPath::from_name(name)
                .ok()
                .and_then(|a| plan.index.get(&a).copied())
                .ok_or_else(|| BuildError::NoSuchAsset {
                    asset: name.clone(),
                    suggestion: crate::manifest::did_you_mean(
                        name,
                        plan.steps.iter().map(|s| s.asset.as_str()),
                    )
                    .map(str::to_owned),
                })
        })
        .collect()
}

/// The remote cache of `config`, if one is configured and can be used;
/// if it cannot, the build goes on without it, with a warning.
fn connect(config: Option<&RemoteConfig>, events: EventHandler<'_>) -> Option<Remote> {
    Remote::connect(config?)
        .inspect_err(|message| events(&Event::RemoteWarning { message }))
        .ok()
}

/// Waits for `remote`'s uploads and reports what is left to say.
fn finish_remote(remote: &Remote, events: EventHandler<'_>) -> RemoteStats {
    let stats = remote.finish();
    for warning in remote.take_warnings() {
        events(&Event::RemoteWarning { message: &warning });
    }
    stats
}

/// The steps with an output blob that is missing or corrupt (a corrupt one
/// is removed as it is found), every blob read and checked on all cores.
fn damaged_steps(store: &Store, steps: &[Arc<crate::report::StepReport>]) -> Vec<usize> {
    let damaged = parallel::map(steps, |s| {
        // Every output is read, not only up to the first damaged one: a
        // corrupt blob left unread would keep its size and be trusted by
        // the rebuild's `put` (a blob shared by several outputs, say).
        s.record.as_ref().is_some_and(|r| {
            r.outputs
                .iter()
                .filter(|o| store.get(&o.hash).is_err())
                .count()
                > 0
        })
    });
    damaged
        .into_iter()
        .enumerate()
        .filter_map(|(i, d)| d.then_some(i))
        .collect()
}

/// The package's name as a directory name in the cache (records and parcels
/// are kept per package; blobs are shared).
pub fn package_key(manifest: &Manifest) -> &str {
    if manifest.package_name.is_empty() {
        "_"
    } else {
        &manifest.package_name
    }
}
