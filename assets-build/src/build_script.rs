//! The `build.rs` front-end: `fn main() { assets_build::build().unwrap() }`.
//!
//! This is the one module of the library that prints, because a build
//! script's stdout *is* its protocol with Cargo. What it does:
//!
//! - reads the manifest from `CARGO_MANIFEST_PATH` (never runs `cargo metadata`);
//! - builds the `dev` variant for `PROFILE=debug` and `release` for
//!   `PROFILE=release` (the names `cargo assets build` uses, so both share
//!   records), with `NUM_JOBS` workers, for the platform whose `targets`
//!   cover `TARGET` (`cargo build --target wasm32-unknown-unknown` builds
//!   the `web` platform's settings when `web` covers `wasm32-*`), as
//!   `cargo assets build --target` does;
//! - writes the parcels into `$OUT_DIR/assets/` (never into the source tree)
//!   and tells `include_parcel!` where with `cargo:rustc-env=CARGO_ASSETS_PARCELS`,
//!   and whether to embed them (`CARGO_ASSETS_EMBED`: a debug build on a
//!   target with files maps the parcel's file instead, so an asset edit
//!   relinks no megabytes of content; release embeds);
//! - emits `rerun-if-changed` for `Cargo.toml` and each asset root directory
//!   (Cargo scans a directory's files itself), not one line per file;
//! - prints what it did to stderr in one short line (Cargo shows it with
//!   `-vv`);
//! - when assets fail: every diagnostic goes to stderr in full, and each
//!   failed asset gets one line for Cargo. In a debug build the parcels are
//!   written anyway ([`OnFailure::StandIn`]: an asset's last good build
//!   stands in for it, or it is left out), the lines are `cargo::warning`s
//!   and the game compiles and runs. In a release build (or with
//!   `CARGO_ASSETS_STRICT=1`, for CI) they are `cargo::error`s, which fail
//!   the build, and the last good parcels are kept as they were;
//! - each warning of a processor (`Context::warn`, a tool's stderr), also of a
//!   reused step, is a `cargo::warning`, or a `cargo::error` with
//!   `CARGO_ASSETS_DENY_WARNINGS=1`.
//!
//! **Errors go to Cargo, not to the caller.** Whatever fails (an asset, the
//! manifest, the cache), [`build`] tells Cargo with `cargo::error` lines,
//! and Cargo fails the build with those messages once the script ends; the
//! function then returns `Ok`, so that `build().unwrap()` adds no panic and
//! backtrace to them. It returns an error only when it is not run by Cargo
//! at all, or for a package whose `rust-version` is older than Cargo's
//! `cargo::error` (1.84), where returning the error is the only way to fail.
//!
//! **Where the cache is.** Cargo tells build scripts where `OUT_DIR` is, not
//! where the target directory is. In order:
//!
//! 1. `CARGO_ASSETS_CACHE_DIR`, if set: put it in `.cargo/config.toml` to be
//!    explicit, e.g. `[env] CARGO_ASSETS_CACHE_DIR = { value = "target/assets", relative = true }`;
//! 2. `<target dir>/assets`, the cache `cargo assets build` uses, with the
//!    target directory read off `OUT_DIR`'s place in Cargo's layout
//!    (`<target>[/<triple>]/<profile>/build/<package>-<hash>/out`). (Looking
//!    for Cargo's `CACHEDIR.TAG` instead is wrong when something else created
//!    the target directory first: Cargo then writes no tag, and the search
//!    finds an enclosing one.) A Cargo `build-dir` set apart from the target
//!    directory makes this the build dir's cache: correct, but not shared;
//! 3. `$OUT_DIR/assets-cache`: always safe, but private to this build script.
//!
//! **Remote cache.** `CARGO_ASSETS_REMOTE` (and `_WRITE`, `_TIMEOUT`; see
//! [`crate::unstable::remote`]) reach build scripts too when set in `[env]` of
//! `.cargo/config.toml`; the script uses the remote when assets-build has
//! its `remote` feature, and says with a `cargo:warning` that it cannot
//! otherwise. A remote that fails is a warning, never an error.
//!
//! Sharing is safe: builds on one cache take turns on its lock (so Cargo may
//! run several build scripts at once), and records are kept per package.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::event::Event;
use crate::pipeline::{BuildOptions, Pipeline};
use crate::processor::{Processor, Registry};
use crate::remote::RemoteConfig;
use crate::report::{BuildReport, OnFailure, Outcome, ParcelOutcome, ParcelReport, StandIn};

