//! `tilemap`: maps and tilesets from Tiled (`.tmx`, `.tsx`, `.tx`, `.tmj`,
//! `.tsj`) and LDtk (`.ldtk`, `.ldtkl`), checked, with every file they name
//! found. Default for those extensions.
//!
//! **A Tiled map becomes a `tilemap` resource** ([`assets_runtime::tilemap`],
//! read by `Parcel::tilemap`): its tilesets built in, each tile layer's
//! cells decoded whatever encoding the editor used, groups flattened,
//! templates applied, properties kept (the conversion: [`tiled`]). A game
//! draws it without a map library, and a missing or malformed tileset, a
//! layer whose cells do not add up, fails the build naming the file and
//! the line (XML) or JSON path, instead of failing the game at load.
//!
//! Setting `output = "text"` keeps a map as the file as written instead,
//! for a game or engine plugin that reads maps with its own library (the
//! `tiled` crate, `bevy_ecs_tiled`): the map and every file it names are
//! then held by the parcel under the paths the map wrote. Tilesets,
//! templates and LDtk level files are always `text` (a tileset is also
//! built into each map that uses it, a level file into its project's
//! level). An LDtk project is kept as text too, for LDtk's own loaders, and
//! each of its levels is also a `tilemap` resource, `World.ldtk#Level_0`
//! (the conversion: [`ldtk`]); `output = "text"` leaves the levels out.
//!
//! **What is checked, either way.** A map is rarely one file: a Tiled map
//! names its tilesets (`.tsx`), which name their images, and its object
//! templates (`.tx`); an LDtk project names its tileset images and, saved
//! with separate level files, its levels (`.ldtkl`). Each name is a path
//! relative to the file that holds it, as the editors write them. The
//! processor resolves each one as an asset and records it as a reference
//! ([`Context::reference`]): a parcel that holds the map holds what it names
//! (for a `tilemap` resource: the images it draws with), whatever its globs
//! say, and a game or an engine's loader finds it by the same relative path
//! (`Parcel::by_uri`, or Bevy's asset server through the adapter). A name
//! that is missing, or not an asset of the build, fails the map by name,
//! with the line (XML) or the JSON path that holds it, and creating the
//! file reruns it. The named files are processed by their own rules (a
//! tileset by this processor, an image as an `image`), so an edit to a
//! tileset image does not rerun a map kept as text.
//!
//! A file kept as text is checked as such: the XML is well-formed with the
//! root element the extension says (`map`, `tileset`, `template`); the JSON
//! parses, a Tiled JSON file says its `type`, an LDtk project has its
//! `jsonVersion`.

mod data;
mod ldtk;
mod tiled;

use assets_runtime::format::{KIND_TEXT, KIND_TILEMAP};
use serde::Deserialize;
use serde_json::Value;

use super::{Context, ProcessError, Processor};
use crate::asset_path::AssetPath;

/// Checks a map or tileset, and references the files it names.
#[derive(Debug, Clone, Copy)]
pub struct Tilemap;

/// Settings of the `tilemap` processor.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TilemapSettings {
    /// `"tilemap"` (the default) or `"text"`.
    #[serde(default)]
    output: Option<Output>,
}

/// What a map becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Output {
    /// A `tilemap` resource.
    Tilemap,
    /// The file as written.
    Text,
}

impl Processor for Tilemap {
    type Settings = TilemapSettings;

    fn name(&self) -> &str {
        "tilemap"
    }

