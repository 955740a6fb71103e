//! The `[package.metadata.assets]` section of `Cargo.toml`, parsed and checked.
//!
//! Reading happens in two stages, kept as two sets of types:
//!
//! 1. `raw.rs`: a serde mirror of what the user wrote, every key and value
//!    with its byte span. No logic.
//! 2. [`Manifest`]: the resolved configuration. Globs are compiled, roots are
//!    normalized, parcels have their defaults, and every rule remembers where it
//!    was written so later errors (an unknown processor, bad settings) can point
//!    at the key.
//!
//! Every error is a [`ManifestError`] naming the file, line, column and key.
//!
//! ```toml
//! [package.metadata.assets]
//! root = "assets"                      # or ["assets", "more-assets"]
//!
//! [[package.metadata.assets.rules]]    # first match wins, in file order
//! match = "sprites/**/*.png"           # glob relative to the root
//! processor = "sprite"                 # optional: default is by extension
//! atlas = "main"                       # every other key is a setting
//!
//! [package.metadata.assets.atlases.main]
//! max-size = 2048                      # see AtlasSpec for every key
//!
//! [package.metadata.assets.overrides."sprites/hero.png"]
//! premultiply = true                   # merged over the matching rule's settings
//!
//! [package.metadata.assets.parcels]
//! main = ["**"]                        # or { include = [...], exclude = [...] }
//! ```

mod diagnostic;
mod raw;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use diagnostic::ManifestError;
pub(crate) use diagnostic::did_you_mean;
use diagnostic::suggest_for_unknown_field;
use raw::{RawAssets, RawCargoToml, RawTable};

use crate::asset_path::AssetPath;
use crate::processor::image::Encoding;

const ASSETS_KEY: &str = "package.metadata.assets";

/// The resolved asset configuration of one package.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The `Cargo.toml` this came from.
    pub manifest_path: PathBuf,
    /// The directory holding `Cargo.toml`.
    pub package_dir: PathBuf,
    /// `package.name`.
    pub package_name: String,
    /// Where assets are found, in the order written.
    pub roots: Vec<AssetRoot>,
    /// Rules in file order; the first that matches an asset wins.
    pub rules: Vec<Rule>,
    /// Per-asset settings merged over the matching rule's.
    pub overrides: BTreeMap<AssetPath, Override>,
    /// Atlas settings by atlas name.
    pub atlases: BTreeMap<String, AtlasSpec>,
    /// Parcels, sorted by name.
    pub parcels: Vec<ParcelSpec>,
    /// Packages whose `register(&mut Registry)` adds processors: the build
    /// script calls the same functions through `Builder::register`, and
    /// `cargo assets` links them into a runner.
    pub processor_crates: Vec<String>,
    source: Arc<str>,
}

/// A directory of assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetRoot {
    /// The root as written, normalized, relative to the package: `assets`.
    /// Inputs under it are recorded as `assets/<asset path>`.
    pub name: String,
    /// The directory on disk.
    pub dir: PathBuf,
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
    matcher: GlobMatcher,
    /// The processor named by the rule, or `None` for the extension default.
    pub processor: Option<String>,
    /// Where the processor name was written.
    pub processor_origin: Option<Origin>,
    /// `inputs`: globs of other assets the step reads without saying so
    /// (an external tool with no depfile). The planner lists the matching
    /// assets in the step's key, and each is an input of the step.
    pub inputs: Option<GlobSet>,
    /// Every other key of the rule.
    pub settings: Settings,
    /// Where each setting's key was written.
    pub setting_origins: BTreeMap<String, Origin>,
    /// Where the rule was written.
    pub origin: Origin,
}

/// One `[package.metadata.assets.overrides."<asset>"]` entry.
#[derive(Debug, Clone)]
pub struct Override {
    /// A processor that replaces the rule's.
    pub processor: Option<String>,
    /// Where the processor name was written.
    pub processor_origin: Option<Origin>,
    /// Settings merged over the rule's.
    pub settings: Settings,
    /// Where each setting's key was written.
    pub setting_origins: BTreeMap<String, Origin>,
    /// Where the override was written.
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
/// | `encoding`     | `"raw"` | pages as `"raw"` pixels or `"png"` |
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
    pub encoding: Encoding,
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
            encoding: Encoding::Raw,
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
    include: GlobSet,
    exclude: GlobSet,
}

