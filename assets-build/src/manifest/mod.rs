//! The `[package.metadata.assets]` section of `Cargo.toml`, parsed and checked.
//!
//! Reading happens in two stages, kept as two sets of types:
//!
//! 1. `raw.rs`: a serde mirror of what the user wrote, every key and value
//!    with its byte span. No logic.
//! 2. [`Manifest`]: the resolved configuration (its parts in `spec.rs`,
//!    processor settings in `settings.rs`). Globs are compiled, roots are
//!    normalized, parcels have their defaults, and every rule remembers where it
//!    was written so later errors (an unknown processor, bad settings) can point
//!    at the key. `resolve.rs` turns the first into the second.
//!
//! Every error is a [`ManifestError`] naming the file, line, column and key.
//!
//! ```toml
//! [package.metadata.assets]
//! root = "assets"                      # or ["assets", "more-assets"]
//! ignore = ["drafts", "**/*.psd"]      # not assets: discovery leaves them out
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
mod resolve;
mod settings;
mod spec;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use diagnostic::ManifestError;
pub(crate) use diagnostic::did_you_mean;
use diagnostic::suggest_for_unknown_field;
use raw::RawCargoToml;
use resolve::Resolver;
pub use settings::{Encoding, Settings, SettingsError, is_release};
pub use spec::{
    Alias, AssetRoot, Assignment, AtlasSpec, DEFAULT_ATLAS, Ignore, MAX_ATLAS_SIZE, Origin,
    Override, ParcelSpec, Platform, PlatformSettings, Rule,
};

use crate::asset_path::AssetPath;

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
    /// What discovery leaves out under the roots (`ignore`).
    pub ignore: Ignore,
    /// Rules in file order; the first that matches an asset wins.
    pub rules: Vec<Rule>,
    /// Per-asset settings merged over the matching rule's.
    pub overrides: BTreeMap<AssetPath, Override>,
    /// Assets with no file, made by a processor from parameters
    /// (`[package.metadata.assets.generated."<asset>"]`), sorted: each also
    /// has an override with its processor and parameters, and discovery
    /// lists it as an asset of the first root.
    pub generated: Vec<AssetPath>,
    /// Atlas settings by atlas name.
    pub atlases: BTreeMap<String, AtlasSpec>,
    /// `aliases`: old asset paths kept answering, each for the asset it
    /// was renamed to, in every parcel that holds that asset.
    pub aliases: BTreeMap<AssetPath, Alias>,
    /// Parcels, sorted by name.
    pub parcels: Vec<ParcelSpec>,
    /// Packages whose `register(&mut Registry)` adds processors: the build
    /// script calls the same functions through `Builder::register`, and
    /// `cargo assets` links them into a runner.
    pub processor_crates: Vec<String>,
    /// Declared platforms, by name.
    pub platforms: BTreeMap<String, Platform>,
    /// `out-dir`: where `cargo assets build` also writes the parcels'
    /// resources as files (see [`crate::unstable::out_dir`]), under the package.
    pub out_dir: Option<PathBuf>,
    /// `deny-warnings = true`: a processor's warning fails the build, in
    /// `cargo assets` and in build scripts (as `--deny-warnings` and
    /// `CARGO_ASSETS_DENY_WARNINGS=1` do for one run).
    pub deny_warnings: bool,
    pub(super) source: Arc<str>,
}

