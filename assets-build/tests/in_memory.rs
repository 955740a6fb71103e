//! The built-in processors, each run alone through the test kit
//! (`assets_build::testing`): inputs given as bytes, and what each read,
//! looked for and missed, depended on, referenced, warned of and emitted.
//! The whole-pipeline tests are elsewhere; these say what one `process`
//! call does, as a processor crate's own tests would.

use assets_build::testing::ProcessorTest;
use assets_build::unstable::builtins::{Command, Copy, Image, Shader};
use assets_build::unstable::builtins::{Sprite, Text};
use assets_build::{AssetPath, Context, ProcessError, Processor};

fn asset(path: &str) -> AssetPath {
    AssetPath::new(path).unwrap()
}

/// A 3×2 RGBA PNG, made with the same `image` crate the pipeline decodes with.
fn png() -> Vec<u8> {
    let pixels =
        image::RgbaImage::from_fn(3, 2, |x, y| image::Rgba([x as u8 * 80, y as u8, 7, 255]));
    let mut bytes = std::io::Cursor::new(Vec::new());
    pixels
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

#[test]
fn copy_reads_its_source_and_emits_it_as_bytes() {
    let run = ProcessorTest::new("data/blob.bin", [0u8, 1, 2])
        .run(&Copy)
        .expect_ok();
    assert_eq!(run.main(), [0, 1, 2]);
    assert_eq!(run.output("").unwrap().kind, "bytes");
    assert_eq!(run.read, ["data/blob.bin"]);
    assert!(run.missing.is_empty() && run.dependencies.is_empty());
}

#[test]
fn text_follows_an_include_through_its_folders_and_records_where_it_looked() {
    let run = ProcessorTest::new("dialogue/intro.txt", "Hello\r\n#include \"names.txt\"\r\n")
        .file("shared/names.txt", "Ada\n")
        .settings("includes = true\ninclude-dirs = [\"shared\"]")
        .run(&Text)
        .expect_ok();
    assert_eq!(run.main(), b"Hello\nAda\n");
    assert_eq!(run.read, ["dialogue/intro.txt"]);
    // Creating the first place looked at would change the output.
    assert_eq!(run.missing, ["dialogue/names.txt"]);
    assert_eq!(run.dependencies, [asset("shared/names.txt")]);

    let missing = ProcessorTest::new("a.txt", "#include \"gone.txt\"\n")
        .settings("includes = true")
        .run(&Text);
    let error = missing.error().unwrap();
    assert!(
        error.contains("line 1") && error.contains("`gone.txt`"),
        "{error}"
    );
    assert_eq!(missing.missing, ["gone.txt"]);
}

#[test]
fn an_include_loop_is_a_cycle_naming_each_file() {
    let run = ProcessorTest::new("a.txt", "#include \"b.txt\"\n")
        .file("b.txt", "#include \"a.txt\"\n")
        .settings("includes = true")
        .run(&Text);
    let error = run.error().unwrap();
    assert!(error.contains("`a.txt` -> `b.txt` -> `a.txt`"), "{error}");
}

#[test]
fn a_settings_typo_fails_before_the_processor_runs() {
    let run = ProcessorTest::new("a.txt", "x")
        .settings("normalise = false")
        .run(&Text);
    let error = run.error().unwrap();
    assert!(error.contains("unknown field `normalise`"), "{error}");
    assert!(run.read.is_empty(), "it ran: {:?}", run.read);
}

#[test]
fn a_shader_imports_a_module_built_first_and_reflects_its_bindings() {
    let run = ProcessorTest::new(
        "shaders/main.wgsl",
        "import super::common::TINT;\n\
         @group(0) @binding(0) var<uniform> scale: f32;\n\
         @fragment fn fs() -> @location(0) vec4<f32> { return TINT * scale; }\n",
    )
    .file(
        "shaders/common.wgsl",
        "const TINT: vec4<f32> = vec4<f32>(1.0, 0.5, 0.25, 1.0);\n",
    )
    .run(&Shader)
    .expect_ok();
    assert_eq!(run.output("").unwrap().kind, "shader");
    assert_eq!(run.dependencies, [asset("shaders/common.wgsl")]);
    // Where `super::common::TINT` could have been first: a module `TINT`,
    // or `common` in WESL.
    let looked = [
        "shaders/common/TINT.wesl",
        "shaders/common/TINT.wgsl",
        "shaders/common.wesl",
    ];
    assert_eq!(run.missing, looked);
    let reflection = String::from_utf8(run.output("reflection").unwrap().bytes.clone()).unwrap();
    assert!(reflection.contains("\"scale\""), "{reflection}");
}

#[test]
fn image_and_sprite_decode_a_png_and_say_what_they_made() {
    let image = ProcessorTest::new("ui/icon.png", png())
        .run(&Image)
        .expect_ok();
    assert_eq!(image.output("").unwrap().kind, "image");
    assert_eq!(image.read, ["ui/icon.png"]);

    let sprite = ProcessorTest::new("sprites/hero.png", png())
        .settings("trim = false")
        .run(&Sprite)
        .expect_ok();
    assert_eq!(sprite.output("").unwrap().kind, "sprite-source");

    let broken = ProcessorTest::new("ui/broken.png", &png()[..40]).run(&Image);
    assert!(broken.result.is_err() && broken.outputs.is_empty());
    assert_eq!(broken.read, ["ui/broken.png"]);
}

#[test]
fn a_tools_stderr_on_success_becomes_a_warning() {
    let run = ProcessorTest::new("levels/one.lvl", "T.C\n")
        .settings(
            r#"command = ["sh", "-c", "echo 'tile 7 is unused' >&2; cp \"$0\" \"$1\"", "{input}", "{output}"]"#,
        )
        .run(&Command)
        .expect_ok();
    assert_eq!(run.main(), b"T.C\n");
    assert_eq!(run.warnings(), ["tile 7 is unused"]);
}

/// A processor that asks for other assets, as a level asks for its tileset.
struct Linked;

impl Processor for Linked {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "linked"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let tiles = ctx.dependency("tiles.png")?.bytes("palette")?;
        ctx.reference(&asset("music.ogg"))?;
        ctx.warn(format!("{} palette bytes", tiles.len()));
        ctx.emit_labeled("meta", "level", tiles)
    }
}

#[test]
fn given_outputs_stand_for_an_asset_built_before_and_references_must_be_assets() {
    let run = ProcessorTest::new("levels/one.lvl", "")
        .dependency(
            "tiles.png",
            &[("", "image", b"..."), ("palette", "bytes", b"rgb")],
        )
        .file("music.ogg", "OggS")
        .run(&Linked)
        .expect_ok();
    assert_eq!(run.dependencies, [asset("tiles.png")]);
    assert_eq!(run.references, [asset("music.ogg")]);
    assert_eq!(run.warnings(), ["3 palette bytes"]);
    assert_eq!(run.output("meta").unwrap().bytes, b"rgb");
    assert!(run.output("").is_none());

    let without = ProcessorTest::new("levels/one.lvl", "").run(&Linked);
    assert_eq!(without.error().unwrap(), "no asset named `tiles.png`");
}

