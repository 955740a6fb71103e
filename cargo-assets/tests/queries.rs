//! `why`, `deps`, `rdeps`, `graph` and `gc` through the real binary, with
//! their whole output pinned (these are answers people and scripts read).

use std::process::Output;

use assets_test_support::Project;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/*.png"
processor = "sprite"

[[package.metadata.assets.rules]]
match = "shaders/*.wgsl"
includes = true
include-dirs = ["lib"]
"#,
    )
    .png("assets/sprites/a.png", 4, 4, 1)
    .png("assets/sprites/b.png", 3, 5, 2)
    .file("assets/lib/common.wgsl", "fn helper() {}\n")
    .file(
        "assets/shaders/main.wgsl",
        "#include \"common.wgsl\"\nfn main() {}\n",
    )
    .file("assets/readme.txt", "alone\n");
    p
}

/// Stdout and stderr of `cargo assets <args>` (human output), and the code.
fn human(p: &Project, args: &[&str]) -> (String, String, Option<i32>) {
    let out: Output = p.command(args).output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

#[test]
fn deps_rdeps_and_graph_answer_from_the_records() {
    let p = project();
    p.build_ok();
    let (out, _, code) = human(&p, &["deps", "shaders/main.wgsl"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "shaders/main.wgsl reads assets/shaders/main.wgsl\n\
         shaders/main.wgsl looked for (missing) assets/shaders/common.wgsl\n\
         shaders/main.wgsl uses the outputs of lib/common.wgsl\n"
    );
    let (out, _, _) = human(&p, &["rdeps", "lib/common.wgsl"]);
    assert_eq!(
        out,
        "shaders/main.wgsl uses the outputs of lib/common.wgsl\n"
    );
    let (out, _, _) = human(&p, &["rdeps", "sprites/a.png"]);
    assert_eq!(out, "atlas:main uses the outputs of sprites/a.png\n");
    let (out, _, _) = human(&p, &["graph"]);
    assert_eq!(
        out,
        "atlas:main -> sprites/a.png (outputs)\n\
         atlas:main -> sprites/b.png (outputs)\n\
         shaders/main.wgsl -> lib/common.wgsl (outputs)\n"
    );
    let (dot, _, _) = human(&p, &["graph", "--dot"]);
    assert!(dot.starts_with("digraph assets {\n"), "{dot}");
    assert!(
        dot.contains("  \"atlas:main\" -> \"sprites/a.png\";\n"),
        "{dot}"
    );
    // An asset with no edge is still a node.
    assert!(dot.contains("  \"readme.txt\";\n"), "{dot}");
    let graph = p.run(&["graph"]);
    assert!(
        graph.messages[0]["nodes"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("readme.txt")),
        "{:?}",
        graph.messages
    );
    let run = p.run(&["deps", "shaders/main.wgsl"]);
    assert_eq!(
        run.messages[0],
        serde_json::json!({
            "reason": "deps", "asset": "shaders/main.wgsl",
            "inputs": [
                {"path": "assets/shaders/main.wgsl", "present": true},
                {"path": "assets/shaders/common.wgsl", "present": false},
            ],
            "dependencies": ["lib/common.wgsl"],
        })
    );
}

#[test]
fn why_says_what_happened_and_what_will() {
    let p = project();
    p.build_ok();
    let (out, _, _) = human(&p, &["why", "shaders/main.wgsl"]);
    assert_eq!(
        out,
        "shaders/main.wgsl: last built because never built before\n\
         shaders/main.wgsl: fresh; the next build reuses it\n"
    );
    p.file("assets/lib/common.wgsl", "fn helper() { /* changed */ }\n");
    let (out, _, _) = human(&p, &["why", "shaders/main.wgsl"]);
    assert!(
        out.ends_with(
            "shaders/main.wgsl: the next build rebuilds it: dependency `lib/common.wgsl` changed\n"
        ),
        "{out}"
    );
    p.build_ok();
    let run = p.run(&["why", "shaders/main.wgsl"]);
    assert_eq!(
        run.messages[0],
        serde_json::json!({
            "reason": "why", "asset": "shaders/main.wgsl", "fresh": true, "next": null,
            "last": {"kind": "dependency-changed", "asset": "lib/common.wgsl"},
        })
    );
    // Creating the file an include looked for will rebuild the includer.
    p.file("assets/shaders/common.wgsl", "fn closer() {}\n");
    let (out, _, _) = human(&p, &["why", "shaders/main.wgsl"]);
    assert!(
        out.ends_with("rebuilds it: `assets/shaders/common.wgsl` appeared\n"),
        "{out}"
    );
}

