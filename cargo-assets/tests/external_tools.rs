//! External tools through the `command` processor, with real tool scripts
//! that read more than the asset: what they read is known through
//! `{depfile}` or the rule's `inputs`, so an edit to any of it reruns the
//! step. Without either, the step would keep a stale output: that is the
//! case these tests pin.

use assets_test_support::Project;
use serde_json::Value;

/// A level compiler that reads the level and a shared palette (and, when
/// asked, a config file outside the asset root), writes both into its
/// output, and lists what it read in a depfile when given one.
const LVLC: &str = r#"#!/bin/sh
set -e
in="$1"; out="$2"; dep="$3"
palette=assets/shared/palette.txt
config=tools/lvlc.cfg
{ cat "$in"; cat "$palette"; cat "$config" 2>/dev/null || true; } > "$out"
if [ -n "$dep" ]; then
  printf '%s: %s \\\n  %s %s\n' "$out" "$in" "$palette" "$config" > "$dep"
  # A system file the tool read: outside the package, never tracked.
  printf '%s: /etc/hostname\n' "$out" >> "$dep"
fi
"#;

fn project(command: &str, extra: &str) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&format!(
        r#"
[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = {command}
{extra}
"#
    ))
    .file("tools/lvlc.sh", LVLC)
    .file("assets/levels/one.lvl", "level one\n")
    .file("assets/levels/two.lvl", "level two\n")
    .file("assets/shared/palette.txt", "red green\n");
    p
}

fn resource_bytes(p: &Project, run: &assets_test_support::Run, name: &str) -> Vec<u8> {
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
    let _ = p;
    parcel
        .bytes(assets_runtime::ResourceId::of(name))
        .unwrap_or_else(|e| panic!("resource `{name}`: {e}"))
        .into_owned()
}

#[test]
fn a_file_the_tool_lists_in_its_depfile_reruns_the_step_when_it_changes() {
    let p = project(
        r#"["sh", "tools/lvlc.sh", "{input}", "{output}", "{depfile}"]"#,
        "",
    );
    let first = p.build_ok();
    assert_eq!(
        resource_bytes(&p, &first, "levels/one.lvl"),
        b"level one\nred green\n"
    );
    // (what, edit, assets whose processor must run, bytes of levels/one.lvl after)
    type Case = (
        &'static str,
        fn(&Project),
        &'static [&'static str],
        &'static [u8],
    );
    let cases: &[Case] = &[
        ("nothing changed", |_| {}, &[], b"level one\nred green\n"),
        (
            "the palette, an asset the tool read",
            |p| {
                p.file("assets/shared/palette.txt", "blue\n");
            },
            &["levels/one.lvl", "levels/two.lvl", "shared/palette.txt"],
            b"level one\nblue\n",
        ),
        (
            "a file it looked for, outside the asset root, is created",
            |p| {
                p.file("tools/lvlc.cfg", "cfg 1\n");
            },
            &["levels/one.lvl", "levels/two.lvl"],
            b"level one\nblue\ncfg 1\n",
        ),
        (
            "that file is edited",
            |p| {
                p.file("tools/lvlc.cfg", "cfg 2\n");
            },
            &["levels/one.lvl", "levels/two.lvl"],
            b"level one\nblue\ncfg 2\n",
        ),
        (
            "touched without a change",
            |p| {
                p.touch("tools/lvlc.cfg").touch("assets/shared/palette.txt");
            },
            &[],
            b"level one\nblue\ncfg 2\n",
        ),
        (
            "the level itself",
            |p| {
                p.file("assets/levels/one.lvl", "level 1\n");
            },
            &["levels/one.lvl"],
            b"level 1\nblue\ncfg 2\n",
        ),
    ];
    for &(what, edit, ran, bytes) in cases {
        edit(&p);
        let run = p.build_ok();
        assert_eq!(run.processed(), ran, "{what}\n{}", run.stderr);
        assert_eq!(resource_bytes(&p, &run, "levels/one.lvl"), bytes, "{what}");
    }
    // What the step read, as `deps` shows it: the system file is not there.
    let deps = p.run(&["deps", "levels/one.lvl"]);
    let text = serde_json::to_string(&deps.messages).unwrap();
    for path in ["assets/shared/palette.txt", "tools/lvlc.cfg"] {
        assert!(text.contains(path), "{path} missing from {text}");
    }
    assert!(!text.contains("/etc/hostname"), "{text}");
}