#[cfg(feature = "gltf")]
#[test]
fn a_models_image_beside_it_is_a_reference_not_a_copy() {
    use assets_build::unstable::builtins::Gltf;
    let model = r#"{"asset":{"version":"2.0"},"images":[{"uri":"Leather%20Parts.png"}],"textures":[{"source":0}]}"#;
    let run = ProcessorTest::new("models/helmet.gltf", model)
        .file("models/Leather Parts.png", png())
        .run(&Gltf)
        .expect_ok();
    assert_eq!(run.references, [asset("models/Leather Parts.png")]);
    assert_eq!(run.read, ["models/helmet.gltf"]);
    let glb = &run.output("").unwrap().bytes;
    assert_eq!(&glb[..4], b"glTF");
    // The image stays out of the GLB: the parcel holds it once, by its URI.
    assert!(glb.len() < 200, "{} bytes", glb.len());

    let gone = ProcessorTest::new("models/helmet.gltf", model).run(&Gltf);
    let error = gone.error().unwrap();
    assert!(error.contains("Leather"), "{error}");
}

/// Sound files written by libsndfile 1.2.2 (through Python's `soundfile`):
/// 0.25 s of a stereo chirp at 22,050 Hz, 5,512 frames by libsndfile's own
/// reading, in each format (see `tests/fixtures/audio/README.md`).
#[cfg(feature = "audio")]
const SOUNDS: [(&str, &[u8]); 4] = [
    ("sfx/chirp.wav", include_bytes!("fixtures/audio/chirp.wav")),
    ("sfx/chirp.ogg", include_bytes!("fixtures/audio/chirp.ogg")),
    (
        "sfx/chirp.flac",
        include_bytes!("fixtures/audio/chirp.flac"),
    ),
    ("sfx/chirp.mp3", include_bytes!("fixtures/audio/chirp.mp3")),
];

#[cfg(feature = "audio")]
#[test]
fn audio_decodes_each_format_whole_and_says_how_long_it_plays() {
    use assets_build::unstable::builtins::Audio;
    use assets_runtime::audio::{Audio as Sound, AudioFormat};
    let formats = [
        AudioFormat::Wav,
        AudioFormat::OggVorbis,
        AudioFormat::Flac,
        AudioFormat::Mp3,
    ];
    for ((name, bytes), format) in SOUNDS.into_iter().zip(formats) {
        let run = ProcessorTest::new(name, bytes).run(&Audio).expect_ok();
        assert_eq!(run.output("").unwrap().kind, "audio");
        let sound = Sound::parse(run.main()).unwrap();
        assert_eq!(sound.data, bytes, "{name}: the file as authored");
        let info = sound.info;
        assert_eq!(
            (info.format, info.channels, info.sample_rate),
            (format, 2, 22_050),
            "{name}"
        );
        assert_eq!(
            info.frames, 5_512,
            "{name}: frames as libsndfile reads them"
        );
        assert_eq!(info.duration().as_millis(), 249, "{name}");
    }
}

#[cfg(feature = "audio")]
#[test]
fn a_truncated_or_foreign_sound_fails_by_what_is_wrong() {
    use assets_build::unstable::builtins::Audio;
    for (name, bytes) in SOUNDS {
        let cut = &bytes[..bytes.len() * 2 / 3];
        let run = ProcessorTest::new(name, cut).run(&Audio);
        let error = run
            .error()
            .unwrap_or_else(|| panic!("{name} cut to two thirds built"));
        eprintln!("{name}, two thirds: {error}");
        assert!(
            error.contains("cut short") || error.contains("does not decode"),
            "{name}: {error}"
        );
        assert!(run.outputs.is_empty());
    }
    let png_named_wav = ProcessorTest::new("sfx/boom.wav", png()).run(&Audio);
    let error = png_named_wav.error().unwrap();
    assert!(error.contains("is not a sound file"), "{error}");
    let empty = ProcessorTest::new("sfx/empty.ogg", b"").run(&Audio);
    assert!(empty.error().is_some());
}

#[test]
fn a_tileset_references_its_image_and_records_a_missing_one() {
    use assets_build::unstable::builtins::Tilemap;
    let tsx = r#"<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" name="Terrain" tilewidth="16" tileheight="16" tilecount="2" columns="2">
 <image source="../art/terrain tiles.png" width="32" height="16"/>
</tileset>
"#;
    let run = ProcessorTest::new("tilesets/Terrain.tsx", tsx)
        .file("art/terrain tiles.png", png())
        .run(&Tilemap)
        .expect_ok();
    assert_eq!(run.references, [asset("art/terrain tiles.png")]);
    assert_eq!(run.main(), tsx.as_bytes());
    assert!(run.dependencies.is_empty(), "its image is not an input");

    let missing = ProcessorTest::new("tilesets/Terrain.tsx", tsx).run(&Tilemap);
    assert_eq!(
        missing.error().unwrap(),
        "line 3 names the image `../art/terrain tiles.png`, and `art/terrain tiles.png` does not exist; add the file or fix the path"
    );
    assert_eq!(
        missing.missing,
        ["art/terrain tiles.png"],
        "creating it reruns the step"
    );
}

#[test]
fn a_fully_transparent_sprite_builds_and_says_so() {
    let clear = image::RgbaImage::new(6, 4);
    let mut bytes = std::io::Cursor::new(Vec::new());
    clear.write_to(&mut bytes, image::ImageFormat::Png).unwrap();
    let run = ProcessorTest::new("sprites/ghost.png", bytes.into_inner())
        .run(&Sprite)
        .expect_ok();
    assert_eq!(
        run.warnings(),
        [
            "is fully transparent: trimmed, it takes no room in its atlas, and draws nothing (6x4 empty)"
        ]
    );
    let kept = ProcessorTest::new("sprites/hero.png", png())
        .run(&Sprite)
        .expect_ok();
    assert!(kept.warnings().is_empty());
}

#[test]
fn a_jpeg_cut_short_builds_and_says_so() {
    // Large enough that most of the file is image data, not headers.
    let photo = image::RgbImage::from_fn(256, 256, |x, y| {
        image::Rgb([(x * y % 251) as u8, (x ^ y) as u8, (x + 3 * y) as u8])
    });
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
        .encode_image(&photo)
        .unwrap();
    let whole = ProcessorTest::new("backgrounds/sky.jpg", jpeg.clone())
        .run(&Image)
        .expect_ok();
    assert!(whole.warnings().is_empty(), "{:?}", whole.warnings());
    jpeg.truncate(jpeg.len() * 2 / 3);
    let cut = ProcessorTest::new("backgrounds/sky.jpg", jpeg)
        .run(&Image)
        .expect_ok();
    assert_eq!(
        cut.warnings(),
        [
            "the JPEG ends before its image does (no end-of-image marker after its data): what is missing decodes as grey; cut short by an export or a copy that did not finish?"
        ]
    );
}

#[cfg(feature = "fonts")]
#[test]
fn a_font_range_the_font_only_partly_covers_bakes_what_it_has_and_warns() {
    use assets_build::unstable::builtins::Font;
    let fira = include_bytes!("../../examples/sprite-demo/assets/fonts/FiraSans-Bold-Latin1.ttf");
    // Latin-1 only: of Latin Extended-A's first sixteen, none.
    let run = ProcessorTest::new("fonts/Fira.ttf", fira)
        .settings("sizes = [12]\nranges = [[0xF0, 0x10F]]")
        .run(&Font)
        .expect_ok();
    assert_eq!(run.warnings().len(), 1, "{:?}", run.warnings());
    assert!(
        run.warnings()[0].starts_with(
            "the font has no glyph for 16 of the 32 characters of range [0xf0, 0x10f] (skipped: U+0100 U+0101"
        ),
        "{}",
        run.warnings()[0]
    );
    assert_eq!(run.output("").unwrap().kind, "font");
}

/// Gathers the rule's `inputs` into one line each.
struct Gather;

