//! A Tiled map made into a `tilemap` resource ([`assets_runtime::tilemap`]).
//!
//! Tiled writes the same map two ways, XML (`.tmx`, tilesets `.tsx`,
//! templates `.tx`) and JSON (`.tmj`, `.tsj`), and its JSON is its XML
//! mapped element by element (the format's documentation gives both side by
//! side). So an XML file is first mapped to the JSON a `.tmj` would hold
//! ([`xml_to_json`]: attributes stay strings, layers get their `type`,
//! `<data>` its array or base64 text), and one conversion reads both
//! ([`Map::convert`]). Numbers are read from JSON numbers or numeric
//! strings alike. Each object of XML origin carries the line it came from
//! (`@line`), so an error names the line in a `.tmx` and the JSON path in a
//! `.tmj`.
//!
//! What the conversion does on the way:
//! - external tilesets (`.tsx` or `.tsj`) are read ([`Context::read`], so
//!   editing one reruns the map) and built in; their image paths are
//!   relative to the tileset file;
//! - every image (a tileset's, a tile's in a collection, an image layer's)
//!   must be an asset of the build; it is referenced and named in the
//!   resource by its asset path, the name the parcel gives its resource;
//! - a layer's cells are decoded from CSV, XML `<tile>` elements, or base64
//!   raw, zlib, gzip or zstd (bounded by the cells the layer declares); an
//!   infinite map's chunks are joined into one region per layer;
//! - group layers are flattened, their offsets added and their opacity,
//!   visibility, parallax and tint combined in;
//! - an object made from a template (`.tx`) gets the template's fields and
//!   properties under its own, its tile's gid moved to the map's tileset;
//! - a tile's collision shapes (its `objectgroup`) become its objects;
//! - class properties become JSON text; Tiled's older `type` of objects and
//!   tiles reads as their class.

use assets_runtime::tilemap::write::{
    LayerData, LayerSpec, ObjectSpec, PropertySpec, TileMapSpec, TileSpec, TilesetSpec,
};
use assets_runtime::tilemap::{
    Orientation, PropertyType, RenderOrder, Shape, StaggerAxis, StaggerIndex, parse_color,
};
use serde_json::{Map as Object, Value};

use crate::asset_path::AssetPath;
use crate::processor::{Context, ProcessError};

/// `path` (relative to `from`) checked to be an asset and referenced; its
/// asset path. `at` says where it was named, for the error.
pub(super) fn named_image(
    ctx: &mut Context<'_>,
    from: &AssetPath,
    path: &str,
    at: &str,
) -> Result<String, ProcessError> {
    let named = super::Named {
        what: "image",
        path: path.to_owned(),
        at: at.to_owned(),
    };
    Ok(super::resolve(ctx, from, &named)?.as_str().to_owned())
}

/// The width and height of image `asset` from its header (read, so an
/// input): for a tileset that does not say its image's size, as files of
/// Tiled before 0.9 do not.
fn read_image_size(ctx: &mut Context<'_>, asset: &str) -> Result<(u32, u32), ProcessError> {
    let bytes = ctx.read(asset)?;
    (image::ImageReader::new(std::io::Cursor::new(bytes)))
        .with_guessed_format()
        .ok()
        .and_then(|r| r.into_dimensions().ok())
        .ok_or_else(|| {
            ProcessError::msg(format!(
                "the tileset does not say its image's size, and `{asset}` is not an image whose size can be read; add `width` and `height` to its `<image>`"
            ))
        })
}

/// A failure at a place in the file.
pub(super) fn fail(at: &str, message: impl std::fmt::Display) -> ProcessError {
    ProcessError::msg(format!("{at}: {message}"))
}

/// Where `value` is, for an error: its line if it came from XML, else its
/// JSON path `at`.
fn here(at: &str, value: &Value) -> String {
    match value.get("@line").and_then(Value::as_u64) {
        Some(line) => format!("line {line}"),
        None => at.to_owned(),
    }
}

/// Where an object's `image` is named: its line in XML, else its JSON path.
fn image_at(value: &Value, at: &str) -> String {
    match value.get("@image-line").and_then(Value::as_u64) {
        Some(line) => format!("line {line}"),
        None => child(at, "image"),
    }
}

