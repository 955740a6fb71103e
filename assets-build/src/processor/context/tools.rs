//! Inputs a step did not read through [`Context`] itself: the files an
//! external tool reported reading (its depfile), and a rule's `inputs`.
//! They are named by their path in the package, wherever they lie in it,
//! hashed after the tool ran, and a file that changed while it ran is
//! caught ([`ToolInputs::Unsettled`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{Context, read_stamped};
use crate::processor::ProcessError;
use crate::record::InputState;

impl Context<'_> {
    /// Records the files an external tool reported reading (from its
    /// depfile, say): each path is relative to the package directory, where
    /// tools run, or absolute. Files inside the package become inputs, named
    /// by their package-relative path, whether or not they are under an
    /// asset root; a missing one is recorded as absent, so creating it reruns
    /// the step. Files outside the package (a compiler's system headers, the
    /// tool itself) and the cache's own files are not recorded: the step's
    /// `version` setting is the way to say such a thing changed.
    ///
    /// The files are hashed after the tool read them, so `tool_started` says
    /// when it began. A file whose stamp is newer than that (less a margin
    /// for coarse file-system clocks) may have changed after the tool read
    /// it: then nothing is recorded and [`ToolInputs::Unsettled`] says which
    /// file, so the caller can run the tool again (see `command`). With
    /// [`Unsettled::Record`], such files are recorded as unsettled instead,
    /// which makes the next build run the step again.
    pub fn record_tool_inputs(
        &mut self,
        paths: &[&Path],
        tool_started: std::time::SystemTime,
        unsettled: Unsettled,
    ) -> Result<ToolInputs, ProcessError> {
        let since =
            crate::record::system_time_ns(tool_started).saturating_sub(TOOL_CLOCK_MARGIN_NS);
        let mut found = Vec::with_capacity(paths.len());
        for path in paths {
            let Some((name, mut state)) = self.package_file(path)? else {
                continue;
            };
            if let InputState::Present { stamp, .. } = &state
                && stamp.mtime_ns.max(stamp.ctime_ns) >= since
            {
                match unsettled {
                    Unsettled::Report => return Ok(ToolInputs::Unsettled(name)),
                    Unsettled::Record => state = InputState::Unsettled { unsettled: true },
                }
            }
            found.push((name, state));
        }
        for (name, state) in found {
            self.record(name, state);
        }
        Ok(ToolInputs::Recorded)
    }

    /// Records files of the package as they are now, with no check for a
    /// change while something read them: for a file whose content is read
    /// through another program's answer (a lockfile through `cargo
    /// metadata`), written before that answer came. Paths as in
    /// [`Context::record_tool_inputs`]; files outside the package are not
    /// recorded.
    #[cfg_attr(not(feature = "shader-packages"), allow(dead_code))]
    pub(crate) fn record_package_files(&mut self, paths: &[&Path]) -> Result<(), ProcessError> {
        for path in paths {
            if let Some((name, state)) = self.package_file(path)? {
                self.record(name, state);
            }
        }
        Ok(())
    }

    /// Records the assets the rule's `inputs` globs match ([`Context::inputs`]),
    /// read now, before the processor runs and whether or not it reads them.
    pub(crate) fn record_rule_inputs(&mut self) -> Result<(), ProcessError> {
        for (root, path) in self.step.inputs {
            let file = self.manifest.roots[*root].dir.join(path.as_str());
            if let Some((name, state)) = self.package_file(&file)? {
                self.record(name, state);
            }
        }
        Ok(())
    }

    /// A file of the package, by its package-relative name, and what is in
    /// it now; `None` outside the package, in the cache, or for a directory.
    fn package_file(&self, path: &Path) -> Result<Option<(String, InputState)>, ProcessError> {
        let package_dir = self.package_dir().to_owned();
        let joined = package_dir.join(path);
        let read_err = |source: io::Error| ProcessError::Read {
            path: joined.display().to_string(),
            source,
        };
        let real_package = fs::canonicalize(&package_dir).map_err(read_err)?;
        let real_store = fs::canonicalize(self.store.dir()).unwrap_or_default();
        let real = match fs::canonicalize(&joined) {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Absent: name it lexically, the way the tool did.
                let name = package_relative(&normalize(&joined), &normalize(&package_dir));
                return Ok(name.map(|n| (n, InputState::Absent { absent: true })));
            }
            Err(e) => return Err(read_err(e)),
        };
        if real_store != Path::new("") && real.starts_with(&real_store) {
            return Ok(None);
        }
        let Some(name) = package_relative(&real, &real_package) else {
            return Ok(None);
        };
        let mut f = fs::File::open(&real).map_err(read_err)?;
        Ok(read_stamped(&mut f)
            .map_err(read_err)?
            .map(|(state, _)| (name, state)))
    }
}

/// How far before a tool's start a file's stamp still counts as "changed
/// while the tool ran": file-system clocks tick coarsely (a jiffy, up to
/// 10 ms on Linux), so a write just after the start can carry an earlier time.
pub const TOOL_CLOCK_MARGIN: std::time::Duration =
    std::time::Duration::from_nanos(TOOL_CLOCK_MARGIN_NS);

/// What [`Context::record_tool_inputs`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolInputs {
    /// Every file inside the package was recorded.
    Recorded,
    /// This file (package-relative) changed after the tool started, so what
    /// the tool read is unknown; nothing was recorded.
    Unsettled(String),
}

/// What [`Context::record_tool_inputs`] does with a file that changed after
/// the tool started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsettled {
    /// Record nothing and say which file: the caller runs the tool again.
    Report,
    /// Record it as unsettled: the next build runs the step again.
    Record,
}

const TOOL_CLOCK_MARGIN_NS: u64 = 20_000_000;

/// `path` relative to `base`, `/`-separated, if it lies inside it.
fn package_relative(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    let name = parts?.join("/");
    (!name.is_empty()).then_some(name)
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
