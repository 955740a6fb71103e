//! Workspaces, as Cargo has them: a virtual manifest builds every member
//! with `[package.metadata.assets]`, `-p` picks members, a member's own
//! directory means that member, and commands about one package ask for `-p`
//! when several are selected.

use assets_test_support::{Project, Run};

/// A virtual workspace: `game` and `editor` have assets, `tools` has none.
fn workspace() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.remove("src/lib.rs");
    p.file(
        "Cargo.toml",
        "[workspace]\nmembers = [\"game\", \"editor\", \"tools\"]\nresolver = \"2\"\n",
    );
    for (name, assets) in [("game", true), ("editor", true), ("tools", false)] {
        let metadata = if assets {
            "[package.metadata.assets]\nroot = \"assets\"\n"
        } else {
            ""
        };
        p.file(
            &format!("{name}/Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{metadata}"
            ),
        )
        .file(&format!("{name}/src/lib.rs"), "");
        if assets {
            p.file(&format!("{name}/assets/{name}.txt"), format!("{name}\n"));
        }
    }
    p
}

fn built_packages(run: &Run) -> Vec<String> {
    run.with_reason("build-finished")
        .map(|m| m["package"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_virtual_manifest_builds_every_member_with_assets() {
    let p = workspace();
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(built_packages(&run), ["game", "editor"]);
    assert_eq!(run.processed(), ["editor.txt", "game.txt"]);
    // Each member's parcel holds its own assets, in the one target dir.
    for m in run.with_reason("build-finished") {
        let path = m["parcels"]["main"].as_str().unwrap();
        assert!(path.starts_with(p.path().join("target").to_str().unwrap()));
    }
}

#[test]
fn dash_p_picks_members_and_names_the_ones_there_are() {
    let p = workspace();
    let run = p.run(&["build", "-p", "editor"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(built_packages(&run), ["editor"]);

    let run = p.run(&["build", "-p", "nope"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr
            .contains("package `nope` is not a member of the workspace"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the members with assets are: `game`, `editor`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_members_directory_means_that_member() {
    let p = workspace();
    let run = run_in(&p, "game", &["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(built_packages(&run), ["game"]);
    // `--workspace` from there, or from a member without assets, means
    // all of them again.
    let run = run_in(&p, "game", &["build", "--workspace"]);
    assert_eq!(built_packages(&run), ["game", "editor"]);
    let run = run_in(&p, "tools", &["build", "--workspace"]);
    assert_eq!(built_packages(&run), ["game", "editor"]);
}

#[test]
fn one_package_commands_ask_for_dash_p() {
    let p = workspace();
    assert!(p.run(&["build"]).success());
    let run = p.run(&["why", "game.txt"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr.contains("2 were selected: `game`, `editor`")
            && run.stderr.contains("help: choose one with `-p <name>`"),
        "{}",
        run.stderr
    );
    let run = p.run(&["why", "game.txt", "-p", "game"]);
    assert!(run.success(), "{}", run.stderr);
}

#[test]
fn a_workspace_without_assets_says_so() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.remove("src/lib.rs");
    p.file("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n")
        .file(
            "a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\n",
        )
        .file("a/src/lib.rs", "");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    assert!(
        run.stderr.contains("has [package.metadata.assets]"),
        "{}",
        run.stderr
    );
}

/// `cargo assets <args>` in a subdirectory of the project.
fn run_in(p: &Project, dir: &str, args: &[&str]) -> Run {
    let output = p
        .command(args)
        .args(["--message-format", "json"])
        .current_dir(p.path().join(dir))
        .output()
        .unwrap();
    Run::from_output(output)
}

#[test]
fn clean_dash_p_removes_only_that_members_records_and_parcels() {
    let p = workspace();
    assert!(p.run(&["build"]).success());
    let run = p.run(&["clean", "-p", "editor"]);
    assert!(run.success(), "{}", run.stderr);
    let cache = p.path().join("target/assets");
    assert!(!cache.join("records/editor").exists());
    assert!(!cache.join("parcels/editor").exists());
    assert!(cache.join("records/game").exists());
    assert!(cache.join("parcels/game/dev/main.parcel").exists());
    // The next build reruns the cleaned member only.
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.processed(), ["editor.txt"]);
    // Without -p, the whole cache goes.
    assert!(p.run(&["clean"]).success());
    assert!(!cache.exists());
}
