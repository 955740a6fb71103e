//! The Cargo integration end to end: a fresh crate in a temp dir with a
//! one-line `build.rs` and `include_parcel!`, built by the real `cargo build`.
//!
//! The crate depends on this workspace's crates by path and builds in a
//! shared target directory (`target/e2e`, so dependencies compile once),
//! each test as its own package, whose records and parcels are removed first.
//! One builds for `wasm32-unknown-unknown` when that target is installed.

use std::ops::Deref;

use assets_test_support::cargo_crate::{
    CargoBuild, CargoCrate, script_processed as processed, workspace,
};
use assets_test_support::{Message, encode_png, gltf_bin, gltf_json, png_bytes, sprite_image};

const MAIN_RS: &str = r#"
assets_runtime::include_parcel!("main");

fn main() {
    let parcel = &*main::PARCEL;
    let _named_in_code = main::sprites::HERO;
    /* more uses */
    let mut sprites: Vec<_> = parcel.iter().filter_map(|r| Some((r.name, r.sprite_frame()?))).collect();
    sprites.sort_by_key(|(name, _)| *name);
    for (name, f) in sprites {
        println!("sprite {name} {}x{} frame {}x{}", f.source_width, f.source_height, f.w, f.h);
    }
    println!("intro: {}", parcel.text(main::data::INTRO).unwrap().trim());
}
"#;

/// A game crate: `build.rs` with `assets_build::build()`, [`MAIN_RS`], two
/// sprites and a text, and a sprite rule.
struct Crate(CargoCrate);

impl Deref for Crate {
    type Target = CargoCrate;
    fn deref(&self) -> &CargoCrate {
        &self.0
    }
}

impl Crate {
    /// A crate named `name`: each test its own, as they share a target dir.
    fn new(name: &'static str) -> Crate {
        let c = Crate(CargoCrate::new(name, env!("CARGO_BIN_EXE_cargo-assets")));
        c.manifest("");
        c.write("build.rs", "fn main() { assets_build::build().unwrap() }\n");
        c.write("src/main.rs", MAIN_RS);
        c.write(
            "assets/sprites/hero.png",
            encode_png(&sprite_image(12, 10, 1, 1)),
        );
        c.write(
            "assets/sprites/tree.png",
            encode_png(&sprite_image(9, 14, 0, 2)),
        );
        c.write("assets/data/intro.txt", "Once upon a time\n");
        c
    }

    /// `Cargo.toml`, with `rule_extra` in the sprite rule.
    fn manifest(&self, rule_extra: &str) {
        self.manifest_with(rule_extra, "");
    }

    /// `Cargo.toml`, with `rule_extra` in the sprite rule and `tail` after it
    /// (more dependencies or metadata).
    fn manifest_with(&self, rule_extra: &str, tail: &str) {
        self.write(
            "Cargo.toml",
            format!(
                r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

{dependencies}
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"
{rule_extra}

{tail}

[workspace]
"#,
                dependencies = CargoCrate::workspace_dependencies(),
                name = self.name(),
            ),
        );
    }

    /// `cargo build -vv` as (succeeded, build script ran, stderr).
    /// Compiles the pipeline into the build script (`features =
    /// ["pipeline"]`), for one that defines a processor itself.
    fn in_process(&self) {
        let manifest = std::fs::read_to_string(self.path().join("Cargo.toml")).unwrap();
        let build = workspace().join("assets-build").display().to_string();
        let plain = format!("assets-build = {{ path = {build:?} }}");
        assert!(manifest.contains(&plain), "{manifest}");
        let with = format!("assets-build = {{ path = {build:?}, features = [\"pipeline\"] }}");
        self.write("Cargo.toml", manifest.replace(&plain, &with));
    }

    fn build(&self) -> (bool, bool, String) {
        let CargoBuild {
            ok,
            ran_script,
            stderr,
        } = self.0.build();
        (ok, ran_script, stderr)
    }

    fn run(&self) -> String {
        self.run_program()
    }
}

