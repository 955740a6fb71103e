//! Aliases through the real binary: an old name, kept in the manifest after
//! its asset was renamed, answers for the renamed asset in the parcel
//! (text and sprite alike), is a warning at its line, and is refused when
//! it cannot mean what it says.

use assets_runtime::{Parcel, ResourceId, SpriteId};
use assets_test_support::{Project, Run};

const RULES: &str = r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"
"#;

fn with_aliases(aliases: &str) -> String {
    format!("{RULES}\n[package.metadata.assets.aliases]\n{aliases}")
}

fn parcel(run: &Run) -> Vec<u8> {
    std::fs::read(run.parcel("main")).unwrap()
}

#[test]
fn a_renamed_asset_answers_to_its_old_name_and_runs_no_processor() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(RULES)
        .file("assets/levels/intro.bin", "Once upon a time\n")
        .png("assets/sprites/hero.png", 12, 10, 1);
    assert!(p.run(&["build"]).success());

    // Renamed, with an alias: the same bytes, so no processor runs (a
    // `.bin` is copied, which its path does not change); the sprite keeps
    // its name and gets an old one too.
    let text = p.read("assets/levels/intro.bin");
    p.remove("assets/levels/intro.bin")
        .file("assets/levels/opening scene.bin", text)
        .metadata(&with_aliases(
            "\"levels/intro.bin\" = \"levels/opening scene.bin\"\n\
             \"sprites/old_hero.png\" = \"sprites/hero.png\"\n",
        ));
    let out = std::env::temp_dir().join(format!("aliases-out-{}", std::process::id()));
    let run = p.run(&["build", "--out-dir", out.to_str().unwrap()]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed(), Vec::<String>::new(), "{}", run.stderr);
    let bytes = parcel(&run);
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let old = parcel.get(ResourceId::of("levels/intro.bin")).unwrap();
    assert_eq!(old.name, "levels/opening scene.bin");
    assert_eq!(&*old.bytes().unwrap(), b"Once upon a time\n");
    let sprite = parcel.sprite(SpriteId::of("sprites/old_hero.png")).unwrap();
    let hero = parcel.sprite(SpriteId::of("sprites/hero.png")).unwrap();
    assert_eq!(sprite.frame, hero.frame);
    // Loose files have no way to point: the alias is a copy there.
    assert_eq!(
        std::fs::read(out.join("levels/intro.bin")).unwrap(),
        b"Once upon a time\n"
    );
    let _ = std::fs::remove_dir_all(&out);

    // Each alias is a warning at its line, in JSON too, and fails a build
    // that denies warnings.
    assert!(
        run.stderr
            .contains("`levels/intro.bin` is kept as an alias of `levels/opening scene.bin`"),
        "{}",
        run.stderr
    );
    let kept: Vec<&serde_json::Value> = run.with_reason("alias-kept").collect();
    assert_eq!(kept.len(), 2, "{:?}", run.messages);
    assert!(
        kept.iter().all(|m| m["line"].as_u64().is_some()),
        "{kept:?}"
    );
    assert_eq!(p.run(&["build", "--deny-warnings"]).code, Some(101));
}

#[test]
fn an_alias_that_cannot_mean_what_it_says_is_an_error_at_its_line() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("assets/a.txt", "a").file("assets/b.txt", "b");
    for (aliases, expected) in [
        ("\"a.txt\" = \"b.txt\"\n", "alias `a.txt` is an asset"),
        (
            "\"old.txt\" = \"gone.txt\"\n",
            "alias `old.txt` names `gone.txt`, which is not an asset",
        ),
        ("\"x.txt\" = \"x.txt\"\n", "`x.txt` is an alias of itself"),
        ("\"../x.txt\" = \"a.txt\"\n", "invalid old name in an alias"),
    ] {
        p.metadata(&with_aliases(aliases));
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{aliases}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{aliases}: {}", run.stderr);
        assert!(run.stderr.contains("Cargo.toml:"), "{}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
}