fn child(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// A number from a JSON number or a numeric string.
fn number(value: &Value, key: &str) -> Option<f64> {
    match value.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

fn float_or(value: &Value, key: &str, default: f32) -> f32 {
    number(value, key).map_or(default, |n| n as f32)
}

/// A whole number that fits `T`, or the default when absent; an error when
/// present but not such a number.
fn whole<T: TryFrom<i64>>(
    value: &Value,
    key: &str,
    default: T,
    at: &str,
) -> Result<T, ProcessError> {
    let Some(n) = number(value, key) else {
        return match value.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => Err(fail(at, format!("`{key}` is {v}, not a number"))),
        };
    };
    if n.fract() != 0.0 || !(-9.0e15..=9.0e15).contains(&n) {
        return Err(fail(at, format!("`{key}` is {n}, not a whole number")));
    }
    T::try_from(n as i64).map_err(|_| fail(at, format!("`{key}` is {n}, out of range")))
}

/// The string at `key` (`""` when absent or not a string).
pub(super) fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn flag(value: &Value, key: &str, default: bool) -> bool {
    match value.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.trim() != "0" && s.trim() != "false",
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        _ => default,
    }
}

fn color(value: &Value, key: &str, at: &str) -> Result<Option<[u8; 4]>, ProcessError> {
    match text(value, key) {
        "" => Ok(None),
        c => parse_color(c).map(Some).ok_or_else(|| {
            fail(
                at,
                format!("`{key}` is `{c}`, not a colour (`#AARRGGBB` or `#RRGGBB`)"),
            )
        }),
    }
}

/// The array at `key` (empty when absent or not an array).
pub(super) fn array<'v>(value: &'v Value, key: &str) -> &'v [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The class of a map or layer.
fn class(value: &Value) -> String {
    text(value, "class").to_owned()
}

/// The class of an object or tile: `class` (Tiled 1.9 and later), else
/// the older `type`.
fn class_or_type(value: &Value) -> String {
    match text(value, "class") {
        "" => text(value, "type").to_owned(),
        c => c.to_owned(),
    }
}

fn properties(value: &Value, at: &str) -> Result<Vec<PropertySpec>, ProcessError> {
    let mut out = Vec::new();
    for (i, p) in array(value, "properties").iter().enumerate() {
        let at = here(&format!("{}[{i}]", child(at, "properties")), p);
        let kind = match text(p, "type") {
            "" | "string" => PropertyType::String,
            "int" => PropertyType::Int,
            "float" => PropertyType::Float,
            "bool" => PropertyType::Bool,
            "color" => PropertyType::Color,
            "file" => PropertyType::File,
            "object" => PropertyType::Object,
            "class" => PropertyType::Class,
            other => {
                return Err(fail(
                    &at,
                    format!("property type `{other}` is not one Tiled writes"),
                ));
            }
        };
        let value = match p.get("value") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v @ Value::Object(_)) => v.to_string(),
            Some(v) => v.to_string(),
        };
        out.push(PropertySpec {
            name: text(p, "name").to_owned(),
            kind,
            value,
        });
    }
    Ok(out)
}

/// Properties of a template under an object's own: the object's win by name.
fn merge_properties(base: Vec<PropertySpec>, own: Vec<PropertySpec>) -> Vec<PropertySpec> {
    let mut out: Vec<PropertySpec> = (base.into_iter())
        .filter(|b| !own.iter().any(|o| o.name == b.name))
        .collect();
    out.extend(own);
    out
}

/// A map being converted: where it is, and what it reads through.
pub(super) struct Map<'f, 'c> {
    ctx: &'f mut Context<'c>,
    path: AssetPath,
    /// Each tileset's first gid and its resolved source file (`None` inline).
    sources: Vec<(u32, Option<AssetPath>)>,
    /// The map's tile size: every layer's cell.
    tile_size: (u32, u32),
}

