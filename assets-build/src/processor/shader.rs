//! `shader`: WGSL and WESL sources, the default for `.wgsl` and `.wesl`.
//! Imports are dependencies found while building, and each shader is
//! validated with naga (feature `shaders`, on by default) at build time,
//! where an error costs a rebuild instead of a crash at pipeline creation.
//!
//! The output (kind `shader`: `include_parcel!` gives it a `ShaderId`,
//! `Parcel::shader` reads it) is the shader's text, as the `text` processor makes it
//! (normalized; `#include "path"` expanded when `includes = true`), imports
//! left as written: a game links modules at run time (WESL's linker,
//! naga_oil), from the parcel, where the modules are resources too.
//!
//! What counts as an import:
//!
//! | form | resolved to |
//! |---|---|
//! | WESL `import package::a::b::item;` (also `{...}` lists, `as`) | `a/b.wesl` or `a/b.wgsl` under the shader root (`root`, default the asset root): the longest path of the statement that names a file, so `a/b/item.wesl` first |
//! | WESL `import super::m::item;` | the same, from the importing file's folder (one folder up per `super`) |
//! | naga_oil `#import "path/file.wgsl"` | that asset path |
//! | WESL `import other_crate::...`, naga_oil `#import a::b` | a module of another package: not in this tree, recorded in the reflection as external |
//!
//! Every file looked for and not found is recorded as absent, so creating
//! it rebuilds the importer; an import that resolves to nothing fails the
//! step with the places looked at. An imported module is used through its
//! own step's output (so editing it rebuilds exactly its importers, and
//! `cargo assets rdeps` lists them).
//!
//! Validation parses the shader with the modules it imports, each once,
//! dependencies first, import lines blanked (what a WESL linker produces
//! when names do not clash), and runs naga's validator. An error names the
//! file (the importer or the module), line and column of the original
//! source, with naga's message. A shader that imports another package's
//! modules, or uses a preprocessor (`#ifdef`, `#define`, WESL `@if`),
//! cannot be validated alone: it is built, and its reflection says why it
//! was not validated. `validate = false` skips validation.
//!
//! Beside the text, the `reflection` output (kind `text`, JSON) lists the
//! entry points (stage, workgroup size), the bindings (group, binding,
//! name, what they hold), the modules imported and the external ones.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::text::{self, yes};
use super::{Context, ProcessError, Processor};
use crate::asset_path::AssetPath;
use crate::manifest::{Settings, SettingsError};

/// Resolves imports, validates, reflects.
#[derive(Debug, Clone, Copy)]
pub struct Shader;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ShaderSettings {
    #[serde(default = "yes")]
    normalize: bool,
    #[serde(default)]
    includes: bool,
    #[serde(default)]
    include_dirs: Vec<String>,
    /// The folder `package::` starts from, relative to the asset root.
    #[serde(default)]
    root: String,
    #[serde(default = "yes")]
    validate: bool,
}

/// The label of the reflection output.
pub const REFLECTION_LABEL: &str = "reflection";

impl Processor for Shader {
    fn name(&self) -> &str {
        "shader"
    }

    /// 2: the source's kind is `shader` (was `text`).
    fn version(&self) -> u32 {
        2
    }

    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError> {
        settings.get::<ShaderSettings>().map(drop)
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let settings: ShaderSettings = ctx.settings()?;
        let source = text::prepare(
            ctx,
            settings.normalize,
            settings.includes,
            &settings.include_dirs,
        )?;
        let own = ctx.asset().clone();
        let mut linked = Linked::default();
        linked.add(ctx, &settings.root, &own, &source)?;
        let mut reflection = Reflection {
            imports: linked
                .modules
                .iter()
                .filter(|m| m.asset != own)
                .map(|m| m.asset.to_string())
                .collect(),
            external: linked.external.clone(),
            validated: false,
            not_validated_because: None,
            entry_points: Vec::new(),
            bindings: Vec::new(),
        };
        let blocker = if !settings.validate {
            Some("`validate = false`".to_owned())
        } else if let Some(name) = linked.external.first() {
            Some(format!("it imports `{name}`, a module of another package"))
        } else {
            linked.modules.iter().find_map(|m| {
                preprocessor(&m.text).map(|what| format!("`{}` uses {what}", m.asset))
            })
        };
        match blocker {
            Some(why) => reflection.not_validated_because = Some(why),
            None => validate(&linked, &mut reflection)?,
        }
        ctx.emit("shader", source.into_bytes())?;
        let json = serde_json::to_vec_pretty(&reflection).expect("reflection serializes");
        ctx.emit_labeled(REFLECTION_LABEL, "text", json)
    }
}

/// A shader and the modules it imports, each once, dependencies first.
#[derive(Default)]
struct Linked {
    modules: Vec<Module>,
    seen: BTreeSet<AssetPath>,
    external: Vec<String>,
}

struct Module {
    asset: AssetPath,
    text: String,
}

