//! Tile maps through the real binary, laid out as Tiled and LDtk save them:
//! a map names its tileset (another file), which names its image; an LDtk
//! project names its tileset image and its separately saved levels, which
//! name their backgrounds. Paths are relative to the naming file, with
//! spaces and `..`, as the editors write them. A Tiled map becomes a
//! `tilemap` resource, its tileset built in; a parcel that holds only the
//! maps holds the images they draw with, and a map kept as text holds
//! everything it names, each processed by its own rule, found by the path
//! its map wrote.
//!
//! Maps in every cell encoding Tiled writes are read back cell by cell and
//! compared with what pytiled-parser (PyPI, the Python Arcade project's
//! Tiled reader, installed by `tests/install-tools.sh`) reads from the same
//! files; without it that comparison is skipped, and says so.

use std::collections::BTreeMap;
use std::io::Write;

use assets_runtime::tilemap::{Cell, LayerKind, Orientation};
use assets_runtime::{ParcelBuf, ResourceId};
use assets_test_support::Project;

const TMX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" renderorder="right-down" width="3" height="2" tilewidth="16" tileheight="16" infinite="0" nextlayerid="3" nextobjectid="1">
 <tileset firstgid="1" source="../tilesets/Terrain.tsx"/>
 <layer id="1" name="Ground" width="3" height="2">
  <data encoding="csv">
1,2,1,
2,1,2
</data>
 </layer>
 <imagelayer id="2" name="Sky">
  <image source="../images/sky.png" width="8" height="8"/>
 </imagelayer>
</map>
"#;

const TSX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" tiledversion="1.10.2" name="Terrain" tilewidth="16" tileheight="16" tilecount="2" columns="2">
 <image source="terrain tiles.png" width="32" height="16"/>
</tileset>
"#;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "raw/**/*.tmx"
processor = "tilemap"
output = "text"

[package.metadata.assets.parcels]
levels = ["maps/**", "*.ldtk"]
raw = ["raw/**"]
"#,
    )
    .file("assets/maps/Level 1.tmx", TMX)
    .file("assets/raw/Level 1.tmx", TMX)
    .file("assets/tilesets/Terrain.tsx", TSX)
    .png("assets/tilesets/terrain tiles.png", 32, 16, 1)
    .png("assets/images/sky.png", 8, 8, 2)
    .file(
        "assets/World.ldtk",
        r#"{"jsonVersion": "1.5.3", "externalLevels": true,
            "defs": {"tilesets": [{"identifier": "Cavernas", "relPath": "atlas/Cavernas_by_Adam_Saltsman.png",
                                   "__cWid": 2, "__cHei": 2, "tileGridSize": 8, "pxWid": 16, "pxHei": 16,
                                   "customData": [{"tileId": 1, "data": "splash"}],
                                   "enumTags": [{"enumValueId": "Water", "tileIds": [1, 3]},
                                                {"enumValueId": "Lava", "tileIds": [3]}]},
                                  {"identifier": "Internal_Icons", "relPath": null}],
                     "layers": [{"uid": 7, "identifier": "Far", "parallaxFactorX": 0.5, "parallaxFactorY": 0.25, "parallaxScaling": false}]},
            "levels": [{"identifier": "Level_0", "externalRelPath": "World/Level_0.ldtkl", "bgRelPath": null}]}"#,
    )
    .png("assets/atlas/Cavernas_by_Adam_Saltsman.png", 16, 16, 3)
    .file(
        "assets/World/Level_0.ldtkl",
        r#"{"identifier": "Level_0", "iid": "5ab1e0f0-level", "bgRelPath": "backgrounds/cave.png",
            "layerInstances": [{"__identifier": "Far", "__type": "Entities", "__gridSize": 8, "layerDefUid": 7, "entityInstances": [
                {"__identifier": "Switch", "iid": "s-1", "px": [0, 0], "__pivot": [0, 0], "width": 8, "height": 8,
                 "fieldInstances": [{"__identifier": "opens", "__type": "EntityRef", "__value":
                     {"entityIid": "d-1", "layerIid": "far", "levelIid": "5ab1e0f0-level", "worldIid": "w"}}]},
                {"__identifier": "Door", "iid": "d-1", "px": [16, 0], "__pivot": [0, 0], "width": 8, "height": 16,
                 "fieldInstances": []}]}]}"#,
    )
    .png("assets/backgrounds/cave.png", 8, 8, 4);
    p
}

