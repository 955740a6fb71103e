//! Temporary builds a processor asks for while it runs (`Context::generate`):
//! made once per parameters, shared by every step that asks, reused across
//! builds while what they read is unchanged, never in a parcel; and what
//! each edit reruns, as a table.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use assets_build::unstable::query::Database;
use assets_build::{
    Context, ProcessError, Processor, unstable::BuildOptions, unstable::BuildReport,
    unstable::Event, unstable::Outcome, unstable::Pipeline,
};

/// How many times `tile` ran, for each test (they run in parallel).
static TILE_RUNS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// `tile`: `size` bytes of noise from `seed`, each XORed with the palette
/// file's first byte when one is named (a file it reads).
struct Tile {
    test: usize,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TileParameters {
    seed: u32,
    size: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    palette: Option<String>,
}

fn noise(seed: u32, size: usize, tint: u8) -> Vec<u8> {
    let mut x = seed;
    (0..size)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8 ^ tint
        })
        .collect()
}

impl Processor for Tile {
    type Settings = TileParameters;
    fn name(&self) -> &str {
        "tile"
    }
    fn version(&self) -> u32 {
        1
    }
    fn process(&self, ctx: &mut Context<'_>, p: TileParameters) -> Result<(), ProcessError> {
        TILE_RUNS[self.test].fetch_add(1, Ordering::SeqCst);
        if p.seed == 666 {
            ctx.source()?; // a temporary build has none
        }
        let tint = match &p.palette {
            Some(file) => ctx.read(file)?.first().copied().unwrap_or(0),
            None => 0,
        };
        ctx.emit("bytes", noise(p.seed, p.size, tint))
    }
}

/// `material`: each line of the source, `seed` or `seed palette-file`,
/// asks for a tile and embeds its bytes (`generate:<name>` asks for a
/// processor of that name instead).
struct Material;

impl Processor for Material {
    type Settings = assets_build::NoSettings;
    fn name(&self) -> &str {
        "material"
    }
    fn version(&self) -> u32 {
        1
    }
    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let source = String::from_utf8(ctx.source()?).map_err(ProcessError::other)?;
        let mut out = Vec::new();
        for line in source.lines().filter(|l| !l.is_empty()) {
            if let Some(other) = line.strip_prefix("generate:") {
                ctx.generate(
                    other,
                    &TileParameters {
                        seed: 1,
                        size: 1,
                        palette: None,
                    },
                )?;
                continue;
            }
            let mut words = line.split(' ');
            let seed = words.next().unwrap().parse().map_err(ProcessError::other)?;
            let palette = words.next().map(str::to_owned);
            let tile = ctx.generate(
                "tile",
                &TileParameters {
                    seed,
                    size: 8,
                    palette,
                },
            )?;
            out.extend(tile.bytes("")?);
        }
        ctx.emit("material", out)
    }
}

struct Package {
    dir: tempfile::TempDir,
    test: usize,
}

impl Package {
    fn new(test: usize) -> Package {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"g\"\nversion = \"0.1.0\"\n\n\
             [[package.metadata.assets.rules]]\nmatch = \"**/*.mat\"\nprocessor = \"material\"\n",
        )
        .unwrap();
        Package { dir, test }
    }

    fn file(&self, name: &str, contents: &str) {
        let path = self.dir.path().join("assets").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    /// One build with `jobs` threads: the report, the assets processed
    /// (sorted) and how many tiles were made.
    fn build(&self, jobs: usize) -> (BuildReport, Vec<String>, usize) {
        let root: &Path = self.dir.path();
        let mut options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
        options.jobs = jobs;
        let mut pipeline = Pipeline::new(options);
        pipeline.registry_mut().register(Tile { test: self.test });
        pipeline.registry_mut().register(Material);
        let processed = Mutex::new(Vec::new());
        let on_event = |e: &Event<'_>| {
            if let Event::Processing { asset, .. } = e {
                processed.lock().unwrap().push(asset.to_string());
            }
        };
        let before = TILE_RUNS[self.test].load(Ordering::SeqCst);
        let report = pipeline.build(&on_event).unwrap();
        let tiles = TILE_RUNS[self.test].load(Ordering::SeqCst) - before;
        let mut processed = processed.into_inner().unwrap();
        processed.sort();
        (report, processed, tiles)
    }

    /// What the parcel holds for `asset`.
    fn resource(report: &BuildReport, asset: &str) -> Vec<u8> {
        let parcel = std::fs::read(&report.parcels[0].path).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
        parcel.by_name(asset).unwrap().bytes().unwrap().into_owned()
    }
}

fn error(report: &BuildReport, asset: &str) -> String {
    let step = report
        .steps
        .iter()
        .find(|s| s.asset.as_str() == asset)
        .unwrap();
    match &step.outcome {
        Outcome::Failed { error, .. } => error.to_string(),
        other => panic!("{asset}: {other:?}"),
    }
}

