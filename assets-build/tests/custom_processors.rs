//! The pipeline driven as a library with user processors: versions, deep
//! dependency chains, failures that skip dependents, panics, reads that
//! a symbolic link would take outside the asset root.

use std::path::Path;
use std::sync::Mutex;

use assets_build::{
    Context, ProcessError, Processor, unstable::BuildOptions, unstable::BuildReport,
    unstable::Event, unstable::Outcome, unstable::Pipeline,
};

/// `*.chain` files name the asset they depend on (or nothing); the output is
/// the chain of names down to the end.
struct Chain {
    version: u32,
}

impl Processor for Chain {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "chain"
    }
    fn version(&self) -> u32 {
        self.version
    }
    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let source = String::from_utf8(ctx.source()?).map_err(ProcessError::other)?;
        let mut out = ctx.asset().to_string();
        match source.trim() {
            "" => {}
            "panic" => panic!("asked to panic"),
            "fail" => return Err(ProcessError::msg("asked to fail")),
            read if read.starts_with("read ") => {
                let bytes = ctx.read(&read["read ".len()..])?;
                out.push_str(" = ");
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
            next => {
                let dep = ctx.dependency(next)?;
                out.push_str(" > ");
                out.push_str(std::str::from_utf8(&dep.bytes("")?).unwrap());
            }
        }
        ctx.emit("chain", out.into_bytes())
    }
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
             [[package.metadata.assets.rules]]\nmatch = \"**/*.chain\"\nprocessor = \"chain\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("assets")).unwrap();
        Fixture { dir }
    }

    fn file(&self, name: &str, contents: &str) -> &Fixture {
        let path = self.dir.path().join("assets").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Builds with `jobs` threads; returns the report and the processed assets, sorted.
    fn build(&self, version: u32, jobs: usize) -> (BuildReport, Vec<String>) {
        let root: &Path = self.dir.path();
        let mut options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        options.jobs = jobs;
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Chain { version });
        let processed = Mutex::new(Vec::new());
        let on_event = |e: &Event<'_>| {
            if let Event::Processing { asset, .. } = e {
                processed.lock().unwrap().push(asset.to_string());
            }
        };
        let report = pipeline.build(&on_event).unwrap();
        let mut processed = processed.into_inner().unwrap();
        processed.sort();
        (report, processed)
    }
}

fn outcome<'a>(report: &'a BuildReport, asset: &str) -> &'a Outcome {
    &report
        .steps
        .iter()
        .find(|s| s.asset.as_str() == asset)
        .unwrap()
        .outcome
}

fn error(report: &BuildReport, asset: &str) -> String {
    match outcome(report, asset) {
        Outcome::Failed { error, .. } => error.to_string(),
        other => panic!("{asset}: {other:?}"),
    }
}

#[test]
fn a_processor_version_bump_reruns_exactly_its_steps() {
    let f = Fixture::new();
    f.file("a.chain", "")
        .file("b.chain", "a.chain")
        .file("notes.txt", "hi");
    assert_eq!(f.build(1, 2).1, ["a.chain", "b.chain", "notes.txt"]);
    assert_eq!(f.build(1, 2).1, Vec::<String>::new());
    let (report, processed) = f.build(2, 2);
    assert_eq!(processed, ["a.chain", "b.chain"]);
    let Outcome::Ran { reason } = outcome(&report, "a.chain") else {
        panic!()
    };
    let reason = serde_json::to_value(reason).unwrap();
    assert_eq!(reason["kind"], "processor-version-changed");
    assert_eq!(
        (reason["previous"].as_u64(), reason["current"].as_u64()),
        (Some(1), Some(2))
    );
}