#[test]
fn a_crate_with_build_rs_and_include_parcel_builds_rebuilds_and_fails_as_it_should() {
    let c = Crate::new("e2e-game");

    // The CLI first: it builds everything once...
    let cli = c.assets(&["build"]);
    assert!(cli.success(), "{}", cli.stderr);
    assert_eq!(cli.build_finished().ran, 4, "{:?}", cli.typed);

    // ...so `cargo build` runs the build script and no processor a second time.
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "{stderr}");
    assert_eq!(
        processed(&stderr),
        Some(vec![]),
        "a processor ran twice:\n{stderr}"
    );
    let out = c.run();
    assert!(
        out.contains("sprite sprites/hero.png 12x10 frame 10x8"),
        "{out}"
    );
    assert!(
        out.contains("sprite sprites/tree.png 9x14 frame 9x14"),
        "{out}"
    );
    assert!(out.contains("intro: Once upon a time"), "{out}");

    // Nothing changed: the build script does not run.
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && !ran_script, "{stderr}");

    // One sprite edited: the script reruns and reprocesses that sprite (and its atlas).
    c.write(
        "assets/sprites/hero.png",
        encode_png(&sprite_image(12, 10, 2, 3)),
    );
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "{stderr}");
    let expected = ["atlas:main", "sprites/hero.png"]
        .map(String::from)
        .to_vec();
    assert_eq!(processed(&stderr), Some(expected), "{stderr}");
    assert!(c.run().contains("sprite sprites/hero.png 12x10 frame 8x6"));

    // A new asset's constant is there for code to use.
    c.write(
        "assets/sprites/coin.png",
        encode_png(&sprite_image(5, 5, 0, 4)),
    );
    c.write(
        "src/main.rs",
        MAIN_RS.replace("/* more uses */", "let _coin = main::sprites::COIN;"),
    );
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(c.run().contains("sprite sprites/coin.png 5x5"));

    // Removing an asset the code names is a compile error naming it.
    std::fs::remove_file(c.path().join("assets/sprites/coin.png")).unwrap();
    let (ok, _, stderr) = c.build();
    assert!(!ok, "the build should fail");
    assert!(
        stderr.contains("cannot find value `COIN` in module `main::sprites`"),
        "{stderr}"
    );

    // Editing [package.metadata.assets] takes effect.
    c.write("src/main.rs", MAIN_RS);
    c.manifest("trim = false");
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "{stderr}");
    assert!(
        c.run()
            .contains("sprite sprites/hero.png 12x10 frame 12x10")
    );
}

/// The crates a build script compiles with the pipeline in it, none of
/// which the thin client may pull in (`cargo build -vv` names each unit of
/// the graph, fresh or compiled).
const PIPELINE_CRATES: [&str; 5] = ["naga v", "gltf v", "image v", "symphonia v", "thiserror v"];

#[test]
fn the_build_script_runs_the_installed_cargo_assets_and_says_how_to_install_it_when_missing() {
    let c = Crate::new("e2e-installed");

    // A machine without it: the build fails with one line saying what to
    // install and how (this clone's path: the dependency is by path).
    let mut cmd = c.cargo_command(&["build", "-vv"]);
    let out = CargoCrate::without_cargo_assets(&mut cmd, &[])
        .output()
        .unwrap();
    let build = CargoBuild::of(&out);
    assert!(!build.ok, "{}", build.stderr);
    let said: Vec<&str> = (build.stderr.lines())
        .filter(|l| l.starts_with("error: e2e-installed") && l.contains("cargo-assets:"))
        .collect();
    assert_eq!(said.len(), 1, "{}", build.stderr);
    let install = format!(
        "`cargo install --path {} --locked`",
        workspace().join("cargo-assets").display()
    );
    for part in [
        "no `cargo-assets` on PATH",
        &install,
        "features = [\"pipeline\"]",
    ] {
        assert!(said[0].contains(part), "{part:?} not in {}", said[0]);
    }
    // The script is the thin client: none of the pipeline is compiled for it.
    for unit in PIPELINE_CRATES {
        assert!(
            !build.stderr.contains(unit),
            "{unit} built:\n{}",
            build.stderr
        );
    }

    // Installed (on PATH): the same build succeeds, and the game runs.
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "{stderr}");
    let mut all = [
        "atlas:main",
        "data/intro.txt",
        "sprites/hero.png",
        "sprites/tree.png",
    ]
    .map(String::from)
    .to_vec();
    all.sort();
    assert_eq!(processed(&stderr), Some(all), "{stderr}");
    for unit in PIPELINE_CRATES {
        assert!(!stderr.contains(unit), "{unit} built:\n{stderr}");
    }
    assert!(c.run().contains("sprite sprites/hero.png 12x10"));
}

