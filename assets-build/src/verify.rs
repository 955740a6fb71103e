//! Checking that the cache can be trusted: fresh steps built again, without
//! looking at the cache, and their outputs compared with the recorded ones
//! (as Go's `GODEBUG=gocacheverify=1` does for its build cache).
//!
//! A processor whose outputs are not a function of its recorded inputs and
//! settings (a timestamp, a random seed, an unrecorded file) makes every
//! cache that trusts it wrong, and a shared cache wrong for everyone; this
//! is how it is caught. [`Verify`] in [`BuildOptions`](crate::unstable::BuildOptions)
//! selects the fresh steps to check: all of them, or a fraction chosen by
//! a seeded hash of each asset's path (the same steps for the same seed, on
//! any machine and thread count). A checked step's report says what was
//! found ([`Verification`]); nothing is stored and no record is written.
//!
//! The cache's own copies are checked on the way: each checked step's
//! outputs are read back against their hashes, and (in the pipeline) every
//! parcel is read whole against its checksums. A damaged copy is removed,
//! or a damaged parcel written again, and reported as damage
//! ([`Verification::Damaged`]), which the next build repairs, never as a
//! processor that does not reproduce.

use crate::asset_path::AssetPath;
use crate::hash::ContentHash;
use crate::processor::ProcessError;
use crate::processor::context::{Emitted, Payload};
use crate::record::Record;

/// Which fresh steps a build checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verify {
    /// The fraction of fresh steps to check, from 0 (none) to 1 (all).
    pub fraction: f64,
    /// Chooses which steps make up the fraction.
    pub seed: u64,
}

impl Verify {
    /// Every fresh step.
    pub fn all() -> Verify {
        Verify {
            fraction: 1.0,
            seed: 0,
        }
    }

    /// Whether `asset`'s step is checked: a hash of the seed and the path,
    /// below the fraction.
    pub fn selects(&self, asset: &AssetPath) -> bool {
        if self.fraction >= 1.0 {
            return true;
        }
        let mut h = blake3::Hasher::new();
        h.update(&self.seed.to_le_bytes());
        h.update(asset.as_str().as_bytes());
        let bytes: [u8; 8] = h.finalize().as_bytes()[..8].try_into().expect("8 bytes");
        (u64::from_le_bytes(bytes) as f64 / u64::MAX as f64) < self.fraction
    }
}

/// What building a fresh step again found.
#[derive(Debug)]
#[non_exhaustive]
pub enum Verification {
    /// The same outputs, byte for byte.
    Same,
    /// Different outputs: the processor is not deterministic, or reads what
    /// it does not record.
    Differs(Vec<OutputMismatch>),
    /// The processor failed where it had succeeded.
    Failed(ProcessError),
    /// The cache's copy of an output, this step's or one it reads, did not
    /// match its hash: damage on disk, not the processor's doing. The copy
    /// was removed (a packed one forgotten for good), so the next build
    /// makes it again.
    Damaged(ProcessError),
}

/// One output that differs between the cache and the rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputMismatch {
    /// The output's label (empty for the main output).
    pub label: String,
    /// Its hash in the cache; `None` if the cache has no such output.
    pub cached: Option<ContentHash>,
    /// Its hash when built again; `None` if the rebuild made no such output.
    pub rebuilt: Option<ContentHash>,
}

/// Compares `record`'s outputs with `rebuilt` ones, each hashed here
/// (whatever hash the step emitted with them).
pub(crate) fn compare(record: &Record, rebuilt: &[Emitted]) -> Verification {
    let mut mismatches = Vec::new();
    for o in &record.outputs {
        let again = rebuilt
            .iter()
            .find(|r| r.label == o.label && r.kind == o.kind);
        let hash = again.map(rehash);
        if hash != Some(o.hash) {
            mismatches.push(OutputMismatch {
                label: o.label.clone(),
                cached: Some(o.hash),
                rebuilt: hash,
            });
        }
    }
    for r in rebuilt {
        if !record
            .outputs
            .iter()
            .any(|o| o.label == r.label && o.kind == r.kind)
        {
            mismatches.push(OutputMismatch {
                label: r.label.clone(),
                cached: None,
                rebuilt: Some(rehash(r)),
            });
        }
    }
    if mismatches.is_empty() {
        Verification::Same
    } else {
        Verification::Differs(mismatches)
    }
}

/// The hash of the bytes a step made, worked out here; one held from
/// before (never emitted by a step checked, see `Context::emit_held`) by
/// the hash it is held under.
fn rehash(emitted: &Emitted) -> ContentHash {
    match &emitted.payload {
        Payload::Made { bytes, .. } => ContentHash::of(bytes),
        Payload::Held(held) => held.hash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fraction_selects_about_that_share_the_same_way_for_a_seed() {
        let assets: Vec<AssetPath> = (0..2000)
            .map(|i| AssetPath::new(&format!("a/{i}.txt")).unwrap())
            .collect();
        let pick = |v: Verify| -> Vec<bool> { assets.iter().map(|a| v.selects(a)).collect() };
        let quarter = Verify {
            fraction: 0.25,
            seed: 7,
        };
        let chosen = pick(quarter).iter().filter(|&&s| s).count();
        assert!((400..600).contains(&chosen), "{chosen} of 2000");
        assert_eq!(pick(quarter), pick(quarter));
        assert_ne!(pick(quarter), pick(Verify { seed: 8, ..quarter }));
        assert!(pick(Verify::all()).iter().all(|&s| s));
        let none = Verify {
            fraction: 0.0,
            seed: 1,
        };
        assert!(pick(none).iter().all(|&s| !s));
    }
}
