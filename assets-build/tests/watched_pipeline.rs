//! A pipeline that keeps its state between builds, as `cargo assets watch`
//! drives it. It is told which paths changed (`Changes::At`), and after
//! every kind of change it must leave the cache as a fresh pipeline would.
//! The oracle: a fresh pipeline on the same cache, right after, finds every
//! step fresh and every parcel unchanged. Anything the watched build missed
//! would make the fresh one run a step or rewrite a parcel. And its parcels
//! are the bytes a cold build makes in a cache of its own: what the watched
//! pipeline keeps between builds (decoded sprites, kept verdicts) must not
//! show in its outputs.
//!
//! Writing patches, as `watch` does, the parcel seen through its patch must
//! hold what the cold build's holds, resource for resource; and the build
//! `watch` makes once idle, without patches, must write the cold build's
//! bytes and remove the patch.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use assets_build::{
    unstable::BuildOptions, unstable::BuildReport, unstable::Changes, unstable::Event,
    unstable::Outcome, unstable::ParcelOutcome, unstable::Pipeline,
};
use assets_runtime::{ParcelBuf, PatchedBuf};

const MANIFEST: &str = r#"[package]
name = "game"
version = "0.1.0"

[package.metadata.assets]
root = "assets"

[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"
atlas = "main"

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
include-dirs = ["shaders/lib"]

[package.metadata.assets.parcels]
main = ["**"]
"#;

struct Game {
    dir: tempfile::TempDir,
    watched: Pipeline,
    /// Builds whose parcel was written as a patch.
    patched: usize,
    /// Whether the last build left a patch.
    last_patched: bool,
    /// What a game held after the last build: each resource's bytes.
    seen: BTreeMap<String, Vec<u8>>,
    /// Whether each patched build is followed by the whole write `watch`
    /// makes once idle.
    settle: bool,
    /// Whether each build is checked by a fresh pipeline too
    /// ([`Game::check_fresh`]).
    check_fresh: bool,
}

impl Game {
    fn new() -> Game {
        Game::with_patches(false)
    }

    /// A game watched as `watch` does: changed parcels written as patches.
    /// A large sound keeps an edit's patch under three quarters of the parcel.
    fn with_patches(patches: bool) -> Game {
        let dir = tempfile::tempdir().unwrap();
        let mut options = options(dir.path());
        options.patch_parcels = patches;
        let game = Game {
            watched: Pipeline::new(options),
            dir,
            patched: 0,
            last_patched: false,
            seen: BTreeMap::new(),
            settle: true,
            check_fresh: true,
        };
        if patches {
            let noise = (0..400_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8);
            fs::create_dir_all(game.path("sounds")).unwrap();
            // Raw PCM, copied as it is.
            fs::write(game.path("sounds/theme.raw"), noise.collect::<Vec<u8>>()).unwrap();
        }
        game.write("Cargo.toml", MANIFEST);
        game.sprite("sprites/hero.png", 12, 1);
        game.sprite("sprites/ui/button.png", 20, 2);
        game.write("shaders/lib/common.wgsl", "fn lib() {}\n");
        game.write(
            "shaders/main.wgsl",
            "#include \"common.wgsl\"\nfn main() {}\n",
        );
        game.write("notes.txt", "one");
        game.write("models/ship.bin", "12345678");
        game.sprite("models/hull.png", 6, 5);
        game.write(
            "models/ship.gltf",
            r#"{"asset": {"version": "2.0"}, "buffers": [{"uri": "ship.bin", "byteLength": 8}],
                "images": [{"uri": "hull.png"}]}"#,
        );
        game
    }

    /// The path of `name`: under `assets/`, or the package's own file.
    fn path(&self, name: &str) -> PathBuf {
        match name {
            "Cargo.toml" => self.dir.path().join(name),
            _ => self.dir.path().join("assets").join(name),
        }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        aged(&path);
        path
    }

    fn sprite(&self, name: &str, size: u32, seed: u8) -> PathBuf {
        let path = self.path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        image::RgbaImage::from_fn(size, size, |x, y| {
            image::Rgba([x as u8 * seed, y as u8, seed, 255])
        })
        .save(&path)
        .unwrap();
        aged(&path);
        path
    }

    /// Eight 16-pixel sprites `sprites/s0.png`... in atlas `main`, whose
    /// pages of at most 40 pixels square hold a few each.
    fn many_page_atlas(&self) -> Vec<PathBuf> {
        let manifest = MANIFEST.replace(
            "[package.metadata.assets.parcels]",
            "[package.metadata.assets.atlases.main]\nmax-size = 40\n\n[package.metadata.assets.parcels]",
        );
        self.write("Cargo.toml", &manifest);
        (0..8u8)
            .map(|i| self.sprite(&format!("sprites/s{i}.png"), 16, i + 1))
            .collect()
    }

    /// A watched build told `changed`, then the oracle's fresh build; the
    /// number of steps the watched one ran.
    /// A fresh pipeline on the same cache finds nothing to do. (Its build
    /// reads the record log the watched one keeps, which then reads it
    /// again and checks every step: a game whose builds must reuse the
    /// watched state skips this.)
    fn check_fresh(&self) {
        let patches = self.watched.options().patch_parcels;
        let mut fresh = options(self.dir.path());
        fresh.patch_parcels = patches;
        let fresh = succeed(Pipeline::new(fresh).build(&|_: &Event<'_>| {}));
        let stale: Vec<&str> = fresh
            .steps
            .iter()
            .filter(|s| !matches!(s.outcome, Outcome::Fresh))
            .map(|s| s.asset.as_str())
            .collect();
        assert!(stale.is_empty(), "the watched build left stale: {stale:?}");
        assert!(
            fresh
                .parcels
                .iter()
                .all(|p| matches!(p.outcome, ParcelOutcome::Unchanged { .. })),
            "the watched build left a parcel to rewrite"
        );
    }

    fn build_after(&mut self, changed: &[PathBuf]) -> usize {
        let changed: HashSet<PathBuf> = changed.iter().cloned().collect();
        self.build(Changes::At(&changed))
    }

    fn build(&mut self, changes: Changes<'_>) -> usize {
        let watched = succeed(self.watched.build_after(changes, &|_: &Event<'_>| {}));
        if self.check_fresh {
            self.check_fresh();
        }
        let cold_cache = tempfile::tempdir().unwrap();
        let mut cold = BuildOptions::new(self.path("Cargo.toml"), cold_cache.path());
        cold.jobs = 2;
        let cold = succeed(Pipeline::new(cold).build(&|_: &Event<'_>| {}));
        assert_eq!(watched.parcels.len(), cold.parcels.len());
        let mut patched = false;
        for (w, c) in watched.parcels.iter().zip(&cold.parcels) {
            match &w.patch {
                Some(patch) => {
                    patched = true;
                    let seen = PatchedBuf::open(&w.path, Some(patch)).unwrap();
                    let cold = ParcelBuf::open(&c.path).unwrap();
                    let seen: Vec<_> = (seen.parcel().iter())
                        .map(|r| (r.name.to_owned(), r.kind.to_owned(), r.bytes().unwrap()))
                        .collect();
                    let cold: Vec<_> = (cold.parcel().iter())
                        .map(|r| (r.name.to_owned(), r.kind.to_owned(), r.bytes().unwrap()))
                        .collect();
                    assert!(
                        seen == cold,
                        "parcel `{}` seen through its patch differs from a cold build's",
                        w.name
                    );
                }
                None => assert!(
                    fs::read(&w.path).unwrap() == fs::read(&c.path).unwrap(),
                    "parcel `{}` differs from a cold build's",
                    w.name
                ),
            }
        }
        self.last_patched = patched;
        // The notice names every resource a game holds differently now.
        let main = &watched.parcels[0];
        let seen = PatchedBuf::open(&main.path, main.patch.as_deref()).unwrap();
        let seen: BTreeMap<String, Vec<u8>> = (seen.parcel().iter())
            .map(|r| (r.name.to_owned(), r.bytes().unwrap().into_owned()))
            .collect();
        let differ: Vec<&String> = (seen.keys().chain(self.seen.keys()))
            .filter(|n| seen.get(*n) != self.seen.get(*n))
            .collect();
        match &main.outcome {
            ParcelOutcome::Written { changed, .. } => {
                let missed: Vec<_> = differ.iter().filter(|n| !changed.contains(n)).collect();
                assert!(missed.is_empty(), "the notice misses {missed:?}");
            }
            other => assert!(differ.is_empty(), "{other:?} though {differ:?} changed"),
        }
        self.seen = seen;
        if patched {
            self.patched += 1;
        }
        if patched && self.settle {
            // What `watch` does once idle: the parcels written whole.
            self.watched.set_patch_parcels(false);
            let nothing = HashSet::new();
            let whole = self
                .watched
                .build_after(Changes::At(&nothing), &|_: &Event<'_>| {});
            self.watched.set_patch_parcels(true);
            let whole = succeed(whole);
            assert_eq!(whole.ran(), 0, "writing a parcel whole runs nothing");
            for (w, c) in whole.parcels.iter().zip(&cold.parcels) {
                assert!(w.patch.is_none() && !w.path.with_extension("parcel.patch").exists());
                assert!(
                    fs::read(&w.path).unwrap() == fs::read(&c.path).unwrap(),
                    "parcel `{}` written whole differs from a cold build's",
                    w.name
                );
            }
        }
        watched.ran()
    }
}

/// Dates the file at `path` an hour back (a different second each time),
/// out of the window in which freshness re-hashes a file whatever its
/// stamp says: a watched build must see these changes through what it is
/// told, not through that window.
fn aged(path: &Path) {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let back = Duration::from_secs(3600 - CALLS.fetch_add(1, Ordering::Relaxed));
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - back).unwrap();
}

fn options(dir: &Path) -> BuildOptions {
    let mut options = BuildOptions::new(dir.join("Cargo.toml"), dir.join("target/assets"));
    options.jobs = 2;
    options
}

fn succeed(report: Result<BuildReport, assets_build::unstable::BuildError>) -> BuildReport {
    let report = report.expect("the build runs");
    assert!(
        report.success(),
        "{}",
        report.failure_summary().unwrap_or_default()
    );
    report
}

#[test]
fn a_model_whose_texture_is_gone_runs_again_and_fails_by_name() {
    // The model's record is kept, and nothing it uses changed: only its
    // reference to the texture says it must run again.
    let mut game = Game::new();
    game.watched.keep_state_in_memory();
    game.build(Changes::Unknown);
    let hull = game.path("models/hull.png");
    fs::remove_file(&hull).unwrap();
    let changed: HashSet<PathBuf> = [hull].into();
    let report = game
        .watched
        .build_after(Changes::At(&changed), &|_: &Event<'_>| {});
    let report = report.expect("the build runs");
    let failed: Vec<(&str, String)> = (report.steps.iter())
        .filter_map(|s| match &s.outcome {
            Outcome::Failed { error, .. } => Some((s.asset.as_str(), error.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "models/ship.gltf");
    assert!(
        failed[0].1.contains("`models/hull.png` does not exist"),
        "{failed:?}"
    );
}

#[test]
fn a_watched_pipeline_told_what_changed_leaves_what_a_fresh_one_would() {
    let game = told_what_changed(Game::new());
    assert_eq!(game.patched, 0);
}

#[test]
fn a_watched_pipeline_writing_patches_leaves_what_a_fresh_one_would() {
    let game = told_what_changed(Game::with_patches(true));
    assert!(
        game.patched >= 8,
        "most edits are written as patches: {}",
        game.patched
    );
}

#[test]
fn an_edit_undone_before_the_parcel_is_written_whole_leaves_no_patch() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    game.settle = false;
    game.build(Changes::Unknown);
    let hero = game.sprite("sprites/hero.png", 14, 3);
    assert_eq!(game.build_after(std::slice::from_ref(&hero)), 2);
    assert!(game.last_patched);
    let notes = game.write("notes.txt", "one, edited");
    assert_eq!(game.build_after(&[notes]), 1);
    assert!(game.last_patched, "the patch holds both changes");
    game.sprite("sprites/hero.png", 12, 1);
    let notes = game.write("notes.txt", "one");
    assert_eq!(
        game.build_after(&[hero, notes]),
        3,
        "the sprite, its atlas, the text"
    );
    assert!(!game.last_patched, "the base is the parcel again");
    // The next edit compares from the base as it is.
    let notes = game.write("notes.txt", "one, edited again");
    assert_eq!(game.build_after(&[notes]), 1);
    assert!(game.last_patched);
}

/// Patches written one after another, never written whole between: from
/// the second on, a build compares with the base only the resources it
/// chose again (`parcels/patch.rs`, `PatchMemo`), across runs of steps
/// (600 sprites: three runs), and each is checked by the oracle (seen
/// through its patch, the parcel is a cold build's; the notice names what
/// the game holds differently), including a resource edited back to what
/// the base holds and one whose patch was removed behind the pipeline.
#[test]
fn patches_one_after_another_compare_only_what_was_chosen_again() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    game.settle = false;
    // Only cold builds check: a fresh pipeline's build on the same cache
    // would make every next watched build choose every run again.
    game.check_fresh = false;
    let sprites: Vec<PathBuf> = (0..600u32)
        .map(|i| game.sprite(&format!("sprites/many/s{i:03}.png"), 4, 1 + (i % 7) as u8))
        .collect();
    game.build(Changes::Unknown);
    game.build_after(&[]);
    let notes = game.write("notes.txt", "one, edited");
    assert_eq!(game.build_after(std::slice::from_ref(&notes)), 1);
    assert!(game.last_patched);
    // Larger: every frame after it moves, in every run.
    game.sprite("sprites/many/s000.png", 9, 3);
    assert_eq!(game.build_after(&sprites[..1]), 2);
    assert!(game.last_patched, "the patch holds the text and the atlas");
    // Back to the base's text: the patch no longer holds it.
    game.build_after(&[]);
    let notes = game.write("notes.txt", "one");
    assert_eq!(game.build_after(std::slice::from_ref(&notes)), 1);
    assert!(game.last_patched);
    // The same size, in the last run.
    game.sprite("sprites/many/s599.png", 4, 6);
    assert_eq!(game.build_after(&sprites[599..]), 2);
    // The patch's files removed behind the pipeline's back: what it kept
    // of them no longer holds, and every resource is compared again.
    let mut removed = 0;
    for entry in walkdir::WalkDir::new(game.dir.path().join("target/assets")) {
        let path = entry.unwrap().into_path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".parcel.patch") || name.ends_with(".parcel.patch.sums") {
            fs::remove_file(&path).unwrap();
            removed += 1;
        }
    }
    assert_eq!(removed, 2, "a patch and its `.sums`");
    let hero = game.sprite("sprites/hero.png", 12, 4);
    assert_eq!(game.build_after(&[hero]), 2);
    assert!(game.last_patched);
    game.check_fresh();
}

/// Edits each written as a patch over a parcel the last idle moment wrote
/// whole (or that the watch found whole when it began): the first
/// compares with the new base only the resources it chose again, from
/// what the whole write kept (`PatchMemo::whole`), not from its `.sums`
/// read back; each is checked by the oracle, including an edit back
/// to what the base holds, a resource added and one removed, and a base
/// replaced behind the pipeline's back.
#[test]
fn edits_after_a_whole_write_compare_only_what_was_chosen_again() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    game.check_fresh = false;
    let sprites: Vec<PathBuf> = (0..600u32)
        .map(|i| game.sprite(&format!("sprites/many/s{i:03}.png"), 4, 1 + (i % 7) as u8))
        .collect();
    game.build(Changes::Unknown);
    // A watch begun on parcels built before: its first build finds them
    // whole and unchanged, and keeps a memo made from their `.sums`.
    let mut again = options(game.dir.path());
    again.patch_parcels = true;
    game.watched = Pipeline::new(again);
    game.watched.keep_state_in_memory();
    game.build(Changes::Unknown);
    // The same size, in the last run: a patch, then written whole.
    game.sprite("sprites/many/s599.png", 4, 6);
    assert_eq!(game.build_after(&sprites[599..]), 2);
    assert!(game.last_patched);
    let notes = game.write("notes.txt", "one, edited");
    assert_eq!(game.build_after(std::slice::from_ref(&notes)), 1);
    assert!(game.last_patched, "a patch over the base written whole");
    // Back to what the base written whole holds, then on.
    game.sprite("sprites/many/s599.png", 4, 1 + (599 % 7) as u8);
    assert_eq!(game.build_after(&sprites[599..]), 2);
    assert!(game.last_patched);
    game.sprite("sprites/many/s000.png", 9, 3);
    assert_eq!(game.build_after(&sprites[..1]), 2);
    // A resource added, then one removed.
    let extra = game.write("extra.txt", "more");
    assert_eq!(game.build_after(std::slice::from_ref(&extra)), 1);
    fs::remove_file(&extra).unwrap();
    game.build_after(&[extra]);
    // The base's `.sums` replaced by another program (the same text, a
    // new file): what the whole write kept of it no longer holds.
    for entry in walkdir::WalkDir::new(game.dir.path().join("target/assets")) {
        let path = entry.unwrap().into_path();
        if path.to_string_lossy().ends_with(".parcel.sums") {
            let text = fs::read(&path).unwrap();
            let other = path.with_extension("other");
            fs::write(&other, text).unwrap();
            fs::rename(&other, &path).unwrap();
        }
    }
    let hero = game.sprite("sprites/hero.png", 12, 4);
    assert_eq!(game.build_after(&[hero]), 2);
    assert!(game.last_patched);
    game.check_fresh();
}

/// The watched builds of every kind of change, each checked by the oracle.
fn told_what_changed(mut game: Game) -> Game {
    game.watched.keep_state_in_memory();
    let sound = usize::from(game.watched.options().patch_parcels);
    assert_eq!(
        game.build(Changes::Unknown),
        9 + sound,
        "two sprites, an atlas, two shaders, a text, a model, its buffer and texture"
    );
    assert_eq!(game.build_after(&[]), 0, "nothing changed");

    // A save in place: the sprite and its atlas.
    let hero = game.sprite("sprites/hero.png", 14, 3);
    assert_eq!(game.build_after(&[hero]), 2);

    // An include saved in place: the walk and plan are kept, and so is
    // every step's last verdict but those of the steps that read it.
    let common = game.write("shaders/lib/common.wgsl", "fn lib() { }\n");
    assert_eq!(
        game.build_after(&[common]),
        2,
        "the include and the shader that includes it"
    );
    assert_eq!(game.build_after(&[]), 0, "nothing changed since");
    let notes = game.write("notes.txt", "one, edited");
    assert_eq!(game.build_after(&[notes]), 1, "the text alone");
    // A file that one step reads while it runs and another builds: the
    // model reads its buffer, which is an asset of its own (copied).
    let buffer = game.write("models/ship.bin", "87654321");
    assert_eq!(
        game.build_after(&[buffer]),
        2,
        "the buffer and the model that uses it"
    );
    // A file that a step names but does not use: the model's texture.
    let hull = game.sprite("models/hull.png", 6, 6);
    assert_eq!(game.build_after(&[hull]), 1, "the texture alone");

    // A file where the shader looked for its include first: nearer wins.
    let nearer = game.write("shaders/common.wgsl", "fn nearer() {}\n");
    assert_eq!(
        game.build_after(&[nearer]),
        2,
        "the new file and the shader"
    );

    // A new folder with a file in it, reported as the folder only (a
    // watcher may see the file before it watches the folder).
    game.write("levels/one/intro.txt", "intro");
    assert_eq!(game.build_after(&[game.path("levels")]), 1);

    // An editor's safe write: a temporary file renamed over the original.
    let temp = game.write("notes.txt.tmp", "two");
    let notes = game.path("notes.txt");
    fs::rename(&temp, &notes).unwrap();
    assert_eq!(game.build_after(&[temp, notes.clone()]), 1);

    // A removed file, and its atlas packed without it.
    let button = game.path("sprites/ui/button.png");
    fs::remove_file(&button).unwrap();
    assert_eq!(game.build_after(&[button]), 1, "the atlas");

    // A new rule in `Cargo.toml`.
    let manifest = game.write(
        "Cargo.toml",
        &MANIFEST.replace(
            "[package.metadata.assets.parcels]",
            "[[package.metadata.assets.rules]]\nmatch = \"**/*.txt\"\nprocessor = \"copy\"\n\n\
             [package.metadata.assets.parcels]",
        ),
    );
    assert_eq!(game.build_after(&[manifest]), 2, "both text files");

    // A change nobody reported (the watcher lost events): a build told
    // that anything may have changed sees it.
    fs::write(&notes, "three!").unwrap();
    aged(&notes);
    assert_eq!(game.build(Changes::Unknown), 1);

    // An edit undone before the base was written whole again: the patch
    // goes, and the base is the parcel.
    let hero = game.sprite("sprites/hero.png", 16, 4);
    assert_eq!(game.build_after(&[hero]), 2);
    game
}

/// An atlas of several pages, watched: a re-pack takes a page whose
/// sprites kept their places and pixels from memory, and draws again one
/// whose sprite changed its pixels in place (same size, same frame). The
/// oracle checks each build against a fresh one, so a page taken from
/// memory when it should have been drawn again fails it.
#[test]
fn a_watched_atlas_of_several_pages_draws_again_only_what_changed() {
    let mut game = Game::new();
    game.watched.keep_state_in_memory();
    let sprites = game.many_page_atlas();
    assert_eq!(game.build(Changes::Unknown), 17);
    let cache = tempfile::tempdir().unwrap();
    let mut cold = BuildOptions::new(game.path("Cargo.toml"), cache.path());
    cold.jobs = 1;
    let cold = succeed(Pipeline::new(cold).build(&|_: &Event<'_>| {}));
    let pages = ParcelBuf::open(&cold.parcels[0].path)
        .unwrap()
        .parcel()
        .iter()
        .filter(|r| r.name.starts_with("atlas:main#"))
        .count();
    assert!(pages >= 3, "{pages} pages");
    for (i, sprite) in sprites.iter().enumerate() {
        let seed = 10 + i as u8;
        game.sprite(&format!("sprites/s{i}.png"), 16, seed);
        assert_eq!(game.build_after(std::slice::from_ref(sprite)), 2);
    }
    // A sprite that grows moves the others: every page is drawn again.
    game.sprite("sprites/s0.png", 18, 9);
    assert_eq!(game.build_after(&sprites[..1]), 2);
}

/// The same, watched in a memory that keeps no blob (so no page and no
/// sprite's pixels) but keeps facts: a re-pack emits the pages it need not
/// draw by the hash of what the build before drew, which the parcel (or
/// its patch) holds, and reads the pixels of the sprites on the pages it
/// draws only. The oracle checks every build, with patches and without,
/// and a build with no change at all runs nothing.
#[test]
fn an_atlas_whose_pages_the_memory_cannot_keep_is_emitted_from_what_holds_them() {
    for patches in [false, true] {
        let mut game = Game::with_patches(patches);
        game.watched.keep_state_in_memory_bounded(0, 1 << 20);
        let sprites = game.many_page_atlas();
        let first = game.build(Changes::Unknown);
        assert!(first >= 9, "{first} steps");
        for (i, sprite) in sprites.iter().enumerate() {
            game.sprite(&format!("sprites/s{i}.png"), 16, 12 - i as u8);
            assert_eq!(game.build_after(std::slice::from_ref(sprite)), 2);
        }
        // Moved and repainted again: every page drawn, some emitted held.
        game.sprite("sprites/s3.png", 14, 12);
        assert_eq!(game.build_after(&sprites[3..4]), 2);
        game.sprite("sprites/s3.png", 14, 13);
        assert_eq!(game.build_after(&sprites[3..4]), 2);
        assert_eq!(game.build_after(&[]), 0);
    }
}

/// Watched with patches: a sprite repainted on one page of a many-page
/// atlas brings its frame and that page into the patch, not the others
/// (its frame is read with them through the base), and a game sees
/// the cold build's parcel through it (`Game::build`).
#[test]
fn a_patch_holds_only_the_page_that_changed() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    // Patches over the first build's parcel, to be looked at.
    game.settle = false;
    let sprites = game.many_page_atlas();
    game.build(Changes::Unknown);
    let parcel = game
        .dir
        .path()
        .join("target/assets/parcels/game/dev/main.parcel");
    let base = ParcelBuf::open(&parcel).unwrap();
    let pages = (base.parcel().iter())
        .filter(|r| r.name.starts_with("atlas:main#"))
        .count();
    assert!(pages >= 3, "{pages} pages");
    let page_of = |name: &str| {
        let frame = base.parcel().by_name(name).unwrap().sprite_frame().unwrap();
        format!("atlas:main#{}", frame.page_index)
    };
    let mut expected = Vec::new();
    for i in [0, 7] {
        let name = format!("sprites/s{i}.png");
        game.sprite(&name, 16, 9 + i as u8);
        assert_eq!(game.build_after(&sprites[i..=i]), 2);
        assert!(game.last_patched, "written as a patch");
        let patch = ParcelBuf::open_patch(&assets_runtime::patch::path_of(&parcel)).unwrap();
        assert!(patch.parcel().is_patch());
        let held: Vec<&str> = patch.parcel().iter().map(|r| r.name).collect();
        // What differs from the base: the sprites repainted so far, and
        // the pages they lie on.
        expected.extend([name.clone(), page_of(&name)]);
        expected.sort_by_key(|n| assets_runtime::ResourceId::of_runtime(n));
        expected.dedup();
        assert_eq!(held, expected);
        assert!(held.len() < 2 + pages, "not every page: {held:?}");
    }
}

/// Watched with patches, an atlas laid out in groups (many pages): a
/// sprite redrawn at another size moves the sprites of its group only.
/// The patch and the reload notice hold what a game sees differently, no
/// more: the frames that moved, the sprite, the pages redrawn. (The
/// frame table they are cut from changed as a whole; a frame's content
/// is its own bytes, not its table's hash and a range.)
#[test]
fn a_resized_sprite_brings_only_the_frames_that_moved() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    game.settle = false;
    let manifest = MANIFEST.replace(
        "[package.metadata.assets.parcels]",
        "[package.metadata.assets.atlases.main]\nmax-size = 40\n\n[package.metadata.assets.parcels]",
    );
    game.write("Cargo.toml", &manifest);
    let sprites: Vec<PathBuf> = (0..256u32)
        .map(|i| game.sprite(&format!("sprites/g/s{i:03}.png"), 8, 1 + (i % 13) as u8))
        .collect();
    game.build(Changes::Unknown);
    let parcel = game
        .dir
        .path()
        .join("target/assets/parcels/game/dev/main.parcel");
    let bytes_of = |buf: &PatchedBuf| -> BTreeMap<String, Vec<u8>> {
        (buf.parcel().iter())
            .map(|r| (r.name.to_owned(), r.bytes().unwrap().into_owned()))
            .collect()
    };
    let before = bytes_of(&PatchedBuf::open(&parcel, None).unwrap());
    let pages = before
        .keys()
        .filter(|n| n.starts_with("atlas:main#"))
        .count();
    assert!(pages >= 8, "laid out in groups: {pages} pages");
    game.sprite("sprites/g/s000.png", 11, 3);
    let changed = HashSet::from([sprites[0].clone()]);
    let quiet = |_: &Event<'_>| {};
    let report = succeed(game.watched.build_after(Changes::At(&changed), &quiet));
    assert_eq!(report.ran(), 2, "the sprite and its atlas");
    let main = &report.parcels[0];
    let patch = main.patch.as_deref().expect("written as a patch");
    let after = bytes_of(&PatchedBuf::open(&parcel, Some(patch)).unwrap());
    let differ: Vec<&String> = (after.keys())
        .filter(|n| after.get(*n) != before.get(*n))
        .collect();
    let moved = differ.iter().filter(|n| n.starts_with("sprites/")).count();
    assert!(
        (1..128).contains(&moved),
        "the resized sprite's group moved, not every sprite: {moved} of 256"
    );
    // The patch holds exactly what differs (the resized sprite's pixels
    // differ too, but its frame moved with it, so it is among them).
    let held = ParcelBuf::open_patch(patch).unwrap();
    let mut held: Vec<&str> = held.parcel().iter().map(|r| r.name).collect();
    held.sort_unstable();
    assert_eq!(held, differ, "the patch holds what differs");
    match &main.outcome {
        ParcelOutcome::Written { changed, .. } => {
            assert_eq!(
                changed.iter().collect::<Vec<_>>(),
                differ,
                "the notice names what differs"
            )
        }
        other => panic!("{other:?}"),
    }
    // And a game sees the cold build's parcel through it.
    let cache = tempfile::tempdir().unwrap();
    let cold = succeed(
        Pipeline::new(BuildOptions::new(game.path("Cargo.toml"), cache.path())).build(&quiet),
    );
    assert!(after == bytes_of(&PatchedBuf::open(&cold.parcels[0].path, None).unwrap()));
    // The redrawn pages are held by the patch alone, not stored again:
    // with the patch's `.sums` gone (as a kill before it was written
    // would leave it), a fresh build finds the atlas's pages nowhere and
    // packs it again, and writes the cold build's parcel.
    fs::remove_file(patch.with_extension("patch.sums")).unwrap();
    let fresh = succeed(Pipeline::new(options(game.dir.path())).build(&quiet));
    let ran: Vec<&str> = (fresh.steps.iter())
        .filter(|s| !matches!(s.outcome, Outcome::Fresh))
        .map(|s| s.asset.as_str())
        .collect();
    assert_eq!(ran, ["atlas:main"]);
    assert!(fs::read(&fresh.parcels[0].path).unwrap() == fs::read(&cold.parcels[0].path).unwrap());
}

/// An atlas whose sprites span more than one run of the steps a parcel
/// is chosen from (256): an edit that re-packs it changes the frames of
/// sprites whose own reports the watched pipeline reused, so the runs
/// they are in are chosen again (`parcels/select.rs`). Built without the
/// oracle's fresh build in between (which would leave the watched
/// pipeline nothing to reuse), then compared with a cold build.
#[test]
fn an_atlas_across_runs_of_steps_brings_its_new_frames_to_every_run() {
    let mut game = Game::new();
    game.watched.keep_state_in_memory();
    // Three runs: the edited sprites in the first, the atlas step (planned
    // last) in the third, and in the second only sprites left as they are.
    let sprites: Vec<PathBuf> = (0..600u32)
        .map(|i| game.sprite(&format!("sprites/many/s{i:03}.png"), 4, 1 + (i % 7) as u8))
        .collect();
    let quiet = |_: &Event<'_>| {};
    succeed(game.watched.build_after(Changes::Unknown, &quiet));
    // A no-op: every step checked, so the next build reuses the reports.
    let nothing = HashSet::new();
    succeed(game.watched.build_after(Changes::At(&nothing), &quiet));
    // Larger: placed first, each moves every other sprite, also those in
    // the second run, whose reports stay the same.
    for (i, size) in [(0, 9), (1, 11)] {
        game.sprite(&format!("sprites/many/s{i:03}.png"), size, 3);
        let changed = HashSet::from([sprites[i].clone()]);
        let report = succeed(game.watched.build_after(Changes::At(&changed), &quiet));
        assert_eq!(report.ran(), 2, "the sprite and its atlas");
        let cache = tempfile::tempdir().unwrap();
        let cold = BuildOptions::new(game.path("Cargo.toml"), cache.path());
        let cold = succeed(Pipeline::new(cold).build(&quiet));
        assert!(
            fs::read(&report.parcels[0].path).unwrap() == fs::read(&cold.parcels[0].path).unwrap(),
            "the watched parcel is the cold build's"
        );
    }
    // And its key and `.sums` say so: a fresh pipeline rewrites nothing.
    let fresh = succeed(Pipeline::new(options(game.dir.path())).build(&quiet));
    assert_eq!(fresh.ran(), 0);
    assert!(matches!(
        fresh.parcels[0].outcome,
        ParcelOutcome::Unchanged { .. }
    ));
}

/// `watch` started on a built project: its pipeline's first build finds
/// the atlas fresh and holds none of it in memory. `warm_up` (called once
/// idle) packs it into memory once, storing and writing nothing, and the
/// edits after it leave what a fresh build leaves.
#[test]
fn warming_up_packs_a_fresh_atlas_into_memory_once_and_writes_nothing() {
    let mut game = Game::new();
    assert_eq!(game.build(Changes::Unknown), 9, "built, keeping nothing");
    game.watched.keep_state_in_memory();
    assert_eq!(game.build(Changes::Unknown), 0, "a built project");
    let files = |dir: &Path| -> BTreeMap<PathBuf, (u64, SystemTime)> {
        walkdir::WalkDir::new(dir)
            .into_iter()
            .map(Result::unwrap)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let meta = e.metadata().unwrap();
                (e.into_path(), (meta.len(), meta.modified().unwrap()))
            })
            .collect()
    };
    let before = files(game.dir.path());
    assert_eq!(
        game.watched.warm_up_while(|| false),
        0,
        "stopped before the first atlas"
    );
    let mut asked = 0;
    let packed = game.watched.warm_up_while(|| {
        asked += 1;
        true
    });
    assert_eq!((packed, asked), (1, 1), "the one atlas, asked about once");
    assert_eq!(files(game.dir.path()), before, "nothing stored or written");
    assert_eq!(game.watched.warm_up(), 0, "once");
    let hero = game.sprite("sprites/hero.png", 14, 3);
    assert_eq!(game.build_after(&[hero]), 2, "the sprite and its atlas");
    assert_eq!(game.watched.warm_up(), 0, "the atlas ran in the build");
    assert_eq!(
        Pipeline::new(options(game.dir.path())).warm_up(),
        0,
        "a pipeline that keeps nothing warms nothing"
    );
}

/// A sprite touched since the last build (the same bytes under a new
/// stamp: a checkout, an editor saving what it loaded) is fresh, with its
/// record refreshed in the log. Its atlas is warmed all the same.
#[test]
fn warming_up_packs_an_atlas_whose_sprite_was_touched() {
    let mut game = Game::new();
    assert_eq!(game.build(Changes::Unknown), 9, "built, keeping nothing");
    aged(&game.path("sprites/hero.png"));
    game.watched.keep_state_in_memory();
    assert_eq!(game.build(Changes::Unknown), 0, "touched, not changed");
    assert_eq!(game.watched.warm_up(), 1, "the atlas packed into memory");
}

#[test]
fn what_no_watcher_reported_is_found_by_comparing_the_kept_state_with_the_disk() {
    let mut game = Game::new();
    game.watched.keep_state_in_memory();
    game.build(Changes::Unknown);
    assert_eq!(game.build_after(&[]), 0, "stats kept by a no-op's checks");
    assert_eq!(game.watched.drifted(), Vec::<PathBuf>::new());

    // Changed behind the watcher's back: an edit, a new file, a removal.
    let notes = game.write("notes.txt", "edited");
    let added = game.write("levels/new.txt", "new");
    let button = game.path("sprites/ui/button.png");
    fs::remove_file(&button).unwrap();
    let mut drifted = game.watched.drifted();
    drifted.sort();
    let mut want = vec![notes, added, button];
    want.sort();
    assert_eq!(drifted, want);

    // Built after them, the cache is what a fresh pipeline leaves.
    assert_eq!(
        game.build_after(&drifted),
        3,
        "notes, the new file, the atlas"
    );
    assert_eq!(game.watched.drifted(), Vec::<PathBuf>::new());
}

#[cfg(unix)]
#[test]
fn a_step_that_reads_through_a_link_is_checked_in_every_build() {
    // A watcher reports an edit at the file's own path, never at a link's
    // that points to it: the step that reads the link is never trusted to
    // be as the last build left it, and is checked again each time.
    let mut game = Game::new();
    game.watched.keep_state_in_memory();
    let text = game.write("text/credits.txt", "made by us");
    std::os::unix::fs::symlink(&text, game.path("credits.txt")).unwrap();
    game.build(Changes::Unknown);
    assert_eq!(game.build_after(&[]), 0, "nothing changed");

    fs::write(&text, "made by all of us").unwrap();
    aged(&text);
    assert_eq!(game.build_after(&[text]), 2, "the text, and the link to it");
}

/// A chain (`processor = ["command", "text"]`) watched: an edit the tool
/// passes on reruns both stages, one it does not (a change of case) only
/// the first, and editing the rule reruns what it should, each build
/// leaving what a fresh pipeline and a cold build would.
#[test]
fn a_watched_chain_reruns_exactly_the_stages_a_fresh_pipeline_would() {
    let mut game = Game::with_patches(true);
    game.watched.keep_state_in_memory();
    let chain = |tool: &str| {
        MANIFEST.replace(
            "[package.metadata.assets.parcels]",
            &format!(
                "[[package.metadata.assets.rules]]\nmatch = \"maps/*.map\"\n\
                 processor = [\"command\", \"text\"]\n\
                 command = {{ command = [\"sh\", \"-c\", \"< \\\"$0\\\" {tool} > \\\"$1\\\"\", \"{{input}}\", \"{{output}}\"] }}\n\n\
                 [package.metadata.assets.parcels]"
            ),
        )
    };
    game.write("Cargo.toml", &chain("tr a-z A-Z"));
    game.write("maps/a.map", "hello\n");
    game.write("maps/b.map", "b\n");
    game.build(Changes::Unknown);
    assert_eq!(game.build_after(&[]), 0, "nothing changed");
    let a = game.write("maps/a.map", "HELLO\n");
    assert_eq!(
        game.build_after(std::slice::from_ref(&a)),
        1,
        "the tool's output is the same"
    );
    let a = game.write("maps/a.map", "world\n");
    assert_eq!(game.build_after(&[a]), 2, "both stages");
    let manifest = game.write("Cargo.toml", &chain("tr a-z A-Z | tr O 0"));
    assert_eq!(
        game.build_after(&[manifest]),
        3,
        "both first stages; the last of the map whose tool output changed"
    );
    // An alias added: no step runs; the parcel gains the old name.
    let aliased = chain("tr a-z A-Z | tr O 0")
        + "\n[package.metadata.assets.aliases]\n\"maps/old.map\" = \"maps/a.map\"\n";
    let manifest = game.write("Cargo.toml", &aliased);
    assert_eq!(game.build_after(&[manifest]), 0);
    assert_eq!(
        game.seen.get("maps/old.map").map(Vec::as_slice),
        Some(&b"maps/a.map"[..])
    );
}
