//! WebP through the real binary: `.webp` files are images by default, and
//! sprites and GPU textures take them as they take PNGs. The lossy fixture
//! comes from libwebp (Pillow), as exporters write it; the lossless one from
//! the `image` crate's encoder. And the two older formats real trees still
//! hold, TGA and BMP, written and read back by Pillow.

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

/// TGA (run-length encoded and raw, with alpha) and BMP files as Pillow
/// writes them are images by default, with the pixels Pillow reads back;
/// Pillow comes with CairoSVG in the test tools' environment
/// (`tests/install-tools.sh`), skipped and said without it.
#[test]
fn tga_and_bmp_files_are_images_with_the_pixels_pillow_reads() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let dir = p.path().join("assets/legacy art");
    std::fs::create_dir_all(&dir).unwrap();
    let script = "import sys\n\
from PIL import Image\n\
w, h = 13, 7\n\
img = Image.new('RGBA', (w, h))\n\
img.putdata([(x * 19 % 256, y * 37 % 256, (x * y * 5) % 256, 255 if (x + y) % 3 else 90) for y in range(h) for x in range(w)])\n\
d = sys.argv[1]\n\
img.save(d + '/icon rle.tga', compression='tga_rle')\n\
img.save(d + '/icon.tga')\n\
img.convert('RGB').save(d + '/icon.bmp')\n\
names = ['icon rle.tga', 'icon.tga', 'icon.bmp']\n\
sys.stdout.buffer.write(b''.join(Image.open(d + '/' + n).convert('RGBA').tobytes() for n in names))\n";
    let Some(pillow) = assets_test_support::run_venv_python("Pillow", script, &[dir.as_os_str()])
    else {
        eprintln!("Pillow is not installed (tests/install-tools.sh): TGA and BMP not checked");
        return;
    };
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    let len = 13 * 7 * 4;
    for (i, name) in ["icon rle.tga", "icon.tga", "icon.bmp"]
        .into_iter()
        .enumerate()
    {
        let image = parcel
            .image(ResourceId::of(&format!("legacy art/{name}")))
            .unwrap_or_else(|| panic!("{name}: an image"));
        assert_eq!((image.header.width, image.header.height), (13, 7), "{name}");
        assert!(
            image.pixels().unwrap()[..] == pillow[i * len..(i + 1) * len],
            "{name}: the pixels Pillow reads"
        );
    }
    // The alpha survived (the BMP has none).
    assert!(pillow[..len].chunks(4).any(|p| p[3] == 90));
}
