//! The module graph of every library crate in the workspace has no cycle.
//!
//! A cycle between modules means a type sits in the wrong place: the lower
//! module should own it and the higher one import it. The rule is checked at
//! two levels: the top-level modules of a crate (`crate::X` used from
//! inside `X`'s files), and the sibling files of one folder (`super::Y` or
//! `crate::X::Y` from `X/Z.rs`), where the folder's `mod.rs` is its facade
//! and takes no part. Comments and doc comments are ignored: a doc link is
//! not a dependency.
//!
//! Run alone: `cargo test -p assets-test-support --test module_graph`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates whose modules are checked, relative to the workspace root.
const CRATES: &[&str] = &[
    "assets-build",
    "assets-runtime",
    "assets-macros",
    "cargo-assets",
];

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn module_graphs_have_no_cycles() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut cycles = Vec::new();
    for krate in CRATES {
        let src = workspace.join(krate).join("src");
        let top = top_level_graph(&src);
        assert!(
            top.len() >= 3,
            "{krate}: found only {:?}; is the layout still src/<module>.rs?",
            top.keys()
        );
        for cycle in find_cycles(&top) {
            cycles.push(format!("{krate}: {}", cycle.join(" -> ")));
        }
        for folder in module_folders(&src) {
            let siblings = sibling_graph(&folder);
            for cycle in find_cycles(&siblings) {
                let name = folder.file_name().unwrap().to_string_lossy();
                cycles.push(format!("{krate}::{name}: {}", cycle.join(" -> ")));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "module cycles (the lower module should own the shared type):\n{}",
        cycles.join("\n")
    );
}

/// The checker itself finds a cycle, and names it, when there is one.
#[test]
fn a_cycle_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::write(src.join("lib.rs"), "mod a; mod b; mod c;").unwrap();
    fs::write(
        src.join("a.rs"),
        "use crate::b::B;\n// crate::c in a comment is no edge\n",
    )
    .unwrap();
    fs::write(src.join("b.rs"), "use crate::{c::C, a};").unwrap();
    fs::write(src.join("c.rs"), "/// [`crate::a`]\npub struct C;").unwrap();
    let graph = top_level_graph(src);
    assert_eq!(
        find_cycles(&graph),
        vec![vec!["a".to_string(), "b".into(), "a".into()]]
    );

    fs::create_dir(src.join("d")).unwrap();
    fs::write(src.join("d/mod.rs"), "mod x; mod y; pub use x::X;").unwrap();
    fs::write(src.join("d/x.rs"), "use super::y::Y;").unwrap();
    fs::write(src.join("d/y.rs"), "fn f() { crate::d::x::g() }").unwrap();
    assert_eq!(
        find_cycles(&sibling_graph(&src.join("d"))),
        vec![vec!["x".to_string(), "y".into(), "x".into()]]
    );
}

/// Top-level modules and the modules each one's files name through `crate::`.
fn top_level_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for (name, files) in top_level_modules(src) {
        let mut uses = BTreeSet::new();
        for file in files {
            uses.extend(
                crate_paths(&code_of(&file))
                    .into_iter()
                    .filter_map(|path| path.first().cloned()),
            );
        }
        uses.remove(&name);
        graph.insert(name, uses);
    }
    only_modules(graph)
}

/// The files of one folder module (not its `mod.rs`) and the siblings each
/// one names, through `super::` or `crate::<folder>::`.
fn sibling_graph(folder: &Path) -> Graph {
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    let mut graph = Graph::new();
    for (sibling, files) in top_level_modules(folder) {
        let mut uses = BTreeSet::new();
        for file in files {
            let code = code_of(&file);
            for path in crate_paths(&code) {
                if path.first() == Some(&name)
                    && let Some(used) = path.get(1)
                {
                    uses.insert(used.clone());
                }
            }
            uses.extend(super_paths(&code));
        }
        uses.remove(&sibling);
        graph.insert(sibling, uses);
    }
    only_modules(graph)
}

/// `graph` without the uses of names that are not its modules (`crate::X`
/// where `X` is an item of the root, a folder's `super::Item`).
fn only_modules(mut graph: Graph) -> Graph {
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for uses in graph.values_mut() {
        uses.retain(|used| names.contains(used));
    }
    graph
}

/// `name.rs` files and `name/` folders directly under `dir` (not `lib.rs`,
/// `main.rs`, `mod.rs`), each with every Rust file it is made of.
fn top_level_modules(dir: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            modules.entry(name).or_default().extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if !["lib", "main", "mod"].contains(&stem.as_str()) {
                modules.entry(stem).or_default().push(path);
            }
        }
    }
    modules
}

fn module_folders(src: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path.clone());
                pending.push(path);
            }
        }
    }
    folders.sort();
    folders
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// The file's text with `//` comments (and so doc comments) removed. Block
/// comments are not used in this workspace; string literals that hold `//`
/// only lose what follows on their line, which cannot add an edge.
fn code_of(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path that starts with `crate::`, as its segments; a group
/// `crate::{a::X, b}` gives one path per member.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && is_ident_char(code[..at].chars().next_back().unwrap()) {
            continue; // `assets_build::crate::` does not occur; `$crate::` and `mycrate::` are other names
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for member in inner.split(',') {
                let segments = segments(member.trim());
                if !segments.is_empty() {
                    paths.push(segments);
                }
            }
        } else {
            paths.push(segments(rest));
        }
    }
    paths
}

/// The first segment of every `super::` path (the sibling it names).
fn super_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("super::") {
        let rest = &code[at + "super::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(
                inner
                    .split(',')
                    .filter_map(|member| segments(member.trim()).into_iter().next()),
            );
        } else if let Some(first) = segments(rest).into_iter().next() {
            names.push(first);
        }
    }
    names
}

fn segments(path: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut rest = path;
    loop {
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    segments
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// One cycle per strongly connected part of the graph that has more than
/// one module, written as a path back to its start.
fn find_cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut cycles = Vec::new();
    let mut reported: BTreeSet<String> = BTreeSet::new();
    for start in graph.keys() {
        if reported.contains(start) {
            continue;
        }
        if let Some(path) = path_back(graph, start) {
            reported.extend(path.iter().cloned());
            cycles.push(path);
        }
    }
    cycles
}

/// A shortest path from `start` through its uses back to `start`.
fn path_back(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for node in frontier {
            for used in &graph[node] {
                if used == start {
                    let mut back = Vec::new();
                    let mut at = node;
                    while at != start {
                        back.push(at.to_string());
                        at = came_from[at];
                    }
                    back.reverse();
                    let mut path = vec![start.to_string()];
                    path.extend(back);
                    path.push(start.to_string());
                    return Some(path);
                }
                if !came_from.contains_key(used.as_str()) && used != start {
                    came_from.insert(used, node);
                    next.push(used.as_str());
                }
            }
        }
        frontier = next;
    }
    None
}
