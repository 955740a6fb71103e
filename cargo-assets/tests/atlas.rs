//! Sprites and atlases through the real binary: real PNGs packed into pages
//! that hold every sprite's pixels, trimmed and turned as the frames say;
//! deterministic across threads and file creation order; incremental; and
//! clear about sprites that cannot fit.

use assets_runtime::{ParcelBuf, ResourceId, SpriteFrame};
use assets_test_support::{Project, encode_png, sprite_image};
use image::RgbaImage;

const PAGE: u32 = 128;
const PADDING: u32 = 2;
const EXTRUDE: u32 = 1;

fn metadata(extra: &str) -> String {
    format!(
        r#"
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"
atlas = "ui"

[package.metadata.assets.atlases.ui]
max-size = {PAGE}
padding = {PADDING}
extrude = {EXTRUDE}
rotate = true
{extra}
"#
    )
}

/// Sprites of varied sizes, some with transparent borders, one wide enough
/// to need turning on small pages, one fully transparent; more than a page.
fn sprites() -> Vec<(String, RgbaImage)> {
    let mut out = Vec::new();
    for i in 0..36u32 {
        let w = 4 + (i * 37) % 41;
        let h = 3 + (i * 53) % 37;
        let border = if i % 3 == 0 { 1 + i % 4 } else { 0 };
        out.push((
            format!("sprites/s{i:02}.png"),
            sprite_image(w, h, border, i),
        ));
    }
    out.push(("sprites/ui/wide.png".into(), sprite_image(120, 9, 0, 99)));
    out.push(("sprites/ui/empty.png".into(), RgbaImage::new(10, 10)));
    out
}

fn project(sprites: &[(String, RgbaImage)]) -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&metadata(""));
    for (name, image) in sprites {
        p.file(&format!("assets/{name}"), encode_png(image));
    }
    p
}

/// The smallest box holding every pixel with alpha > 0, computed here
/// independently of the pipeline: `(x0, y0, x1, y1)`.
fn opaque_box(image: &RgbaImage) -> Option<(u32, u32, u32, u32)> {
    let mut b: Option<(u32, u32, u32, u32)> = None;
    for (x, y, p) in image.enumerate_pixels() {
        if p[3] > 0 {
            let (x0, y0, x1, y1) = b.unwrap_or((x, y, x + 1, y + 1));
            b = Some((x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1)));
        }
    }
    b
}

#[test]
fn sprites_pack_into_pages_that_hold_their_exact_pixels_without_overlap() {
    let sprites = sprites();
    let p = project(&sprites);
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    let mut placed: Vec<(&str, SpriteFrame)> = Vec::new();
    for (name, source) in &sprites {
        let sprite = parcel
            .sprite(ResourceId::of(name))
            .unwrap_or_else(|| panic!("`{name}` is not a sprite of the parcel"));
        let f = sprite.frame;
        assert_eq!(
            (f.source_width, f.source_height),
            source.dimensions(),
            "{name}"
        );
        let Some((x0, y0, x1, y1)) = opaque_box(source) else {
            assert_eq!((f.w, f.h), (0, 0), "{name} is fully transparent");
            continue;
        };
        assert_eq!((f.trim_x, f.trim_y), (x0, y0), "{name}: trim offset");
        assert_eq!(f.content_size(), (x1 - x0, y1 - y0), "{name}: trimmed size");
        let page = &sprite.page;
        let pixels = page.pixels().expect("pages decode");
        assert!(page.header.width <= PAGE && page.header.height <= PAGE);
        assert!(f.fits_in(page.header.width, page.header.height));
        let (pw, ph) = (page.header.width as f32, page.header.height as f32);
        assert_eq!(
            f.uv,
            [
                f.x as f32 / pw,
                f.y as f32 / ph,
                (f.x + f.w) as f32 / pw,
                (f.y + f.h) as f32 / ph
            ]
        );
        for sy in 0..f.content_size().1 {
            for sx in 0..f.content_size().0 {
                let (px, py) = if f.rotated {
                    (f.x + f.w - 1 - sy, f.y + sx)
                } else {
                    (f.x + sx, f.y + sy)
                };
                let at = ((py * page.header.width + px) * 4) as usize;
                let want = source.get_pixel(x0 + sx, y0 + sy).0;
                assert_eq!(pixels[at..at + 4], want, "{name}: pixel ({sx},{sy})");
            }
        }
        placed.push((name, f));
    }
    let pages: std::collections::BTreeSet<u32> = placed.iter().map(|(_, f)| f.page_index).collect();
    assert!(
        pages.len() >= 2,
        "the set is larger than one {PAGE}x{PAGE} page"
    );
    assert!(
        placed
            .iter()
            .any(|(n, f)| *n == "sprites/ui/wide.png" && f.rotated),
        "a 120-pixel-wide sprite fits a 128 page with its padding and borders only turned"
    );
    // Each sprite with its extruded border keeps `padding` pixels from every other.
    let bordered = |f: &SpriteFrame| {
        (
            f.x - EXTRUDE,
            f.y - EXTRUDE,
            f.x + f.w + EXTRUDE,
            f.y + f.h + EXTRUDE,
        )
    };
    for (i, (a, fa)) in placed.iter().enumerate() {
        for (b, fb) in &placed[i + 1..] {
            let ((ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1)) = (bordered(fa), bordered(fb));
            let apart = fa.page_index != fb.page_index
                || ax1 + PADDING <= bx0
                || bx1 + PADDING <= ax0
                || ay1 + PADDING <= by0
                || by1 + PADDING <= ay0;
            assert!(
                apart,
                "`{a}` {fa:?} and `{b}` {fb:?} are closer than the padding"
            );
        }
    }
}