/// The variable naming the cache directory explicitly.
pub const CACHE_DIR_VAR: &str = "CARGO_ASSETS_CACHE_DIR";
/// The variable through which `include_parcel!` finds the parcels.
pub const PARCELS_VAR: &str = "CARGO_ASSETS_PARCELS";

/// Set to `1` to fail a debug build's script on a failed asset, as a
/// release build's does (for CI that runs `cargo build` or `cargo test`).
pub const STRICT_VAR: &str = "CARGO_ASSETS_STRICT";
/// Set to `1` to fail the build script when a processor warns.
pub const DENY_WARNINGS_VAR: &str = "CARGO_ASSETS_DENY_WARNINGS";
/// The build's memory budget for large decodes, e.g. `4GiB` (see
/// [`crate::memory_budget::DEFAULT_MEMORY_BUDGET`]), as `cargo assets --memory-budget`.
pub const MEMORY_BUDGET_VAR: &str = "CARGO_ASSETS_MEMORY_BUDGET";
/// How long a step may run, in seconds, unless its rule's `timeout` says
/// (see [`crate::unstable::DEFAULT_STEP_TIMEOUT`]), as `cargo assets --step-timeout`.
pub const STEP_TIMEOUT_VAR: &str = "CARGO_ASSETS_STEP_TIMEOUT";
/// Whether `include_parcel!` embeds the parcel (`1`) or maps its file
/// (`0`): the script passes it to rustc, `0` for a debug build on a target
/// with files (not `wasm32`), unless it is set to `1` in the environment.
pub const EMBED_VAR: &str = "CARGO_ASSETS_EMBED";

/// Why the build script's asset build failed, when it cannot tell Cargo
/// itself (see the [module docs](self)).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildScriptError {
    /// A variable Cargo sets for build scripts is missing: not run by Cargo.
    #[error("`{0}` is not set: assets_build::build() runs inside a build script (build.rs)")]
    NotInBuildScript(&'static str),
    /// The build failed, in a package whose `rust-version` predates
    /// `cargo::error`; the details were printed to stderr.
    #[error("{0} (details above)")]
    Failed(String),
}

// `build().unwrap()` prints the error with `Debug`: keep it the one line
// `Display` gives rather than a struct dump.
impl std::fmt::Debug for BuildScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Builds the package's assets from its build script, with the built-in
/// processors. See the [module docs](self).
pub fn build() -> Result<(), BuildScriptError> {
    Builder::new().build()
}

/// A build-script build with more to it than the defaults: custom
/// processors, or another cache directory.
///
/// ```no_run
/// # struct Level;
/// # impl assets_build::Processor for Level {
/// #     type Settings = assets_build::NoSettings;
/// #     fn name(&self) -> &str { "level" }
/// #     fn version(&self) -> u32 { 1 }
/// #     fn process(&self, _: &mut assets_build::Context<'_>, _: assets_build::NoSettings) -> Result<(), assets_build::ProcessError> { Ok(()) }
/// # }
/// fn main() {
///     assets_build::Builder::new()
///         .processor(Level)        // or .register(my_processors::register)
///         .build()
///         .unwrap();
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    registry: Registry,
    cache_dir: Option<PathBuf>,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

impl Builder {
    /// The built-in processors, the cache found as the module docs say.
    pub fn new() -> Builder {
        Builder {
            registry: Registry::with_builtins(),
            cache_dir: None,
        }
    }

    /// Adds a processor (keyed by the code of the crate calling this: see
    /// [`Registry::register`]).
    #[track_caller]
    pub fn processor(mut self, processor: impl Processor) -> Builder {
        self.registry.register(processor);
        self
    }

    /// Adds processors through a crate's registration function, the same
    /// function `[package.metadata.assets] processors` names for the CLI.
    pub fn register(mut self, register: fn(&mut Registry)) -> Builder {
        register(&mut self.registry);
        self
    }

