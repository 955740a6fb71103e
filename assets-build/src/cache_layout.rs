//! [`CacheLayout`]: every path under the cache directory, in one place (as
//! Cargo keeps its target directory's in `layout.rs`). Nothing else joins
//! names onto the cache directory.
//!
//! ```text
//! <cache>/                            conventionally <target-dir>/assets
//!   lock                              exclusive for the length of a build
//!   tmp/                              half-written files, retired parcels, step temp dirs
//!   tmp/writing-blobs                 present while a build may be writing blobs
//!   blobs/3f/3fa9…                    outputs over 1 MiB, named by blake3
//!   packs/00000001.pack, .idx         smaller outputs, appended; the index says where
//!   records/<package>/<variant>.records every step's record, one log per package and variant
//!   parcels/<package>/<variant>/      the CLI's parcels, with .key, .toc and .sums beside
//!   runner/<package>/, runner/target/ the processor runner crate of a package, and its build
//!                                    where no user cache folder is known (it is shared there)
//! ```

use std::path::{Path, PathBuf};

use crate::hash::ContentHash;

/// The extension of a record log (see `record_log.rs`).
pub(crate) const RECORD_LOG_EXTENSION: &str = "records";

/// The paths of one cache directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLayout {
    root: PathBuf,
}

impl CacheLayout {
    /// The layout of the cache at `root`.
    pub fn new(root: impl Into<PathBuf>) -> CacheLayout {
        CacheLayout { root: root.into() }
    }

    /// The cache directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The lock file builds take turns on.
    pub fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }

    /// Half-written files; emptied at the start of each build.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The marker present while a build may be writing blobs.
    pub fn writing_blobs_marker(&self) -> PathBuf {
        self.tmp().join("writing-blobs")
    }

    /// The blob store.
    pub fn blobs(&self) -> PathBuf {
        self.root.join("blobs")
    }

    /// Where the blob named `hash` lives: `blobs/<first two hex digits>/<hex>`.
    pub fn blob(&self, hash: &ContentHash) -> PathBuf {
        let hex = hash.to_hex();
        self.blobs().join(&hex[..2]).join(hex)
    }

    /// The pack files of small blobs.
    pub fn packs(&self) -> PathBuf {
        self.root.join("packs")
    }

    /// Pack `number`'s data file: `packs/00000001.pack`.
    pub fn pack(&self, number: u32) -> PathBuf {
        self.packs().join(format!("{number:08}.pack"))
    }

    /// Pack `number`'s index, beside its data file.
    pub fn pack_index(&self, number: u32) -> PathBuf {
        self.packs().join(format!("{number:08}.idx"))
    }

    /// Every package's record logs.
    pub fn records(&self) -> PathBuf {
        self.root.join("records")
    }

    /// One package's record logs, one per variant. Packages of a workspace
    /// share blobs, never records: asset paths are unique only within a
    /// package.
    pub fn package_records(&self, package: &str) -> PathBuf {
        self.records().join(package)
    }

    /// The record log of `package`'s `variant` (a [`variant_slot`]: the
    /// variant, or `variant.platform` on a platform).
    pub fn record_log(&self, package: &str, variant: &str) -> PathBuf {
        self.package_records(package)
            .join(format!("{variant}.{RECORD_LOG_EXTENSION}"))
    }

    /// The CLI's parcels, one folder per package.
    pub fn parcels(&self) -> PathBuf {
        self.root.join("parcels")
    }

    /// One package's parcels, one folder per variant.
    pub fn package_parcels(&self, package: &str) -> PathBuf {
        self.parcels().join(package)
    }

    /// Where the CLI writes `package`'s parcels of `variant` (a
    /// [`variant_slot`]).
    pub fn parcel_dir(&self, package: &str, variant: &str) -> PathBuf {
        self.package_parcels(package).join(variant)
    }

    /// The processor runner crate generated for `package`.
    pub fn runner(&self, package: &str) -> PathBuf {
        self.root.join("runner").join(package)
    }

    /// The target directory the runners are built in when the user has no
    /// cache folder (they share one there: `cargo_assets::runner`).
    pub fn runner_target(&self) -> PathBuf {
        self.root.join("runner").join("target")
    }
}

/// Where a variant's records and parcels live on a platform: `release`, or
/// `release.web` when building for the platform `web`. Variant names hold
/// no `.`, so the two never clash, and each platform keeps its own records
/// and parcels beside the others: switching back and forth runs nothing.
pub fn variant_slot(variant: &str, platform: Option<&str>) -> String {
    match platform {
        Some(p) => format!("{variant}.{p}"),
        None => variant.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_as_the_layout_draws_them() {
        let c = CacheLayout::new("/t/assets");
        let hash = ContentHash::of(b"x");
        let hex = hash.to_hex();
        let cases = [
            (c.lock(), "/t/assets/lock".to_owned()),
            (
                c.writing_blobs_marker(),
                "/t/assets/tmp/writing-blobs".to_owned(),
            ),
            (
                c.blob(&hash),
                format!("/t/assets/blobs/{}/{hex}", &hex[..2]),
            ),
            (c.pack(7), "/t/assets/packs/00000007.pack".to_owned()),
            (c.pack_index(7), "/t/assets/packs/00000007.idx".to_owned()),
            (
                c.record_log("game", "dev"),
                "/t/assets/records/game/dev.records".to_owned(),
            ),
            (
                c.parcel_dir("game", "release"),
                "/t/assets/parcels/game/release".to_owned(),
            ),
            (c.runner("game"), "/t/assets/runner/game".to_owned()),
            (c.runner_target(), "/t/assets/runner/target".to_owned()),
        ];
        for (path, expected) in cases {
            assert_eq!(path, PathBuf::from(expected));
        }
    }
}
