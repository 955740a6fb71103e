//! Discovery: the assets under each root, in a deterministic order.
//!
//! Hidden files and folders (names starting with `.`) are skipped, and so
//! are those the manifest's `ignore` globs match (a matching folder with
//! everything under it, unread). Every
//! problem is collected, not just the first: a path that leaves the root
//! through a symbolic link, a name that is not UTF-8 or not a portable asset
//! path, two names that differ only by case (they would collide on Windows and
//! macOS), one name under two roots.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::asset_path::{AssetPath, AssetPathError};
use crate::manifest::{Ignore, Manifest};
use crate::parallel;

/// An asset found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// Its name.
    pub path: AssetPath,
    /// Index into [`Manifest::roots`].
    pub root: usize,
}

/// A problem with the files under an asset root.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// A root directory is missing.
    #[error("asset root `{}` does not exist; create it, or set `root` in [package.metadata.assets]", .0.display())]
    MissingRoot(PathBuf),
    /// A root is a symbolic link (or under one) that leads out of the package.
    #[error("asset root `{}` leads outside the package (to `{}`); roots must stay inside the package directory", root.display(), target.display())]
    RootOutsidePackage {
        /// The root as configured.
        root: PathBuf,
        /// Where it resolves to.
        target: PathBuf,
    },
    /// A directory or file could not be read.
    #[error("could not read `{}`: {source}", path.display())]
    Io {
        /// What failed.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file name is not valid UTF-8.
    #[error("`{}` has a name that is not valid UTF-8; rename it", .0.display())]
    NonUtf8(PathBuf),
    /// A name cannot be an asset path.
    #[error("`{}` cannot be an asset: {source}", path.display())]
    BadName {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: AssetPathError,
    },
    /// A symbolic link leads out of the root, or to a directory.
    #[error("`{}` is a symbolic link to {what}; only links to files inside the asset root are followed", path.display())]
    BadLink {
        /// The link.
        path: PathBuf,
        /// "a file outside the asset root" or "a directory".
        what: &'static str,
    },
    /// Two assets differ only by letter case.
    #[error(
        "`{0}` and `{1}` differ only by case, which breaks on case-insensitive file systems; rename one"
    )]
    CaseCollision(AssetPath, AssetPath),
    /// A generated asset's path is a file's too.
    #[error(
        "`{0}` is generated (`[package.metadata.assets.generated]`) and is also a file under an asset root; rename one"
    )]
    GeneratedExists(AssetPath),
    /// One asset path exists under two roots.
    #[error(
        "`{asset}` exists under both `{first}` and `{second}`; asset paths must be unique across roots"
    )]
    Duplicate {
        /// The asset.
        asset: AssetPath,
        /// The first root.
        first: String,
        /// The second root.
        second: String,
    },
}

/// Every asset under the manifest's roots, sorted by path.
pub fn discover(manifest: &Manifest) -> Result<Vec<Discovered>, Vec<DiscoveryError>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for (index, root) in manifest.roots.iter().enumerate() {
        if !root.dir.is_dir() {
            errors.push(DiscoveryError::MissingRoot(root.dir.clone()));
            continue;
        }
        // `root` names a path inside the package (the manifest checks
        // that), but a link on the way may lead anywhere.
        let real_package = std::fs::canonicalize(&manifest.package_dir);
        let real_root = std::fs::canonicalize(&root.dir);
        if let (Ok(package), Ok(target)) = (real_package, real_root)
            && !target.starts_with(&package)
        {
            errors.push(DiscoveryError::RootOutsidePackage {
                root: root.dir.clone(),
                target,
            });
            continue;
        }
        walk_root(&root.dir, index, &manifest.ignore, &mut found, &mut errors);
    }
    for path in &manifest.generated {
        if found.iter().any(|d| d.path == *path) {
            errors.push(DiscoveryError::GeneratedExists(path.clone()));
        } else {
            found.push(Discovered {
                path: path.clone(),
                root: 0,
            });
        }
    }
    found.sort_by(|a: &Discovered, b| a.path.cmp(&b.path));
    let mut by_lowercase: HashMap<String, &Discovered> = HashMap::new();
    for (i, d) in found.iter().enumerate() {
        if i > 0 && found[i - 1].path == d.path {
            errors.push(DiscoveryError::Duplicate {
                asset: d.path.clone(),
                first: manifest.roots[found[i - 1].root].name.clone(),
                second: manifest.roots[d.root].name.clone(),
            });
        } else if let Some(other) = by_lowercase.insert(d.path.as_str().to_lowercase(), d) {
            errors.push(DiscoveryError::CaseCollision(
                other.path.clone(),
                d.path.clone(),
            ));
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(errors)
    }
}