#[cfg(unix)]
#[test]
fn another_release_of_cargo_assets_is_refused_by_name_and_a_reinstall_reruns_the_script() {
    use std::os::unix::fs::PermissionsExt;
    let c = Crate::new("e2e-release");
    let bins = tempfile::tempdir().unwrap();

    // An older install on PATH: refused, both releases named.
    let old = bins.path().join("cargo-assets");
    std::fs::write(&old, "#!/bin/sh\necho cargo-assets 0.0.9\n").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let build_with = |bin: Option<&std::path::Path>| {
        let mut cmd = c.cargo_command(&["build", "-vv"]);
        CargoCrate::without_cargo_assets(&mut cmd, &[bins.path()]);
        if let Some(bin) = bin {
            cmd.env("CARGO_ASSETS_BIN", bin);
        }
        CargoBuild::of(&cmd.output().unwrap())
    };
    let build = build_with(None);
    assert!(!build.ok, "{}", build.stderr);
    let expected = format!(
        "`{}` is cargo-assets 0.0.9, and this build script's assets-build is {}: they must be one release",
        old.display(),
        env!("CARGO_PKG_VERSION")
    );
    assert!(build.stderr.contains(&expected), "{}", build.stderr);

    // `CARGO_ASSETS_BIN` wins over PATH: the right one, installed elsewhere.
    let right = bins.path().join("installed-elsewhere");
    std::fs::copy(env!("CARGO_BIN_EXE_cargo-assets"), &right).unwrap();
    let build = build_with(Some(&right));
    assert!(build.ok && build.ran_script, "{}", build.stderr);
    assert!(c.run().contains("sprite sprites/tree.png 9x14"));
    let build = build_with(Some(&right));
    assert!(
        build.ok && !build.ran_script,
        "nothing changed:\n{}",
        build.stderr
    );

    // Installed afresh: the script runs again (Cargo watches the binary).
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::remove_file(&right).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_cargo-assets"), &right).unwrap();
    let build = build_with(Some(&right));
    assert!(build.ok && build.ran_script, "{}", build.stderr);

    // A variable naming no file says so.
    let build = build_with(Some(&bins.path().join("missing")));
    assert!(!build.ok);
    assert!(
        build.stderr.contains(&format!(
            "CARGO_ASSETS_BIN names `{}`, which is no file",
            bins.path().join("missing").display()
        )),
        "{}",
        build.stderr
    );
}