#[test]
fn atlas_pages_are_byte_identical_across_thread_counts_and_file_creation_order() {
    let sprites = sprites();
    let forward = project(&sprites);
    let mut reversed_list = sprites.clone();
    reversed_list.reverse();
    let reversed = project(&reversed_list);
    let one = forward.run(&["build", "-j", "1"]);
    let two = reversed.run(&["build", "-j", "2"]);
    assert!(
        one.success() && two.success(),
        "{}\n{}",
        one.stderr,
        two.stderr
    );
    let a = std::fs::read(one.parcel("main")).unwrap();
    let b = std::fs::read(two.parcel("main")).unwrap();
    assert!(
        a == b,
        "parcels differ between -j1 and -j2 with files created in reverse order"
    );
}

/// Flat-coloured art, 4 pixels to a colour, with a clear border: what
/// compresses on a page (noise would be stored raw).
fn blocky(w: u32, h: u32, seed: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        if x < 2 || y < 2 || x + 2 >= w || y + 2 >= h {
            return image::Rgba([0; 4]);
        }
        let v = ((x / 4).wrapping_mul(2_246_822_519) ^ (y / 4).wrapping_mul(3_266_489_917))
            .wrapping_add(seed.wrapping_mul(668_265_263));
        image::Rgba([v as u8, (v >> 8) as u8, (v >> 16) as u8, 255])
    })
}

