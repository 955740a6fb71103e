//! Temporary builds: a step a processor asks for while it runs
//! (`Context::generate`), with a processor and parameters and no source
//! file: a noise texture from a seed, a shader permutation.
//!
//! Each is a step of its own, named `temp:<processor>/<digest>` after a
//! hash of its parameters, keyed like any step (processor name, version,
//! code, canonical parameters, name, variant) and recorded in the record
//! log, so that it is built once and then reused across builds while what
//! it read is unchanged. It is never planned, so no parcel holds it: its
//! outputs serve the steps that asked for it, which list it as a
//! dependency (its outputs' hash, for early cutoff) and take what it read
//! as inputs of their own (so a watched edit of such a file, which reaches
//! steps through their inputs, reruns them, and they ask again).
//!
//! Within one build each is built or checked once, whoever asks first
//! (others wait for it); a requester's freshness check asks through the
//! same door, from the name in its record alone: the record holds the
//! processor and parameters. It reads files and nothing else: a temporary
//! build that asked for an asset or another temporary build could close a
//! cycle that no requester would see, so `Context` refuses both.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::Scheduler;
use crate::asset_path::{AssetPath, is_atlas_name};
use crate::freshness::{self, Current, DependencyState, Verdict};
use crate::hash::ContentHash;
use crate::manifest::Settings;
use crate::processor::context::{Payload, StepInfo};
use crate::processor::{Context, ErasedProcessor, ProcessError};
use crate::record::{DirtyReason, OutputRecord, RECORD_FORMAT, Record, step_key, system_time_ns};

/// One temporary build of a build: its record, or why it failed.
pub(super) type Temporary = Arc<OnceLock<Result<Arc<Record>, String>>>;

/// How many hex digits of the parameters' hash name a temporary build.
const DIGEST_LEN: usize = 16;

/// The name of the temporary build of `processor` with settings
/// `settings_json` (canonical): `temp:<processor>/<digest>`.
pub(crate) fn temporary_name(processor: &str, settings_json: &str) -> AssetPath {
    let digest = ContentHash::of(settings_json.as_bytes()).to_hex();
    AssetPath::temporary(processor, &digest[..DIGEST_LEN])
}

impl Scheduler<'_> {
    /// The record of the temporary build of `processor` with `settings`,
    /// on behalf of step `requester`: reused if fresh, else run now.
    pub(super) fn temporary(
        &self,
        requester: usize,
        processor: &str,
        settings: Settings,
    ) -> Result<Arc<Record>, ProcessError> {
        let Some(registered) = self.registry.get(processor).filter(|_| is_atlas_name(processor))
        else {
            let known: Vec<&str> = self.registry.names().collect();
            return Err(ProcessError::msg(format!(
                "a temporary build asked for processor `{processor}`, which is not registered (known: {})",
                known.join(", ")
            )));
        };
        let settings_json = settings.canonical_json();
        let name = temporary_name(processor, &settings_json);
        let cell = {
            let mut temps = self.temps.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(temps.entry(name.clone()).or_default())
        };
        let built = cell.get_or_init(|| {
            self.build_temporary(requester, &name, &**registered, &settings, &settings_json)
                .map_err(|e| e.to_string())
        });
        built.clone().map_err(|error| {
            ProcessError::msg(format!("temporary build `{name}` ({processor}) failed: {error}"))
        })
    }

    /// Dependency `asset` of step `i`, a temporary build, as its record
    /// names it: checked (or built again) with the processor and
    /// parameters that record holds.
    pub(super) fn temporary_state(&self, i: usize, asset: &AssetPath) -> DependencyState {
        let Some(record) = self.records.get(asset) else {
            return DependencyState::Gone;
        };
        let Ok(table) = serde_json::from_str::<toml::Table>(&record.settings) else {
            return DependencyState::Gone;
        };
        match self.temporary(i, &record.processor, Settings::from_table(table)) {
            Ok(r) if r.asset == *asset => DependencyState::Built(r.outputs_hash()),
            Ok(_) => DependencyState::Gone,
            Err(_) => DependencyState::Failed,
        }
    }

    /// The temporary builds this build built or checked: their records
    /// stay in the log.
    pub(crate) fn temporaries(&self) -> HashSet<AssetPath> {
        let temps = self.temps.lock().unwrap_or_else(|p| p.into_inner());
        temps.keys().cloned().collect()
    }

    fn build_temporary(
        &self,
        requester: usize,
        name: &AssetPath,
        processor: &dyn ErasedProcessor,
        settings: &Settings,
        settings_json: &str,
    ) -> Result<Arc<Record>, ProcessError> {
        let code = self.registry.code(processor.name());
        let key = step_key(
            processor.name(),
            processor.version(),
            code,
            settings_json,
            name,
            self.variant,
        );
        let reason = match self.records.get(name) {
            None => DirtyReason::NoRecord,
            Some(previous) => {
                let current = Current {
                    key,
                    processor: processor.name(),
                    version: processor.version(),
                    code,
                    settings_json,
                    package_dir: &self.manifest.package_dir,
                    now_ns: system_time_ns(SystemTime::now()),
                    stats: self.stats,
                    assets: &self.plan.index,
                };
                match freshness::check(previous, &current, self.store, |_| DependencyState::Gone) {
                    Verdict::Fresh(None) => return Ok(Arc::clone(previous)),
                    Verdict::Fresh(Some(refreshed)) => {
                        self.records.append(self.store, &refreshed)?;
                        return Ok(Arc::new(*refreshed));
                    }
                    Verdict::Stale(reason) => reason,
                    Verdict::DependencyFailed(asset) => DirtyReason::DependencyChanged { asset },
                }
            }
        };
        let step = &self.plan.steps[requester];
        let info = StepInfo {
            index: requester,
            asset: name,
            root: &self.manifest.roots[step.root],
            real_root: &self.real_roots[step.root],
            processor: processor.name(),
            settings,
            origin: None,
            platform: step.platform.as_deref(),
            timeout: self.timeout_of(requester),
            inputs: &[],
            previous: None,
        };
        let started_ns = system_time_ns(SystemTime::now());
        let mut ctx = Context::new(info, self.manifest, self.variant, self.store, self);
        let result = super::run::call(processor, &mut ctx);
        let recorded = ctx.finish();
        result?;
        if recorded.outputs.is_empty() {
            return Err(ProcessError::msg(format!(
                "processor `{}` produced no output",
                processor.name()
            )));
        }
        let mut outputs = Vec::with_capacity(recorded.outputs.len());
        for o in recorded.outputs {
            let size = o.size();
            let hash = match &o.payload {
                Payload::Made {
                    bytes,
                    hash: Some(hash),
                } => self.store.put_checked(*hash, bytes)?,
                Payload::Made { bytes, hash: None } => self.store.put(bytes)?,
                Payload::Held(held) => held.hash,
            };
            outputs.push(OutputRecord {
                label: o.label,
                kind: o.kind,
                size,
                hash,
            });
        }
        let record = Record {
            format: RECORD_FORMAT,
            asset: name.clone(),
            variant: self.variant.to_owned(),
            processor: processor.name().to_owned(),
            processor_version: processor.version(),
            processor_code: code,
            settings: settings_json.to_owned(),
            key,
            started_ns,
            inputs: recorded.inputs,
            dependencies: Vec::new(),
            references: recorded.references,
            diagnostics: recorded.diagnostics,
            outputs,
            reason: Some(reason),
            fetched_from: None,
            outputs_hash: Default::default(),
        };
        self.records.append(self.store, &record)?;
        Ok(Arc::new(record))
    }
}
