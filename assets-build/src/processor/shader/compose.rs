//! Composing a shader as Bevy does before naga sees it: WESL's linker (the
//! `wesl` crate) joins the shader with the modules it imports, of this tree
//! and of the crates the package depends on (`packages.rs`), mangling
//! their names apart, with conditional translation (`@if`) decided for the
//! rule's `features` (groups first, by `blocks.rs`) and Bevy's virtual
//! `constants` module made from the rule's `constants`.
//!
//! All modules are put in one namespace before linking: this tree's at
//! their asset paths, a crate's under its name, `constants` alone. Each
//! module's text is rewritten so its paths name that namespace (`package::`
//! of a crate's module is that crate, `bevy_render::` anywhere is the crate
//! `bevy_render`), because the linker release our toolchain builds would
//! otherwise load a crate imported from another crate a second time, under
//! another name, and the two copies' types would not match. Rewriting keeps
//! every line where it was.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use wesl::syntax::{ModulePath, PathOrigin};
use wesl::{ResolveError, SourceMap};

use super::blocks;
use super::imports::Linked;
use super::packages::Packages;

/// The name of Bevy's virtual module of numeric shader definitions.
const CONSTANTS: &str = "constants";

/// What composing gives.
pub(super) struct Composed {
    /// The linked WGSL.
    pub(super) wgsl: String,
    sourcemap: Option<wesl::BasicSourceMap>,
    /// Each module's display name and its text as linked.
    modules: HashMap<ModulePath, (String, String)>,
    root: ModulePath,
}

/// Links `linked`'s shader (its last module) with the modules it imports;
/// the crates' module files read or looked for, whether or not it links.
pub(super) fn compose(
    linked: &Linked,
    root_dir: &str,
    packages: Option<&Packages>,
    features: &BTreeSet<String>,
    constants: &BTreeMap<String, String>,
) -> (Vec<PathBuf>, Result<Composed, String>) {
    let Some(own) = linked.modules.last() else {
        return (Vec::new(), Err("no shader to compose".into()));
    };
    let root = ModulePath {
        origin: PathOrigin::Absolute,
        components: without_extension(own.asset.as_str()),
    };
    let resolver = Resolver {
        linked,
        root_dir,
        packages,
        features,
        constants: constants
            .iter()
            .map(|(name, value)| format!("const {name} = {value};\n"))
            .collect(),
        read: RefCell::default(),
        modules: RefCell::default(),
    };
    let mut options = wesl::CompileOptions {
        imports: true,
        condcomp: true,
        validate: false,
        ..Default::default()
    };
    for f in features {
        options.features.flags.insert(f.clone(), wesl::Feature::Enable);
    }
    let result = wesl::compile_sourcemap(&root, &resolver, &wesl::EscapeMangler, &options);
    let read = resolver.read.take();
    let composed = result
        .map(|result| Composed {
            wgsl: result.to_string(),
            sourcemap: result.sourcemap,
            modules: resolver.modules.into_inner(),
            root,
        })
        .map_err(|e| plain(&e.to_string()));
    (read, composed)
}

impl Composed {
    /// Where byte `offset` of the composed WGSL came from: the module's file
    /// and the line of the declaration holding it, with that code.
    pub(super) fn locate(&self, offset: usize) -> String {
        let offset = offset.min(self.wgsl.len());
        let line_start = self.wgsl[..offset].rfind('\n').map_or(0, |n| n + 1);
        let line_end = self.wgsl[offset..]
            .find('\n')
            .map_or(self.wgsl.len(), |n| offset + n);
        let code = self.wgsl[line_start..line_end].trim();
        let decl = self.wgsl[..line_end]
            .lines()
            .rev()
            .find_map(declared_name)
            .unwrap_or_default();
        let (module, item) = self
            .sourcemap
            .as_ref()
            .and_then(|m| m.get_decl(decl))
            .map_or((&self.root, decl), |(m, i)| (m, i));
        let Some((name, text)) = self.modules.get(module) else {
            return format!("`{decl}` (`{code}`)");
        };
        // The declaration's line, or the line of the code itself when it
        // reads the same in the source (no imported names in it).
        let lines: Vec<&str> = text.lines().collect();
        let line = lines
            .iter()
            .position(|l| declared_name(l) == Some(item))
            .map(|at| {
                let exact = lines[at..].iter().position(|l| l.trim() == code);
                at + exact.unwrap_or(0) + 1
            })
            .map_or(String::new(), |n| format!(":{n}"));
        format!("{name}{line}: in `{item}` (`{code}`)")
    }
}

impl Composed {
    /// `text` with every mangled name the linker gave a module's item
    /// written as its path instead: `bevy_pbr::render::mesh_view_bindings::view`.
    pub(super) fn readable(&self, text: &str) -> String {
        let Some(map) = &self.sourcemap else {
            return text.to_owned();
        };
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
            out.push_str(&rest[..start]);
            rest = &rest[start..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            match map.get_decl(word) {
                Some((module, item)) if word != item => {
                    for c in &module.components {
                        out.push_str(c);
                        out.push_str("::");
                    }
                    out.push_str(item);
                }
                _ => out.push_str(word),
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }
}

/// The name a line declares, if it starts a module-scope declaration
/// (which the linker writes, and Bevy's style keeps, unindented).
fn declared_name(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '<' || c == '>'))
        .filter(|w| !w.is_empty());
    while let Some(w) = words.next() {
        let keyword = w.split('<').next().unwrap_or(w);
        if matches!(keyword, "fn" | "struct" | "var" | "const" | "override" | "alias") {
            return words.next().map(|n| n.split('<').next().unwrap_or(n));
        }
        if !line.trim_start().starts_with('@') {
            return None;
        }
    }
    None
}

