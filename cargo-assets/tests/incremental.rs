//! Incremental builds through the real binary: after each edit, exactly the
//! expected processors run (design brief §3.1).

use assets_test_support::Project;

const METADATA: &str = r#"
[[package.metadata.assets.rules]]
match = "shaders/**/*.wgsl"
includes = true
include-dirs = ["lib"]

[[package.metadata.assets.rules]]
match = "sprites/ui/*.png"
premultiply = false

[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["cp", "{input}", "{output}"]
"#;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(METADATA)
        .png("assets/sprites/hero.png", 16, 16, 1)
        .png("assets/sprites/ui/button.png", 8, 4, 2)
        .png("assets/sprites/ui/icon.png", 4, 4, 3)
        .file(
            "assets/shaders/main.wgsl",
            "#include \"common.wgsl\"\n#include \"noise.wgsl\"\nfn main() {}\n",
        )
        .file("assets/shaders/common.wgsl", "const X = 1;\n")
        .file("assets/lib/noise.wgsl", "fn noise() {}\n")
        .file(
            "assets/shaders/water.wesl",
            "import package::shaders::waves::swell;\nfn surface(t: f32) -> f32 { return swell(t); }\n",
        )
        .file(
            "assets/shaders/waves.wesl",
            "fn swell(t: f32) -> f32 { return sin(t); }\n",
        )
        .file("assets/data/readme.txt", "hello\n")
        .file("assets/levels/one.lvl", "level one\n");
    p
}

const ALL: &[&str] = &[
    "data/readme.txt",
    "levels/one.lvl",
    "lib/noise.wgsl",
    "shaders/common.wgsl",
    "shaders/main.wgsl",
    "shaders/water.wesl",
    "shaders/waves.wesl",
    "sprites/hero.png",
    "sprites/ui/button.png",
    "sprites/ui/icon.png",
];

/// An edit and the assets whose processors must run in the next build.
struct Case {
    what: &'static str,
    edit: fn(&Project),
    ran: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        what: "first build",
        edit: |_| {},
        ran: ALL,
    },
    Case {
        what: "nothing changed",
        edit: |_| {},
        ran: &[],
    },
    Case {
        what: "touching every input without changing it",
        edit: |p| {
            for a in ALL {
                p.touch(&format!("assets/{a}"));
            }
        },
        ran: &[],
    },
    Case {
        what: "editing one sprite",
        edit: |p| {
            p.png("assets/sprites/hero.png", 16, 16, 9);
        },
        ran: &["sprites/hero.png"],
    },
    Case {
        what: "editing an included shader reruns its includer",
        edit: |p| {
            p.file("assets/shaders/common.wgsl", "const X = 2;\n");
        },
        ran: &["shaders/common.wgsl", "shaders/main.wgsl"],
    },
    Case {
        what: "an include rebuilt to identical output stops there (early cutoff)",
        edit: |p| {
            p.file("assets/shaders/common.wgsl", "const X = 2;\r\n");
        },
        ran: &["shaders/common.wgsl"],
    },
    Case {
        what: "changing a rule's settings reruns exactly its assets",
        edit: |p| {
            p.metadata(&METADATA.replace("premultiply = false", "premultiply = true"));
        },
        ran: &["sprites/ui/button.png", "sprites/ui/icon.png"],
    },
    Case {
        what: "creating a file an include looked for reruns the includer",
        edit: |p| {
            p.file("assets/shaders/noise.wgsl", "fn noise() { /* local */ }\n");
        },
        ran: &["shaders/main.wgsl", "shaders/noise.wgsl"],
    },
    Case {
        what: "deleting a used asset reruns its user",
        edit: |p| {
            p.remove("assets/shaders/noise.wgsl");
        },
        ran: &["shaders/main.wgsl"],
    },
    Case {
        what: "editing an imported WESL module reruns exactly its importer",
        edit: |p| {
            p.file(
                "assets/shaders/waves.wesl",
                "fn swell(t: f32) -> f32 { return 0.5 * sin(t); }\n",
            );
        },
        ran: &["shaders/water.wesl", "shaders/waves.wesl"],
    },
    Case {
        what: "creating the module an import looked for first reruns the importer",
        edit: |p| {
            // `package::shaders::waves::swell` names `shaders/waves/swell.wesl`
            // before `shaders/waves.wesl`: it was looked for, absent.
            p.file(
                "assets/shaders/waves/swell.wesl",
                "fn swell(t: f32) -> f32 { return cos(t); }\n",
            );
        },
        ran: &["shaders/water.wesl", "shaders/waves/swell.wesl"],
    },
    Case {
        what: "editing a file built by an external command",
        edit: |p| {
            p.file("assets/levels/one.lvl", "level one, revised\n");
        },
        ran: &["levels/one.lvl"],
    },
    Case {
        what: "changing a command's settings",
        edit: |p| {
            let m = METADATA.replace("premultiply = false", "premultiply = true");
            p.metadata(&m.replace("\"{output}\"]", "\"{output}\"]\nversion = \"2\""));
        },
        ran: &["levels/one.lvl"],
    },
    Case {
        what: "nothing changed, at the end",
        edit: |_| {},
        ran: &[],
    },
];

