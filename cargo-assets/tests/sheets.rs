//! Sprite sheets through the real binary: a rule with `processor = "sheet"`
//! cuts a sheet exported with its JSON back into its frames, packs them into
//! the atlas, and keeps their names, durations and tags as an animation.
//!
//! The packed sheets are made by a packer we did not write,
//! free-tex-packer-core (npm, installed by `tests/install-tools.sh`), which
//! writes TexturePacker's JSON hash and array, trimming and turning sprites;
//! every frame read back must be the sprite it was made from, pixel for
//! pixel. Without `node` or the packer that part is skipped, and says so.

use std::path::Path;

use assets_runtime::{Animation, Direction, Parcel, ResourceId};
use assets_test_support::pixels::{self, visible};
use assets_test_support::{Project, encode_png, sprite_image};

const RULE: &str = r#"
[package.metadata.assets]
ignore = ["sheets/*.png"]

[[package.metadata.assets.rules]]
match = "sheets/*.json"
processor = "sheet"
"#;

/// Frame `index` as an image of its source size, read from its page.
fn frame_image(parcel: &Parcel<'_>, animation: &Animation<'_>, index: usize) -> image::RgbaImage {
    pixels::frame_image(parcel, animation.frame(index).unwrap().sprite)
}

/// An Aseprite "Export Sprite Sheet" JSON (hash form) as Aseprite writes
/// it: frame names that do not sort in frame order, durations, tags with
/// directions and a repeat count written as a string.
const ASEPRITE_JSON: &str = r##"{ "frames": {
   "hero 9.aseprite": { "frame": { "x": 0, "y": 0, "w": 6, "h": 4 }, "rotated": false, "trimmed": false,
     "spriteSourceSize": { "x": 0, "y": 0, "w": 6, "h": 4 }, "sourceSize": { "w": 6, "h": 4 }, "duration": 100 },
   "hero 10.aseprite": { "frame": { "x": 6, "y": 0, "w": 6, "h": 4 }, "rotated": false, "trimmed": false,
     "spriteSourceSize": { "x": 0, "y": 0, "w": 6, "h": 4 }, "sourceSize": { "w": 6, "h": 4 }, "duration": 150 },
   "hero 11.aseprite": { "frame": { "x": 12, "y": 0, "w": 6, "h": 4 }, "rotated": false, "trimmed": false,
     "spriteSourceSize": { "x": 0, "y": 0, "w": 6, "h": 4 }, "sourceSize": { "w": 6, "h": 4 }, "duration": 50 }
 },
 "meta": {
  "app": "https://www.aseprite.org/",
  "version": "1.3.7-x64",
  "image": "hero sheet.png",
  "format": "RGBA8888",
  "size": { "w": 18, "h": 4 },
  "scale": "1",
  "frameTags": [
   { "name": "idle", "from": 0, "to": 0, "direction": "forward", "color": "#000000ff" },
   { "name": "swing", "from": 0, "to": 2, "direction": "pingpong", "repeat": "2", "color": "#000000ff" }
  ],
  "layers": [ { "name": "Layer 1", "opacity": 255, "blendMode": "normal" } ],
  "slices": [
   { "name": "blade", "color": "#0000ffff", "keys": [{ "frame": 0, "bounds": {"x": 4, "y": 1, "w": 2, "h": 2 }, "pivot": {"x": 0, "y": 1 } }, { "frame": 2, "bounds": {"x": -1, "y": 0, "w": 3, "h": 2 }, "pivot": {"x": 2, "y": 1 } }] },
   { "name": "frame", "color": "#ff0000ff", "data": "ui", "keys": [{ "frame": 0, "bounds": {"x": 0, "y": 0, "w": 6, "h": 4 }, "center": {"x": 1, "y": 1, "w": 4, "h": 2 } }] }
  ]
 }
}
"##;