impl Linked {
    /// Adds `asset` (whose text is `text`) after the modules it imports.
    fn add(
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
struct Import {
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
fn imports(text: &str) -> Vec<Import> {
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
fn preprocessor(text: &str) -> Option<&'static str> {
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

/// The reflection output.
#[derive(Debug, Serialize)]
struct Reflection {
    /// Modules of this tree it imports (transitively).
    imports: Vec<String>,
    /// Packages whose modules it imports.
    external: Vec<String>,
    /// Whether naga validated it.
    validated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_validated_because: Option<String>,
    entry_points: Vec<EntryPoint>,
    bindings: Vec<Binding>,
}

#[derive(Debug, Serialize)]
struct EntryPoint {
    name: String,
    stage: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    workgroup_size: Option<[u32; 3]>,
}

#[derive(Debug, Serialize)]
struct Binding {
    group: u32,
    binding: u32,
    name: String,
    /// `uniform`, `storage` (`read` or `read_write`), `texture`, `sampler`...
    holds: String,
}

#[cfg(feature = "shaders")]
/// The linked source: every module's text, import lines blanked (so lines
/// keep their numbers), and where each module starts.
fn link(linked: &Linked) -> (String, Vec<(usize, &AssetPath)>) {
    let mut source = String::new();
    let mut starts = Vec::new();
    for m in &linked.modules {
        starts.push((source.len(), &m.asset));
        let mut in_import = false;
        for line in m.text.split_inclusive('\n') {
            let t = line.trim_start();
            let import = in_import
                || t.starts_with("#import")
                || t.starts_with("#define_import_path")
                || (t.starts_with("import") && t[6..].starts_with(char::is_whitespace));
            if import {
                in_import = !line.contains(';') && !t.starts_with('#');
                source.push_str(if line.ends_with('\n') { "\n" } else { "" });
            } else {
                source.push_str(line);
            }
        }
        if !source.ends_with('\n') {
            source.push('\n');
        }
    }
    (source, starts)
}

#[cfg(feature = "shaders")]
/// `file:line:col` of byte `offset` of the linked source.
fn locate(source: &str, starts: &[(usize, &AssetPath)], offset: usize) -> String {
    let i = starts
        .partition_point(|(s, _)| *s <= offset)
        .saturating_sub(1);
    let Some(&(start, asset)) = starts.get(i) else {
        return "?".into();
    };
    let before = &source[start..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |n| before.len() - n - 1)
        + 1;
    format!("{asset}:{line}:{col}")
}

#[cfg(feature = "shaders")]
fn validate(linked: &Linked, reflection: &mut Reflection) -> Result<(), ProcessError> {
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    let (source, starts) = link(linked);
    let module = naga::front::wgsl::parse_str(&source).map_err(|e| {
        let at = e
            .labels()
            .next()
            .and_then(|(span, _)| span.to_range())
            .map_or_else(|| "?".into(), |r| locate(&source, &starts, r.start));
        let labels: Vec<String> = e
            .labels()
            .filter(|(_, l)| !l.is_empty())
            .map(|(_, l)| l.to_owned())
            .collect();
        let detail = if labels.is_empty() {
            String::new()
        } else {
            format!(" ({})", labels.join("; "))
        };
        ProcessError::msg(format!("{at}: {}{detail}", e.message()))
    })?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .map_err(|e| {
            let at = e
                .spans()
                .next()
                .and_then(|(span, _)| span.to_range())
                .map_or_else(|| "?".into(), |r| locate(&source, &starts, r.start));
            let mut message = e.as_inner().to_string();
            let mut inner: Option<&dyn std::error::Error> = std::error::Error::source(e.as_inner());
            while let Some(cause) = inner {
                message.push_str(&format!(": {cause}"));
                inner = cause.source();
            }
            ProcessError::msg(format!("{at}: {message}"))
        })?;
    drop(info);
    reflection.validated = true;
    for ep in &module.entry_points {
        let stage = match ep.stage {
            naga::ShaderStage::Vertex => "vertex",
            naga::ShaderStage::Fragment => "fragment",
            naga::ShaderStage::Compute => "compute",
            _ => "other",
        };
        reflection.entry_points.push(EntryPoint {
            name: ep.name.clone(),
            stage,
            workgroup_size: (ep.stage == naga::ShaderStage::Compute).then_some(ep.workgroup_size),
        });
    }
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        let holds = match var.space {
            naga::AddressSpace::Uniform => "uniform".to_owned(),
            naga::AddressSpace::Storage { access } => {
                if access.contains(naga::StorageAccess::STORE) {
                    "storage read_write".to_owned()
                } else {
                    "storage read".to_owned()
                }
            }
            _ => match &module.types[var.ty].inner {
                naga::TypeInner::Image { dim, class, .. } => {
                    let class = match class {
                        naga::ImageClass::Depth { .. } => "depth texture",
                        naga::ImageClass::Storage { .. } => "storage texture",
                        _ => "texture",
                    };
                    format!("{class} {dim:?}").to_lowercase()
                }
                naga::TypeInner::Sampler { comparison: true } => "comparison sampler".to_owned(),
                naga::TypeInner::Sampler { comparison: false } => "sampler".to_owned(),
                naga::TypeInner::BindingArray { .. } => "binding array".to_owned(),
                other => format!("{other:?}")
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or("")
                    .to_lowercase(),
            },
        };
        reflection.bindings.push(Binding {
            group: binding.group,
            binding: binding.binding,
            name: var.name.clone().unwrap_or_default(),
            holds,
        });
    }
    reflection.bindings.sort_by_key(|b| (b.group, b.binding));
    Ok(())
}

#[cfg(not(feature = "shaders"))]
fn validate(_: &Linked, reflection: &mut Reflection) -> Result<(), ProcessError> {
    reflection.not_validated_because =
        Some("assets-build was built without its `shaders` feature".into());
    Ok(())
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