impl ParcelSpec {
    /// Whether the parcel holds `asset`.
    pub fn contains(&self, asset: &AssetPath) -> bool {
        self.include.is_match(asset.as_str()) && !self.exclude.is_match(asset.as_str())
    }
}

/// A processor's settings: the keys of its rule other than `match` and
/// `processor`, with overrides merged in. Processors read them with
/// [`Settings::get`] into their own serde type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings(toml::Table);

impl Settings {
    /// Deserializes the settings into `T`. Use `#[serde(deny_unknown_fields)]`
    /// on `T` so that typos are reported.
    pub fn get<T: DeserializeOwned>(&self) -> Result<T, SettingsError> {
        T::deserialize(toml::Value::Table(self.0.clone())).map_err(|e| {
            let message = e.message().trim_end_matches('\n').to_owned();
            SettingsError {
                help: suggest_for_unknown_field(&message),
                message,
            }
        })
    }

    /// The raw table.
    pub fn table(&self) -> &toml::Table {
        &self.0
    }

    /// Settings holding `table`.
    pub fn from_table(table: toml::Table) -> Settings {
        Settings(table)
    }

    /// Takes `key` out, for settings the planner reads itself (`atlas`).
    pub(crate) fn take(&mut self, key: &str) -> Option<toml::Value> {
        self.0.remove(key)
    }

    /// The canonical JSON form hashed into step keys: keys sorted, no spacing.
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(&self.0).expect("toml values always serialize to JSON")
    }

    fn merged(&self, over: &Settings) -> Settings {
        let mut table = self.0.clone();
        table.extend(over.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        Settings(table)
    }
}

/// Settings that do not fit a processor's settings type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SettingsError {
    /// The deserializer's message.
    pub message: String,
    /// A suggestion for a misspelled key.
    pub help: Option<String>,
}

/// Which processor and settings an asset gets, and which key decided it.
#[derive(Debug, Clone)]
pub struct Assignment {
    /// The processor name.
    pub processor: String,
    /// The merged settings.
    pub settings: Settings,
    /// The rule or override that chose them, if any.
    pub origin: Option<Origin>,
    /// Where the processor name was written, if it was.
    pub processor_origin: Option<Origin>,
    /// The matching rule's `inputs` globs.
    pub inputs: Option<GlobSet>,
    /// Where each setting's key was written (the override's, else the rule's).
    pub setting_origins: BTreeMap<String, Origin>,
}

/// The default processor for a file extension (design brief §6).
pub fn default_processor(extension: Option<&str>) -> &'static str {
    match extension.map(str::to_ascii_lowercase).as_deref() {
        Some("png" | "jpg" | "jpeg") => "image",
        Some("txt" | "json" | "ron" | "toml" | "wgsl" | "wesl" | "glsl") => "text",
        #[cfg(feature = "gltf")]
        Some("gltf" | "glb") => "gltf",
        _ => "copy",
    }
}

