//! The expansion: find the parcel, read its table of contents, build the
//! module tree, and write it out as Rust. Errors are messages for
//! `compile_error!`, each saying what to do.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use proc_macro::{TokenStream, TokenTree};

use crate::names::RustName;
use crate::toc::{self, Entry};

/// The variable the build script sets to the directory holding its parcels.
const PARCELS_VAR: &str = "CARGO_ASSETS_PARCELS";
/// Set to `0` by a development build's script: map the parcel's file
/// instead of embedding it (see `assets_runtime::StaticParcel::mapped`).
const EMBED_VAR: &str = "CARGO_ASSETS_EMBED";

/// Constants the expansion declares itself, at the top of the module.
const RESERVED: &[&str] = &["PARCEL", "PATH"];

/// The parcel name: the macro's only argument, a plain string literal.
pub fn parcel_name(input: TokenStream) -> Result<String, String> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let usage = "expected a parcel name: include_parcel!(\"main\")";
    let [TokenTree::Literal(literal)] = tokens.as_slice() else {
        return Err(usage.into());
    };
    let text = literal.to_string();
    let name = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|n| !n.is_empty() && !n.contains('\\'))
        .ok_or(usage)?;
    Ok(name.to_owned())
}

/// The code for `include_parcel!(name)`, or every reason it cannot be
/// written (each becomes its own `compile_error!`, so one compile shows all).
pub fn expand(name: &str) -> Result<TokenStream, Vec<String>> {
    expand_one(name).map_err(|e| vec![e])?
}

fn expand_one(name: &str) -> Result<Result<TokenStream, Vec<String>>, String> {
    let dir = std::env::var(PARCELS_VAR).map_err(|_| {
        format!(
            "include_parcel!(\"{name}\") needs the parcels built by this package's build script, and none ran: \
             add `build.rs` containing `fn main() {{ assets_build::build().unwrap() }}` \
             and `assets-build` under [build-dependencies] in Cargo.toml"
        )
    })?;
    let dir = Path::new(&dir);
    let parcel = dir.join(format!("{name}.parcel"));
    let toc_path = dir.join(format!("{name}.parcel.toc"));
    let Ok(toc_text) = std::fs::read_to_string(&toc_path) else {
        return Err(missing(name, dir));
    };
    let parcel_len = std::fs::metadata(&parcel)
        .map_err(|e| format!("parcel `{name}` ({}) cannot be read: {e}", parcel.display()))?
        .len();
    let entries = toc::parse(&toc_text, parcel_len)
        .map_err(|e| format!("parcel `{name}` ({}): {e}", parcel.display()))?;
    let mut entries: Vec<Entry> = entries
        .into_iter()
        .filter(|e| !e.name.starts_with("atlas:"))
        .collect();
    // An alias's constant has the type its resource's would: the old
    // constant keeps compiling where it was used (deprecated).
    let kinds: std::collections::HashMap<String, String> = (entries.iter())
        .filter(|e| e.alias_of.is_none())
        .map(|e| (e.name.clone(), e.kind.clone()))
        .collect();
    for entry in &mut entries {
        if let Some(kind) = entry.alias_of.as_ref().and_then(|t| kinds.get(t)) {
            entry.kind = kind.clone();
        }
    }
    let mut root = Module::default();
    let mut collisions = Vec::new();
    for (entry, (names, constant)) in entries.iter().zip(constants(&entries)) {
        if let Err(e) = root.insert(name, entry, &names, constant) {
            collisions.push(e);
        }
    }
    if !collisions.is_empty() {
        return Ok(Err(collisions));
    }
    let parcel_path = parcel
        .to_str()
        .ok_or_else(|| format!("the parcel path `{}` is not UTF-8", parcel.display()))?;
    let toc = toc_path
        .to_str()
        .ok_or_else(|| format!("the path `{}` is not UTF-8", toc_path.display()))?;
    let module = module_name(name);
    // Embedded unless the build script says this build maps it: the
    // table of contents is tracked either way, so new names recompile.
    let mapped = std::env::var(EMBED_VAR).is_ok_and(|v| v == "0");
    let (how, parcel) = if mapped {
        (
            "mapped from its file",
            format!("::assets_runtime::StaticParcel::mapped({parcel_path:?})"),
        )
    } else {
        (
            "embedded",
            format!("::assets_runtime::StaticParcel::new(::core::include_bytes!({parcel_path:?}))"),
        )
    };
    let mut code = String::new();
    writeln!(
        code,
        "#[doc = \"The parcel `{name}`: {} resources, {how}.\"]\n\
         #[allow(dead_code)]\n\
         pub mod {module} {{\n\
         /// The parcel, validated on first use.\n\
         pub static PARCEL: ::assets_runtime::StaticParcel = {parcel};\n\
         /// Where the build script wrote the parcel: reopen it at run time to pick up changes.\n\
         pub const PATH: &str = {parcel_path:?};\n\
         // Make rustc track what this expansion read: the table of contents and the variable.\n\
         const _: &[u8] = ::core::include_bytes!({toc:?});\n\
         const _: ::core::option::Option<&str> = ::core::option_env!({PARCELS_VAR:?});\n\
         const _: ::core::option::Option<&str> = ::core::option_env!({EMBED_VAR:?});",
        entries.len()
    )
    .expect("writing to a String");
    root.write(&mut code, "");
    code.push_str("}\n");
    code.parse()
        .map(Ok)
        .map_err(|e| format!("include_parcel! generated invalid code ({e:?}); please report this"))
}