#[test]
fn a_parcel_of_maps_holds_every_file_they_name_and_a_missing_one_fails_by_name() {
    let p = project();
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("levels")).unwrap();
    let parcel = buf.parcel();
    // The map, its tileset built in, naming its image by its asset path,
    // which the parcel holds though its globs do not name it.
    let map = parcel.by_name("maps/Level 1.tmx").expect("the map");
    assert_eq!(map.kind, "tilemap");
    let map = map.tilemap().unwrap();
    let tileset = map.tileset("Terrain").expect("its tileset");
    assert_eq!(tileset.image(), "tilesets/terrain tiles.png");
    assert_eq!(parcel.by_name(tileset.image()).unwrap().kind, "image");
    assert_eq!(map.layer("Sky").unwrap().image(), "images/sky.png");
    assert!(parcel.by_name("images/sky.png").is_some());
    assert!(
        parcel.by_name("tilesets/Terrain.tsx").is_none(),
        "a tileset built into the map is not shipped beside it"
    );
    let ground = map.layer("Ground").unwrap();
    let cells: Vec<u32> = ground.cells().map(Cell::gid).collect();
    assert_eq!(cells, [1, 2, 1, 2, 1, 2]);

    // Kept as text: the file as written, and what it names by its paths.
    let raw_buf = ParcelBuf::open(&run.parcel("raw")).unwrap();
    let raw = raw_buf.parcel();
    let text = raw.by_name("raw/Level 1.tmx").expect("the map as text");
    assert_eq!(text.kind, "text");
    assert_eq!(text.text().unwrap(), TMX);
    let tileset = raw
        .by_uri("raw/Level 1.tmx", "../tilesets/Terrain.tsx")
        .expect("its tileset");
    assert_eq!(tileset.kind, "text");
    let image = raw
        .by_uri(tileset.name, "terrain tiles.png")
        .expect("the tileset's image");
    assert_eq!(image.kind, "image");
    for (from, path) in [
        ("World.ldtk", "atlas/Cavernas_by_Adam_Saltsman.png"),
        ("World.ldtk", "World/Level_0.ldtkl"),
        // LDtk writes a level file's paths relative to the project.
        ("World.ldtk", "backgrounds/cave.png"),
    ] {
        assert!(parcel.by_uri(from, path).is_some(), "{from} names {path}");
    }

    // Each level of the LDtk project is a tile map too, read from its file.
    let level = parcel
        .tilemap(ResourceId::of_runtime("World.ldtk#Level_0"))
        .unwrap();
    assert_eq!(
        level.layer("Background").unwrap().image(),
        "backgrounds/cave.png"
    );
    // A layer with LDtk parallax: Tiled's factor (1 - LDtk's), and LDtk's
    // own values as properties.
    let far = level.layer("Far").unwrap();
    assert_eq!(far.parallax(), (0.5, 0.75));
    let prop = |n: &str| far.properties().get(n).map(|p| p.value.to_owned());
    assert_eq!(prop("parallaxFactorX").as_deref(), Some("0.5"));
    assert_eq!(prop("parallaxFactorY").as_deref(), Some("0.25"));
    assert_eq!(prop("parallaxScaling").as_deref(), Some("false"));
    assert_eq!(level.layer("Background").unwrap().parallax(), (1.0, 1.0));
    // An entity's reference to another of its level: an object property
    // the game follows to that entity's object.
    let switch = far.objects().find(|o| o.name() == "Switch").unwrap();
    let opens = switch.properties().get("opens").unwrap();
    assert_eq!(opens.kind, assets_runtime::tilemap::PropertyType::Object);
    let door = level.object(opens.as_int().unwrap() as u32).unwrap();
    assert_eq!((door.name(), door.size()), ("Door", (8.0, 16.0)));
    // Its tileset's enum tags are true `bool` properties of the tiles they
    // tag, after a tile's custom data.
    let cavernas = level.tileset("Cavernas").unwrap();
    let props = |id: u32| -> Vec<(String, String)> {
        (cavernas
            .tile(id)
            .map(|t| t.properties().collect::<Vec<_>>()))
        .unwrap_or_default()
        .iter()
        .map(|p| (p.name.to_owned(), p.value.to_owned()))
        .collect()
    };
    let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
    assert_eq!(props(1), [pair("data", "splash"), pair("Water", "true")]);
    assert_eq!(props(3), [pair("Water", "true"), pair("Lava", "true")]);
    assert!(props(0).is_empty());
    let water = cavernas.tile(3).unwrap().properties().get("Water").unwrap();
    assert_eq!(water.as_bool(), Some(true));

    // The tileset's image goes: the tileset fails, naming the line and the
    // file; the map, whose own output does not change, does not rerun.
    p.remove("assets/tilesets/terrain tiles.png");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert_eq!(
        run.failure_message("tilesets/Terrain.tsx"),
        "line 3 names the image `terrain tiles.png`, and `tilesets/terrain tiles.png` does not exist; add the file or fix the path"
    );
    assert_eq!(
        run.failure_message("maps/Level 1.tmx"),
        "tilesets/Terrain.tsx, line 3 names the image `terrain tiles.png`, and `tilesets/terrain tiles.png` does not exist; add the file or fix the path"
    );
    // Back, redrawn: the image runs; the tileset's last good build names
    // an asset again, and a reference's contents are not its input.
    p.png("assets/tilesets/terrain tiles.png", 32, 16, 5);
    let run = p.build_ok();
    assert_eq!(run.processed(), ["tilesets/terrain tiles.png"]);

    // A map that is no map says so.
    p.file("assets/maps/Level 1.tmx", TSX);
    let run = p.run(&["build"]);
    assert_eq!(
        run.failure_message("maps/Level 1.tmx"),
        "is not a Tiled map: its root element is `<tileset>`, not `<map>`"
    );
}

