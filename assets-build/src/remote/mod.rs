//! The remote cache: a store shared by a team and its CI, behind the local one.
//!
//! Every step is keyed by content and its outputs are named by blake3, so a
//! result built on one machine is valid on any other whose inputs hash the
//! same. The remote keeps two kinds of entries, as Bazel's remote cache
//! does:
//!
//! ```text
//! <remote>/ac/<result key>    a step's record, small outputs inside (see `entry`)
//! <remote>/cas/<blake3 hex>   an output too large to ride inside (an atlas page)
//! ```
//!
//! **Keys.** A step's key holds its processor, settings, asset path and
//! variant, not its inputs: those are found while it runs. The result key
//! adds the hash of the asset's own file (when it is a file), so that two
//! branches that changed a sprite keep one entry each instead of replacing
//! each other's. Everything else the record lists (other files read, files
//! looked for, other assets used) is checked here, against this machine's
//! files, before the entry is used: the same freshness check as a local
//! record, by content since the stamps are another machine's.
//!
//! **When it is asked.** Only when the local cache cannot serve a step: no
//! record of the step with this key, or a stale one. Steps with no local
//! record are looked up all at once when the build starts (in parallel,
//! bounded), so a fresh checkout fetches at the network's pace, not one
//! step per worker at a time.
//!
//! **Trust.** Every output is checked against its hash before it enters the
//! local store; one that does not match is dropped, reported, and the step
//! runs here. A remote that is down, slow or failing never fails a build:
//! each request has a timeout ([`RemoteConfig::timeout`]), the first
//! failure is reported once, and the rest of the build does not ask again.
//!
//! **Writing.** Off by default: a developer's machine reads, CI writes
//! (`CARGO_ASSETS_REMOTE_WRITE=1` or `cargo assets build --remote-write`).
//! A step that ran is uploaded in the background, its large outputs first
//! and its entry last (a reader never finds an entry whose blobs are
//! missing); the build waits for the uploads only at its very end. A step
//! fresh here is uploaded too when the remote lacks its entry (one `stat`
//! each), so a CI runner whose local cache was warm before the remote was
//! set up, or a remote emptied by an expiry rule, fills again.
//!
//! **Configuration** is per user or CI job, never per package:
//! `CARGO_ASSETS_REMOTE` holds an [OpenDAL] URI (`s3://bucket/prefix`,
//! `fs:///mnt/team-cache`, with service options as query parameters:
//! `?endpoint=http://minio:9000&region=eu-west-1`), set in the environment
//! or in `[env]` of `.cargo/config.toml`. Credentials come from the
//! service's usual variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! ...), never from `Cargo.toml`. The client is behind the `remote` feature
//! (OpenDAL, tokio and an HTTP stack: `cargo assets` has it; a build script
//! opts in).
//!
//! [OpenDAL]: https://opendal.apache.org/

#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) mod bundle;
#[cfg(feature = "remote")]
mod client;
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) mod entry;

use std::time::Duration;

use crate::hash::ContentHash;

pub(crate) use bundle::bundle_key;
#[cfg(feature = "remote")]
pub(crate) use client::{Outputs, Remote};

/// Where the remote cache is and how to use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteConfig {
    /// The OpenDAL URI of the store: `s3://bucket/prefix?region=...`.
    pub url: String,
    /// Whether results built here are uploaded.
    pub write: bool,
    /// How long one request may take before the remote is given up on.
    pub timeout: Duration,
}

/// A remote configuration that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteConfigError {
    /// A variable holds a value it cannot.
    #[error("environment variable `{var}` is `{value}`: {expected}")]
    BadVariable {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
}

impl RemoteConfig {
    /// The variable holding the remote's URI.
    pub const URL_VAR: &'static str = "CARGO_ASSETS_REMOTE";
    /// The variable that turns uploads on (`1`, `true`; `0`, `false` off).
    pub const WRITE_VAR: &'static str = "CARGO_ASSETS_REMOTE_WRITE";
    /// The variable holding the timeout per request, in seconds.
    pub const TIMEOUT_VAR: &'static str = "CARGO_ASSETS_REMOTE_TIMEOUT";
    /// The timeout per request when none is set.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// A configuration for `url`, read-only, with the default timeout.
    pub fn new(url: impl Into<String>) -> RemoteConfig {
        RemoteConfig {
            url: url.into(),
            write: false,
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// The configuration the environment gives (`None` if
    /// `CARGO_ASSETS_REMOTE` is unset or empty).
    pub fn from_env() -> Result<Option<RemoteConfig>, RemoteConfigError> {
        Self::from_vars(|var| std::env::var(var).ok())
    }

    /// [`RemoteConfig::from_env`] over any source of variables.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<RemoteConfig>, RemoteConfigError> {
        let Some(url) = var(Self::URL_VAR).filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let mut config = RemoteConfig::new(url.trim());
        if let Some(value) = var(Self::WRITE_VAR) {
            config.write = match value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "" | "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(RemoteConfigError::BadVariable {
                        var: Self::WRITE_VAR,
                        value,
                        expected: "use `1` to upload results, `0` not to",
                    });
                }
            };
        }
        if let Some(value) = var(Self::TIMEOUT_VAR) {
            config.timeout = value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0 && *s < 86_400.0)
                .map(Duration::from_secs_f64)
                .ok_or(RemoteConfigError::BadVariable {
                    var: Self::TIMEOUT_VAR,
                    value,
                    expected: "a number of seconds, such as `10` or `2.5`",
                })?;
        }
        Ok(Some(config))
    }

    /// The URI as it may be shown: scheme, name and root, without the
    /// query (which may hold keys).
    pub fn display(&self) -> &str {
        self.url.split(['?', '#']).next().unwrap_or(&self.url)
    }
}