/// Each entry's name parts and constant. Files of one folder that would
/// share a constant (`logo.png`, `logo.svg`) each carry their extension
/// (`LOGO_PNG`, `LOGO_SVG`); sub-resources of one file (`one.lvl#a`) are
/// one file, so they do not count as sharing.
fn constants(entries: &[Entry]) -> Vec<(RustName, String)> {
    let names: Vec<RustName> = entries.iter().map(|e| RustName::new(&e.name)).collect();
    let mut files: BTreeMap<(&[String], String), Vec<&str>> = BTreeMap::new();
    for n in &names {
        let sharing = files.entry((&n.modules, n.constant(false))).or_default();
        if !sharing.contains(&n.file.as_str()) {
            sharing.push(&n.file);
        }
    }
    let shared: Vec<bool> = names
        .iter()
        .map(|n| files[&(n.modules.as_slice(), n.constant(false))].len() > 1)
        .collect();
    names
        .into_iter()
        .zip(shared)
        .map(|(n, shared)| {
            let constant = n.constant(shared);
            (n, constant)
        })
        .collect()
}

/// The error for a parcel that does not exist, listing the ones that do.
fn missing(name: &str, dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".parcel")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    if names.is_empty() {
        format!("no parcel named `{name}`: the build script wrote no parcels")
    } else {
        format!(
            "no parcel named `{name}`; this package's parcels are: {} (see [package.metadata.assets.parcels] in Cargo.toml)",
            names.join(", ")
        )
    }
}

fn module_name(parcel: &str) -> String {
    RustName::new(&format!("{parcel}/x")).modules.remove(0)
}

/// A module of the expansion: constants by identifier, submodules by name.
#[derive(Default)]
struct Module {
    constants: BTreeMap<String, Entry>,
    modules: BTreeMap<String, Module>,
}

impl Module {
    fn insert(
        &mut self,
        parcel: &str,
        entry: &Entry,
        name: &RustName,
        constant: String,
    ) -> Result<(), String> {
        let modules = &name.modules;
        if modules.is_empty() && RESERVED.contains(&constant.as_str()) {
            return Err(format!(
                "`{}` would become `{parcel}::{constant}`, which include_parcel! declares itself; \
                 rename the file, or move it into a folder",
                entry.name
            ));
        }
        let mut at = self;
        for m in modules {
            at = at.modules.entry(m.clone()).or_default();
        }
        if let Some(other) = at.constants.get(&constant) {
            let mut path = modules.clone();
            path.push(constant);
            return Err(format!(
                "`{}` and `{}` both become `{parcel}::{}`: their names differ only in characters \
                 that are not letters or digits, or in case; rename one of the files \
                 (names map to Rust as the README's naming table shows)",
                other.name,
                entry.name,
                path.join("::")
            ));
        }
        at.constants.insert(constant, entry.clone());
        Ok(())
    }

