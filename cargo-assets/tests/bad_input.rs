//! Bad input through the real binary: a clear error naming the file, the
//! key or the cycle; no panic; the other assets still build (brief §3.6, §3.7).

use assets_test_support::{Project, huge_png_header, png_bytes};

fn project() -> Project {
    Project::new(env!("CARGO_BIN_EXE_cargo-assets"))
}

fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "the binary panicked:\n{stderr}"
    );
}

#[test]
fn broken_images_fail_by_name_and_the_rest_still_builds() {
    let p = project();
    let mut truncated = png_bytes(64, 64, 1);
    truncated.truncate(truncated.len() / 2);
    p.png("assets/good.png", 8, 8, 1)
        .file("assets/garbage.png", b"this is not an image at all")
        .file("assets/truncated.png", truncated)
        .file("assets/huge.png", huge_png_header(100_000, 100_000))
        .file("assets/notes.txt", "still fine\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert_no_panic(&run.stderr);
    assert_eq!(
        run.processed(),
        [
            "garbage.png",
            "good.png",
            "huge.png",
            "notes.txt",
            "truncated.png"
        ]
    );
    let finished = run.finished();
    assert_eq!(
        (finished["failed"].as_u64(), finished["success"].as_bool()),
        (Some(3), Some(false))
    );
    let message = |a| run.failure_message(a);
    assert!(
        message("garbage.png").contains("not a PNG, JPEG, WebP, BMP or TGA"),
        "{}",
        message("garbage.png")
    );
    assert!(
        message("truncated.png").contains("could not decode image: the file ends before"),
        "{}",
        message("truncated.png")
    );
    assert!(
        message("huge.png").contains("too large"),
        "{}",
        message("huge.png")
    );
    for name in ["garbage.png", "truncated.png", "huge.png"] {
        assert!(
            run.stderr.contains(&format!("failed to process `{name}`")),
            "{}",
            run.stderr
        );
    }
    // The failures are not cached as successes, and the good assets are.
    let again = p.run(&["build"]);
    assert_eq!(
        again.processed(),
        ["garbage.png", "huge.png", "truncated.png"]
    );
}

#[test]
fn an_include_cycle_names_both_assets_and_does_not_hang() {
    let p = project();
    p.metadata("[[package.metadata.assets.rules]]\nmatch = \"*.wgsl\"\nincludes = true\n")
        .file("assets/a.wgsl", "#include \"b.wgsl\"\n")
        .file("assets/b.wgsl", "#include \"a.wgsl\"\n")
        .file("assets/ok.wgsl", "fn ok() {}\n");
    for jobs in ["1", "2"] {
        let run = p.run(&["build", "-j", jobs]);
        assert_eq!(run.code, Some(101), "{}", run.stderr);
        let cycle = run
            .with_reason("asset-failed")
            .find_map(|m| {
                m["message"]
                    .as_str()
                    .filter(|s| s.contains("dependency cycle"))
            })
            .unwrap_or_else(|| panic!("no cycle error: {:#?}", run.messages));
        assert!(
            cycle.contains("`a.wgsl`") && cycle.contains("`b.wgsl`"),
            "{cycle}"
        );
        let finished = run.finished();
        assert_eq!(
            finished["failed"].as_u64().unwrap() + finished["skipped"].as_u64().unwrap(),
            2
        );
        assert!(
            run.with_reason("asset-processed")
                .any(|m| m["asset"] == "ok.wgsl")
                || jobs == "2"
        );
    }
}

#[test]
fn manifest_errors_point_at_the_key_with_a_fix() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[package.metadata.assets]\nrool = \"art\"\n",
            &[
                "unknown field `rool`",
                "Cargo.toml:7:1",
                "did you mean `root`?",
            ],
        ),
        (
            "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"imgae\"\n",
            &[
                "unknown processor `imgae`",
                "Cargo.toml:8:13",
                "package.metadata.assets.rules[0].processor",
                "did you mean `image`?",
            ],
        ),
        (
            "[[package.metadata.assets.rules]]\nmatch = \"[*.png\"\n",
            &["invalid glob `[*.png`", "Cargo.toml:7:9", "rules[0].match"],
        ),
        ("[package.metadata.assets\n", &["Cargo.toml:6:"]),
        (
            // As other tools' configs write a list of parcels.
            "[[package.metadata.assets.parcels]]\nname = \"main\"\ninclude = [\"**\"]\n",
            &[
                "invalid type: sequence, expected a map",
                "Cargo.toml:6:1",
                "written with single brackets: `[package.metadata.assets.parcels]`, then `main = [\"**\"]`",
            ],
        ),
    ];
    for (metadata, expected) in cases {
        let p = project();
        p.png("assets/a.png", 2, 2, 0).metadata(metadata);
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{metadata}");
        assert_no_panic(&run.stderr);
        assert_eq!(run.finished()["success"], false);
        for e in *expected {
            assert!(run.stderr.contains(e), "missing `{e}` in:\n{}", run.stderr);
        }
    }
}

