//! [`CargoCrate`]: a package built by the real `cargo build`, the way a game
//! uses cargo-assets, with the `cargo-assets` binary run on it too.
//!
//! Every such crate depends on this workspace's crates by path and builds
//! in one shared target directory (`target/e2e`, see [`e2e_target_dir`]),
//! so dependencies compile once for all tests; each test names its own
//! package, whose records and parcels are removed when it starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::Run;

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace exists")
}

/// The target directory every [`CargoCrate`] builds in.
pub fn e2e_target_dir() -> PathBuf {
    workspace().join("target/e2e")
}

/// Removes from `cmd`'s environment what Cargo set for the running test
/// alone (`CARGO_PKG_*`, `CARGO_MANIFEST_*`, `CARGO_CRATE_NAME`, `OUT_DIR`,
/// ...), so a `cargo` started below sees the environment of the `cargo
/// test` that started the test. Build scripts may watch those names (ring's
/// does, `rerun-if-env-changed=CARGO_PKG_NAME`): inherited, they made every
/// nested build run ring's script again and recompile what depends on it
/// (rustls, the HTTP client, OpenDAL, cargo-assets), in the processor
/// runner and once more in CI's own `cargo assets build` after the tests.
pub(crate) fn without_test_package_env(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let Some(name) = key.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || name.starts_with("CARGO_BIN_EXE_")
            || matches!(
                name,
                "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
                    | "OUT_DIR"
            )
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

/// `cargo` (the one running the tests), without the test's own variables.
pub(crate) fn cargo_command() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    without_test_package_env(&mut cmd);
    cmd
}

/// A package in a temporary directory, built with `cargo`.
pub struct CargoCrate {
    dir: tempfile::TempDir,
    name: String,
    bin: PathBuf,
}

/// What `cargo build -vv` did.
#[derive(Debug)]
pub struct CargoBuild {
    /// Whether it succeeded.
    pub ok: bool,
    /// Whether the build script ran.
    pub ran_script: bool,
    /// Its stderr (with the script's own, at `-vv`).
    pub stderr: String,
}

impl CargoBuild {
    /// What the `cargo build -vv` that gave `out` did.
    pub fn of(out: &Output) -> CargoBuild {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let ran_script = stderr
            .lines()
            .any(|l| l.contains("Running") && l.contains("build-script-build"));
        CargoBuild {
            ok: out.status.success(),
            ran_script,
            stderr,
        }
    }
}

/// The assets a build script says it processed in `stderr` (`cargo-assets:
/// N fresh, M processed: a, b`), sorted; `None` if it did not say. It names
/// the first ten (then says `and N more`): a test that needs the names
/// processes fewer.
pub fn script_processed(stderr: &str) -> Option<Vec<String>> {
    let line = stderr
        .lines()
        .find_map(|l| l.split_once("cargo-assets: ").map(|(_, r)| r))?;
    let list = line.split_once("processed: ")?.1.trim();
    assert!(!list.ends_with(" more"), "more than ten processed: {list}");
    let mut assets: Vec<String> = list
        .split(", ")
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect();
    assets.sort();
    Some(assets)
}

impl CargoCrate {
    /// An empty package directory for package `name` (each test its own, as
    /// they share a target dir), holding the workspace's `Cargo.lock` (same
    /// versions, nothing to download); `bin` is the `cargo-assets` binary
    /// (pass `env!("CARGO_BIN_EXE_cargo-assets")`).
    pub fn new(name: &str, bin: &str) -> CargoCrate {
        let c = CargoCrate {
            dir: tempfile::Builder::new()
                .prefix(name)
                .tempdir()
                .expect("a temp dir"),
            name: name.to_owned(),
            bin: PathBuf::from(bin),
        };
        std::fs::copy(workspace().join("Cargo.lock"), c.path().join("Cargo.lock"))
            .expect("copy Cargo.lock");
        // What `cargo assets clean -p <name>` removes: the package's
        // records and parcels (blobs are shared).
        let cache = e2e_target_dir().join("assets");
        if cache.exists() {
            assets_build::unstable::clean_package(&cache, name, &|_| {})
                .expect("clean the package's cache");
        }
        c
    }

