//! The levels of an LDtk project, each made into a `tilemap` resource
//! ([`assets_runtime::tilemap`]), named `<project>#<level identifier>`.
//!
//! LDtk's model is not Tiled's grid of one tile per cell: auto-layer rules
//! stack tiles in a cell and place them off the grid, and each layer has
//! its own grid size. So its tile layers become *placed-tile* layers (each
//! tile at its pixel position, in LDtk's draw order, with its flips and
//! opacity), its IntGrid values a *values* layer on the layer's own grid,
//! and its entities objects. In detail:
//! - tilesets: every tileset with an image (`relPath`; LDtk's built-in icon
//!   atlas has none and is left out), gids numbered in definition order,
//!   an image referenced by its asset path; a tile's custom data is its
//!   `data` property, and each enum value the tileset tags it with (LDtk's
//!   `enumTags`: `Water`, `Lava`, a surface) a `bool` property of that
//!   name, true, after it;
//! - a level's layers in draw order, bottom first (LDtk lists them top
//!   first): its background image, if any, then per layer an IntGrid's
//!   values (named as the layer), its tiles (a tile, auto or IntGrid layer
//!   with auto-tiles), or its entities; the layer's total offset and
//!   opacity carried, and its visibility; its definition's parallax as
//!   Tiled's factor (`1 - LDtk's`), LDtk's own values kept as properties
//!   ([`parallax`]);
//! - an entity: an object at its top-left corner (LDtk's position is its
//!   pivot's), its identifier as name and class, its fields as properties
//!   (with its `iid`, for references), and, when its editor tile is a
//!   whole tile of a tileset, that tile's gid;
//! - an entity reference (an `EntityRef` field, of an entity or of the
//!   level) to an entity of the same level is an `object` property holding
//!   that entity's object id, as Tiled writes one (`0` when unset), so a
//!   game follows it with `TileMap::object`; one to another level's entity
//!   stays LDtk's JSON (`entityIid`, `levelIid`...), which the `iid`
//!   properties of levels and entities resolve; so do arrays of
//!   references, which no property type holds;
//! - a level's fields are the map's properties, with `iid`, `worldX` and
//!   `worldY`; its background colour is the map's;
//! - a project saved with separate level files reads each (an input, so an
//!   edit reruns the project); paths are relative to the project, as LDtk
//!   writes them.

use assets_runtime::tilemap::write::{
    LayerData, LayerSpec, ObjectSpec, PropertySpec, TileMapSpec, TileSpec, TilesetSpec,
};
use assets_runtime::tilemap::{
    Cell, FLIPPED_HORIZONTALLY, FLIPPED_VERTICALLY, Orientation, PlacedTile, PropertyType,
    RenderOrder, Shape, StaggerAxis, StaggerIndex, parse_color,
};
use serde_json::Value;

use super::tiled::{array, fail, named_image, text};
use crate::processor::{Context, ProcessError};

