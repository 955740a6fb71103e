//! Stats that a watched pipeline takes from memory instead of the disk.
//!
//! A build checks each input of each step with a `stat`: 11,000 of them in
//! a no-op build of the 10,000-asset benchmark, about half of its checking.
//! A pipeline that builds again and again under a file watcher is told what
//! changed since its previous build ([`crate::Changes`]). Every other file
//! still looks as that build saw it. So each stat made under an asset root
//! is kept, and a later build reuses it unless a change names its path or a
//! folder above it.
//!
//! The cache trusts a stat only where the watcher is sure to report a
//! change, and it is written down here because the rest depends on it:
//!
//! - **Only under the asset roots.** `cargo assets watch` watches these
//!   recursively from before the first build. Other inputs are stat'ed
//!   every time. One example is a tool's config file outside the roots:
//!   `watch` starts following its folder only after the build that found
//!   it.
//! - **Never a path that is a symbolic link.** A change to a link's target
//!   is reported at the target's path, not the link's. Discovery already
//!   refuses links to folders inside a root.
//! - **What a watcher cannot see, the cache cannot forget.** Examples: a
//!   write through a hard link from elsewhere, or a change on a network file
//!   system. [`crate::Changes::Unknown`] clears the cache. It is what
//!   [`crate::Pipeline::build`] passes, and what `watch` passes when its
//!   watcher lost events. [`StatCache::drifted`] finds such changes by
//!   stat'ing every kept path again, which `watch` does when it is idle
//!   (see [`crate::unstable::warm`]).
//!
//! A kept stat answers exactly as the disk would have. Freshness still
//! treats it as before: a stamp inside the racy window still has its bytes
//! hashed.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::parallel;
use crate::record::FileStamp;

/// Changed paths past this many that may be folders clear the cache instead
/// of being looked for one by one (a checkout, say).
const MANY_FOLDERS: usize = 32;

/// The stats kept under `roots`: a path's stamp, or `None` when nothing
/// (no file) was there.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    roots: Vec<PathBuf>,
    entries: Mutex<HashMap<PathBuf, Option<FileStamp>>>,
}

impl StatCache {
    /// Keeps stats under `roots` from now on. Different roots from before
    /// clear the cache: what the watcher watches has changed.
    pub fn set_roots(&mut self, roots: Vec<PathBuf>) {
        if roots != self.roots {
            self.roots = roots;
            self.clear();
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Forgets the stats that `changed` may have made wrong: those of the
    /// changed paths and of everything under a changed folder. A changed
    /// path that is a regular file now and was kept as one cannot be a
    /// folder, so only its own stat goes. Any other changed path may have
    /// been a folder, so everything under it goes too.
    pub fn forget(&mut self, changed: &HashSet<PathBuf>) {
        let entries = self.entries.get_mut().unwrap_or_else(|p| p.into_inner());
        let mut folders = Vec::new();
        for path in changed {
            let was_file = matches!(entries.remove(path), Some(Some(_)));
            let is_file = fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
            if !(was_file && is_file) {
                folders.push(path);
            }
        }
        if folders.len() > MANY_FOLDERS {
            entries.clear();
        } else if !folders.is_empty() {
            entries.retain(|kept, _| !folders.iter().any(|f| kept.starts_with(f)));
        }
    }

    /// The kept paths whose stat is not what was kept: changes a watcher
    /// did not report. Stat'ed on every core.
    pub fn drifted(&self) -> Vec<PathBuf> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let kept: Vec<(&PathBuf, &Option<FileStamp>)> = entries.iter().collect();
        let mut drifted: Vec<PathBuf> = parallel::map(&kept, |(path, kept)| {
            (disk_stat(path) != Some(**kept)).then(|| (*path).clone())
        })
        .into_iter()
        .flatten()
        .collect();
        drifted.sort();
        drifted
    }

    /// Whether the stat of `path` is kept: a later change there will be
    /// reported, and forgets it.
    pub fn holds(&self, path: &Path) -> bool {
        (self.entries.lock().unwrap_or_else(|p| p.into_inner())).contains_key(path)
    }

    /// The stamp of the file at `path`, as `stat` would give it now: from
    /// memory when it was kept, else from the disk (and kept, if it may
    /// be).
    pub fn stat(&self, path: &Path) -> Option<FileStamp> {
        if !self.roots.iter().any(|r| path.starts_with(r)) {
            return stat(path);
        }
        let lock = || self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kept) = lock().get(path) {
            return *kept;
        }
        let Some(kept) = disk_stat(path) else {
            // A link, or an error: asked of the disk every time.
            return stat(path);
        };
        lock().insert(path.to_owned(), kept);
        kept
    }
}

