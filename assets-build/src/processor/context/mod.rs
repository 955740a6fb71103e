//! [`Context`]: a processor's only window on the world, recording as it goes.

pub(crate) mod tools;

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::ProcessError;
use crate::asset_path::{AssetPath, AssetSet};
use crate::buffers::Buffers;
use crate::hash::ContentHash;
use crate::manifest::{AssetRoot, Manifest, Origin, Settings};
use crate::memory_budget::{MemoryBudget, Reservation};
use crate::record::{
    DependencyUse, Diagnostic, FileStamp, Input, InputState, Location, OutputRecord, Record,
    Severity,
};
use crate::store::{Store, StoreError};

/// Builds other assets on demand; implemented by the scheduler.
pub(crate) trait Dependencies: Sync {
    /// The record of `asset` once it is built, on behalf of the step
    /// `requester`; with `stand_in`, if it failed, the last good record
    /// standing in for it (see [`Context::dependency_if_built`]).
    fn record_of(
        &self,
        requester: usize,
        asset: &AssetPath,
        stand_in: bool,
    ) -> Result<Arc<Record>, ProcessError>;
    /// [`Dependencies::record_of`], told the plan index of the asset the
    /// requester asked for last in `near`, and setting it to this one's:
    /// where assets are asked for in plan order, the next is found beside
    /// the last.
    fn record_of_near(
        &self,
        requester: usize,
        asset: &AssetPath,
        stand_in: bool,
        near: &mut usize,
    ) -> Result<Arc<Record>, ProcessError> {
        let _ = near;
        self.record_of(requester, asset, stand_in)
    }
    /// The record of the temporary build of `processor` with `settings`
    /// (see [`Context::generate`]), built first if needed, on behalf of
    /// the step `requester`.
    fn temporary(
        &self,
        requester: usize,
        processor: &str,
        settings: Settings,
    ) -> Result<Arc<Record>, ProcessError>;
    /// Whether this build's discovery found `asset` under the root of the
    /// step `requester`. Its path then has no link on the way out of the
    /// root: discovery fails on a link to a folder or out of the root.
    fn discovered(&self, requester: usize, asset: &AssetPath) -> bool;
    /// Whether a step may go on without a dependency that failed (see
    /// [`Context::dependency_if_built`]).
    fn runs_without_failed(&self) -> bool;
    /// The build's memory budget (see [`Context::reserve_memory`]).
    fn memory(&self) -> &MemoryBudget;
}

/// What a step is, as its context needs to know it.
#[derive(Clone, Copy)]
pub(crate) struct StepInfo<'a> {
    pub index: usize,
    pub asset: &'a AssetPath,
    pub root: &'a AssetRoot,
    /// `root.dir` with symbolic links resolved, to check reads stay inside.
    pub real_root: &'a Path,
    pub processor: &'a str,
    pub settings: &'a Settings,
    pub origin: Option<&'a Origin>,
    /// The platform, when it is part of the step's key.
    pub platform: Option<&'a str>,
    /// How long the step may run (see [`Context::deadline`]).
    pub timeout: std::time::Duration,
    /// The assets its rule's `inputs` globs match (root, path), in order.
    pub inputs: &'a [(usize, AssetPath)],
    /// For a chain's stage after the first: the stage before, whose main
    /// output is this step's source.
    pub previous: Option<&'a AssetPath>,
}

/// What a processor did: filled in by [`Context`], turned into a record.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    pub inputs: Vec<Input>,
    pub dependencies: Vec<DependencyUse>,
    pub references: Vec<AssetPath>,
    pub diagnostics: Vec<Diagnostic>,
    pub outputs: Vec<Emitted>,
    /// Set when a dependency failed: the step is then skipped, not failed.
    pub failed_dependency: Option<AssetPath>,
    /// Set when the step went on without a dependency that failed: its
    /// outputs serve this build, and its record is not kept.
    pub left_out: bool,
}

/// One output a processor emitted.
#[derive(Debug)]
pub(crate) struct Emitted {
    pub label: String,
    pub kind: String,
    pub payload: Payload,
}

