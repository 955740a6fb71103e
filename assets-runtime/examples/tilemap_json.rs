//! Prints a parcel's tile map as JSON, for comparing with what other
//! readers make of the map's source (`bench/tilemaps.sh`):
//!
//! ```sh
//! cargo run -p assets-runtime --example tilemap_json -- PARCEL "maps/Level 1.tmx"
//! ```
//!
//! The map's size and tile size, its tilesets (first gid, name, tile count,
//! columns), each tileset's tiles' true `bool` properties (`"flags"`: its
//! name to `[tile id, property]`s; an LDtk tileset's enum tags), and each
//! layer in draw order: its name, kind, parallax, and its content (a grid
//! layer's non-empty cells by `"x,y"`, a placed-tile layer's `[x, y,
//! gid]`s, an object layer's `[id, name, x, y, gid, refs]`s, where `refs`
//! maps each `object` property to the object id it holds, an image
//! layer's image).

use std::process::ExitCode;

use assets_runtime::tilemap::{LayerKind, PropertyType};
use assets_runtime::{ParcelBuf, ResourceId};
use serde_json::{Map, Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [parcel, name] = args.as_slice() else {
        eprintln!("usage: tilemap_json PARCEL RESOURCE_NAME");
        return ExitCode::from(2);
    };
    let buf = match ParcelBuf::open(std::path::Path::new(parcel)) {
        Ok(buf) => buf,
        Err(e) => {
            eprintln!("{parcel}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let map = match buf.parcel().tilemap(ResourceId::of_runtime(name)) {
        Ok(map) => map,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let round = |v: f32| (f64::from(v) * 1000.0).round() / 1000.0;
    let mut layers = Vec::new();
    for layer in map.layers() {
        let mut out = Map::new();
        out.insert("name".into(), layer.name().into());
        out.insert("groups".into(), layer.groups().into());
        let (px, py) = layer.parallax();
        out.insert("parallax".into(), json!([round(px), round(py)]));
        let (kind, content): (&str, Value) = match layer.kind() {
            LayerKind::Tiles | LayerKind::Values => {
                let (ox, oy) = layer.origin();
                let w = layer.size().0.max(1) as usize;
                let cells: Map<String, Value> = (layer.cells().enumerate())
                    .filter(|(_, c)| c.0 != 0)
                    .map(|(i, c)| {
                        let (x, y) = (ox + (i % w) as i32, oy + (i / w) as i32);
                        (format!("{x},{y}"), c.0.into())
                    })
                    .collect();
                let kind = match layer.kind() {
                    LayerKind::Tiles => "tiles",
                    _ => "values",
                };
                (kind, Value::Object(cells))
            }
            LayerKind::Placed => {
                let placed = layer.placed().map(|p| json!([p.x, p.y, p.tile.0]));
                ("placed", placed.collect())
            }
            LayerKind::Objects => {
                let objects = layer.objects().map(|o| {
                    let (x, y) = o.position();
                    let refs: Map<String, Value> = (o.properties())
                        .filter(|p| p.kind == PropertyType::Object)
                        .map(|p| (p.name.to_owned(), p.as_int().unwrap_or(-1).into()))
                        .collect();
                    json!([o.id(), o.name(), round(x), round(y), o.tile().0, refs])
                });
                ("objects", objects.collect())
            }
            LayerKind::Image => ("image", layer.image().into()),
        };
        out.insert("kind".into(), kind.into());
        out.insert("content".into(), content);
        layers.push(Value::Object(out));
    }
    let tilesets: Vec<Value> = (map.tilesets())
        .map(|t| json!([t.first_gid(), t.name(), t.tile_count(), t.columns()]))
        .collect();
    let flags: Map<String, Value> = (map.tilesets())
        .map(|t| {
            let flagged = t.tiles().flat_map(|tile| {
                (tile.properties())
                    .filter(|p| p.as_bool() == Some(true))
                    .map(move |p| json!([tile.id(), p.name]))
            });
            (t.name().to_owned(), flagged.collect())
        })
        .collect();
    let (size, tile_size) = (map.size(), map.tile_size());
    let doc = json!({
        "size": [size.0, size.1],
        "tile_size": [tile_size.0, tile_size.1],
        "tilesets": tilesets,
        "flags": flags,
        "layers": layers,
    });
    println!("{doc}");
    ExitCode::SUCCESS
}
