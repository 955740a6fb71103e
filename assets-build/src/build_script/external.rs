//! The thin client a build script is without the pipeline compiled in: it
//! finds the installed `cargo-assets`, checks that it is this crate's
//! version, and runs `cargo-assets assets as-script`, which builds in its
//! own process with the script's environment and speaks Cargo's protocol on
//! the stdout it inherits (see the [module docs](super)).
//!
//! The standard library alone, so that the script compiles in seconds.

#![allow(clippy::print_stdout)]

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{BIN_VAR, BuildScriptError, Builder, CACHE_DIR_VAR, Cargo};

/// This crate's version, which the binary's must equal: the two are one
/// release of one workspace.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs the installed binary. See the [module docs](super).
pub(super) fn build(builder: Builder) -> Result<(), BuildScriptError> {
    if std::env::var_os("OUT_DIR").is_none() {
        return Err(BuildScriptError::NotInBuildScript("OUT_DIR"));
    }
    let cargo = Cargo::from_env();
    println!("cargo:rerun-if-env-changed={BIN_VAR}");
    let bin = match find(std::env::var_os(BIN_VAR), std::env::var_os("PATH")) {
        Ok(bin) => bin,
        Err(e) => return cargo.fail(&[format!("cargo-assets: {e}")]),
    };
    // A binary installed afresh (another build of the same version) builds
    // the assets again.
    println!("cargo:rerun-if-changed={}", bin.display());
    let mut run = Command::new(&bin);
    run.args(["assets", "as-script"]);
    if let Some(dir) = builder.cache_dir {
        run.env(CACHE_DIR_VAR, dir);
    }
    match run.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => cargo.fail(&[format!(
            "cargo-assets: `{} assets as-script` failed ({status}); its messages are above (`cargo build -vv`)",
            bin.display()
        )]),
        Err(e) => cargo.fail(&[format!(
            "cargo-assets: could not run `{}`: {e}",
            bin.display()
        )]),
    }
}

/// Why no usable binary was found.
#[derive(Debug)]
enum NotFound {
    /// Neither `CARGO_ASSETS_BIN` nor `PATH` has one.
    Missing,
    /// `CARGO_ASSETS_BIN` names no file.
    BadVar(PathBuf),
    /// The binary did not answer `--version` as cargo-assets does.
    NoVersion(PathBuf, String),
    /// The binary is another release.
    OtherVersion(PathBuf, String),
}

/// The binary `CARGO_ASSETS_BIN` names, else the first on `path`, with its
/// version checked.
fn find(var: Option<OsString>, path: Option<OsString>) -> Result<PathBuf, NotFound> {
    let bin = match var.filter(|v| !v.is_empty()) {
        Some(bin) => {
            let bin = PathBuf::from(bin);
            if !bin.is_file() {
                return Err(NotFound::BadVar(bin));
            }
            bin
        }
        None => {
            let name = format!("cargo-assets{}", std::env::consts::EXE_SUFFIX);
            let dirs = path.map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
            (dirs.unwrap_or_default().into_iter())
                .map(|dir| dir.join(&name))
                .find(|bin| bin.is_file())
                .ok_or(NotFound::Missing)?
        }
    };
    let answer = Command::new(&bin).arg("--version").output();
    let answer = match answer {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => return Err(NotFound::NoVersion(bin, out.status.to_string())),
        Err(e) => return Err(NotFound::NoVersion(bin, e.to_string())),
    };
    // `cargo-assets 0.1.0`, as clap prints it.
    match answer.trim().strip_prefix("cargo-assets ") {
        Some(version) if version == VERSION => Ok(bin),
        Some(version) => Err(NotFound::OtherVersion(bin, version.to_owned())),
        None => Err(NotFound::NoVersion(
            bin,
            format!("it said `{}`", answer.trim()),
        )),
    }
}

/// How to install this version: from the clone this crate was built from
/// when it is one (a path dependency), else from crates.io.
fn install_hint() -> String {
    let clone = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cargo-assets");
    match clone.join("Cargo.toml").is_file() {
        true => format!(
            "`cargo install --path {} --locked`",
            clone.canonicalize().unwrap_or(clone).display()
        ),
        false => format!("`cargo install cargo-assets --version {VERSION} --locked`"),
    }
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFound::Missing => write!(
                f,
                "no `cargo-assets` on PATH: this build script runs the installed pipeline"
            )?,
            NotFound::BadVar(bin) => {
                write!(f, "{BIN_VAR} names `{}`, which is no file", bin.display())?
            }
            NotFound::NoVersion(bin, why) => write!(
                f,
                "`{} --version` did not answer as cargo-assets {VERSION} would ({why})",
                bin.display()
            )?,
            NotFound::OtherVersion(bin, version) => write!(
                f,
                "`{}` is cargo-assets {version}, and this build script's assets-build is {VERSION}: they must be one release",
                bin.display()
            )?,
        }
        write!(
            f,
            "; install cargo-assets {VERSION} once with {} (or point {BIN_VAR} at it), or compile the pipeline into the build script with `features = [\"pipeline\"]` on assets-build",
            install_hint()
        )
    }
}
