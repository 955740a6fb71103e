//! What a pipeline that builds again and again (`cargo assets watch`) keeps
//! between builds, and how a watcher's report of what changed decides what
//! of it still holds.
//!
//! A build starts with work that no single edit changes:
//! - reading the record log;
//! - walking the asset roots;
//! - planning every step;
//! - stat'ing every input.
//!
//! In a 10,000-asset project that is most of an edit's build. A watched
//! pipeline ([`crate::Pipeline::keep_state_in_memory`]) keeps all four. A
//! build then gets [`Changes`] from the watcher and takes back what the
//! changes leave intact:
//!
//! - **The record log** stays as the last build left it, with the records
//!   that build appended. The next build reads the file again, but when
//!   it still starts with the bytes already parsed, only the frames after
//!   them are decoded (`RecordLog::open` in `record_log.rs`). This check
//!   needs no watcher, so it also holds after `Changes::Unknown`.
//! - **The walk** is kept when every changed path under a root is as the
//!   walk left it: a listed asset that is still a regular file, or a path
//!   that was not listed and is gone (an editor's temporary file). Anything
//!   else means the roots are walked again: a new file, a removed one, a
//!   folder, or a link.
//! - **The plan** is kept with the walk, when `Cargo.toml` reads as the
//!   same text. Planning depends only on the manifest, the walk and the
//!   options, and changing the options or the processors
//!   ([`crate::Pipeline::options_mut`], [`crate::Pipeline::registry_mut`])
//!   drops everything.
//! - **Stats** are kept under the asset roots (`stat_cache.rs` says when
//!   a stat is trusted).
//! - **Verdicts**: each step's report is kept with the plan, and reused
//!   without a check by a build that no change reaches it in
//!   (`verdicts.rs`).
//! - **Parcel choices**: each parcel's resources, as the last build chose
//!   them from those reports, are kept with the plan; a build chooses
//!   again only in the runs of steps whose reports are not the very ones
//!   it chose from (`parcels/select.rs`).
//!
//! Changes are applied before anything else in a build. A build that
//! fails part-way has still forgotten what they made stale.
//!
//! **What the watcher misses.** Kept state is only as good as the reports.
//! [`crate::Pipeline::drifted`] compares it with the disk: it walks the
//! roots again and stats every kept path, and names what differs. `watch` calls it
//! whenever it is idle after building, and builds what it names. A missed
//! event thus costs one more build a moment later, not a stale parcel that
//! lasts until the file changes again.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::asset_path::AssetPath;
use crate::discover::{self, Discovered, discover};
use crate::manifest::Manifest;
use crate::manifest::{AssetRoot, Ignore};
use crate::parcels::KeptChoices;
use crate::plan::Plan;
use crate::record_log::RecordLog;
use crate::stat_cache::StatCache;
use crate::verdicts::Verdicts;

/// What changed on disk since a pipeline's previous build, as a file
/// watcher saw it.
#[derive(Debug, Clone, Copy)]
pub enum Changes<'a> {
    /// Anything may have changed: the watcher lost events, or there is no
    /// watcher. Every input is looked at.
    Unknown,
    /// Only these paths changed: absolute, as the watcher reports them,
    /// files and folders. A folder stands for everything under it.
    At(&'a HashSet<PathBuf>),
}

/// What a watched pipeline keeps between builds.
#[derive(Default)]
pub(crate) struct Warm {
    /// The manifest the last build read: the walk is of its roots, the
    /// plan made from its text.
    pub manifest: Option<Manifest>,
    /// The last walk of `manifest`'s roots.
    pub walk: Option<Walk>,
    /// The last plan, made from `walk` and `manifest`.
    pub plan: Option<Plan>,
    /// The last build's verdict on each step of `plan`, where trusted.
    pub verdicts: Option<Verdicts>,
    /// The record log as the last build left it.
    pub records: Option<RecordLog>,
    pub stats: StatCache,
    /// Each parcel's last choice of resources, by parcel name, remade
    /// only where step reports changed (`parcels/select.rs`).
    pub choices: KeptChoices,
    /// The atlas steps this pipeline has run or warmed
    /// ([`crate::Pipeline::warm_up`]): their sprites and pages are in
    /// its memory.
    pub packed: HashSet<AssetPath>,
}

impl fmt::Debug for Warm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Warm")
            .field("walked", &self.walk.as_ref().map(|w| w.assets.len()))
            .field("planned", &self.plan.as_ref().map(|p| p.steps.len()))
            .field("records", &self.records.is_some())
            .finish()
    }
}

/// A walk of the asset roots: what discovery found.
pub(crate) struct Walk {
    pub assets: Vec<Discovered>,
    /// Every asset's full path, made when first needed.
    listed: Option<HashSet<PathBuf>>,
}

impl Walk {
    pub fn new(assets: Vec<Discovered>) -> Walk {
        Walk {
            assets,
            listed: None,
        }
    }

    /// Every asset's full path under `roots`, the roots it was walked in.
    fn listed(&mut self, roots: &[AssetRoot]) -> &HashSet<PathBuf> {
        let assets = &self.assets;
        self.listed.get_or_insert_with(|| {
            assets
                .iter()
                .map(|a| roots[a.root].dir.join(a.path.as_str()))
                .collect()
        })
    }

