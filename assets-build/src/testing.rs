//! A test kit for processors: run one [`Processor::process`] in a plain unit
//! test, with its inputs given as bytes, and look at what it did.
//!
//! ```
//! use assets_build::testing::ProcessorTest;
//! # use assets_build::{Context, ProcessError, Processor};
//! # struct Upper;
//! # impl Processor for Upper {
//! #     type Settings = assets_build::NoSettings;
//! #     fn name(&self) -> &str { "upper" }
//! #     fn version(&self) -> u32 { 1 }
//! #     fn process(&self, ctx: &mut Context<'_>, _: assets_build::NoSettings) -> Result<(), ProcessError> {
//! #         let _ = ctx.try_read("notes/glossary.txt")?;
//! #         let text = ctx.source()?;
//! #         ctx.emit("text", text.to_ascii_uppercase())
//! #     }
//! # }
//! let run = ProcessorTest::new("notes/a.txt", "hello").run(&Upper).expect_ok();
//! assert_eq!(run.main(), b"HELLO");
//! assert_eq!(run.read, ["notes/a.txt"]);
//! assert_eq!(run.missing, ["notes/glossary.txt"]);
//! ```
//!
//! The processor runs against the same [`Context`] a build gives it, so what
//! it records is exactly what a build would record: every file read (with
//! [`read`](Processed::read)) or looked for and missed
//! ([`missing`](Processed::missing)), the assets it depended on and
//! referenced, its warnings and outputs. Under it, the kit writes the files
//! to a package in a fresh temporary folder (removed when the test ends)
//! and keeps a store there, so external tools find real files; no
//! scheduler runs: the other assets a processor asks for are the outputs
//! the test gave with [`ProcessorTest::dependency`].

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::asset_path::AssetPath;
use crate::manifest::{AssetRoot, Manifest, Settings};
use crate::memory_budget::{DEFAULT_MEMORY_BUDGET, MemoryBudget};
use crate::processor::context::{Dependencies, Emitted, Recorded, StepInfo};
use crate::processor::{Context, ErasedProcessor, ProcessError, Processor};
use crate::record::{Diagnostic, InputState, OutputRecord, RECORD_FORMAT, Record};
use crate::store::{Store, StoreError};

/// One processor run to set up: the asset, its settings, the files beside
/// it and the outputs of the assets it may ask for.
pub struct ProcessorTest {
    asset: String,
    files: BTreeMap<String, Vec<u8>>,
    settings: String,
    variant: String,
    platform: Option<String>,
    dependencies: BTreeMap<String, Vec<(String, String, Vec<u8>)>>,
    /// Paths of files the rule's `inputs` globs would match.
    inputs: Vec<String>,
}

impl ProcessorTest {
    /// A run of the processor on `asset` (a path under the asset root, as
    /// rules match it: `levels/one.lvl`) whose file holds `source`.
    pub fn new(asset: &str, source: impl AsRef<[u8]>) -> ProcessorTest {
        let mut files = BTreeMap::new();
        files.insert(asset.to_owned(), source.as_ref().to_vec());
        ProcessorTest {
            asset: asset.to_owned(),
            files,
            settings: String::new(),
            variant: "dev".to_owned(),
            platform: None,
            dependencies: BTreeMap::new(),
            inputs: Vec::new(),
        }
    }

    /// A file the rule's `inputs` globs match, holding `bytes`: listed by
    /// [`Context::inputs`] (sorted by path, as a build lists them), and read
    /// as an input before the processor runs, as a build reads it.
    pub fn input(mut self, path: &str, bytes: impl AsRef<[u8]>) -> ProcessorTest {
        self.inputs.push(path.to_owned());
        self.inputs.sort();
        self.file(path, bytes)
    }

    /// Another file under the asset root, which the processor may read.
    pub fn file(mut self, path: &str, bytes: impl AsRef<[u8]>) -> ProcessorTest {
        self.files.insert(path.to_owned(), bytes.as_ref().to_vec());
        self
    }

    /// The asset's settings, as a rule's keys in TOML: `"pivot = [0.5, 1.0]"`.
    pub fn settings(mut self, toml: &str) -> ProcessorTest {
        self.settings = toml.to_owned();
        self
    }

    /// The build variant (`dev` unless said).
    pub fn variant(mut self, variant: &str) -> ProcessorTest {
        self.variant = variant.to_owned();
        self
    }

    /// The platform, as [`Context::platform`] gives it.
    pub fn platform(mut self, platform: &str) -> ProcessorTest {
        self.platform = Some(platform.to_owned());
        self
    }

