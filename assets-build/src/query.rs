//! Queries on the content database (OpenCP's "what depends on what"): what a
//! step read and used ([`Database::deps`]), what reads or uses an asset
//! ([`Database::rdeps`]), the whole graph ([`Database::graph`]), and why a
//! step last ran and whether the next build will run it ([`Database::why`]).
//! Dropping the blobs no record uses is [`gc`](crate::gc), beside the store.
//!
//! Queries read the record log without the build lock and change nothing:
//! a build running at the same time can only make the answer older. The
//! "next build" verdict is the freshness check of a real build, dry: inputs
//! are stat'ed and, if their stamps moved, re-hashed; a dependency that would
//! itself rerun counts as changed.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::asset_path::AssetPath;
use crate::cache_layout::variant_slot;
use crate::discover::discover;
use crate::freshness::{self, DependencyState, Verdict};
use crate::hash::ContentHash;
use crate::manifest::{Manifest, did_you_mean};
use crate::pipeline::{BuildError, BuildOptions, package_key};
use crate::plan::{Plan, plan};
use crate::processor::Registry;
use crate::processor::context::input_name;
use crate::record::{DirtyReason, InputState, Record};
use crate::record_log;
use crate::store::Store;

/// A query about an asset that cannot be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// No such asset in the package.
    #[error("no asset named `{asset}`{}", did_you_mean_text(.suggestion))]
    NoSuchAsset {
        /// The name asked for.
        asset: String,
        /// The closest asset name, if one is close.
        suggestion: Option<String>,
    },
    /// The asset exists but has no record yet.
    #[error("`{0}` has not been built yet; run `cargo assets build` first")]
    NeverBuilt(AssetPath),
}

fn did_you_mean_text(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

/// A package's assets, plan and records, for queries.
pub struct Database {
    manifest: Manifest,
    plan: Plan,
    records: HashMap<AssetPath, Arc<Record>>,
    /// Assets whose record comes from another platform's log (the step is
    /// the same there), with that log's name (`dev.web`).
    shared: HashMap<AssetPath, String>,
    store: Store,
    /// Where `cargo assets build` writes this variant's parcels.
    parcel_dir: std::path::PathBuf,
}

/// Where a parcel resource comes from ([`Database::source`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The step that made it: an asset, or a generated step (`atlas:ui`).
    pub asset: AssetPath,
    /// The asset's file, relative to the package (`assets/sprites/hero.png`);
    /// `None` for a generated step.
    pub file: Option<String>,
    /// The processor.
    pub processor: String,
}

/// What an asset produced, and which parcels hold it
/// ([`Database::outputs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    /// Its resources: name, kind, size in bytes. As the parcels hold them
    /// (a sprite's frame, a model's GLB) when one does, else as its step's
    /// record lists them (a sprite's decoded pixels, for its atlas).
    pub resources: Vec<(String, String, u64)>,
    /// The parcels holding any of them, by name, with their files.
    pub parcels: std::collections::BTreeMap<String, std::path::PathBuf>,
}

/// What one step read and used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deps {
    /// Files read (`present`) or looked for and not found, relative to the
    /// package, in the order the step first touched them.
    pub inputs: Vec<(String, bool)>,
    /// Assets whose outputs it used.
    pub dependencies: Vec<AssetPath>,
    /// Assets whose resources its outputs name (a model's textures), which
    /// go into every parcel that holds it.
    pub references: Vec<AssetPath>,
}

/// How an asset is used by another step.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Use {
    /// Through `ctx.dependency`: its outputs.
    Outputs,
    /// Through `ctx.reference`: the user's outputs name its resources (a
    /// model its textures), so they go into the same parcels.
    Refers,
    /// By reading its file directly (an `#include`, say).
    File,
    /// By looking for its file when it did not exist.
    LookedFor,
}

