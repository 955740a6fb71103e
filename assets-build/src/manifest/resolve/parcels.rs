//! `[package.metadata.assets.parcels]`: each parcel's globs, compression
//! and options checked, and the default parcel when none is declared.

use std::ops::Range;

use assets_runtime::Compression;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use toml::Spanned;

use super::super::diagnostic::{ManifestError, did_you_mean};
use super::super::{ASSETS_KEY, ParcelSpec};
use super::Resolver;

impl Resolver<'_> {
    pub(super) fn parcel(
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
        let shape = "expected an array of globs or `{ include = [...], exclude = [...], compression = \"zstd\" }`";
        let mut compression = None;
        let (include, exclude) = match value.into_inner() {
            toml::Value::Array(a) => (a, Vec::new()),
            toml::Value::Table(mut t) => {
                let include = t.remove("include");
                let exclude = t.remove("exclude");
                if let Some(value) = t.remove("compression") {
                    compression = Some(self.compression(value, &span, &key)?);
                }
                if let Some(unknown) = t.keys().next() {
                    let mut err = self.err(span, key, format!("unknown key `{unknown}` in parcel"));
                    if let Some(s) = did_you_mean(unknown, ["include", "exclude", "compression"]) {
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
            compression,
            include,
            exclude,
        })
    }

    /// A parcel's or rule's `compression` value: `none`, `lz4` or `zstd`
    /// (which needs the `zstd` feature of assets-build).
    pub(super) fn compression(
        &self,
        value: toml::Value,
        span: &Range<usize>,
        table_key: &str,
    ) -> Result<Compression, ManifestError> {
        let key = format!("{table_key}.compression");
        let toml::Value::String(name) = &value else {
            return Err(self.err(
                span.clone(),
                key,
                "expected `\"none\"`, `\"lz4\"` or `\"zstd\"`",
            ));
        };
        let compression = Compression::from_name(name).ok_or_else(|| {
            let mut err = self.err(
                span.clone(),
                key.clone(),
                format!("unknown compression `{name}`: expected `none`, `lz4` or `zstd`"),
            );
            if let Some(s) = did_you_mean(name, ["none", "lz4", "zstd"]) {
                err = err.help(format!("did you mean `{s}`?"));
            }
            err
        })?;
        if compression == Compression::Zstd && !cfg!(feature = "zstd") {
            return Err(self
                .err(span.clone(), key, "zstd compression is not in this build")
                .help("enable the `zstd` feature of assets-build, or use `lz4`"));
        }
        Ok(compression)
    }
}

pub(super) fn default_parcel() -> ParcelSpec {
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
        compression: None,
        include,
        exclude: GlobSet::empty(),
    }
}
