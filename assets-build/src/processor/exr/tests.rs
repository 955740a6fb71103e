use exr::prelude::{
    AnyChannel, AnyChannels, Encoding, FlatSamples, Image, ImageAttributes, IntegerBounds, Layer,
    LayerAttributes, SmallVec, Vec2, WritableImage, f16,
};
use image::{DynamicImage, ImageDecoder};

use super::*;

/// An EXR of one layer, `size` pixels at `position` in a display window
/// of `display` pixels from the origin, with the channels given.
fn exr_file(
    display: (usize, usize),
    size: (usize, usize),
    position: (i32, i32),
    channels: Vec<(&str, FlatSamples)>,
) -> Vec<u8> {
    let channels = channels
        .into_iter()
        .map(|(name, samples)| AnyChannel::new(name, samples))
        .collect();
    let attributes = LayerAttributes {
        layer_position: Vec2(position.0, position.1),
        ..LayerAttributes::default()
    };
    let layer = Layer::new(
        size,
        attributes,
        Encoding::SMALL_LOSSLESS,
        AnyChannels::sort(SmallVec::from_vec(channels)),
    );
    let bounds = IntegerBounds::new((0, 0), display);
    let image = Image::new(ImageAttributes::new(bounds), layer);
    let mut out = std::io::Cursor::new(Vec::new());
    image.write().to_buffered(&mut out).expect("write EXR");
    out.into_inner()
}

fn halves(values: impl IntoIterator<Item = f32>) -> FlatSamples {
    FlatSamples::F16(values.into_iter().map(f16::from_f32).collect())
}

fn ramp(n: usize, scale: f32, bias: f32) -> Vec<f32> {
    (0..n).map(|i| i as f32 * scale + bias).collect()
}

#[test]
fn a_single_r_channel_is_red_as_a_gpu_samples_it() {
    // A distance field as Godot bakes one: signed, out of [0, 1].
    let field = ramp(12, 0.5, -2.0);
    let bytes = exr_file((4, 3), (4, 3), (0, 0), vec![("R", halves(field.clone()))]);
    assert!(is_exr(&bytes));
    assert_eq!(dimensions(&bytes, 16).unwrap(), (4, 3));
    let image = decode(&bytes, 16).unwrap();
    let pixels: Vec<[f32; 4]> = image.pixels().map(|p| p.0).collect();
    let expected: Vec<[f32; 4]> = field.iter().map(|&r| [r, 0.0, 0.0, 1.0]).collect();
    assert_eq!(pixels, expected);
}

#[test]
fn luminance_alone_is_grey_and_beside_colour_is_left_out() {
    let y = ramp(4, 0.25, 0.0);
    let bytes = exr_file((2, 2), (2, 2), (0, 0), vec![("Y", FlatSamples::F32(y.clone()))]);
    let grey: Vec<[f32; 4]> = decode(&bytes, 16).unwrap().pixels().map(|p| p.0).collect();
    assert_eq!(grey, y.iter().map(|&v| [v, v, v, 1.0]).collect::<Vec<_>>());

    let g = ramp(4, 1.0, 10.0);
    let bytes = exr_file(
        (2, 2),
        (2, 2),
        (0, 0),
        vec![("G", FlatSamples::F32(g.clone())), ("Y", FlatSamples::F32(y)), ("Z", FlatSamples::F32(vec![9.0; 4]))],
    );
    let green: Vec<[f32; 4]> = decode(&bytes, 16).unwrap().pixels().map(|p| p.0).collect();
    assert_eq!(green, g.iter().map(|&v| [0.0, v, 0.0, 1.0]).collect::<Vec<_>>());
}