#[test]
fn a_tool_given_a_depfile_that_writes_none_fails_by_name() {
    let p = project(
        r#"["sh", "-c", "cp \"$0\" \"$1\"", "{input}", "{output}", "{depfile}"]"#,
        "",
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    let message = run.failure_message("levels/one.lvl");
    assert!(message.contains("wrote no depfile"), "{message}");
}

#[test]
fn inputs_globs_make_files_a_tool_reads_silently_into_inputs() {
    // The same tool without a depfile: only `inputs` says what it reads.
    let p = project(
        r#"["sh", "tools/lvlc.sh", "{input}", "{output}"]"#,
        r#"inputs = ["shared/*.txt"]"#,
    );
    p.build_ok();
    p.file("assets/shared/palette.txt", "blue\n");
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        ["levels/one.lvl", "levels/two.lvl", "shared/palette.txt"]
    );
    assert_eq!(
        resource_bytes(&p, &run, "levels/two.lvl"),
        b"level two\nblue\n"
    );
    // A new file matching the glob is a new input: the key lists them.
    p.file("assets/shared/extra.txt", "x\n");
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        ["levels/one.lvl", "levels/two.lvl", "shared/extra.txt"]
    );
    let why = run
        .with_reason("asset-processed")
        .find(|m| m["asset"] == "levels/one.lvl")
        .unwrap()["why"]
        .clone();
    assert_eq!(why["kind"], "settings-changed", "{why}");
    assert!(
        why["current"]
            .as_str()
            .unwrap()
            .contains("shared/extra.txt"),
        "{why}"
    );
    assert_eq!(p.build_ok().processed(), Vec::<String>::new());
}