/// What an emitted output is.
#[derive(Debug)]
pub(crate) enum Payload {
    /// Bytes the step made: shared when something else keeps them too (an
    /// atlas page that a watched pipeline remembers, [`Memo::remembered`]),
    /// with their hash when it was worked out as they were made.
    Made {
        bytes: Arc<Vec<u8>>,
        hash: Option<ContentHash>,
    },
    /// Bytes made before and held by the store, named by their hash, not
    /// read ([`Context::emit_held`]).
    Held(HeldOutput),
}

impl Emitted {
    /// The output's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        match &self.payload {
            Payload::Made { bytes, .. } => bytes.len() as u64,
            Payload::Held(held) => held.size,
        }
    }

    /// The output's bytes: as made, or read from `store` if held.
    pub(crate) fn into_bytes(self, store: &Store) -> Result<Arc<Vec<u8>>, StoreError> {
        match self.payload {
            Payload::Made { bytes, .. } => Ok(bytes),
            Payload::Held(held) => store.get_shared(&held.hash),
        }
    }
}

/// An output made before that the store still holds: its hash and size
/// ([`Memo::held`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldOutput {
    pub hash: ContentHash,
    pub size: u64,
}

/// The handle a [`super::Processor`] works through. Every file it reads and
/// every asset it uses is recorded, so the next build knows when to rerun it.
pub struct Context<'a> {
    step: StepInfo<'a>,
    manifest: &'a Manifest,
    variant: &'a str,
    store: &'a Store,
    deps: &'a dyn Dependencies,
    recorded: Recorded,
    seen: HashSet<String>,
    used: AssetSet,
    /// The plan index of the asset asked for last (see
    /// [`Dependencies::record_of_near`]).
    near: usize,
    temp_dir: Option<PathBuf>,
    /// Whether the step runs again to have its outputs checked: then
    /// nothing it makes may come from memory ([`Memo`]).
    reproducing: bool,
    /// Memory reserved for this step, given back when it ends.
    reserved: Vec<Reservation<'a>>,
    /// When the step must be done by.
    deadline: std::time::Instant,
}