    /// Uses `dir` as the cache instead.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Runs the build. See the [module docs](self).
    pub fn build(self) -> Result<(), BuildScriptError> {
        let var = |name: &'static str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .ok_or(BuildScriptError::NotInBuildScript(name))
        };
        let out_dir = var("OUT_DIR")?;
        let manifest_path = match std::env::var_os("CARGO_MANIFEST_PATH") {
            Some(p) => PathBuf::from(p),
            None => var("CARGO_MANIFEST_DIR")?.join("Cargo.toml"),
        };
        let cache_dir = self
            .cache_dir
            .clone()
            .unwrap_or_else(|| cache_dir(&out_dir));
        let parcel_dir = out_dir.join("assets");
        let mut options = BuildOptions::new(&manifest_path, cache_dir);
        options.variant = match std::env::var("PROFILE").as_deref() {
            Ok("release") => "release".into(),
            _ => "dev".into(),
        };
        let debug_build = options.variant == "dev";
        println!("cargo:rerun-if-env-changed={STRICT_VAR}");
        let strict = std::env::var(STRICT_VAR).is_ok_and(|v| v == "1" || v == "true");
        let on_failure = match strict {
            true => OnFailure::KeepParcel,
            false => OnFailure::for_variant(&options.variant),
        };
        options.on_failure = Some(on_failure);
        if let Some(jobs) = std::env::var("NUM_JOBS").ok().and_then(|j| j.parse().ok()) {
            options.jobs = jobs;
        }
        println!("cargo:rerun-if-env-changed={STEP_TIMEOUT_VAR}");
        if let Ok(seconds) = std::env::var(STEP_TIMEOUT_VAR) {
            match crate::manifest::parse_step_timeout(&seconds) {
                Ok(timeout) => options.step_timeout = timeout,
                Err(e) => {
                    return Cargo::from_env()
                        .fail(&[format!("cargo-assets: {STEP_TIMEOUT_VAR}: {e}")]);
                }
            }
        }
        println!("cargo:rerun-if-env-changed={MEMORY_BUDGET_VAR}");
        if let Ok(budget) = std::env::var(MEMORY_BUDGET_VAR) {
            match crate::memory_budget::parse_size(&budget) {
                Ok(bytes) => options.memory_budget = bytes,
                Err(e) => {
                    return Cargo::from_env()
                        .fail(&[format!("cargo-assets: {MEMORY_BUDGET_VAR}: {e}")]);
                }
            }
        }
        options.target = std::env::var("TARGET").ok();
        options.parcel_dir = Some(parcel_dir.clone());
        match RemoteConfig::from_env() {
            Ok(remote) => options.remote = remote,
            Err(e) => {
                println!("cargo:warning=cargo-assets: {e}; building without the remote cache")
            }
        }
        println!("cargo:rerun-if-changed={}", manifest_path.display());
        println!("cargo:rerun-if-env-changed={CACHE_DIR_VAR}");
        let mut pipeline = Pipeline::new(options);
        *pipeline.registry_mut() = self.registry;
        let report = pipeline.build(&on_event);
        // Roots are known once the manifest is read; watch them even when
        // the build failed, so fixing an asset reruns the script.
        if let Ok(manifest) = crate::manifest::Manifest::load(&manifest_path) {
            for root in &manifest.roots {
                println!("cargo:rerun-if-changed={}", root.dir.display());
            }
            // Files outside the roots that a step read (a tool's config).
            if let Ok(report) = &report {
                for path in report.inputs_outside(&manifest.roots) {
                    println!(
                        "cargo:rerun-if-changed={}",
                        manifest.package_dir.join(path).display()
                    );
                }
            }
        }
        let cargo = Cargo::from_env();
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                eprintln!("error: {e}");
                return cargo.fail(&[format!("cargo-assets: {e}")]);
            }
        };
        let strict = on_failure == OnFailure::KeepParcel;
        let written = report.parcels.iter().all(|p| {
            matches!(
                p.outcome,
                ParcelOutcome::Written { .. } | ParcelOutcome::Unchanged { .. }
            )
        });
        if written {
            println!("cargo:rustc-env={PARCELS_VAR}={}", parcel_dir.display());
            println!("cargo:rerun-if-env-changed={EMBED_VAR}");
            let has_files = !std::env::var("TARGET")
                .unwrap_or_default()
                .starts_with("wasm32");
            let asked = std::env::var(EMBED_VAR).is_ok_and(|v| v == "1" || v == "true");
            let map = debug_build && has_files && !asked;
            println!(
                "cargo:rustc-env={EMBED_VAR}={}",
                if map { "0" } else { "1" }
            );
        }
        println!("cargo:rerun-if-env-changed={DENY_WARNINGS_VAR}");
        let deny_warnings = std::env::var(DENY_WARNINGS_VAR).is_ok_and(|v| v == "1" || v == "true")
            || crate::manifest::Manifest::load(&manifest_path).is_ok_and(|m| m.deny_warnings);
        // Each step's warnings and notes, also a reused step's (the record
        // keeps them). Cargo shows a build script's stderr with `-vv`; a
        // `cargo::warning` always, on one line, and has no notes.
        let warnings: Vec<String> = report
            .diagnostics()
            .filter_map(|(step, said)| {
                let at = said.place(&step.asset);
                let message = &said.message;
                let severity = said.severity.as_str();
                eprintln!("{severity}: `{at}` ({}): {message}", step.processor);
                if !said.is_warning() {
                    return None;
                }
                let mut lines = message.lines().filter(|l| !l.trim().is_empty());
                let first = lines.next().unwrap_or_default();
                let more = match lines.count() {
                    0 => String::new(),
                    n => format!(" ({n} more lines with `cargo build -vv`)"),
                };
                Some(format!(
                    "cargo-assets: `{at}` ({}): {first}{more}",
                    step.processor
                ))
            })
            .collect();
        let warnings: Vec<String> = (report.unused_rules.iter().chain(&report.aliases))
            .map(|rule| {
                let at = rule
                    .line
                    .map(|l| format!(" (Cargo.toml:{l})"))
                    .unwrap_or_default();
                format!("cargo-assets: {}{at}", rule.message)
            })
            .chain(warnings)
            .chain(
                (report.parcels.iter())
                    .filter_map(ParcelReport::repair_note)
                    .map(|note| format!("cargo-assets: {note}")),
            )
            .collect();
        if deny_warnings && !warnings.is_empty() {
            return cargo.fail(&warnings);
        }
        for line in &warnings {
            println!("cargo::warning={line}");
        }
        let lines = finish(&report);
        if lines.is_empty() {
            Ok(())
        } else if written && !strict {
            for line in &lines {
                println!("cargo::warning={line}");
            }
            Ok(())
        } else {
            cargo.fail(&lines)
        }
    }
}

