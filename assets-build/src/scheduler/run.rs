//! One step run: its processor called on a fresh [`Context`] (a panic
//! turned into its error), corrupt dependencies healed and the step run
//! again, its outputs stored (in parallel when large, kept in memory for
//! the parcels that will hold them) and its record written last; and the
//! same run for `verify` (nothing stored) and for a watched pipeline's
//! warm-up (outputs dropped).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::SystemTime;

use super::Scheduler;
use crate::asset_path::AssetPath;
use crate::hash::ContentHash;
use crate::parallel;
use crate::processor::{
    Context, ErasedProcessor, ProcessError,
    context::{Emitted, Payload, StepInfo},
};
use crate::record::{DirtyReason, OutputRecord, RECORD_FORMAT, Record, system_time_ns};
use crate::remote;
use crate::store::StoreError;
use crate::verify::{self, Verification};

impl Scheduler<'_> {
    /// Runs fresh step `i`'s processor again, without looking at the cache
    /// for it, and compares what it makes with `record`'s outputs. Nothing
    /// is stored and no record written.
    pub(super) fn reproduce(&self, i: usize, record: &Record) -> Verification {
        // The cache's copies first: a damaged one is removed here, and its
        // step runs again at the next build.
        for output in &record.outputs {
            if let Err(e @ StoreError::CorruptBlob { .. }) = self.store.get(&output.hash) {
                return Verification::Damaged(ProcessError::Store(e));
            }
        }
        let info = self.step_info(i);
        let mut ctx =
            Context::new(info, self.manifest, self.variant, self.store, self).reproducing();
        if let Err(e) = ctx.record_rule_inputs() {
            return Verification::Failed(e);
        }
        match self.run_processor(i, &mut ctx) {
            Ok(()) => verify::compare(record, &ctx.finish().outputs),
            Err(e @ ProcessError::CorruptDependency { .. }) => Verification::Damaged(e),
            Err(e) => Verification::Failed(e),
        }
    }

    /// Runs step `i`'s processor for what it leaves in a long-lived
    /// pipeline's memory (an atlas's sprites decoded and its pages drawn;
    /// see `Memo`), and drops its outputs: nothing is stored or recorded.
    /// Every step it depends on must be done (reused). Whether it
    /// succeeded.
    pub fn warm(&self, i: usize) -> bool {
        let info = self.step_info(i);
        let mut ctx = Context::new(info, self.manifest, self.variant, self.store, self);
        self.run_processor(i, &mut ctx).is_ok()
    }

    /// What a processor is told about step `i`.
    pub(super) fn step_info(&self, i: usize) -> StepInfo<'_> {
        let step = &self.plan.steps[i];
        StepInfo {
            index: i,
            asset: step.file(),
            root: &self.manifest.roots[step.root],
            real_root: &self.real_roots[step.root],
            processor: step.processor.name(),
            settings: &step.settings,
            origin: step.origin.as_ref(),
            platform: step.platform.as_deref(),
            timeout: self.timeout_of(i),
            inputs: &step.extra_inputs,
            previous: step.stage.as_ref().and_then(|s| s.previous.as_ref()),
        }
    }

    /// Runs step `i`'s processor on `ctx`, a panic turned into an error.
    pub(super) fn run_processor(
        &self,
        i: usize,
        ctx: &mut Context<'_>,
    ) -> Result<(), ProcessError> {
        call(&*self.plan.steps[i].processor, ctx)
    }

    /// Runs step `i`'s processor and stores what it made; the record goes last.
    pub(super) fn process(&self, i: usize, reason: &DirtyReason) -> Result<Record, Failure> {
        let step = &self.plan.steps[i];
        let started_ns = system_time_ns(SystemTime::now());
        let info = self.step_info(i);
        // A dependency's output found corrupt is rebuilt and the step run
        // again, so that one build heals the cache; a few rounds at most.
        let mut heals = 0;
        let recorded = loop {
            let mut ctx = Context::new(info, self.manifest, self.variant, self.store, self);
            ctx.record_rule_inputs().map_err(Failure::Error)?;
            let result = self.run_processor(i, &mut ctx);
            let recorded = ctx.finish();
            match result {
                Ok(()) => break recorded,
                Err(ProcessError::CorruptDependency { .. })
                    if heals < MAX_HEALS && self.heal_dependencies(i, &recorded.dependencies) =>
                {
                    heals += 1;
                }
                Err(e) => {
                    return Err(match recorded.failed_dependency {
                        Some(dep) => Failure::Dependency(dep),
                        None => Failure::Error(e),
                    });
                }
            }
        };
        if recorded.outputs.is_empty() {
            return Err(Failure::Error(ProcessError::msg(format!(
                "processor `{}` produced no output",
                step.processor.name()
            ))));
        }
        // Megabytes of outputs (an atlas's pages) are hashed and written on
        // every core; a few small ones are not worth the threads.
        let bound = self.parcel_bound(i);
        let upload = self.remote.filter(|r| r.writes());
        // Outputs a parcel will hold are only hashed here (unless the step
        // knew their hash), and kept for it below, their bytes shared.
        // Outputs held already (made before, see `Context::emit_held`) are
        // neither hashed nor stored again.
        let put = |o: &Emitted| match &o.payload {
            Payload::Held(held) => Ok(held.hash),
            Payload::Made {
                hash: Some(hash), ..
            } if bound.holds(&o.kind) => Ok(*hash),
            Payload::Made { bytes, hash: None } if bound.holds(&o.kind) => {
                Ok(ContentHash::of(bytes))
            }
            Payload::Made {
                bytes,
                hash: Some(hash),
            } => self.store.put_checked(*hash, bytes),
            Payload::Made { bytes, hash: None } => self.store.put(bytes),
        };
        let total: u64 = (recorded.outputs.iter())
            .filter(|o| matches!(o.payload, Payload::Made { .. }))
            .map(Emitted::size)
            .sum();
        let hashes: Vec<_> = if total >= PARALLEL_PUT_BYTES {
            parallel::map(&recorded.outputs, put)
        } else {
            recorded.outputs.iter().map(put).collect()
        };
        let mut outputs = Vec::with_capacity(recorded.outputs.len());
        let mut uploaded = Vec::new();
        for (o, hash) in recorded.outputs.into_iter().zip(hashes) {
            let size = o.size();
            let Emitted {
                label,
                kind,
                payload,
            } = o;
            let hash = hash.map_err(|e| Failure::Error(e.into()))?;
            match payload {
                // A remote that is written to gets every output's bytes.
                Payload::Held(held) => {
                    if upload.is_some() {
                        let bytes = self.store.get(&held.hash);
                        uploaded.push(bytes.map_err(|e| Failure::Error(e.into()))?);
                    }
                }
                Payload::Made { bytes, .. } if bound.holds(&kind) => {
                    if upload.is_some() {
                        uploaded.push(bytes.to_vec());
                    }
                    (self.store.put_deferred(hash, bytes))
                        .map_err(|e| Failure::Error(e.into()))?;
                }
                Payload::Made { bytes, .. } => {
                    if upload.is_some() {
                        uploaded.push(Arc::unwrap_or_clone(bytes));
                    }
                }
            }
            outputs.push(OutputRecord {
                label,
                kind,
                size,
                hash,
            });
        }
        let record = Record {
            format: RECORD_FORMAT,
            asset: step.asset.clone(),
            variant: self.variant.to_owned(),
            processor: step.processor.name().to_owned(),
            processor_version: step.processor.version(),
            processor_code: step.code,
            settings: step.settings_json.to_string(),
            key: step.key,
            started_ns,
            inputs: recorded.inputs,
            dependencies: recorded.dependencies,
            references: recorded.references,
            diagnostics: recorded.diagnostics,
            outputs,
            reason: Some(reason.clone()),
            fetched_from: None,
            outputs_hash: Default::default(),
        };
        // Made without a dependency that failed (see
        // `Context::dependency_if_built`): good for this build's parcels,
        // never kept or shared, so the next build runs it again.
        if recorded.left_out {
            return Ok(record);
        }
        self.records
            .append(self.store, &record)
            .map_err(|e| Failure::Error(e.into()))?;
        if let Some(remote) = upload {
            remote.upload(
                self.result_key(i),
                record.clone(),
                remote::Outputs::Bytes(uploaded),
            );
        }
        Ok(record)
    }
}

/// How many times a step is run again after rebuilding dependencies whose
/// outputs it found corrupt (each round heals every dependency it read).
const MAX_HEALS: usize = 3;

/// Outputs of at least this many bytes in all are stored in parallel.
const PARALLEL_PUT_BYTES: u64 = 4 << 20;

pub(super) enum Failure {
    Dependency(AssetPath),
    Error(ProcessError),
}

/// Runs `processor` on `ctx`, a panic turned into an error.
pub(super) fn call(processor: &dyn ErasedProcessor, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
    catch_unwind(AssertUnwindSafe(|| processor.process(ctx))).unwrap_or_else(|panic| {
        Err(ProcessError::msg(format!(
            "processor panicked: {}",
            crate::processor::panic_message(&panic)
        )))
    })
}
