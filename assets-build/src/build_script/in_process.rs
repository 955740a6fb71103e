//! The pipeline run in the build script itself (the `in-process` feature):
//! see the [module docs](super).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{
    BuildScriptError, Builder, CACHE_DIR_VAR, Cargo, DENY_WARNINGS_VAR, EMBED_VAR,
    MEMORY_BUDGET_VAR, PARCELS_VAR, STEP_TIMEOUT_VAR, STRICT_VAR, first_line,
};
use crate::event::Event;
use crate::pipeline::{BuildOptions, Pipeline};
use crate::remote::RemoteConfig;
use crate::report::{BuildReport, OnFailure, Outcome, ParcelOutcome, ParcelReport, StandIn};

/// Runs the pipeline in this process. See the [module docs](super).
pub(super) fn build(builder: Builder) -> Result<(), BuildScriptError> {
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
    let cache_dir = (builder.cache_dir.clone()).unwrap_or_else(|| cache_dir(&out_dir));
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
                return Cargo::from_env().fail(&[format!("cargo-assets: {STEP_TIMEOUT_VAR}: {e}")]);
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
    *pipeline.registry_mut() = builder.registry;
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
