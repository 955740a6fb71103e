//! Imports of a shader: which statements are imports (WESL `import`,
//! naga_oil `#import`), which files a module path may name, and the shader
//! linked with its modules, each found through the context (so every file
//! looked for is recorded, found or not) and used through its own step.

use std::collections::BTreeSet;

use crate::asset_path::AssetPath;
use crate::processor::{Context, ProcessError};

/// A shader and the modules it imports, each once, dependencies first.
#[derive(Default)]
pub(super) struct Linked {
    /// The shader last, each module before its importers.
    pub(super) modules: Vec<Module>,
    seen: BTreeSet<AssetPath>,
    /// Packages whose modules it imports.
    pub(super) external: Vec<String>,
}

pub(super) struct Module {
    pub(super) asset: AssetPath,
    pub(super) text: String,
}

impl Linked {
    /// Adds `asset` (whose text is `text`) after the modules it imports.
    pub(super) fn add(
        &mut self,
        ctx: &mut Context<'_>,
        root: &str,
        asset: &AssetPath,
        text: &str,
    ) -> Result<(), ProcessError> {
        if !self.seen.insert(asset.clone()) {
            return Ok(());
        }
        for import in imports(text) {
            let at = |what: String| {
                ProcessError::msg(format!(
                    "{asset}:{}: `{}`: {what}",
                    import.line, import.written
                ))
            };
            let candidates = match &import.target {
                Target::Asset(path) => vec![AssetPath::new(path).map_err(|e| at(e.to_string()))?],
                Target::External(name) => {
                    if !self.external.contains(name) {
                        self.external.push(name.clone());
                    }
                    continue;
                }
                Target::Module { dir, segments } => {
                    let base = match dir {
                        ModuleDir::Root => root.trim_matches('/').to_owned(),
                        ModuleDir::Up(n) => {
                            let mut parts: Vec<&str> = asset.as_str().split('/').collect();
                            parts.pop();
                            for _ in 0..*n - 1 {
                                parts
                                    .pop()
                                    .ok_or_else(|| at("`super` above the asset root".into()))?;
                            }
                            parts.join("/")
                        }
                    };
                    module_candidates(&base, segments).map_err(|e| at(e.to_string()))?
                }
            };
            let Some(found) = candidates.iter().find(|c| ctx.exists(c)).cloned() else {
                let looked: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
                return Err(at(format!(
                    "module not found (looked for {})",
                    looked.join(", ")
                )));
            };
            if found == *asset {
                continue;
            }
            let module = ctx.dependency(found.as_str())?;
            let text = String::from_utf8(module.bytes("")?)
                .map_err(|_| at(format!("`{found}` is not UTF-8 text")))?;
            self.add(ctx, root, &found, &text)?;
        }
        self.modules.push(Module {
            asset: asset.clone(),
            text: text.to_owned(),
        });
        Ok(())
    }
}

/// `base/a/b/c.wesl`, `.wgsl`, then `base/a/b.wesl`, ...: the files a module
/// path may name, longest first (its last segments may be items).
fn module_candidates(
    base: &str,
    segments: &[String],
) -> Result<Vec<AssetPath>, crate::asset_path::AssetPathError> {
    let mut out = Vec::new();
    for len in (1..=segments.len()).rev() {
        let path = segments[..len].join("/");
        let path = if base.is_empty() {
            path
        } else {
            format!("{base}/{path}")
        };
        for ext in ["wesl", "wgsl"] {
            out.push(AssetPath::new(&format!("{path}.{ext}"))?);
        }
    }
    Ok(out)
}

/// One import statement.
#[derive(Debug, PartialEq)]
pub(super) struct Import {
    /// 1-based line of the statement.
    line: usize,
    /// As written, for messages.
    written: String,
    target: Target,
}

#[derive(Debug, PartialEq)]
enum Target {
    /// A file by asset path (naga_oil's quoted `#import`).
    Asset(String),
    /// A module of this tree: segments after `package` or `super`s.
    Module {
        dir: ModuleDir,
        segments: Vec<String>,
    },
    /// A module of another package, by the package's name.
    External(String),
}

#[derive(Debug, PartialEq)]
enum ModuleDir {
    /// `package::`: the shader root.
    Root,
    /// `super::` n times: n folders up from the importing file's module.
    Up(usize),
}