impl<'f, 'c> Map<'f, 'c> {
    pub(super) fn new(ctx: &'f mut Context<'c>, path: AssetPath) -> Self {
        Map {
            ctx,
            path,
            sources: Vec::new(),
            tile_size: (0, 0),
        }
    }

    /// Converts a map (the JSON of a `.tmj`, or a `.tmx` mapped by
    /// [`xml_to_json`]).
    pub(super) fn convert(&mut self, doc: &Value) -> Result<TileMapSpec, ProcessError> {
        let orientation = match text(doc, "orientation") {
            "" | "orthogonal" => Orientation::Orthogonal,
            "isometric" => Orientation::Isometric,
            "staggered" => Orientation::Staggered,
            "hexagonal" => Orientation::Hexagonal,
            other => {
                return Err(fail(
                    "orientation",
                    format!("`{other}` is not a Tiled orientation"),
                ));
            }
        };
        let render_order = match text(doc, "renderorder") {
            "" | "right-down" => RenderOrder::RightDown,
            "right-up" => RenderOrder::RightUp,
            "left-down" => RenderOrder::LeftDown,
            "left-up" => RenderOrder::LeftUp,
            other => {
                return Err(fail(
                    "renderorder",
                    format!("`{other}` is not a Tiled render order"),
                ));
            }
        };
        let at = here("", doc);
        let stagger = (
            if text(doc, "staggeraxis") == "x" {
                StaggerAxis::X
            } else {
                StaggerAxis::Y
            },
            if text(doc, "staggerindex") == "even" {
                StaggerIndex::Even
            } else {
                StaggerIndex::Odd
            },
        );
        let mut tilesets = Vec::new();
        for (i, ts) in array(doc, "tilesets").iter().enumerate() {
            let at = here(&format!("tilesets[{i}]"), ts);
            tilesets.push(self.tileset(ts, &at)?);
        }
        tilesets.sort_by_key(|t: &TilesetSpec| t.first_gid);
        self.sources.sort_by_key(|s| s.0);
        if let Some(pair) = tilesets
            .windows(2)
            .find(|p| p[0].first_gid == p[1].first_gid)
        {
            return Err(fail(
                &at,
                format!("two tilesets start at gid {}", pair[1].first_gid),
            ));
        }
        self.tile_size = (
            whole(doc, "tilewidth", 0, &at)?,
            whole(doc, "tileheight", 0, &at)?,
        );
        let mut layers = Vec::new();
        let group = Group::top();
        self.layers(array(doc, "layers"), "layers", &group, &mut layers)?;
        Ok(TileMapSpec {
            orientation,
            render_order,
            size: (whole(doc, "width", 0, &at)?, whole(doc, "height", 0, &at)?),
            tile_size: self.tile_size,
            hex_side_length: whole(doc, "hexsidelength", 0, &at)?,
            stagger,
            infinite: flag(doc, "infinite", false),
            background: color(doc, "backgroundcolor", &at)?,
            class: class(doc),
            properties: properties(doc, "")?,
            tilesets,
            layers,
        })
    }