#[test]
fn a_tool_with_several_named_outputs_gives_one_resource_each() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "atlases/*.list"
processor = "command"
command = ["sh", "-c", "cp \"$0\" \"$1\" && printf '{\"n\":1}' > \"$2\"", "{input}", "{output:atlas.bin}", "{output:atlas.json}"]
outputs = ["atlas.bin", "atlas.json"]
kind = { "atlas.json" = "text" }
"#,
    )
    .file("assets/atlases/ui.list", "a b c\n");
    let run = p.build_ok();
    let inspect = p.run(&["inspect", run.parcel("main").to_str().unwrap()]);
    let resources: Vec<(String, String)> = inspect
        .with_reason("resource")
        .map(|m: &Value| {
            (
                m["name"].as_str().unwrap().to_owned(),
                m["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        resources,
        [
            ("atlases/ui.list#atlas.bin".to_owned(), "bytes".to_owned()),
            ("atlases/ui.list#atlas.json".to_owned(), "text".to_owned())
        ]
    );
    assert_eq!(
        resource_bytes(&p, &run, "atlases/ui.list#atlas.json"),
        br#"{"n":1}"#
    );

    // `{output}` with several outputs is ambiguous, and says what to use.
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "atlases/*.list"
processor = "command"
command = ["cp", "{input}", "{output}"]
outputs = ["atlas.bin", "atlas.json"]
"#,
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("atlases/ui.list");
    assert!(
        message.contains("use {output:atlas.bin}, {output:atlas.json}"),
        "{message}"
    );
}

#[test]
fn a_file_that_changes_while_the_tool_runs_is_never_trusted() {
    // The tool reads its config, then the config changes before the build
    // can hash it (here the tool itself rewrites it, every run): what the
    // tool read is unknown, so the step must not be reused.
    let p = project(
        r#"["sh", "-c", "cat \"$0\" tools/cfg.txt > \"$1\"; echo more >> tools/cfg.txt; echo \"$1: tools/cfg.txt\" > \"$2\"", "{input}", "{output}", "{depfile}"]"#,
        "",
    );
    p.file("tools/cfg.txt", "v1\n");
    p.build_ok();
    let run = p.build_ok();
    assert_eq!(run.processed(), ["levels/one.lvl", "levels/two.lvl"]);
    let why = &run
        .with_reason("asset-processed")
        .find(|m| m["asset"] == "levels/one.lvl")
        .unwrap()["why"];
    assert_eq!(why["kind"], "input-changed", "{why}");
    assert_eq!(why["path"], "tools/cfg.txt", "{why}");
}

#[test]
fn a_successful_tools_stderr_is_a_warning_said_again_when_reused_and_deniable() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["sh", "-c", "echo 'palette has 300 colours; 256 kept' >&2; cp \"$0\" \"$1\"", "{input}", "{output}"]
"#,
    )
    .file("assets/levels/one.lvl", "level one\n")
    .file("assets/levels/two.lvl", "quiet\n");
    let said = "palette has 300 colours; 256 kept";
    let first = p.build_ok();
    let second = p.build_ok();
    assert!(
        second.processed().is_empty(),
        "the second build reuses both"
    );
    for run in [&first, &second] {
        let mut warnings: Vec<&Value> = run.with_reason("asset-warning").collect();
        warnings.sort_by_key(|w| w["asset"].as_str().unwrap().to_owned());
        assert_eq!(warnings.len(), 2, "{}", run.stderr);
        assert_eq!(warnings[0]["asset"], "levels/one.lvl");
        assert_eq!(warnings[0]["processor"], "command");
        assert_eq!(warnings[0]["message"], said, "verbatim");
        assert!(
            run.stderr
                .contains(&format!("warning: `levels/one.lvl` (command): {said}")),
            "{}",
            run.stderr
        );
    }
    // For CI: warnings are errors.
    let denied = p.run(&["build", "--deny-warnings"]);
    assert_eq!(denied.code, Some(101), "{}", denied.stderr);
    assert!(
        denied
            .stderr
            .contains("2 warnings denied by `--deny-warnings`"),
        "{}",
        denied.stderr
    );
    assert_eq!(denied.finished()["success"], false);
    let by_env = p.run_with(
        &["build"],
        &[("CARGO_ASSETS_DENY_WARNINGS", "1".to_owned())],
    );
    assert_eq!(by_env.code, Some(101), "{}", by_env.stderr);
    // Or always, for the project: a key of the manifest.
    let manifest = std::fs::read_to_string(p.path().join("Cargo.toml")).unwrap();
    p.file(
        "Cargo.toml",
        manifest.replacen(
            "[[package.metadata.assets.rules]]",
            "[package.metadata.assets]\ndeny-warnings = true\n\n[[package.metadata.assets.rules]]",
            1,
        ),
    );
    let by_key = p.run(&["build"]);
    assert_eq!(by_key.code, Some(101), "{}", by_key.stderr);
    assert!(
        by_key.stderr.contains("`deny-warnings = true`"),
        "{}",
        by_key.stderr
    );
}

#[test]
fn a_tool_still_running_at_its_steps_deadline_is_stopped_and_fails_by_name() {
    // A tool that hangs, with what it started: a shell and its `sleep`.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "levels/*.lvl"
processor = "command"
command = ["sh", "-c", "echo started >&2; sleep 60 & sleep 60; cp \"$0\" \"$1\"", "{input}", "{output}"]
timeout = 1.5
"#,
    )
    .file("assets/levels/one.lvl", "level one\n")
    .file("assets/notes.txt", "fine\n");
    let start = std::time::Instant::now();
    let run = p.run(&["build"]);
    let took = start.elapsed();
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("levels/one.lvl");
    assert!(
        message.contains("`sh` was still running at the step's deadline and was stopped")
            && message.contains("raise `timeout = SECONDS` on its rule")
            && message.contains("started"),
        "{message}"
    );
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    // The other assets built, and nothing the tool started outlives it:
    // its process group was killed, and a killed process is gone once the
    // kernel has torn it down (a moment, on a loaded machine; the `sleep`s
    // themselves would last a minute).
    assert_eq!(run.finished()["failed"].as_u64(), Some(1));
    let left = || {
        std::process::Command::new("pgrep")
            .args(["-f", "sleep 60"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let waited = std::time::Instant::now();
    while !left().is_empty() && waited.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(left().is_empty(), "still running: {}", left());

    // A bad `timeout` is an error at its key.
    p.metadata("[[package.metadata.assets.rules]]\nmatch = \"levels/*.lvl\"\ntimeout = \"soon\"\n");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("expected seconds, more than 0 and at most a day")
            && run
                .stderr
                .contains("package.metadata.assets.rules[0].timeout"),
        "{}",
        run.stderr
    );
}
