//! Finding the package and its target directory the way Cargo does.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::cli::PackageArgs;

/// The package to work on.
#[derive(Debug)]
pub struct Package {
    /// Its `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// `<target-dir>/assets`.
    pub cache_dir: PathBuf,
}

impl Package {
    /// Resolves `--manifest-path` (or the nearest `Cargo.toml` above the
    /// current directory) and the target directory: `--target-dir`, else
    /// `CARGO_TARGET_DIR`, else what `cargo metadata` says (which honours
    /// `.cargo/config.toml` and workspaces).
    pub fn locate(args: &PackageArgs) -> anyhow::Result<Package> {
        let cwd = std::env::current_dir().context("could not read the current directory")?;
        let manifest_path = match &args.manifest_path {
            Some(p) => {
                let p = cwd.join(p);
                if !p.is_file() {
                    bail!("manifest path `{}` does not exist", p.display());
                }
                p
            }
            None => find_manifest(&cwd)?,
        };
        let target_dir = match (&args.target_dir, std::env::var_os("CARGO_TARGET_DIR")) {
            (Some(dir), _) => cwd.join(dir),
            (None, Some(dir)) => cwd.join(dir),
            (None, None) => target_dir_from_cargo(&manifest_path)?,
        };
        Ok(Package {
            manifest_path,
            cache_dir: target_dir.join("assets"),
        })
    }
}

fn find_manifest(start: &Path) -> anyhow::Result<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|p| p.is_file())
        .with_context(|| {
            format!(
                "could not find `Cargo.toml` in `{}` or any parent directory",
                start.display()
            )
        })
}

fn target_dir_from_cargo(manifest_path: &Path) -> anyhow::Result<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        target_directory: PathBuf,
    }
    let metadata: Metadata = cargo_metadata(manifest_path, &["--no-deps", "--offline"])?;
    Ok(metadata.target_directory)
}

/// Runs `cargo metadata --format-version 1 <extra> --manifest-path <path>`
/// and parses what it prints into `T`.
pub fn cargo_metadata<T: serde::de::DeserializeOwned>(
    manifest_path: &Path,
    extra: &[&str],
) -> anyhow::Result<T> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args(["metadata", "--format-version", "1"])
        .args(extra)
        .arg("--manifest-path")
        .arg(manifest_path)
        .output()
        .context("could not run `cargo metadata`")?;
    if !output.status.success() {
        bail!(
            "`cargo metadata` failed for `{}`:\n{}",
            manifest_path.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    serde_json::from_slice(&output.stdout).context("could not parse `cargo metadata` output")
}