/// A page past one LZ4 piece (1 MiB of pixels) is compressed in pieces on
/// every core and joined into one standard block: the same bytes on one
/// thread as on two, and liblz4 (the reference C library, through
/// imagecodecs) decodes it to the pixels our reader gives, which hold
/// every sprite.
#[test]
fn a_large_page_is_one_lz4_block_that_liblz4_reads_the_same_on_one_thread_or_two() {
    let sprites: Vec<(String, RgbaImage)> = (0..90u32)
        .map(|i| {
            let (w, h) = (60 + (i * 37) % 80, 60 + (i * 53) % 80);
            (format!("sprites/big {i:02}.png"), blocky(w, h, i))
        })
        .collect();
    let make = || {
        let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
        p.metadata(
            r#"
[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"
atlas = "big"

[package.metadata.assets.atlases.big]
max-size = 2048
padding = 2
extrude = 1
"#,
        );
        for (name, image) in &sprites {
            p.file(&format!("assets/{name}"), encode_png(image));
        }
        p
    };
    let (one, two) = (make(), make());
    let (a, b) = (
        one.run(&["build", "-j", "1"]),
        two.run(&["build", "-j", "2"]),
    );
    assert!(a.success() && b.success(), "{}\n{}", a.stderr, b.stderr);
    let parcel = std::fs::read(a.parcel("main")).unwrap();
    assert!(
        parcel == std::fs::read(b.parcel("main")).unwrap(),
        "parcels differ between -j1 and -j2"
    );
    let buf = ParcelBuf::open(&a.parcel("main")).unwrap();
    let first = buf
        .parcel()
        .sprite(ResourceId::of("sprites/big 00.png"))
        .unwrap();
    let page = first.page;
    let len = page.header.width as usize * page.header.height as usize * 4;
    assert!(
        len > 2 << 20,
        "a page of {len} bytes is at least three pieces"
    );
    assert_eq!(page.header.encoding, assets_runtime::image::Encoding::Lz4);
    let pixels = page.pixels().expect("our reader decodes the page");
    for (name, source) in &sprites {
        let f = buf.parcel().sprite(ResourceId::of(name)).unwrap().frame;
        assert_eq!(f.page_index, 0, "{name}: one page");
        for (sx, sy, want) in source.enumerate_pixels() {
            let (x, y) = (sx.wrapping_sub(f.trim_x), sy.wrapping_sub(f.trim_y));
            if x < f.w && y < f.h {
                let at = (((f.y + y) * page.header.width + f.x + x) * 4) as usize;
                assert_eq!(pixels[at..at + 4], want.0, "{name} ({sx},{sy})");
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (block, decoded) = (dir.path().join("page.lz4"), dir.path().join("page.rgba"));
    std::fs::write(&block, page.data).unwrap();
    let script = "import sys, imagecodecs\n\
        data = open(sys.argv[1], 'rb').read()\n\
        out = imagecodecs.lz4_decode(data, header=False, out=int(sys.argv[3]))\n\
        open(sys.argv[2], 'wb').write(out)";
    let n = len.to_string();
    let args = [block.as_os_str(), decoded.as_os_str(), n.as_ref()];
    if assets_test_support::run_venv_python("liblz4", script, &args).is_none() {
        eprintln!("imagecodecs is not installed (tests/install-tools.sh): liblz4 not run");
        return;
    }
    assert!(
        std::fs::read(&decoded).unwrap() == pixels[..],
        "liblz4 decodes the joined block to the page"
    );
}

#[test]
fn editing_one_sprite_redecodes_only_it_and_repacks_the_atlas() {
    let sprites = sprites();
    let p = project(&sprites);
    p.build_ok();
    assert_eq!(p.build_ok().processed(), Vec::<String>::new(), "no-op");
    p.file(
        "assets/sprites/s05.png",
        encode_png(&sprite_image(20, 20, 2, 1000)),
    );
    assert_eq!(p.build_ok().processed(), ["atlas:ui", "sprites/s05.png"]);
    p.touch("assets/sprites/s06.png");
    assert_eq!(p.build_ok().processed(), Vec::<String>::new(), "same bytes");
    p.file(
        "assets/sprites/new.png",
        encode_png(&sprite_image(7, 7, 0, 7)),
    );
    assert_eq!(p.build_ok().processed(), ["atlas:ui", "sprites/new.png"]);
    p.metadata(&metadata("encoding = \"png\""));
    assert_eq!(
        p.build_ok().processed(),
        ["atlas:ui"],
        "atlas settings re-pack, not re-decode"
    );
    p.remove("assets/sprites/new.png");
    let run = p.build_ok();
    assert_eq!(run.processed(), ["atlas:ui"]);
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    assert!(buf.parcel().by_name("sprites/new.png").is_none());
    let page = buf.parcel().image(ResourceId::of("atlas:ui#0")).unwrap();
    assert_eq!(page.header.encoding, assets_runtime::image::Encoding::Png);
}

#[test]
fn sprites_larger_than_a_page_fail_their_atlas_by_name_and_keep_the_last_release_parcel() {
    let p = project(&sprites()[..4]);
    p.metadata(&metadata("").replace("rotate = true", "rotate = false"));
    let good = p.run(&["build", "--release"]);
    assert!(good.success(), "{}", good.stderr);
    let before = std::fs::read(good.parcel("main")).unwrap();
    p.file(
        "assets/sprites/huge.png",
        encode_png(&sprite_image(200, 20, 0, 3)),
    )
    .file(
        "assets/sprites/tall.png",
        encode_png(&sprite_image(10, 300, 0, 4)),
    );
    let run = p.run(&["build", "--release"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("atlas:ui");
    // Both, in one build.
    for needle in [
        "sprites/huge.png",
        "200x20",
        "sprites/tall.png",
        "10x300",
        "128x128",
        "max-size",
        "rotate = true",
    ] {
        assert!(
            message.contains(needle),
            "`{needle}` missing from: {message}"
        );
    }
    assert!(run.stderr.contains("sprites/huge.png"), "{}", run.stderr);
    assert_eq!(
        std::fs::read(good.parcel("main")).unwrap(),
        before,
        "last good parcel kept"
    );
}

#[test]
fn inspect_describes_frames_and_draws_the_pages() {
    let p = project(&sprites()[..6]);
    let run = p.build_ok();
    let parcel = run.parcel("main");
    let out = p.path().join("pictures");
    let inspect = p.run(&[
        "inspect",
        parcel.to_str().unwrap(),
        "--atlas",
        "ui",
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(inspect.success(), "{}", inspect.stderr);
    let sprite = inspect
        .with_reason("resource")
        .find(|m| m["name"] == "sprites/s01.png")
        .expect("s01 listed");
    assert_eq!(sprite["kind"], "sprite");
    for key in ["page", "x", "y", "w", "h", "rotated"] {
        assert!(!sprite["sprite"][key].is_null(), "sprite.{key} in {sprite}");
    }
    let picture = inspect
        .with_reason("atlas-picture")
        .next()
        .expect("a picture");
    let png = image::open(picture["path"].as_str().unwrap()).unwrap();
    assert_eq!(png.width(), picture["width"].as_u64().unwrap() as u32);
    assert_eq!(picture["sprites"], 6);
    let missing = p.run(&["inspect", parcel.to_str().unwrap(), "--atlas", "nope"]);
    assert_eq!(missing.code, Some(101));
    assert!(
        missing.stderr.contains("no atlas `nope`; its atlases: ui"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_sprite_naming_an_undeclared_atlas_is_a_manifest_error_with_a_suggestion() {
    let p = project(&sprites()[..1]);
    p.metadata(&metadata("").replace("atlas = \"ui\"", "atlas = \"iu\""));
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    for needle in [
        "names atlas `iu`, which is not declared",
        "did you mean `ui`?",
        "Cargo.toml:",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` missing from:\n{}",
            run.stderr
        );
    }
}

#[test]
fn a_corrupt_sprite_fails_by_name_and_its_last_good_pixels_stay_in_a_dev_parcel() {
    let sprites = sprites()[..3].to_vec();
    let p = project(&sprites);
    p.build_ok();
    p.file("assets/sprites/s01.png", b"\x89PNG\r\n\x1a\n not really");
    p.file("assets/sprites/new.png", b"never a PNG");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("sprites/s01.png");
    assert!(message.contains("could not decode image"), "{message}");
    // The atlas is not skipped: it packs the sprites that built, and the
    // broken one as it last built.
    assert_eq!(
        run.with_reason("asset-skipped").count(),
        0,
        "{}",
        run.stderr
    );
    let stand_ins = run
        .with_reason("parcel-stand-ins")
        .next()
        .expect("the parcel says what stands in");
    assert_eq!(
        stand_ins["last_good"],
        serde_json::json!(["sprites/s01.png"])
    );
    assert_eq!(
        stand_ins["left_out"],
        serde_json::json!(["sprites/new.png"])
    );
    for needle in [
        "parcel `main` holds the last good build of 1 asset that failed: `sprites/s01.png`",
        "parcel `main` is without 1 asset that failed and never built: `sprites/new.png`",
        "ignore = [\"sprites/",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` missing from:\n{}",
            run.stderr
        );
    }
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    for (name, source) in &sprites {
        let sprite = parcel
            .sprite(ResourceId::of(name))
            .unwrap_or_else(|| panic!("`{name}` is not in the parcel"));
        let (x0, y0, x1, y1) = opaque_box(source).expect("these sprites have pixels");
        let f = sprite.frame;
        assert_eq!(f.content_size(), (x1 - x0, y1 - y0), "{name}");
        let pixels = sprite.page.pixels().unwrap();
        let (px, py) = if f.rotated {
            (f.x + f.w - 1, f.y)
        } else {
            (f.x, f.y)
        };
        let at = ((py * sprite.page.header.width + px) * 4) as usize;
        assert_eq!(pixels[at..at + 4], source.get_pixel(x0, y0).0, "{name}");
    }
    assert!(parcel.sprite(ResourceId::of("sprites/new.png")).is_none());

    // A release build never writes a parcel short of an asset.
    let release = p.run(&["build", "--release"]);
    assert_eq!(release.code, Some(101), "{}", release.stderr);
    assert!(release.build_finished().parcels.is_empty());
    for needle in [
        "parcel `main` not written",
        "sprites/s01.png",
        "there is no previous one",
    ] {
        assert!(
            release.stderr.contains(needle),
            "`{needle}` missing from:\n{}",
            release.stderr
        );
    }
}
