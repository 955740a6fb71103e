//! Aseprite files through the real binary: `.aseprite` and `.ase` files are
//! `aseprite`'s by default, each frame a sprite of the atlas, flattened as
//! Aseprite flattens it: compared with Aseprite's own PNG export of the same
//! frames (`assets-build/tests/fixtures/aseprite/README.md`). The tags and
//! durations come out as the animation a game plays.

use std::time::Duration;

use assets_runtime::{Animation, Direction, Parcel, ParcelBuf, ResourceId};
use assets_test_support::Project;
use assets_test_support::pixels::{self, visible};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets-build/tests/fixtures/aseprite"
);

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

fn exported(name: &str) -> image::RgbaImage {
    image::load_from_memory(&fixture(name))
        .unwrap()
        .into_rgba8()
}

/// Frame `index` of `animation` as a canvas-sized image, read from its
/// page.
fn frame_image(parcel: &Parcel<'_>, animation: &Animation<'_>, index: usize) -> image::RgbaImage {
    let frame = animation.frame(index).unwrap().sprite;
    assert_eq!(
        (frame.source_width, frame.source_height),
        animation.canvas()
    );
    pixels::frame_image(parcel, frame)
}

/// Byte offsets in an Aseprite file: each frame header's duration word,
/// and each tag's direction byte with its name.
struct Offsets {
    durations: Vec<usize>,
    tags: Vec<(String, usize)>,
}

fn offsets(file: &[u8]) -> Offsets {
    let word = |at: usize| u16::from_le_bytes([file[at], file[at + 1]]) as usize;
    let dword = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
    let mut o = Offsets {
        durations: Vec::new(),
        tags: Vec::new(),
    };
    let mut frame = 128;
    for _ in 0..word(6) {
        o.durations.push(frame + 8);
        let mut chunk = frame + 16;
        while chunk < frame + dword(frame) {
            if word(chunk + 4) == 0x2018 {
                let mut tag = chunk + 16;
                for _ in 0..word(chunk + 6) {
                    let len = word(tag + 17);
                    let name = String::from_utf8(file[tag + 19..tag + 19 + len].to_vec()).unwrap();
                    o.tags.push((name, tag + 4));
                    tag += 19 + len;
                }
            }
            chunk += dword(chunk);
        }
        frame += dword(frame);
    }
    o
}

#[test]
fn frames_are_flattened_as_aseprite_exports_them_and_tags_play() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    // As an artist saves them: spaces and capitals, both extensions.
    p.file(
        "assets/characters/Hero Idle.aseprite",
        fixture("layers_and_tags.aseprite"),
    );
    p.file(
        "assets/characters/linked.aseprite",
        fixture("linked_cels.aseprite"),
    );
    p.file("assets/tiles/Map.ase", fixture("tilemap.aseprite"));
    p.file("assets/ui/indexed.aseprite", fixture("indexed.aseprite"));
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();

    let checks: [(&str, &[&str]); 4] = [
        (
            "characters/Hero Idle.aseprite",
            &[
                "layers_and_tags_01.png",
                "layers_and_tags_02.png",
                "layers_and_tags_03.png",
                "layers_and_tags_04.png",
            ],
        ),
        (
            "characters/linked.aseprite",
            &[
                "linked_cels_01.png",
                "linked_cels_02.png",
                "linked_cels_03.png",
            ],
        ),
        ("tiles/Map.ase", &["tilemap.png"]),
        ("ui/indexed.aseprite", &["indexed_01.png"]),
    ];
    for (name, pngs) in checks {
        let animation = (parcel.animation(ResourceId::of_runtime(name)))
            .unwrap_or_else(|| panic!("{name} is an animation"));
        for (i, png) in pngs.iter().enumerate() {
            let reference = exported(png);
            assert_eq!(animation.canvas(), reference.dimensions(), "{name}");
            assert_eq!(
                visible(&frame_image(&parcel, &animation, i)),
                visible(&reference),
                "{name} frame {i} against Aseprite's export {png}"
            );
        }
        let durations: Vec<u32> = animation.frames().map(|f| f.duration_ms).collect();
        assert!(durations.iter().all(|&d| d == 100), "{name}: {durations:?}");
    }

    let hero = parcel
        .animation(ResourceId::of_runtime("characters/Hero Idle.aseprite"))
        .unwrap();
    let tags: Vec<_> = hero.tags().map(|t| (t.name, t.from, t.to)).collect();
    assert_eq!(tags, [("T1", 0, 1), ("T3", 1, 3), ("T2", 3, 3)]);
    let t3 = hero.tag("T3").unwrap();
    assert_eq!((t3.direction, t3.repeat), (Direction::Forward, 0));
    let at = |ms| hero.frame_at(&t3, Duration::from_millis(ms));
    assert_eq!([at(0), at(150), at(250), at(300)], [1, 2, 3, 1]);
}

