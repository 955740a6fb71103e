//! The serde mirror of `Cargo.toml`'s `[package.metadata.assets]`.
//!
//! These types hold exactly what the user wrote, with spans, and no logic.
//! [`super::resolve`] turns them into the checked [`super::Manifest`].

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::AtlasSpec;

/// A table whose keys and values keep their spans, for processor settings.
pub(crate) type RawTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// The parts of `Cargo.toml` we read. Everything else is Cargo's business.
#[derive(Deserialize)]
pub(crate) struct RawCargoToml {
    pub package: Option<RawPackage>,
}

#[derive(Deserialize)]
pub(crate) struct RawPackage {
    pub name: Option<String>,
    pub metadata: Option<RawPackageMetadata>,
}

#[derive(Deserialize)]
pub(crate) struct RawPackageMetadata {
    pub assets: Option<Spanned<RawAssets>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawAssets {
    /// A string or an array of strings.
    pub root: Option<Spanned<toml::Value>>,
    /// Globs of files (and folders) under the roots that are not assets.
    #[serde(default)]
    pub ignore: Vec<Spanned<String>>,
    #[serde(default)]
    pub rules: Vec<Spanned<RawTable>>,
    #[serde(default)]
    pub overrides: BTreeMap<Spanned<String>, Spanned<RawTable>>,
    /// Asset path → processor and parameters, for assets with no file.
    #[serde(default)]
    pub generated: BTreeMap<Spanned<String>, Spanned<RawTable>>,
    #[serde(default)]
    pub atlases: BTreeMap<Spanned<String>, Spanned<AtlasSpec>>,
    /// Name → array of globs, or `{ include = [...], exclude = [...] }`.
    pub parcels: Option<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    /// Packages whose `register` function adds processors.
    #[serde(default)]
    pub processors: Vec<Spanned<String>>,
    /// Platform name → the target triples it covers.
    #[serde(default)]
    pub platforms: BTreeMap<Spanned<String>, Spanned<RawPlatform>>,
    /// Where `cargo assets build` also writes the parcels' resources as
    /// files, relative to the package.
    pub out_dir: Option<Spanned<String>>,
    /// Whether a processor's warning fails the build.
    #[serde(default)]
    pub deny_warnings: bool,
    /// Old asset path → the asset it was renamed to.
    #[serde(default)]
    pub aliases: BTreeMap<Spanned<String>, Spanned<String>>,
}

/// `[package.metadata.assets.platforms.<name>]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlatform {
    /// Globs over target triples: `["wasm32-*"]`.
    pub targets: Vec<Spanned<String>>,
    /// Processor name → settings every step of that processor takes on
    /// this platform: `settings.texture = { format = "etc2" }`.
    #[serde(default)]
    pub settings: BTreeMap<Spanned<String>, Spanned<RawTable>>,
}
