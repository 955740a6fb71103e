//! Shader packages: the WESL and WGSL modules of the crates a package
//! depends on, as Bevy lays them out. A crate `bevy_pbr` that embeds
//! `src/render/forward_io.wesl` (Bevy's `load_shader_library!`) offers the
//! module `bevy_pbr::render::forward_io`; so an import naming a crate of the
//! package's dependency graph is looked for under that crate's `src/`.
//!
//! The graph comes from Cargo itself (`cargo metadata`, the `cargo` that
//! runs the build), asked once per process and package, and again only
//! when the package's `Cargo.toml` or its lockfile changes. A name that two
//! versions share is the one nearest the package in the graph.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use serde_json::Value;

/// The crates of a package's dependency graph, by name.
#[derive(Debug)]
pub(super) struct Packages {
    /// Each crate's directory (where its `Cargo.toml` is).
    dirs: BTreeMap<String, PathBuf>,
    /// The workspace's lockfile, which names every crate's release.
    pub(super) lockfile: PathBuf,
}

impl Packages {
    /// Whether `name` is a crate of the graph.
    pub(super) fn has(&self, name: &str) -> bool {
        self.dirs.contains_key(name)
    }

    /// The files module `components` of crate `name` may be, in order.
    #[cfg_attr(not(feature = "shader-packages"), allow(dead_code))]
    pub(super) fn module_files(&self, name: &str, components: &[String]) -> Vec<PathBuf> {
        let Some(dir) = self.dirs.get(name) else {
            return Vec::new();
        };
        let mut base = dir.join("src");
        for c in components {
            base.push(c);
        }
        ["wesl", "wgsl"]
            .iter()
            .map(|ext| base.with_extension(ext))
            .collect()
    }
}

/// What the cache was made from: the stamps of `Cargo.toml` and the lockfile.
type Stamps = [Option<(SystemTime, u64)>; 2];

/// Each package directory's crates, and what they were found from.
type Cache = Mutex<HashMap<PathBuf, (Stamps, Arc<Packages>)>>;

/// The crates `package_dir`'s package depends on, from `cargo metadata`
/// (cached while its manifest and lockfile stay the same).
pub(super) fn of(package_dir: &Path) -> Result<Arc<Packages>, String> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
    };
    let manifest = package_dir.join("Cargo.toml");
    if let Some((stamps, packages)) = cache.lock().expect("package cache").get(package_dir)
        && *stamps == [stamp(&manifest), stamp(&packages.lockfile)]
    {
        return Ok(packages.clone());
    }
    let packages = Arc::new(ask_cargo(package_dir)?);
    let stamps = [stamp(&manifest), stamp(&packages.lockfile)];
    cache
        .lock()
        .expect("package cache")
        .insert(package_dir.to_owned(), (stamps, packages.clone()));
    Ok(packages)
}

fn ask_cargo(package_dir: &Path) -> Result<Packages, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(package_dir)
        .output()
        .map_err(|e| format!("could not run `cargo metadata` to find shader packages: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo metadata` failed while finding shader packages: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let json: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`cargo metadata` wrote what is not JSON: {e}"))?;
    parse(&json, package_dir)
}

/// The graph from `cargo metadata`'s JSON, walked from the package whose
/// manifest is in `package_dir`, nearest first.
fn parse(json: &Value, package_dir: &Path) -> Result<Packages, String> {
    let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut dir_of = HashMap::new();
    let mut name_of = HashMap::new();
    let mut root = None;
    let real_package = std::fs::canonicalize(package_dir).unwrap_or_else(|_| package_dir.into());
    for p in json["packages"].as_array().into_iter().flatten() {
        let (Some(id), Some(name), Some(manifest)) = (
            str_of(p, "id"),
            str_of(p, "name"),
            str_of(p, "manifest_path"),
        ) else {
            continue;
        };
        let dir = Path::new(&manifest)
            .parent()
            .map(Path::to_owned)
            .unwrap_or_default();
        if std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()) == real_package {
            root = Some(id.clone());
        }
        dir_of.insert(id.clone(), dir);
        name_of.insert(id, name);
    }
    let root = root.ok_or("`cargo metadata` did not list this package")?;
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    for node in json["resolve"]["nodes"].as_array().into_iter().flatten() {
        let Some(id) = str_of(node, "id") else {
            continue;
        };
        let list = node["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| str_of(d, "pkg"))
            .collect();
        deps.insert(id, list);
    }
    let mut dirs = BTreeMap::new();
    let mut seen = std::collections::HashSet::from([root.clone()]);
    let mut queue = VecDeque::from([root]);
    while let Some(id) = queue.pop_front() {
        for dep in deps.get(&id).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                if let (Some(name), Some(dir)) = (name_of.get(dep), dir_of.get(dep)) {
                    dirs.entry(name.clone()).or_insert_with(|| dir.clone());
                }
                queue.push_back(dep.clone());
            }
        }
    }
    let workspace = str_of(json, "workspace_root").unwrap_or_default();
    Ok(Packages {
        dirs,
        lockfile: Path::new(&workspace).join("Cargo.lock"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_is_walked_from_the_package_nearest_first() {
        let dir = std::env::temp_dir();
        let game = dir.join("game");
        let json = serde_json::json!({
            "packages": [
                {"id": "game", "name": "game", "manifest_path": game.join("Cargo.toml")},
                {"id": "pbr1", "name": "bevy_pbr", "manifest_path": "/r/bevy_pbr-1/Cargo.toml"},
                {"id": "pbr0", "name": "bevy_pbr", "manifest_path": "/r/bevy_pbr-0/Cargo.toml"},
                {"id": "mid", "name": "mid", "manifest_path": "/r/mid/Cargo.toml"},
                {"id": "other", "name": "other", "manifest_path": "/r/other/Cargo.toml"}
            ],
            "resolve": {"nodes": [
                {"id": "game", "deps": [{"pkg": "mid"}, {"pkg": "pbr1"}]},
                {"id": "mid", "deps": [{"pkg": "pbr0"}]}
            ]},
            "workspace_root": dir
        });
        let p = parse(&json, &game).unwrap();
        assert!(p.has("bevy_pbr") && p.has("mid") && !p.has("other") && !p.has("game"));
        let files = p.module_files("bevy_pbr", &["render".into(), "forward_io".into()]);
        assert_eq!(files[0], Path::new("/r/bevy_pbr-1/src/render/forward_io.wesl"));
        assert_eq!(files[1], Path::new("/r/bevy_pbr-1/src/render/forward_io.wgsl"));
        assert_eq!(p.lockfile, dir.join("Cargo.lock"));
    }
}
