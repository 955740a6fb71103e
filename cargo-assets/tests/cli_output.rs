//! What `cargo assets` prints, pinned as snapshots (`tests/snapshots/`):
//! every command's output for people, its JSON messages, its errors and its
//! `--help`. Paths under the project, durations and sizes are redacted;
//! builds run on one worker, so steps are reported in one order.
//! After an intended change: `cargo insta test -p cargo-assets --review`, or
//! `INSTA_UPDATE=always cargo test -p cargo-assets --test cli_output` and
//! read the diff.

use std::path::Path;

use assets_test_support::Project;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets]
root = "assets"

[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
"#,
    )
    .png("assets/sprites/a.png", 4, 4, 1)
    .png("assets/sprites/b.png", 3, 5, 2)
    .file("assets/shaders/lib.wgsl", "fn lib() {}\n")
    .file("assets/shaders/main.wgsl", "#include \"lib.wgsl\"\n")
    .file("assets/notes.txt", "hello\n");
    p
}

/// `cargo assets <args>` in `dir`: the exit code, stdout and stderr, redacted.
fn run_in(p: &Project, dir: &Path, args: &[&str]) -> String {
    let out = p.command(args).current_dir(dir).output().unwrap();
    let text = format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    redact(&text, p.path())
}

fn run(p: &Project, args: &[&str]) -> String {
    run_in(p, p.path(), args)
}

/// The project's path → `[ROOT]`; `0.03s` → `[TIME]`; `1.5KiB` → `[SIZE]`.
fn redact(text: &str, root: &Path) -> String {
    let text = text.replace(&root.display().to_string(), "[ROOT]");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        // A number that is part of a word (`f00`, `v1`) is left alone.
        let word = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let digits = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(rest.len(), |n| start + n);
        let number = &rest[start..digits];
        let after = &rest[digits..];
        out.push_str(&rest[..start]);
        let unit = ["KiB", "MiB", "GiB", "B", "s"]
            .into_iter()
            .find(|u| after.starts_with(u) && !after[u.len()..].starts_with(char::is_alphanumeric));
        match unit {
            Some("s") if !word && number.contains('.') => out.push_str("[TIME]"),
            Some(u) if !word && u != "s" => out.push_str("[SIZE]"),
            _ => {
                out.push_str(number);
                rest = after;
                continue;
            }
        }
        rest = &after[unit.map_or(0, str::len)..];
    }
    out.push_str(rest);
    out
}

#[test]
fn build_output() {
    let p = project();
    insta::assert_snapshot!("build_first", run(&p, &["build", "-j1"]));
    insta::assert_snapshot!("build_noop", run(&p, &["build", "-j1"]));
    insta::assert_snapshot!("build_noop_verbose", run(&p, &["build", "-j1", "-v"]));
    p.file("assets/shaders/lib.wgsl", "fn lib2() {}\n");
    insta::assert_snapshot!("build_edit_verbose", run(&p, &["build", "-j1", "-v"]));
    insta::assert_snapshot!("build_quiet", run(&p, &["build", "-j1", "-q"]));
    p.file("assets/sprites/b.png", "not a png");
    insta::assert_snapshot!("build_failure", run(&p, &["build", "-j1"]));
    insta::assert_snapshot!(
        "build_failure_json",
        run(&p, &["build", "-j1", "--message-format", "json"])
    );
}

#[test]
fn inspect_clean_and_gc_output() {
    let p = project();
    p.build_ok();
    let parcel = "target/assets/parcels/game/dev/main.parcel";
    insta::assert_snapshot!("inspect", run(&p, &["inspect", parcel]));
    insta::assert_snapshot!(
        "inspect_json",
        run(&p, &["inspect", parcel, "--message-format", "json"])
    );
    // By its name in the manifest, as `cargo assets build` last wrote it.
    let by_name = run(&p, &["inspect", "main"]).replace("[ROOT]/", "");
    assert_eq!(by_name, run(&p, &["inspect", parcel]));
    let typo = run(&p, &["inspect", "mian"]);
    assert!(
        typo.contains("no parcel `mian` among the `dev` parcels of `game`: `main`"),
        "{typo}"
    );
    let release = run(&p, &["inspect", "main", "--release"]);
    assert!(
        release.contains("has written no `release` parcels for `game`")
            && release.contains("help: build first"),
        "{release}"
    );
    // A sprite's decoded pixels are stored (the parcel holds its frame), so
    // the old ones are garbage; an edited text's old bytes were only ever
    // in the parcel.
    p.png("assets/sprites/a.png", 4, 4, 9);
    p.build_ok();
    insta::assert_snapshot!("gc", run(&p, &["gc"]));
    insta::assert_snapshot!("clean", run(&p, &["clean"]));
    insta::assert_snapshot!("inspect_missing", run(&p, &["inspect", parcel]));
}