#[test]
fn each_edit_reruns_exactly_the_steps_that_read_it() {
    let p = project();
    for case in CASES {
        (case.edit)(&p);
        let run = p.build_ok();
        let finished = run.finished();
        assert_eq!(
            run.processed(),
            case.ran,
            "{}: processors that ran\n{}",
            case.what,
            run.stderr
        );
        // Every file under the asset root is one step.
        let expected_total = walkdir::WalkDir::new(p.path().join("assets"))
            .into_iter()
            .filter(|e| e.as_ref().unwrap().file_type().is_file())
            .count();
        assert_eq!(finished["ran"], case.ran.len(), "{}", case.what);
        assert_eq!(
            finished["fresh"],
            expected_total - case.ran.len(),
            "{}",
            case.what
        );
    }
}

#[test]
fn every_rebuild_says_why() {
    let p = project();
    p.build_ok();
    p.file("assets/shaders/common.wgsl", "const X = 3;\n");
    p.file("assets/shaders/noise.wgsl", "fn noise() {}\n");
    p.metadata(&METADATA.replace("premultiply = false", "premultiply = true"));
    let run = p.build_ok();
    let why = |asset: &str| {
        run.with_reason("asset-processed")
            .find(|m| m["asset"] == asset)
            .unwrap_or_else(|| panic!("{asset} did not run"))["why"]
            .clone()
    };
    assert_eq!(why("shaders/common.wgsl")["kind"], "input-changed");
    assert_eq!(
        why("shaders/common.wgsl")["path"],
        "assets/shaders/common.wgsl"
    );
    assert_eq!(why("shaders/main.wgsl")["kind"], "input-appeared");
    assert_eq!(
        why("shaders/main.wgsl")["path"],
        "assets/shaders/noise.wgsl"
    );
    assert_eq!(why("shaders/noise.wgsl")["kind"], "no-record");
    assert_eq!(why("sprites/ui/icon.png")["kind"], "settings-changed");
    assert_eq!(
        why("sprites/ui/icon.png")["current"],
        r#"{"premultiply":true}"#
    );
}

#[test]
fn a_deleted_output_blob_is_rebuilt() {
    let p = project();
    p.build_ok();
    // Blob files and packs alike, and the parcels (which hold the outputs
    // they hold whole: the store keeps no second copy). Here every output
    // is in a parcel, so no pack was even created.
    assert!(!p.cache_dir().join("packs").exists());
    for dir in ["blobs", "parcels"] {
        std::fs::remove_dir_all(p.cache_dir().join(dir)).unwrap();
    }
    let run = p.build_ok();
    assert_eq!(run.processed(), ALL);
    assert!(
        run.with_reason("asset-processed")
            .all(|m| m["why"]["kind"] == "output-missing")
    );
}

#[test]
fn release_and_dev_variants_are_cached_separately() {
    let p = project();
    p.build_ok();
    let release = p.run(&["build", "--release"]);
    assert!(release.success(), "{}", release.stderr);
    assert_eq!(release.processed(), ALL);
    assert_eq!(p.build_ok().processed(), Vec::<String>::new());
    assert_eq!(
        p.run(&["build", "--release"]).processed(),
        Vec::<String>::new()
    );
}

/// Sets `path`'s mtime to 2020-01-01, as `touch -d`, `rsync -t` or an
/// archive extraction can.
fn set_old_mtime(p: &Project, path: &str) {
    let file = std::fs::File::options()
        .append(true)
        .open(p.path().join(path))
        .unwrap();
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800);
    file.set_modified(old).unwrap();
}

#[test]
fn a_change_that_keeps_size_and_mtime_is_still_seen() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("assets/t.txt", "aaaa\n");
    set_old_mtime(&p, "assets/t.txt");
    p.build_ok();
    let text = |run: &assets_test_support::Run| {
        let bytes = std::fs::read(run.parcel("main")).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
        let text = parcel.text(assets_runtime::ResourceId::of("t.txt"));
        text.unwrap().into_owned()
    };

    // Same size, mtime set back to what the record holds.
    p.file("assets/t.txt", "bbbb\n");
    set_old_mtime(&p, "assets/t.txt");
    let run = p.build_ok();
    assert_eq!(run.processed(), ["t.txt"]);
    assert_eq!(text(&run), "bbbb\n");

    // Another file of the same size and mtime renamed over it.
    p.file("assets/.new", "cccc\n");
    set_old_mtime(&p, "assets/.new");
    std::fs::rename(p.path().join("assets/.new"), p.path().join("assets/t.txt")).unwrap();
    let run = p.build_ok();
    assert_eq!(run.processed(), ["t.txt"]);
    assert_eq!(text(&run), "cccc\n");

    // And with nothing changed, nothing runs.
    assert_eq!(p.build_ok().processed(), Vec::<String>::new());
}

