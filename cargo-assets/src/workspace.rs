//! Finding the package and its target directory the way Cargo does.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::cli::PackageArgs;

/// The package to work on.
#[derive(Debug, Clone)]
pub struct Package {
    /// Its name (`[package] name`; empty when its manifest does not parse,
    /// which the command then reports).
    pub name: String,
    /// Its `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// `<target-dir>/assets`.
    pub cache_dir: PathBuf,
}

/// Set by the CLI for the processor runner it hands one package of a
/// workspace to: that package's manifest.
pub const ONLY_PACKAGE_VAR: &str = "CARGO_ASSETS_ONLY_PACKAGE";

impl Package {
    /// The directory of its `Cargo.toml`.
    pub fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new("."))
    }

    /// The one package a command works on: as [`select`], but more than one
    /// is an error asking for `-p`.
    pub fn locate(args: &PackageArgs) -> anyhow::Result<Package> {
        let mut selected = select(args)?;
        if selected.len() > 1 {
            let names: Vec<_> = selected.iter().map(|p| format!("`{}`", p.name)).collect();
            bail!(
                "this command works on one package, and {} were selected: {}\n\
                 help: choose one with `-p <name>`",
                selected.len(),
                names.join(", ")
            );
        }
        Ok(selected.remove(0))
    }
}

/// The packages a command works on, found the way Cargo finds them:
///
/// - `--manifest-path`, else the nearest `Cargo.toml` above the current
///   directory;
/// - a package's manifest, without `-p`/`--workspace`: that package;
/// - `-p <name>` (repeatable): those members of its workspace;
///   `--workspace`, or a virtual manifest (a workspace without a package of
///   its own): every member with `[package.metadata.assets]`.
///
/// The target directory: `--target-dir`, else `CARGO_TARGET_DIR`, else what
/// `cargo metadata` says (which honours `.cargo/config.toml` and workspaces).
pub fn select(args: &PackageArgs) -> anyhow::Result<Vec<Package>> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let manifest_path = match (std::env::var_os(ONLY_PACKAGE_VAR), &args.manifest_path) {
        (Some(only), _) => PathBuf::from(only),
        (None, Some(p)) => {
            let p = cwd.join(p);
            if !p.is_file() {
                bail!("manifest path `{}` does not exist", p.display());
            }
            p
        }
        (None, None) => find_manifest(&cwd)?,
    };
    let explicit_target = args
        .target_dir
        .clone()
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .map(|d| cwd.join(d));
    let own_name = package_name(&manifest_path);
    let whole_workspace = args.workspace || own_name.is_none();
    let pinned = std::env::var_os(ONLY_PACKAGE_VAR).is_some();
    if pinned || (args.packages.is_empty() && !whole_workspace) {
        let target_dir = match explicit_target {
            Some(dir) => dir,
            None => workspace_metadata(&manifest_path)?.target_directory,
        };
        return Ok(vec![Package {
            name: own_name.unwrap_or_default(),
            manifest_path,
            cache_dir: target_dir.join("assets"),
        }]);
    }
    let metadata = workspace_metadata(&manifest_path)?;
    let cache_dir = explicit_target
        .unwrap_or_else(|| metadata.target_directory.clone())
        .join("assets");
    let with_assets = |p: &&MetaPackage| p.metadata.get("assets").is_some();
    let chosen: Vec<&MetaPackage> = if args.packages.is_empty() {
        let all: Vec<_> = metadata.packages.iter().filter(with_assets).collect();
        if all.is_empty() {
            bail!(
                "no member of the workspace at `{}` has [package.metadata.assets]",
                manifest_path.display()
            );
        }
        all
    } else {
        let mut chosen = Vec::new();
        for name in &args.packages {
            let Some(found) = metadata.packages.iter().find(|p| &p.name == name) else {
                let members: Vec<_> = metadata
                    .packages
                    .iter()
                    .filter(with_assets)
                    .map(|p| format!("`{}`", p.name))
                    .collect();
                bail!(
                    "package `{name}` is not a member of the workspace at `{}`\n\
                     help: the members with assets are: {}",
                    manifest_path.display(),
                    if members.is_empty() {
                        "none".to_owned()
                    } else {
                        members.join(", ")
                    }
                );
            };
            chosen.push(found);
        }
        chosen
    };
    Ok(chosen
        .into_iter()
        .map(|p| Package {
            name: p.name.clone(),
            manifest_path: p.manifest_path.clone(),
            cache_dir: cache_dir.clone(),
        })
        .collect())
}

/// The distinct cache directories of `packages`, in order.
pub fn cache_dirs(packages: &[Package]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for p in packages {
        if !dirs.contains(&p.cache_dir) {
            dirs.push(p.cache_dir.clone());
        }
    }
    dirs
}

/// `[package] name` of a manifest; `None` for a virtual manifest, and for
/// one that does not parse (the command reports that with its own
/// diagnostic, naming the line).
fn package_name(manifest_path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest_path).ok()?;
    let Ok(table) = text.parse::<toml::Table>() else {
        return Some(String::new());
    };
    let package = table.get("package")?;
    Some(
        package
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_owned(),
    )
}

#[derive(serde::Deserialize)]
struct WorkspaceMetadata {
    target_directory: PathBuf,
    packages: Vec<MetaPackage>,
}

#[derive(serde::Deserialize)]
struct MetaPackage {
    name: String,
    manifest_path: PathBuf,
    #[serde(default)]
    metadata: serde_json::Value,
}

fn workspace_metadata(manifest_path: &Path) -> anyhow::Result<WorkspaceMetadata> {
    cargo_metadata(manifest_path, &["--no-deps", "--offline"])
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
