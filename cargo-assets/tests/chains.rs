//! Processor chains through the real binary: `processor = ["command",
//! "text"]` runs a tool, then the text processor on what the tool made;
//! each stage is a step of its own, and an edit reruns exactly the stages
//! whose input changed (an unchanged output stops the chain there).

use assets_test_support::{Project, Run};

/// The first stage upper-cases a map with `tr`; the last normalizes line
/// endings (`text`'s default) and is what the parcel holds.
fn metadata(tool: &str, normalize: bool) -> String {
    format!(
        r#"
[[package.metadata.assets.rules]]
match = "maps/*.map"
processor = ["command", "text"]
command = {{ command = ["sh", "-c", "< \"$0\" {tool} > \"$1\"", "{{input}}", "{{output}}"] }}
normalize = {normalize}
"#
    )
}

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&metadata("tr a-z A-Z", true))
        .file("assets/maps/a.map", "hello\r\nworld\r\n")
        .file("assets/maps/b.map", "b\n")
        .file("assets/notes.txt", "not in a chain\n");
    p
}

/// An edit, the stages that must run in the next build, and what
/// `maps/a.map` holds after it.
type Case<'a> = (&'a str, &'a dyn Fn(&Project), &'a [&'a str], &'a [u8]);

fn resource(run: &Run, name: &str) -> Option<Vec<u8>> {
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
    let bytes = parcel.bytes(assets_runtime::ResourceId::of(name));
    bytes.ok().map(|b| b.into_owned())
}

#[test]
fn each_stage_is_a_step_and_an_unchanged_output_stops_the_chain() {
    let p = project();
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.processed(),
        [
            "maps/a.map",
            "maps/b.map",
            "notes.txt",
            "stage1:maps/a.map",
            "stage1:maps/b.map"
        ]
    );
    // The tool's output, then the text processor's: upper case, `\n`.
    assert_eq!(resource(&run, "maps/a.map").unwrap(), b"HELLO\nWORLD\n");
    // The parcel holds what the chain made, not its stages.
    assert_eq!(resource(&run, "stage1:maps/a.map"), None);
    let parcel = run.parcel("main");
    let toc = p.run(&["inspect", parcel.to_str().unwrap()]);
    let toc = serde_json::to_string(&toc.messages).unwrap();
    assert!(
        toc.contains("maps/a.map") && !toc.contains("stage1:"),
        "{toc}"
    );

    let cases: &[Case<'_>] = &[
        ("nothing", &|_| {}, &[], b"HELLO\nWORLD\n"),
        (
            // The tool makes the same bytes: the text stage stays fresh.
            "a change of case only",
            &|p| {
                p.file("assets/maps/a.map", "HELLO\r\nworld\r\n");
            },
            &["stage1:maps/a.map"],
            b"HELLO\nWORLD\n",
        ),
        (
            "a change of content",
            &|p| {
                p.file("assets/maps/a.map", "goodbye\r\n");
            },
            &["maps/a.map", "stage1:maps/a.map"],
            b"GOODBYE\n",
        ),
        (
            // The last stage's settings are the rule's keys.
            "the last stage's settings",
            &|p| {
                p.metadata(&metadata("tr a-z A-Z", false));
            },
            &["maps/a.map", "maps/b.map"],
            b"GOODBYE\r\n",
        ),
        (
            // The first stage's, the table under its name: both maps' first
            // stages rerun; `B` has no `O`, so its text stage stays fresh.
            "the first stage's settings",
            &|p| {
                p.metadata(&metadata("tr a-z A-Z | tr O 0", false));
            },
            &["maps/a.map", "stage1:maps/a.map", "stage1:maps/b.map"],
            b"G00DBYE\r\n",
        ),
    ];
    for (what, edit, ran, holds) in cases {
        edit(&p);
        let run = p.run(&["build"]);
        assert!(run.success(), "{what}: {}", run.stderr);
        assert_eq!(run.processed(), *ran, "{what}");
        assert_eq!(resource(&run, "maps/a.map").unwrap(), *holds, "{what}");
    }

    // The last stage depends on the first: `deps` says so, and `why` the
    // way back.
    let deps = p.run(&["deps", "maps/a.map"]);
    let deps = serde_json::to_string(&deps.messages).unwrap();
    assert!(deps.contains("stage1:maps/a.map"), "{deps}");
    let why = p.run(&["why", "stage1:maps/a.map"]);
    assert!(why.success(), "{}", why.stderr);
}

#[test]
fn a_chain_that_cannot_work_is_an_error_at_its_rule() {
    let p = project();
    let cases: &[(&str, &[&str])] = &[
        (
            "processor = []",
            &["an empty chain names no processor", "Cargo.toml:"],
        ),
        (
            "processor = [\"command\", 3]",
            &["expected processor names, found integer"],
        ),
        (
            "processor = [\"sprite\", \"text\"]",
            &["`sprite` packs into an atlas, so it can only be a chain's last stage"],
        ),
        (
            "processor = [\"comand\", \"text\"]",
            &[
                "unknown processor `comand` in the chain for `maps/",
                "did you mean `command`?",
            ],
        ),
        (
            "processor = [\"command\", \"text\"]\ncommand = 3",
            &["the settings of the chain's stage `command` must be a table, found integer"],
        ),
        (
            "processor = [\"command\", \"text\"]\ncommand = { comand = [\"true\"] }",
            &["invalid settings for the chain's stage `command`", "comand"],
        ),
    ];
    for (rule, expected) in cases {
        p.metadata(&format!(
            "[[package.metadata.assets.rules]]\nmatch = \"maps/*.map\"\n{rule}\n"
        ));
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{rule}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        for part in *expected {
            assert!(
                run.stderr.contains(part),
                "{rule}: `{part}` missing in {}",
                run.stderr
            );
        }
        assert_eq!(run.processed(), Vec::<String>::new(), "{rule}");
    }
}