    /// Writes the constants and submodules; `folder` is this module's folder
    /// (`sprites/ui/`), for the submodules' docs.
    fn write(&self, code: &mut String, folder: &str) {
        for (ident, entry) in &self.constants {
            let ty = match entry.kind.as_str() {
                "sprite" => "::assets_runtime::SpriteId",
                "text" => "::assets_runtime::TextId",
                "image" => "::assets_runtime::ImageId",
                "bytes" => "::assets_runtime::BytesId",
                "shader" => "::assets_runtime::ShaderId",
                "font" => "::assets_runtime::FontId",
                "animation" => "::assets_runtime::AnimationId",
                "texture" => "::assets_runtime::TextureId",
                "gltf" => "::assets_runtime::ModelId",
                "audio" => "::assets_runtime::AudioId",
                "tilemap" => "::assets_runtime::TileMapId",
                _ => "::assets_runtime::ResourceId",
            };
            let doc = format!("`{}` ({})", entry.name, entry.kind);
            if let Some(target) = &entry.alias_of {
                let note = format!(
                    "`{}` was renamed `{target}`: use that constant (the manifest's alias keeps \
                     this one loading)",
                    entry.name
                );
                writeln!(code, "#[deprecated(note = {note:?})]").expect("writing to a String");
            }
            writeln!(
                code,
                "#[doc = {doc:?}]\npub const {ident}: {ty} = {ty}::of({:?});",
                entry.name
            )
            .expect("writing to a String");
        }
        for (name, module) in &self.modules {
            // The folder as written, from any resource in it.
            let inner = module
                .folder()
                .unwrap_or_else(|| format!("{folder}{name}/"));
            let doc = format!("Resources under `{inner}`.");
            writeln!(code, "#[doc = {doc:?}]\npub mod {name} {{").expect("writing to a String");
            module.write(code, &inner);
            code.push_str("}\n");
        }
    }

    /// The folder of this module's resources, as written: `sprites/ui/`.
    fn folder(&self) -> Option<String> {
        let entry = self
            .constants
            .values()
            .next()
            .map(|e| e.name.split('#').next().unwrap_or_default().to_owned());
        let nested = || self.modules.values().find_map(Module::folder);
        let path = entry.or_else(|| nested().map(|f| f.trim_end_matches('/').to_owned()))?;
        let cut = path.rfind('/')?;
        Some(format!("{}/", &path[..cut]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `resource → path` for each name, as the expansion names them.
    fn listing(names: &[&str]) -> String {
        let entries: Vec<Entry> = names
            .iter()
            .map(|n| Entry {
                kind: "bytes".into(),
                alias_of: None,
                name: (*n).into(),
            })
            .collect();
        constants(&entries)
            .into_iter()
            .zip(names)
            .map(|((n, constant), name)| {
                let mut path = n.modules.clone();
                path.push(constant);
                format!("{name} → {}\n", path.join("::"))
            })
            .collect()
    }

    #[test]
    fn an_engine_shaped_tree_gets_these_names() {
        let names = [
            "branding/bevy_bird_dark.png",
            "branding/bevy_bird_dark.svg",
            "branding/icon.png",
            "models/FlightHelmet/FlightHelmet.gltf",
            "models/FlightHelmet/FlightHelmet.bin",
            "models/FlightHelmet/FlightHelmet_Materials_LeatherPartsMat_BaseColor.png",
            "sounds/Windless Slopes.ogg",
            "fonts/FiraSans-Bold.ttf",
            "textures/Game Icons/wrench.png",
            "textures/1x1.png",
            "textures/rpg/chars/sensei/sensei.png",
            "levels/one.lvl#collision",
            "levels/one.lvl#tiles",
            "shaders/type.wgsl",
            "type/mod.rs",
        ];
        let expected = "\
branding/bevy_bird_dark.png → branding::BEVY_BIRD_DARK_PNG
branding/bevy_bird_dark.svg → branding::BEVY_BIRD_DARK_SVG
branding/icon.png → branding::ICON
models/FlightHelmet/FlightHelmet.gltf → models::flight_helmet::FLIGHT_HELMET_GLTF
models/FlightHelmet/FlightHelmet.bin → models::flight_helmet::FLIGHT_HELMET_BIN
models/FlightHelmet/FlightHelmet_Materials_LeatherPartsMat_BaseColor.png → models::flight_helmet::FLIGHT_HELMET_MATERIALS_LEATHER_PARTS_MAT_BASE_COLOR
sounds/Windless Slopes.ogg → sounds::WINDLESS_SLOPES
fonts/FiraSans-Bold.ttf → fonts::FIRA_SANS_BOLD
textures/Game Icons/wrench.png → textures::game_icons::WRENCH
textures/1x1.png → textures::_1X1
textures/rpg/chars/sensei/sensei.png → textures::rpg::chars::sensei::SENSEI
levels/one.lvl#collision → levels::ONE_COLLISION
levels/one.lvl#tiles → levels::ONE_TILES
shaders/type.wgsl → shaders::TYPE
type/mod.rs → type_::MOD
";
        assert_eq!(listing(&names), expected);
    }
}
