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
//!
//! `capabilities = ["float64", ...]` lets the shader use naga capabilities
//! beyond its defaults (validation refuses the others). `targets = ["spirv",
//! "msl", "glsl", "glsl-es"]` translates the validated shader with naga's
//! back ends (feature `shader-targets`; see `translate.rs`): outputs
//! `spirv`, `msl`, and `glsl.<entry point>` / `glsl-es.<entry point>`. A
//! target whose back end cannot write a capability asked for, or cannot take
//! the shader, fails the step by name.
//!
//! Modules: `imports.rs` (what an import is, which files it may name, the
//! shader linked with its modules), `validate.rs` (naga: parse, validate,
//! reflect), `translate.rs` (naga's back ends).

#[cfg(feature = "shader-packages")]
mod blocks;
#[cfg(feature = "shader-packages")]
mod compose;
mod imports;
mod packages;
#[cfg(feature = "shader-targets")]
mod translate;
#[cfg(feature = "shaders")]
mod validate;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::text::{self, yes};
use super::{Context, ProcessError, Processor};
#[cfg(feature = "shader-packages")]
use crate::processor::Unsettled;
use imports::{Linked, preprocessor};

/// Resolves imports, validates, reflects.
#[derive(Debug, Clone, Copy)]
pub struct Shader;

/// Settings of the `shader` processor (its module docs list the keys).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ShaderSettings {
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
    /// naga capabilities the shader may use beyond the defaults.
    #[serde(default)]
    #[cfg_attr(not(feature = "shaders"), allow(dead_code))]
    capabilities: Vec<String>,
    /// Languages to translate to.
    #[serde(default)]
    targets: Vec<Translation>,
    /// A set of `features` and `constants` a renderer uses (Bevy's).
    #[serde(default)]
    preset: Option<Preset>,
    /// WESL features on for conditional translation (`@if`); others are off.
    #[serde(default)]
    features: Vec<String>,
    /// Bevy's `constants` module: numeric shader definitions.
    #[serde(default)]
    constants: BTreeMap<String, Constant>,
}

/// A value of the `constants` module.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Constant {
    /// An integer: `const NAME = 3;`.
    Int(i64),
    /// A float: `const NAME = 0.5;`.
    Float(f64),
    /// A bool: `const NAME = true;`.
    Bool(bool),
}

impl Constant {
    fn wgsl(&self) -> String {
        match self {
            Constant::Int(v) => v.to_string(),
            Constant::Float(v) => format!("{v:?}"),
            Constant::Bool(v) => v.to_string(),
        }
    }
}

/// `preset`: the features and constants of a renderer's usual pipeline, so
/// a material shader validates as that renderer would compose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// A Bevy 3D material (`bevy_pbr`) in the forward pass: a mesh with
    /// positions, normals, UVs and tangents, perspective view, tonemapping
    /// in the shader, storage buffers available.
    BevyMesh,
    /// A Bevy 2D material (`bevy_sprite_render`'s `Material2d`).
    BevyMesh2d,
}

impl Preset {
    /// Its features on.
    fn features(self) -> Vec<&'static str> {
        let mut on = vec![
            "VERTEX_POSITIONS",
            "VERTEX_NORMALS",
            "VERTEX_UVS",
            "VERTEX_UVS_A",
            "VERTEX_TANGENTS",
            "VERTEX_OUTPUT_INSTANCE_INDEX",
            "VIEW_PROJECTION_PERSPECTIVE",
            "TONEMAP_IN_SHADER",
            "TONEMAP_METHOD_TONY_MC_MAPFACE",
            "AVAILABLE_STORAGE_BUFFER_BINDINGS__GE_3",
            "AVAILABLE_STORAGE_BUFFER_BINDINGS__GE_6",
        ];
        if self == Preset::BevyMesh {
            on.push("MESH_PIPELINE");
        }
        on
    }

    /// Its `constants`: Bevy's values for the names its shaders use.
    fn constants(self) -> &'static [(&'static str, i64)] {
        match self {
            Preset::BevyMesh => &[
                ("MATERIAL_BIND_GROUP", 3),
                ("MAX_DIRECTIONAL_LIGHTS", 10),
                ("MAX_CASCADES_PER_LIGHT", 4),
                ("MAX_RECT_LIGHTS", 8),
                ("TONEMAPPING_LUT_TEXTURE_BINDING_INDEX", 18),
                ("TONEMAPPING_LUT_SAMPLER_BINDING_INDEX", 19),
                ("PER_OBJECT_BUFFER_BATCH_SIZE", 1),
            ],
            Preset::BevyMesh2d => &[
                ("MATERIAL_BIND_GROUP", 2),
                ("TONEMAPPING_LUT_TEXTURE_BINDING_INDEX", 1),
                ("TONEMAPPING_LUT_SAMPLER_BINDING_INDEX", 2),
                ("PER_OBJECT_BUFFER_BATCH_SIZE", 1),
            ],
        }
    }
}