#[test]
fn a_broken_sprite_warns_in_a_debug_build_and_the_game_runs_with_the_rest() {
    let c = Crate::new("e2e-broken");
    // Built once with every sprite good...
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    // ...then the hero is saved broken, and a new sprite is broken from the start.
    c.write("assets/sprites/hero.png", b"not a png at all");
    c.write("assets/sprites/new.png", b"not a png either");
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "a debug build goes on:\n{stderr}");
    for needle in [
        // One line per failed asset, saying what the parcel holds instead.
        "warning: e2e-broken@0.1.0: cargo-assets: `sprites/hero.png` (sprite): not a PNG, JPEG, WebP, BMP or TGA image",
        "; its last good build is used",
        "warning: e2e-broken@0.1.0: cargo-assets: `sprites/new.png` (sprite): not a PNG, JPEG, WebP, BMP or TGA image",
        "; the parcels go without it",
        // How to leave such a file out, on the same line.
        "; its last good build is used (not an asset? `ignore = [\"sprites/hero.png\"]` under [package.metadata.assets] leaves it out)",
    ] {
        assert!(
            stderr.contains(needle),
            "`{needle}` missing from:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The game runs: the hero as it last built, the tree packed as ever.
    let out = c.run();
    assert!(
        out.contains("sprite sprites/hero.png 12x10 frame 10x8"),
        "{out}"
    );
    assert!(
        out.contains("sprite sprites/tree.png 9x14 frame 9x14"),
        "{out}"
    );
    assert!(!out.contains("sprites/new.png"), "{out}");

    // Ignored, the new file is no asset at all; the hero fixed, all is well.
    c.manifest_with(
        "",
        "[package.metadata.assets]\nignore = [\"sprites/new.png\"]",
    );
    c.write(
        "assets/sprites/hero.png",
        encode_png(&sprite_image(12, 10, 2, 3)),
    );
    let (ok, _, stderr) = c.build();
    assert!(ok && !stderr.contains("warning: e2e-broken"), "{stderr}");
    assert!(c.run().contains("sprite sprites/hero.png 12x10 frame 8x6"));
}

#[test]
fn a_broken_sprite_fails_a_strict_build_with_one_cargo_error_per_asset_and_no_panic() {
    let c = Crate::new("e2e-strict");
    c.write("assets/sprites/broken.png", b"not a png at all");
    // What CI sets to fail on a broken asset in a debug build, as a release build does.
    c.write(".cargo/config.toml", "[env]\nCARGO_ASSETS_STRICT = \"1\"\n");
    let (ok, _, stderr) = c.build();
    assert!(!ok, "{stderr}");
    for needle in [
        "error: e2e-strict@0.1.0: cargo-assets: `sprites/broken.png` (sprite): not a PNG, JPEG, WebP, BMP or TGA image",
        "error: e2e-strict@0.1.0: cargo-assets: parcel `main` not written: it holds assets that failed",
        // The details, on the script's stderr.
        "error: failed to process `sprites/broken.png` (sprite): not a PNG, JPEG, WebP, BMP or TGA image",
    ] {
        assert!(
            stderr.contains(needle),
            "`{needle}` missing from:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A broken manifest is one error naming its key, no panic either.
    c.manifest("atlas = 3");
    let (ok, _, stderr) = c.build();
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("error: e2e-strict@0.1.0: cargo-assets: "),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn custom_processors_from_a_crate_work_in_build_rs_and_in_cargo_assets() {
    let c = Crate::new("e2e-levels");
    let level_processor = workspace().join("examples/level-processor");
    // The level rule's keys after `match`: `processor = "level"` unless
    // they name a processor.
    let manifest = |keys: &str| {
        let processor = match keys.starts_with("processor") {
            true => "",
            false => "processor = \"level\"\n",
        };
        c.manifest_with(
            "",
            &format!(
                r#"[package.metadata.assets]
processors = ["level-processor"]

[[package.metadata.assets.rules]]
match = "levels/*.lvl"
{processor}{keys}
[build-dependencies.level-processor]
path = {:?}
"#,
                level_processor.display().to_string()
            ),
        )
    };
    manifest("");
    c.write(
        "build.rs",
        "fn main() { assets_build::Builder::new().register(level_processor::register).build().unwrap() }\n",
    );
    c.write("assets/levels/one.lvl", "T.C\n.H.\n");
    c.write(
        "src/main.rs",
        r#"assets_runtime::include_parcel!("main");
fn main() {
    let level = main::PARCEL.bytes(main::levels::ONE).unwrap();
    println!("level {:?}", std::str::from_utf8(&level[8..]).unwrap());
}
"#,
    );
    // The build script uses the crate's processor, and so does the CLI,
    // through its runner, without a second definition: it finds the build
    // script's work fresh (then processes an edit itself, below).
    let script_then_cli = |shows: &str| {
        let (ok, _, stderr) = c.build();
        assert!(ok, "{stderr}");
        assert!(c.run().contains(shows));
        let out = c.assets(&["build"]);
        assert!(out.success(), "{}", out.stderr);
        assert_eq!(out.build_finished().ran, 0, "{:?}", out.typed);
    };
    script_then_cli(r#"level "T.C.H.""#);

    // The processor's warning, at its place in the map: through Cargo, then
    // said again by a build that finds the step fresh, with its location.
    c.write("assets/levels/two.lvl", "H.\n.H\n");
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    let said = "`levels/two.lvl:2:2` (level): a second hero: the player starts at the first, \
                line 1, column 1";
    assert!(
        stderr.contains(&format!("warning: e2e-levels@0.1.0: cargo-assets: {said}")),
        "{stderr}"
    );
    let out = c.assets(&["build"]);
    assert_eq!(out.build_finished().ran, 0, "{:?}", out.typed);
    assert!(
        out.stderr.contains(&format!("warning: {said}")),
        "{}",
        out.stderr
    );
    let location = out.typed.iter().find_map(|m| match m {
        Message::AssetWarning {
            asset, location, ..
        } if asset.as_str() == "levels/two.lvl" => location.clone(),
        _ => None,
    });
    assert_eq!(location, Some(assets_build::Location::at(2, 2)));

    // A setting the processor's type does not have: its key, its line, the
    // nearest field; nothing runs. Spelled right, the map fails as asked.
    manifest("strikt = true\n");
    let out = c.assets(&["build"]);
    assert_eq!(out.code, Some(101), "{}", out.stderr);
    for part in [
        "unknown key `strikt` for processor `level`",
        "Cargo.toml:23:1",
        "rules[1].strikt",
        "did you mean `strict`?",
    ] {
        assert!(
            out.stderr.contains(part),
            "`{part}` missing: {}",
            out.stderr
        );
    }
    manifest("strict = true\n");
    let out = c.assets(&["build"]);
    assert_eq!(out.code, Some(101), "{}", out.stderr);
    assert!(
        out.failure_message("levels/two.lvl")
            .starts_with("a second hero"),
        "{}",
        out.stderr
    );
    manifest("");
    c.write("assets/levels/two.lvl", ".H\n");

    c.write("assets/levels/one.lvl", "T.C\n.Hx\n");
    let out = c.assets(&["build"]);
    assert_eq!(out.code, Some(101), "{:?}", out.typed);
    assert_eq!(
        out.failure_message("levels/one.lvl"),
        "line 2, column 3: unknown tile `x` (tiles: .TCHB)"
    );
    let failed = out
        .typed
        .iter()
        .find(|m| matches!(m, Message::AssetFailed { .. }));
    assert!(
        matches!(failed, Some(Message::AssetFailed { processor, .. }) if processor == "level"),
        "{failed:?}"
    );

    // The crate's processor as a chain's last stage: a tool upper-cases a
    // map written in lower case, and `level` reads what the tool made, in
    // the build script and in the CLI alike.
    manifest(
        "processor = [\"command\", \"level\"]\n\
         command = { command = [\"sh\", \"-c\", \"< \\\"$0\\\" tr a-z A-Z > \\\"$1\\\"\", \"{input}\", \"{output}\"] }\n",
    );
    c.write("assets/levels/one.lvl", "t.c\n.h.\n");
    script_then_cli(r#"level "T.C.H.""#);
    // Same letters, another case: the tool's output is the same, so only
    // the first stage runs.
    c.write("assets/levels/one.lvl", "T.c\n.h.\n");
    let out = c.assets(&["build"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        out.processed(),
        ["stage1:levels/one.lvl"],
        "{:?}",
        out.typed
    );
}

#[test]
fn editing_a_processor_crates_code_reruns_its_steps_and_no_others() {
    let c = Crate::new("e2e-code-edit");
    let level_processor = workspace().join("examples/level-processor");
    // A processor crate of the game's own, as a path dependency: `stamp`
    // prefixes a note with a mark its code holds.
    c.write(
        "stamp/Cargo.toml",
        "[package]\nname = \"stamp\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nassets-build = { path = \"ASSETS_BUILD\", features = [\"pipeline\"] }\n"
            .replace("ASSETS_BUILD", &workspace().join("assets-build").display().to_string().replace('\\', "/")),
    );
    let stamp = |mark: &str| {
        format!(
            r#"use assets_build::{{Context, ProcessError, Processor, Registry}};
pub fn register(registry: &mut Registry) {{
    registry.register(Stamp).claim_extensions("stamp", &["note"]);
}}
struct Stamp;
impl Processor for Stamp {{
    type Settings = assets_build::NoSettings;
    fn name(&self) -> &str {{ "stamp" }}
    fn version(&self) -> u32 {{ 1 }}
    fn process(&self, ctx: &mut Context<'_>, _: assets_build::NoSettings) -> Result<(), ProcessError> {{
        let source = ctx.source()?;
        ctx.emit("bytes", [b"{mark}:".as_slice(), &source].concat())
    }}
}}
"#
        )
    };
    c.write("stamp/src/lib.rs", stamp("v1"));
    c.manifest_with(
        "",
        &format!(
            r#"[package.metadata.assets]
processors = ["level-processor", "stamp"]

[build-dependencies.level-processor]
path = {:?}

[build-dependencies.stamp]
path = "stamp"
"#,
            level_processor.display().to_string()
        ),
    );
    c.write(
        "build.rs",
        "fn main() { assets_build::Builder::new().register(level_processor::register).register(stamp::register).build().unwrap() }\n",
    );
    c.write("assets/levels/one.lvl", "T.C\n");
    c.write("assets/notes/a.note", "hello");
    c.write("assets/notes/b.note", "world");
    c.write(
        "src/main.rs",
        r#"assets_runtime::include_parcel!("main");
fn main() {
    let note = main::PARCEL.bytes(main::notes::A).unwrap();
    println!("note {}", std::str::from_utf8(&note).unwrap());
}
"#,
    );
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(c.run().contains("note v1:hello"));

    // The processor's code changes, its version does not: its two notes
    // rerun; the level, the sprites and the text stay fresh.
    c.write("stamp/src/lib.rs", stamp("v2"));
    let (ok, ran_script, stderr) = c.build();
    assert!(ok && ran_script, "{stderr}");
    assert_eq!(
        processed(&stderr),
        Some(vec!["notes/a.note".to_owned(), "notes/b.note".to_owned()]),
        "{stderr}"
    );
    assert!(c.run().contains("note v2:hello"));
    let why = c.assets(&["why", "notes/a.note"]);
    let last = &why.with_reason("why").next().expect("a why message")["last"];
    assert_eq!(last["kind"], "processor-code-changed", "{:?}", why.messages);

    // The CLI's runner, compiled from the same sources, agrees: nothing to do.
    let out = c.assets(&["build"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(out.build_finished().ran, 0, "{:?}", out.typed);
}

/// Code naming the assets of [`engine_tree`] by the constants the README's
/// naming table promises: it compiles only if every name is as documented.
const ENGINE_MAIN_RS: &str = r#"
assets_runtime::include_parcel!("main");

fn main() {
    let parcel = &*main::PARCEL;
    // Same stem, two extensions, one folder.
    let png = parcel.image(main::branding::BEVY_BIRD_DARK_PNG).unwrap();
    let svg = parcel.bytes(main::branding::BEVY_BIRD_DARK_SVG).unwrap();
    println!("bird png {}x{}, svg {} bytes", png.header.width, png.header.height, svg.len());
    // CamelCase folders and files; a glTF beside its buffer and texture.
    use main::models::flight_helmet as helmet;
    // A model's constant is a `ModelId`: `parcel.model` takes it, `parcel.text` would not.
    let _: assets_runtime::ModelId = helmet::FLIGHT_HELMET_GLTF;
    let glb = parcel.model(helmet::FLIGHT_HELMET_GLTF).unwrap();
    let embedded = glb.windows(8).any(|w| w == b"\x89PNG\r\n\x1a\n");
    println!("helmet glb {:?} {} bytes, png inside: {embedded}", std::str::from_utf8(&glb[..4]).unwrap(), glb.len());
    // Its texture, named by the URI the model keeps, is a resource of its own.
    let model = "models/FlightHelmet/FlightHelmet.gltf";
    let texture = parcel.by_uri(model, "FlightHelmet_Materials_LeatherPartsMat_BaseColor.png").unwrap();
    let texture = texture.image().unwrap();
    println!("helmet texture {}x{}", texture.header.width, texture.header.height);
    let _ = helmet::FLIGHT_HELMET_BIN;
    let _ = helmet::FLIGHT_HELMET_MATERIALS_LEATHER_PARTS_MAT_BASE_COLOR;
    // Spaces, dashes, leading digits.
    let _: assets_runtime::AudioId = main::sounds::WINDLESS_SLOPES;
    let _ = main::fonts::FIRA_SANS_BOLD;
    let _ = main::textures::game_icons::WRENCH;
    let _ = main::textures::_1X1;
    let shader = parcel.shader(main::shaders::CUSTOM_MATERIAL).unwrap();
    println!("shader {} lines", shader.lines().count());
    let hero = parcel.sprite(main::sprites::HERO).unwrap();
    println!("hero {}x{}", hero.frame.source_width, hero.frame.source_height);
    // An Aseprite file: an `AnimationId`, its tags played as Aseprite plays them.
    let _: assets_runtime::AnimationId = main::characters::HERO_WALK;
    let walk = parcel.animation(main::characters::HERO_WALK).unwrap();
    let tag = walk.tag("T3").unwrap();
    let shown = walk.frame_at(&tag, std::time::Duration::from_millis(150));
    let frame = walk.frame(shown as usize).unwrap().sprite;
    println!("walk frame {shown} of {}, {} ms, on page {}", walk.frame_count(), walk.frame(shown as usize).unwrap().duration_ms, frame.page_index);
    println!("{} resources", parcel.len());
}
"#;

/// Assets shaped like a real engine's example folder (Bevy's): same stems
/// with different extensions, a glTF with its `.bin` and a PNG texture in a
/// CamelCase folder, names with spaces, dashes and leading digits, and
/// files no built-in decodes (SVG, TTF: copied as bytes), a sound and an
/// Aseprite file.
fn engine_tree(c: &Crate) {
    c.write("assets/branding/bevy_bird_dark.png", png_bytes(16, 8, 1));
    c.write(
        "assets/branding/bevy_bird_dark.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    c.write(
        "assets/models/FlightHelmet/FlightHelmet.gltf",
        gltf_json("FlightHelmet_Materials_LeatherPartsMat_BaseColor.png"),
    );
    c.write("assets/models/FlightHelmet/FlightHelmet.bin", gltf_bin(1.0));
    c.write(
        "assets/models/FlightHelmet/FlightHelmet_Materials_LeatherPartsMat_BaseColor.png",
        png_bytes(8, 8, 2),
    );
    c.write(
        "assets/sounds/Windless Slopes.ogg",
        assets_test_support::sound("ogg"),
    );
    c.write("assets/fonts/FiraSans-Bold.ttf", b"\0\x01\0\0fake");
    c.write("assets/textures/Game Icons/wrench.png", png_bytes(4, 4, 3));
    c.write("assets/textures/1x1.png", png_bytes(1, 1, 4));
    c.write(
        "assets/characters/Hero Walk.aseprite",
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets-build/tests/fixtures/aseprite/layers_and_tags.aseprite"
        ))
        .unwrap(),
    );
    c.write(
        "assets/shaders/custom_material.wesl",
        "@fragment\nfn fragment() -> @location(0) vec4<f32> { return vec4(1.0); }\n",
    );
}

#[test]
fn an_engine_shaped_tree_compiles_with_include_parcel_on_the_first_try() {
    let c = Crate::new("e2e_engine_tree");
    engine_tree(&c);
    c.write("src/main.rs", ENGINE_MAIN_RS);
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    let out = c.run();
    // The GLB holds the buffer and names the texture, stored once, beside it.
    assert!(out.contains("helmet glb \"glTF\""), "{out}");
    assert!(out.contains("png inside: false"), "{out}");
    assert!(out.contains("helmet texture 8x8"), "{out}");
    assert!(out.contains("bird png 16x8, svg 42 bytes"), "{out}");
    assert!(out.contains("hero 12x10"), "{out}");
    assert!(
        out.contains("walk frame 2 of 4, 100 ms, on page 0"),
        "{out}"
    );
}

/// Whether this toolchain can build for `target` (its standard library is
/// installed: `rustup target add <target>`).
fn target_installed(target: &str) -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    std::process::Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .is_some_and(|dir| std::path::Path::new(dir.trim()).is_dir())
}

/// The parcel `name` that the newest build script run of `package` for
/// `target` (`None`: the host) wrote into its `OUT_DIR` (under `assets/`).
fn script_parcel(package: &str, target: Option<&str>, name: &str) -> assets_runtime::ParcelBuf {
    let mut build = assets_test_support::cargo_crate::e2e_target_dir();
    if let Some(target) = target {
        build.push(target);
    }
    build.push("debug/build");
    let newest = std::fs::read_dir(&build)
        .expect("the build folder")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{package}-"))
        })
        .map(|e| e.path().join(format!("out/assets/{name}.parcel")))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no {name}.parcel of {package} under {}", build.display()));
    assets_runtime::ParcelBuf::open(&newest).expect("the build script's parcel opens")
}

#[test]
fn cargo_build_for_wasm32_runs_the_build_script_with_the_web_platforms_settings() {
    const WEB: &str = "wasm32-unknown-unknown";
    if !target_installed(WEB) {
        eprintln!("skipped: the `{WEB}` target is not installed (`rustup target add {WEB}`)");
        return;
    }
    let c = Crate::new("e2e-web");
    c.manifest_with(
        "",
        r#"[[package.metadata.assets.rules]]
match = "images/*.png"
processor = "image"
encoding = "lz4"
platforms.web = { encoding = "png" }

[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]
"#,
    );
    c.write("assets/images/ground.png", png_bytes(32, 32, 1));
    let encoding = |parcel: &assets_runtime::ParcelBuf| {
        let image = parcel
            .parcel()
            .by_name("images/ground.png")
            .map(|r| r.image());
        image.flatten().map(|i| i.header.encoding.name())
    };

    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    let host = script_parcel(c.name(), None, "main");
    assert_eq!(encoding(&host), Some("lz4"));

    // The web build: Cargo's `TARGET` picks the `web` platform. Only the
    // image has settings for it; the sprites and the text are shared with
    // the host's build, not processed again.
    let out = c.cargo(&["build", "-vv", "--target", WEB]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        processed(&stderr),
        Some(vec!["images/ground.png".to_owned()]),
        "{stderr}"
    );
    let web = script_parcel(c.name(), Some(WEB), "main");
    assert_eq!(encoding(&web), Some("png"));
    let hero = |p: &assets_runtime::ParcelBuf| {
        let sprite = p.parcel().by_name("sprites/hero.png");
        sprite.and_then(|r| r.bytes().ok()).map(|b| b.to_vec())
    };
    assert!(hero(&web).is_some());
    assert_eq!(
        hero(&web),
        hero(&host),
        "a shared step's output is the same"
    );
}

/// A renamed asset with an alias: the game's code, still naming the old
/// constant, compiles (with a deprecation warning naming the new one) and
/// reads the renamed asset through it.
#[test]
fn an_alias_keeps_a_renamed_assets_old_constant_compiling_deprecated() {
    let c = Crate::new("e2e-alias");
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    std::fs::remove_file(c.path().join("assets/data/intro.txt")).unwrap();
    c.write("assets/data/opening.txt", "Once upon a time\n");
    c.manifest_with(
        "",
        "[package.metadata.assets.aliases]\n\"data/intro.txt\" = \"data/opening.txt\"\n",
    );
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    for part in [
        "use of deprecated constant `main::data::INTRO`",
        "`data/intro.txt` was renamed `data/opening.txt`",
        "cargo-assets: `data/intro.txt` is kept as an alias of `data/opening.txt`",
    ] {
        assert!(stderr.contains(part), "`{part}` missing in {stderr}");
    }
    assert!(c.run().contains("intro: Once upon a time"));
}

#[test]
fn a_processors_warning_reaches_cargo_and_fails_the_script_when_denied() {
    let c = Crate::new("e2e-warns");
    c.manifest_with(
        "",
        r#"[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["sh", "-c", "echo 'tile 7 is unused' >&2; cp \"$0\" \"$1\"", "{input}", "{output}"]
"#,
    );
    c.write("assets/levels/one.lvl", "T.C\n");
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(
            "warning: e2e-warns@0.1.0: cargo-assets: `levels/one.lvl` (command): tile 7 is unused"
        ),
        "{stderr}"
    );
    c.write(
        ".cargo/config.toml",
        "[env]\nCARGO_ASSETS_DENY_WARNINGS = \"1\"\n",
    );
    let (ok, _, stderr) = c.build();
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains(
            "error: e2e-warns@0.1.0: cargo-assets: `levels/one.lvl` (command): tile 7 is unused"
        ),
        "{stderr}"
    );
}

#[test]
fn a_debug_build_maps_the_parcel_and_a_release_or_asked_build_embeds_it() {
    let c = Crate::new("e2e-mapped");
    let binary = || {
        std::fs::read(assets_test_support::cargo_crate::e2e_target_dir().join("debug/e2e-mapped"))
            .unwrap()
    };
    let holds = |bytes: &[u8], text: &[u8]| bytes.windows(text.len()).any(|w| w == text);
    // The intro is short enough to be stored as it is, so embedded it
    // would stand in the binary as written.
    let intro = b"Once upon a time\n";
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(
        !holds(&binary(), intro),
        "a debug build embedded the parcel"
    );
    assert!(c.run().contains("intro: Once upon a time"));
    // Asked to embed (a debug binary to copy elsewhere, say).
    c.write(".cargo/config.toml", "[env]\nCARGO_ASSETS_EMBED = \"1\"\n");
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(holds(&binary(), intro), "the parcel is not embedded");
    assert!(c.run().contains("intro: Once upon a time"));
}

#[test]
fn a_step_stuck_in_the_build_script_fails_the_build_naming_it_at_its_deadline() {
    let c = Crate::new("e2e-overdue");
    c.manifest_with(
        "",
        "[[package.metadata.assets.rules]]\nmatch = \"levels/*.hang\"\nprocessor = \"hang\"\ntimeout = 1\n",
    );
    c.in_process();
    // A processor stuck for ever, as a parser looping on a hostile file.
    c.write(
        "build.rs",
        r#"use assets_build::{Context, ProcessError, Processor, Registry};
struct Hang;
impl Processor for Hang {
    type Settings = assets_build::NoSettings;
    fn name(&self) -> &str { "hang" }
    fn version(&self) -> u32 { 1 }
    fn process(&self, _: &mut Context<'_>, _: assets_build::NoSettings) -> Result<(), ProcessError> {
        loop { std::thread::sleep(std::time::Duration::from_millis(50)); }
    }
}
fn register(r: &mut Registry) { r.register(Hang); }
fn main() { assets_build::Builder::new().register(register).build().unwrap() }
"#,
    );
    c.write("assets/levels/stuck.hang", "loop\n");
    let started = std::time::Instant::now();
    let (ok, _, stderr) = c.build();
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("`levels/stuck.hang` (hang) has run for")
            && stderr.contains("past its deadline of 1 s"),
        "{stderr}"
    );
    // The deadline and its grace, not for ever (compiling the crate aside).
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
}