impl Manifest {
    /// Reads and resolves the `Cargo.toml` at `path`.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ManifestError::whole_file(path, format!("could not read the manifest: {e}"))
        })?;
        Manifest::parse(path, &text)
    }

    /// Resolves `text`, the contents of the `Cargo.toml` at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
        let raw: RawCargoToml = toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end_matches('\n').to_owned();
            let help = suggest_for_unknown_field(&message);
            let mut err = ManifestError::at(path, text, e.span(), message);
            err.help = help;
            err
        })?;
        let package = raw.package.ok_or_else(|| {
            ManifestError::whole_file(path, "no `[package]` table: cargo-assets works on packages")
                .help("point --manifest-path at a package's Cargo.toml, not a virtual workspace")
        })?;
        let assets = package.metadata.and_then(|m| m.assets);
        Resolver { path, text }.resolve(package.name.unwrap_or_default(), assets)
    }

    /// The processor and settings for `asset`: override, else first matching
    /// rule, else the default for its extension.
    pub fn assign(&self, asset: &AssetPath) -> Assignment {
        let rule = self
            .rules
            .iter()
            .find(|r| r.matcher.is_match(asset.as_str()));
        let over = self.overrides.get(asset);
        let named = over
            .and_then(|o| o.processor.clone().zip(o.processor_origin.clone()))
            .or_else(|| rule.and_then(|r| r.processor.clone().zip(r.processor_origin.clone())));
        let (processor, processor_origin) = match named {
            Some((p, o)) => (p, Some(o)),
            None => (default_processor(asset.extension()).to_owned(), None),
        };
        let base = rule.map(|r| r.settings.clone()).unwrap_or_default();
        let settings = match over {
            Some(o) => base.merged(&o.settings),
            None => base,
        };
        let origin = over
            .map(|o| o.origin.clone())
            .or_else(|| rule.map(|r| r.origin.clone()));
        let mut setting_origins = rule.map(|r| r.setting_origins.clone()).unwrap_or_default();
        if let Some(o) = over {
            setting_origins.extend(o.setting_origins.clone());
        }
        Assignment {
            setting_origins,
            processor,
            settings,
            origin,
            processor_origin,
            inputs: rule.and_then(|r| r.inputs.clone()),
        }
    }

    /// An error pointing at `origin` in this manifest.
    pub fn error_at(&self, origin: &Origin, message: impl Into<String>) -> ManifestError {
        ManifestError::at(
            &self.manifest_path,
            &self.source,
            Some(origin.span.clone()),
            message,
        )
        .key(origin.key.clone())
    }

    /// An error about the assets section as a whole.
    pub fn error(&self, message: impl Into<String>) -> ManifestError {
        ManifestError::whole_file(&self.manifest_path, message).key(ASSETS_KEY)
    }
}

