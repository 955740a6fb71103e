//! The `font` processor through the real binary, on a real font (Fira Sans
//! Bold, subset to Latin-1, the example game's): glyphs packed with the
//! sprites, checked pixel by pixel against fontdue's own rasterization;
//! metrics against fontdue, kerning (GPOS, which fontdue does not read)
//! against HarfBuzz; distance fields against the coverage they come from;
//! a font edit reruns the font and its atlas only.

use assets_runtime::{Font, FontId, Glyph, Parcel, ResourceId};
use assets_test_support::Project;

const FONT: &str = "../examples/sprite-demo/assets/fonts/FiraSans-Bold-Latin1.ttf";

/// fontdue as the processor sets it up: geometry prepared for the largest
/// size baked.
fn rasterizer(largest: f32) -> fontdue::Font {
    let settings = fontdue::FontSettings {
        scale: largest,
        ..fontdue::FontSettings::default()
    };
    fontdue::Font::from_bytes(font_bytes(), settings).unwrap()
}

fn font_bytes() -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FONT)).unwrap()
}

fn project(rule: &str) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&format!(
        "[package.metadata.assets]\nroot = \"assets\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"fonts/*.ttf\"\nprocessor = \"font\"\n{rule}\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n"
    ))
    .file("assets/fonts/fira.ttf", font_bytes())
    .png("assets/sprites/hero.png", 24, 20, 7)
    .file("assets/data/intro.txt", "Once upon a time");
    p
}

const FIRA: FontId = FontId::of("fonts/fira.ttf");

/// The font in parcel `bytes`, and a function giving a glyph's content as
/// alpha rows (trim undone: the rectangle fontdue rasterized, or the
/// distance field's box).
fn with_font(bytes: &[u8], check: impl FnOnce(&Parcel<'_>, Font<'_>)) {
    let parcel = Parcel::from_bytes(bytes).unwrap();
    let font = parcel.font(FIRA).expect("a font resource");
    check(&parcel, font);
}

/// The alpha of `glyph` as a `source_width × source_height` box, read from
/// its page (the page holds the trimmed content; the rest is zero).
fn glyph_alpha(parcel: &Parcel<'_>, glyph: &Glyph) -> Vec<u8> {
    let f = glyph.frame;
    let (w, h) = (f.source_width as usize, f.source_height as usize);
    let mut out = vec![0u8; w * h];
    if f.w == 0 {
        return out;
    }
    assert!(!f.rotated, "atlases do not rotate unless asked");
    let page = parcel.image(f.page).unwrap();
    let pixels = page.pixels().unwrap();
    let stride = page.header.width as usize * 4;
    for y in 0..f.h as usize {
        for x in 0..f.w as usize {
            let p = &pixels[(f.y as usize + y) * stride + (f.x as usize + x) * 4..][..4];
            assert_eq!(p[..3], [255, 255, 255], "glyph pixels are white");
            out[(f.trim_y as usize + y) * w + f.trim_x as usize + x] = p[3];
        }
    }
    out
}

#[test]
fn glyphs_are_the_rasterizers_pixels_and_metrics_round_trip() {
    let p = project("sizes = [32, 14]\nchars = \"AVTgo@|é ~\"");
    let run = p.build_ok();
    let inspect = p.run(&[
        "inspect",
        run.parcel("main").to_str().unwrap(),
        "--atlas",
        "main",
    ]);
    assert!(inspect.success(), "{}", inspect.stderr);
    let listed = inspect
        .with_reason("resource")
        .find(|m| m["kind"] == "font")
        .unwrap();
    assert_eq!(listed["font"]["sizes"], serde_json::json!([14.0, 32.0]));
    assert_eq!(listed["font"]["distance_field"], false);
    assert_eq!(listed["font"]["glyphs"], 20);
    // The page picture outlines the sprite and the 18 glyphs that are not blank.
    let picture = inspect.with_reason("atlas-picture").next().unwrap();
    assert_eq!(picture["sprites"], 1 + 18);
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let reference = rasterizer(32.0);
    with_font(&bytes, |parcel, font| {
        assert!(!font.is_distance_field());
        assert_eq!(font.sizes().map(|s| s.px).collect::<Vec<_>>(), [14.0, 32.0]);
        assert_eq!(font.glyph_count(), 20);
        for px in [14.0, 32.0] {
            let line = reference.horizontal_line_metrics(px).unwrap();
            let size = font.size(px).unwrap();
            assert_eq!(
                (size.ascent, size.descent, size.line_gap),
                (line.ascent, line.descent, line.line_gap)
            );
            for ch in "AVTgo@|é ~".chars() {
                let glyph = font
                    .glyph(px, ch)
                    .unwrap_or_else(|| panic!("{ch:?} at {px}"));
                let (m, coverage) = reference.rasterize(ch, px);
                assert_eq!(glyph.advance, m.advance_width, "{ch:?} at {px}");
                assert_eq!(glyph.left, m.xmin as f32, "{ch:?} at {px}");
                assert_eq!(
                    glyph.top,
                    (m.ymin + m.height as i32) as f32,
                    "{ch:?} at {px}"
                );
                let f = glyph.frame;
                assert_eq!(
                    (f.source_width as usize, f.source_height as usize),
                    (m.width, m.height)
                );
                assert_eq!(
                    glyph_alpha(parcel, &glyph),
                    coverage,
                    "{ch:?} at {px}: pixels"
                );
            }
            assert!(font.glyph(px, 'b').is_none(), "not asked for");
        }
        // Glyphs share the atlas page with the sprite.
        let hero = parcel.sprite(ResourceId::of("sprites/hero.png")).unwrap();
        assert_eq!(font.glyph(32.0, 'A').unwrap().frame.page, hero.frame.page);
    });
}

#[test]
fn kerning_is_read_from_gpos_as_harfbuzz_applies_it() {
    // HarfBuzz 10 (uharfbuzz) shaping this font, 1000 units per em, with
    // and without the `kern` feature: "To" moves T's advance 540 -> 460,
    // "AV" 590 -> 545, "LT" 513 -> 423; "oo" does not change.
    let p = project("sizes = [32]");
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    with_font(&bytes, |_, font| {
        let close = |a: f32, b: f32| (a - b).abs() < 1e-4;
        assert!(close(font.kerning('T', 'o', 32.0), -80.0 / 1000.0 * 32.0));
        assert!(close(font.kerning('A', 'V', 32.0), -45.0 / 1000.0 * 32.0));
        assert!(close(font.kerning('L', 'T', 32.0), -90.0 / 1000.0 * 32.0));
        assert_eq!(font.kerning('o', 'o', 32.0), 0.0);
        assert!(font.kerning_pairs() > 100, "{}", font.kerning_pairs());
        // Kerning counts in a line's width.
        let plain = font.glyph(32.0, 'T').unwrap().advance + font.glyph(32.0, 'o').unwrap().advance;
        assert!(close(font.measure("To", 32.0), plain - 2.56));
    });
    let p = project("sizes = [32]\nkerning = false");
    let bytes = std::fs::read(p.build_ok().parcel("main")).unwrap();
    with_font(&bytes, |_, font| assert_eq!(font.kerning_pairs(), 0));
}

#[test]
fn distance_fields_agree_with_the_coverage_they_come_from() {
    let p = project("sizes = [48]\nchars = \"O&\"\nmode = \"sdf\"\nspread = 6");
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let reference = rasterizer(48.0);
    with_font(&bytes, |parcel, font| {
        assert!(font.is_distance_field());
        assert_eq!(font.spread(), 6.0);
        for ch in ['O', '&'] {
            let glyph = font.glyph(48.0, ch).unwrap();
            let (m, coverage) = reference.rasterize(ch, 48.0);
            assert_eq!(glyph.left, m.xmin as f32 - 6.0);
            let field = glyph_alpha(parcel, &glyph);
            let w = m.width + 12;
            assert_eq!(
                field.len(),
                w * (m.height + 12),
                "the box grows by the spread"
            );
            let mut checked = 0;
            for y in 0..m.height {
                for x in 0..m.width {
                    let c = coverage[y * m.width + x];
                    let d = field[(y + 6) * w + x + 6];
                    // Clearly inside is above the outline's 128, clearly
                    // outside below it.
                    if c == 255 {
                        assert!(d > 128, "{ch:?} ({x},{y}): coverage 255, field {d}");
                        checked += 1;
                    } else if c == 0 {
                        assert!(d < 128, "{ch:?} ({x},{y}): coverage 0, field {d}");
                        checked += 1;
                    }
                }
            }
            assert!(checked > 500, "{checked}");
            // The box's border is at the spread: nothing there.
            assert!(field[..w].iter().all(|&a| a == 0), "top row of {ch:?}");
        }
    });
}

#[test]
fn a_font_edit_reruns_the_font_and_its_atlas_only() {
    let p = project("sizes = [20]");
    p.build_ok();
    assert!(
        p.build_ok().processed().is_empty(),
        "a second build runs nothing"
    );
    // Widen 'A' by 100 units: its advance in the `hmtx` table.
    let mut ttf = font_bytes();
    let face = ttf_parser::Face::parse(&ttf, 0).unwrap();
    let a = face.glyph_index('A').unwrap().0 as usize;
    let before = face
        .glyph_hor_advance(ttf_parser::GlyphId(a as u16))
        .unwrap();
    let hmtx = table_offset(&ttf, b"hmtx");
    let at = hmtx + 4 * a;
    ttf[at..at + 2].copy_from_slice(&(before + 100).to_be_bytes());
    p.file("assets/fonts/fira.ttf", &ttf);
    let run = p.build_ok();
    assert_eq!(run.processed(), ["atlas:main", "fonts/fira.ttf"]);
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    with_font(&bytes, |_, font| {
        let advance = font.glyph(20.0, 'A').unwrap().advance;
        let expected = f32::from(before + 100) * 20.0 / 1000.0;
        assert!((advance - expected).abs() < 1e-3, "{advance} vs {expected}");
    });
}

#[test]
fn a_character_the_font_lacks_fails_the_font_by_name_and_the_rest_builds() {
    let p = project("chars = \"Hi→\"");
    let run = p.run(&["build"]);
    assert!(!run.success());
    let message = run.failure_message("fonts/fira.ttf");
    assert!(
        message.contains("no glyph for 1 of `chars`: \"→\""),
        "{message}"
    );
    assert!(run.processed().contains(&"data/intro.txt".to_owned()));
}

/// Where table `tag` starts in an OpenType file (its table directory).
fn table_offset(ttf: &[u8], tag: &[u8; 4]) -> usize {
    let tables = u16::from_be_bytes([ttf[4], ttf[5]]) as usize;
    (0..tables)
        .map(|i| &ttf[12 + 16 * i..28 + 16 * i])
        .find(|record| &record[..4] == tag)
        .map(|record| u32::from_be_bytes(record[8..12].try_into().unwrap()) as usize)
        .expect("table present")
}

/// The font with its character map replaced by one format 12 subtable of
/// `groups` (`start, end, first glyph`), appended at the end of the file
/// and pointed at from the table directory, as a font tool would write it.
fn with_format12_cmap(groups: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut ttf = font_bytes();
    let mut cmap = Vec::new();
    cmap.extend(0u16.to_be_bytes()); // version
    cmap.extend(1u16.to_be_bytes()); // one encoding record
    cmap.extend(3u16.to_be_bytes()); // Windows
    cmap.extend(10u16.to_be_bytes()); // Unicode full repertoire
    cmap.extend(12u32.to_be_bytes()); // the subtable's offset
    cmap.extend(12u16.to_be_bytes()); // format 12
    cmap.extend(0u16.to_be_bytes());
    cmap.extend((16 + 12 * groups.len() as u32).to_be_bytes());
    cmap.extend(0u32.to_be_bytes()); // language
    cmap.extend((groups.len() as u32).to_be_bytes());
    for &(start, end, glyph) in groups {
        for n in [start, end, glyph] {
            cmap.extend(n.to_be_bytes());
        }
    }
    while !ttf.len().is_multiple_of(4) {
        ttf.push(0);
    }
    let offset = ttf.len() as u32;
    ttf.extend(&cmap);
    let tables = u16::from_be_bytes([ttf[4], ttf[5]]) as usize;
    let record = (0..tables)
        .map(|i| 12 + 16 * i)
        .find(|&r| &ttf[r..r + 4] == b"cmap")
        .expect("a cmap record");
    ttf[record + 8..record + 12].copy_from_slice(&offset.to_be_bytes());
    ttf[record + 12..record + 16].copy_from_slice(&(cmap.len() as u32).to_be_bytes());
    ttf
}

#[test]
fn a_character_map_claiming_two_billion_code_points_fails_at_once_by_name() {
    // A well-formed format 12 map: the font builds from it.
    let p = project("chars = \"AB\"");
    let a = ttf_parser::Face::parse(&font_bytes(), 0)
        .unwrap()
        .glyph_index('A')
        .unwrap()
        .0;
    p.file(
        "assets/fonts/fira.ttf",
        with_format12_cmap(&[(0x41, 0x42, a.into())]),
    );
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    // One group's end flipped to 0x7FFFFFFF: fontdue would walk two
    // billion code points (minutes of one core); the build fails by name
    // instead, as fast as any other.
    p.file(
        "assets/fonts/fira.ttf",
        with_format12_cmap(&[(0x41, 0x42, a.into()), (0x43, 0x7FFF_FFFF, a.into())]),
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("fonts/fira.ttf");
    assert!(
        message.contains("claims code points 0x43 to 0x7FFFFFFF, past Unicode's last (0x10FFFF)"),
        "{message}"
    );
}
