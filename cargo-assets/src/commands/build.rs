//! `cargo assets build`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use assets_build::unstable::report::plural;
use assets_build::{
    Registry, unstable::BuildError, unstable::BuildOptions, unstable::BuildReport,
    unstable::Changes, unstable::Event, unstable::Outcome, unstable::ParcelOutcome,
    unstable::ParcelReport, unstable::Pipeline, unstable::RemoteConfig, unstable::StandIn,
    unstable::StepReport, unstable::Verification, unstable::Verify,
};

use super::Exit;
use crate::cli::{BuildArgs, JobsArgs, VariantArgs};
use crate::message::{BuildFinished, Message, OutputMismatchMessage};
use crate::runner;
use crate::shell::{Shell, Style, Verbosity};
use crate::workspace::{self, Package};

/// Builds the selected packages' assets (one after another, stopping at the
/// first that fails, as Cargo does), with `processors` registered besides
/// the built-ins; a package whose manifest names processor crates this
/// process does not have is handed to the processor runner (see
/// [`crate::runner`]).
pub fn exec(
    args: &BuildArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    build_packages(args, args.verify()?, shell, processors)
}

/// A build script's build, for assets-build's thin client (see
/// `assets_build::build_script`): this program's processors, and what the
/// script would do itself with the pipeline compiled in, stdout included
/// (Cargo's protocol, which the client passes through).
pub fn build_script(processors: &[fn(&mut Registry)]) -> anyhow::Result<Exit> {
    let builder = (processors.iter()).fold(assets_build::Builder::new(), |b, p| b.register(*p));
    builder.build()?;
    Ok(Exit::Success)
}

/// Builds the selected packages, checking the fresh steps `verify` selects.
fn build_packages(
    args: &BuildArgs,
    verify: Option<Verify>,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    let packages = workspace::select(&args.package)?;
    for package in &packages {
        if packages.len() > 1 {
            shell.status(
                "Building",
                format!("{} ({})", package.name, package.dir().display()),
                Style::Good,
            );
        }
        let exit = match runner::delegate_if_needed(package, shell)? {
            Some(code) => Exit::Delegated(code),
            None => {
                let mut pipeline = pipeline(package, &args.jobs, &args.variant, processors)?;
                pipeline.options_mut().verify = verify;
                if !args.assets.is_empty() {
                    anyhow::ensure!(
                        packages.len() == 1,
                        "building chosen assets needs one package: name it with `-p`"
                    );
                    pipeline.options_mut().only = Some(args.assets.clone());
                }
                if args.remote_write {
                    match &mut pipeline.options_mut().remote {
                        Some(remote) => remote.write = true,
                        None => anyhow::bail!(
                            "`--remote-write` needs a remote cache: set `{}` (in the environment or in `[env]` of `.cargo/config.toml`)",
                            RemoteConfig::URL_VAR
                        ),
                    }
                }
                let report = build_once(&pipeline, Changes::Unknown, shell)?;
                let out_dir = match &args.out_dir {
                    // No parcel was written: the folder stays as it is.
                    _ if !args.assets.is_empty() => None,
                    Some(dir) if packages.len() == 1 => Some(dir.clone()),
                    Some(dir) => Some(dir.join(&package.name)),
                    None => manifest(package).and_then(|m| m.out_dir),
                };
                if let Some(dir) = out_dir {
                    write_out_dir(shell, &dir, &report)?;
                }
                let deny = args.deny_warnings || manifest(package).is_some_and(|m| m.deny_warnings);
                finish(shell, package, &report, deny)
            }
        };
        if !exit.is_success() {
            return Ok(exit);
        }
    }
    Ok(Exit::Success)
}

/// The package's manifest, for its keys that act after a build (`out-dir`,
/// `deny-warnings`); `None` if it does not load, which has already failed
/// the build.
pub(crate) fn manifest(package: &Package) -> Option<assets_build::unstable::Manifest> {
    assets_build::unstable::Manifest::load(&package.manifest_path).ok()
}