#[test]
fn a_shader_importing_a_dependency_crates_modules_is_validated_in_cargo_build() {
    // The build script runs `cargo-assets`, which asks Cargo for the
    // package's crates (`cargo metadata`) while Cargo builds it.
    let c = Crate::new("e2e-shader-crates");
    c.manifest_with(
        "",
        "[dependencies.shader_kit]\npath = \"shader_kit\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"shaders/*.wesl\"\npreset = \"bevy-mesh\"\n",
    );
    c.write(
        "shader_kit/Cargo.toml",
        "[package]\nname = \"shader_kit\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    c.write("shader_kit/src/lib.rs", "");
    let lighting = "@if(VERTEX_UVS_A) {\nfn shade(uv: vec2<f32>) -> vec4<f32> {\n    return vec4<f32>(uv, 0.0, 1.0);\n}\n}\n";
    c.write("shader_kit/src/lighting.wesl", lighting);
    c.write(
        "assets/shaders/glow.wesl",
        "import shader_kit::lighting::shade;\n\n\
         @group(constants::MATERIAL_BIND_GROUP) @binding(0) var<uniform> strength: f32;\n\n\
         @fragment\nfn fragment(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {\n    \
         return shade(uv) * strength;\n}\n",
    );
    let (ok, _, stderr) = c.build();
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("`shaders/glow.wesl` (shader)"), "{stderr}");
    let parcel = script_parcel("e2e-shader-crates", None, "main");
    let reflection = parcel
        .parcel()
        .text(assets_runtime::ResourceId::of(
            "shaders/glow.wesl#reflection",
        ))
        .unwrap();
    let reflection: serde_json::Value = serde_json::from_str(&reflection).unwrap();
    assert_eq!(reflection["validated"], true, "{reflection}");
    assert_eq!(reflection["bindings"][0]["group"], 3, "{reflection}");

    // A type error in the crate's module reruns the script and warns (a
    // debug build goes on without the shader) naming the module's file.
    c.write(
        "shader_kit/src/lighting.wesl",
        lighting.replace("vec4<f32>(uv, 0.0, 1.0)", "vec4<f32>(uv, 0u, 1.0)"),
    );
    let (ok, ran, stderr) = c.build();
    assert!(ok && ran, "{stderr}");
    assert!(
        stderr.contains("`shaders/glow.wesl` (shader)")
            && stderr.contains("shader_kit/src/lighting.wesl:2: in `shade`"),
        "{stderr}"
    );
}
