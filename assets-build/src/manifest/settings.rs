//! [`Settings`]: a rule's keys as a processor reads them, and the value
//! types several settings share.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::diagnostic::suggest_for_unknown_field;

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
                key: None,
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
    /// JSON has no infinities or NaN (serde_json writes each as `null`, so
    /// `scale = inf` and `scale = -inf` were one key and editing one into
    /// the other reran nothing): such a float is written as the table
    /// `{"toml-float":"inf"}` (or `"-inf"`, `"nan"`) instead.
    pub fn canonical_json(&self) -> String {
        let json = |table: &toml::Table| {
            serde_json::to_string(table).expect("toml values always serialize to JSON")
        };
        if !self.0.values().any(has_non_finite) {
            return json(&self.0);
        }
        let mut table = self.0.clone();
        table.iter_mut().for_each(|(_, v)| spell_non_finite(v));
        json(&table)
    }

    pub(super) fn merged(&self, over: &Settings) -> Settings {
        let mut table = self.0.clone();
        table.extend(over.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        Settings(table)
    }
}

/// Whether `value` is or holds a float JSON cannot write.
fn has_non_finite(value: &toml::Value) -> bool {
    match value {
        toml::Value::Float(f) => !f.is_finite(),
        toml::Value::Array(items) => items.iter().any(has_non_finite),
        toml::Value::Table(table) => table.values().any(has_non_finite),
        _ => false,
    }
}

/// `value` with each float JSON cannot write spelled as a table, as
/// [`Settings::canonical_json`] says.
fn spell_non_finite(value: &mut toml::Value) {
    match value {
        toml::Value::Float(f) if !f.is_finite() => {
            let spelled = if f.is_nan() {
                "nan"
            } else if *f > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            let mut table = toml::Table::new();
            table.insert("toml-float".into(), spelled.into());
            *value = toml::Value::Table(table);
        }
        toml::Value::Array(items) => items.iter_mut().for_each(spell_non_finite),
        toml::Value::Table(table) => table.iter_mut().for_each(|(_, v)| spell_non_finite(v)),
        _ => {}
    }
}

/// Settings that do not fit a processor's settings type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SettingsError {
    /// The deserializer's message.
    pub message: String,
    /// A suggestion for a misspelled key, or the fix.
    pub help: Option<String>,
    /// The setting at fault, if one is: the error points at its line.
    pub key: Option<String>,
}

/// How pixels are stored in an image or atlas page output (the `encoding`
/// setting of the `image` processor and of an atlas). Unset, it is
/// [`Encoding::default_for`] the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// Raw RGBA8 rows: the largest, nothing to decode.
    Raw,
    /// A PNG stream: small, slow to decode, needs an image library.
    Png,
    /// Raw rows as one LZ4 block: fast to make and to decode.
    Lz4,
    /// Raw rows as one zstd frame: smaller than LZ4, slower to make.
    Zstd,
}

/// The setting, as the image layout stores it (`assets_runtime::image`).
impl From<Encoding> for assets_runtime::image::Encoding {
    fn from(encoding: Encoding) -> Self {
        match encoding {
            Encoding::Raw => Self::Raw,
            Encoding::Png => Self::Png,
            Encoding::Lz4 => Self::Lz4,
            Encoding::Zstd => Self::Zstd,
        }
    }
}

/// Whether `variant` is the one that ships, `release`: the defaults that
/// trade build time for size or quality ([`Encoding::default_for`], parcels'
/// compression, textures' effort) and a failure keeping the last parcel
/// all follow it; every other variant is a development build.
pub fn is_release(variant: &str) -> bool {
    variant == "release"
}

impl Encoding {
    /// The encoding when a rule or atlas names none: `zstd` for the
    /// `release` variant (smallest parcels; falls back to `lz4` when
    /// assets-build's `zstd` feature is off), `lz4` for every other (a dev
    /// build should be quick).
    pub fn default_for(variant: &str) -> Encoding {
        if is_release(variant) && cfg!(feature = "zstd") {
            Encoding::Zstd
        } else {
            Encoding::Lz4
        }
    }
}