#[test]
fn query_errors_name_the_asset_and_suggest_one() {
    let p = project();
    p.build_ok();
    // An asset that does not exist is a usage error: exit 1, as Cargo's are.
    let (_, err, code) = human(&p, &["why", "sprites/c.png"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "error: no asset named `sprites/c.png` (did you mean `sprites/a.png`?)\n"
    );
    p.png("assets/sprites/new.png", 2, 2, 3);
    let (_, err, code) = human(&p, &["deps", "sprites/new.png"]);
    assert_eq!(code, Some(101));
    assert_eq!(
        err,
        "error: `sprites/new.png` has not been built yet; run `cargo assets build` first\n"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-assets"))
        .args(["assets", "why", "x.png"])
        .current_dir(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: could not find `Cargo.toml` in `"),
        "{err}"
    );
}

#[test]
fn gc_drops_blobs_only_superseded_records_used() {
    let p = project();
    p.build_ok();
    let (_, err, _) = human(&p, &["gc"]);
    assert!(err.contains("Removed 0 unused blobs, 0B freed"), "{err}");
    p.png("assets/sprites/a.png", 4, 4, 9);
    p.build_ok();
    let run = p.run(&["gc"]);
    let done = &run.messages[0];
    assert_eq!(done["reason"], "gc-finished");
    // The old sprite's cached pixels (same layout, so the frame table is
    // unchanged and kept; the old page was only ever in the parcel, which
    // now holds the new one).
    assert_eq!(done["removed"], 1, "{done}");
    assert!(done["bytes_freed"].as_u64().unwrap() > 0);
    // What remains is enough: a no-op builds nothing and the parcel is intact.
    let again = p.build_ok();
    assert_eq!(again.processed(), Vec::<String>::new());
    let inspect = p.run(&["inspect", again.parcel("main").to_str().unwrap()]);
    assert_eq!(inspect.code, Some(0), "{}", inspect.stderr);
}

#[test]
fn outputs_names_what_an_asset_produced_and_the_parcels_holding_it() {
    let p = project();
    let built = p.build_ok();
    let parcel = built.parcel("main");
    let run = p.run(&["outputs", "sprites/a.png"]);
    assert!(run.success(), "{}", run.stderr);
    let answer = run.with_reason("outputs").next().expect("an answer");
    assert_eq!(answer["asset"], "sprites/a.png");
    assert_eq!(
        answer["resources"],
        serde_json::json!([{"name": "sprites/a.png", "kind": "sprite", "size": 72}])
    );
    assert_eq!(answer["parcels"]["main"], parcel.to_str().unwrap());
    let (out, _, code) = human(&p, &["outputs", "shaders/main.wgsl"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("shaders/main.wgsl: shader, 28B"), "{out}");
    assert!(
        out.contains("shaders/main.wgsl#reflection: text, "),
        "{out}"
    );
    assert!(
        out.contains("shaders/main.wgsl: in parcel `main` ("),
        "{out}"
    );
    let (_, err, code) = human(&p, &["outputs", "sprites/c.png"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no asset named `sprites/c.png`"), "{err}");
}

#[test]
fn out_dir_holds_every_resource_as_a_file_kept_in_sync() {
    let p = project();
    let out = p.path().join("out");
    let out_arg = out.to_str().unwrap();
    let run = p.run(&["build", "--out-dir", out_arg]);
    assert!(run.success(), "{}", run.stderr);
    let written = run
        .with_reason("out-dir-written")
        .next()
        .expect("a message");
    let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
    let names: Vec<String> = buf.parcel().iter().map(|r| r.name.to_owned()).collect();
    assert_eq!(written["written"], names.len());
    for r in buf.parcel().iter() {
        assert_eq!(
            std::fs::read(out.join(r.name)).unwrap(),
            &*r.bytes().unwrap(),
            "{}",
            r.name
        );
    }
    // A file of the user's own is never touched.
    std::fs::write(out.join("notes.md"), "mine").unwrap();
    let mtime = |name: &str| {
        std::fs::metadata(out.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let (sprite_before, readme_before) = (mtime("sprites/a.png"), mtime("readme.txt"));
    std::thread::sleep(std::time::Duration::from_millis(20));

    // An edit rewrites its file alone; a removed asset's file goes.
    p.file("assets/readme.txt", "changed\n")
        .remove("assets/sprites/b.png");
    let run = p.run(&["build", "--out-dir", out_arg]);
    assert!(run.success(), "{}", run.stderr);
    let written = run.with_reason("out-dir-written").next().unwrap();
    assert_eq!(written["removed"], 1, "{written}");
    assert_eq!(
        std::fs::read_to_string(out.join("readme.txt")).unwrap(),
        "changed\n"
    );
    assert_ne!(mtime("readme.txt"), readme_before);
    assert!(!out.join("sprites/b.png").exists());
    assert!(out.join("notes.md").exists());
    // An unchanged file keeps its mtime (a sprite's frame moved with the
    // re-pack, so compare the text that did not change: the shader).
    let _ = sprite_before;
    let shader = mtime("shaders/main.wgsl");
    let run = p.run(&["build", "--out-dir", out_arg]);
    let written = run.with_reason("out-dir-written").next().unwrap();
    assert_eq!(written["written"], 0, "{written}");
    assert_eq!(mtime("shaders/main.wgsl"), shader);
}

#[test]
fn source_leads_from_a_resource_back_to_what_to_edit() {
    let p = project();
    p.build_ok();
    let answer = |resource: &str| {
        let run = p.run(&["source", resource]);
        assert!(run.success(), "{resource}: {}", run.stderr);
        run.with_reason("source").next().expect("an answer").clone()
    };
    let sprite = answer("sprites/a.png");
    assert_eq!(sprite["file"], "assets/sprites/a.png");
    assert_eq!(sprite["processor"], "sprite");
    let reflection = answer("shaders/main.wgsl#reflection");
    assert_eq!(reflection["asset"], "shaders/main.wgsl");
    assert_eq!(reflection["file"], "assets/shaders/main.wgsl");
    let page = answer("atlas:main#0");
    assert_eq!(page["asset"], "atlas:main");
    assert_eq!(page["processor"], "atlas");
    assert!(page.get("file").is_none(), "{page}");
    let (_, err, code) = human(&p, &["source", "sprites/z.png"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no asset named `sprites/z.png`"), "{err}");
    let (out, _, _) = human(&p, &["source", "sprites/a.png"]);
    assert_eq!(
        out,
        "sprites/a.png: from assets/sprites/a.png (sprite, asset `sprites/a.png`)\n"
    );
}

#[test]
fn the_manifests_out_dir_is_kept_in_sync_by_build_and_by_watch() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata("[package.metadata.assets]\nout-dir = \"dist/assets\"\n")
        .file("assets/readme.txt", "one\n")
        .file("assets/levels/a.json", "{\"a\": 1}\n");
    let out = p.path().join("dist/assets");
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.with_reason("out-dir-written").count(), 1);
    assert_eq!(
        std::fs::read_to_string(out.join("readme.txt")).unwrap(),
        "one\n"
    );
    assert!(out.join("levels/a.json").exists());

    // Each save under `watch` reaches the folder, through the patch the
    // save's parcel is written as.
    let watch = p.watch();
    p.file("assets/readme.txt", "two\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(out.join("readme.txt")).unwrap() != "two\n" {
        assert!(std::time::Instant::now() < deadline, "out-dir not updated");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    p.remove("assets/levels/a.json");
    while out.join("levels/a.json").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "a removed asset's file stayed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(watch);

    // Inside an asset root, the files written would be assets: refused at the key.
    for (dir, says) in [
        ("assets/out", "is inside the asset root `assets`"),
        ("/tmp/x", "expected a folder relative to the package"),
    ] {
        p.metadata(&format!("[package.metadata.assets]\nout-dir = \"{dir}\"\n"));
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{}", run.stderr);
        assert!(
            run.stderr.contains(says) && run.stderr.contains("package.metadata.assets.out-dir"),
            "{dir}: {}",
            run.stderr
        );
    }
}

#[test]
fn building_chosen_assets_builds_them_and_what_they_need_and_no_parcel() {
    let p = project();
    // The shader's include is a module it reads through that module's step.
    let run = p.run(&["build", "shaders/main.wgsl", "readme.txt"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.processed(),
        ["lib/common.wgsl", "readme.txt", "shaders/main.wgsl"]
    );
    assert!(run.with_reason("parcel-written").next().is_none());
    assert!(
        !p.cache_dir().join("parcels").exists(),
        "no parcel is written"
    );

    // An atlas asks for its sprites, which are built with it.
    let run = p.run(&["build", "atlas:main"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.processed(),
        ["atlas:main", "sprites/a.png", "sprites/b.png"]
    );

    // A whole build then runs nothing more, and writes the parcel.
    let run = p.run(&["build"]);
    assert_eq!(run.processed(), Vec::<String>::new());
    let path = run.parcel("main");
    let parcel = std::fs::read(&path).unwrap();

    // An edit seen by a chosen build reruns that asset alone; the parcel
    // stays as it was until a whole build.
    p.file("assets/readme.txt", "edited\n")
        .png("assets/sprites/a.png", 6, 6, 9);
    let run = p.run(&["build", "readme.txt"]);
    assert_eq!(run.processed(), ["readme.txt"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), parcel);
    let run = p.run(&["build"]);
    assert_eq!(run.processed(), ["atlas:main", "sprites/a.png"]);

    // A name that is no asset fails, with the closest one.
    let run = p.run(&["build", "sprites/c.png"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no asset named `sprites/c.png` (did you mean `sprites/a.png`?)"),
        "{}",
        run.stderr
    );
}