impl Processor for Gather {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "gather"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let members: Vec<String> = ctx.inputs().map(|p| p.to_string()).collect();
        let mut out = Vec::new();
        for member in members {
            out.extend(ctx.read(&member)?);
            out.push(b'\n');
        }
        ctx.emit("text", out)
    }
}

#[test]
fn a_gathering_processor_is_handed_its_members_in_path_order() {
    let run = ProcessorTest::new("levels/index.txt", "")
        .input("levels/b.lvl", "B")
        .input("levels/a.lvl", "A")
        .run(&Gather)
        .expect_ok();
    assert_eq!(run.main(), b"A\nB\n");
    // Read before it ran, as a build reads them, and by it.
    assert_eq!(run.read, ["levels/a.lvl", "levels/b.lvl"]);
}

#[cfg(feature = "textures")]
/// A 4×4 RGBA PNG whose left half is half transparent.
fn translucent_png() -> Vec<u8> {
    let pixels = image::RgbaImage::from_fn(4, 4, |x, y| {
        let alpha = if x < 2 { 128 } else { 255 };
        image::Rgba([x as u8 * 60, y as u8 * 60, 90, alpha])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    pixels
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

#[cfg(feature = "textures")]
#[test]
fn texture_encodes_a_png_into_a_ktx2_with_its_mips_and_refuses_to_drop_alpha() {
    use assets_build::unstable::builtins::Texture;
    let run = ProcessorTest::new("textures/glass.png", translucent_png())
        .settings("format = \"bc3\"")
        .run(&Texture)
        .expect_ok();
    assert_eq!(run.read, ["textures/glass.png"]);
    assert!(run.missing.is_empty() && run.diagnostics.is_empty());
    let output = run.output("").unwrap();
    assert_eq!(output.kind, "texture");
    // Read by the independent `ktx2` crate: the header, and one level per
    // mip (4×4, 2×2, 1×1).
    let file = ktx2::Reader::new(&output.bytes).expect("a KTX2 file");
    let header = file.header();
    assert_eq!((header.pixel_width, header.pixel_height), (4, 4));
    assert_eq!(header.level_count, 3);
    assert_eq!(
        header.format,
        Some(ktx2::Format::BC3_SRGB_BLOCK),
        "{:?}",
        header.format
    );
    // One 4×4 block of 16 bytes per level.
    assert!(file.levels().all(|level| level.data.len() == 16));

    // ETC2 without alpha would lose the translucent half: an error that
    // says how much, and what to use.
    let lossy = ProcessorTest::new("textures/glass.png", translucent_png())
        .settings("format = \"etc2\"")
        .run(&Texture);
    let error = lossy.error().unwrap();
    assert!(
        error.contains("50.0% of this image's pixels are not opaque")
            && error.contains("etc2-rgba"),
        "{error}"
    );
    assert!(lossy.outputs.is_empty());

    // A size that is not whole blocks is scaled up to them; with
    // `block-fit = "keep"` it keeps its size, with a warning naming the
    // size to pad to; uncompressed, nothing to fit.
    let odd = || {
        let pixels = image::RgbaImage::from_pixel(6, 3, image::Rgba([9, 9, 9, 255]));
        let mut bytes = std::io::Cursor::new(Vec::new());
        pixels
            .write_to(&mut bytes, image::ImageFormat::Png)
            .unwrap();
        ProcessorTest::new("textures/odd.png", bytes.into_inner())
    };
    let size = |run: &assets_build::testing::Processed| {
        let file = ktx2::Reader::new(run.main().to_vec()).unwrap();
        (file.header().pixel_width, file.header().pixel_height)
    };
    let scaled = odd().settings("format = \"bc1\"").run(&Texture).expect_ok();
    assert!(scaled.diagnostics.is_empty(), "{:?}", scaled.diagnostics);
    assert_eq!(size(&scaled), (8, 4));
    let run = odd()
        .settings("format = \"bc1\"\nblock-fit = \"keep\"")
        .run(&Texture)
        .expect_ok();
    assert_eq!(size(&run), (6, 3));
    assert_eq!(run.warnings().len(), 1, "{:?}", run.diagnostics);
    assert!(
        run.warnings()[0]
            .starts_with("a 6x3 `bc1` texture is not a whole number of its 4x4 blocks")
            && run.warnings()[0].contains("pad the image to 8x4"),
        "{:?}",
        run.warnings()
    );
    let plain = odd()
        .settings("format = \"rgba8\"")
        .run(&Texture)
        .expect_ok();
    assert!(plain.diagnostics.is_empty(), "{:?}", plain.diagnostics);
    assert_eq!(size(&plain), (6, 3));

    // `max-size`: halved until it fits, the top levels dropped; the rest
    // of the chain is the full-size one's.
    let big = || {
        let pixels = image::RgbaImage::from_fn(64, 32, |x, y| {
            image::Rgba([x as u8 * 4, y as u8 * 8, 9, 255])
        });
        let mut bytes = std::io::Cursor::new(Vec::new());
        pixels
            .write_to(&mut bytes, image::ImageFormat::Png)
            .unwrap();
        ProcessorTest::new("textures/big.png", bytes.into_inner())
    };
    let levels = |run: &assets_build::testing::Processed| {
        let file = ktx2::Reader::new(run.main().to_vec()).unwrap();
        file.levels().map(|l| l.data.to_vec()).collect::<Vec<_>>()
    };
    let full = big()
        .settings("format = \"rgba8\"")
        .run(&Texture)
        .expect_ok();
    let capped = big()
        .settings("format = \"rgba8\"\nmax-size = 20")
        .run(&Texture)
        .expect_ok();
    assert_eq!((size(&full), size(&capped)), ((64, 32), (16, 8)));
    assert_eq!(levels(&capped)[..], levels(&full)[2..]);
    let nothing = big().settings("max-size = 0").run(&Texture);
    let error = nothing.error().unwrap();
    assert!(
        error.contains("`max-size = 0` leaves no texture"),
        "{error}"
    );
}

#[cfg(feature = "textures")]
#[test]
fn ktx2_keeps_a_valid_file_as_it_is_and_refuses_a_truncated_one() {
    use assets_build::unstable::builtins::{Ktx2, Texture};
    let made = ProcessorTest::new("t.png", translucent_png())
        .settings("format = \"rgba8\"\nmipmaps = false")
        .run(&Texture)
        .expect_ok();
    let file = made.main().to_vec();
    let kept = ProcessorTest::new("textures/made-elsewhere.ktx2", file.clone())
        .run(&Ktx2)
        .expect_ok();
    assert_eq!(kept.main(), file.as_slice(), "kept byte for byte");
    assert_eq!(kept.output("").unwrap().kind, "texture");

    let cut = ProcessorTest::new("textures/cut.ktx2", &file[..file.len() - 5]).run(&Ktx2);
    let error = cut.error().unwrap();
    assert!(error.starts_with("cannot be a texture"), "{error}");
    assert!(cut.outputs.is_empty());

    let patched = |offset: usize, value: u32| {
        let mut bytes = file.clone();
        bytes[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        bytes
    };

    // A well-formed file the runtime's reader does not take (a float
    // format), as Bevy's asset folder has them: kept as it is, as bytes,
    // with a note that says why.
    const VK_FORMAT_R32_SFLOAT: u32 = 100;
    let float = patched(12, VK_FORMAT_R32_SFLOAT);
    let run = ProcessorTest::new("environment/sky.ktx2", float.clone())
        .run(&Ktx2)
        .expect_ok();
    assert_eq!(run.output("").unwrap().kind, "bytes");
    assert_eq!(run.main(), float.as_slice(), "kept byte for byte");
    assert!(run.warnings().is_empty(), "{:?}", run.diagnostics);
    let note = &run.diagnostics[0];
    assert!(
        note.severity == assets_build::Severity::Note
            && note
                .message
                .contains("R32_SFLOAT is not one the runtime reads"),
        "{note:?}"
    );

    // A file that says its levels are Zstandard frames when they are not
    // (the header patched, the levels left raw): the build fails by name
    // rather than the game's load.
    const ZSTANDARD: u32 = 2;
    let run = ProcessorTest::new("environment/sky.ktx2", patched(44, ZSTANDARD)).run(&Ktx2);
    let error = run.error().unwrap();
    assert!(
        error.starts_with("cannot be a texture: level 0's zstd frame"),
        "{error}"
    );
    assert!(run.outputs.is_empty());
}

/// `permute`: its source names a seed; with `of` set it is a permutation
/// and emits it, else it asks for the permutation of itself with that seed
/// (a temporary build, `Context::generate`) and wraps its bytes.
struct Permute;

#[derive(serde::Serialize, serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PermuteSettings {
    #[serde(default)]
    of: Option<u8>,
}

impl Processor for Permute {
    type Settings = PermuteSettings;
    fn name(&self) -> &str {
        "permute"
    }
    fn version(&self) -> u32 {
        1
    }
    fn process(&self, ctx: &mut Context<'_>, s: PermuteSettings) -> Result<(), ProcessError> {
        if let Some(seed) = s.of {
            return ctx.emit("bytes", vec![seed, seed.wrapping_mul(3)]);
        }
        let seed = ctx.source()?[0];
        let permutation = ctx.generate("permute", &PermuteSettings { of: Some(seed) })?;
        let mut out = vec![b'<'];
        out.extend(permutation.bytes("")?);
        out.push(b'>');
        ctx.emit("bytes", out)
    }
}

#[test]
fn the_kit_makes_a_temporary_build_of_the_processor_under_test_and_refuses_another() {
    let run = ProcessorTest::new("shaders/a.perm", [5u8])
        .run(&Permute)
        .expect_ok();
    assert_eq!(run.main(), [b'<', 5, 15, b'>']);
    assert_eq!(run.read, ["shaders/a.perm"]);
    assert_eq!(run.dependencies.len(), 1);
    assert!(run.dependencies[0].is_temporary(), "{:?}", run.dependencies);

    /// Asks for a processor the kit does not run.
    struct Asks;
    impl Processor for Asks {
        type Settings = assets_build::NoSettings;
        fn name(&self) -> &str {
            "asks"
        }
        fn version(&self) -> u32 {
            1
        }
        fn process(
            &self,
            ctx: &mut Context<'_>,
            _: assets_build::NoSettings,
        ) -> Result<(), ProcessError> {
            ctx.generate("permute", &PermuteSettings { of: Some(1) })?;
            ctx.emit("bytes", Vec::new())
        }
    }
    let error = ProcessorTest::new("a.x", "").run(&Asks).error().unwrap();
    assert!(error.contains("the test kit runs only `asks`"), "{error}");
}

/// An Aseprite file as Aseprite saves it (`tests/fixtures/aseprite/README.md`):
/// 4 frames of 16x16, 6 layers, 3 tags.
#[cfg(feature = "aseprite")]
const ASEPRITE: &[u8] = include_bytes!("fixtures/aseprite/layers_and_tags.aseprite");

#[cfg(feature = "aseprite")]
#[test]
fn aseprite_emits_its_tables_and_one_sprite_per_frame() {
    use assets_build::unstable::builtins::Aseprite;
    let run = ProcessorTest::new("characters/hero.aseprite", ASEPRITE)
        .run(&Aseprite)
        .expect_ok();
    assert_eq!(run.output("").unwrap().kind, "animation");
    assert_eq!(run.output("sprites").unwrap().kind, "sprite-sources");
    // The tables: magic, version, 4 frames, 3 tags, names "T1T3T2", 16x16.
    let main = run.main();
    assert_eq!(main[..4], *b"AANM");
    let word = |at: usize| u32::from_le_bytes(main[at..at + 4].try_into().unwrap());
    assert_eq!(
        [word(8), word(12), word(16), word(20), word(24)],
        [4, 3, 6, 16, 16]
    );
    assert!(run.warnings().is_empty(), "{:?}", run.warnings());
}

#[cfg(feature = "aseprite")]
#[test]
fn a_damaged_aseprite_file_fails_with_a_reason_and_never_panics() {
    use assets_build::unstable::builtins::Aseprite;
    for len in 0..ASEPRITE.len() {
        let run = ProcessorTest::new("hero.aseprite", &ASEPRITE[..len]).run(&Aseprite);
        let error = run.error().unwrap_or_else(|| panic!("cut at {len} builds"));
        assert!(!error.contains("panicked"), "cut at {len}: {error}");
    }
    for at in 0..ASEPRITE.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bytes = ASEPRITE.to_vec();
            bytes[at] ^= flip;
            let run = ProcessorTest::new("hero.aseprite", &bytes).run(&Aseprite);
            if let Some(error) = run.error() {
                assert!(
                    !error.contains("panicked"),
                    "byte {at} ^ {flip:#x}: {error}"
                );
            }
        }
    }
}

#[test]
fn sheet_reads_its_image_and_refuses_json_that_is_no_sheet() {
    use assets_build::unstable::builtins::Sheet;
    // TexturePacker's array form: one frame, turned, trimmed by one pixel.
    // Its 2x3 content lies turned in the 3x2 image.
    let json = r#"{"frames": [{"filename": "a.png", "frame": {"x": 0, "y": 0, "w": 2, "h": 3},
        "rotated": true, "trimmed": true, "spriteSourceSize": {"x": 1, "y": 0, "w": 2, "h": 3},
        "sourceSize": {"w": 3, "h": 3}}], "meta": {"image": "atlas.png"}}"#;
    let run = ProcessorTest::new("ui/sheet.json", json)
        .file("ui/atlas.png", png())
        .run(&Sheet);
    let run = run.expect_ok();
    assert_eq!(run.read, ["ui/sheet.json", "ui/atlas.png"]);
    assert_eq!(run.output("").unwrap().kind, "animation");
    assert_eq!(run.output("sprites").unwrap().kind, "sprite-sources");

    let missing = ProcessorTest::new("ui/sheet.json", json).run(&Sheet);
    assert!(
        missing.error().unwrap().contains("ui/atlas.png"),
        "{:?}",
        missing.error()
    );
    assert_eq!(missing.missing, ["ui/atlas.png"]);

    let tiled = r#"{"type": "map", "layers": []}"#;
    let run = ProcessorTest::new("ui/map.json", tiled).run(&Sheet);
    let error = run.error().unwrap();
    assert!(error.starts_with("not a sprite sheet's JSON"), "{error}");
}