#[test]
fn durations_and_ping_pong_reverse_tags_are_read_as_aseprite_1_3_writes_them() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let mut file = fixture("layers_and_tags.aseprite");
    let o = offsets(&file);
    for (at, ms) in o.durations.iter().zip([80u16, 120, 40, 200]) {
        file[*at..*at + 2].copy_from_slice(&ms.to_le_bytes());
    }
    // `T3` ping-pong reverse, twice: 3 2 1, then 2 3.
    let (_, direction) = o.tags.iter().find(|(n, _)| n == "T3").unwrap();
    file[*direction] = 3;
    file[direction + 1..direction + 3].copy_from_slice(&2u16.to_le_bytes());
    p.file("assets/hero.aseprite", &file);
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let hero = parcel
        .animation(ResourceId::of_runtime("hero.aseprite"))
        .unwrap();
    let durations: Vec<u32> = hero.frames().map(|f| f.duration_ms).collect();
    assert_eq!(durations, [80, 120, 40, 200]);
    let t3 = hero.tag("T3").unwrap();
    assert_eq!((t3.direction, t3.repeat), (Direction::PingPongReverse, 2));
    // Frames 3 (200 ms), 2 (40), 1 (120), then 2 (40), 3 (200), which stays.
    let at = |ms| hero.frame_at(&t3, Duration::from_millis(ms));
    let seen = [0, 199, 200, 239, 240, 359, 360, 399, 400, 599, 10_000].map(at);
    assert_eq!(seen, [3, 3, 2, 2, 1, 1, 2, 2, 3, 3, 3]);
    // `inspect` says what a game will find, and outlines each frame.
    let out = p.path().join("pictures");
    let parcel_path = run.parcel("main");
    let inspect = p.run(&[
        "inspect",
        parcel_path.to_str().unwrap(),
        "--atlas",
        "main",
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(inspect.success(), "{}", inspect.stderr);
    let listed = (inspect.with_reason("resource"))
        .find(|m| m["name"] == "hero.aseprite")
        .expect("hero listed");
    assert_eq!(listed["kind"], "animation");
    assert_eq!(
        listed["animation"]["durations"],
        serde_json::json!([80, 120, 40, 200])
    );
    assert_eq!(
        listed["animation"]["tags"],
        serde_json::json!(["T1", "T3", "T2"])
    );
    let picture = inspect
        .with_reason("atlas-picture")
        .next()
        .expect("a picture");
    assert_eq!(picture["sprites"], 4, "one outline per frame");

    // The pixels are those of the file with its tags as authored.
    for (i, png) in ["layers_and_tags_01.png", "layers_and_tags_04.png"]
        .iter()
        .enumerate()
    {
        let i = i * 3;
        assert_eq!(
            visible(&frame_image(&parcel, &hero, i)),
            visible(&exported(png))
        );
    }
}

#[test]
fn an_edit_reruns_its_file_and_atlas_only_and_a_broken_file_fails_by_name() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("assets/a.aseprite", fixture("layers_and_tags.aseprite"));
    p.file("assets/b.aseprite", fixture("linked_cels.aseprite"));
    p.png("assets/coin.png", 8, 8, 1);
    let run = p.build_ok();
    assert!(
        p.build_ok().processed().is_empty(),
        "a second build runs nothing"
    );
    let good = std::fs::read(run.parcel("main")).unwrap();

    // Frame 0 of `a` lasts longer: `a` and its atlas rerun, nothing else.
    let mut a = fixture("layers_and_tags.aseprite");
    let at = offsets(&a).durations[0];
    a[at..at + 2].copy_from_slice(&250u16.to_le_bytes());
    p.file("assets/a.aseprite", &a);
    let run = p.build_ok();
    assert_eq!(run.processed(), ["a.aseprite", "atlas:main"]);
    let good_after = std::fs::read(run.parcel("main")).unwrap();
    assert_ne!(good_after, good);

    // Cut short, it fails by name and reason; the last good parcel stays.
    p.file("assets/a.aseprite", &a[..a.len() / 2]);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("a.aseprite");
    assert!(message.contains("truncated"), "{message}");
    assert_eq!(std::fs::read(run.parcel("main")).unwrap(), good_after);

    // Not an Aseprite file at all.
    p.file(
        "assets/a.aseprite",
        b"GIF89a, saved with the wrong extension",
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("a.aseprite");
    assert!(message.starts_with("not an Aseprite file"), "{message}");
}

/// One slice key: slice name, frame it starts at, bounds, centre, pivot.
type Key = (
    String,
    u32,
    (i32, i32, u32, u32),
    Option<(i32, i32, u32, u32)>,
    Option<(i32, i32)>,
);

/// The slice keys of `animation`, as [`Key`]s.
fn keys_of(animation: &Animation<'_>) -> Vec<Key> {
    (animation.slice_keys())
        .map(|k| {
            let center = k.center.map(|c| (c.x, c.y, c.width, c.height));
            let bounds = (k.x, k.y, k.width, k.height);
            (k.name.to_owned(), k.from, bounds, center, k.pivot)
        })
        .collect()
}

/// The slice keys of the Aseprite file `file` as ase-parser (npm, an
/// Aseprite reader in JavaScript, installed by `tests/install-tools.sh`)
/// reads them, each slice's keys in frame order; `None` when node or the
/// package is not installed.
fn ase_parser_keys(file: &std::path::Path) -> Option<Vec<Key>> {
    let reader = assets_test_support::npm_tool("ase-parser")?;
    // One line per key: name, frame, x, y, w, h, then the centre's four
    // numbers or `-`, the pivot's two or `-`.
    let script = r#"
const [reader, file] = process.argv.slice(1);
const Aseprite = require(reader);
const ase = new Aseprite(require('fs').readFileSync(file), file);
ase.parse();
for (const slice of ase.slices) {
  const keys = [...slice.keys].sort((a, b) => a.frameNumber - b.frameNumber);
  for (const k of keys) {
    const center = k.patch ? [k.patch.x, k.patch.y, k.patch.width, k.patch.height].join(',') : '-';
    const pivot = k.pivot ? [k.pivot.x, k.pivot.y].join(',') : '-';
    console.log([slice.name, k.frameNumber, k.x, k.y, k.width, k.height, center, pivot].join('\t'));
  }
}
"#;
    let args = [reader.as_os_str(), file.as_os_str()];
    let out = assets_test_support::run_node("ase-parser", script, false, &args)?;
    let numbers = |s: &str| -> Option<Vec<i64>> {
        (s != "-").then(|| s.split(',').map(|n| n.parse().unwrap()).collect())
    };
    let text = String::from_utf8(out).unwrap();
    let keys = text
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let n = |i: usize| f[i].parse::<i64>().unwrap();
            let center =
                numbers(f[6]).map(|c| (c[0] as i32, c[1] as i32, c[2] as u32, c[3] as u32));
            let pivot = numbers(f[7]).map(|p| (p[0] as i32, p[1] as i32));
            let bounds = (n(2) as i32, n(3) as i32, n(4) as u32, n(5) as u32);
            (f[0].to_owned(), n(1) as u32, bounds, center, pivot)
        })
        .collect();
    Some(keys)
}

