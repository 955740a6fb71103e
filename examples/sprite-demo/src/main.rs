//! sprite-demo: the cargo-assets example game.
//!
//! Its assets (sprites packed into an atlas, a font baked into glyphs in the
//! same atlas, a shader, level data, and a map made by the custom `level`
//! processor) are built by `build.rs` and embedded with `include_parcel!`,
//! which gives every resource a typed constant. The game lays the map out on
//! a tile grid, draws each sprite from its atlas page and the level's title
//! with the font, in software (no GPU needed), and writes the scene as a PNG:
//!
//! ```sh
//! cargo run --bin sprite-demo                    # writes target/debug/sprite-demo.png
//! cargo run --bin sprite-demo -- --out scene.png --scale 2
//! ```

mod canvas;
mod level;

use std::path::PathBuf;

use assets_runtime::{Font, Parcel, Sprite, SpriteId, include_parcel};

use canvas::Canvas;
use level::Level;

include_parcel!("main");

/// Pixels per map tile.
const TILE: u32 = 16;
/// The meadow's green.
const BACKGROUND: [u8; 4] = [0x2b, 0x4a, 0x2f, 0xff];
/// The title's size (the size the font is baked at) and where its line starts.
const TITLE_PX: f32 = 20.0;
const TITLE_PEN: (f32, f32) = (24.0, 30.0);

/// The sprite for a map tile, by its constant: a missing asset would not compile.
fn sprite_for(tile: u8) -> Option<(SpriteId, &'static str)> {
    use main::sprites;
    Some(match tile {
        b'T' => (sprites::TREE, "sprites/tree.png"),
        b'C' => (sprites::COIN, "sprites/coin.png"),
        b'H' => (sprites::HERO_IDLE, "sprites/hero-idle.png"),
        b'B' => (sprites::ui::BUTTON, "sprites/ui/button.png"),
        _ => return None,
    })
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let (out, scale) = arguments()?;
    let parcel = &*main::PARCEL;
    println!("loaded parcel `main`: {} resources", parcel.len());
    // Text and bytes may be stored compressed: they come as a `Cow`,
    // borrowed from the parcel when stored as they are.
    let level_json = parcel.text(main::data::LEVEL1).map_err(|e| e.to_string())?;
    let title = level::title(&level_json).ok_or("data/level1.json has no name")?;
    let shader = parcel
        .shader(main::shaders::SPRITE)
        .map_err(|e| e.to_string())?;
    check_bindings(
        &parcel
            .text(main::shaders::SPRITE_REFLECTION)
            .map_err(|e| e.to_string())?,
    )?;
    println!(
        "shader shaders/sprite.wgsl: {} lines, validated, bindings match the renderer's layout",
        shader.lines().count()
    );
    let ground = parcel
        .texture(main::textures::GRASS)
        .ok_or("textures/grass.png is not a texture")?;
    println!(
        "texture textures/grass.png: {} {}x{}, {} mip levels, {} bytes to upload",
        ground.format.name(),
        ground.width,
        ground.height,
        ground.levels,
        (0..ground.levels)
            .filter_map(|i| ground.level(i))
            .map(|level| level.len())
            .sum::<usize>()
    );
    let map_bytes = parcel
        .bytes(main::levels::MEADOW)
        .map_err(|e| e.to_string())?;
    let map = Level::decode(&map_bytes).ok_or("levels/meadow.lvl is not a level")?;
    println!("level `{title}`: {}x{} tiles", map.width, map.height);
    let mut canvas = Canvas::new(
        u32::from(map.width) * TILE,
        u32::from(map.height) * TILE,
        BACKGROUND,
    );
    for (column, row, tile) in map.tiles() {
        let Some((id, name)) = sprite_for(tile) else {
            continue;
        };
        let sprite = parcel
            .sprite(id)
            .ok_or_else(|| format!("{name} is not a sprite"))?;
        let f = &sprite.frame;
        // Bottom-centred in its tile, in the sprite's authored size.
        let x = column * TILE + (TILE - f.source_width.min(TILE)) / 2;
        let y = row * TILE + TILE - f.source_height.min(TILE);
        canvas.draw(&sprite, x, y)?;
        println!(
            "placed {name} at {x},{y} (page {} at {},{}{})",
            f.page_index,
            f.x,
            f.y,
            if f.rotated { ", rotated" } else { "" }
        );
    }
    let font = parcel
        .font(main::fonts::FIRA_SANS_BOLD_LATIN1)
        .ok_or("fonts/FiraSans-Bold-Latin1.ttf is not a font")?;
    draw_text(&mut canvas, parcel, &font, title, TITLE_PEN)?;
    canvas.save(&out, scale)?;
    println!(
        "wrote {} ({}x{}, scale {scale})",
        out.display(),
        canvas.width() * scale,
        canvas.height() * scale
    );
    Ok(())
}