/// Inputs the fuzz target (`fuzz/fuzz_targets/aseprite.rs`) once crashed the
/// reader with: each fails with a reason before the reader sees it.
#[cfg(feature = "aseprite")]
#[test]
fn aseprite_files_that_once_crashed_the_reader_fail_by_reason() {
    use assets_build::unstable::builtins::Aseprite;
    let cases: [(&[u8], &str); 3] = [
        // The fuzzer's second: a palette whose last index is past 2^32 - 1
        // less its first, which overflowed the reader's count.
        (
            include_bytes!("fixtures/aseprite/damaged-palette.aseprite"),
            "the palette is damaged",
        ),
        // The fuzzer's: a bit flipped in a tilemap cel's compressed tiles.
        (
            include_bytes!("fixtures/aseprite/damaged-tiles.aseprite"),
            "the cel of layer 0 in frame 0: its compressed pixels are damaged",
        ),
        // Its cause: a tile past the end of the tileset.
        (
            include_bytes!("fixtures/aseprite/tile-beyond-tileset.aseprite"),
            "the cel of layer 0 in frame 0 uses tile 99, but its tileset has 5 tiles",
        ),
    ];
    for (bytes, reason) in cases {
        let run = ProcessorTest::new("map.aseprite", bytes).run(&Aseprite);
        let error = run.error().expect("fails");
        assert!(error.contains(reason), "{error}");
    }
}