#[test]
fn a_temporary_build_is_made_once_per_parameters_and_reruns_only_when_what_it_read_changes() {
    let p = Package::new(0);
    p.file("a.mat", "1\n2 palette.bin\n");
    p.file("b.mat", "2 palette.bin\n3\n");
    p.file("palette.bin", "\u{7}");

    // Cold, on two threads: three tiles for four asks (seed 2 is shared).
    let (report, processed, tiles) = p.build(2);
    assert_eq!(processed, ["a.mat", "b.mat", "palette.bin"]);
    assert!(report.failure_summary().is_none(), "{:?}", report.steps);
    assert_eq!(tiles, 3);
    let a = [noise(1, 8, 0), noise(2, 8, 7)].concat();
    assert_eq!(Package::resource(&report, "a.mat"), a);
    // No parcel holds a temporary build.
    let parcel = std::fs::read(&report.parcels[0].path).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
    let names: Vec<String> = parcel.iter().map(|r| format!("{:?}", r.name)).collect();
    assert_eq!(parcel.len(), 3, "a.mat, b.mat, palette.bin: {names:?}");

    // Each edit, what reruns: (file, contents, assets processed, tiles made).
    let table: [(&str, &str, &[&str], usize); 5] = [
        // Nothing changed.
        ("", "", &[], 0),
        // A material asks for one more tile: only that one is made.
        ("a.mat", "1\n2 palette.bin\n4\n", &["a.mat"], 1),
        // The palette two tiles read: both made again, both materials rerun.
        (
            "palette.bin",
            "\u{9}",
            &["a.mat", "b.mat", "palette.bin"],
            1,
        ),
        // A material drops a tile and keeps the others: none made.
        ("b.mat", "3\n", &["b.mat"], 0),
        // Touched, same bytes: nothing.
        ("palette.bin", "\u{9}", &[], 0),
    ];
    for (file, contents, expected, made) in table {
        if !file.is_empty() {
            p.file(file, contents);
        }
        let (report, processed, tiles) = p.build(2);
        assert_eq!(processed, expected, "after editing {file:?}");
        assert_eq!(tiles, made, "tiles made after editing {file:?}");
        assert!(report.failure_summary().is_none());
    }
    // What the queries say: the temporary builds a material used, and
    // whether the next build reruns it.
    let root = p.dir.path();
    let options = BuildOptions::new(root.join("Cargo.toml"), root.join("target/assets"));
    let mut registry = assets_build::Registry::with_builtins();
    registry.register(Tile { test: p.test });
    registry.register(Material);
    let why = |asset: &str| {
        let db = Database::open(&options, &registry).unwrap();
        let asset = db.asset(asset).unwrap();
        (db.why(&asset).unwrap().next, db.deps(&asset).unwrap())
    };
    let (next, deps) = why("a.mat");
    assert_eq!(next, None, "fresh");
    assert_eq!(deps.dependencies.len(), 3, "{:?}", deps.dependencies);
    assert!(deps.dependencies.iter().all(|d| d.is_temporary()));
    assert!(
        deps.inputs
            .iter()
            .any(|(file, _)| file == "assets/palette.bin"),
        "{:?}",
        deps.inputs
    );
    p.file("palette.bin", "\u{9}\u{1}");
    let (next, _) = why("a.mat");
    assert!(next.is_some(), "a palette a tile read changed");
    p.file("palette.bin", "\u{9}");

    let (report, _, _) = p.build(1);
    let a = [noise(1, 8, 0), noise(2, 8, 9), noise(4, 8, 0)].concat();
    assert_eq!(Package::resource(&report, "a.mat"), a);
    assert_eq!(Package::resource(&report, "b.mat"), noise(3, 8, 0));
}

#[test]
fn a_temporary_builds_outputs_are_the_same_on_any_thread_count_and_from_a_clean_cache() {
    let p = Package::new(1);
    for i in 0..12 {
        p.file(
            &format!("m{i}.mat"),
            &format!("{}\n{}\n", i % 5, (i * 7) % 5),
        );
    }
    let (first, _, tiles) = p.build(1);
    assert_eq!(tiles, 5, "five seeds, each made once");
    let parcel = std::fs::read(&first.parcels[0].path).unwrap();
    std::fs::remove_dir_all(p.dir.path().join("target")).unwrap();
    let (again, _, tiles) = p.build(2);
    assert_eq!(tiles, 5);
    assert_eq!(std::fs::read(&again.parcels[0].path).unwrap(), parcel);
}

#[test]
fn a_temporary_build_that_fails_or_asks_for_what_it_cannot_fails_its_requester_by_name() {
    let p = Package::new(2);
    p.file("unknown.mat", "generate:nothing\n");
    p.file("sourced.mat", "666\n");
    p.file("missing.mat", "5 no-such-palette.bin\n");
    p.file("fine.mat", "5\n");
    let (report, _, _) = p.build(2);
    let unknown = error(&report, "unknown.mat");
    assert!(
        unknown.contains("processor `nothing`, which is not registered")
            && unknown.contains("tile"),
        "{unknown}"
    );
    let sourced = error(&report, "sourced.mat");
    assert!(sourced.contains("temporary build `temp:tile/"), "{sourced}");
    assert!(
        sourced.contains("it has parameters, and no source file"),
        "{sourced}"
    );
    let missing = error(&report, "missing.mat");
    assert!(missing.contains("no-such-palette.bin"), "{missing}");
    let fine = &report
        .steps
        .iter()
        .find(|s| s.asset.as_str() == "fine.mat")
        .unwrap()
        .outcome;
    assert!(matches!(fine, Outcome::Ran { .. }), "{fine:?}");

    // The missing palette made: the material that asked for it builds.
    p.file("no-such-palette.bin", "\u{1}");
    let (report, processed, _) = p.build(2);
    assert!(
        processed.contains(&"missing.mat".to_owned()),
        "{processed:?}"
    );
    assert_eq!(Package::resource(&report, "missing.mat"), noise(5, 8, 1));
}
