//! SVG images through the real binary: copied as bytes by default, and
//! rasterized at their declared size when a rule asks for an `image`,
//! `sprite` or `texture`. The pixels are compared with CairoSVG's (PyPI,
//! installed by `tests/install-tools.sh`), a rasterizer we did not write,
//! drawing through cairo rather than resvg; without it that comparison is
//! skipped, and says so.

use std::path::Path;

use assets_runtime::{Parcel, ResourceId};
use assets_test_support::Project;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets-build/tests/fixtures/svg"
);

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

/// CairoSVG's rendering of `svg` at `w`×`h`, as RGBA8 with straight
/// alpha; `None` when it is not installed.
fn cairosvg(svg: &Path, w: u32, h: u32, out: &Path) -> Option<image::RgbaImage> {
    let script = "import sys, cairosvg; cairosvg.svg2png(url=sys.argv[1], write_to=sys.argv[2], \
                  output_width=int(sys.argv[3]), output_height=int(sys.argv[4]))";
    let (w, h) = (w.to_string(), h.to_string());
    let args = [svg.as_os_str(), out.as_os_str(), w.as_ref(), h.as_ref()];
    assets_test_support::run_venv_python("CairoSVG", script, &args)?;
    Some(image::open(out).unwrap().into_rgba8())
}

/// How far two renderings of one drawing are apart: the mean difference
/// over every channel of premultiplied colour (so the colour of clear
/// pixels does not count), and the share of pixels whose alpha differs by
/// more than a quarter (a shape in one and not the other, not antialiasing).
fn distance(a: &image::RgbaImage, b: &image::RgbaImage) -> (f64, f64) {
    assert_eq!(a.dimensions(), b.dimensions());
    let premultiplied = |p: &image::Rgba<u8>| {
        let alpha = f64::from(p.0[3]) / 255.0;
        [
            f64::from(p.0[0]) * alpha,
            f64::from(p.0[1]) * alpha,
            f64::from(p.0[2]) * alpha,
            f64::from(p.0[3]),
        ]
    };
    let (mut sum, mut shapes) = (0.0, 0usize);
    for (p, q) in a.pixels().zip(b.pixels()) {
        let (p, q) = (premultiplied(p), premultiplied(q));
        sum += (0..4).map(|c| (p[c] - q[c]).abs()).sum::<f64>();
        if (p[3] - q[3]).abs() > 64.0 {
            shapes += 1;
        }
    }
    let pixels = f64::from(a.width() * a.height());
    (sum / (pixels * 4.0), shapes as f64 / pixels)
}

/// The RGBA8 pixels of image resource `name` (an `image`, or a sprite's
/// frame cut from its page and put back at its source size).
fn pixels_of(parcel: &Parcel<'_>, name: &str) -> image::RgbaImage {
    let id = ResourceId::of_runtime(name);
    if let Some(image) = parcel.image(id) {
        let (w, h) = (image.header.width, image.header.height);
        return image::RgbaImage::from_raw(w, h, image.pixels().unwrap().into_owned()).unwrap();
    }
    let sprite = parcel.sprite(id).expect("an image or a sprite");
    assets_test_support::pixels::frame_image(parcel, sprite.frame)
}

#[test]
fn svgs_a_rule_asks_for_are_rasterized_at_their_declared_size_as_cairo_draws_them() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "ui/*.svg"
processor = "image"

[[package.metadata.assets.rules]]
match = "icons/*.svg"
processor = "sprite"
"#,
    );
    p.file("assets/ui/Badge Large.svg", fixture("badge.svg"));
    p.file("assets/icons/heart.svg", fixture("icon.svg"));
    p.file("assets/ui/label.svg", fixture("label.svg"));
    // Not named by a rule: copied as it is, for an engine that draws vectors.
    p.file("assets/logo.svg", fixture("icon.svg"));
    let run = p.build_ok();
    let warning = run
        .with_reason("asset-warning")
        .find(|m| m["asset"] == "ui/label.svg")
        .expect("a warning for the SVG with text");
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.starts_with("the SVG has text, which is not drawn"),
        "{message}"
    );
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let logo = parcel.get(ResourceId::of_runtime("logo.svg")).unwrap();
    assert_eq!(
        (logo.kind, logo.bytes().unwrap().as_ref()),
        ("bytes", &fixture("icon.svg")[..])
    );

    // 16.93 x 12.7 mm at CSS's 96 dpi, and a 48-unit viewBox with no size.
    let cases = [
        ("ui/Badge Large.svg", "badge.svg", (64, 48)),
        ("icons/heart.svg", "icon.svg", (48, 48)),
    ];
    let scratch = p.path().join("cairo");
    std::fs::create_dir_all(&scratch).unwrap();
    for (name, file, size) in cases {
        let ours = pixels_of(&parcel, name);
        assert_eq!(ours.dimensions(), size, "{name}: its declared size");
        assert!(
            ours.pixels().any(|p| p.0[3] == 255),
            "{name} draws something opaque"
        );
        let Some(cairo) = cairosvg(
            &Path::new(FIXTURES).join(file),
            size.0,
            size.1,
            &scratch.join(format!("{file}.png")),
        ) else {
            eprintln!("CairoSVG is not installed (tests/install-tools.sh): {name} not compared");
            continue;
        };
        // Antialiasing differs along edges (the badge's thin stroke: up to
        // 17 of 255 on a row); a wrong size, place or colour is far more.
        let (mean, shapes) = distance(&ours, &cairo);
        assert!(
            mean < 3.0 && shapes < 0.01,
            "{name}: mean difference {mean:.2} of 255, {:.2}% of pixels a shape apart from CairoSVG's",
            shapes * 100.0
        );
    }
}

#[test]
fn a_broken_or_huge_svg_fails_by_name_and_reason() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "*.svg"
processor = "image"
"#,
    );
    p.file("assets/cut.svg", &fixture("icon.svg")[..60]);
    p.file(
        "assets/huge.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"90000\" height=\"10\"/>",
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let cut = run.failure_message("cut.svg");
    assert!(cut.starts_with("not an SVG image resvg can read"), "{cut}");
    let huge = run.failure_message("huge.svg");
    assert!(
        huge.contains("the SVG declares 90000x10 pixels, over `max-dimension` (16384)"),
        "{huge}"
    );
}