#[test]
fn slices_are_kept_with_every_key_as_an_independent_reader_reads_them() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file(
        "assets/characters/Slime Jump.aseprite",
        fixture("slice_advanced.aseprite"),
    );
    p.file("assets/ui/panel.aseprite", fixture("user_data.aseprite"));
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    let slime = parcel
        .animation(ResourceId::of_runtime("characters/Slime Jump.aseprite"))
        .unwrap();
    let panel = parcel
        .animation(ResourceId::of_runtime("ui/panel.aseprite"))
        .unwrap();

    // As ase-parser reads them (the fixtures' README has these values).
    let hop = |from, x, y| {
        (
            "Slice 1".to_owned(),
            from,
            (x, y, 8, 10),
            None,
            Some((4, 10)),
        )
    };
    let expected: Vec<Key> = vec![
        hop(0, 12, 11),
        hop(1, 18, 5),
        hop(2, 24, 11),
        hop(3, 15, 21),
        (
            "Slice 2".to_owned(),
            0,
            (2, 1, 8, 8),
            Some((3, 3, 2, 2)),
            None,
        ),
    ];
    assert_eq!(keys_of(&slime), expected);
    let one: Vec<Key> = vec![("Slice 1".to_owned(), 0, (1, 1, 2, 2), None, None)];
    assert_eq!(keys_of(&panel), one);
    for (name, animation) in [
        ("slice_advanced.aseprite", &slime),
        ("user_data.aseprite", &panel),
    ] {
        match ase_parser_keys(std::path::Path::new(&format!("{FIXTURES}/{name}"))) {
            Some(theirs) => assert_eq!(keys_of(animation), theirs, "{name}"),
            None => eprintln!(
                "ase-parser not installed: {name}'s slices checked against the README's values only"
            ),
        }
    }

    // The key each frame is in.
    let at = |frame| slime.slice("Slice 1", frame).map(|k| (k.x, k.y));
    assert_eq!(
        [at(0), at(1), at(2), at(3)],
        [
            Some((12, 11)),
            Some((18, 5)),
            Some((24, 11)),
            Some((15, 21))
        ]
    );
    assert_eq!(
        slime.slice("Slice 2", 3).unwrap().from,
        0,
        "one key holds on"
    );
    assert!(slime.slice("Slice 3", 0).is_none());

    // A key moved past the last frame fails the file by the slice's name;
    // the last good parcel stays.
    let good = std::fs::read(run.parcel("main")).unwrap();
    let mut damaged = fixture("slice_advanced.aseprite");
    let at = slice_key_frame(&damaged, "Slice 2");
    damaged[at..at + 4].copy_from_slice(&9u32.to_le_bytes());
    p.file("assets/characters/Slime Jump.aseprite", &damaged);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("characters/Slime Jump.aseprite");
    assert!(
        message.contains("slice `Slice 2` has a key at frame 9 past its last frame"),
        "{message}"
    );
    assert_eq!(std::fs::read(run.parcel("main")).unwrap(), good);
}