#[test]
fn query_output() {
    let p = project();
    p.build_ok();
    insta::assert_snapshot!("why", run(&p, &["why", "shaders/main.wgsl"]));
    insta::assert_snapshot!(
        "why_json",
        run(
            &p,
            &["why", "shaders/main.wgsl", "--message-format", "json"]
        )
    );
    insta::assert_snapshot!("why_missing_asset", run(&p, &["why", "shaders/mian.wgsl"]));
    insta::assert_snapshot!("deps", run(&p, &["deps", "shaders/main.wgsl"]));
    insta::assert_snapshot!("rdeps", run(&p, &["rdeps", "sprites/a.png"]));
    insta::assert_snapshot!("graph_dot", run(&p, &["graph", "--dot"]));
}

#[test]
fn error_output() {
    let p = project();
    let empty = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(
        "no_manifest",
        run_in(&p, empty.path(), &["build"])
            .replace(&empty.path().display().to_string(), "[EMPTY]")
    );
    insta::assert_snapshot!(
        "manifest_path_missing",
        run(&p, &["build", "--manifest-path", "nope/Cargo.toml"])
    );
    insta::assert_snapshot!("unknown_command", run(&p, &["biuld"]));
    let bad_key = std::fs::read_to_string(p.path().join("Cargo.toml"))
        .unwrap()
        .replace("includes = true", "include = true");
    p.file("Cargo.toml", bad_key);
    insta::assert_snapshot!("bad_key", run(&p, &["build", "-j1"]));
    p.file(
        "Cargo.toml",
        "[package]\nname = \"game\"\nversion = \"0.1.0\"\n[package.metadata.assets\n",
    );
    insta::assert_snapshot!("malformed_toml", run(&p, &["build", "-j1"]));
}

#[test]
fn every_command_has_help() {
    let p = project();
    insta::assert_snapshot!("help", run(&p, &["--help"]));
    for command in [
        "build", "verify", "watch", "clean", "gc", "inspect", "why", "deps", "rdeps", "outputs",
        "source", "graph",
    ] {
        insta::assert_snapshot!(format!("help_{command}"), run(&p, &[command, "--help"]));
    }
}

#[test]
fn redaction_keeps_names_and_hides_what_varies() {
    let root = Path::new("/tmp/x");
    assert_eq!(
        redact(
            "/tmp/x/a f00.png 1.25s 3 files, 1.5KiB total, 12B v1.2",
            root
        ),
        "[ROOT]/a f00.png [TIME] 3 files, [SIZE] total, [SIZE] v1.2"
    );
}

/// A build long enough to show progress: twelve steps of a tool that takes
/// a tenth of a second, on one worker.
fn long_build() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "*.lvl"
processor = "command"
command = ["sh", "-c", "sleep 0.1; cp \"$0\" \"$1\"", "{input}", "{output}"]
"#,
    );
    for i in 0..12 {
        p.file(&format!("assets/level{i:02}.lvl"), format!("level {i}\n"));
    }
    p
}

#[test]
fn a_progress_bar_is_drawn_on_a_terminal_and_never_into_a_pipe() {
    // `script` runs the command on a pseudo-terminal (util-linux).
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to provide a terminal");
        return;
    }
    let p = long_build();
    let bin = env!("CARGO_BIN_EXE_cargo-assets");
    let out = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!("{bin} assets build -j 1 --target-dir target"))
        .arg("/dev/null")
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        tty.contains("Building [") && tty.contains("/12: level"),
        "{tty}"
    );
    assert!(tty.contains("12 assets in"), "{tty}");

    p.run(&["clean"]);
    let piped = p.command(["build", "-j", "1"]).output().unwrap();
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(err.contains("Finished 12 assets"), "{err}");
    assert!(!err.contains("Building [") && !err.contains('\r'), "{err}");
}