    /// A map's tileset: inline, or read from its file.
    fn tileset(&mut self, entry: &Value, at: &str) -> Result<TilesetSpec, ProcessError> {
        let first_gid: u32 = whole(entry, "firstgid", 0, at)?;
        if first_gid == 0 {
            return Err(fail(at, "a tileset has no `firstgid` (at least 1)"));
        }
        let source = text(entry, "source");
        let (doc, from, at) = if source.is_empty() {
            (entry.clone(), self.path.clone(), at.to_owned())
        } else {
            // Places in the tileset's own file.
            let file = self.path.sibling(source).map_err(|e| {
                fail(
                    at,
                    format!("the tileset `{source}` is not a path inside the asset root ({e})"),
                )
            })?;
            let doc = read_tiled(self.ctx, &file, "tileset")?;
            (doc, file.clone(), String::new())
        };
        self.sources
            .push((first_gid, (!source.is_empty()).then(|| from.clone())));
        let tile_size = (
            whole(&doc, "tilewidth", 0, &at)?,
            whole(&doc, "tileheight", 0, &at)?,
        );
        let (spacing, margin): (u32, u32) = (
            whole(&doc, "spacing", 0, &at)?,
            whole(&doc, "margin", 0, &at)?,
        );
        let image = match text(&doc, "image") {
            "" => String::new(),
            path => named_image(self.ctx, &from, path, &image_at(&doc, &at))?,
        };
        let mut image_size: (u32, u32) = (
            whole(&doc, "imagewidth", 0, &at)?,
            whole(&doc, "imageheight", 0, &at)?,
        );
        if !image.is_empty() && image_size.0 == 0 && image_size.1 == 0 {
            image_size = read_image_size(self.ctx, &image)?;
        }
        // Old files leave out the counts an image's size implies.
        let fit = |image: u32, tile: u32| {
            (image.saturating_sub(2 * margin) + spacing)
                .checked_div(tile + spacing)
                .unwrap_or(0)
        };
        let columns = whole(&doc, "columns", fit(image_size.0, tile_size.0), &at)?;
        let rows = fit(image_size.1, tile_size.1);
        let tile_count = whole(&doc, "tilecount", columns.saturating_mul(rows), &at)?;
        let offset = doc.get("tileoffset").unwrap_or(&Value::Null);
        let mut tiles = Vec::new();
        for (i, tile) in array(&doc, "tiles").iter().enumerate() {
            let at = here(&child(&at, &format!("tiles[{i}]")), tile);
            let image = match text(tile, "image") {
                "" => String::new(),
                path => named_image(self.ctx, &from, path, &image_at(tile, &at))?,
            };
            let mut animation = Vec::new();
            for frame in array(tile, "animation") {
                animation.push((
                    whole(frame, "tileid", 0, &at)?,
                    whole(frame, "duration", 0, &at)?,
                ));
            }
            // Its collision shapes, drawn in Tiled's tile collision editor.
            let mut objects = Vec::new();
            let shapes = tile.get("objectgroup").unwrap_or(&Value::Null);
            for (k, object) in array(shapes, "objects").iter().enumerate() {
                let at = here(&child(&at, &format!("objectgroup.objects[{k}]")), object);
                objects.push(self.object(object, &at)?);
            }
            let spec = TileSpec {
                id: whole(tile, "id", 0, &at)?,
                image,
                image_size: (
                    whole(tile, "imagewidth", 0, &at)?,
                    whole(tile, "imageheight", 0, &at)?,
                ),
                class: class_or_type(tile),
                animation,
                properties: properties(tile, &at)?,
                objects,
            };
            if spec
                != (TileSpec {
                    id: spec.id,
                    ..TileSpec::default()
                })
            {
                tiles.push(spec);
            }
        }
        tiles.sort_by_key(|t| t.id);
        Ok(TilesetSpec {
            first_gid,
            name: text(&doc, "name").to_owned(),
            tile_count,
            columns,
            tile_size,
            spacing,
            margin,
            offset: (whole(offset, "x", 0, &at)?, whole(offset, "y", 0, &at)?),
            image,
            image_size,
            tiles,
            properties: properties(&doc, &at)?,
        })
    }

    fn layers(
        &mut self,
        layers: &[Value],
        at: &str,
        group: &Group,
        out: &mut Vec<LayerSpec>,
    ) -> Result<(), ProcessError> {
        for (i, layer) in layers.iter().enumerate() {
            let at = here(&format!("{at}[{i}]"), layer);
            let inner = group.within(layer, &at)?;
            let data = match text(layer, "type") {
                "group" => {
                    let path = format!("{at}.layers");
                    self.layers(array(layer, "layers"), &path, &inner, out)?;
                    continue;
                }
                "tilelayer" => self.cells(layer, &at)?,
                "objectgroup" => {
                    let mut objects = Vec::new();
                    for (j, object) in array(layer, "objects").iter().enumerate() {
                        let at = here(&format!("{at}.objects[{j}]"), object);
                        objects.push(self.object(object, &at)?);
                    }
                    LayerData::Objects(objects)
                }
                "imagelayer" => LayerData::Image {
                    image: match text(layer, "image") {
                        "" => String::new(),
                        path => {
                            let path = path.to_owned();
                            let (from, at) = (self.path.clone(), image_at(layer, &at));
                            named_image(self.ctx, &from, &path, &at)?
                        }
                    },
                    repeat: (flag(layer, "repeatx", false), flag(layer, "repeaty", false)),
                },
                other => {
                    return Err(fail(
                        &at,
                        format!("layer type `{other}` is not one Tiled writes"),
                    ));
                }
            };
            out.push(LayerSpec {
                id: whole(layer, "id", 0, &at)?,
                name: text(layer, "name").to_owned(),
                groups: group.path.clone(),
                class: class(layer),
                visible: inner.visible,
                opacity: inner.opacity,
                offset: inner.offset,
                parallax: inner.parallax,
                tint: inner.tint,
                cell_size: self.tile_size,
                data,
                properties: properties(layer, &at)?,
            });
        }
        Ok(())
    }

