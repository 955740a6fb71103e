//! Platforms through the real binary: `[package.metadata.assets.platforms]`
//! with target globs, rules with per-platform settings, `--target` and
//! `--platform`. Each platform keeps its records and parcels beside the
//! others; a step whose settings do not differ is built once and shared.

use assets_runtime::image::Encoding;
use assets_runtime::{Parcel, ResourceId};
use assets_test_support::Project;

const METADATA: &str = r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[package.metadata.assets.platforms.mobile]
targets = ["*-linux-android*", "*-apple-ios*"]

[[package.metadata.assets.rules]]
match = "textures/*.png"
encoding = "lz4"
platforms.web = { encoding = "png" }
platforms.mobile = { encoding = "raw" }
"#;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(METADATA)
        .png("assets/textures/grass.png", 32, 32, 1)
        .png("assets/textures/stone.png", 16, 16, 2)
        .png("assets/icons/coin.png", 8, 8, 3)
        .file("assets/data/intro.txt", "Once upon a time\n");
    p
}

/// How the texture `name` is stored in the parcel at `path`.
fn encoding(path: &std::path::Path, name: &str) -> Encoding {
    let bytes = std::fs::read(path).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    parcel.image(ResourceId::of(name)).unwrap().header.encoding
}

#[test]
fn each_platform_builds_its_settings_side_by_side_and_shares_the_rest() {
    let p = project();
    let host = p.build_ok();
    assert_eq!(host.processed().len(), 4);
    assert_eq!(host.build_finished().platform, None);

    // Web: only the textures, whose rule differs there, run; the icon and
    // the text are the host's steps, shared.
    let web = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(web.success(), "{}", web.stderr);
    assert_eq!(
        web.processed(),
        ["textures/grass.png", "textures/stone.png"]
    );
    assert_eq!(web.build_finished().platform.as_deref(), Some("web"));
    let mobile = p.run(&["build", "--platform", "mobile"]);
    assert_eq!(
        mobile.processed(),
        ["textures/grass.png", "textures/stone.png"]
    );

    // Side by side: each platform's parcel holds its own encoding.
    let (host_parcel, web_parcel, mobile_parcel) = (
        host.parcel("main"),
        web.parcel("main"),
        mobile.parcel("main"),
    );
    assert_ne!(host_parcel, web_parcel);
    assert_eq!(encoding(&host_parcel, "textures/grass.png"), Encoding::Lz4);
    assert_eq!(encoding(&web_parcel, "textures/grass.png"), Encoding::Png);
    assert_eq!(
        encoding(&mobile_parcel, "textures/grass.png"),
        Encoding::Raw
    );
    assert_eq!(
        encoding(&web_parcel, "icons/coin.png"),
        encoding(&host_parcel, "icons/coin.png"),
        "shared"
    );

    // Switching back and forth runs nothing, and rewrites no parcel.
    for args in [
        &["build"][..],
        &["build", "--target", "wasm32-unknown-emscripten"],
        &["build", "--target", "aarch64-linux-android"],
        &["build", "--platform", "web"],
    ] {
        let run = p.run(args);
        assert!(run.success(), "{args:?}: {}", run.stderr);
        assert!(
            run.processed().is_empty(),
            "{args:?} ran {:?}",
            run.processed()
        );
        assert!(
            run.with_reason("parcel-written").next().is_none(),
            "{args:?}"
        );
    }

    // Editing a shared asset reruns it once, on whichever platform builds
    // first; the others then find it fresh.
    p.file("assets/data/intro.txt", "Once upon a time, again\n");
    let web = p.run(&["build", "--platform", "web"]);
    assert_eq!(web.processed(), ["data/intro.txt"]);
    assert!(
        p.build_ok().processed().is_empty(),
        "the host shares the web's build"
    );
    let text = |path: &std::path::Path| {
        let bytes = std::fs::read(path).unwrap();
        let parcel = Parcel::from_bytes(&bytes).unwrap();
        parcel
            .text(ResourceId::of("data/intro.txt"))
            .unwrap()
            .into_owned()
    };
    assert_eq!(text(&host_parcel), "Once upon a time, again\n");
    assert_eq!(text(&web_parcel), text(&host_parcel));
}

#[test]
fn a_target_no_platform_covers_builds_the_host_settings() {
    let p = project();
    p.build_ok();
    let run = p.run(&["build", "--target", "x86_64-unknown-linux-gnu"]);
    assert!(run.success(), "{}", run.stderr);
    assert!(run.processed().is_empty(), "{:?}", run.processed());
    assert_eq!(run.build_finished().platform, None);
}

