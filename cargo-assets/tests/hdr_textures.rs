//! HDR textures through the real binary: Radiance `.hdr` and OpenEXR `.exr`
//! environment maps made BC6H for desktop GPUs and RGBA16F where BC6H is
//! missing (the web), read back with the `ktx2` crate and decoded by
//! bcdec (BC6H, through PyPI's imagecodecs, installed by
//! `tests/install-tools.sh`; skipped, and said, without it) or as half
//! floats (RGBA16F), none of it our code.

use assets_runtime::{Parcel, ResourceId, TextureFormat};
use assets_test_support::Project;
use image::ImageEncoder;

/// A sky shaped like an environment map: a gradient from a dim horizon to
/// a blue zenith, and a sun disc 12 times brighter than white.
fn sky(w: u32, h: u32) -> Vec<[f32; 3]> {
    let mut pixels = Vec::with_capacity((w * h) as usize);
    for y in 0..h {
        for x in 0..w {
            let up = 1.0 - y as f32 / h as f32;
            let (dx, dy) = (x as f32 - w as f32 * 0.7, y as f32 - h as f32 * 0.3);
            let sun = (dx * dx + dy * dy).sqrt() < 3.0;
            pixels.push(if sun {
                [12.0, 11.0, 9.5]
            } else {
                [0.25 + 0.2 * up, 0.35 + 0.3 * up, 0.5 + 0.45 * up]
            });
        }
    }
    pixels
}

fn hdr_file(w: u32, h: u32) -> Vec<u8> {
    let pixels: Vec<image::Rgb<f32>> = sky(w, h).into_iter().map(image::Rgb).collect();
    let mut out = Vec::new();
    image::codecs::hdr::HdrEncoder::new(&mut out)
        .encode(&pixels, w as usize, h as usize)
        .unwrap();
    out
}

fn exr_file(w: u32, h: u32) -> Vec<u8> {
    let bytes: Vec<u8> = (sky(w, h).into_iter().flatten())
        .flat_map(f32::to_ne_bytes)
        .collect();
    let mut out = std::io::Cursor::new(Vec::new());
    image::codecs::openexr::OpenExrEncoder::new(&mut out)
        .write_image(&bytes, w, h, image::ExtendedColorType::Rgb32F)
        .unwrap();
    out.into_inner()
}

/// A distance field as Godot bakes one for GPU particle collisions: one
/// `R` channel of half floats, signed, beyond [-1, 1]; the `image` crate's
/// encoder and decoder only know RGB(A) files.
fn distance_field(w: usize, h: usize) -> (Vec<f32>, Vec<u8>) {
    use exr::prelude::*;
    let field: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (
                (i % w) as f32 - w as f32 / 2.0,
                (i / w) as f32 - h as f32 / 2.0,
            );
            f16::from_f32((x * x + y * y).sqrt() - 5.0).to_f32()
        })
        .collect();
    let samples = FlatSamples::F16(field.iter().map(|&v| f16::from_f32(v)).collect());
    let channels = AnyChannels::sort(SmallVec::from_vec(vec![AnyChannel::new("R", samples)]));
    let layer = Layer::new(
        (w, h),
        LayerAttributes::default(),
        Encoding::SMALL_LOSSLESS,
        channels,
    );
    let mut out = std::io::Cursor::new(Vec::new());
    Image::from_layer(layer)
        .write()
        .to_buffered(&mut out)
        .unwrap();
    (field, out.into_inner())
}