    /// The package directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The package name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `contents` at `path` (relative to the package), creating folders.
    pub fn write(&self, path: &str, contents: impl AsRef<[u8]>) {
        let path = self.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))
            .expect("create folders");
        std::fs::write(path, contents).expect("write a file");
    }

    /// The `[dependencies]` and `[build-dependencies]` lines that reach this
    /// workspace's runtime and build crates by path.
    pub fn workspace_dependencies() -> String {
        let ws = workspace();
        format!(
            "[dependencies]\nassets-runtime = {{ path = {runtime:?} }}\n\n[build-dependencies]\nassets-build = {{ path = {build:?} }}\n",
            runtime = ws.join("assets-runtime").display().to_string(),
            build = ws.join("assets-build").display().to_string(),
        )
    }

    /// Runs `cargo <args>` in the package, in the shared target directory,
    /// with none of cargo-assets' variables inherited.
    ///
    /// Build dependencies are compiled without debug info, as Cargo does by
    /// default on the host's own builds but not with `--target`: said
    /// explicitly, a host build and a cross build share one compilation of
    /// `assets-build` and its dependencies (else the web test compiles them
    /// all a second time).
    ///
    /// The `cargo-assets` binary is on `PATH` first, as `cargo install`
    /// puts it: a build script without the pipeline compiled in runs it.
    pub fn cargo(&self, args: &[&str]) -> Output {
        self.cargo_command(args).output().expect("run cargo")
    }

    /// `PATH` without any folder holding a `cargo-assets`: a machine where
    /// it is not installed. (Where that drops Cargo's own folder too, as
    /// `~/.cargo/bin` after a `cargo install`, [`Self::without_cargo_assets`]
    /// names `rustc` for Cargo.)
    pub fn path_without_cargo_assets() -> std::ffi::OsString {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::env::split_paths(&path).filter(|dir| {
            !dir.join(format!("cargo-assets{}", std::env::consts::EXE_SUFFIX))
                .exists()
        });
        std::env::join_paths(dirs.collect::<Vec<_>>()).expect("a PATH")
    }

    /// `cmd` on a machine without `cargo-assets` but with `extra` folders
    /// first on `PATH`: the `rustc` beside the running Cargo named
    /// explicitly, in case its folder left `PATH`.
    pub fn without_cargo_assets<'c>(cmd: &'c mut Command, extra: &[&Path]) -> &'c mut Command {
        let stripped = Self::path_without_cargo_assets();
        let dirs = (extra.iter().map(|d| d.to_path_buf())).chain(std::env::split_paths(&stripped));
        cmd.env("PATH", std::env::join_paths(dirs).expect("a PATH"));
        let cargo = std::env::var_os("CARGO").map(PathBuf::from);
        let rustc = cargo.and_then(|c| {
            Some(
                c.parent()?
                    .join(format!("rustc{}", std::env::consts::EXE_SUFFIX)),
            )
        });
        if let Some(rustc) = rustc.filter(|r| r.is_file()) {
            cmd.env("RUSTC", rustc);
        }
        cmd
    }

    /// The command [`cargo`](Self::cargo) runs, to change its environment
    /// first (`PATH`, `CARGO_ASSETS_BIN`).
    pub fn cargo_command(&self, args: &[&str]) -> Command {
        let bin_dir = self.bin.parent().expect("the binary is in a folder");
        let path = Self::path_without_cargo_assets();
        let dirs = std::iter::once(bin_dir.to_owned()).chain(std::env::split_paths(&path));
        let path = std::env::join_paths(dirs).expect("a PATH");
        let mut cmd = cargo_command();
        cmd.args(args)
            .current_dir(self.path())
            .env("PATH", path)
            .env_remove("CARGO_ASSETS_BIN")
            .env("CARGO_TARGET_DIR", e2e_target_dir())
            .env("CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG", "false")
            .env_remove("CARGO_ASSETS_CACHE_DIR")
            .env_remove("CARGO_ASSETS_PARCELS")
            .env_remove("CARGO_ASSETS_RUNNER");
        cmd
    }

    /// `cargo build -vv`.
    pub fn build(&self) -> CargoBuild {
        CargoBuild::of(&self.cargo(&["build", "-vv"]))
    }

    /// Runs the built program and returns its stdout; panics if it fails.
    pub fn run_program(&self) -> String {
        let exe = e2e_target_dir().join("debug").join(&self.name);
        let out = Command::new(exe).output().expect("run the built program");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    }

    /// Runs `cargo-assets assets <args> --message-format json` (as `cargo
    /// assets` would) in the package and the shared target directory; a
    /// processor runner it needs builds in the workspace's runner target.
    pub fn assets(&self, args: &[&str]) -> Run {
        // A runner starts from the package's `Cargo.lock` when it has none
        // (see cargo-assets' runner.rs), and Cargo prunes a package's lock
        // to its graph on every build and `cargo metadata`: cargo-assets'
        // dependencies would resolve afresh, to newer versions than this
        // workspace's, and compile from nothing a second time when CI's
        // `cargo assets build` builds the example's runner (same crates,
        // the workspace's versions). Given the workspace's whole lock, both
        // runners resolve alike and share one compilation.
        let runner = assets_build::unstable::CacheLayout::new(e2e_target_dir().join("assets"))
            .runner(&self.name);
        std::fs::create_dir_all(&runner).expect("create the runner's folder");
        std::fs::copy(workspace().join("Cargo.lock"), runner.join("Cargo.lock"))
            .expect("copy Cargo.lock");
        let out = without_test_package_env(&mut Command::new(&self.bin))
            .arg("assets")
            .args(args)
            .args(["--message-format", "json"])
            .current_dir(self.path())
            .env("CARGO_TARGET_DIR", e2e_target_dir())
            .env("CARGO_ASSETS_RUNNER_TARGET_DIR", workspace().join("target"))
            // The runner unoptimized: its processors see a few small files,
            // and its optimized compile was most of this suite's time on
            // two cores (1,570 s of CPU against 650; runner.rs says how
            // Cargo's variables override the runner's profile), without
            // debug info whatever the test's own profile says. CI's own
            // `cargo assets build` sets both too, to reuse this compile.
            .env("CARGO_PROFILE_DEV_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env_remove("CARGO_ASSETS_CACHE_DIR")
            .env_remove("CARGO_ASSETS_PARCELS")
            .env_remove("CARGO_ASSETS_RUNNER")
            .output()
            .expect("run cargo-assets");
        Run::from_output(out)
    }
}