#[test]
fn a_deep_dependency_chain_builds_on_one_and_two_threads_without_deadlock() {
    const N: usize = 300;
    for jobs in [1, 2] {
        let f = Fixture::new();
        for i in 0..N {
            let next = if i + 1 < N {
                format!("c{:03}.chain", i + 1)
            } else {
                String::new()
            };
            f.file(&format!("c{i:03}.chain"), &next);
        }
        let (report, processed) = f.build(1, jobs);
        assert!(report.success());
        assert_eq!(processed.len(), N, "every step runs exactly once");
        assert_eq!(
            report.steps[0].record.as_ref().unwrap().dependencies.len(),
            1
        );
        // Whitespace at the end of the chain changes its input but not its
        // output: only that step reruns (early cutoff).
        f.file(&format!("c{:03}.chain", N - 1), "\n");
        let (_, processed) = f.build(1, jobs);
        assert_eq!(processed, [format!("c{:03}.chain", N - 1)]);
        // A real change at the end reruns every step above it.
        f.file(&format!("c{:03}.chain", N - 1), "c000.chain");
        // Now the chain is a cycle. Which step closes it depends on which
        // worker got where first: that one fails naming the cycle, every
        // other one fails or is skipped, and nothing hangs.
        let (report, _) = f.build(1, jobs);
        let closed = report
            .steps
            .iter()
            .filter(|s| {
                matches!(&s.outcome, Outcome::Failed { error, .. }
                    if error.to_string().starts_with("dependency cycle: "))
            })
            .count();
        assert!(closed >= 1, "no step reported the cycle");
        assert!(
            report
                .steps
                .iter()
                .all(|s| matches!(s.outcome, Outcome::Failed { .. } | Outcome::Skipped { .. })),
            "a step of the cycle succeeded"
        );
    }
}

#[test]
fn a_failure_skips_its_dependents_and_a_panic_fails_only_its_asset() {
    let f = Fixture::new();
    f.file("bad.chain", "fail")
        .file("user.chain", "bad.chain")
        .file("user2.chain", "user.chain")
        .file("boom.chain", "panic")
        .file("fine.chain", "");
    let (report, _) = f.build(1, 2);
    assert_eq!(error(&report, "bad.chain"), "asked to fail");
    assert!(error(&report, "boom.chain").contains("panicked: asked to panic"));
    assert!(
        matches!(outcome(&report, "user.chain"), Outcome::Skipped { dependency } if dependency.as_str() == "bad.chain")
    );
    assert!(
        matches!(outcome(&report, "user2.chain"), Outcome::Skipped { dependency } if dependency.as_str() == "user.chain")
    );
    assert!(matches!(
        outcome(&report, "fine.chain"),
        Outcome::Ran { .. }
    ));
    assert_eq!(
        (report.failed(), report.skipped(), report.success()),
        (2, 2, false)
    );
    // Fixing the failure builds the dependents.
    f.file("bad.chain", "");
    let (report, processed) = f.build(1, 2);
    assert_eq!(
        processed,
        ["bad.chain", "boom.chain", "user.chain", "user2.chain"]
    );
    assert_eq!(report.failed(), 1);
}

#[test]
fn depending_on_itself_is_a_cycle_and_a_missing_dependency_is_named() {
    let f = Fixture::new();
    f.file("self.chain", "self.chain")
        .file("lost.chain", "nowhere.chain");
    let (report, _) = f.build(1, 1);
    assert_eq!(
        error(&report, "self.chain"),
        "dependency cycle: `self.chain` -> `self.chain`"
    );
    assert_eq!(
        error(&report, "lost.chain"),
        "no asset named `nowhere.chain`"
    );
}

#[test]
fn a_read_through_a_link_stays_inside_the_asset_root() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    // Hidden names are not assets, so discovery does not check these links;
    // the read must.
    let hidden = f.dir.path().join("assets/.cfg");
    std::fs::create_dir_all(&hidden).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), hidden.join("out.txt")).unwrap();
    std::fs::write(hidden.join("real.txt"), "inside").unwrap();
    std::os::unix::fs::symlink(hidden.join("real.txt"), hidden.join("in.txt")).unwrap();
    f.file("leak.chain", "read .cfg/out.txt")
        .file("fine.chain", "read .cfg/in.txt");
    let (report, _) = f.build(1, 2);
    assert_eq!(
        error(&report, "leak.chain"),
        "`assets/.cfg/out.txt` leads outside the asset root"
    );
    assert!(matches!(
        outcome(&report, "fine.chain"),
        Outcome::Ran { .. }
    ));
}