mod tilemaps {
    //! Tiled maps made into `tilemap` resources, in the encodings and
    //! layouts Tiled writes: the same map as XML with an external tileset
    //! and zlib-compressed cells, and as JSON with the tileset inline and
    //! CSV-like arrays, read back through `assets_runtime::TileMap`.

    use std::io::Write;

    use assets_build::testing::ProcessorTest;
    use assets_build::unstable::builtins::Tilemap;
    use assets_runtime::TileMap;
    use assets_runtime::tilemap::{LayerKind, PropertyType, Shape};

    /// The map's three ground cells per row, two rows, with the flip bit on
    /// one of them, as base64 of zlib of little-endian u32s.
    fn zlib_cells(cells: &[u32]) -> String {
        let raw: Vec<u8> = cells.iter().flat_map(|c| c.to_le_bytes()).collect();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&raw).unwrap();
        base64(&z.finish().unwrap())
    }

    fn base64(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    const CELLS: [u32; 6] = [1, 2, 0, 0x8000_0004, 3, 5];

    fn tmx() -> String {
        format!(
            r##"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" class="cave" orientation="orthogonal" renderorder="right-down" width="3" height="2" tilewidth="16" tileheight="16" infinite="0" backgroundcolor="#80102030" nextlayerid="6" nextobjectid="3">
 <properties>
  <property name="music" type="file" value="../music/cave.ogg"/>
  <property name="intro">Line one
line two</property>
  <property name="spawn" type="class" propertytype="Spawn">
   <properties>
    <property name="hp" type="int" value="3"/>
   </properties>
  </property>
 </properties>
 <tileset firstgid="1" source="../tilesets/Terrain.tsx"/>
 <tileset firstgid="5" name="Props" tilewidth="32" tileheight="48" tilecount="1" columns="0">
  <tile id="0" type="tree">
   <image source="../props/tree.png" width="32" height="48"/>
  </tile>
 </tileset>
 <layer id="1" name="Ground" width="3" height="2">
  <data encoding="base64" compression="zlib">
   {cells}
  </data>
 </layer>
 <group id="2" name="World" offsetx="4" opacity="0.5" tintcolor="#ff8000">
  <objectgroup id="3" name="Things" offsetx="1" offsety="2" opacity="0.5" visible="0">
   <object id="1" name="door" type="trigger" x="10" y="20.5" rotation="45">
    <properties><property name="to" type="object" value="2"/></properties>
    <polygon points="0,0 4,0 2,3"/>
   </object>
   <object id="2" template="../templates/Chest.tx" x="32" y="48">
    <properties><property name="gold" type="int" value="50"/></properties>
   </object>
  </objectgroup>
 </group>
 <imagelayer id="5" name="Sky" repeatx="1">
  <image source="../images/sky.png" width="8" height="8"/>
 </imagelayer>
</map>
"##,
            cells = zlib_cells(&CELLS)
        )
    }

    const TSX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" tiledversion="1.10.2" name="Terrain" tilewidth="16" tileheight="16" spacing="1" margin="2" tilecount="4" columns="2">
 <tileoffset x="0" y="-2"/>
 <image source="terrain tiles.png" width="37" height="37"/>
 <tile id="3">
  <properties><property name="solid" type="bool" value="false"/></properties>
  <objectgroup draworder="index" id="2">
   <object id="1" name="shore" x="0" y="8" width="16" height="8"/>
   <object id="2" x="2" y="2"><polygon points="0,0 4,0 0,4"/></object>
  </objectgroup>
  <animation><frame tileid="3" duration="100"/><frame tileid="2" duration="150"/></animation>
 </tile>
</tileset>
"#;

    const TX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<template>
 <tileset firstgid="1" source="../tilesets/Terrain.tsx"/>
 <object name="chest" type="loot" gid="2" width="16" height="16">
  <properties>
   <property name="gold" type="int" value="10"/>
   <property name="locked" type="bool" value="true"/>
  </properties>
 </object>
</template>
"#;

    fn with_files(test: ProcessorTest) -> ProcessorTest {
        test.file("tilesets/Terrain.tsx", TSX)
            .file("tilesets/terrain tiles.png", b"png")
            .file("props/tree.png", b"png")
            .file("images/sky.png", b"png")
            .file("templates/Chest.tx", TX)
    }

    fn check(map: &TileMap<'_>) {
        assert_eq!(
            (map.size(), map.tile_size(), map.class()),
            ((3, 2), (16, 16), "cave")
        );
        assert_eq!(map.background(), Some([0x10, 0x20, 0x30, 0x80]));
        let props = map.properties();
        assert_eq!(props.get("music").unwrap().kind, PropertyType::File);
        assert_eq!(props.get("intro").unwrap().value, "Line one\nline two");
        assert_eq!(props.get("spawn").unwrap().value, r#"{"hp":3}"#);

        let terrain = map
            .tileset("Terrain")
            .expect("the external tileset, read in");
        assert_eq!(
            (terrain.first_gid(), terrain.image()),
            (1, "tilesets/terrain tiles.png")
        );
        assert_eq!(
            (terrain.offset(), terrain.tile_rect(3)),
            ((0, -2), Some((19, 19, 16, 16)))
        );
        let water = terrain.tile(3).unwrap();
        assert_eq!(water.animation().collect::<Vec<_>>(), [(3, 100), (2, 150)]);
        // Its collision shapes, as drawn in Tiled's tile collision editor.
        let shapes: Vec<_> = water
            .objects()
            .map(|o| (o.name(), o.shape(), o.position(), o.size()))
            .collect();
        assert_eq!(
            shapes,
            [
                ("shore", Shape::Rectangle, (0.0, 8.0), (16.0, 8.0)),
                ("", Shape::Polygon, (2.0, 2.0), (0.0, 0.0))
            ]
        );
        assert_eq!(water.objects().nth(1).unwrap().points().count(), 3);
        assert_eq!(
            water.properties().get("solid").unwrap().as_bool(),
            Some(false)
        );
        let props_set = map.tileset("Props").unwrap();
        assert_eq!(props_set.tile(0).unwrap().image(), "props/tree.png");
        assert_eq!(props_set.tile(0).unwrap().class(), "tree");

        let layers: Vec<(&str, LayerKind, &str)> = map
            .layers()
            .map(|l| (l.name(), l.kind(), l.groups()))
            .collect();
        assert_eq!(
            layers,
            [
                ("Ground", LayerKind::Tiles, ""),
                ("Things", LayerKind::Objects, "World"),
                ("Sky", LayerKind::Image, "")
            ]
        );
        let ground = map.layer("Ground").unwrap();
        assert_eq!(ground.cells().map(|c| c.0).collect::<Vec<_>>(), CELLS);
        let (tileset, local) = map.tile(ground.cell(0, 1)).unwrap();
        assert_eq!((tileset.name(), local), ("Terrain", 3));
        assert!(ground.cell(0, 1).flipped_horizontally());

        let things = map.layer("Things").unwrap();
        assert_eq!(
            (things.offset(), things.opacity(), things.visible()),
            ((5.0, 2.0), 0.25, false)
        );
        assert_eq!(things.tint(), [255, 128, 0, 255]);
        let door = map.object(1).unwrap();
        assert_eq!(
            (door.name(), door.class(), door.shape()),
            ("door", "trigger", Shape::Polygon)
        );
        assert_eq!((door.position(), door.rotation()), ((10.0, 20.5), 45.0));
        assert_eq!(
            door.points().collect::<Vec<_>>(),
            [(0.0, 0.0), (4.0, 0.0), (2.0, 3.0)]
        );
        let chest = map.object(2).unwrap();
        assert_eq!(
            (chest.name(), chest.class(), chest.position(), chest.size()),
            ("chest", "loot", (32.0, 48.0), (16.0, 16.0))
        );
        assert_eq!(
            map.tile(chest.tile()).map(|(t, l)| (t.name(), l)),
            Some(("Terrain", 1))
        );
        let gold: Vec<_> = chest.properties().map(|p| (p.name, p.value)).collect();
        assert_eq!(
            gold,
            [("locked", "true"), ("gold", "50")],
            "the object's own value wins"
        );
        let sky = map.layer("Sky").unwrap();
        assert_eq!(
            (sky.image(), sky.repeat()),
            ("images/sky.png", (true, false))
        );
    }

    #[test]
    fn a_tmx_map_reads_in_its_tileset_and_template_and_references_its_images() {
        let run = with_files(ProcessorTest::new("maps/Level 1.tmx", tmx()))
            .run(&Tilemap)
            .expect_ok();
        let out = run.output("").unwrap();
        assert_eq!(out.kind, "tilemap");
        check(&TileMap::parse(&out.bytes[..]).expect("a valid tile map"));
        // The tileset and template are inputs (an edit reruns the map);
        // the images are what the parcel must hold with it.
        assert_eq!(
            run.read,
            [
                "maps/Level 1.tmx",
                "tilesets/Terrain.tsx",
                "templates/Chest.tx"
            ]
        );
        let refs: Vec<&str> = run.references.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            refs,
            [
                "tilesets/terrain tiles.png",
                "props/tree.png",
                "images/sky.png"
            ]
        );
    }

    #[test]
    fn the_same_map_as_tmj_gives_the_same_resource() {
        let json = r##"{
            "type": "map", "class": "cave", "orientation": "orthogonal", "renderorder": "right-down",
            "width": 3, "height": 2, "tilewidth": 16, "tileheight": 16, "infinite": false,
            "backgroundcolor": "#80102030",
            "properties": [
                {"name": "music", "type": "file", "value": "../music/cave.ogg"},
                {"name": "intro", "type": "string", "value": "Line one\nline two"},
                {"name": "spawn", "type": "class", "propertytype": "Spawn", "value": {"hp": 3}}
            ],
            "tilesets": [
                {"firstgid": 1, "source": "../tilesets/Terrain.tsx"},
                {"firstgid": 5, "name": "Props", "tilewidth": 32, "tileheight": 48, "tilecount": 1, "columns": 0,
                 "tiles": [{"id": 0, "type": "tree", "image": "../props/tree.png", "imagewidth": 32, "imageheight": 48}]}
            ],
            "layers": [
                {"type": "tilelayer", "id": 1, "name": "Ground", "width": 3, "height": 2, "opacity": 1, "visible": true,
                 "x": 0, "y": 0, "data": [1, 2, 0, 2147483652, 3, 5]},
                {"type": "group", "id": 2, "name": "World", "offsetx": 4, "opacity": 0.5, "tintcolor": "#ff8000", "visible": true,
                 "layers": [{"type": "objectgroup", "id": 3, "name": "Things", "offsetx": 1, "offsety": 2, "opacity": 0.5, "visible": false,
                    "objects": [
                        {"id": 1, "name": "door", "type": "trigger", "x": 10, "y": 20.5, "rotation": 45, "visible": true,
                         "width": 0, "height": 0,
                         "polygon": [{"x": 0, "y": 0}, {"x": 4, "y": 0}, {"x": 2, "y": 3}],
                         "properties": [{"name": "to", "type": "object", "value": 2}]},
                        {"id": 2, "template": "../templates/Chest.tx", "x": 32, "y": 48,
                         "properties": [{"name": "gold", "type": "int", "value": 50}]}
                    ]}]},
                {"type": "imagelayer", "id": 5, "name": "Sky", "image": "../images/sky.png", "repeatx": true, "repeaty": false,
                 "opacity": 1, "visible": true}
            ]
        }"##;
        let tmj = with_files(ProcessorTest::new("maps/Level 1.tmj", json))
            .run(&Tilemap)
            .expect_ok();
        let tmx = with_files(ProcessorTest::new("maps/Level 1.tmx", tmx()))
            .run(&Tilemap)
            .expect_ok();
        let map = TileMap::parse(tmj.main()).expect("a valid tile map");
        check(&map);
        assert_eq!(tmj.main(), tmx.main(), "XML and JSON make the same bytes");
    }

    #[test]
    fn an_infinite_map_joins_its_chunks_and_csv_reads_like_base64() {
        let map = r#"<map orientation="orthogonal" width="4" height="4" tilewidth="8" tileheight="8" infinite="1">
 <layer id="1" name="L" width="4" height="4">
  <data encoding="csv">
   <chunk x="-16" y="0" width="2" height="1">7,8</chunk>
   <chunk x="0" y="16" width="1" height="2">
9,
10
</chunk>
  </data>
 </layer>
</map>"#;
        let run = ProcessorTest::new("m.tmx", map).run(&Tilemap).expect_ok();
        let map = TileMap::parse(run.main()).unwrap();
        assert!(map.infinite());
        let layer = map.layer("L").unwrap();
        assert_eq!((layer.origin(), layer.size()), ((-16, 0), (17, 18)));
        let at = |x, y| layer.cell(x, y).gid();
        assert_eq!(
            (at(-16, 0), at(-15, 0), at(0, 16), at(0, 17), at(1, 1)),
            (7, 8, 9, 10, 0)
        );
        assert_eq!(layer.cells().filter(|c| !c.is_empty()).count(), 4);
    }

    #[test]
    fn broken_maps_fail_naming_the_file_and_line() {
        let missing = ProcessorTest::new("maps/a.tmx", tmx()).run(&Tilemap);
        let error = missing.error().unwrap();
        assert!(error.contains("tilesets/Terrain.tsx"), "{error}");
        assert_eq!(missing.missing, ["tilesets/Terrain.tsx"]);

        let no_image = with_files(ProcessorTest::new("maps/a.tmx", tmx())).file(
            "tilesets/Terrain.tsx",
            TSX.replace("terrain tiles.png", "gone.png"),
        );
        let error = no_image.run(&Tilemap).error().unwrap();
        assert_eq!(
            error,
            "tilesets/Terrain.tsx, line 4 names the image `gone.png`, and `tilesets/gone.png` does not exist; add the file or fix the path"
        );

        let short = tmx().replace(r#"width="3" height="2">"#, r#"width="4" height="2">"#);
        let error = with_files(ProcessorTest::new("maps/a.tmx", short))
            .run(&Tilemap)
            .error()
            .unwrap();
        assert_eq!(
            error,
            "line 19: the layer has 6 cells where its size says 8"
        );

        let huge = tmx().replace(
            r#"width="3" height="2">"#,
            r#"width="400000" height="400000">"#,
        );
        let error = with_files(ProcessorTest::new("maps/a.tmx", huge))
            .run(&Tilemap)
            .error()
            .unwrap();
        assert!(error.contains("400000x400000 tile layer"), "{error}");

        let text = with_files(ProcessorTest::new("maps/a.tmx", tmx()))
            .settings("output = \"text\"")
            .run(&Tilemap)
            .expect_ok();
        assert_eq!(text.output("").unwrap().kind, "text");
        let wrong = ProcessorTest::new("t.tsx", TSX)
            .settings("output = \"tilemap\"")
            .run(&Tilemap);
        assert!(
            wrong.error().unwrap().contains("only a Tiled map"),
            "{:?}",
            wrong.error()
        );
    }
}