/// The stamp the cache may keep for `path` (its own stat, not its link
/// target's: `Some(None)` when no file is there); `None` when it may keep
/// nothing (a link, an error).
fn disk_stat(path: &Path) -> Option<Option<FileStamp>> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Some(Some(FileStamp::of(&m))),
        Ok(m) if m.is_dir() => Some(None),
        Err(e) if nothing_there(&e) => Some(None),
        _ => None,
    }
}

/// The stamp of the file at `path` (following links); `None` if there is
/// no file there. An error reading it gives a stamp that matches nothing,
/// so whatever relied on the file is checked again.
pub(crate) fn stat(path: &Path) -> Option<FileStamp> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Some(FileStamp::of(&m)),
        Ok(_) => None,
        Err(e) if nothing_there(&e) => None,
        Err(_) => Some(FileStamp {
            size: u64::MAX,
            mtime_ns: 0,
            ctime_ns: 0,
            ino: 0,
            dev: 0,
        }),
    }
}

/// Whether `e` says there is no file at a path: nothing there, or a file
/// where a folder on the way should be.
fn nothing_there(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_at(root: &Path) -> StatCache {
        let mut cache = StatCache::default();
        cache.set_roots(vec![root.to_owned()]);
        cache
    }

    #[test]
    fn a_kept_stat_answers_until_its_path_or_a_folder_above_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("assets");
        fs::create_dir_all(root.join("sub")).unwrap();
        let file = root.join("sub/a.txt");
        fs::write(&file, "one").unwrap();
        let missing = root.join("new/b.txt");
        let cache = &mut cache_at(&root);
        let first = cache.stat(&file).expect("a file");
        assert_eq!(cache.stat(&missing), None);

        // Unreported changes are not seen: that is the cache's contract.
        fs::write(&file, "three").unwrap();
        fs::create_dir_all(root.join("new")).unwrap();
        fs::write(&missing, "here").unwrap();
        assert_eq!(cache.stat(&file), Some(first));
        assert_eq!(cache.stat(&missing), None);

        // A reported file is stat'ed again; so is whatever lies under a
        // reported folder, however deep.
        cache.forget(&HashSet::from([file.clone(), root.join("new")]));
        assert_eq!(cache.stat(&file).map(|s| s.size), Some(5));
        assert_eq!(cache.stat(&missing).map(|s| s.size), Some(4));
    }

    #[test]
    fn a_changed_path_that_was_a_file_and_is_now_a_folder_forgets_what_is_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let path = root.join("x");
        fs::write(&path, "file").unwrap();
        let inside = root.join("x/y.txt");
        let cache = &mut cache_at(&root);
        assert!(cache.stat(&path).is_some());
        assert_eq!(cache.stat(&inside), None);
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        fs::write(&inside, "now").unwrap();
        cache.forget(&HashSet::from([path.clone()]));
        assert_eq!(cache.stat(&path), None, "a folder is not a file");
        assert_eq!(cache.stat(&inside).map(|s| s.size), Some(3));
    }

    #[test]
    fn paths_outside_the_roots_and_links_are_never_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("assets");
        fs::create_dir_all(&root).unwrap();
        let outside = dir.path().join("tool.cfg");
        fs::write(&outside, "a").unwrap();
        let target = root.join("target.txt");
        fs::write(&target, "b").unwrap();
        let cache = &mut cache_at(&root);
        assert_eq!(cache.stat(&outside).map(|s| s.size), Some(1));
        fs::write(&outside, "aa").unwrap();
        assert_eq!(cache.stat(&outside).map(|s| s.size), Some(2));
        #[cfg(unix)]
        {
            let link = root.join("link.txt");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            assert_eq!(cache.stat(&link).map(|s| s.size), Some(1));
            fs::write(&target, "bbb").unwrap();
            assert_eq!(cache.stat(&link).map(|s| s.size), Some(3));
        }
    }

    #[test]
    fn new_roots_or_an_unknown_change_forget_everything() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let file = root.join("a.txt");
        fs::write(&file, "a").unwrap();
        let cache = &mut cache_at(&root);
        cache.stat(&file);
        fs::write(&file, "aa").unwrap();
        cache.set_roots(vec![root.clone()]);
        assert_eq!(cache.stat(&file).map(|s| s.size), Some(1), "same roots");
        cache.set_roots(vec![root.join("other"), root.clone()]);
        assert_eq!(cache.stat(&file).map(|s| s.size), Some(2));
        fs::write(&file, "aaa").unwrap();
        cache.clear();
        assert_eq!(cache.stat(&file).map(|s| s.size), Some(3));
    }
}