/// The default processor for a file extension (design brief §6).
pub fn default_processor(extension: Option<&str>) -> &'static str {
    match extension.map(str::to_ascii_lowercase).as_deref() {
        Some("png" | "jpg" | "jpeg" | "webp" | "bmp" | "tga") => "image",
        Some("txt" | "json" | "ron" | "toml" | "glsl") => "text",
        Some("wgsl" | "wesl") => "shader",
        Some("ktx2") => "ktx2",
        Some("tmx" | "tsx" | "tx" | "tmj" | "tsj" | "ldtk" | "ldtkl") => "tilemap",
        #[cfg(feature = "gltf")]
        Some("gltf" | "glb") => "gltf",
 #[cfg(feature = "aseprite")]
        Some("aseprite" | "ase") => "aseprite",
        #[cfg(feature = "audio")]
        Some("wav" | "ogg" | "oga" | "flac" | "mp3") => "audio",
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
            let at = (e.span())
                .and_then(|span| text.get(span))
                .unwrap_or_default();
            let help = suggest_for_unknown_field(&message)
                .or_else(|| diagnostic::suggest_for_array_of_tables(&message, at));
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

    /// The processor and settings for `asset` on `platform` (`None`: no
    /// platform). The processor: the override's, else the first matching
    /// rule's, else the default for its extension (a generated asset has
    /// its table, and no rule). The settings, each layer
    /// merged over the ones before: the rule's, the platform's for that
    /// processor (`settings.<processor>`), the rule's for the platform
    /// (`platforms.<platform>`), the override's.
    pub fn assign(&self, asset: &AssetPath, platform: Option<&str>) -> Assignment {
        // A generated asset is its table alone: no rule matches it.
        let generated = self.generated.binary_search(asset).is_ok();
        let matched = (self.rules.iter())
            .position(|r| r.matcher.is_match(asset.as_str()))
            .filter(|_| !generated);
        let rule = matched.map(|i| &self.rules[i]);
        let over = self.overrides.get(asset);
        let named = |processor: &Option<String>, chain: &Vec<String>, origin: &Option<Origin>| {
            let named = processor.clone().zip(origin.clone());
            named.map(|(p, o)| (p, chain.clone(), o))
        };
        let named = over
            .and_then(|o| named(&o.processor, &o.chain, &o.processor_origin))
            .or_else(|| rule.and_then(|r| named(&r.processor, &r.chain, &r.processor_origin)));
        let (processor, chain, processor_origin) = match named {
            Some((p, chain, o)) => (p, chain, Some(o)),
            None => (
                default_processor(asset.extension()).to_owned(),
                Vec::new(),
                None,
            ),
        };
        // Layers, each merged over the ones before: the rule's settings,
        // the platform's for this processor, the rule's for the platform,
        // the asset's override.
        let for_processor = platform
            .and_then(|p| self.platforms.get(p))
            .and_then(|p| p.processor_settings.get(&processor));
        let on_platform = rule
            .zip(platform)
            .and_then(|(r, p)| r.platform_settings.get(p));
        let with_override = |s: Settings| match over {
            Some(o) => s.merged(&o.settings),
            None => s,
        };
        let base = rule.map(|r| r.settings.clone()).unwrap_or_default();
        let platform_layers = [for_processor.map(|p| &p.settings), on_platform];
        let (settings, platform_specific) = if platform_layers.iter().any(Option::is_some) {
            // Keyed by platform only when the platform changes the settings
            // (the override may set back what a platform layer set).
            let elsewhere = with_override(base.clone());
            let on = platform_layers.into_iter().flatten();
            let settings = with_override(on.fold(base, |s, layer| s.merged(layer)));
            let differs = settings != elsewhere;
            (settings, differs)
        } else {
            (with_override(base), false)
        };
        let origin = over
            .map(|o| o.origin.clone())
            .or_else(|| rule.map(|r| r.origin.clone()))
            .or_else(|| for_processor.map(|p| p.origin.clone()));
        let mut setting_origins = rule.map(|r| r.setting_origins.clone()).unwrap_or_default();
        if let Some(p) = for_processor {
            setting_origins.extend(p.setting_origins.clone());
        }
        if let Some(o) = over {
            setting_origins.extend(o.setting_origins.clone());
        }
        Assignment {
            setting_origins,
            processor,
            chain,
            settings,
            origin,
            processor_origin,
            inputs: rule.and_then(|r| r.inputs.clone()),
            compression: rule.and_then(|r| r.compression),
            platform_specific,
            rule: matched,
        }
    }

    /// The platform whose `targets` cover the target triple `triple`: `None`
    /// when none does (the host's own settings), an error when several do.
    pub fn platform_for_target(&self, triple: &str) -> Result<Option<&Platform>, ManifestError> {
        let matching: Vec<&Platform> = self
            .platforms
            .values()
            .filter(|p| p.covers(triple))
            .collect();
        match matching.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            several => {
                let names: Vec<String> = several.iter().map(|p| format!("`{}`", p.name)).collect();
                Err(self
                    .error(format!(
                        "target `{triple}` is covered by the platforms {}",
                        names.join(" and ")
                    ))
                    .help("make the platforms' `targets` globs exclusive, or choose one with --platform"))
            }
        }
    }

    /// The declared platform `name`, or an error listing the declared ones.
    pub fn platform(&self, name: &str) -> Result<&Platform, ManifestError> {
        self.platforms.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.platforms.keys().map(String::as_str).collect();
            let mut help = if known.is_empty() {
                format!(
                    "declare it with [package.metadata.assets.platforms.{name}] and its `targets`"
                )
            } else {
                format!("declared platforms: {}", known.join(", "))
            };
            if let Some(s) = did_you_mean(name, known.iter().copied()) {
                help = format!("did you mean `{s}`? {help}");
            }
            self.error(format!("no platform named `{name}`")).help(help)
        })
    }

    /// The rules that no asset of `steps_rules` (each planned asset's
    /// matching rule) came from: a glob with a typo, or one shadowed by
    /// the rules before it. Each as the warning that says so, at its line.
    pub fn unused_rules(&self, used: impl IntoIterator<Item = usize>) -> Vec<ManifestError> {
        let mut is_used = vec![false; self.rules.len()];
        for i in used {
            if let Some(u) = is_used.get_mut(i) {
                *u = true;
            }
        }
        (self.rules.iter().zip(is_used))
            .filter(|(_, used)| !used)
            .map(|(rule, _)| {
                self.error_at(
                    &rule.origin,
                    format!("rule `{}` matches no asset", rule.pattern),
                )
                .help("check the glob (relative to the asset root; `*` stops at `/`), or the rules before it, which match first")
            })
            .collect()
    }

    /// A warning at each alias: data that names the old path still loads,
    /// and should be changed, then the alias removed. (Whether each names
    /// an asset is checked when planning.)
    pub fn alias_warnings(&self) -> Vec<ManifestError> {
        (self.aliases.iter())
            .map(|(old, alias)| {
                self.error_at(
                    &alias.origin,
                    format!("`{old}` is kept as an alias of `{}`", alias.asset),
                )
                .help(format!(
                    "data naming `{old}` still loads `{}`, and `include_parcel!` keeps its old \
                     constant, deprecated; rename what names it, then remove the alias",
                    alias.asset
                ))
            })
            .collect()
    }

    /// An error pointing at `origin` when it is known (a rule, an
    /// override), else about the manifest as a whole.
    pub fn error_near(&self, origin: Option<&Origin>, message: impl Into<String>) -> ManifestError {
        match origin {
            Some(origin) => self.error_at(origin, message),
            None => self.error(message),
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

#[cfg(test)]
mod tests;

/// A step timeout of `seconds`, if it is one: more than 0, at most a day.
pub(crate) fn step_timeout(seconds: f64) -> Option<std::time::Duration> {
    (seconds > 0.0 && seconds <= 86_400.0).then(|| std::time::Duration::from_secs_f64(seconds))
}

/// How long a step may run by default: five minutes, far beyond what any
/// built-in takes on real content, so that only a hang (a parser looping
/// on a hostile file, a tool that never exits) meets it. A rule's
/// `timeout = SECONDS` changes it for its steps.
pub const DEFAULT_STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Reads a step timeout as `--step-timeout` and `CARGO_ASSETS_STEP_TIMEOUT`
/// take it: seconds, more than 0 and at most a day.
pub fn parse_step_timeout(text: &str) -> Result<std::time::Duration, String> {
    (text.trim().parse().ok())
        .and_then(step_timeout)
        .ok_or_else(|| format!("`{text}` is not a number of seconds (more than 0, at most a day)"))
}