#[test]
fn a_processor_crate_claims_its_extensions_without_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No rule: `.chain` files would be copied as bytes, but the processor
    // claimed the extension; a rule naming another processor still wins.
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"raw/*\"\nprocessor = \"copy\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets/raw")).unwrap();
    std::fs::write(root.join("assets/a.CHAIN"), "").unwrap();
    std::fs::write(root.join("assets/raw/b.chain"), "").unwrap();
    let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
    let mut pipeline = Pipeline::new(options);
    pipeline
        .registry_mut()
        .register(Chain { version: 1 })
        .claim_extensions("chain", &["chain"]);
    let report = pipeline.build(&|_| {}).unwrap();
    assert!(report.success());
    let processor = |asset: &str| {
        let step = report
            .steps
            .iter()
            .find(|s| s.asset.as_str() == asset)
            .unwrap();
        step.processor.clone()
    };
    assert_eq!(processor("a.CHAIN"), "chain");
    assert_eq!(processor("raw/b.chain"), "copy");
}

/// Loops until told to stop, as a parser stuck on a hostile file would
/// (without the stop).
struct Stuck;

static RELEASE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Processor for Stuck {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "stuck"
    }
    fn version(&self) -> u32 {
        1
    }
    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        while !RELEASE.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        ctx.emit("bytes", Vec::new())
    }
}