/// RGB and RGBA files, the ones the `image` crate reads, come out as it
/// decodes them: in the display window, the data window offset within it.
#[test]
fn rgb_files_decode_as_the_image_crate_decodes_them() {
    let n = 5 * 3;
    let cases = [
        (vec!["R", "G", "B"], (5, 3), (0, 0)),
        (vec!["A", "B", "G", "R"], (5, 3), (0, 0)),
        (vec!["R", "G", "B", "A"], (8, 6), (2, 1)),
        (vec!["R", "G", "B"], (4, 2), (-1, 0)),
    ];
    for (names, display, position) in cases {
        let channels = (names.iter().enumerate())
            .map(|(i, &name)| (name, halves(ramp(n, 0.75, i as f32 * 3.0 - 1.0))))
            .collect();
        let bytes = exr_file(display, (5, 3), position, channels);
        let ours = decode(&bytes, 64).unwrap();
        let decoder = image::codecs::openexr::OpenExrDecoder::with_alpha_preference(
            std::io::Cursor::new(&bytes),
            Some(true),
        )
        .unwrap();
        assert_eq!(decoder.dimensions(), ours.dimensions(), "{names:?} {display:?}");
        let theirs = DynamicImage::from_decoder(decoder).unwrap().into_rgba32f();
        assert_eq!(ours, theirs, "{names:?} {display:?} {position:?}");
        // Outside the data window: transparent black.
        if position.0 > 0 && position.1 > 0 {
            assert_eq!(ours.get_pixel(0, 0).0, [0.0; 4]);
        }
    }
}

#[test]
fn files_that_cannot_be_read_fail_naming_why() {
    let message = |bytes: &[u8], max: u32| decode(bytes, max).unwrap_err().to_string();

    let chroma = exr_file(
        (2, 2),
        (2, 2),
        (0, 0),
        vec![("Y", halves([0.5; 4])), ("RY", halves([0.1; 4])), ("BY", halves([0.2; 4]))],
    );
    let m = message(&chroma, 16);
    assert!(m.contains("luminance and chroma") && m.contains("RGB"), "{m}");

    let depth = exr_file((2, 2), (2, 2), (0, 0), vec![("Z", halves([1.0; 4])), ("id", FlatSamples::U32(vec![7; 4]))]);
    let m = message(&depth, 16);
    assert!(m.contains("no colour channel") && m.contains("`Z`") && m.contains("`id`"), "{m}");
    assert!(dimensions(&depth, 16).is_err());

    let big = exr_file((40, 3), (40, 3), (0, 0), vec![("R", halves([0.0; 120]))]);
    let m = message(&big, 32);
    assert!(m.contains("40x3") && m.contains("max-dimension"), "{m}");
    // A data window past the limit in a display window within it.
    let wide = exr_file((8, 3), (40, 3), (-16, 0), vec![("R", halves([0.0; 120]))]);
    let m = message(&wide, 32);
    assert!(m.contains("data window") && m.contains("40x3"), "{m}");

    // Every part is read, so a part past the limit fails too, though
    // another part holds the colour.
    let part = |name: &str, w: usize, channel: &str| {
        let samples = halves(vec![0.5; w * 3]);
        let channels = AnyChannels::sort(SmallVec::from_vec(vec![AnyChannel::new(channel, samples)]));
        Layer::new((w, 3), LayerAttributes::named(name), Encoding::SMALL_LOSSLESS, channels)
    };
    let layers = SmallVec::from_vec(vec![part("colour", 8, "R"), part("depth", 40, "Z")]);
    let image = Image::new(ImageAttributes::new(IntegerBounds::new((0, 0), (8, 3))), layers);
    let mut two_parts = std::io::Cursor::new(Vec::new());
    image.write().to_buffered(&mut two_parts).expect("write EXR");
    let two_parts = two_parts.into_inner();
    let m = message(&two_parts, 32);
    assert!(m.contains("data window") && m.contains("40x3"), "{m}");
    assert_eq!(decode(&two_parts, 64).unwrap().dimensions(), (8, 3));
}

/// Every prefix of a file, and the file with any byte changed, is an
/// error or an image: never a panic.
#[test]
fn cut_and_corrupt_files_never_panic() {
    let bytes = exr_file((6, 4), (6, 4), (0, 0), vec![("R", halves(ramp(24, 0.1, 0.0))), ("A", halves([1.0; 24]))]);
    for len in 0..bytes.len() {
        assert!(decode(&bytes[..len], 64).is_err(), "a file cut at {len} bytes decodes");
    }
    for at in 0..bytes.len() {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0xa5;
        let _ = decode(&corrupt, 64);
        let _ = dimensions(&corrupt, 64);
    }
}
