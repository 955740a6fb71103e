//! The example game end to end: the binary built by `cargo build` (with its
//! build script and `include_parcel!`) renders the scene, and every sprite
//! is where the game says it put it, pixel for pixel, composited from the
//! source PNGs independently of the atlas.

use std::process::Command;

const BACKGROUND: [u8; 4] = [0x2b, 0x4a, 0x2f, 0xff];
const SCALE: u32 = 2;

#[test]
fn the_scene_shows_each_sprite_where_the_game_placed_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scene.png");
    let run = Command::new(env!("CARGO_BIN_EXE_sprite-demo"))
        .args([
            "--out",
            out.to_str().unwrap(),
            "--scale",
            &SCALE.to_string(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("level `Meadow`: 12x5 tiles"), "{stdout}");
    let scene = image::open(&out).unwrap().into_rgba8();
    assert_eq!(scene.dimensions(), (12 * 16 * SCALE, 5 * 16 * SCALE));
    let at = |x: u32, y: u32| scene.get_pixel(x * SCALE, y * SCALE).0;
    let placements: Vec<(&str, u32, u32)> = stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("placed ")?;
            let (name, rest) = rest.split_once(" at ")?;
            let (xy, _) = rest.split_once(' ')?;
            let (x, y) = xy.split_once(',')?;
            Some((name, x.parse().ok()?, y.parse().ok()?))
        })
        .collect();
    assert_eq!(placements.len(), 7, "{stdout}");
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut covered = std::collections::HashSet::new();
    for (name, x, y) in &placements {
        let source = image::open(assets.join(name)).unwrap().into_rgba8();
        for (sx, sy, p) in source.enumerate_pixels() {
            let want = over(p.0, BACKGROUND);
            assert_eq!(
                at(x + sx, y + sy),
                want,
                "{name} pixel ({sx},{sy}) at ({x},{y})"
            );
            covered.insert((x + sx, y + sy));
        }
    }
    // Everywhere else is the meadow.
    for y in 0..5 * 16 {
        for x in 0..12 * 16 {
            if !covered.contains(&(x, y)) {
                assert_eq!(at(x, y), BACKGROUND, "stray pixel at ({x},{y})");
            }
        }
    }
}

/// Straight-alpha `src` over opaque `dst`, rounded as premultiplying and
/// compositing in 8 bits do.
fn over(src: [u8; 4], dst: [u8; 4]) -> [u8; 4] {
    let a = u16::from(src[3]);
    let c = |i: usize| {
        let premultiplied = (u16::from(src[i]) * a + 127) / 255;
        (premultiplied + (u16::from(dst[i]) * (255 - a) + 127) / 255).min(255) as u8
    };
    [c(0), c(1), c(2), 255]
}
