//! The processor runner: how `cargo assets` uses a package's custom processors.
//!
//! A processor is Rust code in some crate, registered by a function
//! `pub fn register(registry: &mut assets_build::Registry)`. The build script
//! calls it directly (`Builder::new().register(my_processors::register)`); the
//! manifest names the same crates for the CLI:
//!
//! ```toml
//! [package.metadata.assets]
//! processors = ["my-processors"]     # build-dependencies with a `register` function
//! ```
//!
//! The CLI cannot link code it was not compiled with, so for such a package it
//! writes a small crate, the runner, under `<target>/assets/runner/<package>/`:
//! this CLI's own source as a library plus the processor crates, and a `main`
//! that is this CLI's `main` with their `register` functions. Cargo builds
//! it (and rebuilds it only when something changed), and the CLI hands its
//! arguments over to it. One definition of each processor; the same behaviour,
//! output and exit codes as the plain CLI.
//!
//! The runner finds this CLI's source where it was compiled from
//! (`CARGO_ASSETS_SOURCE` overrides that), and starts from the package's
//! `Cargo.lock` so it resolves the same versions, offline.
//!
//! Runners are built in one target directory per user, shared by every
//! package ([`runner_target`]: `~/.cache/cargo-assets/runner-target` on
//! Linux): the CLI's own code and its dependencies, the pipeline with its
//! image decoders and shader compiler, are minutes of compiling, done once
//! per machine, toolchain and resolution of versions rather than once per
//! package; a second package compiles its processor crates and links. Each
//! runner's name holds a hash of its package's manifest path, so two
//! packages of one name never overwrite each other's runner there. Cargo
//! locks the directory while it builds: two `cargo assets` building runners
//! at once take turns.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::shell::{Shell, Style};
use assets_build::{unstable::Manifest, unstable::package_key};

use crate::workspace::{ONLY_PACKAGE_VAR, Package, cargo_metadata};

/// Set in the runner's environment, so it does not delegate again.
pub const RUNNER_VAR: &str = "CARGO_ASSETS_RUNNER";
/// Overrides where the runner finds the `cargo-assets` source.
pub const SOURCE_VAR: &str = "CARGO_ASSETS_SOURCE";
/// Overrides the runner's target directory (tests share one).
pub const TARGET_VAR: &str = "CARGO_ASSETS_RUNNER_TARGET_DIR";

/// Whether this process is a runner.
pub fn is_runner() -> bool {
    std::env::var_os(RUNNER_VAR).is_some()
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
    workspace_root: PathBuf,
}

#[derive(Deserialize)]
struct MetaPackage {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<MetaTarget>,
}

#[derive(Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
}

/// Hands the command over to the runner when `package`'s manifest names
/// processor crates and this process is not already the runner; `None` when
/// this process should do the work itself.
pub fn delegate_if_needed(package: &Package, shell: &Shell) -> anyhow::Result<Option<u8>> {
    let Some(manifest) = needs_runner(package) else {
        return Ok(None);
    };
    delegate(
        &package.manifest_path,
        package_key(&manifest),
        &manifest.processor_crates,
        &package.cache_dir,
        shell,
    )
    .map(Some)
}

/// `package`'s manifest, if its commands must run in the runner: it names
/// processor crates and this process is not the runner. A manifest that
/// does not load is reported by the command itself.
pub fn needs_runner(package: &Package) -> Option<Manifest> {
    if is_runner() {
        return None;
    }
    Manifest::load(&package.manifest_path)
        .ok()
        .filter(|m| !m.processor_crates.is_empty())
}