#[test]
fn a_typo_in_a_rule_is_one_error_at_its_key_with_a_suggestion() {
    let p = project();
    p.metadata("[[package.metadata.assets.rules]]\nmatch = \"ui/*.png\"\npremultiplyy = true\n")
        .png("assets/ui/a.png", 2, 2, 0)
        .png("assets/ui/b.png", 2, 2, 0)
        .png("assets/other.png", 2, 2, 0);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    for part in [
        "unknown key `premultiplyy` for processor `image`",
        "did you mean `premultiply`?",
        "Cargo.toml:8:1",
        "rules[0].premultiplyy",
    ] {
        assert!(
            run.stderr.contains(part),
            "missing `{part}` in {}",
            run.stderr
        );
    }
    // Once, however many assets the rule matches; nothing ran.
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    assert_eq!(run.processed(), Vec::<String>::new());

    // A rule key misspelled: `processor` is suggested too.
    p.metadata("[[package.metadata.assets.rules]]\nmatch = \"ui/*.png\"\nprocesor = \"sprite\"\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr.contains("did you mean `processor`?"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failing_tool_shows_its_stderr_and_exit_status() {
    let p = project();
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "fail/*"
processor = "command"
command = ["sh", "-c", "echo boom >&2; exit 3"]

[[package.metadata.assets.rules]]
match = "silent/*"
processor = "command"
command = ["true"]

[[package.metadata.assets.rules]]
match = "missing/*"
processor = "command"
command = ["no-such-tool-cargo-assets", "{input}"]
"#,
    )
    .file("assets/fail/a.lvl", "x")
    .file("assets/silent/b.lvl", "x")
    .file("assets/missing/c.lvl", "x");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    let message = |a| run.failure_message(a);
    assert!(
        message("fail/a.lvl").contains("exit status: 3") && message("fail/a.lvl").contains("boom")
    );
    assert!(
        message("silent/b.lvl").contains("did not write its output"),
        "{}",
        message("silent/b.lvl")
    );
    assert!(message("missing/c.lvl").contains("could not run `no-such-tool-cargo-assets`"));
}