impl<'a> Context<'a> {
    pub(crate) fn new(
        step: StepInfo<'a>,
        manifest: &'a Manifest,
        variant: &'a str,
        store: &'a Store,
        deps: &'a dyn Dependencies,
    ) -> Context<'a> {
        Context {
            step,
            manifest,
            variant,
            store,
            deps,
            recorded: Recorded::default(),
            seen: HashSet::new(),
            used: AssetSet::default(),
            near: usize::MAX,
            temp_dir: None,
            reproducing: false,
            reserved: Vec::new(),
            deadline: std::time::Instant::now() + step.timeout,
        }
    }

    /// When this step must be done by: its rule's `timeout` (or the
    /// build's) from when it started. A step still running then is
    /// reported and the build stopped; a processor that waits on something
    /// it can stop (an external tool, a network request) should give up by
    /// this time with an error of its own, as the `command` processor kills
    /// its tool.
    pub fn deadline(&self) -> std::time::Instant {
        self.deadline
    }

    /// Reserves `bytes` of the build's memory budget for this step until
    /// it ends: call before decoding something large, with an estimate of
    /// what the decode and its copies will hold (from the file's header,
    /// before allocating), after asking for the other assets the step
    /// needs. Waits while other steps hold the budget, so large decodes
    /// take turns; fails the step, naming the size and the budget, if
    /// `bytes` is more than the whole budget. `what` says what is decoded,
    /// for that message (`"a 16384x16384 image"`).
    pub fn reserve_memory(&mut self, bytes: u64, what: &str) -> Result<(), ProcessError> {
        let deps: &'a dyn Dependencies = self.deps;
        let reservation = (deps.memory().reserve(bytes))
            .map_err(|over| ProcessError::msg(format!("decoding {what} {over}")))?;
        self.reserved.push(reservation);
        Ok(())
    }

    /// Marks a run that checks a step's outputs (`verify`): they are all
    /// made afresh, none taken from a [`Memo`].
    pub(crate) fn reproducing(mut self) -> Context<'a> {
        self.reproducing = true;
        self
    }

    /// What a long-lived pipeline keeps for this step between builds
    /// (see [`Memo`]).
    pub(crate) fn memo(&self) -> Memo<'a> {
        Memo {
            store: self.store,
            remember: !self.reproducing,
        }
    }

    /// The asset being processed.
    pub fn asset(&self) -> &AssetPath {
        self.step.asset
    }

    /// The assets the rule's `inputs` globs match, sorted by path: what a
    /// gathering processor gathers (every `.po` file into one table, every
    /// level into an index). They are inputs of the step already (listed
    /// in its key and hashed before it runs), so adding, removing or
    /// editing one reruns it; read each with [`Context::read`] (those under
    /// this asset's root), or use its built outputs with
    /// [`Context::dependency`].
    pub fn inputs(&self) -> impl Iterator<Item = &AssetPath> {
        self.step.inputs.iter().map(|(_, path)| path)
    }

    /// The build variant: `dev`, `release` or another profile name.
    pub fn variant(&self) -> &str {
        self.variant
    }

    /// The platform this step is built for (`web`, as declared under
    /// `[package.metadata.assets.platforms]`), when the step's key includes
    /// it: its settings differ on the platform (its rule's `platforms.<name>`
    /// or the platform's `settings.<processor>`), or its processor is
    /// [`platform_dependent`](super::Processor::platform_dependent). `None`
    /// otherwise, also when building for a platform: such a step is shared
    /// by every platform, so its outputs must not depend on one.
    pub fn platform(&self) -> Option<&str> {
        self.step.platform
    }

    /// The package directory (where `Cargo.toml` is). External tools run here.
    pub fn package_dir(&self) -> &Path {
        &self.manifest.package_dir
    }

    /// The asset's settings as `T`. Errors point at the rule in `Cargo.toml`.
    pub(crate) fn settings<T: DeserializeOwned>(&self) -> Result<T, ProcessError> {
        self.step.settings.get().map_err(|e| {
            let message = format!(
                "invalid settings for processor `{}`: {}",
                self.step.processor, e.message
            );
            let mut error = match self.step.origin {
                Some(origin) => self.manifest.error_at(origin, message),
                None => self.manifest.error(message),
            };
            if let Some(help) = e.help {
                error = error.help(help);
            }
            ProcessError::Settings {
                processor: self.step.processor.to_owned(),
                error: Box::new(error),
            }
        })
    }

    /// The asset's own bytes.
    pub fn source(&mut self) -> Result<Vec<u8>, ProcessError> {
        if let Some(previous) = self.step.previous {
            return self.previous_output(previous);
        }
        if self.step.asset.is_temporary() {
            return Err(ProcessError::msg(format!(
                "`{}` is a temporary build: it has parameters, and no source file",
                self.step.asset
            )));
        }
        let asset = self.step.asset.clone();
        self.read_asset(&asset)
    }

    /// Records the asset's own file as an input and returns its path on disk,
    /// for external tools that read it themselves. In a chain's later
    /// stage, the stage before's output, written to a file of the same
    /// name in [`Context::temp_dir`].
    pub fn source_file(&mut self) -> Result<PathBuf, ProcessError> {
        let bytes = self.source()?;
        if self.step.previous.is_none() {
            return Ok(self.step.root.dir.join(self.step.asset.as_str()));
        }
        let name = self.step.asset.file_name();
        let file = self.temp_dir()?.join(name);
        fs::write(&file, bytes).map_err(|source| ProcessError::Read {
            path: file.display().to_string(),
            source,
        })?;
        Ok(file)
    }

    /// The main output of `previous`, the chain's stage before this one,
    /// used as a dependency: when it is unchanged, this step is fresh.
    fn previous_output(&mut self, previous: &AssetPath) -> Result<Vec<u8>, ProcessError> {
        let outputs = self.depend(previous.clone(), false)?;
        if !outputs.outputs().iter().any(|o| o.label.is_empty()) {
            let labels: Vec<&str> = (outputs.outputs().iter())
                .map(|o| o.label.as_str())
                .collect();
            return Err(ProcessError::msg(format!(
                "the chain's stage `{previous}` made no main output for the next stage to read, \
                 only labelled ones: {}",
                labels.join(", ")
            )));
        }
        outputs.bytes("")
    }

    /// Reads `path` (relative to the asset root). A missing file is an error,
    /// and is recorded, so creating it reruns this step.
    pub fn read(&mut self, path: &str) -> Result<Vec<u8>, ProcessError> {
        self.read_asset(&AssetPath::new(path)?)
    }

    /// Reads `path` (relative to the asset root) if it exists. `None` is
    /// recorded too: creating the file later reruns this step.
    pub fn try_read(&mut self, path: &str) -> Result<Option<Vec<u8>>, ProcessError> {
        self.try_read_asset(&AssetPath::new(path)?)
    }

    /// Whether `path` (relative to the asset root) exists. A miss is recorded,
    /// so creating the file later reruns this step; a hit is not an input by
    /// itself (read it, or depend on it, to make it one).
    pub fn exists(&mut self, path: &AssetPath) -> bool {
        let file = self.step.root.dir.join(path.as_str());
        let found = fs::metadata(&file).is_ok_and(|m| m.is_file());
        if !found {
            let name = self.input_name(path);
            self.record(name, InputState::Absent { absent: true });
        }
        found
    }

    /// Whether `path` is an asset of this build under this step's root
    /// (a file discovery found; hidden files are not assets), which
    /// [`Context::reference`] can then name.
    pub fn is_asset(&self, path: &AssetPath) -> bool {
        self.deps.discovered(self.step.index, path)
    }

    fn read_asset(&mut self, path: &AssetPath) -> Result<Vec<u8>, ProcessError> {
        self.try_read_asset(path)?
            .ok_or_else(|| ProcessError::NotFound {
                path: self.input_name(path),
            })
    }

    fn try_read_asset(&mut self, path: &AssetPath) -> Result<Option<Vec<u8>>, ProcessError> {
        let name = self.input_name(path);
        let file = self.step.root.dir.join(path.as_str());
        let read_err = |source: io::Error| ProcessError::Read {
            path: name.clone(),
            source,
        };
        let mut f = match fs::File::open(&file) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.record(name, InputState::Absent { absent: true });
                return Ok(None);
            }
            Err(e) => return Err(read_err(e)),
        };
        // Symbolic links may point anywhere; follow them only within the
        // root. What discovery found is known to stay inside (a file
        // replaced by such a link during the build fails the next build's
        // discovery); anything else, a hidden file say, is resolved: one
        // `readlink` per read of every asset was 2-3% of a cold build.
        if !self.deps.discovered(self.step.index, path) {
            let real = real_path(&f, &file).map_err(read_err)?;
            if !real.starts_with(self.step.real_root) {
                return Err(ProcessError::EscapesRoot { path: name });
            }
        }
        let Some((state, bytes)) = read_stamped(&mut f).map_err(read_err)? else {
            return Err(read_err(io::Error::other("it is a directory")));
        };
        self.record(name, state);
        Ok(Some(bytes))
    }

    /// `assets/<path>`: how inputs are named in records.
    fn input_name(&self, path: &AssetPath) -> String {
        input_name(self.step.root, path)
    }

    /// Lists `asset` as a dependency whose outputs hashed to `outputs_hash`,
    /// once: the first use is the one the step saw.
    fn use_dependency(&mut self, asset: AssetPath, outputs_hash: ContentHash) {
        if self.used.insert(asset.clone()) {
            (self.recorded.dependencies).push(DependencyUse {
                asset,
                outputs_hash,
            });
        }
    }

    fn record(&mut self, path: String, state: InputState) {
        if self.seen.insert(path.clone()) {
            self.recorded.inputs.push(Input { path, state });
        }
    }

    /// The outputs of another asset, built first if needed. The use is
    /// recorded: when those outputs change, this step reruns.
    pub fn dependency(&mut self, asset: &str) -> Result<DependencyOutputs<'a>, ProcessError> {
        self.depend(AssetPath::new(asset)?, false)
    }

    /// [`Context::dependency`], for a processor that can do without one of
    /// its inputs (an atlas packs the sprites that built), in a build that
    /// writes parcels anyway ([`crate::unstable::OnFailure::StandIn`]). If `asset`
    /// failed, its last good outputs stand in for it; if it never built,
    /// this is `None`, and this step's outputs serve this build's parcels
    /// only: its record is not kept, so the next build runs it again. In a
    /// build that keeps parcels as they were, a failed dependency is an
    /// error as with [`Context::dependency`].
    pub fn dependency_if_built(
        &mut self,
        asset: &str,
    ) -> Result<Option<DependencyOutputs<'a>>, ProcessError> {
        let asset = AssetPath::new(asset)?;
        let stand_in = self.deps.runs_without_failed();
        let failed_before = self.recorded.failed_dependency.is_some();
        match self.depend(asset, stand_in) {
            Err(ProcessError::DependencyFailed { asset }) if stand_in => {
                if !failed_before {
                    self.recorded.failed_dependency = None;
                }
                self.recorded.left_out = true;
                // Listed with no outputs' hash, so that whatever it builds
                // next makes this step stale (also for a watched pipeline,
                // which reruns what depends on a saved file).
                self.use_dependency(asset, ContentHash::from_bytes([0; 32]));
                Ok(None)
            }
            other => other.map(Some),
        }
    }

    /// Builds a temporary asset and returns its outputs, as
    /// [`Context::dependency`] does for an asset: `processor` run with
    /// `parameters` as its settings and no source file (a noise texture
    /// from a seed, a shader permutation).
    ///
    /// It is a step of its own, `temp:<processor>/<digest>`, cached by the
    /// processor's name, version and code, the parameters and the variant:
    /// asked for again with the same ones, in this build or a later one, it
    /// does not run again while the files it read are unchanged. Its
    /// outputs serve this step (take what it needs into its own outputs):
    /// no parcel holds them. What it read counts as this step's input too,
    /// so editing such a file reruns both. A temporary build reads files
    /// only: it cannot ask for an asset's outputs or another temporary
    /// build.
    pub fn generate(
        &mut self,
        processor: &str,
        parameters: &impl serde::Serialize,
    ) -> Result<DependencyOutputs<'a>, ProcessError> {
        if self.step.asset.is_temporary() {
            return Err(ProcessError::msg(format!(
                "`{}` is a temporary build: it cannot ask for another (`{processor}`)",
                self.step.asset
            )));
        }
        let table = toml::Table::try_from(parameters).map_err(|e| {
            ProcessError::msg(format!(
                "the parameters of a temporary `{processor}` build are no table of settings: {e}"
            ))
        })?;
        let record = self
            .deps
            .temporary(self.step.index, processor, Settings::from_table(table))?;
        for input in &record.inputs {
            self.record(input.path.clone(), input.state.clone());
        }
        self.use_dependency(record.asset.clone(), record.outputs_hash());
        Ok(DependencyOutputs {
            record,
            store: self.store,
        })
    }

    fn depend(
        &mut self,
        asset: AssetPath,
        stand_in: bool,
    ) -> Result<DependencyOutputs<'a>, ProcessError> {
        if self.step.asset.is_temporary() {
            return Err(ProcessError::msg(format!(
                "`{}` is a temporary build: it reads files, and cannot use the outputs of `{asset}`",
                self.step.asset
            )));
        }
        let near = &mut self.near;
        let record = match (self.deps).record_of_near(self.step.index, &asset, stand_in, near) {
            Ok(r) => r,
            Err(e) => {
                if let ProcessError::DependencyFailed { asset } = &e {
                    self.recorded
                        .failed_dependency
                        .get_or_insert_with(|| asset.clone());
                }
                return Err(e);
            }
        };
        self.use_dependency(asset, record.outputs_hash());
        Ok(DependencyOutputs {
            record,
            store: self.store,
        })
    }

    /// Says that this step's outputs name the resources of `asset` (an
    /// asset of this build, see [`Context::is_asset`]), as a model names its
    /// textures, instead of holding a copy: every parcel that holds this
    /// step's outputs holds that asset's too, whatever its globs say. The
    /// asset is not built first, and its contents are not an input: when
    /// they change, this step does not rerun; when it stops being an asset,
    /// it does.
    pub fn reference(&mut self, asset: &AssetPath) -> Result<(), ProcessError> {
        if !self.is_asset(asset) {
            return Err(ProcessError::NoSuchAsset {
                asset: asset.clone(),
            });
        }
        if !self.recorded.references.contains(asset) {
            self.recorded.references.push(asset.clone());
        }
        Ok(())
    }

    /// Warns of something the user would want to know though the step
    /// succeeded (a setting that does little, a character a font lacks).
    /// Printed with the asset's name (cargo-style, as a JSON
    /// `asset-warning` message, as a `cargo::warning` from a build script),
    /// counted (`--deny-warnings` fails the build on it), and kept with the
    /// step: a build that reuses it says it again.
    pub fn warn(&mut self, message: impl Into<String>) {
        self.say(Severity::Warning, None, message.into());
    }

    /// [`Context::warn`] at a place in the input: printed as
    /// `path:line:column`, which editors turn into a link.
    pub fn warn_at(&mut self, at: Location, message: impl Into<String>) {
        self.say(Severity::Warning, Some(at), message.into());
    }

    /// Notes something worth knowing that needs no fixing (what a lossy
    /// setting chose, say): printed and kept like a warning, never
    /// counted as one.
    pub fn note(&mut self, message: impl Into<String>) {
        self.say(Severity::Note, None, message.into());
    }

    /// [`Context::note`] at a place in the input.
    pub fn note_at(&mut self, at: Location, message: impl Into<String>) {
        self.say(Severity::Note, Some(at), message.into());
    }

    fn say(&mut self, severity: Severity, location: Option<Location>, message: String) {
        self.recorded.diagnostics.push(Diagnostic {
            severity,
            message,
            location,
        });
    }

    /// Emits the main output of the asset.
    pub fn emit(&mut self, kind: &str, bytes: Vec<u8>) -> Result<(), ProcessError> {
        self.emit_labeled("", kind, bytes)
    }

    /// Emits a sub-resource, named `<asset>#<label>` in parcels.
    pub fn emit_labeled(
        &mut self,
        label: &str,
        kind: &str,
        bytes: Vec<u8>,
    ) -> Result<(), ProcessError> {
        let bytes = Arc::new(bytes);
        self.push_output(label, kind, Payload::Made { bytes, hash: None })
    }

    /// [`Context::emit_labeled`] of bytes kept elsewhere too, whose hash
    /// was worked out as they were made: neither copied nor hashed again.
    pub(crate) fn emit_shared(
        &mut self,
        label: &str,
        kind: &str,
        bytes: Arc<Vec<u8>>,
        hash: ContentHash,
    ) -> Result<(), ProcessError> {
        debug_assert_eq!(hash, ContentHash::of(&bytes));
        let hash = Some(hash);
        self.push_output(label, kind, Payload::Made { bytes, hash })
    }

    /// [`Context::emit_labeled`] of bytes made before, that the store
    /// still holds ([`Memo::held`] said so): named by their hash, neither
    /// read nor made again. A watched atlas emits its unchanged pages so
    /// when its memory no longer has their bytes.
    pub(crate) fn emit_held(
        &mut self,
        label: &str,
        kind: &str,
        held: HeldOutput,
    ) -> Result<(), ProcessError> {
        debug_assert!(!self.reproducing, "a step checked makes every output");
        self.push_output(label, kind, Payload::Held(held))
    }

    fn push_output(
        &mut self,
        label: &str,
        kind: &str,
        payload: Payload,
    ) -> Result<(), ProcessError> {
        if self.recorded.outputs.iter().any(|o| o.label == label) {
            return Err(ProcessError::DuplicateOutput {
                label: label.to_owned(),
            });
        }
        self.recorded.outputs.push(Emitted {
            label: label.to_owned(),
            kind: kind.to_owned(),
            payload,
        });
        Ok(())
    }

    /// A private, empty directory for this step, removed when it ends.
    pub fn temp_dir(&mut self) -> Result<&Path, ProcessError> {
        if self.temp_dir.is_none() {
            let dir = self.store.temp_path("step");
            fs::create_dir_all(&dir).map_err(|source| ProcessError::Read {
                path: dir.display().to_string(),
                source,
            })?;
            self.temp_dir = Some(dir);
        }
        Ok(self.temp_dir.as_deref().expect("just set"))
    }

    pub(crate) fn finish(mut self) -> Recorded {
        std::mem::take(&mut self.recorded)
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        if let Some(dir) = &self.temp_dir {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

/// How an input under `root` is named in records: relative to the package.
pub(crate) fn input_name(root: &AssetRoot, path: &AssetPath) -> String {
    if root.name == "." {
        path.to_string()
    } else {
        format!("{}/{path}", root.name)
    }
}

/// The open file's stamp and bytes, as an input's state; `None` for a
/// directory. The stamp is taken before the bytes are read: a write in
/// between makes the next check re-hash, never miss the change.
pub(super) fn read_stamped(f: &mut fs::File) -> io::Result<Option<(InputState, Vec<u8>)>> {
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    io::Read::read_to_end(f, &mut bytes)?;
    let state = InputState::Present {
        stamp: FileStamp::of(&meta),
        hash: ContentHash::of(&bytes),
    };
    Ok(Some((state, bytes)))
}

/// What a step may keep beyond itself, for one that makes large outputs
/// from parts that mostly stay the same (an atlas's pages): large buffers
/// to reuse, and values made from inputs a hash names. Shared by the
/// threads of the step.
#[derive(Clone, Copy)]
pub(crate) struct Memo<'a> {
    store: &'a Store,
    remember: bool,
}

impl<'a> Memo<'a> {
    /// The build's pool of large buffers (`buffers.rs`).
    pub(crate) fn buffers(&self) -> &'a Buffers {
        self.store.buffers()
    }

    /// The fact `key` names, if a long-lived pipeline keeps it: a small
    /// value that is a pure function of what `key` hashes (a sprite's
    /// size, a group's layout), kept apart from the large values of
    /// [`Memo::remembered`], so that these do not push it out.
    pub(crate) fn fact<T: Send + Sync + 'static>(&self, key: &ContentHash) -> Option<Arc<T>> {
        self.remember.then(|| self.store.fact(key)).flatten()
    }

    /// [`Memo::fact`] of each of `keys`, looked up together.
    pub(crate) fn facts<T: Send + Sync + 'static>(&self, keys: &[ContentHash]) -> Vec<Option<Arc<T>>> {
        if self.remember {
            self.store.facts(keys)
        } else {
            vec![None; keys.len()]
        }
    }

    /// Keeps `value`, about `size` bytes, as the fact `key` names (see
    /// [`Memo::fact`]).
    pub(crate) fn keep_fact<T: Send + Sync + 'static>(
        &self,
        key: ContentHash,
        value: Arc<T>,
        size: usize,
    ) {
        if self.remember {
            self.store.keep_fact(key, value, size);
        }
    }

    /// The fact `key` names, made by `make` (a pure function of what
    /// `key` hashes) and kept if a long-lived pipeline does not have it.
    pub(crate) fn fact_or<T: Send + Sync + 'static>(
        &self,
        key: &ContentHash,
        make: impl FnOnce() -> Result<T, ProcessError>,
        size: impl FnOnce(&T) -> usize,
    ) -> Result<Arc<T>, ProcessError> {
        if let Some(value) = self.fact(key) {
            return Ok(value);
        }
        let value = make()?;
        let size = size(&value);
        let value = Arc::new(value);
        self.keep_fact(*key, Arc::clone(&value), size);
        Ok(value)
    }

    /// The output that what `key` hashes made before ([`Memo::keep_held`]),
    /// if the store still holds it: to be emitted by its hash
    /// ([`Context::emit_held`]) without making it again. The store's
    /// answer is asked each time: a parcel removed since takes what it
    /// held with it.
    pub(crate) fn held(&self, key: &ContentHash) -> Option<HeldOutput> {
        let held = *self.fact::<HeldOutput>(key)?;
        self.store.has(&held.hash, held.size).then_some(held)
    }

    /// Notes that what `key` hashes made the output `held` (see
    /// [`Memo::held`]).
    pub(crate) fn keep_held(&self, key: ContentHash, held: HeldOutput) {
        self.keep_fact(key, Arc::new(held), std::mem::size_of::<HeldOutput>() + 64);
    }

    /// What [`Memo::remembered`] keeps under `key`, if a long-lived
    /// pipeline still holds it: looked up without making it, which marks
    /// it as used by this build. A step that makes several values looks
    /// every one up before making any: making one may need room, and the
    /// memory then drops what this build has not used yet, least recently
    /// used first (see `BlobMemory`), which may be the values it was about
    /// to look up.
    pub(crate) fn kept<T: Send + Sync + 'static>(&self, key: &ContentHash) -> Option<Arc<T>> {
        self.remember.then(|| self.store.kept_decoded(key)).flatten()
    }

    /// What `make` makes, which must be a pure function of what `key`
    /// hashes: a long-lived pipeline keeps it as it keeps decoded blobs
    /// ([`Store::decoded`]), and a later build takes it from there. It is
    /// made afresh otherwise, and always when the step runs again to have
    /// its outputs checked.
    pub(crate) fn remembered<T: Send + Sync + 'static>(
        &self,
        key: &ContentHash,
        make: impl FnOnce() -> Result<T, ProcessError>,
        size: impl FnOnce(&T) -> usize,
    ) -> Result<Arc<T>, ProcessError> {
        if self.remember {
            self.store.decoded(key, make, size)
        } else {
            make().map(Arc::new)
        }
    }
}

