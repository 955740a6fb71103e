//! Code fingerprints: a step reruns when its processor's code changed,
//! though nobody bumped [`Processor::version`](super::Processor::version).
//!
//! A step's key holds, beside the processor's name and version, a
//! fingerprint of the source code the processor was compiled from. Where it
//! comes from:
//!
//! - **Built-ins**: assets-build's `build.rs` hashes each built-in's own
//!   module and the shared modules that shape its outputs, at compile time
//!   (the list is in `build.rs`). An edit to `image.rs` reruns the `image`,
//!   `sprite`, `texture` steps and the atlases; `shader` and `copy` steps
//!   stay fresh.
//! - **Registered processors**: [`Registry::register`](super::Registry::register)
//!   is `#[track_caller]`, so it knows the source file that called it: the
//!   processor crate's `register` function, or the game's `build.rs`. The
//!   fingerprint hashes that crate's sources: every `.rs` file under the
//!   caller's source folder (`src/` of a processor crate), or the caller's
//!   file alone when it sits at a package's root (a `build.rs`). Hashed
//!   once per process, each folder once.
//!
//! Text is hashed as written, less carriage returns: a checkout's line
//! endings do not change a fingerprint, a comment does (a comment-only edit
//! reruns the processor's steps once, and they come out the same, so what
//! depends on them stops there).
//!
//! Limits, written where a user finds them (ARCHITECTURE.md): code outside
//! those files is not seen: a dependency crate's update (a decoder, a
//! helper crate of the processor), a processor registered from one crate
//! and written in another, or a binary built where its sources are not
//! readable (`--remap-path-prefix`, a build script copied elsewhere): then
//! the fingerprint is unknown and `version()` alone decides, as before.
//! Two processors registered from one crate share its fingerprint, so an
//! edit to either reruns both.

use std::collections::HashMap;
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

include!(concat!(env!("OUT_DIR"), "/builtin_code.rs"));

/// The fingerprint of the built-in processor `name` (`"atlas"` for the
/// atlas step), as assets-build's build script worked it out.
pub(crate) fn builtin(name: &str) -> Option<u64> {
    BUILTIN_CODE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, c)| c)
}

/// The fingerprint of the crate whose code called `register` at `caller`,
/// or `None` if its sources cannot be found from here.
pub(crate) fn of_caller(caller: &Location<'_>) -> Option<u64> {
    let file = locate(Path::new(caller.file()))?;
    let (dir, recursive) = source_folder(&file);
    // What is hashed: the folder, or the one file.
    let key = if recursive { dir.clone() } else { file.clone() };
    static HASHED: OnceLock<Mutex<HashMap<PathBuf, Option<u64>>>> = OnceLock::new();
    let memo = HASHED.get_or_init(Default::default);
    if let Some(&known) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return known;
    }
    let mut files = Vec::new();
    if recursive {
        rust_files(&dir, &mut files);
    } else {
        files.push(file);
    }
    files.sort();
    let code = hash_files(&dir, &files);
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, code);
    code
}

/// Where the file rustc called `path` is now. Rustc names the files of a
/// workspace's members relative to the workspace root, where Cargo ran it;
/// a build script runs in its package's folder, a runner in another: the
/// root is then an ancestor of one of them, or of the program itself (a
/// binary of the workspace's `target/`, run from anywhere: without it, a
/// run from another folder found no sources, and every step of its
/// processors ran again there and once more back home).
fn locate(path: &Path) -> Option<PathBuf> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    let exe = std::env::current_exe().ok();
    locate_from(path, manifest_dir.iter().chain(&cwd).chain(&exe))
}

/// [`locate`], trying the ancestors of each of `starts` in turn.
fn locate_from<'a>(path: &Path, starts: impl Iterator<Item = &'a PathBuf>) -> Option<PathBuf> {
    if path.is_absolute() {
        return path.is_file().then(|| path.to_owned());
    }
    starts
        .flat_map(|start| start.ancestors())
        .map(|base| base.join(path))
        .find(|candidate| candidate.is_file())
}

