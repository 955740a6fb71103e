//! The `build.rs` front-end: `fn main() { assets_build::build().unwrap() }`.
//!
//! This is the one module of the library that prints, because a build
//! script's stdout *is* its protocol with Cargo.
//!
//! **Where the pipeline runs.** Compiling the pipeline (image decoders, a
//! shader compiler, a glTF parser, zstd's C library) into every game's build
//! script, once per profile, made a newcomer's first `cargo build` minutes
//! longer. So by default this crate is a thin client (`external.rs`, the
//! standard library alone): it runs the `cargo-assets` installed on the
//! machine (`cargo install cargo-assets`, once, shared by every project) as
//! `cargo-assets assets as-script`, which does in its own process what
//! follows, with the environment Cargo gave the script. The binary is
//! `CARGO_ASSETS_BIN` if set, else the first `cargo-assets` on `PATH`; its
//! version must be this crate's, and when it is missing or another version
//! the build fails saying which and how to install the right one. With the
//! `pipeline` feature (or `in-process`), which a processor crate turns on,
//! the pipeline is compiled in and runs in the script itself
//! (`in_process.rs`): no binary is needed, and custom processors can be
//! registered with [`Builder`]. Either way, what it does:
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
//!   written anyway ([`OnFailure::StandIn`](crate::unstable::OnFailure::StandIn): an asset's last good build
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
//! `unstable::remote`) reach build scripts too when set in `[env]` of
//! `.cargo/config.toml`; the script uses the remote when the pipeline has
//! its `remote` feature (the installed `cargo-assets` has), and says with a
//! `cargo:warning` that it cannot otherwise. A remote that fails is a
//! warning, never an error.
//!
//! Sharing is safe: builds on one cache take turns on its lock (so Cargo may
//! run several build scripts at once), and records are kept per package.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(not(feature = "in-process"))]
mod external;
#[cfg(feature = "in-process")]
mod in_process;

use std::path::PathBuf;

#[cfg(feature = "in-process")]
use crate::processor::{Processor, Registry};

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
/// `DEFAULT_MEMORY_BUDGET` in `unstable`), as `cargo assets --memory-budget`.
pub const MEMORY_BUDGET_VAR: &str = "CARGO_ASSETS_MEMORY_BUDGET";
/// How long a step may run, in seconds, unless its rule's `timeout` says
/// (see `DEFAULT_STEP_TIMEOUT` in `unstable`), as `cargo assets --step-timeout`.
pub const STEP_TIMEOUT_VAR: &str = "CARGO_ASSETS_STEP_TIMEOUT";
/// The `cargo-assets` binary a build script without the pipeline runs
/// (see the [module docs](self)); by default the first on `PATH`.
pub const BIN_VAR: &str = "CARGO_ASSETS_BIN";
/// Whether `include_parcel!` embeds the parcel (`1`) or maps its file
/// (`0`): the script passes it to rustc, `0` for a debug build on a target
/// with files (not `wasm32`), unless it is set to `1` in the environment.
pub const EMBED_VAR: &str = "CARGO_ASSETS_EMBED";

/// Why the build script's asset build failed, when it cannot tell Cargo
/// itself (see the [module docs](self)). (Written out rather than derived:
/// without the pipeline this crate compiles no proc macro.)
#[non_exhaustive]
pub enum BuildScriptError {
    /// A variable Cargo sets for build scripts is missing: not run by Cargo.
    NotInBuildScript(&'static str),
    /// The build failed, in a package whose `rust-version` predates
    /// `cargo::error`; the details were printed to stderr.
    Failed(String),
}

impl std::fmt::Display for BuildScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildScriptError::NotInBuildScript(var) => write!(
                f,
                "`{var}` is not set: assets_build::build() runs inside a build script (build.rs)"
            ),
            BuildScriptError::Failed(first) => write!(f, "{first} (details above)"),
        }
    }
}

impl std::error::Error for BuildScriptError {}

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
/// processors (with the `pipeline` feature), or another cache directory.
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
    #[cfg(feature = "in-process")]
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
            #[cfg(feature = "in-process")]
            registry: Registry::with_builtins(),
            cache_dir: None,
        }
    }

    /// Adds a processor (keyed by the code of the crate calling this: see
    /// [`Registry::register`]).
    #[cfg(feature = "in-process")]
    #[track_caller]
    pub fn processor(mut self, processor: impl Processor) -> Builder {
        self.registry.register(processor);
        self
    }

    /// Adds processors through a crate's registration function, the same
    /// function `[package.metadata.assets] processors` names for the CLI.
    #[cfg(feature = "in-process")]
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
        #[cfg(feature = "in-process")]
        return in_process::build(self);
        #[cfg(not(feature = "in-process"))]
        return external::build(self);
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

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}