const METADATA: &str = r#"
[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[[package.metadata.assets.rules]]
match = "sky/*"
processor = "texture"
format = "bc6h"
platforms.web = { format = "rgba16f" }

[[package.metadata.assets.rules]]
match = "ldr/*"
processor = "texture"
"#;

/// The texture `name` of the parcel at `path`: format, size, levels.
fn read_back(path: &std::path::Path, name: &str) -> (ktx2::Format, u32, u32, Vec<Vec<u8>>) {
    let bytes = std::fs::read(path).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let texture = parcel.texture(ResourceId::of_runtime(name)).unwrap();
    let reader = ktx2::Reader::new(texture.ktx2()).expect("a valid KTX2 file");
    let header = reader.header();
    let dfd = reader.dfd_blocks().next().expect("a DFD block");
    let basic = ktx2::DfdBlockBasic::parse(dfd.data).expect("a basic DFD block");
    let floats = basic.sample_information().all(|s| {
        s.channel_type_qualifiers
            .contains(ktx2::ChannelTypeQualifiers::FLOAT)
    });
    assert!(floats, "{name}: every sample says float");
    let levels: Vec<Vec<u8>> = reader.levels().map(|l| l.data.to_vec()).collect();
    (
        header.format.unwrap(),
        header.pixel_width,
        header.pixel_height,
        levels,
    )
}

/// A BC6H (unsigned) level decoded by bcdec, through imagecodecs: RGB
/// floats, rows top first; `None` when it is not installed.
fn bcdec(level: &[u8], w: u32, h: u32, scratch: &std::path::Path) -> Option<Vec<[f32; 3]>> {
    std::fs::write(scratch, level).unwrap();
    let script = "import sys, imagecodecs, numpy; \
                  d = open(sys.argv[1], 'rb').read(); \
                  o = imagecodecs.bcn_decode(d, 6, shape=(int(sys.argv[3]), int(sys.argv[2]), 3)); \
                  sys.stdout.buffer.write(o.astype('<f4').tobytes())";
    let (w, h) = (w.to_string(), h.to_string());
    let args = [scratch.as_os_str(), w.as_ref(), h.as_ref()];
    let out = assets_test_support::run_venv_python("bcdec", script, &args)?;
    let floats: Vec<f32> = (out.chunks_exact(4))
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    Some(floats.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect())
}

/// How far `decoded` is from `source`: the mean relative error over every
/// channel (light is judged relative to its brightness, as the eye does).
fn relative_error(source: &[[f32; 3]], decoded: &[[f32; 3]]) -> f64 {
    let mut sum = 0f64;
    for (s, d) in source.iter().zip(decoded) {
        for c in 0..3 {
            sum += f64::from((s[c] - d[c]).abs() / s[c].abs().max(0.05));
        }
    }
    sum / (source.len() * 3) as f64
}

#[test]
fn hdr_and_exr_skies_are_bc6h_on_desktop_and_half_floats_on_the_web() {
    let (w, h) = (64, 32);
    let source = sky(w, h);
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(METADATA);
    p.file("assets/sky/Noon Sky.hdr", hdr_file(w, h));
    p.file("assets/sky/dusk.exr", exr_file(w, h));
    p.file("assets/ldr/noon.hdr", hdr_file(w, h));
    let desktop = p.build_ok();
    // The same sky in an 8-bit format: clamped, and said so.
    let warning = desktop
        .with_reason("asset-warning")
        .find(|m| m["asset"] == "ldr/noon.hdr")
        .expect("a warning for the clamped sky");
    let message = warning["message"].as_str().unwrap();
    assert!(
        message
            .starts_with("an HDR image (light up to 12.0 times white) in 8-bit `bc7` is clamped"),
        "{message}"
    );

    for name in ["sky/Noon Sky.hdr", "sky/dusk.exr"] {
        let (format, tw, th, levels) = read_back(&desktop.parcel("main"), name);
        assert_eq!(
            (format, tw, th),
            (ktx2::Format::BC6H_UFLOAT_BLOCK, w, h),
            "{name}"
        );
        assert_eq!(levels.len(), 7, "{name}: 64x32 down to 1x1");
        assert_eq!(levels[0].len(), (w / 4 * h / 4 * 16) as usize);
        // Decoded as a GPU would, by a decoder we did not write.
        let scratch = p.path().join("level0.bc6h");
        let Some(decoded) = bcdec(&levels[0], w, h, &scratch) else {
            eprintln!("imagecodecs is not installed (tests/install-tools.sh): BC6H not decoded");
            continue;
        };
        let error = relative_error(&source, &decoded);
        assert!(
            error < 0.03,
            "{name}: BC6H off by {:.1}% on average",
            error * 100.0
        );
        let sun = (0.3 * h as f32) as usize * w as usize + (0.7 * w as f32) as usize;
        let bright = decoded[sun][0];
        assert!(
            (bright - 12.0).abs() < 0.5,
            "{name}: the sun is {bright}, not 12 times white"
        );
        eprintln!("{name}: BC6H off by {:.2}% on average", error * 100.0);
    }

    // The web has no BC6H: four half floats a pixel, the light kept.
    let web = p.run(&["build", "--platform", "web"]);
    assert!(web.success(), "{}", web.stderr);
    let (format, _, _, levels) = read_back(&web.parcel("main"), "sky/Noon Sky.hdr");
    assert_eq!(format, ktx2::Format::R16G16B16A16_SFLOAT);
    let halves: Vec<f32> = (levels[0].chunks_exact(2))
        .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect();
    for (i, (s, d)) in source.iter().zip(halves.chunks_exact(4)).enumerate() {
        for c in 0..3 {
            // Radiance's RGBE keeps 8 bits of mantissa; halves 11.
            let tolerance = s[c].abs() / 64.0 + 1e-3;
            assert!(
                (s[c] - d[c]).abs() <= tolerance,
                "pixel {i}: {s:?} vs {d:?}"
            );
        }
        assert_eq!(d[3], 1.0);
    }

    let bytes = std::fs::read(desktop.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let t = parcel
        .texture(ResourceId::of_runtime("sky/dusk.exr"))
        .unwrap();
    assert_eq!(t.format, TextureFormat::Bc6hRgbUfloat);
}

/// An EXR without R, G and B (the `image` crate refuses it) is read by
/// its channels: `R` alone is red, as a GPU samples a one-channel texture.
#[test]
fn an_exr_of_one_channel_is_a_red_float_texture() {
    let (w, h) = (16, 12);
    let (field, file) = distance_field(w, h);
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "particles/*.exr"
processor = "texture"
format = "rgba16f"
mipmaps = false

[[package.metadata.assets.rules]]
match = "bc6h/*.exr"
processor = "texture"
format = "bc6h"
"#,
    );
    p.file(
        "assets/particles/test.GPUParticlesCollisionSDF3D_data.exr",
        &file,
    );
    p.file("assets/bc6h/field.exr", &file);
    let built = p.build_ok();
    let name = "particles/test.GPUParticlesCollisionSDF3D_data.exr";
    let (format, tw, th, levels) = read_back(&built.parcel("main"), name);
    assert_eq!(
        (format, tw, th, levels.len()),
        (ktx2::Format::R16G16B16A16_SFLOAT, 16, 12, 1)
    );
    let halves: Vec<f32> = (levels[0].chunks_exact(2))
        .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect();
    let expected: Vec<f32> = field.iter().flat_map(|&r| [r, 0.0, 0.0, 1.0]).collect();
    assert_eq!(halves, expected);

    // BC6H unsigned keeps the field's positive side; decoded by bcdec.
    let (format, _, _, levels) = read_back(&built.parcel("main"), "bc6h/field.exr");
    assert_eq!(format, ktx2::Format::BC6H_UFLOAT_BLOCK);
    let scratch = p.path().join("field.bc6h");
    let Some(decoded) = bcdec(&levels[0], w as u32, h as u32, &scratch) else {
        eprintln!("imagecodecs is not installed (tests/install-tools.sh): BC6H not decoded");
        return;
    };
    let source: Vec<[f32; 3]> = field.iter().map(|&r| [r.max(0.0), 0.0, 0.0]).collect();
    let error = relative_error(&source, &decoded);
    assert!(error < 0.03, "BC6H off by {:.1}% on average", error * 100.0);
    assert!(
        decoded.iter().all(|d| d[1] == 0.0 && d[2] == 0.0),
        "green or blue is not 0"
    );
}

#[test]
fn bc6h_is_refused_for_the_web_naming_rgba16f() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sky/*"
processor = "texture"
format = "bc6h"
"#,
    );
    p.file("assets/sky/noon.hdr", hdr_file(8, 8));
    let run = p.run(&["build", "--target", "wasm32-unknown-unknown"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert!(
        run.stderr.contains("BC6H is a desktop format") && run.stderr.contains("rgba16f"),
        "{}",
        run.stderr
    );
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "sky/*"
processor = "texture"
format = "rgba16f"
color = "srgb"
"#,
    );
    let run = p.run(&["build"]);
    assert!(
        run.stderr
            .contains("`rgba16f` stores linear light as floats"),
        "{}",
        run.stderr
    );
}