/// Why a step last ran and what the next build will do with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    /// The reason recorded when it last ran (`None` for records written by
    /// older versions).
    pub last: Option<DirtyReason>,
    /// `None` if the next build reuses it; else why it will run.
    pub next: Option<DirtyReason>,
    /// When the record is another platform's (the step is the same there,
    /// so the build shares it): that platform's records, `dev.web`.
    pub shared_from: Option<String>,
    /// When the step's outputs were fetched from the remote cache instead
    /// of built here: the remote, without credentials.
    pub fetched_from: Option<String>,
}

impl Database {
    /// Loads the package of `options`, with the processors of `registry`.
    pub fn open(options: &BuildOptions, registry: &Registry) -> Result<Database, BuildError> {
        let manifest = Manifest::load(&options.manifest_path)?;
        let assets = discover(&manifest).map_err(BuildError::Discovery)?;
        let platform = options.platform_of(&manifest)?;
        let plan = plan(
            &manifest,
            registry,
            &assets,
            &options.variant,
            platform.as_deref(),
            options.target.as_deref(),
        )?;
        let package = package_key(&manifest);
        let slot = variant_slot(&options.variant, platform.as_deref());
        let mut records = record_log::read_records(&options.cache_dir, package, &slot)?;
        // A step the build would take from another platform's log, as
        // `RecordLog::shared` does: same variant, same key.
        let mut shared = HashMap::new();
        let own =
            crate::cache_layout::CacheLayout::new(&options.cache_dir).record_log(package, &slot);
        for sibling in record_log::sibling_logs(&own, &options.variant) {
            let Ok(bytes) = std::fs::read(&sibling) else {
                continue;
            };
            let name = sibling
                .file_stem()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_owned();
            let theirs = record_log::records_of(&bytes);
            for step in &plan.steps {
                let ours = records.get(&step.asset).is_some_and(|r| r.key == step.key);
                if let Some(r) = theirs
                    .get(&step.asset)
                    .filter(|r| r.key == step.key && !ours)
                {
                    records.insert(step.asset.clone(), Arc::clone(r));
                    shared.insert(step.asset.clone(), name.clone());
                }
            }
        }
        let store = Store::open(&options.cache_dir)?;
        let parcel_dir =
            crate::cache_layout::CacheLayout::new(&options.cache_dir).parcel_dir(package, &slot);
        Ok(Database {
            manifest,
            plan,
            records,
            shared,
            store,
            parcel_dir,
        })
    }

    /// The asset named `name`, or an error suggesting the closest one.
    pub fn asset(&self, name: &str) -> Result<AssetPath, QueryError> {
        let found = AssetPath::from_name(name)
            .ok()
            .filter(|a| self.plan.index.contains_key(a));
        found.ok_or_else(|| QueryError::NoSuchAsset {
            asset: name.to_owned(),
            suggestion: did_you_mean(name, self.plan.steps.iter().map(|s| s.asset.as_str()))
                .map(str::to_owned),
        })
    }

    fn record(&self, asset: &AssetPath) -> Result<&Arc<Record>, QueryError> {
        self.records
            .get(asset)
            .ok_or_else(|| QueryError::NeverBuilt(asset.clone()))
    }

    /// Where the parcel resource `resource` (`sprites/hero.png`,
    /// `shaders/water.wgsl#reflection`, `atlas:ui#0`) comes from: the step
    /// that made it, its file and processor. The way back from what a game
    /// reads to what to edit.
    pub fn source(&self, resource: &str) -> Result<Source, QueryError> {
        let name = resource
            .split_once('#')
            .map_or(resource, |(asset, _)| asset);
        let asset = self.asset(name).map_err(|_| QueryError::NoSuchAsset {
            asset: resource.to_owned(),
            suggestion: did_you_mean(resource, self.plan.steps.iter().map(|s| s.asset.as_str()))
                .map(str::to_owned),
        })?;
        let step = &self.plan.steps[self.plan.index[&asset]];
        let file = (asset.atlas_name().is_none())
            .then(|| input_name(&self.manifest.roots[step.root], &asset));
        Ok(Source {
            asset,
            file,
            processor: step.processor.name().to_owned(),
        })
    }