/// The bind group layout this renderer would create for the sprite shader:
/// (group, binding, what it holds).
const SPRITE_LAYOUT: [(u64, u64, &str); 3] =
    [(0, 0, "texture d2"), (0, 1, "sampler"), (0, 2, "uniform")];

/// Checks the shader's reflection (made when the build validated it)
/// against [`SPRITE_LAYOUT`], as a game does at start-up or in a test.
fn check_bindings(reflection: &str) -> Result<(), String> {
    let reflection: serde_json::Value =
        serde_json::from_str(reflection).map_err(|e| format!("reflection: {e}"))?;
    if reflection["validated"] != true {
        return Err(format!(
            "shaders/sprite.wgsl was not validated: {}",
            reflection["not_validated_because"]
        ));
    }
    let bindings: Vec<(u64, u64, &str)> = reflection["bindings"]
        .as_array()
        .ok_or("reflection without bindings")?
        .iter()
        .map(|b| {
            let n = |k: &str| b[k].as_u64().unwrap_or(u64::MAX);
            (n("group"), n("binding"), b["holds"].as_str().unwrap_or(""))
        })
        .collect();
    if bindings != SPRITE_LAYOUT {
        return Err(format!(
            "shaders/sprite.wgsl binds {bindings:?}; the renderer's layout is {SPRITE_LAYOUT:?}"
        ));
    }
    Ok(())
}

/// Draws `text` on one line at the title size, the pen starting at `pen`
/// (x, baseline): each glyph from its atlas page, at its bearing, the pen
/// moving by its advance and the pair's kerning. Glyphs land on whole pixels.
fn draw_text(
    canvas: &mut Canvas,
    parcel: &Parcel<'_>,
    font: &Font<'_>,
    text: &str,
    (mut x, baseline): (f32, f32),
) -> Result<(), String> {
    let mut previous = None;
    for ch in text.chars() {
        let glyph = font
            .glyph(TITLE_PX, ch)
            .ok_or_else(|| format!("the font has no {ch:?} at {TITLE_PX} px"))?;
        if let Some(p) = previous {
            x += font.kerning(p, ch, TITLE_PX);
        }
        previous = Some(ch);
        if glyph.frame.w > 0 {
            let page = parcel
                .image(glyph.frame.page)
                .ok_or("a glyph without its page")?;
            let (gx, gy) = glyph.origin(x, baseline);
            let (gx, gy) = (gx.round() as u32, gy.round() as u32);
            // The canvas draws a sprite at its untrimmed corner.
            let corner = (gx - glyph.frame.trim_x, gy - glyph.frame.trim_y);
            let sprite = Sprite {
                frame: glyph.frame,
                page,
            };
            canvas.draw(&sprite, corner.0, corner.1)?;
            println!("glyph {ch} at {},{}", corner.0, corner.1);
        }
        x += glyph.advance;
    }
    Ok(())
}

/// `--out PATH` (default: next to the executable) and `--scale N` (default 4).
fn arguments() -> Result<(PathBuf, u32), String> {
    let mut out = None;
    let mut scale = 4;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a path")?)),
            "--scale" => {
                scale = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&s| (1..=16).contains(&s))
                    .ok_or("--scale needs a number from 1 to 16")?;
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (use --out PATH, --scale N)"
                ));
            }
        }
    }
    let out = match out {
        Some(out) => out,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("sprite-demo.png"),
    };
    Ok((out, scale))
}
