//! The resolver: the raw mirror of `[package.metadata.assets]` checked
//! and turned into a [`Manifest`], every error pointing at its key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use assets_runtime::Compression;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use toml::Spanned;

use super::diagnostic::ManifestError;
use super::raw::{RawAssets, RawTable};
use super::{
    ASSETS_KEY, Alias, AssetRoot, AtlasSpec, Ignore, MAX_ATLAS_SIZE, Manifest, Origin, Override,
    Platform, Rule, Settings,
};
use crate::asset_path::AssetPath;

mod parcels;
mod platforms;

use parcels::default_parcel;

/// The longest glob the manifest takes, in bytes.
const MAX_GLOB_LEN: usize = 1024;
/// The most wildcards (`*`, `?`, `[`, `{`) in one glob.
const MAX_GLOB_WILDCARDS: usize = 64;

pub(super) struct Resolver<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Resolver<'_> {
    fn err(&self, span: Range<usize>, key: String, message: impl Into<String>) -> ManifestError {
        ManifestError::at(self.path, self.text, Some(span), message).key(key)
    }

    pub(super) fn resolve(
        &self,
        package_name: String,
        assets: Option<Spanned<RawAssets>>,
    ) -> Result<Manifest, ManifestError> {
        let package_dir = self.path.parent().unwrap_or(Path::new(".")).to_owned();
        let RawAssets {
            root,
            ignore,
            rules,
            overrides,
            generated,
            atlases,
            parcels,
            processors,
            platforms,
            out_dir,
            deny_warnings,
            aliases,
        } = assets.map(Spanned::into_inner).unwrap_or_default();
        let platforms: BTreeMap<String, Platform> = platforms
            .into_iter()
            .map(|(name, p)| self.platform(name, p))
            .collect::<Result<_, _>>()?;
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
        let out_dir = out_dir
            .map(|dir| self.out_dir(&package_dir, &roots, dir))
            .transpose()?;
        let ignore = self.ignore(ignore)?;
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, r)| self.rule(i, r, &platforms))
            .collect::<Result<_, _>>()?;
        let mut overrides: BTreeMap<AssetPath, Override> = overrides
            .into_iter()
            .map(|(k, v)| self.override_(k, v))
            .collect::<Result<_, _>>()?;
        // A generated asset is planned as an asset whose override names
        // its processor and holds its parameters; discovery adds its path.
        let mut generated_paths = Vec::new();
        for (asset, table) in generated {
            let span = asset.span();
            let (path, entry) = self.generated(asset, table)?;
            if overrides.contains_key(&path) {
                return Err(self
                    .err(span, format!("{ASSETS_KEY}.generated"), format!("`{path}` is both generated and overridden"))
                    .help("a generated asset's settings are its own table: move the override's keys there"));
            }
            generated_paths.push(path.clone());
            overrides.insert(path, entry);
        }
        let atlases = atlases
            .into_iter()
            .map(|(name, a)| self.atlas(name, a))
            .collect::<Result<_, _>>()?;
        let aliases = aliases
            .into_iter()
            .map(|(old, new)| self.alias(old, new))
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
            ignore,
            rules,
            overrides,
            generated: generated_paths,
            atlases,
            parcels,
            processor_crates,
            platforms,
            out_dir,
            deny_warnings,
            aliases,
            source: Arc::from(self.text),
        })
    }

    /// An `aliases` entry: an old asset path and the asset it was renamed
    /// to, both asset paths (whether each is an asset is checked when
    /// planning, which knows the assets).
    fn alias(
        &self,
        old: Spanned<String>,
        new: Spanned<String>,
    ) -> Result<(AssetPath, Alias), ManifestError> {
        let key = format!("{ASSETS_KEY}.aliases.\"{}\"", old.get_ref());
        let path = |s: &Spanned<String>, what: &str| {
            AssetPath::new(s.get_ref()).map_err(|e| {
                self.err(
                    s.span(),
                    key.clone(),
                    format!("invalid {what} in an alias: {e}"),
                )
                .help("`\"old/name.png\" = \"new/name.png\"`: asset paths relative to the root")
            })
        };
        let old_path = path(&old, "old name")?;
        let new_path = path(&new, "asset")?;
        if old_path == new_path {
            return Err(self.err(
                old.span(),
                key,
                format!("`{old_path}` is an alias of itself"),
            ));
        }
        Ok((
            old_path,
            Alias {
                asset: new_path,
                origin: Origin {
                    span: old.span().start..new.span().end,
                    key,
                },
            },
        ))
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

    fn rule(
        &self,
        index: usize,
        rule: Spanned<RawTable>,
        platforms: &BTreeMap<String, Platform>,
    ) -> Result<Rule, ManifestError> {
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
        let named = self.processor(&mut table, &key)?;
        let inputs = self.inputs(&mut table, &key)?;
        let compression = self.rule_compression(&mut table, &key)?;
        let timeout = self.rule_timeout(&mut table, &key)?;
        let platform_settings = self.platform_settings(&mut table, &key, platforms)?;
        Ok(Rule {
            pattern: pattern.into_inner(),
            matcher,
            processor: named.processor,
            chain: named.chain,
            processor_origin: named.origin,
            inputs,
            compression,
            timeout,
            setting_origins: origins_of(&table, &key),
            settings: settings_of(table),
            platform_settings,
            origin: Origin { span, key },
        })
    }

    /// A `[package.metadata.assets.overrides."<asset>"]` table.
    fn override_(
        &self,
        asset: Spanned<String>,
        table: Spanned<RawTable>,
    ) -> Result<(AssetPath, Override), ManifestError> {
        let key = format!("{ASSETS_KEY}.overrides.\"{}\"", asset.get_ref());
        self.asset_table(asset, table, key, "override")
    }

    /// A `[package.metadata.assets.generated."<asset>"]` table: its
    /// processor (required: there is no file whose extension could choose)
    /// and its parameters, as an override holds them.
    fn generated(
        &self,
        asset: Spanned<String>,
        table: Spanned<RawTable>,
    ) -> Result<(AssetPath, Override), ManifestError> {
        let key = format!("{ASSETS_KEY}.generated.\"{}\"", asset.get_ref());
        let (path, entry) = self.asset_table(asset, table, key.clone(), "generated asset")?;
        if entry.processor.is_none() {
            return Err(self
                .err(
                    entry.origin.span.clone(),
                    key,
                    format!("generated asset `{path}` names no processor"),
                )
                .help(
                    "say which processor makes it: `processor = \"noise\"`, then its parameters",
                ));
        }
        Ok((path, entry))
    }

    /// A table keyed by an asset path (`what`: an override, a generated
    /// asset), written at `key`: the path, and the processor and settings
    /// it holds.
    fn asset_table(
        &self,
        asset: Spanned<String>,
        table: Spanned<RawTable>,
        key: String,
        what: &str,
    ) -> Result<(AssetPath, Override), ManifestError> {
        let path = AssetPath::new(asset.get_ref()).map_err(|e| {
            self.err(
                asset.span(),
                key.clone(),
                format!("invalid asset path in {what}: {e}"),
            )
        })?;
        let span = table.span();
        let mut table = table.into_inner();
        let named = self.processor(&mut table, &key)?;
        let setting_origins = origins_of(&table, &key);
        let settings = settings_of(table);
        Ok((
            path,
            Override {
                processor: named.processor,
                chain: named.chain,
                processor_origin: named.origin,
                settings,
                setting_origins,
                origin: Origin { span, key },
            },
        ))
    }

    /// An atlas's table, checked.
    fn atlas(
        &self,
        name: Spanned<String>,
        spec: Spanned<AtlasSpec>,
    ) -> Result<(String, AtlasSpec), ManifestError> {
        let key = format!("{ASSETS_KEY}.atlases.{}", name.get_ref());
        self.check_name(&name, &key, "atlas")?;
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

    /// An atlas's or platform's name, which becomes part of directory and
    /// step names: ASCII letters, digits, `-` and `_`.
    fn check_name(
        &self,
        name: &Spanned<String>,
        key: &str,
        what: &str,
    ) -> Result<(), ManifestError> {
        if crate::asset_path::is_atlas_name(name.get_ref()) {
            return Ok(());
        }
        Err(self
            .err(
                name.span(),
                key.to_owned(),
                format!("invalid {what} name `{}`", name.get_ref()),
            )
            .help(format!(
                "{what} names use ASCII letters, digits, `-` and `_`"
            )))
    }

    /// Takes the `processor` key out of a rule or override table: a name,
    /// or a chain of them (`["command", "image"]`, each stage's output the
    /// next one's source): the last, and the stages before it.
    fn processor(&self, table: &mut RawTable, key: &str) -> Result<Named, ManifestError> {
        let Some(k) = table.keys().find(|k| k.get_ref() == "processor").cloned() else {
            return Ok(Named::default());
        };
        let value = table.remove(&k).expect("key was just found");
        let span = value.span();
        let origin = Origin {
            span: span.clone(),
            key: format!("{key}.processor"),
        };
        let err = |message: String| {
            self.err(span.clone(), origin.key.clone(), message).help(
                "name one processor, `processor = \"image\"`, or a chain whose stages each \
                 take the one before's output, `processor = [\"command\", \"image\"]`",
            )
        };
        let mut names = match value.into_inner() {
            toml::Value::String(name) => vec![name],
            toml::Value::Array(items) => (items.into_iter())
                .map(|item| match item {
                    toml::Value::String(name) => Ok(name),
                    other => Err(err(format!(
                        "expected processor names, found {}",
                        other.type_str()
                    ))),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(err(format!(
                    "expected a string, found {}",
                    other.type_str()
                )));
            }
        };
        let Some(last) = names.pop() else {
            return Err(err("an empty chain names no processor".into()));
        };
        // An earlier stage's settings are the table under its name, so
        // each may appear once.
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(err(format!(
                    "the chain names `{name}` twice before its last stage: each earlier stage's \
                     settings are the table under its name"
                )));
            }
        }
        Ok(Named {
            processor: Some(last),
            chain: names,
            origin: Some(origin),
        })
    }

    /// Takes a rule's `compression` key out: how the parcels compress its
    /// steps' resources (over the parcel's own `compression`). Not a
    /// setting: a processor never sees it, and changing it rewrites the
    /// parcels without running a step.
    fn rule_compression(
        &self,
        table: &mut RawTable,
        key: &str,
    ) -> Result<Option<Compression>, ManifestError> {
        let Some(k) = table.keys().find(|k| k.get_ref() == "compression").cloned() else {
            return Ok(None);
        };
        let value = table.remove(&k).expect("key was just found");
        let span = value.span();
        self.compression(value.into_inner(), &span, key).map(Some)
    }

    /// Takes a rule's `timeout` key out: seconds a step of the rule may
    /// run before the build stops it (see [`Rule::timeout`]). Not a
    /// setting: it changes no output.
    fn rule_timeout(
        &self,
        table: &mut RawTable,
        key: &str,
    ) -> Result<Option<std::time::Duration>, ManifestError> {
        let Some(k) = table.keys().find(|k| k.get_ref() == "timeout").cloned() else {
            return Ok(None);
        };
        let value = table.remove(&k).expect("key was just found");
        let span = value.span();
        let seconds = match value.into_inner() {
            toml::Value::Integer(n) => n as f64,
            toml::Value::Float(f) => f,
            _ => f64::NAN,
        };
        super::step_timeout(seconds).map(Some).ok_or_else(|| {
            self.err(
                span,
                format!("{key}.timeout"),
                "expected seconds, more than 0 and at most a day",
            )
            .help("e.g. `timeout = 600` for a step that may take ten minutes")
        })
    }

    /// `out-dir = "dist/assets"`: a folder relative to the package, never
    /// inside an asset root (the files written there would be assets).
    fn out_dir(
        &self,
        package_dir: &Path,
        roots: &[AssetRoot],
        dir: Spanned<String>,
    ) -> Result<PathBuf, ManifestError> {
        let key = format!("{ASSETS_KEY}.out-dir");
        let span = dir.span();
        let written = dir.into_inner();
        let relative = Path::new(&written);
        if written.trim().is_empty() || relative.is_absolute() {
            return Err(self
                .err(span, key, "expected a folder relative to the package")
                .help("e.g. `out-dir = \"dist/assets\"`; `cargo assets build --out-dir DIR` takes any path"));
        }
        let dir = package_dir.join(relative);
        let normal = |p: &Path| -> PathBuf {
            let mut out = PathBuf::new();
            for c in p.components() {
                match c {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => out.push(other),
                }
            }
            out
        };
        if let Some(root) = roots
            .iter()
            .find(|r| normal(&dir).starts_with(normal(&r.dir)))
        {
            return Err(self
                .err(span, key, format!(
                    "`{written}` is inside the asset root `{}`: the files written there would be built as assets",
                    root.dir.strip_prefix(package_dir).unwrap_or(&root.dir).display()
                ))
                .help("choose a folder outside the asset roots, e.g. `out-dir = \"dist/assets\"`"));
        }
        Ok(dir)
    }

    /// `ignore = ["drafts/**", "**/*.psd"]`: what discovery leaves out.
    fn ignore(&self, globs: Vec<Spanned<String>>) -> Result<Ignore, ManifestError> {
        let key = format!("{ASSETS_KEY}.ignore");
        let mut set = GlobSetBuilder::new();
        for glob in &globs {
            set.add(self.glob(glob, &key)?);
        }
        let span = globs.first().map_or(0..0, Spanned::span);
        let set = set
            .build()
            .map_err(|e| self.err(span, key, e.to_string()))?;
        Ok(Ignore {
            patterns: globs.into_iter().map(Spanned::into_inner).collect(),
            set,
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

    fn glob(&self, pattern: &Spanned<String>, key: &str) -> Result<Glob, ManifestError> {
        // globset compiles a glob into a regex and panics when the regex
        // grows past its size limit (a pattern of 200,000 `*` does): a
        // glob that long is a mistake, refused before it gets there.
        let text = pattern.get_ref();
        let wildcards = text
            .chars()
            .filter(|c| matches!(c, '*' | '?' | '[' | '{'))
            .count();
        if text.len() > MAX_GLOB_LEN || wildcards > MAX_GLOB_WILDCARDS {
            return Err(self
                .err(pattern.span(), key.to_owned(), format!(
                    "glob of {} characters and {wildcards} wildcards is too long",
                    text.len()
                ))
                .help(format!(
                    "a glob has at most {MAX_GLOB_LEN} characters and {MAX_GLOB_WILDCARDS} wildcards; split it into several"
                )));
        }
        GlobBuilder::new(text)
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

/// The `processor` key of a rule or override, as [`Resolver::processor`]
/// reads it.
#[derive(Default)]
struct Named {
    processor: Option<String>,
    chain: Vec<String>,
    origin: Option<Origin>,
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
    Settings::from_table(
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