    /// A tile layer's cells: its data, or its chunks joined.
    fn cells(&mut self, layer: &Value, at: &str) -> Result<LayerData, ProcessError> {
        let encoding = (text(layer, "encoding"), text(layer, "compression"));
        let chunks = array(layer, "chunks");
        if chunks.is_empty() {
            let size: (u32, u32) = (
                whole(layer, "width", 0, at)?,
                whole(layer, "height", 0, at)?,
            );
            let n = self.reserve(size, at)?;
            let cells = match layer.get("data") {
                None | Some(Value::Null) => vec![0; n],
                Some(data) => super::data::decode(data, encoding, n).map_err(|e| fail(at, e))?,
            };
            return Ok(LayerData::Tiles {
                origin: (0, 0),
                size,
                cells,
            });
        }
        let mut boxes = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            let at = here(&format!("{at}.chunks[{i}]"), chunk);
            let (x, y): (i32, i32) = (whole(chunk, "x", 0, &at)?, whole(chunk, "y", 0, &at)?);
            let (w, h): (u32, u32) = (
                whole(chunk, "width", 0, &at)?,
                whole(chunk, "height", 0, &at)?,
            );
            let end = |o: i32, n: u32| i32::try_from(i64::from(o) + i64::from(n)).ok();
            let (Some(x1), Some(y1)) = (end(x, w), end(y, h)) else {
                return Err(fail(
                    &at,
                    "the chunk lies outside the coordinates a map can have",
                ));
            };
            boxes.push((x, y, x1, y1, chunk, at));
        }
        let x0 = boxes.iter().map(|b| b.0).min().unwrap_or(0);
        let y0 = boxes.iter().map(|b| b.1).min().unwrap_or(0);
        let x1 = boxes.iter().map(|b| b.2).max().unwrap_or(0);
        let y1 = boxes.iter().map(|b| b.3).max().unwrap_or(0);
        let size = ((x1 - x0) as u32, (y1 - y0) as u32);
        let n = self.reserve(size, at)?;
        let mut cells = vec![0; n];
        for (x, y, cx1, cy1, chunk, at) in boxes {
            let w = (cx1 - x) as usize;
            let got = super::data::decode(
                chunk.get("data").unwrap_or(&Value::Null),
                encoding,
                w * (cy1 - y) as usize,
            )
            .map_err(|e| fail(&at, e))?;
            for (row, line) in got.chunks(w.max(1)).enumerate() {
                let start =
                    (y - y0) as usize * size.0 as usize + row * size.0 as usize + (x - x0) as usize;
                cells[start..start + line.len()].copy_from_slice(line);
            }
        }
        Ok(LayerData::Tiles {
            origin: (x0, y0),
            size,
            cells,
        })
    }

    /// Reserves a layer's cells; their count.
    fn reserve(&mut self, (w, h): (u32, u32), at: &str) -> Result<usize, ProcessError> {
        let n = u64::from(w) * u64::from(h);
        self.ctx
            .reserve_memory(n * 4, &format!("a {w}x{h} tile layer ({at})"))?;
        usize::try_from(n).map_err(|_| fail(at, format!("a {w}x{h} layer is too large")))
    }

    /// An object, its template's fields under its own.
    fn object(&mut self, object: &Value, at: &str) -> Result<ObjectSpec, ProcessError> {
        let (merged, base_properties, gid) = match text(object, "template") {
            "" => (object.clone(), Vec::new(), None),
            template => self.template(object, template, at)?,
        };
        let o = &merged;
        let shape = if o
            .get("ellipse")
            .is_some_and(|v| flag(o, "ellipse", true) || v.is_object())
        {
            Shape::Ellipse
        } else if o.get("point").is_some_and(|_| flag(o, "point", true)) {
            Shape::Point
        } else if o.get("polygon").is_some_and(Value::is_array) {
            Shape::Polygon
        } else if o.get("polyline").is_some_and(Value::is_array) {
            Shape::Polyline
        } else if o.get("text").is_some_and(Value::is_object) {
            Shape::Text
        } else {
            Shape::Rectangle
        };
        let mut points = Vec::new();
        for p in array(o, "polygon").iter().chain(array(o, "polyline")) {
            points.push((float_or(p, "x", 0.0), float_or(p, "y", 0.0)));
        }
        let gid = match gid {
            Some(gid) => gid,
            None => whole::<i64>(o, "gid", 0, at)? as u32,
        };
        Ok(ObjectSpec {
            id: whole(o, "id", 0, at)?,
            gid,
            shape,
            visible: flag(o, "visible", true),
            x: float_or(o, "x", 0.0),
            y: float_or(o, "y", 0.0),
            width: float_or(o, "width", 0.0),
            height: float_or(o, "height", 0.0),
            rotation: float_or(o, "rotation", 0.0),
            name: text(o, "name").to_owned(),
            class: class_or_type(o),
            text: o
                .get("text")
                .map(|t| text(t, "text").to_owned())
                .unwrap_or_default(),
            points,
            properties: merge_properties(base_properties, properties(object, at)?),
        })
    }

    /// An object made from `template`: the template's object with the
    /// object's own fields over it, the template's properties, and the
    /// gid of the template's tile in this map's tilesets.
    fn template(
        &mut self,
        object: &Value,
        template: &str,
        at: &str,
    ) -> Result<(Value, Vec<PropertySpec>, Option<u32>), ProcessError> {
        let file = self.path.sibling(template).map_err(|e| {
            fail(
                at,
                format!("the template `{template}` is not a path inside the asset root ({e})"),
            )
        })?;
        let doc = read_tiled(self.ctx, &file, "template")?;
        let base = doc
            .get("object")
            .cloned()
            .unwrap_or(Value::Object(Object::new()));
        let mut merged = base.as_object().cloned().unwrap_or_default();
        for (key, value) in object.as_object().into_iter().flatten() {
            if key != "properties" {
                merged.insert(key.clone(), value.clone());
            }
        }
        let base_properties = properties(&base, file.as_str())?;
        // The template's tile: its gid counts in the template's own tileset,
        // which the map lists too (Tiled adds it when the template is used).
        let mut gid = None;
        if object.get("gid").is_none() {
            let local: u32 = whole::<i64>(&base, "gid", 0, file.as_str())? as u32;
            let tileset = doc.get("tileset").unwrap_or(&Value::Null);
            let source = text(tileset, "source");
            if local != 0 && !source.is_empty() {
                let first: u32 = whole(tileset, "firstgid", 1, file.as_str())?;
                let resolved = file.sibling(source).ok();
                let Some(&(map_first, _)) = self
                    .sources
                    .iter()
                    .find(|s| s.1.is_some() && s.1 == resolved)
                else {
                    return Err(fail(
                        at,
                        format!(
                            "the template `{template}` shows a tile of `{source}`, which the map does not list among its tilesets; add that tileset to the map"
                        ),
                    ));
                };
                let flips = local & 0xf000_0000;
                gid = Some(((local & !0xf000_0000) - first + map_first) | flips);
            }
        }
        Ok((Value::Object(merged), base_properties, gid))
    }
}