    /// Another asset of the build, already built: what
    /// [`Context::dependency`] on `asset` gives, as `(label, kind, bytes)`
    /// (label `""` for the main output).
    pub fn dependency(mut self, asset: &str, outputs: &[(&str, &str, &[u8])]) -> ProcessorTest {
        let outputs = outputs
            .iter()
            .map(|(l, k, b)| (l.to_string(), k.to_string(), b.to_vec()));
        self.dependencies
            .insert(asset.to_owned(), outputs.collect());
        self
    }

    /// Runs `processor` once (its `check_settings` first, as a build does).
    /// An asset it asks for that the test gave as a [`file`](Self::file),
    /// not as a [`dependency`](Self::dependency), is built first by the
    /// same processor with the same settings, as a shader's imported module
    /// is in a build. Panics only if the kit cannot set up its temporary
    /// package.
    pub fn run(&self, processor: &impl Processor) -> Processed {
        match self.try_run(processor) {
            Ok(run) => run,
            Err(e) => Processed::with(Err(e)),
        }
    }

    fn try_run(&self, processor: &dyn ErasedProcessor) -> Result<Processed, ProcessError> {
        let package = TempPackage::new();
        let root_dir = package.0.join("assets");
        for (path, bytes) in &self.files {
            let file = root_dir.join(AssetPath::new(path)?.as_str());
            std::fs::create_dir_all(file.parent().expect("under the root"))
                .expect("create the test package's folders");
            std::fs::write(&file, bytes).expect("write a test file");
        }
        let manifest_text = "[package]\nname = \"processor-test\"\nversion = \"0.0.0\"\n";
        let manifest = Manifest::parse(&package.0.join("Cargo.toml"), manifest_text)
            .expect("the test package's manifest parses");
        let store = Store::open(&package.0.join("cache")).expect("open the test store");
        let mut given = BTreeMap::new();
        for (asset, outputs) in &self.dependencies {
            let asset = AssetPath::new(asset)?;
            let outputs = outputs
                .iter()
                .map(|(l, k, b)| (l.clone(), k.clone(), Arc::new(b.clone())));
            let record = stored_record(&store, &asset, outputs.collect(), &self.variant)?;
            given.insert(asset, record);
        }
        let table: toml::Table = (self.settings.parse())
            .map_err(|e| ProcessError::msg(format!("the test's settings are not TOML: {e}")))?;
        let settings = Settings::from_table(table);
        if let Err(e) = processor.check_settings(&settings) {
            let help = e.help.map(|h| format!(" ({h})")).unwrap_or_default();
            return Err(ProcessError::msg(format!(
                "invalid settings for processor `{}`: {}{help}",
                processor.name(),
                e.message
            )));
        }
        let files = (self.files.keys())
            .map(|p| AssetPath::new(p))
            .collect::<Result<_, _>>()?;
        let real_root = std::fs::canonicalize(&root_dir).unwrap_or_else(|_| root_dir.clone());
        let bench = Bench {
            processor,
            manifest: &manifest,
            store: &store,
            root: AssetRoot {
                name: "assets".to_owned(),
                dir: root_dir,
            },
            real_root,
            settings,
            variant: &self.variant,
            platform: self.platform.as_deref(),
            files,
            built: Mutex::new(given),
            building: Mutex::new(Vec::new()),
            memory: MemoryBudget::new(DEFAULT_MEMORY_BUDGET),
        };
        let inputs = (self.inputs.iter())
            .map(|p| Ok((0, AssetPath::new(p)?)))
            .collect::<Result<Vec<_>, ProcessError>>()?;
        let (result, recorded) = bench.process(&AssetPath::new(&self.asset)?, &inputs);
        let mut run = Processed::with(result);
        for input in recorded.inputs {
            let name = match input.path.strip_prefix("assets/") {
                Some(under_root) => under_root.to_owned(),
                None => input.path,
            };
            match input.state {
                InputState::Absent { .. } => run.missing.push(name),
                _ => run.read.push(name),
            }
        }
        run.dependencies = recorded.dependencies.into_iter().map(|d| d.asset).collect();
        run.references = recorded.references;
        run.diagnostics = recorded.diagnostics;
        run.outputs = (recorded.outputs.into_iter())
            .map(|o| {
                let (label, kind) = (o.label.clone(), o.kind.clone());
                let bytes = Arc::unwrap_or_clone(o.into_bytes(&store)?);
                Ok(Output { label, kind, bytes })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(run)
    }
}

/// What one run did, in the order it did it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Processed {
    /// What `process` returned.
    pub result: Result<(), ProcessError>,
    /// The files it read: paths under the asset root (`levels/one.lvl`), or
    /// relative to the package for a tool's input outside the root.
    pub read: Vec<String>,
    /// The files it looked for and did not find: creating one would rerun
    /// the step in a build.
    pub missing: Vec<String>,
    /// The assets whose outputs it used.
    pub dependencies: Vec<AssetPath>,
    /// The assets its outputs name ([`Context::reference`]).
    pub references: Vec<AssetPath>,
    /// Its warnings and notes ([`Context::warn`], [`Context::note`]), in
    /// order; [`Processed::warnings`] has the warnings' messages.
    pub diagnostics: Vec<Diagnostic>,
    /// Its outputs.
    pub outputs: Vec<Output>,
}

/// One output of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// `""` for the main output.
    pub label: String,
    /// Its kind (`text`, `image`, your own).
    pub kind: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Processed {
    fn with(result: Result<(), ProcessError>) -> Processed {
        Processed {
            result,
            read: Vec::new(),
            missing: Vec::new(),
            dependencies: Vec::new(),
            references: Vec::new(),
            diagnostics: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// The messages of its warnings, in order.
    pub fn warnings(&self) -> Vec<&str> {
        (self.diagnostics.iter())
            .filter(|d| d.is_warning())
            .map(|d| d.message.as_str())
            .collect()
    }

    /// The run, if it succeeded; panics with the error, and its causes, if
    /// it failed.
    #[track_caller]
    pub fn expect_ok(self) -> Processed {
        if let Some(message) = self.error() {
            panic!("the processor failed: {message}");
        }
        self
    }

    /// The error, with its causes (`a: b`), if the run failed.
    pub fn error(&self) -> Option<String> {
        let error = self.result.as_ref().err()?;
        let mut message = error.to_string();
        let mut cause = std::error::Error::source(error);
        while let Some(c) = cause {
            message = format!("{message}: {c}");
            cause = c.source();
        }
        Some(message)
    }

    /// The output labelled `label` (`""` for the main output).
    pub fn output(&self, label: &str) -> Option<&Output> {
        self.outputs.iter().find(|o| o.label == label)
    }

    /// The main output's bytes; panics if there is none.
    #[track_caller]
    pub fn main(&self) -> &[u8] {
        match self.output("") {
            Some(o) => &o.bytes,
            None => panic!("no main output; outputs: {:?}", self.labels()),
        }
    }

    fn labels(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.label.as_str()).collect()
    }
}

/// A record of `asset` holding `outputs`, which are put in `store`.
/// An output's label, kind and bytes.
type OutputBytes = (String, String, Arc<Vec<u8>>);

/// Each output's label, kind and bytes.
fn with_bytes(outputs: Vec<Emitted>, store: &Store) -> Result<Vec<OutputBytes>, StoreError> {
    (outputs.into_iter())
        .map(|o| {
            let (label, kind) = (o.label.clone(), o.kind.clone());
            Ok((label, kind, o.into_bytes(store)?))
        })
        .collect()
}

fn stored_record(
    store: &Store,
    asset: &AssetPath,
    outputs: Vec<OutputBytes>,
    variant: &str,
) -> Result<Arc<Record>, ProcessError> {
    let mut records = Vec::new();
    for (label, kind, bytes) in outputs {
        records.push(OutputRecord {
            hash: store.put(&bytes)?,
            size: bytes.len() as u64,
            label,
            kind,
        });
    }
    store.flush_packs()?;
    Ok(Arc::new(Record {
        format: RECORD_FORMAT,
        asset: asset.clone(),
        variant: variant.to_owned(),
        processor: "test".to_owned(),
        processor_version: 0,
        processor_code: None,
        settings: "{}".to_owned(),
        key: crate::hash::ContentHash::of(asset.as_str().as_bytes()),
        started_ns: 0,
        inputs: Vec::new(),
        dependencies: Vec::new(),
        references: Vec::new(),
        diagnostics: Vec::new(),
        outputs: records,
        reason: None,
        fetched_from: None,
        outputs_hash: Default::default(),
    }))
}

/// The kit's stand-in for the scheduler: one processor, the test's files,
/// and the assets already built (given, or built on demand).
struct Bench<'a> {
    processor: &'a dyn ErasedProcessor,
    manifest: &'a Manifest,
    store: &'a Store,
    root: AssetRoot,
    real_root: PathBuf,
    settings: Settings,
    variant: &'a str,
    platform: Option<&'a str>,
    files: HashSet<AssetPath>,
    built: Mutex<BTreeMap<AssetPath, Arc<Record>>>,
    /// The assets being built, outermost first, to name a cycle.
    building: Mutex<Vec<AssetPath>>,
    memory: MemoryBudget,
}

impl Bench<'_> {
    /// Runs the processor on `asset`, its rule's `inputs` matching
    /// `inputs`; what it returned and recorded.
    fn process(
        &self,
        asset: &AssetPath,
        inputs: &[(usize, AssetPath)],
    ) -> (Result<(), ProcessError>, Recorded) {
        self.process_with(asset, inputs, &self.settings)
    }