    fn version(&self) -> u32 {
        // 3: an LDtk reference to an entity of the same level is an
        // `object` property.
        3
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        settings: TilemapSettings,
    ) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| ProcessError::msg(format!("is not UTF-8 text: {e}")))?;
        let ext = ctx.asset().extension().map(str::to_ascii_lowercase);
        let map = matches!(ext.as_deref(), Some("tmx" | "tmj"));
        match (settings.output, map) {
            (None | Some(Output::Tilemap), true) => {
                let doc = match ext.as_deref() {
                    Some("tmx") => {
                        let doc = parse_xml(text)?;
                        root_is(&doc, "map")?;
                        tiled::xml_to_json(doc.root_element()).map_err(ProcessError::msg)?
                    }
                    _ => tiled_json_doc(text, "map")?,
                };
                let asset = ctx.asset().clone();
                let spec = tiled::Map::new(ctx, asset).convert(&doc)?;
                return ctx.emit(KIND_TILEMAP, spec.encode());
            }
            (Some(Output::Tilemap), false) if !matches!(ext.as_deref(), Some("ldtk")) => {
                return Err(ProcessError::msg(
                    "only a Tiled map (`.tmx`, `.tmj`) or an LDtk project's levels become `tilemap` resources: a tileset is built into the maps that use it, a level file into its project's levels; drop `output` from this rule",
                ));
            }
            _ => {}
        }
        // An LDtk project is parsed once, for its checks and its levels.
        let ldtk_doc = (matches!(ext.as_deref(), Some("ldtk" | "ldtkl")))
            .then(|| parse_json(text))
            .transpose()?;
        let named = match (ext.as_deref(), &ldtk_doc) {
            (Some("tmx"), _) => tiled_xml(text, "map")?,
            (Some("tsx"), _) => tiled_xml(text, "tileset")?,
            (Some("tx"), _) => tiled_xml(text, "template")?,
            (Some("tmj"), _) => tiled_json(text, "map")?,
            (Some("tsj"), _) => tiled_json(text, "tileset")?,
            (Some("ldtk"), Some(doc)) => ldtk(doc, true)?,
            (Some("ldtkl"), Some(doc)) => ldtk(doc, false)?,
            _ => {
                return Err(ProcessError::msg(
                    "is not a map this processor reads: Tiled `.tmx`, `.tsx`, `.tx`, `.tmj`, `.tsj`, or LDtk `.ldtk`, `.ldtkl`",
                ));
            }
        };
        let asset = ctx.asset().clone();
        for name in named {
            resolve(ctx, &asset, &name)?;
        }
        let levels = ext.as_deref() == Some("ldtk") && settings.output != Some(Output::Text);
        if let Some(doc) = ldtk_doc.filter(|_| levels) {
            for (level, map) in ldtk::levels(ctx, &doc)? {
                ctx.emit_labeled(&level, KIND_TILEMAP, map.encode())?;
            }
        }
        ctx.emit(KIND_TEXT, bytes)
    }
}

/// Resolves a file `from` names, checks it is an asset of the build, and
/// references it; its asset path.
fn resolve(
    ctx: &mut Context<'_>,
    from: &AssetPath,
    name: &Named,
) -> Result<AssetPath, ProcessError> {
    let path = from.sibling(&name.path).map_err(|e| {
        ProcessError::msg(format!(
            "{} names the {} `{}`, which is not a path inside the asset root ({e})",
            name.located(from, ctx.asset()),
            name.what,
            name.path
        ))
    })?;
    let exists = ctx.exists(&path);
    if !(exists && ctx.is_asset(&path)) {
        let why = match exists {
            true => "is not an asset of this build (hidden or ignored)",
            false => "does not exist",
        };
        return Err(ProcessError::msg(format!(
            "{} names the {} `{}`, and `{path}` {why}; add the file or fix the path",
            name.located(from, ctx.asset()),
            name.what,
            name.path
        )));
    }
    ctx.reference(&path)?;
    Ok(path)
}

/// Parses Tiled XML. Maps saved by older Tiled versions (and Tiled's own
/// examples) name its DTD: `<!DOCTYPE map SYSTEM "http://mapeditor.org/dtd/1.0/map.dtd">`.
fn parse_xml(text: &str) -> Result<roxmltree::Document<'_>, ProcessError> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| ProcessError::msg(format!("is not well-formed XML: {e}")))
}

fn root_is(doc: &roxmltree::Document<'_>, root: &str) -> Result<(), ProcessError> {
    let found = doc.root_element().tag_name().name();
    if found != root {
        return Err(ProcessError::msg(format!(
            "is not a Tiled {root}: its root element is `<{found}>`, not `<{root}>`"
        )));
    }
    Ok(())
}

/// A Tiled JSON file whose `type` must be `kind`.
fn tiled_json_doc(text: &str, kind: &str) -> Result<Value, ProcessError> {
    let doc = parse_json(text)?;
    match doc.get("type").and_then(Value::as_str) {
        Some(found) if found == kind => Ok(doc),
        found => Err(ProcessError::msg(format!(
            "is not a Tiled {kind}: its `type` is {}, not \"{kind}\"",
            found.map_or("missing".to_owned(), |t| format!("\"{t}\""))
        ))),
    }
}