/// `a/b/c.wesl` as the module path `a::b::c`.
fn without_extension(asset: &str) -> Vec<String> {
    let stem = asset.rsplit_once('.').map_or(asset, |(s, _)| s);
    stem.split('/').map(str::to_owned).collect()
}

/// The linker's message without its terminal colours.
fn plain(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whose module a text is, for rewriting its paths.
#[derive(Clone, Copy)]
enum Owner<'a> {
    /// This tree's; `package::` is the shader root.
    Tree,
    /// A crate's; `package::` is the crate.
    Crate(&'a str),
}

struct Resolver<'a> {
    linked: &'a Linked,
    root_dir: &'a str,
    packages: Option<&'a Packages>,
    features: &'a BTreeSet<String>,
    constants: String,
    read: RefCell<Vec<PathBuf>>,
    modules: RefCell<HashMap<ModulePath, (String, String)>>,
}

impl Resolver<'_> {
    fn is_crate(&self, name: &str) -> bool {
        self.packages.is_some_and(|p| p.has(name))
    }

    /// `text` with its groups decided and its paths in the one namespace.
    fn prepare(&self, path: &ModulePath, name: String, text: &str, owner: Owner<'_>) -> Result<String, ResolveError> {
        let decided = blocks::decide(text, self.features)
            .map_err(|e| ResolveError::ModuleNotFound(path.clone(), format!("{name}: {e}")))?;
        let qualified = self.qualify(&decided, owner);
        self.modules
            .borrow_mut()
            .insert(path.clone(), (name, qualified.clone()));
        Ok(qualified)
    }

    /// Rewrites the head of every path: `package::` to its owner's place,
    /// a crate's or `constants`' name to theirs.
    fn qualify(&self, text: &str, owner: Owner<'_>) -> String {
        let mut out = String::with_capacity(text.len() + 64);
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            if !(b.is_ascii_alphabetic() || b == b'_') {
                i += 1;
                continue;
            }
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(bytes.len(), |n| i + n);
            let word = &text[i..end];
            let head = !text[..i].trim_end().ends_with("::")
                && !text[..i].ends_with('.')
                && text[end..].trim_start().starts_with("::");
            if head {
                let replacement = match (word, owner) {
                    ("package", Owner::Tree) if !self.root_dir.is_empty() => Some(format!(
                        "package::{}",
                        self.root_dir.trim_matches('/').replace('/', "::")
                    )),
                    ("package", Owner::Crate(name)) => Some(format!("package::{name}")),
                    (CONSTANTS, _) => Some(format!("package::{CONSTANTS}")),
                    (name, _) if name != "super" && name != "package" && self.is_crate(name) => {
                        Some(format!("package::{name}"))
                    }
                    _ => None,
                };
                if let Some(r) = replacement {
                    out.push_str(&text[copied..i]);
                    out.push_str(&r);
                    copied = end;
                }
            }
            i = end;
        }
        out.push_str(&text[copied..]);
        out
    }
}

impl wesl::Resolver for Resolver<'_> {
    fn resolve_source<'b>(&'b self, path: &ModulePath) -> Result<Cow<'b, str>, ResolveError> {
        let not_found = |why: String| ResolveError::ModuleNotFound(path.clone(), why);
        if !matches!(path.origin, PathOrigin::Absolute) {
            return Err(not_found("not a module of this tree or of a crate".into()));
        }
        let parts = &path.components;
        match parts.first().map(String::as_str) {
            Some(CONSTANTS) if parts.len() == 1 => {
                if self.constants.is_empty() {
                    return Err(not_found(
                        "Bevy's `constants` module is made from the rule's `constants` \
                         (or `preset`), and it sets none"
                            .into(),
                    ));
                }
                Ok(Cow::Owned(self.constants.clone()))
            }
            Some(name) if self.is_crate(name) => {
                let packages = self.packages.expect("a crate implies packages");
                let files = packages.module_files(name, &parts[1..]);
                for file in &files {
                    self.read.borrow_mut().push(file.clone());
                    if let Ok(text) = std::fs::read_to_string(file) {
                        let display = file.display().to_string();
                        return self.prepare(path, display, &text, Owner::Crate(name)).map(Cow::Owned);
                    }
                }
                Err(not_found(format!(
                    "crate `{name}` has no such module (looked for {})",
                    files
                        .iter()
                        .map(|f| format!("`{}`", f.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            _ => {
                let stem = parts.join("/");
                let module = self.linked.modules.iter().find(|m| {
                    let a = m.asset.as_str();
                    a.strip_suffix(".wesl").or_else(|| a.strip_suffix(".wgsl")) == Some(stem.as_str())
                });
                match module {
                    Some(m) => self
                        .prepare(path, m.asset.to_string(), &m.text, Owner::Tree)
                        .map(Cow::Owned),
                    None => Err(not_found(format!(
                        "no module `{stem}.wesl` or `.wgsl` in this tree, and no crate `{}` in the package's dependencies",
                        parts.first().map_or("", String::as_str)
                    ))),
                }
            }
        }
    }
}