fn int(value: &Value, key: &str) -> i64 {
    value.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn uint(value: &Value, key: &str, at: &str) -> Result<u32, ProcessError> {
    u32::try_from(int(value, key))
        .map_err(|_| fail(at, format!("`{key}` is {}, not a size", int(value, key))))
}

fn float(value: &Value, key: &str, default: f32) -> f32 {
    value
        .get(key)
        .and_then(Value::as_f64)
        .map_or(default, |v| v as f32)
}

/// A pair `[x, y]` of numbers.
fn pair(value: &Value, key: &str) -> (f64, f64) {
    let get = |i: usize| {
        value
            .get(key)
            .and_then(|v| v.get(i))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    (get(0), get(1))
}

/// The entities of one level, by `iid`: the object id each becomes.
struct LevelEntities<'v> {
    level_iid: &'v str,
    ids: std::collections::HashMap<&'v str, u32>,
}

impl<'v> LevelEntities<'v> {
    /// The entities of `level`, numbered from 1 in the order
    /// [`level_map`] makes their objects: layers bottom first, each
    /// layer's entities in order.
    fn of(level: &'v Value) -> LevelEntities<'v> {
        let layers = array(level, "layerInstances").iter().rev();
        let entities = layers
            .filter(|li| text(li, "__type") == "Entities")
            .flat_map(|li| array(li, "entityInstances"));
        LevelEntities {
            level_iid: text(level, "iid"),
            ids: entities.map(|e| text(e, "iid")).zip(1..).collect(),
        }
    }

    /// The object id an `EntityRef` field's value points at, if it is an
    /// entity of this level; `Some(0)` for no entity.
    fn object_of(&self, reference: &Value) -> Option<u32> {
        if reference.is_null() {
            return Some(0);
        }
        if text(reference, "levelIid") != self.level_iid {
            return None;
        }
        self.ids.get(text(reference, "entityIid")).copied()
    }
}

/// LDtk field instances as properties: typed where the type is one a
/// property has, else the value as JSON (`class`). A reference to an
/// entity of `entities`' level is an `object` property.
fn fields(value: &Value, entities: &LevelEntities<'_>) -> Vec<PropertySpec> {
    (array(value, "fieldInstances").iter())
        .map(|f| {
            let raw = f.get("__value").unwrap_or(&Value::Null);
            if text(f, "__type") == "EntityRef"
                && let Some(id) = entities.object_of(raw)
            {
                return property(text(f, "__identifier"), PropertyType::Object, id);
            }
            let kind = match text(f, "__type") {
                "Int" => PropertyType::Int,
                "Float" => PropertyType::Float,
                "Bool" => PropertyType::Bool,
                "Color" => PropertyType::Color,
                "FilePath" => PropertyType::File,
                "String" | "Multilines" => PropertyType::String,
                t if t.starts_with("LocalEnum.") || t.starts_with("ExternEnum.") => {
                    PropertyType::String
                }
                _ => PropertyType::Class,
            };
            let value = match raw {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            PropertySpec {
                name: text(f, "__identifier").to_owned(),
                kind,
                value,
            }
        })
        .collect()
}

fn property(name: &str, kind: PropertyType, value: impl ToString) -> PropertySpec {
    PropertySpec {
        name: name.to_owned(),
        kind,
        value: value.to_string(),
    }
}

/// The tiles of LDtk tileset `ts` that have data of their own, by id: a
/// custom data text (`data`), then one `true` property per enum value
/// that tags them, in the order the tileset lists its tags. A tag naming a
/// tile past the tileset's `count` fails the project at `at`.
fn tile_data(ts: &Value, count: u32, at: &str) -> Result<Vec<TileSpec>, ProcessError> {
    let mut tiles: std::collections::BTreeMap<u32, TileSpec> = Default::default();
    fn tile(tiles: &mut std::collections::BTreeMap<u32, TileSpec>, id: u32) -> &mut TileSpec {
        tiles.entry(id).or_insert_with(|| TileSpec {
            id,
            ..TileSpec::default()
        })
    }
    for c in array(ts, "customData") {
        if let Some(id) = c.get("tileId").and_then(Value::as_u64) {
            let id = u32::try_from(id).map_err(|_| fail(at, "has a custom data tile id past any tile"))?;
            let data = property("data", PropertyType::String, text(c, "data"));
            tile(&mut tiles, id).properties.push(data);
        }
    }
    for (t, tag) in array(ts, "enumTags").iter().enumerate() {
        let value = text(tag, "enumValueId");
        for id in array(tag, "tileIds").iter().filter_map(Value::as_u64) {
            let id = u32::try_from(id).ok().filter(|&id| id < count).ok_or_else(|| {
                fail(
                    &format!("{at}.enumTags[{t}]"),
                    format!("tags tile {id} `{value}`, past the tileset's {count} tiles"),
                )
            })?;
            let tagged = property(value, PropertyType::Bool, true);
            tile(&mut tiles, id).properties.push(tagged);
        }
    }
    Ok(tiles.into_values().collect())
}

/// A layer's parallax from its LDtk definition. LDtk moves a layer by the
/// camera's position times its factor (0 by default: no parallax), which
/// is Tiled's parallax factor of `1 - factor` (1: moves with the map, 0:
/// fixed to the screen), what [`LayerSpec::parallax`] holds. LDtk also
/// scales such a layer by `1 - factor` (`parallaxScaling`, on by default),
/// or else shifts it by half its size times the factor, which Tiled's
/// model has no place for: a layer with parallax keeps LDtk's own three
/// values as properties, for a game that draws as LDtk does.
fn parallax(def: &Value, spec: &mut LayerSpec) {
    let factor = (
        float(def, "parallaxFactorX", 0.0),
        float(def, "parallaxFactorY", 0.0),
    );
    if factor == (0.0, 0.0) {
        return;
    }
    spec.parallax = (1.0 - factor.0, 1.0 - factor.1);
    let scaling = def
        .get("parallaxScaling")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    spec.properties.extend([
        property("parallaxFactorX", PropertyType::Float, factor.0),
        property("parallaxFactorY", PropertyType::Float, factor.1),
        property("parallaxScaling", PropertyType::Bool, scaling),
    ]);
}

/// A tileset of the project: the uid its layers and entities name it by,
/// and what every level's map holds of it.
struct Tileset {
    uid: i64,
    spec: TilesetSpec,
}

impl Tileset {
    /// The gid of the tile whose top-left corner is at `(x, y)` in the
    /// image, if that is a tile's corner.
    fn gid_at(&self, x: i64, y: i64) -> Option<u32> {
        let s = &self.spec;
        let step = i64::from(s.tile_size.0 + s.spacing);
        let (x, y) = (x - i64::from(s.margin), y - i64::from(s.margin));
        if step == 0 || x < 0 || y < 0 || x % step != 0 || y % step != 0 {
            return None;
        }
        let local = u32::try_from(y / step * i64::from(s.columns) + x / step).ok()?;
        s.first_gid.checked_add(local)
    }
}

/// Every level of the project `doc` (the asset being processed), with its
/// identifier.
pub(super) fn levels(
    ctx: &mut Context<'_>,
    doc: &Value,
) -> Result<Vec<(String, TileMapSpec)>, ProcessError> {
    let project = ctx.asset().clone();
    let grid = match int(doc, "defaultGridSize") {
        0 => 16,
        g => u32::try_from(g).map_err(|_| fail("defaultGridSize", "is not a size"))?,
    };
    let mut tilesets = Vec::new();
    let mut next_gid = 1u32;
    for (i, ts) in array(doc.pointer("/defs").unwrap_or(&Value::Null), "tilesets")
        .iter()
        .enumerate()
    {
        let at = format!("defs.tilesets[{i}]");
        let Some(path) = ts
            .get("relPath")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        let image = named_image(ctx, &project, path, &format!("{at}.relPath"))?;
        let (columns, rows) = (uint(ts, "__cWid", &at)?, uint(ts, "__cHei", &at)?);
        let tile_count = columns
            .checked_mul(rows)
            .ok_or_else(|| fail(&at, "has too many tiles"))?;
        let grid = uint(ts, "tileGridSize", &at)?;
        let tiles = tile_data(ts, tile_count, &at)?;
        let spec = TilesetSpec {
            first_gid: next_gid,
            name: text(ts, "identifier").to_owned(),
            tile_count,
            columns,
            tile_size: (grid, grid),
            spacing: uint(ts, "spacing", &at)?,
            margin: uint(ts, "padding", &at)?,
            offset: (0, 0),
            image,
            image_size: (uint(ts, "pxWid", &at)?, uint(ts, "pxHei", &at)?),
            tiles,
            properties: Vec::new(),
        };
        next_gid = next_gid.checked_add(tile_count.max(1)).ok_or_else(|| {
            fail(
                &at,
                "the project's tilesets have more tiles than gids can count",
            )
        })?;
        tilesets.push(Tileset {
            uid: int(ts, "uid"),
            spec,
        });
    }

    let layer_defs = array(doc.pointer("/defs").unwrap_or(&Value::Null), "layers");
    let mut out = Vec::new();
    for (i, level) in array(doc, "levels").iter().enumerate() {
        let at = format!("levels[{i}]");
        let external = text(level, "externalRelPath");
        let read;
        let (level, at) =
            if level.get("layerInstances").is_none_or(Value::is_null) && !external.is_empty() {
                let file = project.sibling(external).map_err(|e| {
                    fail(
                        &at,
                        format!(
                            "the level file `{external}` is not a path inside the asset root ({e})"
                        ),
                    )
                })?;
                let bytes = ctx.read(file.as_str())?;
                read = serde_json::from_slice::<Value>(&bytes)
                    .map_err(|e| fail(file.as_str(), format!("is not valid JSON: {e}")))?;
                (&read, file.as_str().to_owned())
            } else {
                (level, at)
            };
        let identifier = text(level, "identifier");
        if identifier.is_empty() || identifier.contains(['#', '/']) {
            return Err(fail(
                &at,
                format!("the level's identifier `{identifier}` cannot name a resource"),
            ));
        }
        out.push((
            identifier.to_owned(),
            level_map(ctx, level, &at, grid, &tilesets, layer_defs)?,
        ));
    }
    Ok(out)
}

fn level_map(
    ctx: &mut Context<'_>,
    level: &Value,
    at: &str,
    grid: u32,
    tilesets: &[Tileset],
    layer_defs: &[Value],
) -> Result<TileMapSpec, ProcessError> {
    let project = ctx.asset().clone();
    let (w, h) = (uint(level, "pxWid", at)?, uint(level, "pxHei", at)?);
    let mut layers = Vec::new();
    let layer = |name: &str, id: u32, cell: u32, data| LayerSpec::new(id, name, (cell, cell), data);
    if let Some(bg) = level
        .get("bgRelPath")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    {
        let image = named_image(ctx, &project, bg, &format!("{at}.bgRelPath"))?;
        layers.push(layer(
            "Background",
            0,
            grid,
            LayerData::Image {
                image,
                repeat: (false, false),
            },
        ));
    }
    let in_level = LevelEntities::of(level);
    let mut next_object = 1u32;
    for (j, li) in array(level, "layerInstances").iter().enumerate().rev() {
        let at = format!("{at}.layerInstances[{j}]");
        let name = text(li, "__identifier");
        let cell = uint(li, "__gridSize", &at)?;
        let id = u32::try_from(int(li, "layerDefUid")).unwrap_or(0);
        let mut add = |data: LayerData| {
            let mut spec = layer(name, id, cell, data);
            spec.visible = li.get("visible").and_then(Value::as_bool).unwrap_or(true);
            spec.opacity = float(li, "__opacity", 1.0);
            spec.offset = (
                float(li, "__pxTotalOffsetX", 0.0),
                float(li, "__pxTotalOffsetY", 0.0),
            );
            spec.class = text(li, "__type").to_owned();
            let def = layer_defs.iter().find(|d| int(d, "uid") == i64::from(id));
            if let Some(def) = def {
                parallax(def, &mut spec);
            }
            layers.push(spec);
        };
        let values = array(li, "intGridCsv");
        if !values.is_empty() {
            let size = (uint(li, "__cWid", &at)?, uint(li, "__cHei", &at)?);
            let n = u64::from(size.0) * u64::from(size.1);
            ctx.reserve_memory(n * 4, &format!("a {}x{} IntGrid ({at})", size.0, size.1))?;
            let values: Vec<u32> = values
                .iter()
                .map(|v| v.as_u64().and_then(|v| u32::try_from(v).ok()).unwrap_or(0))
                .collect();
            if values.len() as u64 != n {
                return Err(fail(
                    &at,
                    format!(
                        "the IntGrid has {} values where its size says {n}",
                        values.len()
                    ),
                ));
            }
            add(LayerData::Values {
                origin: (0, 0),
                size,
                values,
            });
        }
        let tiles: Vec<&Value> = array(li, "gridTiles")
            .iter()
            .chain(array(li, "autoLayerTiles"))
            .collect();
        if !tiles.is_empty() {
            let uid = li
                .get("overrideTilesetUid")
                .and_then(Value::as_i64)
                .or_else(|| li.get("__tilesetDefUid").and_then(Value::as_i64));
            let tileset = tilesets
                .iter()
                .find(|t| Some(t.uid) == uid)
                .ok_or_else(|| {
                    fail(
                        &at,
                        "its tiles are from a tileset the project does not define with an image",
                    )
                })?;
            let count = tileset.spec.tile_count;
            let mut placed = Vec::with_capacity(tiles.len());
            for t in tiles {
                let local = u32::try_from(int(t, "t"))
                    .ok()
                    .filter(|&l| l < count)
                    .ok_or_else(|| {
                        fail(
                            &at,
                            format!(
                                "a tile's id {} is not one of its tileset's {count}",
                                int(t, "t")
                            ),
                        )
                    })?;
                let (x, y) = pair(t, "px");
                let f = int(t, "f");
                let flips = if f & 1 != 0 { FLIPPED_HORIZONTALLY } else { 0 }
                    | if f & 2 != 0 { FLIPPED_VERTICALLY } else { 0 };
                placed.push(PlacedTile {
                    x: x as i32,
                    y: y as i32,
                    tile: Cell((tileset.spec.first_gid + local) | flips),
                    opacity: float(t, "a", 1.0),
                });
            }
            add(LayerData::Placed(placed));
        }
        let entities = array(li, "entityInstances");
        if text(li, "__type") == "Entities" {
            let mut objects = Vec::with_capacity(entities.len());
            for e in entities {
                let (px, py) = pair(e, "px");
                let (pivot_x, pivot_y) = pair(e, "__pivot");
                let (width, height) = (float(e, "width", 0.0), float(e, "height", 0.0));
                let tile = e.get("__tile").filter(|t| !t.is_null());
                let gid = tile
                    .and_then(|t| {
                        let tileset = tilesets.iter().find(|s| s.uid == int(t, "tilesetUid"))?;
                        let grid = i64::from(tileset.spec.tile_size.0);
                        let whole = int(t, "w") == grid && int(t, "h") == grid;
                        whole
                            .then(|| tileset.gid_at(int(t, "x"), int(t, "y")))
                            .flatten()
                    })
                    .unwrap_or(0);
                let mut properties = vec![property("iid", PropertyType::String, text(e, "iid"))];
                properties.extend(fields(e, &in_level));
                objects.push(ObjectSpec {
                    id: next_object,
                    gid,
                    shape: if width == 0.0 && height == 0.0 {
                        Shape::Point
                    } else {
                        Shape::Rectangle
                    },
                    visible: true,
                    x: (px - pivot_x * f64::from(width)) as f32,
                    y: (py - pivot_y * f64::from(height)) as f32,
                    width,
                    height,
                    rotation: 0.0,
                    name: text(e, "__identifier").to_owned(),
                    class: text(e, "__identifier").to_owned(),
                    text: String::new(),
                    points: Vec::new(),
                    properties,
                });
                next_object += 1;
            }
            add(LayerData::Objects(objects));
        }
    }
    let mut properties = vec![
        property("iid", PropertyType::String, text(level, "iid")),
        property("worldX", PropertyType::Int, int(level, "worldX")),
        property("worldY", PropertyType::Int, int(level, "worldY")),
    ];
    properties.extend(fields(level, &in_level));
    let background = match text(level, "__bgColor") {
        "" => None,
        c => Some(
            parse_color(c)
                .ok_or_else(|| fail(at, format!("`__bgColor` is `{c}`, not a colour")))?,
        ),
    };
    Ok(TileMapSpec {
        orientation: Orientation::Orthogonal,
        render_order: RenderOrder::RightDown,
        size: (w.div_ceil(grid.max(1)), h.div_ceil(grid.max(1))),
        tile_size: (grid, grid),
        hex_side_length: 0,
        stagger: (StaggerAxis::Y, StaggerIndex::Odd),
        infinite: false,
        background,
        class: String::new(),
        properties,
        tilesets: tilesets.iter().map(|t| t.spec.clone()).collect(),
        layers,
    })
}
