//! [`AssetPath`]: the name of an asset, relative to its root.
//!
//! An asset path is the identity of an asset everywhere: in rules, records,
//! parcels and generated constants. It is always relative, uses `/` as the
//! separator, and has no empty, `.` or `..` components, so it can never name a
//! file outside its root and it is the same string on every platform.
//!
//! Three kinds of asset path name no file, but a generated step:
//! `atlas:<name>` (see [`crate::unstable::atlas`]); `stage<n>:<path>`,
//! stage `n` of the chain that builds `<path>` (a rule's `processor = ["a",
//! "b"]`: every stage but the last is such a step; the last is `<path>`
//! itself); and `temp:<processor>/<digest>`, a temporary build a processor
//! asked for with its parameters (`Context::generate`). `:` is not allowed in file paths, so they can never clash with
//! a file. The prefixes live here, with the names they make, so this
//! module imports nothing from the crate.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// The name prefix of atlas steps and pages: `atlas:ui`, `atlas:ui#0`.
pub const ATLAS_PREFIX: &str = "atlas:";

/// The name prefix of a chain's stages: `stage1:art/hero.psd`.
const STAGE_PREFIX: &str = "stage";
/// The name prefix of a temporary build a processor asked for
/// (`Context::generate`): `temp:noise/3f2a9c01d4e5b6a7`.
const TEMP_PREFIX: &str = "temp:";

/// A map from asset paths, hashed with foldhash rather than the standard
/// library's SipHash: the plan's index and the record log are looked up
/// for every step and every dependency edge of a build, and at a million
/// assets SipHash over their names was 4–8% of a no-op. Asset paths come
/// from the package's own files, so SipHash's defence against chosen
/// collisions buys nothing here.
pub(crate) type AssetMap<V> = std::collections::HashMap<AssetPath, V, foldhash::fast::RandomState>;

/// A set of asset paths, hashed as [`AssetMap`] is: a step's dependencies
/// (an atlas's 137,000 sprites at 1M assets).
pub(crate) type AssetSet = std::collections::HashSet<AssetPath, foldhash::fast::RandomState>;

/// A normalized path of an asset, relative to its asset root: `sprites/hero.png`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct AssetPath(String);

/// Why a string is not a valid [`AssetPath`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssetPathError {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path starts at a root (`/x`, `C:\x`) instead of being relative.
    #[error("`{0}` is absolute; asset paths are relative to the asset root")]
    Absolute(String),
    /// A `..` component would leave the asset root.
    #[error("`{0}` leaves the asset root")]
    EscapesRoot(String),
    /// The path contains a character that is not portable (`\`, NUL, `:`).
    #[error("`{0}` contains `{1}`, which is not allowed in asset paths")]
    BadChar(String, char),
}