fn parse_json(text: &str) -> Result<Value, ProcessError> {
    serde_json::from_str(text).map_err(|e| ProcessError::msg(format!("is not valid JSON: {e}")))
}

/// A file a map names: what it is, the path as written, and where.
#[derive(Debug, PartialEq)]
struct Named {
    /// `tileset`, `image`, `template`, `level`.
    what: &'static str,
    /// Relative to the naming file, as the editor wrote it.
    path: String,
    /// `line 4` (XML) or a JSON path (`tilesets[0].source`).
    at: String,
}

impl Named {
    /// Where it was named: its place, and the file when that is not the
    /// asset being processed (a tileset a map reads in).
    fn located(&self, from: &AssetPath, asset: &AssetPath) -> String {
        if from == asset {
            self.at.clone()
        } else {
            format!("{from}, {}", self.at)
        }
    }
}

/// The files a Tiled XML file (`root` is its root element) names: tilesets
/// (`<tileset source>`), images (`<image source>`, of a tileset, a tile or
/// an image layer) and object templates (`<object template>`).
fn tiled_xml(text: &str, root: &str) -> Result<Vec<Named>, ProcessError> {
    let doc = parse_xml(text)?;
    root_is(&doc, root)?;
    let mut named = Vec::new();
    for node in doc.descendants().filter(|n| n.is_element()) {
        let attribute = match node.tag_name().name() {
            "tileset" => Some(("tileset", "source")),
            "image" => Some(("image", "source")),
            "object" => Some(("template", "template")),
            _ => None,
        };
        let Some((what, key)) = attribute else {
            continue;
        };
        if let Some(path) = node.attribute(key).filter(|p| !p.is_empty()) {
            let line = doc.text_pos_at(node.range().start).row;
            named.push(Named {
                what,
                path: path.to_owned(),
                at: format!("line {line}"),
            });
        }
    }
    Ok(named)
}

/// The files a Tiled JSON file (`kind` is its `type`) names, as
/// [`tiled_xml`] finds them in XML: `tilesets[].source`, every `image`,
/// every object's `template`.
fn tiled_json(text: &str, kind: &str) -> Result<Vec<Named>, ProcessError> {
    let doc = tiled_json_doc(text, kind)?;
    let mut named = Vec::new();
    walk_json(&doc, String::new(), &mut named);
    Ok(named)
}

fn walk_json(value: &Value, at: String, named: &mut Vec<Named>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                let here = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                let what = match key.as_str() {
                    "image" => Some("image"),
                    "template" => Some("template"),
                    // A tileset entry of a map: `{"firstgid": 1, "source": ...}`.
                    "source" if object.contains_key("firstgid") => Some("tileset"),
                    _ => None,
                };
                match (what, value.as_str()) {
                    (Some(what), Some(path)) if !path.is_empty() => named.push(Named {
                        what,
                        path: path.to_owned(),
                        at: here,
                    }),
                    _ => walk_json(value, here, named),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_json(item, format!("{at}[{i}]"), named);
            }
        }
        _ => {}
    }
}

