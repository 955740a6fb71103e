//! The resolved parts of a manifest: roots, rules, overrides, atlases,
//! parcels, and where each was written.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

use assets_runtime::Compression;
use globset::{GlobMatcher, GlobSet};
use serde::{Deserialize, Serialize};

use super::settings::{Encoding, Settings};
use crate::asset_path::AssetPath;

/// A directory of assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetRoot {
    /// The root as written, normalized, relative to the package: `assets`.
    /// Inputs under it are recorded as `assets/<asset path>`.
    pub name: String,
    /// The directory on disk.
    pub dir: PathBuf,
}

/// `ignore = [...]`: files under the roots that are not assets. Discovery
/// leaves them out (a folder that matches, with everything under it), so
/// no rule, processor or parcel ever sees them.
#[derive(Debug, Clone)]
pub struct Ignore {
    /// The globs as written.
    pub patterns: Vec<String>,
    pub(super) set: GlobSet,
}

impl Default for Ignore {
    fn default() -> Ignore {
        Ignore {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }
}

impl Ignore {
    /// Whether `path` (relative to its root, `/`-separated) is ignored.
    pub fn matches(&self, path: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(path)
    }
}

/// Where a rule or override was written, for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Byte range in `Cargo.toml`.
    pub span: Range<usize>,
    /// Dotted key path.
    pub key: String,
}

/// One `[[package.metadata.assets.rules]]` entry.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The glob as written.
    pub pattern: String,
    pub(super) matcher: GlobMatcher,
    /// The processor named by the rule, or `None` for the extension default;
    /// for a chain (`processor = ["a", "b"]`), its last stage.
    pub processor: Option<String>,
    /// A chain's stages before [`Rule::processor`], in order: each one's
    /// main output is the next one's source. Empty for one processor.
    pub chain: Vec<String>,
    /// Where the processor name was written.
    pub processor_origin: Option<Origin>,
    /// `inputs`: globs of other assets the step reads without saying so
    /// (an external tool with no depfile). The planner lists the matching
    /// assets in the step's key, and each is an input of the step.
    pub inputs: Option<GlobSet>,
    /// `compression`: how parcels compress the resources of the rule's
    /// steps, over the parcel's own choice (see
    /// [`ParcelSpec::compression_for`]).
    pub compression: Option<Compression>,
    /// `timeout`: how long a step of the rule may run before the build
    /// stops it (over [`BuildOptions::step_timeout`](crate::unstable::BuildOptions)).
    pub timeout: Option<std::time::Duration>,
    /// Every other key of the rule.
    pub settings: Settings,
    /// Where each setting's key was written.
    pub setting_origins: BTreeMap<String, Origin>,
    /// `platforms.<name>`: settings merged over the rule's when building
    /// for that platform.
    pub platform_settings: BTreeMap<String, Settings>,
    /// Where the rule was written.
    pub origin: Origin,
}

/// `[package.metadata.assets.platforms.<name>]`: a platform and the target
/// triples it covers.
#[derive(Debug, Clone)]
pub struct Platform {
    /// Its name.
    pub name: String,
    /// The `targets` globs, as written.
    pub patterns: Vec<String>,
    pub(super) targets: globset::GlobSet,
    /// `settings.<processor>`: settings every step of that processor takes
    /// on this platform, by processor name.
    pub processor_settings: BTreeMap<String, PlatformSettings>,
}

/// One `settings.<processor>` table of a platform.
#[derive(Debug, Clone)]
pub struct PlatformSettings {
    /// The settings.
    pub settings: Settings,
    /// Where each setting's key was written.
    pub setting_origins: BTreeMap<String, Origin>,
    /// Where the table was written.
    pub origin: Origin,
}

impl Platform {
    /// Whether the target triple `triple` is one of this platform's.
    pub fn covers(&self, triple: &str) -> bool {
        self.targets.is_match(triple)
    }
}

/// One `[package.metadata.assets.overrides."<asset>"]` entry.
#[derive(Debug, Clone)]
pub struct Override {
    /// A processor that replaces the rule's (a chain's last stage).
    pub processor: Option<String>,
    /// The chain's stages before it (see [`Rule::chain`]).
    pub chain: Vec<String>,
    /// Where the processor name was written.
    pub processor_origin: Option<Origin>,
    /// Settings merged over the rule's.
    pub settings: Settings,
    /// Where each setting's key was written.
    pub setting_origins: BTreeMap<String, Origin>,
    /// Where the override was written.
    pub origin: Origin,
}

/// An `[package.metadata.assets.aliases]` entry: an old name that keeps
/// answering for the asset it was renamed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    /// The asset it stands for.
    pub asset: AssetPath,
    /// Where it was written.
    pub origin: Origin,
}