impl AssetPath {
    /// Validates and normalizes `path`: `./a//b` becomes `a/b`; `a/../b` becomes `b`.
    /// A `..` that would leave the root is an error, as is an absolute path.
    pub fn new(path: &str) -> Result<AssetPath, AssetPathError> {
        if path.starts_with('/') {
            return Err(AssetPathError::Absolute(path.to_owned()));
        }
        if let Some(b) = path.bytes().find(|b| matches!(b, b'\\' | b'\0' | b':')) {
            return Err(AssetPathError::BadChar(path.to_owned(), char::from(b)));
        }
        // Most paths (every one a record or a walk gives) are normal already.
        if path.split('/').all(|part| !matches!(part, "" | "." | "..")) {
            return Ok(AssetPath(path.to_owned()));
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(AssetPathError::EscapesRoot(path.to_owned()));
                    }
                }
                p => parts.push(p),
            }
        }
        if parts.is_empty() {
            return Err(AssetPathError::Empty);
        }
        Ok(AssetPath(parts.join("/")))
    }

    /// The name of the generated step of atlas `name`: `atlas:<name>`.
    /// `name` must be a valid atlas name (letters, digits, `-`, `_`).
    pub fn atlas(name: &str) -> AssetPath {
        debug_assert!(is_atlas_name(name), "{name:?}");
        AssetPath(format!("{}{name}", ATLAS_PREFIX))
    }

    /// The name of stage `n` (from 1) of the chain that builds `file`:
    /// `stage<n>:<file>`.
    pub(crate) fn stage(n: usize, file: &AssetPath) -> AssetPath {
        AssetPath(format!("{STAGE_PREFIX}{n}:{file}"))
    }

    /// The name of the temporary build of `processor` (a valid atlas name)
    /// whose parameters hash to `digest` (hex): `temp:<processor>/<digest>`.
    pub(crate) fn temporary(processor: &str, digest: &str) -> AssetPath {
        debug_assert!(temp_parts(&format!("{TEMP_PREFIX}{processor}/{digest}")).is_some());
        AssetPath(format!("{TEMP_PREFIX}{processor}/{digest}"))
    }

    /// A file's asset path, or a generated step's name (`atlas:ui`,
    /// `stage1:art/hero.psd`, `temp:noise/3f2a9c01d4e5b6a7`): what records
    /// and users name steps by.
    pub fn from_name(name: &str) -> Result<AssetPath, AssetPathError> {
        match name.strip_prefix(ATLAS_PREFIX) {
            Some(atlas) if is_atlas_name(atlas) => return Ok(AssetPath(name.to_owned())),
            _ => {}
        }
        if temp_parts(name).is_some() {
            return Ok(AssetPath(name.to_owned()));
        }
        if let Some((n, file)) = stage_parts(name) {
            let file = AssetPath::new(file)?;
            return Ok(AssetPath::stage(n, &file));
        }
        AssetPath::new(name)
    }

    /// The atlas name, if this names an atlas step.
    pub fn atlas_name(&self) -> Option<&str> {
        self.0.strip_prefix(ATLAS_PREFIX)
    }

    /// Whether this names a stage of a chain, not the asset it builds:
    /// never in a parcel.
    pub fn is_stage(&self) -> bool {
        stage_parts(&self.0).is_some()
    }

    /// Whether this names a temporary build a processor asked for
    /// (`Context::generate`): never planned, never in a parcel.
    pub fn is_temporary(&self) -> bool {
        temp_parts(&self.0).is_some()
    }

    /// Resolves `relative` against this asset's folder: for `levels/a.lvl`,
    /// `tiles.png` is `levels/tiles.png` and `../shared/x.png` is `shared/x.png`.
    pub fn sibling(&self, relative: &str) -> Result<AssetPath, AssetPathError> {
        match self.0.rfind('/') {
            Some(i) => AssetPath::new(&format!("{}/{relative}", &self.0[..i])),
            None => AssetPath::new(relative),
        }
    }

    /// The path as a string with `/` separators.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The extension after the last `.` of the file name, if any.
    pub fn extension(&self) -> Option<&str> {
        let name = self.file_name();
        name.rfind('.').filter(|&i| i > 0).map(|i| &name[i + 1..])
    }

    /// The last component.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
}

impl fmt::Display for AssetPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for AssetPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<'de> Deserialize<'de> for AssetPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        AssetPath::from_name(&s).map_err(serde::de::Error::custom)
    }
}

/// `(n, file)` of a stage's name `stage<n>:<file>`.
fn stage_parts(name: &str) -> Option<(usize, &str)> {
    let (stage, file) = name.strip_prefix(STAGE_PREFIX)?.split_once(':')?;
    let n = stage
        .parse()
        .ok()
        .filter(|&n| n > 0 && !stage.starts_with('0'))?;
    Some((n, file))
}

/// `(processor, digest)` of a temporary build's name.
fn temp_parts(name: &str) -> Option<(&str, &str)> {
    let (processor, digest) = name.strip_prefix(TEMP_PREFIX)?.split_once('/')?;
    let hex = !digest.is_empty() && digest.len() <= 64 && digest.bytes().all(|b| b.is_ascii_hexdigit());
    (is_atlas_name(processor) && hex).then_some((processor, digest))
}