/// The files an LDtk project (or, `project` false, a level file) names:
/// tileset images (`defs.tilesets[].relPath`), level files
/// (`levels[].externalRelPath`) and level backgrounds (`bgRelPath`).
fn ldtk(doc: &Value, project: bool) -> Result<Vec<Named>, ProcessError> {
    if project && doc.get("jsonVersion").and_then(Value::as_str).is_none() {
        return Err(ProcessError::msg(
            "is not an LDtk project: it has no `jsonVersion`",
        ));
    }
    let mut named = Vec::new();
    let mut name = |what, value: Option<&Value>, at: String| {
        if let Some(path) = value.and_then(Value::as_str).filter(|p| !p.is_empty()) {
            named.push(Named {
                what,
                path: path.to_owned(),
                at,
            });
        }
    };
    let tilesets = doc.pointer("/defs/tilesets").and_then(Value::as_array);
    for (i, tileset) in tilesets.into_iter().flatten().enumerate() {
        let at = format!("defs.tilesets[{i}].relPath");
        name("image", tileset.get("relPath"), at);
    }
    let levels: Vec<(String, &Value)> = match doc.get("levels").and_then(Value::as_array) {
        Some(levels) => (levels.iter().enumerate())
            .map(|(i, l)| (format!("levels[{i}]"), l))
            .collect(),
        // A level file is one level.
        None if !project => vec![(String::new(), doc)],
        None => Vec::new(),
    };
    for (at, level) in levels {
        let field = |key: &str| match at.as_str() {
            "" => key.to_owned(),
            at => format!("{at}.{key}"),
        };
        name(
            "level",
            level.get("externalRelPath"),
            field("externalRelPath"),
        );
        // Relative to the project, which LDtk keeps one folder above its
        // separate level files (`World/Level_0.ldtkl` beside `World.ldtk`).
        let background = level.get("bgRelPath").and_then(Value::as_str);
        let background = match (project, background) {
            (false, Some(path)) if !path.is_empty() => Some(Value::from(format!("../{path}"))),
            _ => background.map(Value::from),
        };
        name("image", background.as_ref(), field("bgRelPath"));
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset_path::AssetPath;

    /// The asset `path` names, resolved against `map`'s folder.
    fn resolve(map: &str, path: &str) -> AssetPath {
        AssetPath::new(map).unwrap().sibling(path).unwrap()
    }

    #[test]
    fn tiled_xml_names_tilesets_images_and_templates_with_their_lines() {
        let map = r#"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" width="2" height="1" tilewidth="16" tileheight="16" infinite="0">
 <tileset firstgid="1" source="../tilesets/Terrain.tsx"/>
 <imagelayer id="3" name="Sky"><image source="../images/sky blue.png" width="64" height="32"/></imagelayer>
 <objectgroup id="4"><object id="1" template="../templates/Chest.tx" x="3" y="4"/></objectgroup>
</map>"#;
        let named = tiled_xml(map, "map").unwrap();
        let found: Vec<(&str, &str, &str)> = (named.iter())
            .map(|n| (n.what, n.path.as_str(), n.at.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("tileset", "../tilesets/Terrain.tsx", "line 3"),
                ("image", "../images/sky blue.png", "line 4"),
                ("template", "../templates/Chest.tx", "line 5"),
            ]
        );
        assert_eq!(
            resolve("maps/Level 1.tmx", "../images/sky blue.png").as_str(),
            "images/sky blue.png"
        );
        let err = tiled_xml(map, "tileset").unwrap_err().to_string();
        assert!(err.contains("root element is `<map>`"), "{err}");
        assert!(tiled_xml("<map><layer></map>", "map").is_err());
        let old = "<?xml version=\"1.0\"?>\n<!DOCTYPE map SYSTEM \"http://mapeditor.org/dtd/1.0/map.dtd\">\n<map version=\"1.0\"/>";
        assert_eq!(tiled_xml(old, "map").unwrap(), []);
    }

    #[test]
    fn tiled_json_and_ldtk_name_their_files_by_json_path() {
        let tmj = r#"{"type":"map","tilesets":[{"firstgid":1,"source":"terrain.tsj"},
            {"firstgid":9,"name":"inline","image":"inline.png"}],
            "layers":[{"type":"group","layers":[{"type":"imagelayer","image":"bg.png"}]}]}"#;
        let named = tiled_json(tmj, "map").unwrap();
        let at: Vec<&str> = named.iter().map(|n| n.at.as_str()).collect();
        assert_eq!(
            at,
            [
                "layers[0].layers[0].image",
                "tilesets[0].source",
                "tilesets[1].image"
            ]
        );
        assert!(tiled_json(r#"{"type":"tileset"}"#, "map").is_err());

        let project = r#"{"jsonVersion":"1.5.3","defs":{"tilesets":[{"relPath":"atlas/Cavernas.png"},{"relPath":null}]},
            "levels":[{"identifier":"Level_0","externalRelPath":"World/Level_0.ldtkl","bgRelPath":null}]}"#;
        let ldtk = |text: &str, project| ldtk(&parse_json(text).unwrap(), project);
        let named = ldtk(project, true).unwrap();
        let found: Vec<(&str, &str)> = named.iter().map(|n| (n.what, n.path.as_str())).collect();
        assert_eq!(
            found,
            [
                ("image", "atlas/Cavernas.png"),
                ("level", "World/Level_0.ldtkl")
            ]
        );
        assert!(ldtk(r#"{"levels":[]}"#, true).is_err());
        let level = ldtk(r#"{"identifier":"Level_0","bgRelPath":"../bg.png"}"#, false).unwrap();
        assert_eq!(level[0].at, "bgRelPath");
    }
}