/// What the Cargo running the script takes.
struct Cargo {
    /// Whether `cargo::error` can be used: not in a package whose
    /// `rust-version` is older than 1.84, where Cargo refuses it.
    has_error: bool,
}

impl Cargo {
    fn from_env() -> Cargo {
        let msrv = std::env::var("CARGO_PKG_RUST_VERSION").unwrap_or_default();
        let mut parts = msrv.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        Cargo {
            has_error: msrv.is_empty() || (major, minor) >= (1, 84),
        }
    }

    /// Fails the build with one message per line: through `cargo::error`
    /// (then `Ok`, see the module docs), else as warnings and an error.
    fn fail(&self, lines: &[String]) -> Result<(), BuildScriptError> {
        let directive = if self.has_error {
            "cargo::error"
        } else {
            "cargo:warning"
        };
        for line in lines {
            // One line each: Cargo reads a directive up to the line's end.
            println!("{directive}={}", first_line(line));
        }
        if self.has_error {
            Ok(())
        } else {
            let first = lines.first().map_or("", |l| first_line(l));
            Err(BuildScriptError::Failed(first.to_owned()))
        }
    }
}

fn on_event(event: &Event<'_>) {
    match event {
        Event::WaitingForLock { path } => {
            eprintln!("Blocking waiting for file lock on `{}`", path.display());
        }
        Event::RemoteWarning { message } => {
            println!("cargo:warning=cargo-assets: {}", first_line(message));
        }
        Event::Overdue { .. } => {
            // The step's thread cannot be stopped; the script can, safely
            // at any moment, failing the build with the reason.
            let message = event.overdue_message().unwrap_or_default();
            eprintln!("error: {message}");
            println!("cargo:warning=cargo-assets: {message}");
            std::process::exit(1);
        }
        _ => {}
    }
}