/// `--out-dir` (or the manifest's `out-dir`): the parcels this build wrote
/// or kept, as files under `dir`.
pub(crate) fn write_out_dir(
    shell: &Shell,
    dir: &std::path::Path,
    report: &BuildReport,
) -> anyhow::Result<()> {
    let parcels: Vec<(PathBuf, Option<PathBuf>)> = (report.parcels.iter())
        .filter(|p| {
            matches!(
                p.outcome,
                ParcelOutcome::Written { .. } | ParcelOutcome::Unchanged { .. }
            )
        })
        .map(|p| (p.path.clone(), p.patch.clone()))
        .collect();
    let stats = assets_build::unstable::out_dir::sync(dir, &parcels)?;
    shell.status(
        "Wrote",
        format!(
            "{} ({} unchanged, {} removed) -> {}",
            plural(stats.written, "file"),
            stats.unchanged,
            stats.removed,
            dir.display()
        ),
        Style::Good,
    );
    shell.message(&Message::OutDirWritten {
        dir: dir.to_owned(),
        written: stats.written,
        unchanged: stats.unchanged,
        removed: stats.removed,
    });
    Ok(())
}

/// `cargo assets verify`: a build whose fresh steps (all, or
/// `--verify-fraction` of them) are built again and compared with the
/// cache. Steps that had to run are built first, so that on a clean cache
/// the second of two runs checks everything.
pub fn verify(
    args: &BuildArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    let verify = args.verify()?.unwrap_or_else(Verify::all);
    build_packages(args, Some(verify), shell, processors)
}

/// The remote cache's configuration: `CARGO_ASSETS_REMOTE*` from the
/// environment or from `[env]` of Cargo's configuration files, read from
/// the current directory up as Cargo reads them. Cargo applies `[env]` to
/// the programs it runs (build scripts), not to external subcommands
/// (rust-lang/cargo#10094), so `cargo assets` reads it itself, with Cargo's
/// precedence: the environment wins unless the entry says `force = true`.
fn remote_config() -> anyhow::Result<Option<RemoteConfig>> {
    let configured = std::env::current_dir()
        .ok()
        .and_then(|dir| cargo_config2::Config::load_with_cwd(dir).ok())
        .map(|config| config.env)
        .unwrap_or_default();
    Ok(RemoteConfig::from_vars(|name| {
        let from_config = configured
            .get(name)
            .map(|v| (v.force, v.value.to_string_lossy().into_owned()));
        match from_config {
            Some((true, value)) => Some(value),
            _ => std::env::var(name)
                .ok()
                .or(from_config.map(|(_, value)| value)),
        }
    })?)
}