    /// What `asset` produced and which of the parcels `cargo assets build`
    /// wrote hold it: resources named `asset` or `asset#label`.
    pub fn outputs(&self, asset: &AssetPath) -> Result<Outputs, QueryError> {
        let own = |name: &str| {
            name == asset.as_str()
                || name
                    .strip_prefix(asset.as_str())
                    .is_some_and(|l| l.starts_with('#'))
        };
        let mut resources = std::collections::BTreeSet::new();
        let mut parcels = std::collections::BTreeMap::new();
        for spec in &self.manifest.parcels {
            let path = self.parcel_dir.join(format!("{}.parcel", spec.name));
            let Ok(buf) = assets_runtime::ParcelBuf::open(&path) else {
                continue;
            };
            let held: Vec<_> = (buf.parcel().iter())
                .filter(|r| own(r.name))
                .map(|r| (r.name.to_owned(), r.kind.to_owned(), r.len()))
                .collect();
            if !held.is_empty() {
                resources.extend(held);
                parcels.insert(spec.name.clone(), path);
            }
        }
        if resources.is_empty() {
            let record = self.record(asset)?;
            resources.extend(record.outputs.iter().map(|o| {
                let name = crate::parcels::resource_name(asset, &o.label);
                (name, o.kind.clone(), o.size)
            }));
        }
        Ok(Outputs {
            resources: resources.into_iter().collect(),
            parcels,
        })
    }

    /// What `asset`'s step read and used when it last ran.
    pub fn deps(&self, asset: &AssetPath) -> Result<Deps, QueryError> {
        let record = self.record(asset)?;
        Ok(Deps {
            inputs: record
                .inputs
                .iter()
                .map(|i| {
                    (
                        i.path.clone(),
                        !matches!(i.state, InputState::Absent { .. }),
                    )
                })
                .collect(),
            dependencies: record
                .dependencies
                .iter()
                .map(|d| d.asset.clone())
                .collect(),
            references: record.references.clone(),
        })
    }

    /// Every step that uses `asset`, and how; sorted.
    pub fn rdeps(&self, asset: &AssetPath) -> BTreeSet<(AssetPath, Use)> {
        let file = self.file_of(asset);
        let mut users = BTreeSet::new();
        for (user, record) in &self.records {
            if user == asset || !self.plan.index.contains_key(user) {
                continue;
            }
            if record.dependencies.iter().any(|d| &d.asset == asset) {
                users.insert((user.clone(), Use::Outputs));
            }
            if record.references.contains(asset) {
                users.insert((user.clone(), Use::Refers));
            }
            for input in record
                .inputs
                .iter()
                .filter(|i| Some(&i.path) == file.as_ref())
            {
                let how = match input.state {
                    InputState::Present { .. } | InputState::Unsettled { .. } => Use::File,
                    InputState::Absent { .. } => Use::LookedFor,
                };
                users.insert((user.clone(), how));
            }
        }
        users
    }

    /// Every step of the package (assets and generated steps), sorted: the
    /// graph's nodes, including those with no edge.
    pub fn steps(&self) -> Vec<&AssetPath> {
        let mut steps: Vec<&AssetPath> = self.plan.steps.iter().map(|s| &s.asset).collect();
        steps.sort();
        steps
    }

    /// Every edge of the graph: `(user, used, how)`, sorted. Files read that
    /// are not the user's own source are edges to the asset of that file.
    pub fn graph(&self) -> BTreeSet<(AssetPath, AssetPath, Use)> {
        let files: HashMap<String, &AssetPath> = self
            .plan
            .steps
            .iter()
            .filter_map(|s| Some((self.file_of(&s.asset)?, &s.asset)))
            .collect();
        let mut edges = BTreeSet::new();
        for (user, record) in &self.records {
            if !self.plan.index.contains_key(user) {
                continue;
            }
            for d in &record.dependencies {
                edges.insert((user.clone(), d.asset.clone(), Use::Outputs));
            }
            for r in &record.references {
                edges.insert((user.clone(), r.clone(), Use::Refers));
            }
            for input in &record.inputs {
                let Some(&used) = files.get(&input.path) else {
                    continue;
                };
                if used == user {
                    continue;
                }
                let how = match input.state {
                    InputState::Present { .. } | InputState::Unsettled { .. } => Use::File,
                    InputState::Absent { .. } => Use::LookedFor,
                };
                edges.insert((user.clone(), used.clone(), how));
            }
        }
        edges
    }