struct Resolver<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Resolver<'_> {
    fn err(&self, span: Range<usize>, key: String, message: impl Into<String>) -> ManifestError {
        ManifestError::at(self.path, self.text, Some(span), message).key(key)
    }

    fn resolve(
        &self,
        package_name: String,
        assets: Option<Spanned<RawAssets>>,
    ) -> Result<Manifest, ManifestError> {
        let package_dir = self.path.parent().unwrap_or(Path::new(".")).to_owned();
        let assets = assets.map(Spanned::into_inner);
        let (root, rules, overrides, atlases, parcels, processors) = match assets {
            Some(a) => (
                a.root,
                a.rules,
                a.overrides,
                a.atlases,
                a.parcels,
                a.processors,
            ),
            None => Default::default(),
        };
        let processor_crates = processors
            .into_iter()
            .map(|p| {
                let name = p.get_ref();
                let valid = !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
                if valid {
                    Ok(p.into_inner())
                } else {
                    Err(self
                        .err(p.span(), format!("{ASSETS_KEY}.processors"), format!("`{name}` is not a package name"))
                        .help("list the packages (build-dependencies) whose `register` function adds processors"))
                }
            })
            .collect::<Result<_, _>>()?;
        let roots = self.roots(&package_dir, root)?;
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, r)| self.rule(i, r))
            .collect::<Result<_, _>>()?;
        let overrides = overrides
            .into_iter()
            .map(|(k, v)| self.override_(k, v))
            .collect::<Result<_, _>>()?;
        let atlases = atlases
            .into_iter()
            .map(|(name, a)| self.atlas(name, a))
            .collect::<Result<_, _>>()?;
        let parcels = match parcels {
            Some(p) => p
                .into_iter()
                .map(|(k, v)| self.parcel(k, v))
                .collect::<Result<_, _>>()?,
            None => vec![default_parcel()],
        };
        Ok(Manifest {
            manifest_path: self.path.to_owned(),
            package_dir,
            package_name,
            roots,
            rules,
            overrides,
            atlases,
            parcels,
            processor_crates,
            source: Arc::from(self.text),
        })
    }

    fn roots(
        &self,
        package_dir: &Path,
        root: Option<Spanned<toml::Value>>,
    ) -> Result<Vec<AssetRoot>, ManifestError> {
        let key = format!("{ASSETS_KEY}.root");
        let Some(root) = root else {
            return Ok(vec![AssetRoot {
                name: "assets".into(),
                dir: package_dir.join("assets"),
            }]);
        };
        let span = root.span();
        let expected = "expected a relative path or an array of them, e.g. `root = \"assets\"`";
        let names: Vec<&str> = match root.get_ref() {
            toml::Value::String(s) => vec![s],
            toml::Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or_else(|| self.err(span.clone(), key.clone(), expected))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(self.err(span, key, expected)),
        };
        if names.is_empty() {
            return Err(self
                .err(span, key, "`root` is an empty array")
                .help(expected));
        }
        let mut roots: Vec<AssetRoot> = Vec::new();
        for name in names {
            let normalized = normalize_root(name).ok_or_else(|| {
                self.err(span.clone(), key.clone(), format!("asset root `{name}` is not a path inside the package"))
                    .help("roots are relative to the directory of Cargo.toml and stay inside it: files outside the package \
                           escape `cargo package`, Cargo's change tracking, and other machines' checkouts; \
                           move the assets into the package, or make the shared folder a package of its own")
            })?;
            if roots.iter().any(|r| r.name == normalized) {
                return Err(self.err(
                    span.clone(),
                    key.clone(),
                    format!("asset root `{name}` is listed twice"),
                ));
            }
            roots.push(AssetRoot {
                dir: package_dir.join(&normalized),
                name: normalized,
            });
        }
        Ok(roots)
    }

    fn rule(&self, index: usize, rule: Spanned<RawTable>) -> Result<Rule, ManifestError> {
        let key = format!("{ASSETS_KEY}.rules[{index}]");
        let span = rule.span();
        let mut table = rule.into_inner();
        let pattern = take_string(self, &mut table, "match", &key)?.ok_or_else(|| {
            self.err(span.clone(), key.clone(), "rule has no `match` key")
                .help("add a glob relative to the asset root, e.g. `match = \"sprites/**/*.png\"`")
        })?;
        let matcher = self
            .glob(&pattern, &format!("{key}.match"))?
            .compile_matcher();
        let (processor, processor_origin) = self.processor(&mut table, &key)?;
        let inputs = self.inputs(&mut table, &key)?;
        Ok(Rule {
            pattern: pattern.into_inner(),
            matcher,
            processor,
            processor_origin,
            inputs,
            setting_origins: origins_of(&table, &key),
            settings: settings_of(table),
            origin: Origin { span, key },
        })
    }

    fn override_(
        &self,
        asset: Spanned<String>,
        table: Spanned<RawTable>,
    ) -> Result<(AssetPath, Override), ManifestError> {
        let key = format!("{ASSETS_KEY}.overrides.\"{}\"", asset.get_ref());
        let path = AssetPath::new(asset.get_ref()).map_err(|e| {
            self.err(
                asset.span(),
                key.clone(),
                format!("invalid asset path in override: {e}"),
            )
        })?;
        let span = table.span();
        let mut table = table.into_inner();
        let (processor, processor_origin) = self.processor(&mut table, &key)?;
        let setting_origins = origins_of(&table, &key);
        let settings = settings_of(table);
        Ok((
            path,
            Override {
                processor,
                processor_origin,
                settings,
                setting_origins,
                origin: Origin { span, key },
            },
        ))
    }

    /// Takes the `processor` key out of a rule or override table.
    fn atlas(
        &self,
        name: Spanned<String>,
        spec: Spanned<AtlasSpec>,
    ) -> Result<(String, AtlasSpec), ManifestError> {
        let key = format!("{ASSETS_KEY}.atlases.{}", name.get_ref());
        if !crate::asset_path::is_atlas_name(name.get_ref()) {
            return Err(self
                .err(
                    name.span(),
                    key,
                    format!("invalid atlas name `{}`", name.get_ref()),
                )
                .help("atlas names use ASCII letters, digits, `-` and `_`"));
        }
        let span = spec.span();
        let spec = spec.into_inner();
        let problem = if spec.max_size == 0 || spec.max_size > MAX_ATLAS_SIZE {
            Some(format!("`max-size` must be between 1 and {MAX_ATLAS_SIZE}"))
        } else if spec.power_of_two && !spec.max_size.is_power_of_two() {
            Some(format!(
                "`power-of-two` pages need a power-of-two `max-size`, not {}",
                spec.max_size
            ))
        } else if spec.extrude > spec.max_size / 4 {
            Some(format!(
                "`extrude` of {} is more than a quarter of `max-size`",
                spec.extrude
            ))
        } else if spec.padding > spec.max_size / 4 {
            Some(format!(
                "`padding` of {} is more than a quarter of `max-size`",
                spec.padding
            ))
        } else {
            None
        };
        match problem {
            Some(message) => Err(self.err(span, key, message)),
            None => Ok((name.into_inner(), spec)),
        }
    }

    fn processor(
        &self,
        table: &mut RawTable,
        key: &str,
    ) -> Result<(Option<String>, Option<Origin>), ManifestError> {
        Ok(match take_string(self, table, "processor", key)? {
            Some(p) => {
                let origin = Origin {
                    span: p.span(),
                    key: format!("{key}.processor"),
                };
                (Some(p.into_inner()), Some(origin))
            }
            None => (None, None),
        })
    }

    /// Takes a rule's `inputs` key out: an array of globs.
    fn inputs(&self, table: &mut RawTable, key: &str) -> Result<Option<GlobSet>, ManifestError> {
        let Some(k) = table.keys().find(|k| k.get_ref() == "inputs").cloned() else {
            return Ok(None);
        };
        let value = table.remove(&k).expect("key was just found");
        let key = format!("{key}.inputs");
        let span = value.span();
        let expected = || {
            self.err(span.clone(), key.clone(), "expected an array of globs")
                .help("e.g. `inputs = [\"tiles/*.png\", \"palette.txt\"]`, relative to the asset root")
        };
        let toml::Value::Array(items) = value.into_inner() else {
            return Err(expected());
        };
        let mut set = GlobSetBuilder::new();
        for item in items {
            let toml::Value::String(glob) = item else {
                return Err(expected());
            };
            set.add(self.glob(&Spanned::new(span.clone(), glob), &key)?);
        }
        let set = set
            .build()
            .map_err(|e| self.err(span.clone(), key.clone(), e.to_string()))?;
        Ok(Some(set))
    }

    fn parcel(
        &self,
        name: Spanned<String>,
        value: Spanned<toml::Value>,
    ) -> Result<ParcelSpec, ManifestError> {
        let key = format!("{ASSETS_KEY}.parcels.{}", name.get_ref());
        let valid_name = name
            .get_ref()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && name
                .get_ref()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(self
                .err(name.span(), key, format!("invalid parcel name `{}`", name.get_ref()))
                .help("parcel names start with a letter and use letters, digits, `_` and `-`; they become Rust module names"));
        }
        let span = value.span();
        let shape = "expected an array of globs or `{ include = [...], exclude = [...] }`";
        let (include, exclude) = match value.into_inner() {
            toml::Value::Array(a) => (a, Vec::new()),
            toml::Value::Table(mut t) => {
                let include = t.remove("include");
                let exclude = t.remove("exclude");
                if let Some(unknown) = t.keys().next() {
                    let mut err = self.err(span, key, format!("unknown key `{unknown}` in parcel"));
                    if let Some(s) = did_you_mean(unknown, ["include", "exclude"]) {
                        err = err.help(format!("did you mean `{s}`?"));
                    }
                    return Err(err);
                }
                let as_array = |v: Option<toml::Value>| match v {
                    None => Ok(Vec::new()),
                    Some(toml::Value::Array(a)) => Ok(a),
                    Some(_) => Err(self.err(span.clone(), key.clone(), shape)),
                };
                (as_array(include)?, as_array(exclude)?)
            }
            _ => return Err(self.err(span, key, shape)),
        };
        let globs = |values: Vec<toml::Value>,
                     part: &str|
         -> Result<(Vec<String>, GlobSet), ManifestError> {
            let key = format!("{key}{part}");
            let mut patterns = Vec::new();
            let mut set = GlobSetBuilder::new();
            for v in values {
                let toml::Value::String(s) = v else {
                    return Err(self.err(span.clone(), key, "expected a glob string"));
                };
                set.add(self.glob(&Spanned::new(span.clone(), s.clone()), &key)?);
                patterns.push(s);
            }
            let set = set
                .build()
                .map_err(|e| self.err(span.clone(), key.clone(), e.to_string()))?;
            Ok((patterns, set))
        };
        let (include_patterns, include) = globs(include, "")?;
        let (exclude_patterns, exclude) = globs(exclude, ".exclude")?;
        if include_patterns.is_empty() {
            return Err(self
                .err(
                    span,
                    key,
                    format!("parcel `{}` includes nothing", name.get_ref()),
                )
                .help("list globs of the assets it holds, e.g. `[\"**\"]`"));
        }
        Ok(ParcelSpec {
            name: name.into_inner(),
            include_patterns,
            exclude_patterns,
            include,
            exclude,
        })
    }

    fn glob(&self, pattern: &Spanned<String>, key: &str) -> Result<Glob, ManifestError> {
        GlobBuilder::new(pattern.get_ref())
            .literal_separator(true)
            .build()
            .map_err(|e| {
                let reason = e.kind().to_string();
                self.err(
                    pattern.span(),
                    key.to_owned(),
                    format!("invalid glob `{}`: {reason}", pattern.get_ref()),
                )
            })
    }
}