/// The pipeline for `package` with these options and processors.
pub fn pipeline(
    package: &Package,
    jobs: &JobsArgs,
    variant: &VariantArgs,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Pipeline> {
    let mut options = BuildOptions::new(&package.manifest_path, &package.cache_dir);
    jobs.apply(&mut options)?;
    variant.apply(&mut options);
    options.remote = remote_config()?;
    let mut pipeline = Pipeline::new(options);
    for register in processors {
        register(pipeline.registry_mut());
    }
    Ok(pipeline)
}

/// One build, its progress rendered; a build that cannot start is also
/// reported as a `build-finished` message.
pub fn build_once(
    pipeline: &Pipeline,
    changes: Changes<'_>,
    shell: &Shell,
) -> Result<BuildReport, BuildError> {
    let on_event = |e: &Event<'_>| render_event(shell, e);
    let result = pipeline.build_after(changes, &on_event);
    shell.progress_finish();
    result.inspect_err(|e| {
        shell.message(&Message::BuildFinished(BuildFinished {
            package: None,
            success: false,
            ran: 0,
            fresh: 0,
            fetched: 0,
            remote: None,
            failed: 0,
            skipped: 0,
            verified: 0,
            unreproduced: 0,
            parcels: BTreeMap::new(),
            platform: None,
            error: Some(e.to_string()),
        }));
    })
}

fn render_event(shell: &Shell, event: &Event<'_>) {
    match event {
        Event::WaitingForLock { .. } => super::render_lock_wait(shell, event),
        Event::Processing {
            asset,
            processor,
            reason,
        } => {
            if shell.verbosity() >= Verbosity::Verbose {
                shell.status(
                    "Processing",
                    format!("{asset} ({processor}: {reason})"),
                    Style::Good,
                );
            } else {
                shell.status("Processing", asset, Style::Good);
            }
            shell.progress_working_on(asset.as_str());
        }
        Event::Planned { steps } => shell.progress_start(*steps),
        Event::Finished { step } => {
            step_finished(shell, step);
            shell.progress_step();
        }
        Event::RemoteWarning { message } => shell.warn(message),
        Event::Overdue {
            asset, processor, ..
        } => {
            let message = event.overdue_message().unwrap_or_default();
            shell.error(&message);
            shell.message(&Message::AssetFailed {
                asset: (*asset).clone(),
                processor: (*processor).to_owned(),
                message,
                why: None,
            });
            // The step's thread cannot be stopped; the process can, safely
            // at any moment.
            std::process::exit(101);
        }
        _ => {}
    }
}

fn step_finished(shell: &Shell, step: &StepReport) {
    let asset = step.asset.as_str();
    // A step's warnings, each time it is built or reused (as Cargo replays
    // a cached warning): the record keeps them.
    for said in step.record.iter().flat_map(|r| &r.diagnostics) {
        let at = said.place(&step.asset);
        let (asset, processor) = (step.asset.clone(), step.processor.clone());
        let (message, location) = (said.message.clone(), said.location.clone());
        let line = format!("`{at}` ({processor}): {message}");
        if said.is_warning() {
            shell.warn(line);
            shell.message(&Message::AssetWarning {
                asset,
                processor,
                message,
                location,
            });
        } else {
            shell.note(line);
            shell.message(&Message::AssetNote {
                asset,
                processor,
                message,
                location,
            });
        }
    }
    match &step.outcome {
        Outcome::Fresh => {
            if shell.verbosity() >= Verbosity::Verbose {
                shell.status("Fresh", asset, Style::Note);
            }
            shell.message(&Message::AssetFresh {
                asset: step.asset.clone(),
                processor: step.processor.clone(),
            });
            if let Some(verification) = &step.verification {
                verified(shell, step, verification);
            }
        }
        Outcome::Fetched => {
            let from = step
                .record
                .as_ref()
                .and_then(|r| r.fetched_from.clone())
                .unwrap_or_default();
            if shell.verbosity() >= Verbosity::Verbose {
                shell.status("Fetched", format!("{asset} (from {from})"), Style::Note);
            }
            shell.message(&Message::AssetFetched {
                asset: step.asset.clone(),
                processor: step.processor.clone(),
                from,
            });
        }
        Outcome::Ran { reason } => {
            shell.message(&Message::AssetProcessed {
                asset: step.asset.clone(),
                processor: step.processor.clone(),
                why: reason.clone(),
            });
        }
        Outcome::Failed { reason, error } => {
            shell.error(format!(
                "failed to process `{asset}` ({}): {error}",
                step.processor
            ));
            shell.message(&Message::AssetFailed {
                asset: step.asset.clone(),
                processor: step.processor.clone(),
                message: error.to_string(),
                why: reason.clone(),
            });
        }
        Outcome::Skipped { dependency } => {
            shell.warn(format!(
                "skipped `{asset}`: its dependency `{dependency}` failed"
            ));
            shell.message(&Message::AssetSkipped {
                asset: step.asset.clone(),
                dependency: dependency.clone(),
            });
        }
    }
}

/// Reports what building a fresh step again found, when it is not the cache.
fn verified(shell: &Shell, step: &StepReport, verification: &Verification) {
    let (outputs, error) = match verification {
        Verification::Same => {
            if shell.verbosity() >= Verbosity::Verbose {
                shell.status("Verified", step.asset.as_str(), Style::Note);
            }
            return;
        }
        Verification::Differs(outputs) => (outputs.as_slice(), None),
        Verification::Failed(error) => (&[][..], Some(error.to_string())),
        Verification::Damaged(error) => {
            shell.error(format!(
                "`{}`: the cache's copy of an output (its own, or one it reads) was damaged and has been removed; the next build makes it again ({error})",
                step.asset
            ));
            shell.message(&Message::CacheDamaged {
                asset: step.asset.clone(),
                error: error.to_string(),
            });
            return;
        }
        _ => return,
    };
    let short = |h: &Option<assets_build::unstable::ContentHash>| match h {
        Some(h) => h.to_hex()[..16].to_owned(),
        None => "nothing".to_owned(),
    };
    let what = match &error {
        Some(e) => format!("building it again failed: {e}"),
        None => outputs
            .iter()
            .map(|o| {
                let name = if o.label.is_empty() {
                    "its output".to_owned()
                } else {
                    format!("output `{}`", o.label)
                };
                format!(
                    "{name} is {} in the cache, {} when built again",
                    short(&o.cached),
                    short(&o.rebuilt)
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    shell.error(format!(
        "`{}` ({}) does not reproduce its cached outputs: {what}",
        step.asset, step.processor
    ));
    shell.message(&Message::AssetUnreproduced {
        asset: step.asset.clone(),
        processor: step.processor.clone(),
        outputs: outputs
            .iter()
            .map(|o| OutputMismatchMessage {
                label: o.label.clone(),
                cached: o.cached.map(|h| h.to_hex()),
                rebuilt: o.rebuilt.map(|h| h.to_hex()),
            })
            .collect(),
        error,
    });
}

/// Warns of each rule no asset came from, and of each alias: at its line,
/// and as its JSON message (key, line, message).
fn manifest_warnings(shell: &Shell, report: &BuildReport) {
    type Made = fn(String, Option<usize>, String) -> Message;
    let rule: Made = |key, line, message| Message::RuleUnused { key, line, message };
    let alias: Made = |key, line, message| Message::AliasKept { key, line, message };
    let each = (report.unused_rules.iter().map(|w| (w, rule)))
        .chain(report.aliases.iter().map(|w| (w, alias)));
    for (warning, made) in each {
        shell.warn(warning);
        let key = warning.key.clone().unwrap_or_default();
        shell.message(&made(key, warning.line, warning.message.clone()));
    }
}

/// Renders the end of a build: parcels, the summary, `build-finished`.
/// With `deny_warnings`, a build whose processors warned fails.
pub fn finish(shell: &Shell, package: &Package, report: &BuildReport, deny_warnings: bool) -> Exit {
    manifest_warnings(shell, report);
    let warnings = report.warnings().count() + report.unused_rules.len() + report.aliases.len();
    let denied = deny_warnings && warnings > 0;
    let success = report.success() && !denied;
    let (ran, fresh, failed, skipped) = (
        report.ran(),
        report.fresh(),
        report.failed(),
        report.skipped(),
    );
    let parcels = render_parcels(shell, report);
    shell.message(&Message::BuildFinished(BuildFinished {
        package: Some(package.name.clone()),
        success,
        ran,
        fresh,
        fetched: report.fetched(),
        remote: report.remote.clone(),
        failed,
        skipped,
        verified: report.verified(),
        unreproduced: report.unreproduced().len(),
        parcels,
        platform: report.platform.clone(),
        error: None,
    }));
    let secs = report.elapsed.as_secs_f64();
    let total = report.steps.len();
    if success {
        let on = match &report.platform {
            Some(p) => format!(" for platform `{p}`"),
            None => String::new(),
        };
        let mut remote = String::new();
        if let Some(r) = &report.remote {
            let human = super::clean::human_bytes;
            if report.fetched() > 0 {
                let down = human(r.bytes_down);
                let fetched = report.fetched();
                remote.push_str(&format!(", {fetched} fetched from `{}` ({down})", r.url));
            }
            if r.uploaded > 0 {
                let up = human(r.bytes_up);
                remote.push_str(&format!(", {} uploaded to `{}` ({up})", r.uploaded, r.url));
            }
        }
        shell.status(
            "Finished",
            format!(
                "{}{on} in {secs:.2}s ({fresh} fresh{remote})",
                plural(total, "asset")
            ),
            Style::Good,
        );
        return Exit::Success;
    }
    if let Some(summary) = report.failure_summary() {
        shell.error(summary);
    } else if denied {
        shell.error(format!(
            "{} denied by `--deny-warnings` (or CARGO_ASSETS_DENY_WARNINGS, or `deny-warnings = true` under [package.metadata.assets])",
            plural(warnings, "warning")
        ));
    }
    if let Some(hint) = report.ignore_hint() {
        shell.note(hint);
    }
    Exit::BuildFailed
}

/// Status lines for parcels; the map of parcel name → path for JSON.
pub(crate) fn render_parcels(shell: &Shell, report: &BuildReport) -> BTreeMap<String, PathBuf> {
    let mut paths = BTreeMap::new();
    for p in &report.parcels {
        match &p.outcome {
            ParcelOutcome::Written { resources, changed } => {
                shell.message(&Message::ParcelWritten {
                    parcel: p.name.clone(),
                    path: p.path.clone(),
                    patch: p.patch.clone(),
                    changed: changed.clone(),
                });
                match &p.patch {
                    Some(patch) => shell.status(
                        "Patched",
                        format!(
                            "{} ({} of {}) -> {}",
                            p.name,
                            plural(changed.len(), "change"),
                            plural(*resources, "resource"),
                            patch.display()
                        ),
                        Style::Good,
                    ),
                    None => shell.status(
                        "Packed",
                        format!(
                            "{} ({}) -> {}",
                            p.name,
                            plural(*resources, "resource"),
                            p.path.display()
                        ),
                        Style::Good,
                    ),
                }
                paths.insert(p.name.clone(), p.path.clone());
            }
            ParcelOutcome::Unchanged { .. } => {
                paths.insert(p.name.clone(), p.path.clone());
            }
            ParcelOutcome::Blocked { failed } => {
                let kept = if p.path.exists() {
                    "the previous one is kept"
                } else {
                    "there is no previous one"
                };
                shell.warn(format!(
                    "parcel `{}` not written: it holds {} that failed ({}); {kept}",
                    p.name,
                    plural(failed.len(), "asset"),
                    failed.join(", ")
                ))
            }
            ParcelOutcome::Failed { error } => {
                shell.error(format!("could not write parcel `{}`: {error}", p.name));
            }
        }
        stand_ins(shell, p);
        if let Some(note) = p.repair_note() {
            shell.warn(note);
        }
    }
    paths
}

/// Says which failed assets a parcel written anyway holds in their last
/// good form, and which it is without.
fn stand_ins(shell: &Shell, p: &ParcelReport) {
    if p.stand_ins.is_empty() {
        return;
    }
    let (mut last_good, mut left_out) = (Vec::new(), Vec::new());
    for s in &p.stand_ins {
        match s {
            StandIn::LastGood { asset } => last_good.push(asset.clone()),
            StandIn::LeftOut { asset } => left_out.push(asset.clone()),
        }
    }
    let list = |names: &[String]| {
        let shown: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
        let more = names.len().saturating_sub(5);
        match more {
            0 => shown.join(", "),
            n => format!("{} and {n} more", shown.join(", ")),
        }
    };
    if !last_good.is_empty() {
        shell.warn(format!(
            "parcel `{}` holds the last good build of {} that failed: {}",
            p.name,
            plural(last_good.len(), "asset"),
            list(&last_good)
        ));
    }
    if !left_out.is_empty() {
        shell.warn(format!(
            "parcel `{}` is without {} that failed and never built: {}",
            p.name,
            plural(left_out.len(), "asset"),
            list(&left_out)
        ));
    }
    shell.message(&Message::ParcelStandIns {
        parcel: p.name.clone(),
        last_good,
        left_out,
    });
}
