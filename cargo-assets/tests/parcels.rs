//! Parcels through the real binary: written from the manifest's globs,
//! rewritten only when their contents change, kept when an asset fails, and
//! inspected (and verified) by `cargo assets inspect`.

use std::os::unix::fs::MetadataExt;

use assets_test_support::{Project, cache_outputs};
use serde_json::Value;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.parcels]
main = { include = ["**"], exclude = ["levels/**"] }
levels = ["levels/**"]
"#,
    )
    .png("assets/sprites/hero.png", 6, 4, 1)
    .file("assets/readme.txt", "hello\n")
    .file("assets/levels/one.lvl", [1u8, 2, 3]);
    p
}

fn inspect(p: &Project, parcel: &std::path::Path) -> (Option<i32>, Vec<Value>, String) {
    let run = p.run(&["inspect", parcel.to_str().unwrap()]);
    (run.code, run.messages, run.stderr)
}

/// (mtime, inode): changes whenever the file is replaced.
fn identity(path: &std::path::Path) -> (i64, i64, u64) {
    let m = std::fs::metadata(path).unwrap();
    (m.mtime(), m.mtime_nsec(), m.ino())
}

#[test]
fn parcels_hold_what_their_globs_select_and_inspect_lists_it() {
    let p = project();
    let run = p.build_ok();
    let (code, messages, stderr) = inspect(&p, &run.parcel("main"));
    assert_eq!(code, Some(0), "{stderr}");
    let resources: Vec<&Value> = messages
        .iter()
        .filter(|m| m["reason"] == "resource")
        .collect();
    let names: Vec<&str> = resources
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["readme.txt", "sprites/hero.png"]);
    assert_eq!(resources[0]["kind"], "text");
    assert_eq!(resources[0]["size"], 6);
    assert_eq!(resources[1]["kind"], "image");
    // A 6×4 noise image does not compress: its rows are stored raw.
    assert_eq!(
        resources[1]["image"],
        serde_json::json!({"width": 6, "height": 4, "encoding": "raw"})
    );
    // Header and rows, compressed (LZ4 in dev) unless that would be larger.
    let size = resources[1]["size"].as_u64().unwrap();
    assert!(size > 16 && size <= 16 + 6 * 4 * 4, "{size}");
    assert_eq!(
        messages.last().unwrap(),
        &serde_json::json!({"reason": "inspect-finished", "resources": 2, "intact": true})
    );
    let (_, levels, _) = inspect(&p, &run.parcel("levels"));
    assert_eq!(levels[0]["name"], "levels/one.lvl");
    assert_eq!(levels[0]["kind"], "bytes");
}