#[test]
fn a_step_past_its_deadline_is_reported_once_by_name_while_the_others_finish() {
    let f = Fixture::new();
    std::fs::write(
        f.dir.path().join("Cargo.toml"),
        "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"*.stuck\"\nprocessor = \"stuck\"\ntimeout = 0.3\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"**/*.chain\"\nprocessor = \"chain\"\n",
    )
    .unwrap();
    f.file("hostile.stuck", "")
        .file("a.chain", "")
        .file("b.chain", "a.chain");
    let root = f.dir.path().to_owned();
    let (sent, overdue) = std::sync::mpsc::channel();
    let build = std::thread::spawn(move || {
        let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Chain { version: 1 });
        pipeline.registry_mut().register(Stuck);
        let sent = Mutex::new(sent);
        let on_event = |e: &Event<'_>| {
            if let Some(message) = e.overdue_message() {
                sent.lock().unwrap().send(message).unwrap();
            }
        };
        pipeline.build(&on_event).unwrap()
    });
    let message = overdue
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the stuck step is reported");
    assert!(
        message.starts_with("`hostile.stuck` (stuck) has run for ")
            && message.contains("past its deadline of 0.3 s")
            && message.contains("ignore = [\"hostile.stuck\"]"),
        "{message}"
    );
    // Reported once; released, the build ends with every other step done.
    std::thread::sleep(std::time::Duration::from_millis(400));
    RELEASE.store(true, std::sync::atomic::Ordering::SeqCst);
    let report = build.join().unwrap();
    assert!(overdue.try_recv().is_err(), "said once");
    assert!(matches!(outcome(&report, "b.chain"), Outcome::Ran { .. }));
}

#[test]
fn a_panicking_event_handler_ends_the_build_with_its_panic_not_a_hang() {
    let f = Fixture::new();
    // A chain, so that a worker waits for a step another one finishes.
    f.file("a.chain", "").file("b.chain", "a.chain");
    for i in 0..20 {
        f.file(&format!("c{i}.chain"), "b.chain");
    }
    let root = f.dir.path().to_owned();
    let (sent, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let build = std::panic::catch_unwind(|| {
            let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
            let mut pipeline = Pipeline::new(options);
            pipeline.registry_mut().register(Chain { version: 1 });
            // A progress printer whose pipe closed.
            let on_event = |e: &Event<'_>| {
                if let Event::Finished { step } = e
                    && step.asset.as_str() == "a.chain"
                {
                    panic!("failed printing to stdout: Broken pipe");
                }
            };
            pipeline.build(&on_event).map(|_| ())
        });
        sent.send(build).unwrap();
    });
    let ended = ended
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the build ends");
    let panic = ended.expect_err("the handler's panic reaches the caller");
    assert_eq!(
        panic.downcast_ref::<&str>().copied(),
        Some("failed printing to stdout: Broken pipe")
    );
    // The lock was let go and the cache left whole: the next build
    // succeeds (steps whose records were still in an unwritten batch run
    // again, as after a kill).
    let (report, _) = f.build(1, 2);
    assert!(report.success(), "{:?}", report.failure_summary());
}

/// A processor with settings of its own type.
struct Tiles;

/// `tiles`' keys.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct TileSettings {
    tile_size: u32,
    #[serde(default)]
    strict: bool,
}

impl Processor for Tiles {
    type Settings = TileSettings;

    fn name(&self) -> &str {
        "tiles"
    }

    fn version(&self) -> u32 {
        1
    }

    fn check_settings(
        &self,
        settings: &TileSettings,
    ) -> Result<(), assets_build::processor::SettingsError> {
        match settings.tile_size {
            0 => Err(assets_build::processor::SettingsError {
                message: "`tile-size` must be at least 1".into(),
                help: None,
                key: Some("tile-size".into()),
            }),
            _ => Ok(()),
        }
    }

    fn process(&self, ctx: &mut Context<'_>, s: TileSettings) -> Result<(), ProcessError> {
        let text = format!("{} {}", s.tile_size, s.strict);
        ctx.emit("text", text.into_bytes())
    }
}

#[test]
fn a_typed_settings_typo_names_the_key_its_line_and_the_field_meant() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = |rule: &str| {
        let text = format!(
            "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
             [[package.metadata.assets.rules]]\nmatch = \"*.map\"\nprocessor = \"tiles\"\n{rule}\n"
        );
        std::fs::write(dir.path().join("Cargo.toml"), text).unwrap();
    };
    std::fs::create_dir_all(dir.path().join("assets")).unwrap();
    std::fs::write(dir.path().join("assets/a.map"), "").unwrap();
    let build = || {
        let root = dir.path();
        let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Tiles);
        pipeline.build(&|_: &Event<'_>| {})
    };

    manifest("tile-size = 16\nstrickt = true");
    let error = anyhow_like(build().unwrap_err());
    assert!(
        error.contains("unknown key `strickt` for processor `tiles`"),
        "{error}"
    );
    assert!(error.contains("Cargo.toml:9"), "the key's line: {error}");
    assert!(error.contains("`strict`"), "the field meant: {error}");

    manifest("tile-size = 0");
    let error = anyhow_like(build().unwrap_err());
    assert!(error.contains("`tile-size` must be at least 1"), "{error}");

    manifest("tile-size = 8\nstrict = true");
    let report = build().unwrap();
    assert!(matches!(outcome(&report, "a.map"), Outcome::Ran { .. }));
}

/// An error and its causes, as the CLI prints them.
fn anyhow_like(error: impl std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    text
}

/// Gathers every file its rule's `inputs` match into one table: a
/// localisation table from every `.po`, as a game's own processor would.
struct Strings;

impl Processor for Strings {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "strings"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let members: Vec<String> = ctx.inputs().map(|p| p.to_string()).collect();
        let mut table = String::new();
        for member in members {
            let text = String::from_utf8(ctx.read(&member)?).map_err(ProcessError::other)?;
            table.push_str(&format!("{member}: {}\n", text.trim()));
        }
        ctx.emit("text", table.into_bytes())
    }
}

#[test]
fn a_gathering_processor_reads_every_member_and_reruns_when_one_comes_goes_or_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"locale/strings.table\"\nprocessor = \"strings\"\ninputs = [\"locale/*.po\"]\n",
    )
    .unwrap();
    let write = |name: &str, text: &str| {
        let path = root.join("assets").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("locale/strings.table", "");
    write("locale/fr.po", "bonjour");
    write("locale/de.po", "hallo");
    let build = || {
        let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Strings);
        let report = pipeline.build(&|_: &Event<'_>| {}).unwrap();
        assert!(report.success());
        let step = (report.steps.iter())
            .find(|s| s.asset.as_str() == "locale/strings.table")
            .unwrap();
        let record = step.record.as_ref().unwrap();
        let store = assets_build::unstable::Store::open(&root.join("target/assets")).unwrap();
        let table = String::from_utf8(store.get(&record.outputs[0].hash).unwrap()).unwrap();
        let ran = matches!(step.outcome, Outcome::Ran { .. });
        let inputs: Vec<String> = record.inputs.iter().map(|i| i.path.clone()).collect();
        (table, ran, inputs)
    };
    let (table, ran, inputs) = build();
    assert!(ran);
    assert_eq!(table, "locale/de.po: hallo\nlocale/fr.po: bonjour\n");
    // The members are the step's inputs, which `why` and `deps` show.
    for member in ["assets/locale/de.po", "assets/locale/fr.po"] {
        assert!(inputs.contains(&member.to_owned()), "{inputs:?}");
    }
    assert!(!build().1, "nothing changed");
    write("locale/it.po", "ciao");
    assert!(build().0.contains("locale/it.po: ciao"), "a member added");
    write("locale/fr.po", "salut");
    assert!(build().0.contains("locale/fr.po: salut"), "a member edited");
    std::fs::remove_file(root.join("assets/locale/de.po")).unwrap();
    assert!(!build().0.contains("hallo"), "a member removed");
}

/// Makes noise from a seed: an asset with no file.
struct Noise;

/// `noise`'s parameters.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoiseSettings {
    seed: u32,
    len: usize,
}

impl Processor for Noise {
    type Settings = NoiseSettings;

    fn name(&self) -> &str {
        "noise"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>, s: NoiseSettings) -> Result<(), ProcessError> {
        let mut x = s.seed;
        let bytes = (0..s.len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        ctx.emit("bytes", bytes)
    }
}

#[test]
fn a_generated_asset_is_made_from_its_parameters_and_cached_by_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let manifest = |table: &str| {
        let text = format!(
            "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
             [[package.metadata.assets.rules]]\nmatch = \"**/*.bin\"\nprocessor = \"copy\"\n\n\
             [package.metadata.assets.generated.\"textures/noise.bin\"]\n{table}\n"
        );
        std::fs::write(root.join("Cargo.toml"), text).unwrap();
    };
    std::fs::create_dir_all(root.join("assets")).unwrap();
    let build = || {
        let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Noise);
        pipeline.build(&|_: &Event<'_>| {})
    };
    let made = |report: &BuildReport| {
        let step = (report.steps.iter())
            .find(|s| s.asset.as_str() == "textures/noise.bin")
            .unwrap();
        let ran = matches!(step.outcome, Outcome::Ran { .. });
        let parcel = std::fs::read(&report.parcels[0].path).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
        let bytes = parcel
            .by_name("textures/noise.bin")
            .unwrap()
            .bytes()
            .unwrap()
            .into_owned();
        (ran, bytes)
    };

    manifest("processor = \"noise\"\nseed = 7\nlen = 16");
    let (ran, first) = made(&build().unwrap());
    assert!(ran);
    assert_eq!(
        first.len(),
        16,
        "made by `noise`, not by the `*.bin` rule's `copy`"
    );
    assert_eq!(
        made(&build().unwrap()),
        (false, first.clone()),
        "same parameters: fresh"
    );
    manifest("processor = \"noise\"\nseed = 8\nlen = 16");
    let (ran, second) = made(&build().unwrap());
    assert!(ran && second != first, "new parameters: made again");

    manifest("seed = 8\nlen = 16");
    let error = anyhow_like(build().unwrap_err());
    assert!(
        error.contains("generated asset `textures/noise.bin` names no processor"),
        "{error}"
    );
    manifest("processor = \"noise\"\nsed = 8\nlen = 16");
    let error = anyhow_like(build().unwrap_err());
    assert!(
        error.contains("unknown key `sed` for processor `noise`"),
        "{error}"
    );

    manifest("processor = \"noise\"\nseed = 8\nlen = 16");
    std::fs::create_dir_all(root.join("assets/textures")).unwrap();
    std::fs::write(root.join("assets/textures/noise.bin"), "a file").unwrap();
    let error = anyhow_like(build().unwrap_err());
    assert!(
        error.contains("`textures/noise.bin` is generated"),
        "{error}"
    );
}
