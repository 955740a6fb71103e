//! The remote cache as the scheduler asks it: lookups started for many
//! steps at once (a folder whose every step asks is one bundle), and a
//! result adopted only when its inputs and dependencies are this
//! machine's, each fetched output checked against its hash before it is
//! stored (see [`crate::unstable::remote`] for the cache itself).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::Scheduler;
use crate::event::Event;
use crate::freshness::{self, Verdict};
use crate::hash::ContentHash;
use crate::record::{RECORD_FORMAT, Record};
use crate::remote::{self, Remote};
use crate::report::{Outcome, StepReport};

impl Scheduler<'_> {
    /// Starts the remote lookups of steps `asking` (result keys `keys`):
    /// a folder all of whose steps ask is read as one bundle
    /// ([`remote::bundle`]), other steps one by one.
    pub(super) fn prefetch(&self, remote: &Remote, asking: &[usize], keys: &[ContentHash]) {
        let folder = |i: usize| {
            let step = &self.plan.steps[i];
            let path = step.asset.as_str();
            (step.asset.atlas_name().is_none())
                .then(|| (step.root, path.rsplit_once('/').map_or("", |(dir, _)| dir)))
        };
        let mut in_plan: HashMap<(usize, &str), usize> = HashMap::new();
        for i in 0..self.plan.steps.len() {
            if let Some(f) = folder(i) {
                *in_plan.entry(f).or_default() += 1;
            }
        }
        let mut by_folder: BTreeMap<(usize, &str), Vec<(&str, ContentHash)>> = BTreeMap::new();
        for (&i, &key) in asking.iter().zip(keys) {
            match folder(i) {
                Some(f) => by_folder
                    .entry(f)
                    .or_default()
                    .push((self.plan.steps[i].asset.as_str(), key)),
                None => remote.prefetch(key),
            }
        }
        for (f, members) in by_folder {
            if members.len() >= 2 && members.len() == in_plan[&f] {
                let keys = members.iter().map(|(_, k)| *k).collect();
                remote.prefetch_bundle(remote::bundle_key(&members), keys);
            } else {
                for (_, key) in members {
                    remote.prefetch(key);
                }
            }
        }
    }

    /// The key of step `i`'s entry on the remote: its step key and the
    /// contents of its asset's file (none for an atlas).
    pub(super) fn result_key(&self, i: usize) -> ContentHash {
        if let Some(key) = self.result_keys.get().and_then(|keys| keys.get(&i)) {
            return *key;
        }
        let step = &self.plan.steps[i];
        // A chain's stages: the file the chain builds.
        let file = self.manifest.roots[step.root]
            .dir
            .join(step.file().as_str());
        let source = std::fs::read(file)
            .ok()
            .map(|bytes| ContentHash::of(&bytes));
        remote::result_key(&step.key, source.as_ref())
    }

    /// Step `i` served by the remote cache, if it holds a result whose
    /// inputs and dependencies are this machine's: its outputs are fetched
    /// (each checked against its hash), stored, and its record adopted.
    pub(super) fn fetch(&self, i: usize) -> Option<StepReport> {
        let remote = self.remote?;
        let found = remote.lookup(self.result_key(i));
        let report = found.and_then(|entry| self.adopt_remote(i, remote, entry));
        for warning in remote.take_warnings() {
            self.emit(&Event::RemoteWarning { message: &warning });
        }
        report
    }

    fn adopt_remote(
        &self,
        i: usize,
        remote: &Remote,
        entry: crate::remote::entry::Entry,
    ) -> Option<StepReport> {
        let step = &self.plan.steps[i];
        let record = entry.record;
        let same_step = record.format == RECORD_FORMAT
            && record.key == step.key
            && record.asset == step.asset
            && record.variant == self.variant;
        if !same_step {
            return None;
        }
        let current = self.plan.current(i, &self.manifest.package_dir, self.stats);
        let record = match freshness::check_inputs(&record, &current, |asset| {
            self.dependency_state(i, asset)
        }) {
            Verdict::Fresh(None) => record,
            Verdict::Fresh(Some(refreshed)) => *refreshed,
            Verdict::Stale(_) | Verdict::DependencyFailed(_) => return None,
        };
        // Outputs this machine lacks: inlined ones from the entry, the
        // others fetched; every one checked before it is stored.
        // Those a parcel will hold are kept for it, as when a step runs.
        let asset = step.asset.as_str();
        let bound = self.parcel_bound(i);
        let keep = |hash: ContentHash, kind: &str, bytes: Vec<u8>| {
            if bound.holds(kind) {
                self.store.put_deferred(hash, Arc::new(bytes))
            } else {
                self.store.put_checked(hash, &bytes).map(drop)
            }
        };
        let mut wanted = Vec::new();
        for (output, inline) in record.outputs.iter().zip(entry.inline) {
            if self.store.has(&output.hash, output.size) {
                continue;
            }
            match inline {
                Some(bytes) => {
                    if !remote.verify(asset, &output.hash, output.size, &bytes) {
                        return None;
                    }
                    keep(output.hash, &output.kind, bytes).ok()?;
                }
                None => wanted.push((output.hash, output.size, output.kind.as_str())),
            }
        }
        if !wanted.is_empty() {
            // Each checked against its hash by `fetch_blobs`.
            let asked: Vec<_> = wanted.iter().map(|&(hash, size, _)| (hash, size)).collect();
            let fetched = remote.fetch_blobs(asset, &asked)?;
            for (bytes, (hash, _, kind)) in fetched.into_iter().zip(wanted) {
                keep(hash, kind, bytes).ok()?;
            }
        }
        let record = Record {
            reason: None,
            fetched_from: Some(remote.display().to_owned()),
            ..record
        };
        self.records.append(self.store, &record).ok()?;
        Some(StepReport::new(
            step.asset.clone(),
            step.processor.name().to_owned(),
            Outcome::Fetched,
            Some(Arc::new(record)),
        ))
    }
}