/// The imports of a shader's text: WESL `import ...;` statements (which may
/// span lines and hold `{...}` lists), and naga_oil `#import` lines.
pub(super) fn imports(text: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("#import") {
            let rest = rest.trim();
            let target = match rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                Some(path) => Target::Asset(path.to_owned()),
                None => Target::External(rest.split("::").next().unwrap_or(rest).trim().to_owned()),
            };
            out.push(Import {
                line: n + 1,
                written: trimmed.trim_end().to_owned(),
                target,
            });
            continue;
        }
        let Some(rest) = trimmed.strip_prefix("import") else {
            continue;
        };
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let mut statement = rest.to_owned();
        while !statement.contains(';') {
            match lines.next() {
                Some((_, more)) => {
                    statement.push(' ');
                    statement.push_str(more);
                }
                None => break,
            }
        }
        let body = statement.split(';').next().unwrap_or_default();
        for path in expand_paths(body) {
            let target = match path.first().map(String::as_str) {
                Some("package") => Target::Module {
                    dir: ModuleDir::Root,
                    segments: path[1..].to_vec(),
                },
                Some("super") => {
                    let ups = path.iter().take_while(|s| *s == "super").count();
                    Target::Module {
                        dir: ModuleDir::Up(ups),
                        segments: path[ups..].to_vec(),
                    }
                }
                Some(name) => Target::External(name.to_owned()),
                None => continue,
            };
            if matches!(&target, Target::Module { segments, .. } if segments.is_empty()) {
                continue;
            }
            out.push(Import {
                line: n + 1,
                written: format!("import {};", path.join("::")),
                target,
            });
        }
    }
    out
}

/// Every full path of an import body: `a::{b, c::{d, e as f}}` gives
/// `a::b`, `a::c::d`, `a::c::e` (aliases dropped).
fn expand_paths(body: &str) -> Vec<Vec<String>> {
    fn parse(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let s = s.trim();
        if let Some(open) = s.find('{') {
            let head: Vec<String> = segments(&s[..open]);
            let inner = s[open + 1..]
                .rsplit_once('}')
                .map_or(&s[open + 1..], |(i, _)| i);
            let mut prefix = prefix.to_vec();
            prefix.extend(head);
            for item in split_top_level(inner) {
                parse(item, &prefix, out);
            }
        } else {
            let s = s.split(" as ").next().unwrap_or(s);
            let mut path = prefix.to_vec();
            path.extend(segments(s));
            if !path.is_empty() {
                out.push(path);
            }
        }
    }
    fn segments(s: &str) -> Vec<String> {
        s.split("::")
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
            .collect()
    }
    let mut out = Vec::new();
    parse(body, &[], &mut out);
    out
}

/// `a, b::{c, d}, e` split at the commas outside braces.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|x| !x.trim().is_empty()).collect()
}

/// What preprocessor a text uses, if any: naga parses plain WGSL only.
pub(crate) fn preprocessor(text: &str) -> Option<&'static str> {
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#if") || t.starts_with("#else") || t.starts_with("#define ") {
            return Some("a `#` preprocessor directive");
        }
        if t.starts_with("#include") {
            return Some("`#include` (expanded only with `includes = true`)");
        }
        if t.starts_with("@if") || t.starts_with("@elif") || t.starts_with("@else") {
            return Some("WESL conditional compilation (`@if`)");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(dir: ModuleDir, segments: &[&str]) -> Target {
        Target::Module {
            dir,
            segments: segments.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn wesl_and_naga_oil_imports_are_found_with_their_lines() {
        let text = "\
import package::lib::noise::{fbm, value as v};
// import commented::out;
import super::super::common::{Light, util::{mix3}};
import bevy_pbr::render::{
    forward_io::VertexOutput,
    mesh_bindings::mesh,
};
#import \"shaders/shared.wgsl\"
#import bevy_sprite::mesh2d_vertex_output
let important = 1;
";
        let found: Vec<(usize, Target)> = imports(text)
            .into_iter()
            .map(|i| (i.line, i.target))
            .collect();
        assert_eq!(
            found,
            vec![
                (1, module(ModuleDir::Root, &["lib", "noise", "fbm"])),
                (1, module(ModuleDir::Root, &["lib", "noise", "value"])),
                (3, module(ModuleDir::Up(2), &["common", "Light"])),
                (3, module(ModuleDir::Up(2), &["common", "util", "mix3"])),
                (4, Target::External("bevy_pbr".into())),
                (4, Target::External("bevy_pbr".into())),
                (8, Target::Asset("shaders/shared.wgsl".into())),
                (9, Target::External("bevy_sprite".into())),
            ]
        );
    }

    #[test]
    fn a_module_path_names_files_longest_first() {
        let names: Vec<String> =
            module_candidates("shaders", &["lib".into(), "noise".into(), "fbm".into()])
                .unwrap()
                .iter()
                .map(|a| a.to_string())
                .collect();
        assert_eq!(
            names,
            [
                "shaders/lib/noise/fbm.wesl",
                "shaders/lib/noise/fbm.wgsl",
                "shaders/lib/noise.wesl",
                "shaders/lib/noise.wgsl",
                "shaders/lib.wesl",
                "shaders/lib.wgsl",
            ]
        );
    }
}