    /// Whether the walk of `roots` would still find what it found after
    /// `changed`: each changed path under a root is a listed asset that is
    /// still a regular file, or was not listed and is not there (or is
    /// hidden or ignored, which a walk skips).
    fn survives(
        &mut self,
        roots: &[AssetRoot],
        ignore: &Ignore,
        changed: &HashSet<PathBuf>,
    ) -> bool {
        let listed = self.listed(roots);
        changed.iter().all(|path| {
            let Some(root) = roots.iter().find(|r| path.starts_with(&r.dir)) else {
                return true;
            };
            let now = fs::symlink_metadata(path);
            if listed.contains(path) {
                return now.is_ok_and(|m| m.is_file());
            }
            let gone = matches!(&now, Err(e) if e.kind() == io::ErrorKind::NotFound);
            let relative = path.strip_prefix(&root.dir).unwrap_or(path);
            gone || hidden(relative) || ignored(relative, ignore)
        })
    }
}

/// Whether a path under a root, or a folder on its way, is one that the
/// `ignore` globs leave out of discovery.
fn ignored(relative: &Path, ignore: &Ignore) -> bool {
    let Some(relative) = relative.to_str() else {
        return false;
    };
    let relative = relative.replace(std::path::MAIN_SEPARATOR, "/");
    let folders = relative.match_indices('/').map(|(i, _)| &relative[..i]);
    folders
        .chain([relative.as_str()])
        .any(|p| ignore.matches(p))
}

/// Whether a path under a root passes through a file or folder that
/// discovery skips as hidden.
fn hidden(relative: &Path) -> bool {
    (relative.components()).any(|c| matches!(c, Component::Normal(name) if discover::hidden(name)))
}

impl Warm {
    /// The paths whose state on disk is not what this keeps, though no
    /// change named them: files added to or gone from the roots since the
    /// walk, and kept stats that no longer hold. If the roots cannot be
    /// walked now, their folders (everything under them).
    pub fn drifted(&mut self) -> Vec<PathBuf> {
        let mut drifted = self.stats.drifted();
        if let (Some(walk), Some(manifest)) = (&mut self.walk, &self.manifest) {
            match discover(manifest) {
                Ok(now) if now == walk.assets => {}
                Ok(now) => {
                    let roots = &manifest.roots;
                    let after: HashSet<PathBuf> = (now.iter())
                        .map(|a| roots[a.root].dir.join(a.path.as_str()))
                        .collect();
                    let before = walk.listed(roots);
                    drifted.extend(before.symmetric_difference(&after).cloned());
                }
                Err(_) => drifted.extend(manifest.roots.iter().map(|r| r.dir.clone())),
            }
        }
        drifted.sort();
        drifted.dedup();
        drifted
    }

    /// Forgets what `changes` may have made stale. The record log is
    /// checked when it is read again, not here.
    pub fn forget(&mut self, changes: Changes<'_>) {
        match changes {
            Changes::Unknown => {
                self.stats.clear();
                self.walk = None;
                self.plan = None;
                self.choices = KeptChoices::default();
                self.verdicts = None;
                self.manifest = None;
            }
            Changes::At(changed) => {
                self.stats.forget(changed);
                let survives = match (&mut self.walk, &self.manifest) {
                    (Some(walk), Some(manifest)) => {
                        walk.survives(&manifest.roots, &manifest.ignore, changed)
                    }
                    _ => false,
                };
                match (&mut self.verdicts, &self.manifest) {
                    (Some(verdicts), Some(manifest)) if survives => {
                        verdicts.forget(changed, &manifest.package_dir);
                    }
                    _ => self.verdicts = None,
                }
                if !survives {
                    self.walk = None;
                    self.plan = None;
                    self.choices = KeptChoices::default();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset_path::AssetPath;

    fn walk_of(names: &[&str]) -> Walk {
        let assets = names
            .iter()
            .map(|n| Discovered {
                path: AssetPath::new(n).unwrap(),
                root: 0,
            })
            .collect();
        Walk::new(assets)
    }

    #[test]
    fn a_walk_survives_edits_and_temporary_files_but_not_new_or_removed_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("assets");
        fs::create_dir_all(root.join("sprites")).unwrap();
        fs::write(root.join("sprites/a.png"), "a").unwrap();
        fs::write(root.join("b.txt"), "b").unwrap();
        let mut walk = walk_of(&["sprites/a.png", "b.txt"]);
        let roots = [AssetRoot {
            name: "assets".into(),
            dir: root.clone(),
        }];
        let none = Ignore::default();
        let at =
            |names: &[&str]| -> HashSet<PathBuf> { names.iter().map(|n| root.join(n)).collect() };
        // An edit, an editor's temporary file come and gone, a hidden file,
        // and paths outside the roots.
        fs::write(root.join(".b.txt.swp"), "x").unwrap();
        let outside = dir.path().join("Cargo.toml");
        let mut edits = at(&["sprites/a.png", "sprites/a.png~", ".b.txt.swp"]);
        edits.insert(outside);
        assert!(walk.survives(&roots, &none, &edits));

        fs::write(root.join("sprites/c.png"), "c").unwrap();
        assert!(
            !walk.survives(&roots, &none, &at(&["sprites/c.png"])),
            "a new file"
        );
        fs::remove_file(root.join("b.txt")).unwrap();
        assert!(
            !walk.survives(&roots, &none, &at(&["b.txt"])),
            "a removed file"
        );
        assert!(!walk.survives(&roots, &none, &at(&["sprites"])), "a folder");
    }
}