/// A layer's cells drawn from a fixed seed: some empty, some of the second
/// tileset, some flipped (each of Tiled's three flip bits).
fn cells(w: u32, h: u32, seed: u32) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..w * h)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            match x % 7 {
                0 | 1 => 0,
                2 => (1 + x % 8) | 0x8000_0000,
                3 => (9 + x % 4) | 0x4000_0000 | 0x2000_0000,
                _ => 1 + x % 8,
            }
        })
        .collect()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `cells` as a `<data>` body in `encoding` (`csv`, `base64`,
/// `base64+zlib`, `base64+gzip`), with its attributes.
fn data(cells: &[u32], w: usize, encoding: &str) -> (String, String) {
    let raw: Vec<u8> = cells.iter().flat_map(|c| c.to_le_bytes()).collect();
    match encoding {
        "csv" => {
            let rows: Vec<String> = (cells.chunks(w))
                .map(|r| r.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                .collect();
            (
                r#"encoding="csv""#.into(),
                format!("\n{}\n", rows.join(",\n")),
            )
        }
        "base64" => (r#"encoding="base64""#.into(), base64(&raw)),
        "base64+zlib" => {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(&raw).unwrap();
            let attrs = r#"encoding="base64" compression="zlib""#;
            (attrs.into(), base64(&z.finish().unwrap()))
        }
        "base64+gzip" => {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(&raw).unwrap();
            let attrs = r#"encoding="base64" compression="gzip""#;
            (attrs.into(), base64(&z.finish().unwrap()))
        }
        other => panic!("no encoding {other}"),
    }
}

/// Two tilesets as Tiled writes them: one external, one inline.
const TILESETS: &str = r#" <tileset firstgid="1" source="../tilesets/Terrain.tsx"/>
 <tileset firstgid="9" name="Water" tilewidth="16" tileheight="16" tilecount="4" columns="4">
  <image source="../tilesets/water.png" width="64" height="16"/>
 </tileset>
"#;

/// A finite map of two tile layers (one in a group), in `encoding`.
fn finite_map(encoding: &str, orientation: &str, seed: u32) -> (String, [Vec<u32>; 2]) {
    let (w, h) = (13, 7);
    let layers = [cells(w, h, seed), cells(w, h, seed + 1)];
    let (attrs0, body0) = data(&layers[0], w as usize, encoding);
    let (attrs1, body1) = data(&layers[1], w as usize, encoding);
    let map = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" renderorder="right-down" width="{w}" height="{h}" tilewidth="16" tileheight="16" infinite="0" nextlayerid="4" nextobjectid="1">
{TILESETS} <layer id="1" name="Ground" width="{w}" height="{h}">
  <data {attrs0}>{body0}</data>
 </layer>
 <group id="2" name="Above" offsetx="3" offsety="0">
  <layer id="3" name="Decor" width="{w}" height="{h}" opacity="0.5">
   <data {attrs1}>{body1}</data>
  </layer>
 </group>
</map>
"#
    );
    (map, layers)
}

/// An infinite map: one layer of three 16×16 chunks, negative coordinates
/// included, as Tiled saves them.
fn infinite_map() -> (String, Placed) {
    let mut expected = BTreeMap::new();
    let mut chunks = String::new();
    for (i, (x, y)) in [(-16, -16), (0, 0), (32, -16)].into_iter().enumerate() {
        let chunk = cells(16, 16, 40 + i as u32);
        for (k, &c) in chunk.iter().enumerate() {
            if c != 0 {
                expected.insert((x + k as i32 % 16, y + k as i32 / 16), c);
            }
        }
        let (_, body) = data(&chunk, 16, "csv");
        chunks.push_str(&format!(
            "   <chunk x=\"{x}\" y=\"{y}\" width=\"16\" height=\"16\">{body}</chunk>\n"
        ));
    }
    let map = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" renderorder="right-down" width="30" height="20" tilewidth="16" tileheight="16" infinite="1" nextlayerid="2" nextobjectid="1">
{TILESETS} <layer id="1" name="Ground" width="30" height="20">
  <data encoding="csv">
{chunks}  </data>
 </layer>
</map>
"#
    );
    (map, expected)
}

/// A layer's non-empty cells (gids with flip bits) by tile coordinates.
type Placed = BTreeMap<(i32, i32), u32>;

/// What pytiled-parser reads from the map at `path`: each tile layer's
/// non-empty cells by tile coordinates, chunks placed; `None` when it is
/// not installed.
fn pytiled(path: &std::path::Path) -> Option<BTreeMap<String, Placed>> {
    let script = r#"
import sys, json
from pathlib import Path
import pytiled_parser as tp
from pytiled_parser import layer as L
out = {}
def walk(layers):
    for l in layers:
        if isinstance(l, L.LayerGroup):
            walk(l.layers or [])
        elif isinstance(l, L.TileLayer):
            cells = []
            for c in (l.chunks or []):
                for j, row in enumerate(c.data):
                    cells += [[c.coordinates.x + i, c.coordinates.y + j, g] for i, g in enumerate(row) if g]
            for j, row in enumerate(l.data or []):
                cells += [[i, j, g] for i, g in enumerate(row) if g]
            out[l.name] = cells
walk(tp.parse_map(Path(sys.argv[1])).layers)
print(json.dumps(out))
"#;
    let out = assets_test_support::run_venv_python("pytiled-parser", script, &[path.as_os_str()])?;
    let json: BTreeMap<String, Vec<(i32, i32, u32)>> = serde_json::from_slice(&out).unwrap();
    Some(
        (json.into_iter())
            .map(|(name, cells)| {
                (
                    name,
                    cells.into_iter().map(|(x, y, g)| ((x, y), g)).collect(),
                )
            })
            .collect(),
    )
}

/// A layer's non-empty cells by tile coordinates, as the resource has them.
fn placed(layer: &assets_runtime::tilemap::Layer<'_>) -> Placed {
    let (ox, oy) = layer.origin();
    let w = layer.size().0.max(1) as i32;
    (layer.cells().enumerate())
        .filter(|(_, c)| !c.is_empty())
        .map(|(i, c)| ((ox + i as i32 % w, oy + i as i32 / w), c.0))
        .collect()
}

#[test]
fn maps_in_every_encoding_tiled_writes_read_back_cell_for_cell_as_an_independent_parser_reads_them()
{
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.parcels]
maps = ["maps/**"]
"#,
    )
    .file(
        "assets/tilesets/Terrain.tsx",
        TSX.replace(
            "tilecount=\"2\" columns=\"2\"",
            "tilecount=\"8\" columns=\"2\"",
        ),
    )
    .png("assets/tilesets/terrain tiles.png", 32, 64, 1)
    .png("assets/tilesets/water.png", 64, 16, 2);
    let encodings = ["csv", "base64", "base64+zlib", "base64+gzip"];
    let mut expected = BTreeMap::new();
    for (i, encoding) in encodings.into_iter().enumerate() {
        let orientation = ["orthogonal", "isometric", "staggered", "hexagonal"][i];
        let (map, layers) = finite_map(encoding, orientation, i as u32 * 10);
        let name = format!("maps/{encoding} map.tmx");
        p.file(&format!("assets/{name}"), map);
        expected.insert(name, (orientation, layers));
    }
    let (infinite, infinite_cells) = infinite_map();
    p.file("assets/maps/endless.tmx", infinite);
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("maps")).unwrap();
    let parcel = buf.parcel();

    let mut independent = 0;
    for (name, (orientation, layers)) in &expected {
        let map = parcel.tilemap(ResourceId::of_runtime(name)).unwrap();
        let want = match *orientation {
            "orthogonal" => Orientation::Orthogonal,
            "isometric" => Orientation::Isometric,
            "staggered" => Orientation::Staggered,
            _ => Orientation::Hexagonal,
        };
        assert_eq!((map.orientation(), map.size()), (want, (13, 7)), "{name}");
        let ground = map.layer("Ground").unwrap();
        let decor = map.layer("Decor").unwrap();
        assert_eq!(
            ground.cells().map(|c| c.0).collect::<Vec<_>>(),
            layers[0],
            "{name}"
        );
        assert_eq!(
            decor.cells().map(|c| c.0).collect::<Vec<_>>(),
            layers[1],
            "{name}"
        );
        assert_eq!(
            (decor.groups(), decor.offset(), decor.opacity()),
            ("Above", (3.0, 0.0), 0.5)
        );
        // Every cell's tile is one of the two tilesets', where a renderer
        // would cut it from.
        for cell in ground.cells().filter(|c| !c.is_empty()) {
            let (tileset, local) = map.tile(cell).expect("a tile");
            let rect = tileset.tile_rect(local).expect("in its image");
            match tileset.name() {
                "Terrain" => assert_eq!(rect, ((local % 2) * 16, (local / 2) * 16, 16, 16)),
                "Water" => assert_eq!(rect, (local * 16, 0, 16, 16)),
                other => panic!("tileset {other}"),
            }
        }
        if let Some(theirs) = pytiled(&p.path().join("assets").join(name)) {
            assert_eq!(theirs["Ground"], placed(&ground), "{name}: Ground");
            assert_eq!(theirs["Decor"], placed(&decor), "{name}: Decor");
            independent += 1;
        }
    }
    let endless = parcel
        .tilemap(ResourceId::of_runtime("maps/endless.tmx"))
        .unwrap();
    assert!(endless.infinite());
    let layer = endless.layer("Ground").unwrap();
    assert_eq!(layer.kind(), LayerKind::Tiles);
    assert_eq!((layer.origin(), layer.size()), ((-16, -16), (64, 32)));
    assert_eq!(placed(&layer), infinite_cells);
    assert_eq!(
        layer.cell(-16, -16).0,
        *infinite_cells.get(&(-16, -16)).unwrap_or(&0)
    );
    if let Some(theirs) = pytiled(&p.path().join("assets/maps/endless.tmx")) {
        assert_eq!(theirs["Ground"], infinite_cells, "endless: Ground");
        independent += 1;
    }
    if independent == 0 {
        eprintln!(
            "pytiled-parser is not installed (tests/install-tools.sh): the comparison with an independent reader was skipped"
        );
    }
}