impl ShaderSettings {
    /// The features on: the preset's and the rule's.
    #[cfg_attr(not(feature = "shader-packages"), allow(dead_code))]
    fn features(&self) -> BTreeSet<String> {
        let preset = self.preset.map(Preset::features).unwrap_or_default();
        preset
            .into_iter()
            .map(str::to_owned)
            .chain(self.features.iter().cloned())
            .collect()
    }

    /// The `constants` module's values: the preset's, then the rule's.
    #[cfg_attr(not(feature = "shader-packages"), allow(dead_code))]
    fn constants(&self) -> BTreeMap<String, String> {
        let preset = self.preset.map_or(&[][..], Preset::constants);
        let mut out: BTreeMap<String, String> = preset
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (k, v) in &self.constants {
            out.insert(k.clone(), v.wgsl());
        }
        out
    }
}

/// One translated output: label, kind, bytes.
type Translated = (String, &'static str, Vec<u8>);

/// A language naga translates a validated shader to (`targets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Translation {
    /// SPIR-V 1.0 (Vulkan), output `spirv` (kind `bytes`, little-endian words).
    Spirv,
    /// Metal Shading Language 2.0, output `msl` (kind `text`).
    Msl,
    /// GLSL 4.50 core, one output per entry point: `glsl.<entry>`.
    Glsl,
    /// GLSL ES 3.00 for WebGL2, one output per entry point: `glsl-es.<entry>`.
    GlslEs,
}

impl Translation {
    /// As written in `targets`, and the output's label (GLSL's gain
    /// `.<entry point>`).
    pub fn name(self) -> &'static str {
        match self {
            Translation::Spirv => "spirv",
            Translation::Msl => "msl",
            Translation::Glsl => "glsl",
            Translation::GlslEs => "glsl-es",
        }
    }
}

/// The label of the reflection output.
pub const REFLECTION_LABEL: &str = "reflection";

impl Processor for Shader {
    type Settings = ShaderSettings;

    fn name(&self) -> &str {
        "shader"
    }

    /// 2: the source's kind is `shader` (was `text`).
    fn version(&self) -> u32 {
        2
    }