/// What the groups around a layer add to it.
struct Group {
    path: String,
    visible: bool,
    opacity: f32,
    offset: (f32, f32),
    parallax: (f32, f32),
    tint: [u8; 4],
}

impl Group {
    fn top() -> Group {
        Group {
            path: String::new(),
            visible: true,
            opacity: 1.0,
            offset: (0.0, 0.0),
            parallax: (1.0, 1.0),
            tint: [255; 4],
        }
    }

    /// `layer`'s own values combined with this group's (for a group layer:
    /// what its children get).
    fn within(&self, layer: &Value, at: &str) -> Result<Group, ProcessError> {
        let tint = color(layer, "tintcolor", at)?.unwrap_or([255; 4]);
        let name = text(layer, "name");
        Ok(Group {
            path: match (self.path.as_str(), text(layer, "type")) {
                (_, t) if t != "group" => self.path.clone(),
                ("", _) => name.to_owned(),
                (path, _) => format!("{path}/{name}"),
            },
            visible: self.visible && flag(layer, "visible", true),
            opacity: self.opacity * float_or(layer, "opacity", 1.0),
            offset: (
                self.offset.0 + float_or(layer, "offsetx", 0.0),
                self.offset.1 + float_or(layer, "offsety", 0.0),
            ),
            parallax: (
                self.parallax.0 * float_or(layer, "parallaxx", 1.0),
                self.parallax.1 * float_or(layer, "parallaxy", 1.0),
            ),
            tint: std::array::from_fn(|i| {
                ((u16::from(self.tint[i]) * u16::from(tint[i]) + 127) / 255) as u8
            }),
        })
    }
}