#[test]
fn a_parcel_is_rewritten_only_when_its_contents_change() {
    let p = project();
    let first = p.build_ok();
    let (main, levels) = (first.parcel("main"), first.parcel("levels"));
    let (main_id, levels_id) = (identity(&main), identity(&levels));
    std::thread::sleep(std::time::Duration::from_millis(20));
    p.build_ok();
    assert_eq!(identity(&main), main_id, "a no-op leaves the parcel alone");
    p.touch("assets/readme.txt");
    p.build_ok();
    assert_eq!(
        identity(&main),
        main_id,
        "touching an input leaves the parcel alone"
    );
    // A game that holds the old file keeps reading the old parcel, whole.
    let old_bytes = std::fs::read(&main).unwrap();
    let mut held = std::fs::File::open(&main).unwrap();
    p.file("assets/readme.txt", "hello again\n");
    p.build_ok();
    assert_ne!(
        identity(&main),
        main_id,
        "an edit rewrites the parcel that holds it"
    );
    let mut still = Vec::new();
    std::io::Read::read_to_end(&mut held, &mut still).unwrap();
    assert_eq!(still, old_bytes);
    // The old version was kept alive by a link in tmp/ until the build ended.
    let leftovers: Vec<_> = std::fs::read_dir(p.cache_dir().join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(identity(&levels), levels_id, "and only that parcel");
    p.remove("assets/sprites/hero.png");
    p.build_ok();
    let (_, messages, _) = inspect(&p, &main);
    let names: Vec<&str> = messages.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(names, ["readme.txt"], "a deleted asset leaves its parcel");
}

#[test]
fn a_failing_asset_keeps_the_last_good_release_parcel() {
    let p = project();
    let release = p.run(&["build", "--release"]);
    assert!(release.success(), "{}", release.stderr);
    let main = release.parcel("main");
    let good = std::fs::read(&main).unwrap();
    p.file("assets/sprites/hero.png", b"no longer a png");
    let run = p.run(&["build", "--release"]);
    assert_eq!(run.code, Some(101));
    assert_eq!(run.finished()["parcels"].get("main"), None);
    assert!(
        run.finished()["parcels"].get("levels").is_some(),
        "parcels without the failure are still written"
    );
    assert!(
        run.stderr.contains("parcel `main` not written")
            && run.stderr.contains("the previous one is kept"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&main).unwrap(), good);
}

#[test]
fn inspecting_a_corrupt_or_truncated_parcel_fails_cleanly() {
    let p = project();
    let main = p.build_ok().parcel("main");
    let good = std::fs::read(&main).unwrap();
    let copy = p.path().join("copy.parcel");
    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 0x40; // inside the last resource or its padding
    let len = good.len();
    for (what, bytes) in [
        ("flipped", flipped),
        ("truncated", good[..len / 2].to_vec()),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&copy, bytes).unwrap();
        let (code, _, stderr) = inspect(&p, &copy);
        assert_eq!(code, Some(101), "{what}: {stderr}");
        assert!(
            stderr.contains("error:") && stderr.contains("copy.parcel"),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    }
}

#[test]
fn ids_keep_naming_the_same_resources_after_assets_come_and_go() {
    let p = project();
    let ids = |p: &Project| -> std::collections::BTreeMap<String, String> {
        let main = p.build_ok().parcel("main");
        let (_, messages, _) = inspect(p, &main);
        messages
            .iter()
            .filter(|m| m["reason"] == "resource")
            .map(|m| {
                (
                    m["id"].as_str().unwrap().to_owned(),
                    m["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let before = ids(&p);
    p.file("assets/new/one.txt", "1")
        .file("assets/new/two.txt", "2")
        .remove("assets/readme.txt");
    let after = ids(&p);
    for (id, name) in &before {
        match after.get(id) {
            Some(other) => assert_eq!(other, name, "id {id} changed meaning"),
            None => assert_eq!(name, "readme.txt", "only the removed asset's id is gone"),
        }
    }
    assert_eq!(after.len(), 3);
}

#[test]
fn editing_a_sprite_in_place_names_the_sprite_as_changed_not_only_its_page() {
    // Same size, other pixels: the frame (where the sprite lies) is the
    // same, but what a game drew from it is not.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n",
    )
    .png("assets/sprites/hero.png", 6, 4, 1)
    .png("assets/sprites/coin.png", 3, 3, 2);
    p.build_ok();
    p.png("assets/sprites/hero.png", 6, 4, 9);
    let run = p.build_ok();
    let written = run
        .with_reason("parcel-written")
        .next()
        .unwrap_or_else(|| panic!("{:#?}", run.messages));
    assert_eq!(
        written["changed"],
        serde_json::json!(["atlas:main#0", "sprites/hero.png"]),
        "{written}"
    );
}

/// Art with flat runs, as drawn images have (noise would be stored raw:
/// rows that do not compress are).
fn drawn(w: u32, h: u32) -> image::RgbaImage {
    image::RgbaImage::from_fn(w, h, |x, y| {
        let band = (y / 4) as u8;
        if (x / 8 + y / 8) % 3 == 0 {
            image::Rgba([0, 0, 0, 0])
        } else {
            image::Rgba([
                band.wrapping_mul(40),
                200 - band * 10,
                (x / 16) as u8 * 60,
                255,
            ])
        }
    })
}

#[test]
fn images_are_compressed_by_variant_and_decode_to_their_exact_pixels() {
    use assets_runtime::image::Encoding;
    use assets_runtime::{ParcelBuf, ResourceId};
    use assets_test_support::encode_png;

    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "raw/*.png"
encoding = "raw"

[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"
"#,
    );
    let art = drawn(64, 48);
    let sprite = drawn(20, 12);
    p.file("assets/art.png", encode_png(&art))
        .file("assets/raw/art.png", encode_png(&art))
        .file("assets/sprites/a.png", encode_png(&sprite));
    for (args, expected) in [
        (&["build"][..], Encoding::Lz4),
        (&["build", "--release"][..], Encoding::Zstd),
    ] {
        let run = p.run(args);
        assert!(run.success(), "{}", run.stderr);
        let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
        let parcel = buf.parcel();
        let image = parcel.image(ResourceId::of("art.png")).unwrap();
        assert_eq!(image.header.encoding, expected, "{args:?}");
        assert_eq!(image.pixels().unwrap(), art.as_raw().as_slice(), "{args:?}");
        assert!(
            image.data.len() * 3 < art.as_raw().len(),
            "{args:?}: {} bytes for {} of rows",
            image.data.len(),
            art.as_raw().len()
        );
        let raw = parcel.image(ResourceId::of("raw/art.png")).unwrap();
        assert_eq!(
            raw.header.encoding,
            Encoding::Raw,
            "a rule's `encoding` wins"
        );
        assert_eq!(raw.data, art.as_raw().as_slice());
        let drawn = parcel.sprite(ResourceId::of("sprites/a.png")).unwrap();
        assert_eq!(
            drawn.page.header.encoding, expected,
            "{args:?}: the atlas page"
        );
        let rows = drawn.page.pixels().unwrap();
        let f = drawn.frame;
        assert!(!f.rotated);
        for y in 0..f.h {
            for x in 0..f.w {
                let at = (((f.y + y) * drawn.page.header.width + f.x + x) * 4) as usize;
                let want = sprite.get_pixel(f.trim_x + x, f.trim_y + y).0;
                assert_eq!(rows[at..at + 4], want, "{args:?}: sprite pixel ({x},{y})");
            }
        }
    }
}

/// A level file as games keep them: JSON whose keys repeat.
fn level_json(entities: usize) -> String {
    let mut out = String::from("{\"name\": \"meadow\", \"entities\": [\n");
    for i in 0..entities {
        out.push_str(&format!(
            "  {{\"kind\": \"{}\", \"x\": {}, \"y\": {}, \"hp\": {}}},\n",
            ["tree", "coin", "slime", "door"][i % 4],
            (i * 37) % 1024,
            (i * 91) % 768,
            i % 10
        ));
    }
    out.push_str("]}\n");
    out
}

#[test]
fn text_and_bytes_are_compressed_by_variant_and_by_the_parcels_key() {
    use assets_runtime::{Compression, ParcelBuf, ResourceId};

    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let manifest = |plain: &str| {
        format!(
            r#"
[package.metadata.assets.parcels]
main = {{ include = ["**"], exclude = ["plain/**"] }}
plain = {{ include = ["plain/**"], compression = "{plain}" }}
"#
        )
    };
    p.metadata(&manifest("none"));
    let level = level_json(400);
    // Bytes a compressor cannot shrink: stored as they are, whatever the parcel asks.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let noise: Vec<u8> = (0..8192)
        .map(|_| {
            // xorshift64*: bytes with no pattern to find.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect();
    p.file("assets/levels/meadow.json", &level)
        .file("assets/noise.bin", &noise)
        .file("assets/plain/meadow.json", &level)
        .png("assets/art.png", 32, 32, 3);
    let stored = |parcel: &assets_runtime::Parcel<'_>, name: &str| {
        let r = parcel.by_name(name).unwrap();
        (r.compression(), r.stored().len())
    };
    for (args, expected) in [
        (&["build"][..], Compression::Lz4),
        (&["build", "--release"][..], Compression::Zstd),
    ] {
        let run = p.run(args);
        assert!(run.success(), "{}", run.stderr);
        let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
        let main = buf.parcel();
        let (compression, len) = stored(&main, "levels/meadow.json");
        assert_eq!(compression, expected, "{args:?}");
        assert!(len * 3 < level.len(), "{args:?}: {len} of {}", level.len());
        assert_eq!(
            main.text(ResourceId::of("levels/meadow.json")).unwrap(),
            level
        );
        assert_eq!(stored(&main, "noise.bin"), (Compression::None, noise.len()));
        assert_eq!(
            &*main.bytes(ResourceId::of("noise.bin")).unwrap(),
            &noise[..]
        );
        assert_eq!(
            stored(&main, "art.png").0,
            Compression::None,
            "never images"
        );
        let buf = ParcelBuf::open(&run.parcel("plain")).unwrap();
        assert_eq!(
            stored(&buf.parcel(), "plain/meadow.json"),
            (Compression::None, level.len()),
            "the parcel's key wins over the variant"
        );
        // inspect decompresses and verifies, and says how each is stored.
        let (code, messages, stderr) = inspect(&p, &run.parcel("main"));
        assert_eq!(code, Some(0), "{stderr}");
        let meadow = messages
            .iter()
            .find(|m| m["name"] == "levels/meadow.json")
            .unwrap();
        assert_eq!(meadow["compression"], expected.name());
        assert_eq!(meadow["size"], level.len());
        assert_eq!(meadow["stored_size"], len);
        assert_eq!(meadow["intact"], true);
    }

    // Changing the key rewrites that parcel, and runs no processor.
    let before = std::fs::read(p.run(&["build"]).parcel("plain")).unwrap();
    p.metadata(&manifest("lz4"));
    let run = p.build_ok();
    assert_eq!(run.build_finished().ran, 0, "{}", run.stderr);
    let after = std::fs::read(run.parcel("plain")).unwrap();
    assert!(
        after.len() * 2 < before.len(),
        "{} then {}",
        before.len(),
        after.len()
    );
    let buf = ParcelBuf::from_vec(after).unwrap();
    assert_eq!(
        stored(&buf.parcel(), "plain/meadow.json").0,
        Compression::Lz4
    );

    // A misspelled compression is a manifest error naming the key and the fix.
    p.metadata(&manifest("zstandard"));
    let run = p.run(&["build"]);
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("package.metadata.assets.parcels.plain.compression")
            && run
                .stderr
                .contains("unknown compression `zstandard`: expected `none`, `lz4` or `zstd`"),
        "{}",
        run.stderr
    );
}

/// A rule's `compression` decides for its assets' resources over the
/// parcel's (music already compressed by its encoder stored as it is, levels
/// in zstd even in dev); changing it rewrites the parcel as a clean build
/// writes it, runs no processor, and a processor never sees the key.
#[test]
fn a_rules_compression_wins_over_the_parcels_and_changing_it_runs_nothing() {
    use assets_runtime::{Compression, ParcelBuf, ResourceId};

    let manifest = |levels: &str| {
        format!(
            r#"
[[package.metadata.assets.rules]]
match = "music/**"
compression = "none"

[[package.metadata.assets.rules]]
match = "levels/**"
compression = "{levels}"
"#
        )
    };
    let level = level_json(400);
    let files = |p: &Project, levels: &str| {
        p.metadata(&manifest(levels))
            .file("assets/levels/meadow.json", &level)
            .file("assets/music/theme.txt", level_json(300))
            .file("assets/notes.txt", level_json(200));
    };
    let clean_build = |levels: &str| {
        let fresh = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
        files(&fresh, levels);
        std::fs::read(fresh.build_ok().parcel("main")).unwrap()
    };
    let stored = |bytes: &[u8], name: &str| {
        let parcel = assets_runtime::Parcel::from_bytes(bytes).unwrap();
        let r = parcel.by_name(name).unwrap();
        (r.compression(), r.stored().len())
    };
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    files(&p, "zstd");
    let run = p.build_ok();
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    assert_eq!(stored(&parcel, "levels/meadow.json").0, Compression::Zstd);
    let theme = level_json(300);
    assert_eq!(
        stored(&parcel, "music/theme.txt"),
        (Compression::None, theme.len()),
        "compressible, but its rule says none"
    );
    assert_eq!(
        stored(&parcel, "notes.txt").0,
        Compression::Lz4,
        "no rule: the parcel's (the dev default)"
    );
    let buf = ParcelBuf::from_vec(parcel).unwrap();
    assert_eq!(
        buf.parcel()
            .text(ResourceId::of("levels/meadow.json"))
            .unwrap(),
        level
    );

    // The rule's compression changes: only the parcel is written again,
    // and not from its previous version's zstd bytes.
    files(&p, "lz4");
    let run = p.build_ok();
    assert_eq!(run.build_finished().ran, 0, "{}", run.stderr);
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    assert_eq!(stored(&parcel, "levels/meadow.json").0, Compression::Lz4);
    assert_eq!(parcel, clean_build("lz4"));
    files(&p, "zstd");
    p.build_ok();
    assert_eq!(
        std::fs::read(run.parcel("main")).unwrap(),
        clean_build("zstd")
    );

    // A misspelled value names the rule's key.
    files(&p, "zst");
    let run = p.run(&["build"]);
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("package.metadata.assets.rules[1].compression")
            && run.stderr.contains("did you mean `zstd`?"),
        "{}",
        run.stderr
    );
}

/// A parcel rewritten after an edit copies its unchanged resources from its
/// previous version; it must come out byte for byte as a clean build writes
/// it, even when that previous version is damaged or is not the one its
/// `.sums` describes (a build killed between writing the two).
#[test]
fn a_rewritten_parcel_is_what_a_clean_build_writes_whatever_its_previous_version_holds() {
    let files = |p: &Project, edit: &str| {
        p.metadata("")
            .file("assets/levels/a.json", level_json(300))
            .file("assets/levels/b.json", level_json(200) + edit)
            .file("assets/notes.txt", "short\n")
            .png("assets/art.png", 16, 16, 5);
    };
    let clean_build = |edit: &str| {
        let fresh = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
        files(&fresh, edit);
        std::fs::read(fresh.build_ok().parcel("main")).unwrap()
    };
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    files(&p, "");
    let parcel = p.build_ok().parcel("main");
    let sums = parcel.with_extension("parcel.sums");
    let first_sums = std::fs::read(&sums).unwrap();

    // An edit: b.json changes, a.json is copied from the previous parcel.
    files(&p, " ");
    p.build_ok();
    assert_eq!(std::fs::read(&parcel).unwrap(), clean_build(" "));

    // The previous parcel damaged where a.json is stored: not copied, read
    // from the cache instead.
    let bytes = std::fs::read(&parcel).unwrap();
    let a = assets_runtime::Parcel::from_bytes(&bytes)
        .unwrap()
        .by_name("levels/a.json")
        .unwrap();
    assert_ne!(a.compression(), assets_runtime::Compression::None);
    let at = a.stored().as_ptr() as usize - bytes.as_ptr() as usize + 5;
    let mut damaged = bytes.clone();
    damaged[at] ^= 0x40;
    std::fs::write(&parcel, &damaged).unwrap();
    files(&p, "  ");
    p.build_ok();
    assert_eq!(std::fs::read(&parcel).unwrap(), clean_build("  "));

    // `.sums` from an older version than the parcel on disk (as a kill
    // between the parcel's rename and the `.sums` write leaves it): its
    // lines say b.json holds the first build's content, which it does not.
    std::fs::write(&sums, &first_sums).unwrap();
    files(&p, "");
    p.build_ok();
    assert_eq!(std::fs::read(&parcel).unwrap(), clean_build(""));
}

/// What a parcel in the cache holds whole (a text, an image, an atlas's
/// pages) is kept only there: the store reads it from the parcel, a no-op
/// build finds it, and deleting the parcel runs exactly the steps that made
/// it, for the same bytes. Intermediates (a sprite's pixels, the frame
/// table) and outputs no parcel selects are stored as ever.
#[test]
fn a_parcel_is_the_only_copy_of_what_it_holds_whole() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "atlas/*.png"
processor = "sprite"
atlas = "ui"

[package.metadata.assets.atlases.ui]
max-size = 128

[package.metadata.assets.parcels]
main = { include = ["**"], exclude = ["loose/**"] }
"#,
    )
    .png("assets/sprites/hero.png", 6, 4, 1)
    .png("assets/atlas/a.png", 9, 7, 2)
    .png("assets/atlas/b.png", 5, 11, 3)
    .file("assets/readme.txt", "hello\n")
    .file("assets/loose/notes.txt", "not in a parcel\n");
    let first = std::fs::read(p.build_ok().parcel("main")).unwrap();

    // Every output a record names is readable and whole (from the store or
    // the parcel); which of them the store keeps itself:
    let outputs = cache_outputs(&p.cache_dir(), "dev");
    let store = assets_build::unstable::Store::open(&p.cache_dir()).unwrap();
    let stored = |asset: &str| -> Vec<(String, bool)> {
        outputs[asset]
            .iter()
            .map(|(label, _, hash)| {
                (
                    label.clone(),
                    store.locate(&hash.parse().unwrap()).is_some(),
                )
            })
            .collect()
    };
    let only_in_parcel = [(String::new(), false)];
    assert_eq!(stored("readme.txt"), only_in_parcel);
    assert_eq!(stored("sprites/hero.png"), only_in_parcel);
    assert_eq!(stored("atlas/a.png"), [(String::new(), true)], "pixels");
    assert_eq!(stored("loose/notes.txt"), [(String::new(), true)]);
    for (label, kind, hash) in &outputs["atlas:ui"] {
        let held = store.locate(&hash.parse().unwrap()).is_none();
        assert_eq!(held, kind == "image", "atlas:ui#{label} ({kind})");
    }
    drop(store);

    assert_eq!(p.build_ok().processed(), Vec::<String>::new(), "a no-op");
    assert!(p.run(&["gc"]).success());
    assert_eq!(
        p.build_ok().processed(),
        Vec::<String>::new(),
        "gc keeps them"
    );

    let made_again = ["atlas:ui", "readme.txt", "sprites/hero.png"];
    std::fs::remove_dir_all(p.cache_dir().join("parcels")).unwrap();
    let run = p.build_ok();
    assert_eq!(run.processed(), made_again, "what only the parcel held");
    let parcel = run.parcel("main");
    assert_eq!(std::fs::read(&parcel).unwrap(), first);

    // Its `.sums` is how the store knows what it holds: without it, the
    // same steps run, and the parcel is written again with one.
    let sums = parcel.with_extension("parcel.sums");
    std::fs::remove_file(&sums).unwrap();
    assert_eq!(p.build_ok().processed(), made_again);
    assert!(sums.exists());
    assert_eq!(p.build_ok().processed(), Vec::<String>::new(), "a no-op");
}

/// Assets swapping parcels: each parcel is the only copy of what it held,
/// and the one written first gives up an asset the one written second
/// takes. Nothing runs again: the second reads it from the first's
/// previous version, kept open while it is replaced.
#[test]
fn assets_moving_between_parcels_are_read_from_the_parcel_that_held_them() {
    let parcels = |first: &str, second: &str| {
        format!(
            "[package.metadata.assets.parcels]\nfirst = [\"{first}/**\"]\nsecond = [\"{second}/**\"]\n"
        )
    };
    let files = |p: &Project| {
        p.file("assets/notes/n.txt", "a note\n")
            .file("assets/data/d.json", "{\"d\": 1}\n")
            .png("assets/art/a.png", 5, 5, 1);
    };
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&parcels("notes", "data"));
    files(&p);
    p.build_ok();
    p.metadata(&parcels("data", "notes"));
    let run = p.build_ok();
    assert_eq!(run.processed(), Vec::<String>::new());

    let clean = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    clean.metadata(&parcels("data", "notes"));
    files(&clean);
    let expected = clean.build_ok();
    for name in ["first", "second"] {
        let bytes = |r: &assets_test_support::Run| std::fs::read(r.parcel(name)).unwrap();
        assert_eq!(bytes(&run), bytes(&expected), "{name}");
    }
}

/// While `watch` has an edit as a patch beside the parcel, inspect shows
/// the parcel as a game sees it: through the patch, each resource from
/// the patch marked, both files verified. `--base` shows the parcel alone.
/// The patch is written by the library as `watch` writes it.
#[test]
fn inspect_sees_a_parcel_through_the_patch_an_edit_left_beside_it() {
    let p = project();
    // A large resource that stays: a patch holding over three quarters of
    // the parcel's bytes is written whole instead.
    let noise: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    // Raw PCM, as a game streams it: copied as it is.
    p.file("assets/theme.raw", &noise);
    let parcel = p.build_ok().parcel("main");
    p.file("assets/readme.txt", "hello, edited\n");
    let mut options =
        assets_build::unstable::BuildOptions::new(p.path().join("Cargo.toml"), p.cache_dir());
    options.patch_parcels = true;
    let report = assets_build::unstable::Pipeline::new(options)
        .build(&|_: &assets_build::unstable::Event<'_>| {})
        .unwrap();
    let main = report.parcels.iter().find(|r| r.name == "main").unwrap();
    assert_eq!(main.path, parcel);
    let patch = main.patch.clone().expect("the edit is a patch");
    assert_eq!(patch, assets_runtime::patch::path_of(&parcel));

    let resources = |run: &assets_test_support::Run| -> Vec<(String, u64, bool)> {
        (run.messages.iter())
            .filter(|m| m["reason"] == "resource")
            .map(|m| {
                let patched = m.get("patched").is_some_and(|v| v == true);
                (
                    m["name"].as_str().unwrap().to_owned(),
                    m["size"].as_u64().unwrap(),
                    patched,
                )
            })
            .collect()
    };
    let seen = p.run(&["inspect", parcel.to_str().unwrap()]);
    assert_eq!(seen.code, Some(0), "{}", seen.stderr);
    assert!(seen.stderr.contains("Patched"), "{}", seen.stderr);
    assert!(seen.stderr.contains(&patch.display().to_string()));
    assert_eq!(
        resources(&seen),
        [
            ("readme.txt".to_owned(), 14, true),
            ("sprites/hero.png".to_owned(), 16 + 6 * 4 * 4, false),
            ("theme.raw".to_owned(), 200_000, false),
        ]
    );
    let base = p.run(&["inspect", "--base", parcel.to_str().unwrap()]);
    assert_eq!(base.code, Some(0), "{}", base.stderr);
    assert!(!base.stderr.contains("Patched"), "{}", base.stderr);
    assert_eq!(resources(&base)[0], ("readme.txt".to_owned(), 6, false));

    // The patch alone is no parcel: the error names the parcel to inspect.
    let alone = p.run(&["inspect", patch.to_str().unwrap()]);
    assert_ne!(alone.code, Some(0));
    assert!(
        alone.stderr.contains("is a patch") && alone.stderr.contains(parcel.to_str().unwrap()),
        "{}",
        alone.stderr
    );

    // A damaged patch (a byte of its table) is named, as a damaged parcel is.
    let mut bytes = std::fs::read(&patch).unwrap();
    bytes[80] ^= 0xff;
    std::fs::write(&patch, bytes).unwrap();
    let damaged = p.run(&["inspect", parcel.to_str().unwrap()]);
    assert_ne!(damaged.code, Some(0));
    assert!(
        damaged.stderr.contains(&patch.display().to_string()),
        "{}",
        damaged.stderr
    );
}

#[test]
fn inspecting_a_parcel_that_is_not_there_says_where_parcels_are() {
    let p = project();
    let missing = p.path().join("target/assets/parcels/game/dev/main.parcel");
    let (code, _, stderr) = inspect(&p, &missing);
    assert_eq!(code, Some(101), "{stderr}");
    for needle in [
        "main.parcel",
        "a build script writes them under its OUT_DIR",
        "main::PATH",
    ] {
        assert!(
            stderr.contains(needle),
            "`{needle}` missing from:\n{stderr}"
        );
    }
}

#[test]
fn a_sprite_resized_in_a_large_atlas_moves_only_the_sprites_of_its_group() {
    // 160 sprites on pages of 40x40: dozens of pages, laid out in groups.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n\n\
         [package.metadata.assets.atlases.main]\nmax-size = 40\n",
    );
    for i in 0..160u32 {
        p.png(
            &format!("assets/sprites/s{i:03}.png"),
            12 + i % 5,
            12 + i % 3,
            i,
        );
    }
    let run = p.build_ok();
    let pages = |run: &assets_test_support::Run| {
        let bytes = std::fs::read(run.parcel("main")).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
        let frames: Vec<(String, u32, u32, u32)> = (0..160u32)
            .map(|i| {
                let name = format!("sprites/s{i:03}.png");
                let f = parcel
                    .sprite(assets_runtime::ResourceId::of(&name))
                    .unwrap()
                    .frame;
                (name, f.page_index, f.x, f.y)
            })
            .collect();
        let count = parcel
            .iter()
            .filter(|r| r.name.starts_with("atlas:main#"))
            .count();
        (frames, count)
    };
    let (before, count) = pages(&run);
    assert!(count >= 16, "{count} pages");
    p.png("assets/sprites/s007.png", 30, 30, 7);
    let run = p.build_ok();
    let (after, _) = pages(&run);
    let moved = before.iter().zip(&after).filter(|(b, a)| b != a).count();
    assert!(
        moved > 0 && moved * 2 < before.len(),
        "{moved} of 160 sprites moved"
    );
    let written = run.with_reason("parcel-written").next().unwrap();
    let changed_pages = written["changed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_str().unwrap().starts_with("atlas:main#"))
        .count();
    assert!(
        changed_pages * 2 < count,
        "{changed_pages} of {count} pages changed: {written}"
    );
}
