//! Tile maps through the real binary, laid out as Tiled and LDtk save them:
//! a map names its tileset (another file), which names its image; an LDtk
//! project names its tileset image and its separately saved levels, which
//! name their backgrounds. Paths are relative to the naming file, with
//! spaces and `..`, as the editors write them. A parcel that holds only the
//! maps holds everything they name, each processed by its own rule, and a
//! game finds each by the path its map wrote.

use assets_runtime::ParcelBuf;
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
[package.metadata.assets.parcels]
levels = ["maps/**", "*.ldtk"]
"#,
    )
    .file("assets/maps/Level 1.tmx", TMX)
    .file("assets/tilesets/Terrain.tsx", TSX)
    .png("assets/tilesets/terrain tiles.png", 32, 16, 1)
    .png("assets/images/sky.png", 8, 8, 2)
    .file(
        "assets/World.ldtk",
        r#"{"jsonVersion": "1.5.3", "externalLevels": true,
            "defs": {"tilesets": [{"identifier": "Cavernas", "relPath": "atlas/Cavernas_by_Adam_Saltsman.png"},
                                  {"identifier": "Internal_Icons", "relPath": null}]},
            "levels": [{"identifier": "Level_0", "externalRelPath": "World/Level_0.ldtkl", "bgRelPath": null}]}"#,
    )
    .png("assets/atlas/Cavernas_by_Adam_Saltsman.png", 16, 16, 3)
    .file(
        "assets/World/Level_0.ldtkl",
        r#"{"identifier": "Level_0", "bgRelPath": "../backgrounds/cave.png", "layerInstances": []}"#,
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
    // The map as written, and what it names by the paths it wrote.
    let map = parcel.by_name("maps/Level 1.tmx").expect("the map");
    assert_eq!(map.kind, "text");
    assert_eq!(map.text().unwrap(), TMX);
    let tileset = parcel
        .by_uri("maps/Level 1.tmx", "../tilesets/Terrain.tsx")
        .expect("its tileset");
    assert_eq!(tileset.kind, "text");
    let image = parcel
        .by_uri(tileset.name, "terrain tiles.png")
        .expect("the tileset's image");
    assert_eq!(image.kind, "image");
    assert!(
        parcel
            .by_uri("maps/Level 1.tmx", "../images/sky.png")
            .is_some()
    );
    for (from, path) in [
        ("World.ldtk", "atlas/Cavernas_by_Adam_Saltsman.png"),
        ("World.ldtk", "World/Level_0.ldtkl"),
        ("World/Level_0.ldtkl", "../backgrounds/cave.png"),
    ] {
        assert!(parcel.by_uri(from, path).is_some(), "{from} names {path}");
    }

    // The tileset's image goes: the tileset fails, naming the line and the
    // file; the map, whose own output does not change, does not rerun.
    p.remove("assets/tilesets/terrain tiles.png");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert_eq!(
        run.failure_message("tilesets/Terrain.tsx"),
        "line 3 names the image `terrain tiles.png`, and `tilesets/terrain tiles.png` does not exist; add the file or fix the path"
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