/// Where the first key of the slice `name` stores its frame number in an
/// Aseprite file (a slice chunk, 0x2022: key count, flags, a reserved
/// dword, the name, then the keys, each starting with its frame).
fn slice_key_frame(file: &[u8], name: &str) -> usize {
    let word = |at: usize| u16::from_le_bytes([file[at], file[at + 1]]) as usize;
    let dword = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
    let mut frame = 128;
    for _ in 0..word(6) {
        let mut chunk = frame + 16;
        while chunk < frame + dword(frame) {
            if word(chunk + 4) == 0x2022 {
                let len = word(chunk + 18);
                if &file[chunk + 20..chunk + 20 + len] == name.as_bytes() {
                    return chunk + 20 + len;
                }
            }
            chunk += dword(chunk);
        }
        frame += dword(frame);
    }
    panic!("no slice named {name}");
}

/// Each tag's colour as ase-parser (npm) reads it from the tags chunk, in
/// order, `"rrggbb"`; `None` when node or the package is not installed.
fn ase_parser_tag_colors(file: &std::path::Path) -> Option<Vec<String>> {
    let reader = assets_test_support::npm_tool("ase-parser")?;
    let script = r#"
const [reader, file] = process.argv.slice(1);
const Aseprite = require(reader);
const ase = new Aseprite(require('fs').readFileSync(file), file);
ase.parse();
for (const tag of ase.tags) console.log(tag.color);
"#;
    let args = [reader.as_os_str(), file.as_os_str()];
    let out = assets_test_support::run_node("ase-parser", script, false, &args)?;
    Some(
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

#[test]
fn tags_and_slices_carry_their_user_data_from_the_file_and_from_a_sheet() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file("assets/ui/panel.aseprite", fixture("user_data.aseprite"));
    // The same as Aseprite's JSON export writes it, with its sheet.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sheets/*.json\"\nprocessor = \"sheet\"\n",
    );
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(8, 8, image::Rgba([9, 9, 9, 255]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    p.file("assets/sheets/hero.png", png);
    p.file(
        "assets/sheets/hero.json",
        r##"{ "frames": [
  { "filename": "hero 0", "frame": { "x": 0, "y": 0, "w": 8, "h": 8 }, "duration": 100 },
  { "filename": "hero 1", "frame": { "x": 0, "y": 0, "w": 8, "h": 8 }, "duration": 100 } ],
  "meta": { "image": "hero.png",
    "frameTags": [ { "name": "walk", "from": 0, "to": 1, "direction": "forward", "color": "#00ff00ff", "data": "event: step" },
                   { "name": "idle", "from": 1, "to": 1, "direction": "forward", "color": "#000000ff" } ],
    "slices": [ { "name": "hitbox", "color": "#0000ffff", "data": "kind=hurt",
                  "keys": [ { "frame": 0, "bounds": { "x": 1, "y": 1, "w": 4, "h": 4 } } ] } ] } }"##,
    );
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();

    // The Aseprite file: each tag's text and colour, the slice's, as the
    // fixtures' README lists them.
    let panel = parcel
        .animation(ResourceId::of_runtime("ui/panel.aseprite"))
        .unwrap();
    let data = |text, color| assets_runtime::UserData { text, color };
    let tags: Vec<_> = (panel.tags()).map(|t| (t.name, t.user_data)).collect();
    assert_eq!(
        tags,
        [
            (
                "Tag 0",
                data(Some("test_user_data_tag_0"), Some([0, 255, 0, 255]))
            ),
            ("Tag 1", data(None, Some([0, 0, 0, 255]))),
            (
                "Tag 2",
                data(Some("test_user_data_tag_2"), Some([255, 0, 0, 255]))
            ),
        ]
    );
    let slice = panel.slice("Slice 1", 0).unwrap();
    assert_eq!(slice.user_data.text, Some("test_user_data_slice"));
    assert_eq!(slice.user_data.color, Some([0, 0, 255, 255]));
    // Aseprite writes a tag's colour in its tags chunk too, which
    // ase-parser reads: the same colours.
    let file = std::path::Path::new(FIXTURES).join("user_data.aseprite");
    match ase_parser_tag_colors(&file) {
        Some(theirs) => {
            let ours: Vec<String> = (panel.tags())
                .map(|t| {
                    let [r, g, b, _] = t.user_data.color.unwrap();
                    format!("{r:02x}{g:02x}{b:02x}")
                })
                .collect();
            assert_eq!(ours, theirs);
        }
        None => eprintln!(
            "ase-parser not installed: tag colours checked against the README's values only"
        ),
    }

    // The sheet: the same fields from Aseprite's JSON.
    let hero = parcel
        .animation(ResourceId::of_runtime("sheets/hero.json"))
        .unwrap();
    let walk = hero.tag("walk").unwrap();
    assert_eq!(walk.user_data.text, Some("event: step"));
    assert_eq!(walk.user_data.color, Some([0, 255, 0, 255]));
    assert_eq!(hero.tag("idle").unwrap().user_data.text, None);
    let hitbox = hero.slice("hitbox", 1).unwrap();
    assert_eq!(hitbox.user_data.text, Some("kind=hurt"));
    assert_eq!(hitbox.user_data.color, Some([0, 0, 255, 255]));

    // A colour Aseprite would not write fails the sheet by the tag's name.
    let json = std::fs::read_to_string(p.path().join("assets/sheets/hero.json")).unwrap();
    p.file(
        "assets/sheets/hero.json",
        json.replace("#00ff00ff", "green"),
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("sheets/hero.json");
    assert!(
        message.contains("tag `walk` has colour `green`"),
        "{message}"
    );
}
