//! WebP through the real binary: `.webp` files are images by default, and
//! sprites and GPU textures take them as they take PNGs. The lossy fixture
//! comes from libwebp (Pillow), as exporters write it; the lossless one from
//! the `image` crate's encoder.

use assets_runtime::{ParcelBuf, ResourceId};
use assets_test_support::Project;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// `image`'s own decoding of a file, RGBA8.
fn decoded(bytes: &[u8]) -> image::RgbaImage {
    image::load_from_memory(bytes).unwrap().to_rgba8()
}

fn lossless_webp(img: &image::RgbaImage) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut out)
        .encode(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgba8,
        )
        .unwrap();
    out
}

#[test]
fn webp_files_are_images_sprites_and_textures_by_their_pixels() {
    let lossy = std::fs::read(format!("{FIXTURES}/coin-lossy.webp")).unwrap();
    let source = image::open(format!("{FIXTURES}/coin-source.png"))
        .unwrap()
        .to_rgba8();
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"sprites/*\"\nprocessor = \"sprite\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"textures/*\"\nprocessor = \"texture\"\nformat = \"rgba8\"\nmipmaps = false\n",
    )
    .file("assets/ui/coin.webp", &lossy)
    .file("assets/ui/exact.webp", lossless_webp(&source))
    .file("assets/sprites/coin.webp", &lossy)
    .file("assets/textures/coin.webp", &lossy)
    .file("assets/ui/broken.webp", &lossy[..lossy.len() / 2]);
    let run = p.run(&["build"]);
    // The truncated one fails by name, the rest build.
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("ui/broken.webp");
    assert!(message.contains("could not decode image"), "{message}");
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();

    // Lossy with alpha: the pixels `image` decodes from the file.
    let want = decoded(&lossy);
    let image = parcel
        .image(ResourceId::of("ui/coin.webp"))
        .expect("an image");
    assert_eq!((image.header.width, image.header.height), (48, 36));
    assert_eq!(&image.pixels().unwrap()[..], want.as_raw());
    assert!(want.pixels().any(|p| p[3] == 0) && want.pixels().any(|p| p[3] == 255));
    // Lossless: the source's pixels exactly.
    let exact = parcel.image(ResourceId::of("ui/exact.webp")).unwrap();
    assert_eq!(&exact.pixels().unwrap()[..], source.as_raw());
    // A sprite: trimmed to the disc, in an atlas page.
    let sprite = parcel
        .sprite(ResourceId::of("sprites/coin.webp"))
        .expect("a sprite");
    assert_eq!(
        (sprite.frame.source_width, sprite.frame.source_height),
        (48, 36)
    );
    assert!(
        sprite.frame.w < 48 && sprite.frame.h < 36,
        "the clear border is trimmed"
    );
    // A texture: level 0 is the decoded pixels.
    let texture = parcel
        .texture(ResourceId::of("textures/coin.webp"))
        .expect("a texture");
    assert_eq!(*texture.level(0).unwrap(), *want.as_raw().as_slice());
}
