//! `[package.metadata.assets.platforms]`: each platform's target globs and
//! the settings it gives every step of a processor, checked.

use std::collections::BTreeMap;

use globset::GlobSetBuilder;
use toml::Spanned;

use super::super::diagnostic::{ManifestError, did_you_mean};
use super::super::raw::{RawPlatform, RawTable};
use super::super::{ASSETS_KEY, Origin, Platform, PlatformSettings, Settings};
use super::{Resolver, origins_of, settings_of};

impl Resolver<'_> {
    pub(super) fn platform(
        &self,
        name: Spanned<String>,
        platform: Spanned<RawPlatform>,
    ) -> Result<(String, Platform), ManifestError> {
        let key = format!("{ASSETS_KEY}.platforms.{}", name.get_ref());
        self.check_name(&name, &key, "platform")?;
        let span = platform.span();
        let platform = platform.into_inner();
        if platform.targets.is_empty() {
            return Err(self
                .err(span, format!("{key}.targets"), "`targets` is empty")
                .help("list the target triples it covers, as globs: `targets = [\"wasm32-*\"]`"));
        }
        let mut set = GlobSetBuilder::new();
        let mut patterns = Vec::new();
        for target in &platform.targets {
            set.add(self.glob(target, &format!("{key}.targets"))?);
            patterns.push(target.get_ref().clone());
        }
        let targets = set
            .build()
            .map_err(|e| self.err(span.clone(), key.clone(), e.to_string()))?;
        let processor_settings = platform
            .settings
            .into_iter()
            .map(|(processor, table)| {
                let key = format!("{key}.settings.{}", processor.get_ref());
                let span = processor.span();
                let table = table.into_inner();
                let setting_origins = origins_of(&table, &key);
                let settings = settings_of(table);
                let s = PlatformSettings {
                    settings,
                    setting_origins,
                    origin: Origin { span, key },
                };
                (processor.into_inner(), s)
            })
            .collect();
        let name = name.into_inner();
        Ok((
            name.clone(),
            Platform {
                name,
                patterns,
                targets,
                processor_settings,
            },
        ))
    }

    /// Takes a rule's `platforms` key out: a table of settings per declared
    /// platform.
    pub(super) fn platform_settings(
        &self,
        table: &mut RawTable,
        key: &str,
        platforms: &BTreeMap<String, Platform>,
    ) -> Result<BTreeMap<String, Settings>, ManifestError> {
        let Some(k) = table.keys().find(|k| k.get_ref() == "platforms").cloned() else {
            return Ok(BTreeMap::new());
        };
        let value = table.remove(&k).expect("key was just found");
        let key = format!("{key}.platforms");
        let span = value.span();
        let expected = || {
            self.err(
                span.clone(),
                key.clone(),
                "expected a table of settings per platform",
            )
            .help("e.g. `platforms.web = { encoding = \"png\" }`")
        };
        let toml::Value::Table(by_platform) = value.into_inner() else {
            return Err(expected());
        };
        let mut out = BTreeMap::new();
        for (name, settings) in by_platform {
            if !platforms.contains_key(&name) {
                let known: Vec<&str> = platforms.keys().map(String::as_str).collect();
                let mut help = format!(
                    "declare it with [package.metadata.assets.platforms.{name}] and its `targets`"
                );
                if let Some(s) = did_you_mean(&name, known.iter().copied()) {
                    help = format!("did you mean `{s}`? {help}");
                }
                return Err(self
                    .err(
                        span.clone(),
                        format!("{key}.{name}"),
                        format!("platform `{name}` is not declared"),
                    )
                    .help(help));
            }
            let toml::Value::Table(settings) = settings else {
                return Err(expected());
            };
            out.insert(name, Settings::from_table(settings));
        }
        Ok(out)
    }
}