fn default_parcel() -> ParcelSpec {
    let all = GlobBuilder::new("**")
        .literal_separator(true)
        .build()
        .expect("`**` is a valid glob");
    let include = GlobSetBuilder::new()
        .add(all)
        .build()
        .expect("one valid glob");
    ParcelSpec {
        name: "main".into(),
        include_patterns: vec!["**".into()],
        exclude_patterns: Vec::new(),
        include,
        exclude: GlobSet::empty(),
    }
}

/// Removes `name` from `table` and checks it is a string.
fn take_string(
    r: &Resolver<'_>,
    table: &mut RawTable,
    name: &str,
    key: &str,
) -> Result<Option<Spanned<String>>, ManifestError> {
    let Some(k) = table.keys().find(|k| k.get_ref() == name).cloned() else {
        return Ok(None);
    };
    let value = table.remove(&k).expect("key was just found");
    let span = value.span();
    match value.into_inner() {
        toml::Value::String(s) => Ok(Some(Spanned::new(span, s))),
        other => Err(r.err(
            span,
            format!("{key}.{name}"),
            format!("expected a string, found {}", other.type_str()),
        )),
    }
}

/// Where each key of a rule or override table was written.
fn origins_of(table: &RawTable, key: &str) -> BTreeMap<String, Origin> {
    table
        .keys()
        .map(|k| {
            let origin = Origin {
                span: k.span(),
                key: format!("{key}.{}", k.get_ref()),
            };
            (k.get_ref().clone(), origin)
        })
        .collect()
}

fn settings_of(table: RawTable) -> Settings {
    Settings(
        table
            .into_iter()
            .map(|(k, v)| (k.into_inner(), v.into_inner()))
            .collect(),
    )
}

/// `./assets/` → `assets`, `a/../b` → `b`; `None` for absolute paths and
/// for paths that leave the package directory (`../shared`).
fn normalize_root(root: &str) -> Option<String> {
    let p = Path::new(root);
    if p.is_absolute() || root.starts_with('/') || root.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in root.split('/').filter(|s| !s.is_empty() && *s != ".") {
        if part == ".." {
            parts.pop()?;
        } else {
            parts.push(part);
        }
    }
    Some(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

#[cfg(test)]
mod tests;