    fn process(&self, ctx: &mut Context<'_>, settings: ShaderSettings) -> Result<(), ProcessError> {
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
        let hash_preprocessor = linked
            .modules
            .iter()
            .find_map(|m| preprocessor(&m.text).filter(|w| !w.contains("@if")).map(|w| (m, w)));
        // Imports of crates, `@if`, or Bevy's `constants::` written inline
        // need WESL's linker.
        let composed = !linked.external.is_empty()
            || linked
                .modules
                .iter()
                .any(|m| preprocessor(&m.text).is_some() || m.text.contains("constants::"));
        let crates: Vec<&String> = linked.external.iter().filter(|e| *e != "constants").collect();
        let mut packages = None;
        let blocker = if !settings.validate {
            Some("`validate = false`".to_owned())
        } else if let Some((m, what)) = hash_preprocessor {
            Some(format!("`{}` uses {what}", m.asset))
        } else if let Some(why) = (!crates.is_empty())
            .then(|| match packages::of(ctx.package_dir()) {
                Ok(found) => {
                    let missing = crates.iter().find(|c| !found.has(c));
                    packages = Some(found);
                    missing.map(|name| {
                        format!(
                            "it imports `{name}`, which is not a crate this package depends on \
                             (a crate's shader modules are found under its `src/`)"
                        )
                    })
                }
                Err(e) => Some(e),
            })
            .flatten()
        {
            Some(why)
        } else if !cfg!(feature = "shaders") {
            Some("assets-build was built without its `shaders` feature".to_owned())
        } else if composed && !cfg!(feature = "shader-packages") {
            Some(
                "linking it with crates' modules, `@if` or `constants` needs assets-build's \
                 `shader-packages` feature (`cargo assets` has it)"
                    .to_owned(),
            )
        } else {
            None
        };
        let translated = match blocker {
            Some(why) if !settings.targets.is_empty() => {
                return Err(ProcessError::msg(format!(
                    "`targets` needs the shader validated, and it cannot be: {why}"
                )));
            }
            Some(why) => {
                reflection.not_validated_because = Some(why);
                Vec::new()
            }
            None => compile(
                ctx,
                &linked,
                composed.then_some(packages.as_deref()),
                &settings,
                &mut reflection,
            )?,
        };
        ctx.emit("shader", source.into_bytes())?;
        let json = serde_json::to_vec_pretty(&reflection).expect("reflection serializes");
        ctx.emit_labeled(REFLECTION_LABEL, "text", json)?;
        for (label, kind, bytes) in translated {
            ctx.emit_labeled(&label, kind, bytes)?;
        }
        Ok(())
    }
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

/// Validates (and reflects) the linked shader, and translates it to each
/// of `targets`: the translated outputs.
/// A shader that imports other crates' modules or uses `@if` (`composed`,
/// with the crates of the package's graph when it imports any) is linked
/// by WESL's linker first (`compose.rs`); the others are joined as they are.
#[cfg(feature = "shaders")]
fn compile(
    ctx: &mut Context<'_>,
    linked: &Linked,
    composed: Option<Option<&packages::Packages>>,
    settings: &ShaderSettings,
    reflection: &mut Reflection,
) -> Result<Vec<Translated>, ProcessError> {
    let capabilities = validate::capabilities(&settings.capabilities)?;
    let (module, info) = match composed {
        #[cfg(feature = "shader-packages")]
        Some(packages) => composed_module(ctx, linked, packages, settings, capabilities, reflection)?,
        // Without the feature the blocker stops such a shader before here.
        #[cfg(not(feature = "shader-packages"))]
        Some(_) => {
            let _ = ctx;
            return Err(ProcessError::msg(
                "linking with crates' modules needs assets-build's `shader-packages` feature",
            ));
        }
        None => validate::validate(linked, capabilities, reflection)?,
    };
    #[cfg(feature = "shader-targets")]
    {
        let mut out = Vec::new();
        for &target in &settings.targets {
            let missing = capabilities - translate::supported(target);
            if !missing.is_empty() {
                return Err(ProcessError::msg(format!(
                    "`targets` holds `{}`, which cannot use the capabilities {}; \
                     remove them from `capabilities` or the target from `targets`",
                    target.name(),
                    validate::capability_names(missing)
                )));
            }
            out.extend(translate::translate(&module, &info, target)?);
        }
        Ok(out)
    }
    #[cfg(not(feature = "shader-targets"))]
    {
        let _ = (module, info);
        match settings.targets.first() {
            Some(t) => Err(without_feature("shader-targets", t.name())),
            None => Ok(Vec::new()),
        }
    }
}

/// Links the shader with the crates' modules (`compose.rs`), then validates
/// what the linker made, naming places and items by their sources.
#[cfg(feature = "shader-packages")]
fn composed_module(
    ctx: &mut Context<'_>,
    linked: &Linked,
    packages: Option<&packages::Packages>,
    settings: &ShaderSettings,
    capabilities: naga::valid::Capabilities,
    reflection: &mut Reflection,
) -> Result<(naga::Module, naga::valid::ModuleInfo), ProcessError> {
    let own = ctx.asset().clone();
    let started = std::time::SystemTime::now();
    let (read, result) = compose::compose(
        linked,
        &settings.root,
        packages,
        &settings.features(),
        &settings.constants(),
    );
    // What was read or looked for is an input even when linking
    // failed: fixing the module reruns this shader.
    let read: Vec<&std::path::Path> = read.iter().map(|p| p.as_path()).collect();
    ctx.record_tool_inputs(&read, started, Unsettled::Record)?;
    if let Some(p) = packages {
        ctx.record_package_files(&[&p.lockfile])?;
    }
    let composed = result.map_err(|e| {
        // Our one namespace's `package::<crate>` is the crate's path.
        let e = e.replace("`package::", "`").replace(" package::", " ");
        let hint = if e.contains("has no declaration") {
            "; an item under `@if` exists only with its features on \
             (`features = [...]` on the rule, or a `preset`)"
        } else {
            ""
        };
        ProcessError::msg(format!(
            "{own}: linking it with the modules it imports failed: {e}{hint}"
        ))
    })?;
    let checked = validate::check(
        &composed.wgsl,
        &|offset| composed.locate(offset),
        capabilities,
        reflection,
    )
    .map_err(|e| ProcessError::msg(composed.readable(&e.to_string())))?;
    for b in &mut reflection.bindings {
        b.name = composed.readable(&b.name);
    }
    Ok(checked)
}

#[cfg(not(feature = "shaders"))]
fn compile(
    _: &mut Context<'_>,
    _: &Linked,
    _: Option<Option<&packages::Packages>>,
    settings: &ShaderSettings,
    reflection: &mut Reflection,
) -> Result<Vec<Translated>, ProcessError> {
    if let Some(t) = settings.targets.first() {
        return Err(without_feature("shader-targets", t.name()));
    }
    reflection.not_validated_because =
        Some("assets-build was built without its `shaders` feature".into());
    Ok(Vec::new())
}

/// The error for a setting that needs a cargo feature this build lacks.
#[cfg(not(feature = "shader-targets"))]
fn without_feature(feature: &str, target: &str) -> ProcessError {
    ProcessError::msg(format!(
        "`targets` holds `{target}`, and this build of assets-build lacks its `{feature}` feature; \
         add `features = [\"{feature}\"]` to assets-build in [build-dependencies] (`cargo assets` has it)"
    ))
}

/// What the fuzz target `shader_imports` runs: the import scan and the
/// preprocessor check on a shader's text (see [`crate::fuzzing`]).
#[cfg(fuzzing)]
pub(crate) fn scan(text: &str) {
    let _ = imports::imports(text);
    let _ = preprocessor(text);
    #[cfg(feature = "shader-packages")]
    {
        let on: BTreeSet<String> = ["A".to_owned(), "B".to_owned()].into();
        if let Ok(decided) = blocks::decide(text, &on) {
            assert_eq!(decided.lines().count(), text.lines().count());
        }
    }
}