/// Builds the runner for `package` with `crates`' processors and runs it
/// with this process's arguments; returns its exit code.
pub fn delegate(
    manifest_path: &Path,
    package: &str,
    crates: &[String],
    cache_dir: &Path,
    shell: &Shell,
) -> anyhow::Result<u8> {
    let metadata: Metadata = cargo_metadata(manifest_path, &[])?;
    let mut dependencies = String::new();
    let mut calls = Vec::new();
    for name in crates {
        let Some(found) = metadata.packages.iter().find(|p| &p.name == name) else {
            bail!(
                "processor crate `{name}` (listed in [package.metadata.assets] processors) is not a dependency of `{package}`; \
                 add it under [build-dependencies] in {}",
                manifest_path.display()
            );
        };
        let Some(lib) = found
            .targets
            .iter()
            .find(|t| t.kind.iter().any(|k| k == "lib"))
        else {
            bail!("processor crate `{name}` has no library target to link");
        };
        let dir = found.manifest_path.parent().unwrap_or(Path::new("."));
        dependencies.push_str(&format!(
            "{name:?} = {{ path = {:?} }}\n",
            dir.display().to_string()
        ));
        calls.push(format!("::{}::register", lib.name.replace('-', "_")));
    }
    let source = std::env::var_os(SOURCE_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    if !source.join("Cargo.toml").is_file() {
        bail!(
            "cannot build the processor runner: the cargo-assets source is not at `{}`; \
             set {SOURCE_VAR} to a checkout of cargo-assets {}",
            source.display(),
            env!("CARGO_PKG_VERSION")
        );
    }
    let dir = assets_build::unstable::CacheLayout::new(cache_dir).runner(package);
    let runner = runner_name(package, manifest_path);
    // The runner's whole profile optimized (processors run at a useful
    // speed) without debug info (most of the compile and link time). Set on
    // `[profile.dev]` rather than `package."*"`, which would take precedence
    // over `build-override`: build scripts and proc macros stay unoptimized,
    // their speed being nothing and their optimized compile a third of the
    // runner's CPU. And Cargo's own configuration overrides it the usual
    // way: `CARGO_PROFILE_DEV_OPT_LEVEL=0` builds a runner in 650 s of CPU
    // instead of 1,570 (2,315 before build-time code was left unoptimized;
    // BENCHMARKS.md), for tests and CI, whose processors see a few files.
    let cargo_toml = format!(
        "# Written by cargo-assets: this package's processors linked into the CLI.\n\
         [package]\nname = \"{runner}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncargo-assets = {{ path = {:?} }}\n{dependencies}\n\
         [workspace]\n\n[profile.dev]\nopt-level = 2\ndebug = false\n",
        source.display().to_string()
    );
    let main_rs = format!(
        "#[global_allocator]\nstatic ALLOCATOR: cargo_assets::Allocator = cargo_assets::Allocator;\n\n\
         fn main() -> std::process::ExitCode {{\n    cargo_assets::main_with(&[{}])\n}}\n",
        calls.join(", ")
    );
    write_if_changed(&dir.join("Cargo.toml"), &cargo_toml)?;
    write_if_changed(&dir.join("src/main.rs"), &main_rs)?;
    let lock = dir.join("Cargo.lock");
    let package_lock = metadata.workspace_root.join("Cargo.lock");
    if !lock.exists() && package_lock.is_file() {
        std::fs::copy(&package_lock, &lock)
            .with_context(|| format!("could not copy `{}`", package_lock.display()))?;
    }
    let target = runner_target(
        std::env::var_os(TARGET_VAR).map(PathBuf::from),
        user_cache_dir(),
        cache_dir,
    );
    shell.status(
        "Preparing",
        format!("processors of `{package}` ({})", crates.join(", ")),
        Style::Note,
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let build = Command::new(&cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .context("could not run cargo to build the processor runner")?;
    if !build.status.success() {
        bail!(
            "could not build the processor runner for `{package}`:\n{}",
            String::from_utf8_lossy(&build.stderr).trim_end()
        );
    }
    let exe = target
        .join("debug")
        .join(format!("{runner}{}", std::env::consts::EXE_SUFFIX));
    let status = Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env(RUNNER_VAR, "1")
        .env(ONLY_PACKAGE_VAR, manifest_path)
        .status()
        .with_context(|| format!("could not run `{}`", exe.display()))?;
    Ok(status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(101))
}

/// The runner crate's name for `package` (whose manifest is at
/// `manifest_path`): unique to the package's place on disk, since runners
/// of every package share a target directory.
fn runner_name(package: &str, manifest_path: &Path) -> String {
    let place = blake3::hash(manifest_path.as_os_str().as_encoded_bytes()).to_hex();
    format!("cargo-assets-runner-{package}-{}", &place[..12])
}

/// Where runners are built: `overridden` ([`TARGET_VAR`]) if given; else
/// one directory under the user's cache folder, shared by every package
/// (see the [module docs](self)); else, with no cache folder known, the
/// package's own cache (`cache_dir`).
fn runner_target(
    overridden: Option<PathBuf>,
    user_cache: Option<PathBuf>,
    cache_dir: &Path,
) -> PathBuf {
    overridden
        .or_else(|| user_cache.map(|c| c.join("cargo-assets").join("runner-target")))
        .unwrap_or_else(|| assets_build::unstable::CacheLayout::new(cache_dir).runner_target())
}

/// The user's cache folder, as each platform names it: `$XDG_CACHE_HOME`
/// or `~/.cache` (Linux and other Unix), `~/Library/Caches` (macOS),
/// `%LOCALAPPDATA%` (Windows). Only absolute paths count.
fn user_cache_dir() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library/Caches"))
    } else {
        var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache")))
    }
}

fn write_if_changed(path: &Path, contents: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|c| c == contents) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("could not create `{}`", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("could not write `{}`", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_share_the_users_cache_unless_told_otherwise() {
        let cache = Path::new("/game/target/assets");
        let user = Some(PathBuf::from("/home/me/.cache"));
        assert_eq!(
            runner_target(None, user.clone(), cache),
            Path::new("/home/me/.cache/cargo-assets/runner-target")
        );
        assert_eq!(
            runner_target(Some("/ci/target".into()), user, cache),
            Path::new("/ci/target")
        );
        assert_eq!(
            runner_target(None, None, cache),
            Path::new("/game/target/assets/runner/target")
        );
    }

    #[test]
    fn two_packages_of_one_name_have_two_runners() {
        let a = runner_name("game", Path::new("/work/a/Cargo.toml"));
        let b = runner_name("game", Path::new("/work/b/Cargo.toml"));
        assert_ne!(a, b);
        assert!(a.starts_with("cargo-assets-runner-game-"), "{a}");
        assert_eq!(a, runner_name("game", Path::new("/work/a/Cargo.toml")));
    }
}
