//! The README's quick start, followed as a newcomer follows it: its code
//! blocks (each marked `<!-- quick-start: FILE -->`) copied into a new
//! crate, only the path to this repository put in, `cargo-assets` on
//! `PATH` as its install step leaves it, with a broken file among the
//! assets. The game must build, run, and say one thing about the
//! broken file.

use std::collections::BTreeMap;

use assets_test_support::cargo_crate::{CargoCrate, workspace};
use assets_test_support::{encode_png, sprite_image};

/// The marked code blocks of `readme`, by the file each is for.
fn quick_start_blocks(readme: &str) -> BTreeMap<String, String> {
    let mut blocks = BTreeMap::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(file) = line
            .strip_prefix("<!-- quick-start: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().expect("a code block after the marker");
        assert!(
            fence.starts_with("```"),
            "`{file}`: no code block after its marker"
        );
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        blocks.insert(file.to_owned(), body.join("\n") + "\n");
    }
    blocks
}

#[test]
fn the_readme_quick_start_builds_and_runs_with_a_broken_file_among_its_assets() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let blocks = quick_start_blocks(&readme);
    let names: Vec<&str> = blocks.keys().map(String::as_str).collect();
    assert_eq!(names, ["Cargo.toml", "build.rs", "src/main.rs"]);

    let c = CargoCrate::new("quick-start", env!("CARGO_BIN_EXE_cargo-assets"));
    // The README has the user clone this repository beside the game.
    let here = format!("{}/", workspace().display());
    let dependencies = blocks["Cargo.toml"].replace("../cargo-assets/", &here);
    assert_ne!(
        dependencies, blocks["Cargo.toml"],
        "the block names the clone"
    );
    c.write(
        "Cargo.toml",
        format!(
            "[package]\nname = \"quick-start\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{dependencies}\n[workspace]\n"
        ),
    );
    c.write("build.rs", &blocks["build.rs"]);
    c.write("src/main.rs", &blocks["src/main.rs"]);
    c.write(
        "assets/sprites/hero-idle.png",
        encode_png(&sprite_image(24, 20, 2, 7)),
    );
    c.write("assets/data/level1.json", "{\"name\": \"meadow\"}\n");
    // What real trees hold: a file an exporter left half-written.
    c.write("assets/sprites/enemy.png", b"\x89PNG\r\n\x1a\n truncated");

    let build = c.build();
    assert!(
        build.ok,
        "the quick start does not build:\n{}",
        build.stderr
    );
    let warnings: Vec<&str> = (build.stderr.lines())
        .filter(|l| l.starts_with("warning: quick-start@0.1.0: cargo-assets: `"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", build.stderr);
    assert!(
        warnings[0].contains("`sprites/enemy.png` (sprite): could not decode image"),
        "{}",
        warnings[0]
    );
    assert!(!build.stderr.contains("panicked"), "{}", build.stderr);
    // The README installs `cargo-assets` first (the test has it on PATH, as
    // the install puts it), so the build script compiles none of the
    // pipeline: what makes the first build short.
    assert!(readme.contains("cargo install --path ../cargo-assets/cargo-assets --locked"));
    for unit in ["naga v", "gltf v", "image v", "thiserror v"] {
        assert!(
            !build.stderr.contains(unit),
            "{unit} built:\n{}",
            build.stderr
        );
    }

    let out = c.run_program();
    assert!(out.contains("hero-idle: 20x16 on a"), "{out}");
    assert!(out.contains("level1: 19 bytes of JSON"), "{out}");
}