/// `[package.metadata.assets.atlases.<name>]`: how an atlas is packed.
///
/// | key            | default | meaning |
/// |----------------|---------|---------|
/// | `max-size`     | `2048`  | page width and height limit, in pixels (at most 16384) |
/// | `padding`      | `2`     | pixels between sprites (extruded borders included) |
/// | `extrude`      | `0`     | pixels of each sprite's edge repeated around it, against texture bleeding |
/// | `rotate`       | `false` | sprites may be turned 90° to pack tighter |
/// | `power-of-two` | `false` | page sizes rounded up to powers of two (`max-size` must be one) |
/// | `premultiply`  | `false` | page colors multiplied by alpha |
/// | `encoding`     | by variant | pages as `"raw"` pixels, `"lz4"` or `"zstd"` compressed rows, or `"png"`; unset: `"zstd"` in release, `"lz4"` otherwise |
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct AtlasSpec {
    /// Page size limit in pixels (width and height).
    pub max_size: u32,
    /// Pixels between sprites.
    pub padding: u32,
    /// Pixels of edge repeated around each sprite.
    pub extrude: u32,
    /// Whether sprites may be turned 90°.
    pub rotate: bool,
    /// Whether page sizes are rounded up to powers of two.
    pub power_of_two: bool,
    /// Whether page colors are multiplied by alpha.
    pub premultiply: bool,
    /// How pages are stored.
    pub encoding: Option<Encoding>,
}

impl Default for AtlasSpec {
    fn default() -> AtlasSpec {
        AtlasSpec {
            max_size: 2048,
            padding: 2,
            extrude: 0,
            rotate: false,
            power_of_two: false,
            premultiply: false,
            encoding: None,
        }
    }
}

/// The largest page side an atlas may ask for.
pub const MAX_ATLAS_SIZE: u32 = 16384;

/// The atlas sprites go to when their rule names none; it needs no table.
pub const DEFAULT_ATLAS: &str = "main";

/// A named bundle of resources.
#[derive(Debug, Clone)]
pub struct ParcelSpec {
    /// The parcel's name, e.g. `main`.
    pub name: String,
    /// Include globs as written.
    pub include_patterns: Vec<String>,
    /// Exclude globs as written.
    pub exclude_patterns: Vec<String>,
    /// The `compression` key, if written; see [`ParcelSpec::compression_for`].
    pub compression: Option<Compression>,
    pub(super) include: GlobSet,
    pub(super) exclude: GlobSet,
}

impl ParcelSpec {
    /// Whether the parcel holds `asset`.
    pub fn contains(&self, asset: &AssetPath) -> bool {
        self.include.is_match(asset.as_str()) && !self.exclude.is_match(asset.as_str())
    }

    /// How the parcel's resources are compressed in `variant`: as written,
    /// else `zstd` for `release` (the smallest parcels; `lz4` when
    /// assets-build's `zstd` feature is off) and `lz4` for every other
    /// variant (quick to write and to read). Images and sprites are never
    /// compressed by the parcel: image rows have their own `encoding`.
    pub fn compression_for(&self, variant: &str) -> Compression {
        self.compression
            .unwrap_or(if super::is_release(variant) && cfg!(feature = "zstd") {
                Compression::Zstd
            } else {
                Compression::Lz4
            })
    }
}

/// Which processor and settings an asset gets, and which key decided it.
#[derive(Debug, Clone)]
pub struct Assignment {
    /// The processor name (a chain's last stage).
    pub processor: String,
    /// A chain's stages before it (see [`Rule::chain`]), each with the
    /// settings table under its name taken out of [`Assignment::settings`]
    /// by the planner.
    pub chain: Vec<String>,
    /// The merged settings.
    pub settings: Settings,
    /// Where its settings were written: the override, else the rule, else
    /// the platform's `settings.<processor>` table; `None` for none.
    pub origin: Option<Origin>,
    /// Where the processor name was written, if it was.
    pub processor_origin: Option<Origin>,
    /// The matching rule's `inputs` globs.
    pub inputs: Option<GlobSet>,
    /// The matching rule's `compression`: how parcels compress the step's
    /// resources, over their own choice.
    pub compression: Option<Compression>,
    /// Where each setting's key was written (the override's, else the rule's).
    pub setting_origins: BTreeMap<String, Origin>,
    /// Whether the settings on the platform asked for differ from the
    /// settings with no platform (through the rule's `platforms.<name>`
    /// table, or the platform's `settings.<processor>`).
    pub platform_specific: bool,
    /// The index of the rule that matched, in [`super::Manifest::rules`].
    pub rule: Option<usize>,
}