/// Prints the report's details to stderr; returns the lines for Cargo:
/// one per failed asset, saying what the parcels hold instead (and, for a
/// file that failed, how to leave it out), then one per parcel not
/// written. None on success.
fn finish(report: &BuildReport) -> Vec<String> {
    // What ran, for `cargo build -vv` (which shows a build script's
    // stderr): the counts, and the first few names.
    let ran: Vec<&str> = report
        .steps
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Ran { .. }))
        .map(|s| s.asset.as_str())
        .collect();
    let shown = ran.len().min(SHOWN);
    let more = match ran.len() - shown {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    eprintln!(
        "cargo-assets: {} fresh, {} fetched, {} processed: {}{more}",
        report.fresh(),
        report.fetched(),
        ran.len(),
        ran[..shown].join(", "),
    );
    for step in &report.steps {
        match &step.outcome {
            Outcome::Failed { error, .. } => eprintln!(
                "error: failed to process `{}` ({}): {error}",
                step.asset, step.processor
            ),
            Outcome::Skipped { dependency } => eprintln!(
                "warning: skipped `{}`: its dependency `{dependency}` failed",
                step.asset
            ),
            _ => {}
        }
    }
    for parcel in &report.parcels {
        if let ParcelOutcome::Failed { error } = &parcel.outcome {
            eprintln!("error: could not write parcel `{}`: {error}", parcel.name);
        }
    }
    let Some(summary) = report.failure_summary() else {
        return Vec::new();
    };
    // What the parcels hold instead of each failed asset.
    let mut fate: HashMap<&str, &str> = HashMap::new();
    for s in report.parcels.iter().flat_map(|p| &p.stand_ins) {
        let instead = match s {
            StandIn::LastGood { .. } => "its last good build is used",
            StandIn::LeftOut { .. } => "the parcels go without it",
        };
        fate.insert(s.asset(), instead);
    }
    let mut lines = Vec::new();
    let failed = report.steps.iter().filter(|s| s.record.is_none());
    let failed: Vec<_> = failed.collect();
    for step in failed.iter().take(SHOWN) {
        let (what, hint) = match &step.outcome {
            // A file that is no asset at all (a draft, a backup) is better
            // left out; each line says how, for its own file.
            Outcome::Failed { error, .. } if step.asset.atlas_name().is_none() => (
                first_line(&error.to_string()).to_owned(),
                format!(
                    " (not an asset? `ignore = [\"{}\"]` under [package.metadata.assets] leaves it out)",
                    step.asset
                ),
            ),
            Outcome::Failed { error, .. } => {
                (first_line(&error.to_string()).to_owned(), String::new())
            }
            Outcome::Skipped { dependency } => (
                format!("its dependency `{dependency}` failed"),
                String::new(),
            ),
            _ => continue,
        };
        let instead = match fate.get(step.asset.as_str()) {
            Some(instead) => format!("; {instead}"),
            None => String::new(),
        };
        lines.push(format!(
            "cargo-assets: `{}` ({}): {what}{instead}{hint}",
            step.asset, step.processor
        ));
    }
    if failed.len() > SHOWN {
        lines.push(format!("cargo-assets: {summary}"));
    }
    for parcel in &report.parcels {
        match &parcel.outcome {
            ParcelOutcome::Blocked { .. } => lines.push(format!(
                "cargo-assets: parcel `{}` not written: it holds assets that failed",
                parcel.name
            )),
            ParcelOutcome::Failed { error } => lines.push(format!(
                "cargo-assets: could not write parcel `{}`: {error}",
                parcel.name
            )),
            _ => {}
        }
    }
    lines
}

/// How many failed assets (and processed ones) are named one by one.
const SHOWN: usize = 10;

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// The shared cache if it can be found, else a private one. See the module docs.
fn cache_dir(out_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_DIR_VAR) {
        return PathBuf::from(dir);
    }
    let triple = std::env::var("TARGET").ok();
    target_dir_of(out_dir, triple.as_deref())
        .map(|target| target.join("assets"))
        .unwrap_or_else(|| out_dir.join("assets-cache"))
}

/// The target directory of a build script's `OUT_DIR`, in Cargo's layout:
/// `<target>[/<triple>]/<profile>/build/<package>-<hash>/out`.
fn target_dir_of(out_dir: &Path, triple: Option<&str>) -> Option<PathBuf> {
    let mut up = out_dir.ancestors();
    let (out, build) = (up.next()?, up.nth(1)?);
    if out.file_name()? != "out" || build.file_name()? != "build" {
        return None;
    }
    let profile_parent = up.nth(1)?;
    let target = match triple {
        Some(t) if profile_parent.file_name().is_some_and(|n| n == t) => profile_parent.parent()?,
        _ => profile_parent,
    };
    Some(target.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_dir_is_read_off_the_out_dir_layout() {
        let host = Path::new("/p/target/debug/build/game-0123abcd/out");
        assert_eq!(
            target_dir_of(host, Some("x86_64-unknown-linux-gnu")),
            Some(PathBuf::from("/p/target"))
        );
        let cross = Path::new("/p/target/wasm32-unknown-unknown/release/build/game-0123abcd/out");
        assert_eq!(
            target_dir_of(cross, Some("wasm32-unknown-unknown")),
            Some(PathBuf::from("/p/target"))
        );
        assert_eq!(target_dir_of(Path::new("/somewhere/else"), None), None);
    }
}