mod ldtk_levels {
    //! An LDtk project's levels made into `tilemap` resources, from JSON
    //! shaped as LDtk 1.5 writes it (its `__` fields included): stacked and
    //! off-grid auto-tiles, an IntGrid, entities with fields, a level saved
    //! in its own file.

    use assets_build::testing::ProcessorTest;
    use assets_build::unstable::builtins::Tilemap;
    use assets_runtime::TileMap;
    use assets_runtime::tilemap::{FLIPPED_HORIZONTALLY, LayerKind, PlacedTile, Shape};

    fn project(levels: &str) -> String {
        format!(
            r##"{{"__header__": {{"fileType": "LDtk Project JSON"}}, "jsonVersion": "1.5.3", "defaultGridSize": 16,
            "externalLevels": false,
            "defs": {{"tilesets": [
                {{"identifier": "Cavernas", "uid": 5, "relPath": "atlas/Cavernas.png", "pxWid": 64, "pxHei": 32,
                  "tileGridSize": 8, "spacing": 0, "padding": 0, "__cWid": 8, "__cHei": 4,
                  "customData": [{{"tileId": 3, "data": "spikes"}}], "enumTags": []}},
                {{"identifier": "Internal_Icons", "uid": 104, "relPath": null, "pxWid": 512, "pxHei": 1024,
                  "tileGridSize": 16, "spacing": 0, "padding": 0, "__cWid": 32, "__cHei": 64}}
            ]}},
            "levels": [{levels}]}}"##
        )
    }

    const LEVEL: &str = r##"{"identifier": "Level_0", "iid": "a1", "uid": 0, "worldX": 256, "worldY": -64,
        "pxWid": 40, "pxHei": 24, "__bgColor": "#40465B", "bgRelPath": "backgrounds/cave.png",
        "fieldInstances": [{"__identifier": "music", "__type": "FilePath", "__value": "music/cave.ogg"}],
        "externalRelPath": null,
        "layerInstances": [
            {"__identifier": "Entities", "__type": "Entities", "__cWid": 5, "__cHei": 3, "__gridSize": 8,
             "__opacity": 1, "__pxTotalOffsetX": 0, "__pxTotalOffsetY": 0, "__tilesetDefUid": null,
             "layerDefUid": 1, "visible": true, "intGridCsv": [], "autoLayerTiles": [], "gridTiles": [],
             "entityInstances": [
                {"__identifier": "Player", "__grid": [2, 2], "__pivot": [0.5, 1],
                 "__tile": {"tilesetUid": 5, "x": 16, "y": 8, "w": 8, "h": 8},
                 "iid": "p1", "width": 8, "height": 16, "defUid": 46, "px": [20, 24],
                 "fieldInstances": [
                    {"__identifier": "items", "__type": "Array<LocalEnum.Item>", "__value": ["Knife", "Boots"]},
                    {"__identifier": "hp", "__type": "Int", "__value": 3}]}]},
            {"__identifier": "Walls", "__type": "IntGrid", "__cWid": 5, "__cHei": 3, "__gridSize": 8,
             "__opacity": 0.5, "__pxTotalOffsetX": 4, "__pxTotalOffsetY": 0, "__tilesetDefUid": 5,
             "layerDefUid": 2, "visible": true,
             "intGridCsv": [1,1,0,0,0, 0,1,0,0,2, 0,0,0,0,2],
             "autoLayerTiles": [
                {"px": [0, 0], "src": [0, 0], "f": 0, "t": 0, "d": [0], "a": 1},
                {"px": [0, 0], "src": [8, 0], "f": 1, "t": 1, "d": [0], "a": 0.5},
                {"px": [12, 4], "src": [16, 8], "f": 2, "t": 10, "d": [1], "a": 1}],
             "gridTiles": [], "entityInstances": []}
        ]}"##;

    fn built(test: ProcessorTest) -> assets_build::testing::Processed {
        test.file("atlas/Cavernas.png", b"png")
            .file("backgrounds/cave.png", b"png")
            .run(&Tilemap)
            .expect_ok()
    }

    #[test]
    fn each_level_is_a_tilemap_with_its_tiles_where_ldtk_placed_them() {
        let run = built(ProcessorTest::new("World.ldtk", project(LEVEL)));
        assert_eq!(
            run.output("").unwrap().kind,
            "text",
            "the project as written"
        );
        let out = run.output("Level_0").expect("the level");
        assert_eq!(out.kind, "tilemap");
        let map = TileMap::parse(&out.bytes[..]).expect("valid");
        assert_eq!((map.size(), map.tile_size()), ((3, 2), (16, 16)));
        assert_eq!(map.background(), Some([0x40, 0x46, 0x5b, 255]));
        let props = map.properties();
        assert_eq!(props.get("worldX").unwrap().as_int(), Some(256));
        assert_eq!(props.get("music").unwrap().value, "music/cave.ogg");

        let tilesets: Vec<_> = map
            .tilesets()
            .map(|t| (t.name(), t.first_gid(), t.tile_count()))
            .collect();
        assert_eq!(
            tilesets,
            [("Cavernas", 1, 32)],
            "the icon atlas has no image"
        );
        let cavernas = map.tileset("Cavernas").unwrap();
        assert_eq!(cavernas.image(), "atlas/Cavernas.png");
        assert_eq!(
            cavernas
                .tile(3)
                .unwrap()
                .properties()
                .get("data")
                .unwrap()
                .value,
            "spikes"
        );

        // Bottom first: background, the IntGrid's values and its tiles,
        // then the entities (LDtk lists them top first).
        let layers: Vec<_> = map.layers().map(|l| (l.name(), l.kind())).collect();
        assert_eq!(
            layers,
            [
                ("Background", LayerKind::Image),
                ("Walls", LayerKind::Values),
                ("Walls", LayerKind::Placed),
                ("Entities", LayerKind::Objects)
            ]
        );
        let walls = map.layer("Walls").unwrap();
        assert_eq!((walls.cell_size(), walls.size()), ((8, 8), (5, 3)));
        assert_eq!((walls.cell(4, 2).0, walls.cell(0, 1).0), (2, 0));
        let tiles = map
            .layers()
            .find(|l| l.kind() == LayerKind::Placed)
            .unwrap();
        assert_eq!((tiles.offset(), tiles.opacity()), ((4.0, 0.0), 0.5));
        let placed: Vec<PlacedTile> = tiles.placed().collect();
        assert_eq!(placed.len(), 3, "stacked tiles are all kept");
        assert_eq!((placed[1].x, placed[1].y, placed[1].opacity), (0, 0, 0.5));
        assert_eq!(placed[1].tile.0, 2 | FLIPPED_HORIZONTALLY);
        assert_eq!(
            (placed[2].x, placed[2].y),
            (12, 4),
            "off the grid, where LDtk drew it"
        );
        assert!(placed[2].tile.flipped_vertically());
        let (tileset, local) = map.tile(placed[2].tile).unwrap();
        assert_eq!(
            (tileset.name(), tileset.tile_rect(local)),
            ("Cavernas", Some((16, 8, 8, 8)))
        );

        let player = map.layer("Entities").unwrap().objects().next().unwrap();
        assert_eq!(
            (player.name(), player.shape()),
            ("Player", Shape::Rectangle)
        );
        assert_eq!(
            (player.position(), player.size()),
            ((16.0, 8.0), (8.0, 16.0)),
            "top-left, not the pivot"
        );
        assert_eq!(map.tile(player.tile()).map(|(_, l)| l), Some(10));
        let fields = player.properties();
        assert_eq!(fields.get("iid").unwrap().value, "p1");
        assert_eq!(fields.get("items").unwrap().value, r#"["Knife","Boots"]"#);
        assert_eq!(fields.get("hp").unwrap().as_int(), Some(3));
        let refs: Vec<&str> = run.references.iter().map(|r| r.as_str()).collect();
        assert_eq!(refs, ["atlas/Cavernas.png", "backgrounds/cave.png"]);
    }

    /// LDtk's `EntityRef` fields, as its own `Entities.ldtk` sample has
    /// them: a reference to an entity of the same level (in another layer,
    /// placed after the referring one) is an `object` property a game
    /// follows with `TileMap::object`; an unset one is object 0; one to
    /// another level's entity, and an array of references, stay LDtk's
    /// JSON, which the `iid` properties resolve. A level's own fields
    /// refer the same way.
    #[test]
    fn references_to_entities_of_the_same_level_are_object_properties() {
        use assets_runtime::tilemap::PropertyType;
        let entity = |iid: &str, name: &str, fields: &str| {
            format!(
                r#"{{"__identifier": "{name}", "__grid": [0, 0], "__pivot": [0, 0], "__tile": null,
                   "iid": "{iid}", "width": 8, "height": 8, "defUid": 1, "px": [0, 0],
                   "fieldInstances": [{fields}]}}"#
            )
        };
        let reference = |field: &str, level: &str, to: &str| {
            format!(
                r#"{{"__identifier": "{field}", "__type": "EntityRef", "__value":
                   {{"entityIid": "{to}", "layerIid": "l", "levelIid": "{level}", "worldIid": "w"}}}}"#
            )
        };
        let layer = |name: &str, uid: u32, entities: &[String]| {
            format!(
                r#"{{"__identifier": "{name}", "__type": "Entities", "__cWid": 5, "__cHei": 3, "__gridSize": 8,
                   "__opacity": 1, "__pxTotalOffsetX": 0, "__pxTotalOffsetY": 0, "__tilesetDefUid": null,
                   "layerDefUid": {uid}, "visible": true, "intGridCsv": [], "autoLayerTiles": [],
                   "gridTiles": [], "entityInstances": [{}]}}"#,
                entities.join(",")
            )
        };
        let button_fields = [
            reference("target", "a1", "door-2"),
            r#"{"__identifier": "unset", "__type": "EntityRef", "__value": null}"#.to_owned(),
            reference("far", "b2", "door-9"),
            format!(
                r#"{{"__identifier": "all", "__type": "Array<EntityRef>", "__value": [{}]}}"#,
                r#"{"entityIid": "door-1", "layerIid": "l", "levelIid": "a1", "worldIid": "w"}"#
            ),
        ]
        .join(",");
        // LDtk lists layers top first: `Doors` is drawn last, its objects
        // numbered after the button's.
        let layers = [
            layer(
                "Doors",
                2,
                &[entity("door-1", "Door", ""), entity("door-2", "Door", "")],
            ),
            layer("Switches", 3, &[entity("button", "Button", &button_fields)]),
        ]
        .join(",");
        let level = format!(
            r##"{{"identifier": "Level_0", "iid": "a1", "uid": 0, "worldX": 0, "worldY": 0,
                "pxWid": 40, "pxHei": 24, "__bgColor": "#40465B", "bgRelPath": null, "externalRelPath": null,
                "fieldInstances": [{}], "layerInstances": [{layers}]}}"##,
            reference("start", "a1", "button")
        );
        let run = built(ProcessorTest::new("World.ldtk", project(&level)));
        let map = TileMap::parse(&run.output("Level_0").unwrap().bytes[..]).expect("valid");
        let button = map.layer("Switches").unwrap().objects().next().unwrap();
        assert_eq!((button.name(), button.id()), ("Button", 1));
        let props = button.properties();
        let target = props.get("target").unwrap();
        assert_eq!(target.kind, PropertyType::Object);
        let door = map
            .object(target.as_int().unwrap() as u32)
            .expect("followed");
        assert_eq!(door.properties().get("iid").unwrap().value, "door-2");
        let unset = props.get("unset").unwrap();
        assert_eq!((unset.kind, unset.value), (PropertyType::Object, "0"));
        let far = props.get("far").unwrap();
        assert_eq!(far.kind, PropertyType::Class);
        let far: serde_json::Value = serde_json::from_str(far.value).unwrap();
        assert_eq!(
            (far["levelIid"].as_str(), far["entityIid"].as_str()),
            (Some("b2"), Some("door-9"))
        );
        assert_eq!(props.get("all").unwrap().kind, PropertyType::Class);
        let start = map.properties().get("start").unwrap();
        assert_eq!(
            (start.kind, start.value),
            (PropertyType::Object, "1"),
            "the level's own field"
        );
    }

    #[test]
    fn a_level_in_its_own_file_is_read_and_text_output_makes_no_levels() {
        let external = r#"{"identifier": "Level_0", "externalRelPath": "World/Level_0.ldtkl", "layerInstances": null}"#;
        let level_file = LEVEL.replace(r#""externalRelPath": null,"#, "");
        let run = built(
            ProcessorTest::new("World.ldtk", project(external))
                .file("World/Level_0.ldtkl", &level_file),
        );
        assert_eq!(run.read, ["World.ldtk", "World/Level_0.ldtkl"]);
        let map = TileMap::parse(&run.output("Level_0").unwrap().bytes[..]).unwrap();
        assert_eq!(map.layers().count(), 4);
        // Its background is relative to the project, as LDtk writes it.
        let level = ProcessorTest::new("World/Level_0.ldtkl", &level_file)
            .file("backgrounds/cave.png", b"png")
            .run(&Tilemap)
            .expect_ok();
        let refs: Vec<&str> = level.references.iter().map(|r| r.as_str()).collect();
        assert_eq!(refs, ["backgrounds/cave.png"]);

        let text = ProcessorTest::new("World.ldtk", project(LEVEL))
            .file("atlas/Cavernas.png", b"png")
            .file("backgrounds/cave.png", b"png")
            .settings("output = \"text\"")
            .run(&Tilemap)
            .expect_ok();
        assert_eq!(text.outputs.len(), 1);

        let bad = project(&LEVEL.replace(r#""t": 10"#, r#""t": 99"#));
        let error = ProcessorTest::new("World.ldtk", bad)
            .file("atlas/Cavernas.png", b"png")
            .file("backgrounds/cave.png", b"png")
            .run(&Tilemap)
            .error()
            .unwrap();
        assert_eq!(
            error,
            "levels[0].layerInstances[1]: a tile's id 99 is not one of its tileset's 32"
        );
    }
}