    /// Why `asset` last ran, and whether the next build will run it.
    pub fn why(&self, asset: &AssetPath) -> Result<Why, QueryError> {
        let next = match self.records.get(asset) {
            None => Some(DirtyReason::NoRecord),
            Some(_) => self.next_verdict(asset, &mut HashMap::new()),
        };
        Ok(Why {
            last: self.records.get(asset).and_then(|r| r.reason.clone()),
            next,
            shared_from: self.shared.get(asset).cloned(),
            fetched_from: self.records.get(asset).and_then(|r| r.fetched_from.clone()),
        })
    }

    /// A temporary build a record depends on, as the next build will find
    /// it: its last outputs if what it read is unchanged (its processor's
    /// version and code are taken as they were), else to be rebuilt.
    fn temporary_state(&self, temp: &AssetPath) -> DependencyState {
        let Some(record) = self.records.get(temp) else {
            return DependencyState::Gone;
        };
        let current = freshness::Current {
            key: record.key,
            processor: &record.processor,
            version: record.processor_version,
            code: record.processor_code,
            settings_json: &record.settings,
            package_dir: &self.manifest.package_dir,
            now_ns: crate::record::system_time_ns(std::time::SystemTime::now()),
            stats: None,
            assets: &self.plan.index,
        };
        match freshness::check(record, &current, &self.store, |_| DependencyState::Gone) {
            Verdict::Fresh(_) => DependencyState::Built(record.outputs_hash()),
            _ => DependencyState::Built(ContentHash::of(b"will be rebuilt")),
        }
    }

    /// The dry freshness check: `None` if fresh. `memo` also breaks cycles.
    fn next_verdict(
        &self,
        asset: &AssetPath,
        memo: &mut HashMap<AssetPath, Option<DirtyReason>>,
    ) -> Option<DirtyReason> {
        if let Some(v) = memo.get(asset) {
            return v.clone();
        }
        memo.insert(asset.clone(), None);
        let verdict = match (self.plan.index.get(asset), self.records.get(asset)) {
            (_, None) => Some(DirtyReason::NoRecord),
            (None, Some(_)) => None,
            (Some(&i), Some(record)) => {
                let current = self.plan.current(i, &self.manifest.package_dir, None);
                let check = freshness::check(record, &current, &self.store, |dep| {
                    if dep.is_temporary() {
                        return self.temporary_state(dep);
                    }
                    if !self.plan.index.contains_key(dep) {
                        return DependencyState::Gone;
                    }
                    match (self.next_verdict(dep, memo), self.records.get(dep)) {
                        (None, Some(r)) => DependencyState::Built(r.outputs_hash()),
                        // It will rerun, so its outputs may change: not the ones used.
                        _ => DependencyState::Built(ContentHash::of(b"will be rebuilt")),
                    }
                });
                match check {
                    Verdict::Fresh(_) => None,
                    Verdict::Stale(reason) => Some(reason),
                    Verdict::DependencyFailed(dep) => {
                        Some(DirtyReason::DependencyChanged { asset: dep })
                    }
                }
            }
        };
        memo.insert(asset.clone(), verdict.clone());
        verdict
    }

    /// How records name `asset`'s own file (`assets/sprites/hero.png`);
    /// `None` for generated steps.
    fn file_of(&self, asset: &AssetPath) -> Option<String> {
        let &i = self.plan.index.get(asset)?;
        let step = &self.plan.steps[i];
        if asset.atlas_name().is_some() {
            return None;
        }
        Some(input_name(&self.manifest.roots[step.root], asset))
    }
}