/// Whether `name` can name an atlas: non-empty ASCII letters, digits, `-`, `_`.
pub fn is_atlas_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_builds_name_holds_its_processor_and_parameters_digest() {
        let temp = AssetPath::temporary("noise", "3f2a9c01d4e5b6a7");
        assert_eq!(temp.as_str(), "temp:noise/3f2a9c01d4e5b6a7");
        assert!(temp.is_temporary() && !temp.is_stage());
        assert_eq!(AssetPath::from_name(temp.as_str()).unwrap(), temp);
        assert!(!AssetPath::new("noise/3f2a.png").unwrap().is_temporary());
        for not in ["temp:noise/", "temp:/3f2a", "temp:no ise/3f2a", "temp:noise/xyz", "temp:noise"] {
            assert!(AssetPath::from_name(not).is_err(), "{not}");
        }
    }

    #[test]
    fn a_chains_stages_are_named_after_the_file_and_never_clash_with_one() {
        let file = AssetPath::new("art/hero.psd").unwrap();
        let stage = AssetPath::stage(2, &file);
        assert_eq!(stage.as_str(), "stage2:art/hero.psd");
        assert!(stage.is_stage() && !file.is_stage());
        assert_eq!(AssetPath::from_name("stage2:art/hero.psd").unwrap(), stage);
        // Not stage names: no number, a zero, a leading zero, a bad path.
        for name in [
            "stage:a.png",
            "stage0:a.png",
            "stage01:a.png",
            "stage1:../a.png",
        ] {
            assert!(AssetPath::from_name(name).is_err(), "{name}");
        }
        // A file may start with `stage`: without a `:`, it is a file.
        assert!(!AssetPath::new("stage1.png").unwrap().is_stage());
    }

    #[test]
    fn normalizes_separators_and_dots() {
        assert_eq!(
            AssetPath::new("./a//b/./c.png").unwrap().as_str(),
            "a/b/c.png"
        );
        assert_eq!(AssetPath::new("a/../b").unwrap().as_str(), "b");
    }

    #[test]
    fn rejects_paths_that_leave_the_root() {
        assert!(matches!(
            AssetPath::new("../x"),
            Err(AssetPathError::EscapesRoot(_))
        ));
        assert!(matches!(
            AssetPath::new("a/../../x"),
            Err(AssetPathError::EscapesRoot(_))
        ));
        assert!(matches!(
            AssetPath::new("/etc/passwd"),
            Err(AssetPathError::Absolute(_))
        ));
        assert!(matches!(
            AssetPath::new("a\\b"),
            Err(AssetPathError::BadChar(..))
        ));
        assert!(matches!(
            AssetPath::new("C:/x"),
            Err(AssetPathError::BadChar(..))
        ));
        assert!(matches!(AssetPath::new("./"), Err(AssetPathError::Empty)));
    }

    #[test]
    fn siblings_resolve_against_the_folder() {
        let p = AssetPath::new("levels/one.lvl").unwrap();
        assert_eq!(p.sibling("tiles.png").unwrap().as_str(), "levels/tiles.png");
        assert_eq!(
            p.sibling("../shared/x.png").unwrap().as_str(),
            "shared/x.png"
        );
        assert!(p.sibling("../../x").is_err());
        assert_eq!(
            AssetPath::new("top.txt")
                .unwrap()
                .sibling("b")
                .unwrap()
                .as_str(),
            "b"
        );
    }

    #[test]
    fn extension_is_the_part_after_the_last_dot() {
        assert_eq!(
            AssetPath::new("a/b.tar.gz").unwrap().extension(),
            Some("gz")
        );
        assert_eq!(AssetPath::new("a/.hidden").unwrap().extension(), None);
        assert_eq!(AssetPath::new("a/README").unwrap().extension(), None);
    }
}