#[test]
fn platform_mistakes_are_errors_that_name_the_key_and_the_fix() {
    let p = project();
    let run = p.run(&["build", "--platform", "wbe"]);
    assert!(!run.success());
    assert!(
        run.stderr.contains("no platform named `wbe`")
            && run
                .stderr
                .contains("did you mean `web`? declared platforms: mobile, web"),
        "{}",
        run.stderr
    );
    // A rule's settings for a platform that is not declared.
    p.metadata(&METADATA.replace("platforms.mobile = {", "platforms.mobil = {"));
    let run = p.run(&["build"]);
    assert!(
        run.stderr.contains("platform `mobil` is not declared")
            && run
                .stderr
                .contains("package.metadata.assets.rules[0].platforms.mobil")
            && run.stderr.contains("did you mean `mobile`?"),
        "{}",
        run.stderr
    );
    // Two platforms covering one target.
    p.metadata(&METADATA.replace("\"*-apple-ios*\"", "\"*-apple-ios*\", \"wasm32-*\""));
    let run = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(
        run.stderr.contains(
            "target `wasm32-unknown-unknown` is covered by the platforms `mobile` and `web`"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn why_says_a_step_is_shared_with_another_platform() {
    let p = project();
    p.build_ok();
    let why = p.run(&["why", "data/intro.txt", "--platform", "web"]);
    assert!(why.success(), "{}", why.stderr);
    let answer = why.with_reason("why").next().expect("a why message");
    assert_eq!(answer["shared_from"], "dev", "{answer}");
    assert_eq!(answer["fresh"], true, "{answer}");
    // A texture differs on the web: its own step, never built there.
    let why = p.run(&["why", "textures/grass.png", "--platform", "web"]);
    let answer = why.with_reason("why").next().expect("a why message");
    assert!(answer["shared_from"].is_null(), "{answer}");
    assert_eq!(answer["fresh"], false, "{answer}");
}

#[test]
fn a_command_with_platform_in_its_argv_is_built_per_platform_and_others_are_shared() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["sh", "-c", "printf '[%s] ' \"$2\" | cat - \"$0\" > \"$1\"", "{input}", "{output}", "{platform}"]
kind = "text"

[[package.metadata.assets.rules]]
match = "notes/*.md"
processor = "command"
command = ["cp", "{input}", "{output}"]
kind = "text"
"#,
    )
    .file("assets/levels/one.lvl", "level one\n")
    .file("assets/notes/readme.md", "notes\n");
    let text = |run: &assets_test_support::Run, name: &str| {
        let bytes = std::fs::read(run.parcel("main")).unwrap();
        let parcel = Parcel::from_bytes(&bytes).unwrap();
        parcel.text(ResourceId::of(name)).unwrap().into_owned()
    };
    let host = p.build_ok();
    assert_eq!(host.processed(), ["levels/one.lvl", "notes/readme.md"]);
    assert_eq!(text(&host, "levels/one.lvl"), "[] level one\n");
    let web = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(web.success(), "{}", web.stderr);
    assert_eq!(web.processed(), ["levels/one.lvl"], "the note is shared");
    assert_eq!(text(&web, "levels/one.lvl"), "[web] level one\n");
    assert_eq!(text(&web, "notes/readme.md"), "notes\n");
    // Back on the host: nothing runs, its own output is still its own.
    let again = p.build_ok();
    assert!(again.processed().is_empty(), "{:?}", again.processed());
    assert_eq!(text(&again, "levels/one.lvl"), "[] level one\n");
}

#[test]
fn a_platforms_settings_for_a_processor_apply_to_its_every_step_under_the_rules_own() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]
settings.image = { encoding = "png" }

[[package.metadata.assets.rules]]
match = "textures/*.png"
encoding = "lz4"

[[package.metadata.assets.rules]]
match = "ui/*.png"
encoding = "lz4"
platforms.web = { encoding = "raw" }

[package.metadata.assets.overrides."textures/stone.png"]
encoding = "zstd"
"#,
    )
    .png("assets/textures/grass.png", 32, 32, 1)
    .png("assets/textures/stone.png", 32, 32, 2)
    .png("assets/ui/button.png", 32, 32, 3)
    .png("assets/icons/coin.png", 32, 32, 4)
    .file("assets/data/intro.txt", "Once upon a time\n");
    let host = p.build_ok();
    assert_eq!(host.processed().len(), 5);

    // On the web: the platform's `image` settings over the rule's; the
    // rule's own `platforms.web` over the platform's; the override over
    // both (so the stone is the host's step, shared); an asset without a
    // rule takes the platform's too.
    let web = p.run(&["build", "--platform", "web"]);
    assert!(web.success(), "{}", web.stderr);
    assert_eq!(
        web.processed(),
        ["icons/coin.png", "textures/grass.png", "ui/button.png"]
    );
    let (host, web) = (host.parcel("main"), web.parcel("main"));
    for (asset, on_host, on_web) in [
        ("textures/grass.png", Encoding::Lz4, Encoding::Png),
        ("textures/stone.png", Encoding::Zstd, Encoding::Zstd),
        ("ui/button.png", Encoding::Lz4, Encoding::Raw),
        ("icons/coin.png", Encoding::Lz4, Encoding::Png),
    ] {
        assert_eq!(encoding(&host, asset), on_host, "{asset} on the host");
        assert_eq!(encoding(&web, asset), on_web, "{asset} on the web");
    }
    // Back on the host, nothing runs: the web's steps sit beside its own.
    assert!(p.build_ok().processed().is_empty());
}

#[test]
fn a_platforms_settings_are_checked_by_their_processor_at_their_line() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let metadata = r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]
settings.image = { encodign = "png" }
"#;
    p.metadata(metadata).png("assets/icons/coin.png", 8, 8, 4);
    let run = p.run(&["build", "--platform", "web"]);
    assert!(!run.success());
    for needle in [
        "unknown key `encodign`",
        "package.metadata.assets.platforms.web.settings.image.encodign",
        "did you mean `encoding`?",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    // Settings for a processor that does not exist, found on any platform.
    p.metadata(&metadata.replace("settings.image = { encodign", "settings.imgae = { encoding"));
    let run = p.run(&["build"]);
    assert!(!run.success());
    for needle in [
        "platform `web` has settings for `imgae`, which is not a processor",
        "package.metadata.assets.platforms.web.settings.imgae",
        "did you mean `image`?",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
}