#[test]
fn an_aseprite_sheet_keeps_its_frame_order_durations_and_tags() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(RULE);
    // Three 6x4 frames side by side, each a colour of its own.
    let sheet = image::RgbaImage::from_fn(18, 4, |x, _| {
        image::Rgba([(x / 6) as u8 * 100 + 10, 20, 30, 255])
    });
    p.file("assets/sheets/hero sheet.png", encode_png(&sheet));
    p.file("assets/sheets/hero.json", ASEPRITE_JSON);
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    assert!(
        parcel
            .get(ResourceId::of_runtime("sheets/hero sheet.png"))
            .is_none(),
        "the sheet's image is ignored, as the manifest says"
    );
    let hero = parcel
        .animation(ResourceId::of_runtime("sheets/hero.json"))
        .unwrap();
    let frames: Vec<_> = hero.frames().map(|f| (f.name, f.duration_ms)).collect();
    assert_eq!(
        frames,
        [
            ("hero 9.aseprite", 100),
            ("hero 10.aseprite", 150),
            ("hero 11.aseprite", 50)
        ],
        "in the JSON's order, not sorted"
    );
    for i in 0..3 {
        let red = frame_image(&parcel, &hero, i).get_pixel(0, 0).0[0];
        assert_eq!(red, i as u8 * 100 + 10, "frame {i} is cut from its place");
    }
    assert_eq!(hero.canvas(), (6, 4));
    let swing = hero.tag("swing").unwrap();
    assert_eq!((swing.direction, swing.repeat), (Direction::PingPong, 2));
    // 0 1 2 then 1 0: two passes, and 0 stays.
    let at = |ms| hero.frame_at(&swing, std::time::Duration::from_millis(ms));
    let seen = [0, 100, 250, 300, 350, 450, 10_000].map(at);
    assert_eq!(seen, [0, 1, 2, 1, 1, 0, 0]);
    // `meta.slices`, keyed by frame as Aseprite exports them.
    let blade = |frame| {
        hero.slice("blade", frame)
            .map(|k| (k.x, k.y, k.width, k.pivot))
    };
    assert_eq!(blade(1), Some((4, 1, 2, Some((0, 1)))));
    assert_eq!(blade(2), Some((-1, 0, 3, Some((2, 1)))));
    let panel = hero.slice("frame", 2).unwrap();
    let center = panel.center.map(|c| (c.x, c.y, c.width, c.height));
    assert_eq!((center, panel.pivot), (Some((1, 1, 4, 2)), None));

    // Editing the image reruns the sheet and its atlas.
    let mut edited = sheet.clone();
    edited.put_pixel(13, 2, image::Rgba([1, 2, 3, 255]));
    p.file("assets/sheets/hero sheet.png", encode_png(&edited));
    let run = p.build_ok();
    assert_eq!(run.processed(), ["atlas:main", "sheets/hero.json"]);

    // A frame outside the image fails by name, as does a missing image.
    p.file(
        "assets/sheets/hero.json",
        ASEPRITE_JSON.replace(
            "\"x\": 12, \"y\": 0, \"w\": 6",
            "\"x\": 14, \"y\": 0, \"w\": 6",
        ),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("sheets/hero.json");
    assert!(
        message.contains("frame `hero 11.aseprite` at 14,0 6x4 lies outside the 18x4 image"),
        "{message}"
    );
    // A slice centre wider than its bounds, too.
    p.file(
        "assets/sheets/hero.json",
        ASEPRITE_JSON.replace("\"w\": 4, \"h\": 2 } }", "\"w\": 6, \"h\": 2 } }"),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("sheets/hero.json");
    assert!(
        message.contains(
            "slice `frame` has a key at frame 0 whose 9-slice centre lies outside its bounds"
        ),
        "{message}"
    );
    p.file("assets/sheets/hero.json", ASEPRITE_JSON);
    p.remove("assets/sheets/hero sheet.png");
    let run = p.run(&["build"]);
    let message = run.failure_message("sheets/hero.json");
    assert!(message.contains("sheets/hero sheet.png"), "{message}");
}

/// Packs `sprites` (name, image) with free-tex-packer-core into `dir`,
/// writing `<dir>/sheet.json` and `<dir>/sheet.png` in `exporter`'s form;
/// `false` when node or the packer is not installed.
fn free_tex_packer(sprites: &[(String, image::RgbaImage)], exporter: &str, dir: &Path) -> bool {
    let Some(packer) = assets_test_support::npm_tool("free-tex-packer-core") else {
        return false;
    };
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    for (name, image) in sprites {
        image.save(inputs.join(name)).unwrap();
    }
    let script = r#"
const [packerDir, inputs, out, exporter] = process.argv.slice(1);
const pack = require(packerDir);
const fs = require('fs');
const path = require('path');
const images = fs.readdirSync(inputs).sort().map(f => ({ path: f, contents: fs.readFileSync(path.join(inputs, f)) }));
pack(images, { textureName: 'sheet', width: 256, height: 256, fixedSize: false, padding: 1,
  allowRotation: true, allowTrim: true, detectIdentical: false, exporter,
  removeFileExtension: false, packer: 'MaxRectsBin', packerMethod: 'BestShortSideFit' },
  (files, error) => {
    if (error) { console.error(String(error)); process.exit(2); }
    for (const f of files) fs.writeFileSync(path.join(out, f.name), f.buffer);
  });
"#;
    let args = [
        packer.as_os_str(),
        inputs.as_os_str(),
        dir.as_os_str(),
        std::ffi::OsStr::new(exporter),
    ];
    assets_test_support::run_node("the packer", script, false, &args).is_some()
}

#[test]
fn sheets_packed_by_another_tool_come_back_as_their_sprites() {
    // Sprites with transparent borders to trim, some tall, some wide, so
    // the packer trims and turns some of them.
    let sprites: Vec<(String, image::RgbaImage)> = [
        (30, 8, 2),
        (8, 34, 3),
        (12, 12, 0),
        (44, 10, 4),
        (9, 27, 1),
        (5, 5, 0),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(w, h, border))| {
        (
            format!("s{i}.png"),
            sprite_image(w, h, border, i as u32 + 1),
        )
    })
    .collect();
    for exporter in ["JsonHash", "JsonArray"] {
        let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
        let dir = p.path().join("packing");
        if !free_tex_packer(&sprites, exporter, &dir) {
            eprintln!(
                "free-tex-packer-core is not installed (tests/install-tools.sh): packed sheets skipped"
            );
            return;
        }
        let json = std::fs::read_to_string(dir.join("sheet.json")).unwrap();
        assert!(
            json.contains("\"rotated\": true"),
            "the packer turned some: {json}"
        );
        assert!(
            json.contains("\"trimmed\": true"),
            "the packer trimmed some: {json}"
        );
        p.metadata(RULE);
        p.file("assets/sheets/sheet.json", &json);
        p.file(
            "assets/sheets/sheet.png",
            std::fs::read(dir.join("sheet.png")).unwrap(),
        );
        let run = p.build_ok();
        let bytes = std::fs::read(run.parcel("main")).unwrap();
        let parcel = Parcel::from_bytes(&bytes).unwrap();
        let sheet = parcel
            .animation(ResourceId::of_runtime("sheets/sheet.json"))
            .unwrap();
        assert_eq!(sheet.frame_count(), sprites.len(), "{exporter}");
        assert_eq!(sheet.canvas(), (0, 0), "the sprites' sizes differ");
        for (name, image) in &sprites {
            let i = sheet
                .frame_named(name)
                .unwrap_or_else(|| panic!("{exporter}: {name} is a frame"));
            assert_eq!(
                visible(&frame_image(&parcel, &sheet, i)),
                visible(image),
                "{exporter}: {name}, cut back from the packed sheet"
            );
        }
    }
}