/// What a build did with the remote cache (also the `remote` object of
/// `cargo assets`' `build-finished` message).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteStats {
    /// The remote, as shown ([`RemoteConfig::display`]).
    pub url: String,
    /// Bytes downloaded: entries and blobs.
    pub bytes_down: u64,
    /// Steps whose results were uploaded.
    pub uploaded: usize,
    /// Bytes uploaded.
    pub bytes_up: u64,
    /// Downloaded outputs that did not match their hash, dropped.
    pub rejected: usize,
    /// Whether the remote failed (and was not asked again this build).
    pub unavailable: bool,
}

#[cfg_attr(not(feature = "remote"), allow(dead_code))]
/// The key of a step's entry: the step's key and its asset file's contents.
pub(crate) fn result_key(step_key: &ContentHash, source: Option<&ContentHash>) -> ContentHash {
    let mut h = blake3::Hasher::new();
    h.update(b"cargo-assets result key 1");
    h.update(step_key.as_bytes());
    if let Some(source) = source {
        h.update(source.as_bytes());
    }
    h.finalize().into()
}

/// A stand-in for the client when the `remote` feature is off: a build
/// configured with a remote warns that it cannot use one.
#[cfg(not(feature = "remote"))]
#[derive(Debug)]
pub(crate) enum Remote {}

/// The outputs of a step to upload (see the client's).
#[cfg(not(feature = "remote"))]
#[allow(dead_code)]
pub(crate) enum Outputs {
    Bytes(Vec<Vec<u8>>),
    Stored(Vec<crate::store::BlobSource>),
}

#[cfg(not(feature = "remote"))]
#[allow(clippy::unused_self)]
impl Remote {
    pub fn connect(_: &RemoteConfig) -> Result<Remote, String> {
        Err(
            "this build has no remote cache client: enable the `remote` feature of assets-build"
                .into(),
        )
    }
    pub fn display(&self) -> &str {
        match *self {}
    }
    pub fn writes(&self) -> bool {
        match *self {}
    }
    pub fn prefetch(&self, _: ContentHash) {
        match *self {}
    }
    pub fn prefetch_bundle(&self, _: ContentHash, _: Vec<ContentHash>) {
        match *self {}
    }
    pub fn lookup(&self, _: ContentHash) -> Option<entry::Entry> {
        match *self {}
    }
    pub fn fetch_blobs(&self, _: &str, _: &[(ContentHash, u64)]) -> Option<Vec<Vec<u8>>> {
        match *self {}
    }
    pub fn verify(&self, _: &str, _: &ContentHash, _: u64, _: &[u8]) -> bool {
        match *self {}
    }
    pub fn upload(&self, _: ContentHash, _: crate::record::Record, _: Outputs) {
        match *self {}
    }
    pub fn take_warnings(&self) -> Vec<String> {
        match *self {}
    }
    pub fn finish(&self) -> RemoteStats {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_environment_configures_the_remote() {
        assert_eq!(RemoteConfig::from_vars(vars(&[])).unwrap(), None);
        assert_eq!(
            RemoteConfig::from_vars(vars(&[("CARGO_ASSETS_REMOTE", " ")])).unwrap(),
            None
        );
        let config = RemoteConfig::from_vars(vars(&[
            (
                "CARGO_ASSETS_REMOTE",
                "s3://team/assets?endpoint=http://minio:9000",
            ),
            ("CARGO_ASSETS_REMOTE_WRITE", "1"),
            ("CARGO_ASSETS_REMOTE_TIMEOUT", "2.5"),
        ]))
        .unwrap()
        .unwrap();
        assert!(config.write);
        assert_eq!(config.timeout, Duration::from_millis(2500));
        assert_eq!(config.display(), "s3://team/assets");
        let read_only =
            RemoteConfig::from_vars(vars(&[("CARGO_ASSETS_REMOTE", "fs:///cache")])).unwrap();
        assert_eq!(read_only, Some(RemoteConfig::new("fs:///cache")));
    }

    #[test]
    fn bad_values_name_the_variable_and_the_fix() {
        let err = RemoteConfig::from_vars(vars(&[
            ("CARGO_ASSETS_REMOTE", "s3://team"),
            ("CARGO_ASSETS_REMOTE_WRITE", "please"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("CARGO_ASSETS_REMOTE_WRITE") && err.contains("`1`"),
            "{err}"
        );
        let err = RemoteConfig::from_vars(vars(&[
            ("CARGO_ASSETS_REMOTE", "s3://team"),
            ("CARGO_ASSETS_REMOTE_TIMEOUT", "-1"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(err.contains("seconds"), "{err}");
    }

    #[test]
    fn result_keys_follow_the_asset_file() {
        let step = ContentHash::of(b"step");
        let a = ContentHash::of(b"a");
        assert_ne!(result_key(&step, Some(&a)), result_key(&step, None));
        assert_ne!(
            result_key(&step, Some(&a)),
            result_key(&step, Some(&ContentHash::of(b"b")))
        );
        assert_eq!(result_key(&step, Some(&a)), result_key(&step, Some(&a)));
    }
}