/// Reads a Tiled tileset or template (`root`) by its extension, XML or
/// JSON, as JSON.
fn read_tiled(ctx: &mut Context<'_>, file: &AssetPath, root: &str) -> Result<Value, ProcessError> {
    let bytes = ctx.read(file.as_str())?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| fail(file.as_str(), format!("is not UTF-8 text: {e}")))?;
    let json = matches!(
        file.extension().map(str::to_ascii_lowercase).as_deref(),
        Some("tsj" | "tj" | "json")
    );
    if json {
        serde_json::from_str(text)
            .map_err(|e| fail(file.as_str(), format!("is not valid JSON: {e}")))
    } else {
        let doc = super::parse_xml(text).map_err(|e| fail(file.as_str(), e))?;
        let found = doc.root_element().tag_name().name();
        if found != root {
            return Err(fail(
                file.as_str(),
                format!("is not a Tiled {root}: its root element is `<{found}>`"),
            ));
        }
        Ok(xml_to_json(doc.root_element()).map_err(|e| fail(file.as_str(), e))?)
    }
}

/// An XML element of a Tiled file as the JSON Tiled writes for it (see the
/// module docs).
pub(super) fn xml_to_json(node: roxmltree::Node<'_, '_>) -> Result<Value, String> {
    let mut out = Object::new();
    let line = node.document().text_pos_at(node.range().start).row;
    out.insert("@line".into(), line.into());
    for a in node.attributes() {
        out.insert(a.name().into(), a.value().into());
    }
    let element = node.tag_name().name();
    match element {
        "layer" => {
            out.insert("type".into(), "tilelayer".into());
        }
        "objectgroup" | "imagelayer" | "group" => {
            out.insert("type".into(), element.into());
        }
        _ => {}
    }
    let push = |out: &mut Object<String, Value>, key: &str, value: Value| {
        let list = out.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(value);
        }
    };
    for c in node.children().filter(|c| c.is_element()) {
        match (element, c.tag_name().name()) {
            (_, "properties") => {
                for p in c.children().filter(|p| p.has_tag_name("property")) {
                    push(&mut out, "properties", property_json(p)?);
                }
            }
            ("template", "tileset") => {
                out.insert("tileset".into(), xml_to_json(c)?);
            }
            ("map", "tileset") => push(&mut out, "tilesets", xml_to_json(c)?),
            ("map" | "group", "layer" | "objectgroup" | "imagelayer" | "group") => {
                push(&mut out, "layers", xml_to_json(c)?);
            }
            ("tileset" | "tile" | "imagelayer", "image") => {
                out.insert("image".into(), c.attribute("source").unwrap_or("").into());
                let line = node.document().text_pos_at(c.range().start).row;
                out.insert("@image-line".into(), line.into());
                for (from, to) in [("width", "imagewidth"), ("height", "imageheight")] {
                    if let Some(v) = c.attribute(from) {
                        out.insert(to.into(), v.into());
                    }
                }
            }
            ("tileset", "tileoffset") => {
                out.insert("tileoffset".into(), xml_to_json(c)?);
            }
            ("tileset", "tile") => push(&mut out, "tiles", xml_to_json(c)?),
            ("tile", "objectgroup") => {
                out.insert("objectgroup".into(), xml_to_json(c)?);
            }
            ("tile", "animation") => {
                let frames = c.children().filter(|f| f.has_tag_name("frame"));
                let frames: Result<Vec<Value>, String> = frames.map(xml_to_json).collect();
                out.insert("animation".into(), Value::Array(frames?));
            }
            ("layer", "data") => {
                for key in ["encoding", "compression"] {
                    if let Some(v) = c.attribute(key) {
                        out.insert(key.into(), v.into());
                    }
                }
                let chunks: Vec<_> = c.children().filter(|k| k.has_tag_name("chunk")).collect();
                if chunks.is_empty() {
                    out.insert("data".into(), data_json(c));
                } else {
                    for chunk in chunks {
                        let mut json = xml_to_json(chunk)?;
                        json["data"] = data_json(chunk);
                        push(&mut out, "chunks", json);
                    }
                }
            }
            ("objectgroup" | "template", "object") => {
                let json = xml_to_json(c)?;
                if element == "template" {
                    out.insert("object".into(), json);
                } else {
                    push(&mut out, "objects", json);
                }
            }
            ("object", "ellipse" | "point") => {
                out.insert(c.tag_name().name().into(), true.into());
            }
            ("object", "polygon" | "polyline") => {
                let mut points = Vec::new();
                for pair in c.attribute("points").unwrap_or("").split_whitespace() {
                    let (x, y) = pair
                        .split_once(',')
                        .ok_or(format!("line {line}: point `{pair}` is not `x,y`"))?;
                    points.push(serde_json::json!({"x": x, "y": y}));
                }
                out.insert(c.tag_name().name().into(), Value::Array(points));
            }
            ("object", "text") => {
                out.insert(
                    "text".into(),
                    serde_json::json!({"text": c.text().unwrap_or("")}),
                );
            }
            _ => {}
        }
    }
    Ok(Value::Object(out))
}

