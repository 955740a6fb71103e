//! The parcel stage: after every step, each parcel of the manifest is
//! assembled from the outputs of the assets its globs select.
//!
//! A resource is named by its asset path, or `<asset>#<label>` for a labelled
//! output, and has its output's kind. The format is [`assets_runtime::format`].
//!
//! Files: `<cache>/parcels/<variant>/<name>.parcel`, and beside it
//! `<name>.parcel.key`, the hash of the parcel's resource list (names, kinds,
//! blob hashes). A parcel whose key is unchanged is not read or rewritten, so
//! a no-op build costs no parcel I/O beyond two small reads. A changed parcel
//! is written to a temp file and renamed (a game holding the old file is
//! never torn), then its key; a kill in between only means it is rewritten
//! next time.
//!
//! A parcel that holds a failed or skipped asset is not written: the last
//! good one stays, and the report says why.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use assets_runtime::write::ParcelWriter;

use crate::hash::ContentHash;
use crate::manifest::Manifest;
use crate::report::{Outcome, StepReport};
use crate::store::{Store, StoreError};

/// What happened to one parcel.
#[derive(Debug)]
pub struct ParcelReport {
    /// Its name in the manifest.
    pub name: String,
    /// Where it is (or would be) on disk.
    pub path: PathBuf,
    /// What happened.
    pub outcome: ParcelOutcome,
}

/// Whether a parcel was written.
#[derive(Debug)]
pub enum ParcelOutcome {
    /// Its contents changed and it was rewritten.
    Written {
        /// Resources in it.
        resources: usize,
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
        error: String,
    },
}

/// Where parcel `name` of `variant` lives under the cache directory.
pub fn parcel_path(cache_dir: &Path, variant: &str, name: &str) -> PathBuf {
    cache_dir
        .join("parcels")
        .join(variant)
        .join(format!("{name}.parcel"))
}

/// Writes every parcel of `manifest` from `steps` (sorted by asset).
pub(crate) fn write_parcels(
    manifest: &Manifest,
    store: &Store,
    variant: &str,
    steps: &[Arc<StepReport>],
) -> Vec<ParcelReport> {
    manifest
        .parcels
        .iter()
        .map(|spec| {
            let path = parcel_path(store.dir(), variant, &spec.name);
            let members: Vec<&StepReport> = steps
                .iter()
                .map(|s| &**s)
                .filter(|s| spec.contains(&s.asset))
                .collect();
            let failed: Vec<String> = members
                .iter()
                .filter(|s| matches!(s.outcome, Outcome::Failed { .. } | Outcome::Skipped { .. }))
                .map(|s| s.asset.to_string())
                .collect();
            let outcome = if failed.is_empty() {
                write_one(store, &path, &members).unwrap_or_else(|e| ParcelOutcome::Failed {
                    error: e.to_string(),
                })
            } else {
                ParcelOutcome::Blocked { failed }
            };
            ParcelReport {
                name: spec.name.clone(),
                path,
                outcome,
            }
        })
        .collect()
}

/// One resource to be: name, kind, blob.
struct Planned {
    name: String,
    kind: String,
    hash: ContentHash,
}

fn write_one(
    store: &Store,
    path: &Path,
    members: &[&StepReport],
) -> Result<ParcelOutcome, StoreError> {
    let mut planned = Vec::new();
    for step in members {
        let record = step
            .record
            .as_ref()
            .expect("a successful step has a record");
        for o in &record.outputs {
            let name = if o.label.is_empty() {
                step.asset.to_string()
            } else {
                format!("{}#{}", step.asset, o.label)
            };
            planned.push(Planned {
                name,
                kind: o.kind.clone(),
                hash: o.hash,
            });
        }
    }
    let key = parcel_key(&planned);
    let key_path = path.with_extension("parcel.key");
    let resources = planned.len();
    let unchanged =
        fs::read_to_string(&key_path).is_ok_and(|k| k.trim() == key.to_hex()) && path.is_file();
    if unchanged {
        return Ok(ParcelOutcome::Unchanged { resources });
    }
    let mut writer = ParcelWriter::new();
    for p in &planned {
        writer.add(&p.name, &p.kind, store.get(&p.hash)?);
    }
    let bytes = writer.finish().map_err(|e| StoreError::Io {
        action: "could not assemble",
        path: path.to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    store.write_atomic(path, &bytes)?;
    store.write_atomic(&key_path, format!("{key}\n").as_bytes())?;
    Ok(ParcelOutcome::Written { resources })
}

/// The identity of a parcel's contents: the format version and every
/// resource's name, kind and blob hash.
fn parcel_key(planned: &[Planned]) -> ContentHash {
    let mut h = blake3::Hasher::new();
    h.update(&assets_runtime::format::VERSION.to_le_bytes());
    for p in planned {
        for field in [p.name.as_bytes(), p.kind.as_bytes(), p.hash.as_bytes()] {
            h.update(&(field.len() as u64).to_le_bytes());
            h.update(field);
        }
    }
    h.finalize().into()
}