#[test]
fn a_file_renamed_with_the_same_bytes_runs_no_processor() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n",
    )
    .png("assets/images/sky.png", 40, 30, 1)
    .png("assets/sprites/hero.png", 12, 10, 2)
    .file("assets/notes/a.txt", "text resolves includes by path\n");
    let before = p.build_ok();
    let buf = assets_runtime::ParcelBuf::open(&before.parcel("main")).unwrap();
    let sky = buf
        .parcel()
        .bytes(assets_runtime::ResourceId::of("images/sky.png"))
        .unwrap()
        .into_owned();
    drop(buf);

    // Renamed and moved: the image's outputs are taken over, and the
    // atlas's (its sprite's contents are the same): no processor runs but
    // `text`'s, whose output may depend on the path.
    let rename = |from: &str, to: &str| {
        let (from, to) = (
            p.path().join("assets").join(from),
            p.path().join("assets").join(to),
        );
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::rename(from, to).unwrap();
    };
    rename("images/sky.png", "backgrounds/sky-day.png");
    rename("sprites/hero.png", "sprites/player.png");
    rename("notes/a.txt", "notes/b.txt");
    let run = p.build_ok();
    assert_eq!(run.processed(), ["notes/b.txt"], "{}", run.stderr);
    let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    let id = assets_runtime::ResourceId::of;
    assert_eq!(
        parcel.bytes(id("backgrounds/sky-day.png")).unwrap(),
        &sky[..]
    );
    assert!(parcel.get(id("images/sky.png")).is_none());
    assert!(parcel.sprite(id("sprites/player.png")).is_some());
    // The taken-over record is the new file's: nothing runs next time,
    // and an edit runs it.
    assert!(p.build_ok().processed().is_empty());
    p.png("assets/backgrounds/sky-day.png", 40, 30, 9);
    assert_eq!(p.build_ok().processed(), ["backgrounds/sky-day.png"]);
    // A rename with other bytes runs, as any new file does.
    p.remove("assets/backgrounds/sky-day.png")
        .png("assets/backgrounds/dusk.png", 40, 30, 3);
    assert_eq!(p.build_ok().processed(), ["backgrounds/dusk.png"]);
}

#[test]
fn an_atlas_whose_sprites_are_renamed_in_order_is_taken_over_and_reordered_repacks() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprites/**/*.png\"\nprocessor = \"sprite\"\n",
    )
    .png("assets/sprites/a.png", 12, 10, 1)
    .png("assets/sprites/b.png", 20, 8, 2)
    .png("assets/sprites/c.png", 12, 10, 1) // a's bytes: one sprite twice
    .png("assets/sprites/d.png", 7, 9, 3);
    let frames = |run: &assets_test_support::Run, names: &[&str]| {
        let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
        let parcel = buf.parcel();
        (names.iter())
            .map(|n| {
                let id = assets_runtime::ResourceId::of_runtime(&format!("sprites/{n}.png"));
                let f = parcel.sprite(id).unwrap().frame;
                (f.page_index, f.x, f.y, f.w, f.h)
            })
            .collect::<Vec<_>>()
    };
    let rename = |pairs: &[(&str, &str)]| {
        for (from, to) in pairs {
            let to = p.path().join(format!("assets/sprites/{to}.png"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(p.path().join(format!("assets/sprites/{from}.png")), to).unwrap();
        }
    };
    let before = p.build_ok();
    let old = frames(&before, &["a", "b", "c", "d"]);

    // A new naming scheme that keeps the order: no processor runs, not
    // even the atlas's, and every sprite keeps its place.
    rename(&[
        ("a", "hero-a"),
        ("b", "hero-b"),
        ("c", "hero-c"),
        ("d", "hero-d"),
    ]);
    let run = p.build_ok();
    assert_eq!(run.processed(), Vec::<String>::new(), "{}", run.stderr);
    assert_eq!(frames(&run, &["hero-a", "hero-b", "hero-c", "hero-d"]), old);
    // What packing from nothing makes, byte for byte.
    let verify = p.run(&["verify"]);
    assert!(verify.success(), "{}", verify.stderr);
    let taken_over = std::fs::read(run.parcel("main")).unwrap();
    std::fs::remove_dir_all(p.cache_dir()).unwrap();
    let fresh = p.build_ok();
    assert_eq!(fresh.processed().len(), 5, "{:?}", fresh.processed());
    assert_eq!(std::fs::read(fresh.parcel("main")).unwrap(), taken_over);

    // Renames that reorder the list pack again; the sprites' own steps
    // still take their outputs over.
    rename(&[("hero-a", "z/a"), ("hero-d", "0d")]);
    let run = p.build_ok();
    assert_eq!(run.processed(), ["atlas:main"], "{}", run.stderr);
    assert!(p.run(&["verify"]).success());
    // And with nothing changed, nothing runs.
    assert!(p.build_ok().processed().is_empty());
}