/// Walks `dir` (a root) into `found`, each of its top-level entries on its
/// own thread (a 10k-asset tree takes tens of milliseconds to list on one
/// core, before any step can start). The entries are listed in name order
/// and their results joined in that order: the same order, files and
/// errors, as one walk of the whole root.
fn walk_root(
    dir: &Path,
    root: usize,
    ignore: &Ignore,
    found: &mut Vec<Discovered>,
    errors: &mut Vec<DiscoveryError>,
) {
    let listing = fs::read_dir(dir).and_then(|entries| {
        entries
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<Vec<_>>>()
    });
    let mut top = match listing {
        Ok(names) => names,
        Err(source) => {
            errors.push(DiscoveryError::Io {
                path: dir.to_owned(),
                source,
            });
            return;
        }
    };
    top.retain(|name| !hidden(name));
    top.sort();
    let parts = parallel::map(&top, |name| {
        let (mut found, mut errors) = (Vec::new(), Vec::new());
        walk(&dir.join(name), dir, root, ignore, &mut found, &mut errors);
        (found, errors)
    });
    for (f, e) in parts {
        found.extend(f);
        errors.extend(e);
    }
}

/// Walks `start` (an entry of root directory `dir`: a file, a link or a
/// folder) into `found`.
fn walk(
    start: &Path,
    dir: &Path,
    root: usize,
    ignore: &Ignore,
    found: &mut Vec<Discovered>,
    errors: &mut Vec<DiscoveryError>,
) {
    let mut real_root: Option<PathBuf> = None;
    let walker = walkdir::WalkDir::new(start)
        .follow_links(false)
        .follow_root_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !hidden(e.file_name()) && !ignored(e.path(), dir, ignore));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_owned();
                let source = e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("file system loop"));
                errors.push(DiscoveryError::Io { path, source });
                continue;
            }
        };
        let path = entry.path();
        let file_type = entry.file_type();
        if file_type.is_dir() {
            continue;
        }
        // Names come from reading directories, without a stat per file: the
        // freshness check stats inputs later, in parallel.
        if file_type.is_symlink()
            && let Err(e) = check_link(path, dir, &mut real_root)
        {
            errors.push(e);
            continue;
        }
        let Some(relative) = relative_str(path, dir) else {
            errors.push(DiscoveryError::NonUtf8(path.to_owned()));
            continue;
        };
        match AssetPath::new(&relative) {
            Ok(asset) => found.push(Discovered { path: asset, root }),
            Err(source) => errors.push(DiscoveryError::BadName {
                path: path.to_owned(),
                source,
            }),
        }
    }
}

/// Whether a file or folder name is hidden (starts with `.`): not an asset,
/// nor is anything under it.
pub(crate) fn hidden(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with('.'))
}

/// Whether the `ignore` globs leave out `path`, a file or folder under the
/// root `dir`.
fn ignored(path: &Path, dir: &Path, ignore: &Ignore) -> bool {
    !ignore.patterns.is_empty() && relative_str(path, dir).is_some_and(|r| ignore.matches(&r))
}

/// `path`, a file under `dir` that walkdir found, relative to `dir` with
/// `/` between names; `None` if it is not UTF-8. walkdir joins names onto
/// `dir` as given, so this is the text after it (`Path::strip_prefix`,
/// which compares component by component, was 3% of a no-op build).
fn relative_str<'a>(path: &'a Path, dir: &Path) -> Option<Cow<'a, str>> {
    // A UTF-8 path under `dir` has a UTF-8 `dir` as its start.
    let relative = (path.to_str()?)
        .strip_prefix(dir.to_str()?)
        .expect("walkdir joins names onto its root")
        .trim_start_matches(std::path::MAIN_SEPARATOR);
    Some(if std::path::MAIN_SEPARATOR == '/' {
        Cow::Borrowed(relative)
    } else {
        Cow::Owned(relative.replace(std::path::MAIN_SEPARATOR, "/"))
    })
}

/// Accepts a link only if it points at a file inside the root.
fn check_link(
    link: &Path,
    root: &Path,
    real_root: &mut Option<PathBuf>,
) -> Result<(), DiscoveryError> {
    let io = |source| DiscoveryError::Io {
        path: link.to_owned(),
        source,
    };
    let target = fs::canonicalize(link).map_err(io)?;
    let real_root = match real_root {
        Some(r) => r,
        None => real_root.insert(fs::canonicalize(root).map_err(io)?),
    };
    if !target.starts_with(real_root) {
        return Err(DiscoveryError::BadLink {
            path: link.to_owned(),
            what: "a file outside the asset root",
        });
    }
    let meta = fs::metadata(&target).map_err(io)?;
    if meta.is_dir() {
        return Err(DiscoveryError::BadLink {
            path: link.to_owned(),
            what: "a directory",
        });
    }
    Ok(())
}