/// Another asset's outputs, as seen by a processor that depends on it.
pub struct DependencyOutputs<'a> {
    record: Arc<Record>,
    store: &'a Store,
}

impl DependencyOutputs<'_> {
    /// Every output: label, kind, size, hash.
    pub fn outputs(&self) -> &[OutputRecord] {
        &self.record.outputs
    }

    /// The bytes of the output labelled `label` (`""` for the main output).
    pub fn bytes(&self, label: &str) -> Result<Vec<u8>, ProcessError> {
        self.read(self.output(label)?)
    }

    /// What the output labelled `label` decodes to by `decode`, a pure
    /// function of its bytes: kept across builds by a long-lived pipeline
    /// (see [`Store::decoded`]), with `size`, the bytes it holds.
    pub(crate) fn decoded<T: Send + Sync + 'static>(
        &self,
        label: &str,
        decode: impl FnOnce(&[u8]) -> Result<T, ProcessError>,
        size: impl FnOnce(&T) -> usize,
    ) -> Result<Arc<T>, ProcessError> {
        let output = self.output(label)?;
        (self.store).decoded(&output.hash, || decode(&self.read(output)?), size)
    }

    fn output(&self, label: &str) -> Result<&OutputRecord, ProcessError> {
        self.record.output(label).ok_or_else(|| {
            ProcessError::msg(format!(
                "`{}` has no output labelled `{label}`",
                self.record.asset
            ))
        })
    }

    fn read(&self, output: &OutputRecord) -> Result<Vec<u8>, ProcessError> {
        self.store.get(&output.hash).map_err(|e| match e {
            StoreError::CorruptBlob { .. } => ProcessError::CorruptDependency {
                asset: self.record.asset.clone(),
                source: e,
            },
            other => ProcessError::Store(other),
        })
    }
}

/// Where the open file `f` (opened as `path`) really is, links resolved.
/// On Linux one `readlink` of its descriptor: `canonicalize` reads every
/// component of the path.
fn real_path(f: &fs::File, path: &Path) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            return Ok(real);
        }
    }
    let _ = f;
    fs::canonicalize(path)
}