/// A `<data>` or `<chunk>`'s cells: the text (CSV or base64), or the
/// `<tile gid>` elements as an array.
fn data_json(node: roxmltree::Node<'_, '_>) -> Value {
    let tiles: Vec<Value> = (node.children())
        .filter(|t| t.has_tag_name("tile"))
        .map(|t| t.attribute("gid").unwrap_or("0").into())
        .collect();
    if tiles.is_empty() {
        node.text().unwrap_or("").into()
    } else {
        Value::Array(tiles)
    }
}

/// A `<property>`: its value in `value` or its text (multi-line strings);
/// a class's members as a JSON object.
fn property_json(p: roxmltree::Node<'_, '_>) -> Result<Value, String> {
    let mut json = xml_to_json(p)?;
    if p.attribute("type") == Some("class") {
        let mut members = Object::new();
        for inner in p.children().filter(|c| c.has_tag_name("properties")) {
            for m in inner.children().filter(|c| c.has_tag_name("property")) {
                let m = property_json(m)?;
                // As Tiled's JSON writes members: numbers and booleans typed.
                let value = m.get("value").cloned().unwrap_or_default();
                let typed = match (text(&m, "type"), value.as_str()) {
                    ("int" | "float" | "object" | "bool", Some(v)) => {
                        serde_json::from_str(v).unwrap_or(value)
                    }
                    _ => value,
                };
                members.insert(text(&m, "name").to_owned(), typed);
            }
        }
        json["value"] = Value::Object(members);
    } else if p.attribute("value").is_none() {
        json["value"] = p.text().unwrap_or("").into();
    }
    Ok(json)
}