    /// [`Bench::process`] with other settings (a temporary build's).
    fn process_with(
        &self,
        asset: &AssetPath,
        inputs: &[(usize, AssetPath)],
        settings: &Settings,
    ) -> (Result<(), ProcessError>, Recorded) {
        lock(&self.building).push(asset.clone());
        let step = StepInfo {
            index: 0,
            asset,
            root: &self.root,
            real_root: &self.real_root,
            processor: self.processor.name(),
            settings,
            origin: None,
            platform: self.platform,
            timeout: crate::manifest::DEFAULT_STEP_TIMEOUT,
            inputs,
            previous: None,
        };
        let mut ctx = Context::new(step, self.manifest, self.variant, self.store, self);
        // Read before the processor runs, as the scheduler reads them.
        let result = (ctx.record_rule_inputs()).and_then(|()| self.processor.process(&mut ctx));
        let recorded = ctx.finish();
        lock(&self.building).pop();
        (result, recorded)
    }
}

impl Dependencies for Bench<'_> {
    fn record_of(&self, _: usize, asset: &AssetPath, _: bool) -> Result<Arc<Record>, ProcessError> {
        if let Some(record) = lock(&self.built).get(asset) {
            return Ok(Arc::clone(record));
        }
        if !self.files.contains(asset) {
            return Err(ProcessError::NoSuchAsset {
                asset: asset.clone(),
            });
        }
        let building = lock(&self.building).clone();
        if let Some(at) = building.iter().position(|a| a == asset) {
            let mut cycle = building[at..].to_vec();
            cycle.push(asset.clone());
            return Err(ProcessError::Cycle { cycle });
        }
        let (result, recorded) = self.process(asset, &[]);
        if let Err(e) = result {
            return Err(match e {
                cycle @ ProcessError::Cycle { .. } => cycle,
                _ => ProcessError::DependencyFailed {
                    asset: asset.clone(),
                },
            });
        }
        let outputs = with_bytes(recorded.outputs, self.store)?;
        let record = stored_record(self.store, asset, outputs, self.variant)?;
        lock(&self.built).insert(asset.clone(), Arc::clone(&record));
        Ok(record)
    }

    /// The kit runs the processor under test alone: a temporary build of
    /// it (a permutation of itself) is made, with what it read left out of
    /// what the test sees; one of another processor cannot be.
    fn temporary(
        &self,
        _: usize,
        processor: &str,
        settings: Settings,
    ) -> Result<Arc<Record>, ProcessError> {
        if processor != self.processor.name() {
            return Err(ProcessError::msg(format!(
                "the test kit runs only `{}`, the processor under test: a temporary `{processor}` build cannot be made here",
                self.processor.name()
            )));
        }
        let name = crate::scheduler::temporary_name(processor, &settings.canonical_json());
        if let Some(record) = lock(&self.built).get(&name) {
            return Ok(Arc::clone(record));
        }
        let (result, recorded) = self.process_with(&name, &[], &settings);
        result?;
        let outputs = with_bytes(recorded.outputs, self.store)?;
        let record = stored_record(self.store, &name, outputs, self.variant)?;
        lock(&self.built).insert(name, Arc::clone(&record));
        Ok(record)
    }

    fn discovered(&self, _: usize, asset: &AssetPath) -> bool {
        self.files.contains(asset) || lock(&self.built).contains_key(asset)
    }

    fn runs_without_failed(&self) -> bool {
        false
    }

    fn memory(&self) -> &MemoryBudget {
        &self.memory
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A package folder of its own under the system's temporary folder,
/// removed when dropped.
struct TempPackage(PathBuf);

impl TempPackage {
    fn new() -> TempPackage {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("assets-processor-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test package");
        TempPackage(dir)
    }
}

impl Drop for TempPackage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(Path::new(&self.0));
    }
}
