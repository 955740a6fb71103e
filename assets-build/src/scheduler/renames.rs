//! Renames without reprocessing: a step with no record whose asset has the
//! bytes, processor, version, code and settings of an asset that vanished
//! in the same build takes over that asset's outputs, for processors whose
//! outputs do not depend on the path.
//!
//! An atlas whose members were renamed takes over its own last record the
//! same way, when the renames keep the members' order (a prefix, a new
//! extension, a folder renamed in place): its key holds the member list,
//! so a rename changes it, but the same contents in the same order make the
//! same pages and frame table, byte for byte. Renames that reorder the list
//! pack again (the sprites' own steps still run no processor): sprites are
//! packed in list order, by name, so that an edit that keeps a sprite's size
//! keeps every sprite in place, which hot reload counts on far more often.

use std::sync::Arc;
use std::time::SystemTime;

use super::Scheduler;
use crate::asset_path::AssetPath;
use crate::hash::ContentHash;
use crate::processor::context::Dependencies;
use crate::record::{DependencyUse, Record, system_time_ns};

impl Scheduler<'_> {
    /// For step `i`, whose asset has no record: the record of an asset no
    /// longer planned, made by the same processor, version and settings
    /// from a source of the same bytes and nothing else (a file renamed
    /// or moved), as this step's own; `None` if there is none, or if the
    /// processor's outputs may depend on the path
    /// ([`crate::Processor::path_independent`]). Its outputs are the same
    /// bytes, so no processor runs. A cold build has no records, and pays
    /// nothing: the source is hashed only when some vanished asset could
    /// match it.
    pub(super) fn renamed(&self, i: usize) -> Option<Record> {
        let step = &self.plan.steps[i];
        // A chain's later stage reads the stage before, not the file.
        let reads_the_file = (step.stage.as_ref()).is_none_or(|s| s.previous.is_none());
        if !step.processor.path_independent() || !reads_the_file {
            return None;
        }
        let vanished = self.vanished.get_or_init(|| {
            (self.records.iter())
                .filter(|r| !self.plan.index.contains_key(&r.asset))
                .filter_map(|r| Some((RenameKey::of_record(r)?, Arc::clone(r))))
                .collect()
        });
        if vanished.is_empty() {
            return None;
        }
        let root = &self.manifest.roots[step.root];
        let file = root.dir.join(step.file().as_str());
        let stamp = crate::stat_cache::stat(&file)?;
        let hash = ContentHash::of(&std::fs::read(&file).ok()?);
        let key = RenameKey {
            processor: step.processor.name().to_owned(),
            version: step.processor.version(),
            code: step.code,
            settings: step.settings_json.to_string(),
            source: hash,
        };
        let old = vanished.get(&key)?;
        if !(old.outputs.iter()).all(|o| self.store.has(&o.hash, o.size)) {
            return None;
        }
        Some(Record {
            asset: step.asset.clone(),
            key: step.key,
            started_ns: system_time_ns(SystemTime::now()),
            inputs: vec![crate::record::Input {
                path: crate::processor::context::input_name(root, &step.asset),
                state: crate::record::InputState::Present { stamp, hash },
            }],
            reason: None,
            fetched_from: None,
            outputs_hash: Default::default(),
            ..Record::clone(old)
        })
    }

    /// For atlas step `i`, whose key changed from `previous`'s: the record
    /// of the same atlas after its members were renamed in a way that
    /// keeps their order, made from `previous` without running the packer;
    /// `None` unless the atlas's settings, processor, version and code are
    /// the same and its members, built, hold what the previous members
    /// held, one for one in list order.
    pub(super) fn atlas_renamed(&self, i: usize, previous: &Record) -> Option<Record> {
        let step = &self.plan.steps[i];
        step.asset.atlas_name()?;
        let same_processor = previous.processor == step.processor.name()
            && previous.processor_version == step.processor.version()
            && previous.processor_code == step.code;
        let old: serde_json::Value = serde_json::from_str(&previous.settings).ok()?;
        let new: serde_json::Value = serde_json::from_str(&step.settings_json).ok()?;
        if !same_processor || old.get("atlas")? != new.get("atlas")? {
            return None;
        }
        let names = |v: &serde_json::Value| -> Option<Vec<String>> {
            serde_json::from_value(v.get("sprites")?.clone()).ok()
        };
        let (old_members, new_members) = (names(&old)?, names(&new)?);
        // The previous members as it used them, in list order.
        let used = &previous.dependencies;
        let lines_up = used.len() == old_members.len()
            && (used.iter().zip(&old_members)).all(|(d, name)| d.asset.as_str() == name);
        if !lines_up || new_members.len() != old_members.len() {
            return None;
        }
        let mut now = Vec::with_capacity(new_members.len());
        for (name, before) in new_members.iter().zip(used) {
            let asset = AssetPath::new(name).ok()?;
            let record = Dependencies::record_of(self, i, &asset, false).ok()?;
            let outputs_hash = record.outputs_hash();
            if outputs_hash != before.outputs_hash {
                return None;
            }
            now.push(DependencyUse {
                asset,
                outputs_hash,
            });
        }
        let stored = (previous.outputs.iter()).all(|o| self.store.has(&o.hash, o.size));
        stored.then(|| Record {
            asset: step.asset.clone(),
            key: step.key,
            settings: step.settings_json.to_string(),
            started_ns: system_time_ns(SystemTime::now()),
            dependencies: now,
            reason: None,
            fetched_from: None,
            outputs_hash: Default::default(),
            ..previous.clone()
        })
    }
}

/// What a renamed file's step shares with its vanished asset's record:
/// processor, version, settings and the source's bytes.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct RenameKey {
    processor: String,
    version: u32,
    code: Option<u64>,
    settings: String,
    source: ContentHash,
}

impl RenameKey {
    /// The key of a record that read one file, present, and used nothing
    /// else: the only kind a rename can take over.
    pub(super) fn of_record(r: &Record) -> Option<RenameKey> {
        let ([input], [], []) = (&r.inputs[..], &r.dependencies[..], &r.references[..]) else {
            return None;
        };
        let crate::record::InputState::Present { hash, .. } = &input.state else {
            return None;
        };
        Some(RenameKey {
            processor: r.processor.clone(),
            version: r.processor_version,
            code: r.processor_code,
            settings: r.settings.clone(),
            source: *hash,
        })
    }
}
