//! `cargo assets verify` through the real binary: fresh steps built again
//! without the cache and compared with it. A deterministic pipeline passes;
//! a processor that stamps the time is caught by name, its output and the
//! two hashes, and fails the run; a seeded fraction checks a share.

use assets_test_support::{Project, encode_png, gltf_bin, gltf_json, sprite_image};

/// Every built-in processor: image, sprite (and its atlas), text with an
/// include, copy, glTF with its buffer and texture.
fn every_builtin(p: &Project) {
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"
"#,
    )
    .png("assets/art.png", 40, 30, 1)
    .file(
        "assets/sprites/a.png",
        encode_png(&sprite_image(20, 12, 3, 1)),
    )
    .file(
        "assets/sprites/b.png",
        encode_png(&sprite_image(14, 18, 2, 2)),
    )
    .file(
        "assets/shaders/lib.wgsl",
        "fn one() -> f32 { return 1.0; }\n",
    )
    .file(
        "assets/shaders/main.wgsl",
        "#include \"lib.wgsl\"\n@vertex fn main() {}\n",
    )
    .file("assets/levels/one.json", "{\"name\": \"meadow\"}\n")
    .file("assets/sounds/click.ogg", assets_test_support::sound("ogg"))
    .file(
        "assets/models/Box/Box.gltf",
        gltf_json("Leather%20Parts.png"),
    )
    .file("assets/models/Box/FlightHelmet.bin", gltf_bin(1.0))
    .png("assets/models/Box/Leather Parts.png", 8, 8, 4);
}

#[test]
fn every_builtin_processor_reproduces_its_cached_outputs() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    every_builtin(&p);
    let built = p.build_ok();
    let steps = built.build_finished().ran;
    assert!(steps >= 10, "{steps} steps");
    for variant in [&["verify"][..], &["verify", "--release"][..]] {
        if variant.len() > 1 {
            p.run(&["build", "--release"]);
        }
        let run = p.run(variant);
        assert!(run.success(), "{variant:?}: {}", run.stderr);
        let finished = run.build_finished();
        assert_eq!(finished.ran, 0, "{variant:?}");
        assert_eq!(
            finished.verified, steps,
            "{variant:?}: every fresh step checked"
        );
        assert_eq!(finished.unreproduced, 0, "{variant:?}");
    }
}

#[test]
fn a_processor_that_stamps_the_time_is_caught_by_name() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "stamps/*.txt"
processor = "command"
command = ["sh", "-c", "date +%s%N > \"$0\"", "{output}"]
"#,
    )
    .file("assets/stamps/build.txt", "when\n")
    .file("assets/notes.txt", "steady\n");
    p.build_ok();
    let parcel = p.run(&["build"]).parcel("main");
    let before = std::fs::read(&parcel).unwrap();
    let log = p.cache_dir().join("records/game/dev.records");
    let log_before = std::fs::read(&log).unwrap();

    let run = p.run(&["verify"]);
    assert!(!run.success(), "{}", run.stderr);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let finished = run.build_finished();
    assert_eq!((finished.verified, finished.unreproduced), (2, 1));
    let caught = run.with_reason("asset-unreproduced").collect::<Vec<_>>();
    assert_eq!(caught.len(), 1, "{caught:?}");
    assert_eq!(caught[0]["asset"], "stamps/build.txt");
    assert_eq!(caught[0]["processor"], "command");
    let output = &caught[0]["outputs"][0];
    assert_eq!(output["label"], "");
    assert_ne!(output["cached"], output["rebuilt"]);
    assert!(
        run.stderr.contains(
            "`stamps/build.txt` (command) does not reproduce its cached outputs: its output is "
        ) && run
            .stderr
            .contains("1 asset of 2 checked did not reproduce the cache: stamps/build.txt"),
        "{}",
        run.stderr
    );
    // Checking changes nothing: the cache and the parcel are as they were.
    assert_eq!(std::fs::read(&parcel).unwrap(), before);
    assert_eq!(
        std::fs::read(&log).unwrap(),
        log_before,
        "no record written"
    );

    // A seeded fraction checks a share, the same one for the same seed.
    let checked = |seed: &str| {
        let run = p.run(&["build", "--verify-fraction", "0.5", "--verify-seed", seed]);
        run.build_finished().verified
    };
    let counts: Vec<usize> = (0..8).map(|s| checked(&s.to_string())).collect();
    assert!(counts.iter().any(|&n| n < 2), "{counts:?}");
    assert_eq!(checked("3"), counts[3]);
    let run = p.run(&["build", "--verify-fraction", "1.5"]);
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("`--verify-fraction` must be between 0 and 1, not 1.5"),
        "{}",
        run.stderr
    );
}