/// The folder whose Rust files make up the caller's crate, and whether to
/// take all of them: the caller's top folder below its package root (`src/`),
/// or, for a file at a package's root (`build.rs`), that folder and the
/// file alone, so the game's own code and assets are not hashed.
fn source_folder(file: &Path) -> (PathBuf, bool) {
    let parent = file.parent().unwrap_or(Path::new(""));
    if parent.join("Cargo.toml").is_file() {
        return (parent.to_owned(), false);
    }
    let mut dir = parent;
    while let Some(up) = dir.parent() {
        if up.join("Cargo.toml").is_file() {
            return (dir.to_owned(), true);
        }
        dir = up;
    }
    (parent.to_owned(), false)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let walk = walkdir::WalkDir::new(dir).follow_links(false).into_iter();
    for entry in walk.filter_map(Result::ok) {
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "rs") {
            out.push(entry.into_path());
        }
    }
}

/// Each file's path (relative to `dir`, `/`-separated) and text, less
/// carriage returns; `None` if one cannot be read.
fn hash_files(dir: &Path, files: &[PathBuf]) -> Option<u64> {
    let mut h = blake3::Hasher::new();
    for file in files {
        let name = file.strip_prefix(dir).unwrap_or(file);
        let name = name.to_string_lossy().replace('\\', "/");
        let text: Vec<u8> = std::fs::read(file)
            .ok()?
            .into_iter()
            .filter(|&b| b != b'\r')
            .collect();
        for field in [name.as_bytes(), &text] {
            h.update(&(field.len() as u64).to_le_bytes());
            h.update(field);
        }
    }
    let bytes = h.finalize();
    Some(u64::from_le_bytes(
        bytes.as_bytes()[..8].try_into().unwrap(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_fingerprint_and_they_differ() {
        let registry = super::super::Registry::with_builtins();
        let mut seen = std::collections::BTreeSet::new();
        for name in registry.names().chain(["atlas"]) {
            let code = builtin(name).unwrap_or_else(|| panic!("no fingerprint for `{name}`"));
            assert!(seen.insert(code), "`{name}` shares a fingerprint");
        }
    }

    #[test]
    fn a_member_file_is_found_from_any_folder_below_the_workspace_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("procs/src")).unwrap();
        std::fs::create_dir_all(root.join("target/release")).unwrap();
        std::fs::write(root.join("procs/src/lib.rs"), "").unwrap();
        let rel = Path::new("procs/src/lib.rs");
        let other = tempfile::tempdir().unwrap();
        let elsewhere = other.path().to_owned();
        let exe = root.join("target/release/cargo-assets");
        assert_eq!(locate_from(rel, [&elsewhere].into_iter()), None);
        assert_eq!(
            locate_from(rel, [&elsewhere, &exe].into_iter()),
            Some(root.join(rel)),
            "found from the program's own place"
        );
    }

    #[test]
    fn a_crate_is_its_source_folder_and_a_build_script_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path();
        std::fs::write(pkg.join("Cargo.toml"), "").unwrap();
        std::fs::create_dir_all(pkg.join("src/nested")).unwrap();
        std::fs::write(pkg.join("build.rs"), "fn main() {}").unwrap();
        std::fs::write(pkg.join("other.rs"), "").unwrap();
        std::fs::write(pkg.join("src/lib.rs"), "mod nested;").unwrap();
        std::fs::write(pkg.join("src/nested/mod.rs"), "").unwrap();
        assert_eq!(
            source_folder(&pkg.join("build.rs")),
            (pkg.to_owned(), false)
        );
        assert_eq!(
            source_folder(&pkg.join("src/lib.rs")),
            (pkg.join("src"), true)
        );
        let deep = source_folder(&pkg.join("src/nested/mod.rs"));
        assert_eq!(deep, (pkg.join("src"), true));

        let mut files = Vec::new();
        rust_files(&pkg.join("src"), &mut files);
        files.sort();
        let before = hash_files(&pkg.join("src"), &files);
        std::fs::write(pkg.join("src/nested/mod.rs"), "\r\n").unwrap();
        let edited = hash_files(&pkg.join("src"), &files);
        assert_ne!(before, edited);
        std::fs::write(pkg.join("src/nested/mod.rs"), "\n").unwrap();
        assert_eq!(
            edited,
            hash_files(&pkg.join("src"), &files),
            "a CR is not code"
        );
    }
}
