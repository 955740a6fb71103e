//! The example game end to end: the binary built by `cargo build` (with its
//! build script and `include_parcel!`) renders the scene, and every sprite
//! and every glyph of the title is where the game says it put it, pixel for
//! pixel, composited independently of the atlas: sprites from the source
//! PNGs, glyphs as fontdue rasterizes them from the font file.

use std::process::Command;

const BACKGROUND: [u8; 4] = [0x2b, 0x4a, 0x2f, 0xff];
const SCALE: u32 = 2;

#[test]
fn the_scene_shows_each_sprite_and_glyph_where_the_game_placed_them() {
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
    assert!(
        stdout.contains("shader shaders/sprite.wgsl: 8 lines, validated, bindings match"),
        "{stdout}"
    );
    // The host build's texture: BC7 with its mip chain, 64x64 to 1x1.
    assert!(
        stdout.contains(
            "texture textures/grass.png: BC7_SRGB_BLOCK 64x64, 7 mip levels, 5488 bytes to upload"
        ),
        "{stdout}"
    );
    let scene = image::open(&out).unwrap().into_rgba8();
    assert_eq!(scene.dimensions(), (12 * 16 * SCALE, 5 * 16 * SCALE));
    let at = |x: u32, y: u32| scene.get_pixel(x * SCALE, y * SCALE).0;
    let placements = positions(&stdout, "placed ");
    assert_eq!(placements.len(), 7, "{stdout}");
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    // The scene as it should be: the meadow, each sprite, then each glyph
    // (white, its coverage as alpha), in the order the game drew them.
    let (w, h) = (12 * 16, 5 * 16);
    let mut expected = vec![BACKGROUND; (w * h) as usize];
    let mut draw = |x: u32, y: u32, image: &image::RgbaImage| {
        for (sx, sy, p) in image.enumerate_pixels() {
            let (cx, cy) = (x + sx, y + sy);
            if cx < w && cy < h {
                let dst = &mut expected[(cy * w + cx) as usize];
                *dst = over(p.0, *dst);
            }
        }
    };
    for (name, x, y) in &placements {
        draw(
            *x,
            *y,
            &image::open(assets.join(name)).unwrap().into_rgba8(),
        );
    }
    let glyphs = positions(&stdout, "glyph ");
    let title: String = glyphs.iter().map(|(c, _, _)| *c).collect();
    assert_eq!(title, "Meadow", "{stdout}");
    let font = fontdue::Font::from_bytes(
        std::fs::read(assets.join("fonts/FiraSans-Bold-Latin1.ttf")).unwrap(),
        fontdue::FontSettings {
            scale: 20.0,
            ..fontdue::FontSettings::default()
        },
    )
    .unwrap();
    let mut last_x = 0;
    for (ch, x, y) in &glyphs {
        let ch = ch.chars().next().unwrap();
        let (m, coverage) = font.rasterize(ch, 20.0);
        if last_x == 0 {
            // The first glyph's box: the pen (24, baseline 30) plus its bearings.
            assert_eq!(
                (*x as i32, *y as i32),
                (24 + m.xmin, 30 - m.ymin - m.height as i32)
            );
        }
        assert!(*x > last_x, "glyphs advance left to right: {stdout}");
        last_x = *x;
        let white = coverage.iter().flat_map(|&a| [255, 255, 255, a]).collect();
        draw(
            *x,
            *y,
            &image::RgbaImage::from_raw(m.width as u32, m.height as u32, white).unwrap(),
        );
    }
    let mut text_pixels = 0;
    for y in 0..h {
        for x in 0..w {
            let want = expected[(y * w + x) as usize];
            assert_eq!(at(x, y), want, "pixel ({x},{y})");
            text_pixels += usize::from(y < 32 && x >= 24 && want == [255; 4]);
        }
    }
    assert!(
        text_pixels > 100,
        "the title is drawn: {text_pixels} white pixels"
    );
}

/// `(name, x, y)` of each line `<prefix><name> at <x>,<y>...`.
fn positions<'a>(stdout: &'a str, prefix: &str) -> Vec<(&'a str, u32, u32)> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(prefix)?;
            let (name, rest) = rest.split_once(" at ")?;
            let xy = rest.split(' ').next()?;
            let (x, y) = xy.split_once(',')?;
            Some((name, x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
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