#[test]
fn asset_trees_that_cannot_be_built_portably_are_rejected() {
    let p = project();
    p.file("assets/Hero.png", png_bytes(2, 2, 0))
        .file("assets/hero.png", png_bytes(2, 2, 0));
    std::os::unix::fs::symlink("/etc/hostname", p.path().join("assets/escape.txt")).unwrap();
    p.file("assets/.hidden/ignored.txt", "skipped")
        .file("assets/.DS_Store", "skipped");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert_no_panic(&run.stderr);
    assert!(
        run.stderr
            .contains("`Hero.png` and `hero.png` differ only by case"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("escape.txt` is a symbolic link to a file outside the asset root"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hidden"), "{}", run.stderr);
}

#[test]
fn a_missing_asset_root_says_how_to_fix_it() {
    let p = project();
    p.metadata("[package.metadata.assets]\nroot = \"art\"\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr.contains("asset root") && run.stderr.contains("art` does not exist"),
        "{}",
        run.stderr
    );
}

#[test]
fn usage_errors_exit_1() {
    let p = project();
    let out = p.command(["build", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = p.command(["build", "-j", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(101));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`--jobs` must be at least 1"));
}

#[test]
fn a_file_name_that_is_not_utf8_is_named_and_rejected() {
    use std::os::unix::ffi::OsStrExt;
    let p = project();
    p.file("assets/fine.txt", "ok");
    let name = std::ffi::OsStr::from_bytes(b"bad-\xff.txt");
    std::fs::write(p.path().join("assets").join(name), "x").unwrap();
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert_no_panic(&run.stderr);
    assert!(
        run.stderr
            .contains("has a name that is not valid UTF-8; rename it"),
        "{}",
        run.stderr
    );
}

#[test]
fn asset_roots_cannot_leave_the_package() {
    let p = project();
    p.file("assets/a.txt", "a\n");
    // Through `..`: refused by the manifest, before any file is walked.
    for root in [r#""../..""#, r#"["assets", "../../.."]"#] {
        p.metadata(&format!("[package.metadata.assets]\nroot = {root}\n"));
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{root}");
        assert!(
            run.stderr.contains("is not a path inside the package")
                && run.stderr.contains("package.metadata.assets.root"),
            "{root}: {}",
            run.stderr
        );
    }
    // Through a link inside the package that leads out of it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("linked")).unwrap();
    p.metadata("[package.metadata.assets]\nroot = \"linked\"\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr.contains("leads outside the package"),
        "{}",
        run.stderr
    );
    // `a/../assets` stays inside, and is `assets`.
    p.metadata("[package.metadata.assets]\nroot = \"a/../assets\"\n");
    p.build_ok();
}

#[test]
fn ignored_files_and_folders_are_no_assets_and_cannot_fail_a_build() {
    let p = project();
    p.metadata(
        "[package.metadata.assets]\nignore = [\"drafts\", \"**/*.psd\", \"models/broken.gltf\"]\n",
    )
    .png("assets/good.png", 8, 8, 1)
    .file("assets/drafts/wip.png", b"half an image")
    .file("assets/drafts/deep/er.png", b"another")
    .file("assets/ui/layers.psd", b"8BPS not ours")
    .file("assets/models/broken.gltf", b"{ not json");
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed(), ["good.png"]);
    // Not in the parcel either.
    let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
    let names: Vec<&str> = buf.parcel().iter().map(|r| r.name).collect();
    assert_eq!(names, ["good.png"]);
    // A file that stops being ignored is an asset again, and fails by name
    // with the advice to ignore it.
    p.metadata("[package.metadata.assets]\nignore = [\"drafts\", \"**/*.psd\"]\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`ignore = [\"models/broken.gltf\"]` under [package.metadata.assets]"),
        "{}",
        run.stderr
    );
}

#[test]
fn globs_too_long_for_the_matcher_are_errors_at_their_key_not_panics() {
    let p = project();
    p.png("assets/good.png", 8, 8, 1);
    let stars = "*".repeat(200_000);
    let long = "a".repeat(1_000_000);
    for (toml, key) in [
        (
            format!("[package.metadata.assets]\nignore = [\"{stars}\"]\n"),
            "package.metadata.assets.ignore",
        ),
        (
            format!("[[package.metadata.assets.rules]]\nmatch = \"{long}\"\n"),
            "package.metadata.assets.rules[0].match",
        ),
    ] {
        p.metadata(&toml);
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{}", run.stderr);
        assert_no_panic(&run.stderr);
        assert!(run.stderr.contains("is too long"), "{}", run.stderr);
        assert!(
            run.stderr.contains(key),
            "`{key}` missing from:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.len() < 10_000,
            "the error repeats the glob:\n{}",
            &run.stderr[..2000]
        );
    }
}

#[test]
fn a_rule_no_asset_comes_from_is_a_warning_at_its_line() {
    let p = project();
    // `sprite/` for `sprites/`: the sprites would quietly be images.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprite/*.png\"\nprocessor = \"sprite\"\n",
    )
    .png("assets/sprites/hero.png", 8, 8, 1);
    let run = p.run(&["build"]);
    assert!(run.success(), "a warning, not a failure: {}", run.stderr);
    let unused = run
        .with_reason("rule-unused")
        .next()
        .expect("the rule is named");
    assert_eq!(unused["key"], "package.metadata.assets.rules[0]");
    assert_eq!(unused["message"], "rule `sprite/*.png` matches no asset");
    assert!(
        run.stderr
            .contains("warning: rule `sprite/*.png` matches no asset"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Cargo.toml:"), "{}", run.stderr);
    // CI can deny it.
    assert_eq!(p.run(&["build", "--deny-warnings"]).code, Some(101));
}

#[test]
fn images_too_large_for_the_memory_budget_fail_by_name_before_decoding() {
    // Three files of a few dozen bytes claiming 16384 x 16384 pixels each
    // (which `max-dimension` allows): a gigabyte each once decoded, two or
    // three with the processors' copies.
    let p = project();
    p.metadata("[[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n\n[[package.metadata.assets.rules]]\nmatch = \"textures/*.png\"\nprocessor = \"texture\"\n")
        .file("assets/bomb.png", huge_png_header(16384, 16384))
        .file("assets/sprites/bomb.png", huge_png_header(16384, 16384))
        .file("assets/textures/bomb.png", huge_png_header(16384, 16384))
        .png("assets/sprites/fine.png", 8, 8, 1);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert_no_panic(&run.stderr);
    for (asset, needs) in [
        ("bomb.png", "3.0GiB"),
        ("sprites/bomb.png", "3.0GiB"),
        ("textures/bomb.png", "4.0GiB"),
    ] {
        let message = run.failure_message(asset);
        assert!(
            message.contains(&format!("decoding a 16384x16384 image needs about {needs} of memory, more than the build's memory budget of 1.0GiB"))
                && message.contains("`--memory-budget`"),
            "{asset}: {message}"
        );
    }
    assert_eq!(run.finished()["failed"].as_u64(), Some(3));

    // A larger budget lets them through to the decoder, which finds the
    // data missing (a real one of these would decode, one at a time).
    for budget in [vec!["build", "--memory-budget", "8GiB"], vec!["build"]] {
        let env = if budget.len() == 1 {
            vec![("CARGO_ASSETS_MEMORY_BUDGET", "8GiB".to_owned())]
        } else {
            vec![]
        };
        let run = p.run_with(&budget, &env);
        assert_eq!(run.finished()["failed"].as_u64(), Some(3));
        for asset in ["bomb.png", "sprites/bomb.png", "textures/bomb.png"] {
            let message = run.failure_message(asset);
            assert!(
                message.contains("could not decode image"),
                "{asset}: {message}"
            );
        }
    }
    let run = p.run(&["build", "--memory-budget", "lots"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("`lots` is not a size"),
        "{}",
        run.stderr
    );
}
