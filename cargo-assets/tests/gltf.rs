//! glTF models through the real binary: a `.gltf` with its `.bin` buffer and
//! a PNG texture (in a CamelCase folder, the texture's name percent-encoded
//! in its URI, as exporters write them) becomes one GLB that the `gltf`
//! crate loads from the parcel bytes. It names its buffer and texture,
//! which the parcel holds once, as the resources their URIs resolve to
//! (`Parcel::by_uri`): the `.bin`'s bytes and a decoded image. With
//! `embed = true` it holds the buffer and the texture's PNG itself. Buffer
//! and texture are inputs, found while building.

use assets_test_support::{Project, gltf_bin as bin, gltf_json, khronos_errors, png_bytes};

const MODEL: &str = "assets/models/FlightHelmet/FlightHelmet.gltf";
const MODEL_NAME: &str = "models/FlightHelmet/FlightHelmet.gltf";
const BIN: &str = "assets/models/FlightHelmet/FlightHelmet.bin";
const TEXTURE: &str = "assets/models/FlightHelmet/Leather Parts.png";

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file(MODEL, gltf_json("Leather%20Parts.png"))
        .file(BIN, bin(1.0))
        .png(TEXTURE, 8, 8, 7);
    p
}

/// What the packed model says of its texture.
#[derive(Debug, PartialEq)]
enum Texture {
    /// In the GLB: its bytes and MIME type.
    Embedded(Vec<u8>, String),
    /// A resource of the parcel, which the URI the model kept names: its
    /// name and RGBA8 pixels.
    Referenced(String, Vec<u8>),
}

/// The decoded RGBA8 pixels of PNG bytes.
fn pixels(png: &[u8]) -> Vec<u8> {
    image::load_from_memory(png).unwrap().to_rgba8().into_raw()
}

/// The model's GLB from the parcel `parcel` of `run`, and what it says:
/// its texture, the resource its buffer is (`None`: in the GLB), and the
/// vertex bytes.
fn built_model_in(
    run: &assets_test_support::Run,
    parcel: &str,
) -> (Texture, Option<String>, Vec<u8>) {
    let bytes = std::fs::read(run.parcel(parcel)).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let id = assets_runtime::ResourceId::of(MODEL_NAME);
    assert_eq!(parcel.get(id).unwrap().kind, "gltf");
    let glb = parcel.bytes(id).unwrap();
    let model = gltf::Gltf::from_slice(&glb).expect("the gltf crate loads the packed model");
    let named = |uri: &str| {
        parcel
            .by_uri(MODEL_NAME, uri)
            .unwrap_or_else(|| panic!("`{uri}` names no resource of the parcel"))
    };
    let buffers: Vec<(Option<String>, Vec<u8>)> = model
        .buffers()
        .map(|b| match b.source() {
            gltf::buffer::Source::Bin => (None, model.blob.clone().expect("a binary chunk")),
            gltf::buffer::Source::Uri(uri) => {
                let resource = named(uri);
                assert_eq!(resource.kind, "bytes");
                (
                    Some(resource.name.to_owned()),
                    resource.bytes().unwrap().into_owned(),
                )
            }
        })
        .collect();
    let image = model.images().next().unwrap();
    let texture = match image.source() {
        gltf::image::Source::View { view, mime_type } => Texture::Embedded(
            buffers[view.buffer().index()].1[view.offset()..view.offset() + view.length()].to_vec(),
            mime_type.to_owned(),
        ),
        gltf::image::Source::Uri { uri, .. } => {
            let resource = named(uri);
            assert_eq!(resource.kind, "image");
            let pixels = resource.image().unwrap().pixels().unwrap().into_owned();
            Texture::Referenced(resource.name.to_owned(), pixels)
        }
    };
    let accessor = model.accessors().next().unwrap();
    let view = accessor.view().unwrap();
    let at = view.offset() + accessor.offset();
    let (buffer, bytes) = &buffers[view.buffer().index()];
    let vertices = bytes[at..at + 36].to_vec();
    // What the processor does not know passes through.
    let json = packed_json(run);
    assert_eq!(json["extensionsUsed"], serde_json::json!(["EXT_made_up"]));
    assert_eq!(json["materials"][0]["extensions"]["EXT_made_up"]["x"], 1);
    assert_eq!(json["images"][0]["name"], "leather");
    (texture, buffer.clone(), vertices)
}

fn built_model(run: &assets_test_support::Run) -> (Texture, Option<String>, Vec<u8>) {
    built_model_in(run, "main")
}

/// The name of the buffer's resource, which the model names.
const BIN_NAME: &str = "models/FlightHelmet/FlightHelmet.bin";

/// A PNG texture inside the GLB, its bytes as they are.
fn embedded(png: Vec<u8>) -> Texture {
    Texture::Embedded(png, "image/png".into())
}

/// The texture as the model names it: `Leather Parts.png` beside it.
fn referenced(png: &[u8]) -> Texture {
    Texture::Referenced("models/FlightHelmet/Leather Parts.png".into(), pixels(png))
}

#[test]
fn a_gltf_names_its_buffer_and_texture_which_the_parcel_holds_once() {
    let p = project();
    let run = p.build_ok();
    let (texture, buffer, vertices) = built_model(&run);
    assert_eq!(texture, referenced(&p.read(TEXTURE)));
    assert_eq!(buffer.as_deref(), Some(BIN_NAME));
    assert_eq!(vertices, bin(1.0)[4..]);
    // Once: the image resource, not also the PNG inside the model.
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let glb = parcel
        .bytes(assets_runtime::ResourceId::of(MODEL_NAME))
        .unwrap();
    let png = p.read(TEXTURE);
    assert!(
        !glb.windows(png.len()).any(|w| w == png),
        "the PNG is in the GLB"
    );
    assert_eq!(packed_json(&run)["images"][0]["uri"], "Leather%20Parts.png");
    assert_eq!(packed_json(&run)["buffers"][0]["uri"], "FlightHelmet.bin");
    khronos_check(&p, &run);
    // The queries say so.
    let rdeps = p.run(&["rdeps", "models/FlightHelmet/Leather Parts.png"]);
    let answer = rdeps.messages.iter().find(|m| m["reason"] == "rdeps");
    assert_eq!(
        answer.map(|m| &m["users"]),
        Some(&serde_json::json!([{"asset": MODEL_NAME, "via": "refers"}])),
        "{:?}",
        rdeps.messages
    );

    // (what, edit, assets whose processor runs)
    type Case = (&'static str, fn(&Project), &'static [&'static str]);
    let cases: &[Case] = &[
        ("nothing changed", |_| {}, &[]),
        (
            "editing the buffer reruns it, and the model that refers to it",
            |p| {
                p.file(BIN, bin(2.0));
            },
            &[
                "models/FlightHelmet/FlightHelmet.bin",
                "models/FlightHelmet/FlightHelmet.gltf",
            ],
        ),
        (
            "editing the texture reruns it alone: the model only names it",
            |p| {
                p.png(TEXTURE, 8, 8, 8);
            },
            &["models/FlightHelmet/Leather Parts.png"],
        ),
        (
            "touching all three runs nothing",
            |p| {
                p.touch(MODEL).touch(BIN).touch(TEXTURE);
            },
            &[],
        ),
    ];
    for &(what, edit, ran) in cases {
        edit(&p);
        let run = p.build_ok();
        assert_eq!(run.processed(), ran, "{what}\n{}", run.stderr);
    }
    let good = p.build_ok();
    let (texture, _, vertices) = built_model(&good);
    assert_eq!(texture, referenced(&p.read(TEXTURE)));
    assert_eq!(vertices, bin(2.0)[4..]);

    // A texture that is gone reruns the model, which says so; the dev
    // parcel keeps the model's last good build.
    let parcel = good.parcel("main");
    let before = std::fs::read(&parcel).unwrap();
    p.remove(TEXTURE);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    let message = run.failure_message(MODEL_NAME);
    assert!(
        message.contains("`models/FlightHelmet/Leather Parts.png` does not exist"),
        "{message}"
    );
    let stand_ins = (run.with_reason("parcel-stand-ins").next()).expect("stand-ins named");
    assert_eq!(stand_ins["last_good"], serde_json::json!([MODEL_NAME]));
    let old = assets_runtime::Parcel::from_bytes(&before).unwrap();
    let now = assets_runtime::ParcelBuf::open(&parcel).unwrap();
    let model = assets_runtime::ResourceId::of(MODEL_NAME);
    assert_eq!(
        now.parcel().bytes(model).unwrap(),
        old.bytes(model).unwrap()
    );
}

#[test]
fn a_parcel_holding_a_model_holds_the_files_it_names_whatever_its_globs_say() {
    let p = project();
    p.metadata(
        r#"
[package.metadata.assets.parcels]
models = ["models/**/*.gltf"]
main = { include = ["**"], exclude = ["**/*.png"] }
"#,
    );
    let run = p.build_ok();
    for parcel in ["models", "main"] {
        let (texture, buffer, vertices) = built_model_in(&run, parcel);
        assert_eq!(texture, referenced(&p.read(TEXTURE)), "{parcel}");
        assert_eq!(buffer.as_deref(), Some(BIN_NAME));
        assert_eq!(vertices, bin(1.0)[4..]);
    }
    let names = |parcel: &str| {
        let bytes = std::fs::read(run.parcel(parcel)).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
        let mut names: Vec<String> = parcel.iter().map(|r| r.name.to_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(
        names("models"),
        [
            BIN_NAME,
            MODEL_NAME,
            "models/FlightHelmet/Leather Parts.png"
        ]
    );
    assert_eq!(
        names("main"),
        [
            "models/FlightHelmet/FlightHelmet.bin",
            MODEL_NAME,
            "models/FlightHelmet/Leather Parts.png"
        ]
    );
}

#[test]
fn a_broken_texture_fails_by_its_name_and_keeps_the_last_good_parcel() {
    // The model is fine: it only names the texture. The parcel, which
    // must hold the texture, is not written.
    let p = project();
    let good = p.build_ok();
    let before = std::fs::read(good.parcel("main")).unwrap();
    p.file(TEXTURE, b"\x89PNG\r\n\x1a\nnot really");
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    run.failure("models/FlightHelmet/Leather Parts.png");
    assert_eq!(run.processed(), ["models/FlightHelmet/Leather Parts.png"]);
    assert_eq!(std::fs::read(good.parcel("main")).unwrap(), before);
}

#[test]
fn embed_puts_the_buffer_and_the_original_png_in_the_glb() {
    let p = project();
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "**/*.gltf"
embed = true
"#,
    );
    let run = p.build_ok();
    let (texture, buffer, vertices) = built_model(&run);
    assert_eq!(texture, embedded(p.read(TEXTURE)), "the PNG's own bytes");
    assert_eq!(buffer, None);
    assert_eq!(vertices, bin(1.0)[4..]);
    // Held in the GLB, the buffer and the PNG are read by the validator too.
    khronos_check(&p, &run);
    p.png(TEXTURE, 8, 8, 9);
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        [MODEL_NAME, "models/FlightHelmet/Leather Parts.png"]
    );
    let (texture, ..) = built_model(&run);
    assert_eq!(texture, embedded(png_bytes(8, 8, 9)));
}

#[test]
fn a_texture_that_is_no_asset_is_embedded() {
    // Hidden files are not assets: the model carries its own copy.
    let p = project();
    p.file(MODEL, gltf_json(".leather.png")).png(
        "assets/models/FlightHelmet/.leather.png",
        4,
        4,
        3,
    );
    let (texture, ..) = built_model(&p.build_ok());
    assert_eq!(texture, embedded(png_bytes(4, 4, 3)));
}

#[test]
fn a_missing_texture_names_the_uri_and_creating_it_rebuilds_the_model() {
    let p = project();
    p.file(MODEL, gltf_json("Missing%20Metal.png"));
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    let message = run.failure_message(MODEL_NAME);
    assert!(
        message.contains("images[0] refers to `Missing%20Metal.png`")
            && message.contains("`models/FlightHelmet/Missing Metal.png` does not exist"),
        "{message}"
    );
    p.png("assets/models/FlightHelmet/Missing Metal.png", 4, 4, 1);
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        [MODEL_NAME, "models/FlightHelmet/Missing Metal.png"]
    );
    let (texture, ..) = built_model(&run);
    assert_eq!(
        texture,
        Texture::Referenced(
            "models/FlightHelmet/Missing Metal.png".into(),
            pixels(&png_bytes(4, 4, 1))
        )
    );
}

#[test]
fn broken_models_fail_by_name_and_keep_the_last_good_parcel() {
    let p = project();
    let good = p.build_ok();
    let before = std::fs::read(good.parcel("main")).unwrap();
    let cases: &[(&str, String, &str)] = &[
        ("not JSON", "{ nope".into(), "not valid glTF JSON"),
        (
            "an index out of range",
            gltf_json("Leather%20Parts.png").replace("\"mesh\": 0", "\"mesh\": 5"),
            "invalid glTF",
        ),
        (
            "a view of a buffer that is not there",
            gltf_json("Leather%20Parts.png").replace(r#""buffer": 0"#, r#""buffer": 7"#),
            "invalid glTF",
        ),
        (
            "a URI leaving the asset root",
            gltf_json("../../../../etc/passwd"),
            "not a path inside the asset root",
        ),
        (
            "a remote URI",
            gltf_json("https://example.com/x.png"),
            "`https:` URI",
        ),
        (
            "a buffer shorter than declared",
            gltf_json("Leather%20Parts.png").replace("\"byteLength\": 40", "\"byteLength\": 400"),
            "declares 400 bytes but has 40",
        ),
    ];
    for (what, json, expected) in cases {
        p.file(MODEL, json);
        let run = p.run(&["build"]);
        assert_eq!(run.code, Some(101), "{what}");
        let message = run.failure_message(MODEL_NAME);
        assert!(message.contains(expected), "{what}: {message}");
        assert_eq!(
            std::fs::read(good.parcel("main")).unwrap(),
            before,
            "{what}"
        );
    }
}

/// The JSON chunk of the model's GLB in the built parcel.
fn packed_json(run: &assets_test_support::Run) -> serde_json::Value {
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
    let glb = parcel
        .bytes(assets_runtime::ResourceId::of(MODEL_NAME))
        .unwrap();
    let json = gltf::binary::Glb::from_slice(&glb).unwrap().json;
    serde_json::from_slice(&json).unwrap()
}

#[test]
fn a_model_requiring_an_extension_the_validator_does_not_know_still_packs() {
    // Draco or meshopt models require extensions the `gltf` crate does not
    // model; packing moves bytes and never needs to understand them.
    let p = project();
    p.file(
        MODEL,
        gltf_json("Leather%20Parts.png").replace(
            r#""extensionsUsed": ["EXT_made_up"],"#,
            r#""extensionsUsed": ["EXT_made_up"], "extensionsRequired": ["EXT_made_up"],"#,
        ),
    );
    let run = p.build_ok();
    let json = packed_json(&run);
    assert_eq!(
        json["extensionsRequired"],
        serde_json::json!(["EXT_made_up"])
    );
    // Said, and said again by a build that reuses the step.
    let said = "requires the glTF extensions `EXT_made_up`, passed through untouched";
    for run in [run, p.build_ok()] {
        let warning = (run.with_reason("asset-warning").next()).expect("a warning");
        assert_eq!(warning["asset"], MODEL_NAME);
        assert!(
            warning["message"].as_str().unwrap().starts_with(said),
            "{warning}"
        );
        assert!(
            run.stderr
                .contains(&format!("warning: `{MODEL_NAME}` (gltf): {said}")),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_glb_with_an_external_texture_is_packed_too() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    // A GLB whose buffer is its BIN chunk and whose image is still a file.
    let json = gltf_json("Leather%20Parts.png").replace(r#""uri": "FlightHelmet.bin", "#, "");
    p.file(MODEL, glb_file(&json, &bin(3.0)))
        .png(TEXTURE, 8, 8, 7);
    let run = p.build_ok();
    let (texture, buffer, vertices) = built_model(&run);
    assert_eq!(texture, referenced(&p.read(TEXTURE)));
    assert_eq!(buffer, None, "its own BIN chunk");
    assert_eq!(vertices, bin(3.0)[4..]);
}

/// A GLB file of `json` with the BIN chunk `bin`.
fn glb_file(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    json.resize(json.len().next_multiple_of(4), b' ');
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    for n in [2, total as u32, json.len() as u32, 0x4E4F_534A] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(&json);
    for n in [bin.len() as u32, 0x004E_4942] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(bin);
    out
}

#[test]
fn a_glb_keeps_its_chunk_as_buffer_0_and_names_its_other_buffers_after_it() {
    // Buffer 0 is the GLB's chunk, buffer 1 a file; views on each, and a
    // second accessor on the chunk. Packed, the chunk stays buffer 0 and
    // the file, referenced, is buffer 1; embedded, both are in the chunk.
    let json = gltf_json("Leather%20Parts.png")
        .replace(
            r#""buffers": [{"uri": "FlightHelmet.bin", "byteLength": 40}]"#,
            r#""buffers": [{"byteLength": 40}, {"uri": "FlightHelmet.bin", "byteLength": 40}]"#,
        )
        .replace(
            r#""bufferViews": [{"buffer": 0, "byteOffset": 4, "byteLength": 36}]"#,
            r#""bufferViews": [{"buffer": 1, "byteOffset": 4, "byteLength": 36},
                              {"buffer": 0, "byteOffset": 4, "byteLength": 36}]"#,
        )
        .replace(
            r#""accessors": ["#,
            r#""accessors": [{"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3",
                              "min": [0, 0, 0], "max": [3, 3, 0]}, "#,
        )
        .replace(r#""POSITION": 0"#, r#""POSITION": 1"#);
    for embed in [false, true] {
        let p = project();
        p.file(MODEL, glb_file(&json, &bin(3.0)));
        if embed {
            p.metadata("[[package.metadata.assets.rules]]\nmatch = \"**/*.gltf\"\nembed = true\n");
        }
        let run = p.build_ok();
        let packed = packed_json(&run);
        let bytes = std::fs::read(run.parcel("main")).unwrap();
        let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
        let glb = parcel
            .bytes(assets_runtime::ResourceId::of(MODEL_NAME))
            .unwrap();
        let model = gltf::Gltf::from_slice(&glb).unwrap();
        let chunk = model.blob.clone().unwrap();
        let vertices = |accessor: usize| {
            let accessor = model.accessors().nth(accessor).unwrap();
            let view = accessor.view().unwrap();
            let buffer = match view.buffer().source() {
                gltf::buffer::Source::Bin => chunk.clone(),
                gltf::buffer::Source::Uri(uri) => parcel
                    .by_uri(MODEL_NAME, uri)
                    .unwrap()
                    .bytes()
                    .unwrap()
                    .into_owned(),
            };
            let at = view.offset() + accessor.offset();
            buffer[at..at + 36].to_vec()
        };
        assert_eq!(vertices(1), bin(1.0)[4..], "the file's (embed: {embed})");
        assert_eq!(vertices(0), bin(3.0)[4..], "the chunk's (embed: {embed})");
        let buffers = packed["buffers"].as_array().unwrap();
        if embed {
            assert_eq!(buffers.len(), 1, "{packed}");
        } else {
            assert_eq!(buffers[0], serde_json::json!({"byteLength": 40}));
            assert_eq!(buffers[1]["uri"], "FlightHelmet.bin");
            assert_eq!(packed["bufferViews"][0]["buffer"], 1);
            assert_eq!(packed["bufferViews"][1]["buffer"], 0);
        }
    }
}

#[test]
fn a_model_with_an_application_specific_attribute_packs() {
    // Attribute names starting with `_` are the application's own (the
    // spec's rule; Bevy's barycentric example has `__BARYCENTRIC`), not
    // invalid semantics.
    let p = project();
    p.file(
        MODEL,
        gltf_json("Leather%20Parts.png").replace(
            r#""attributes": {"POSITION": 0}"#,
            r#""attributes": {"POSITION": 0, "__BARYCENTRIC": 0, "_WEIGHT_PAINT": 0}"#,
        ),
    );
    let run = p.build_ok();
    built_model(&run);
    let json = packed_json(&run);
    let attributes = &json["meshes"][0]["primitives"][0]["attributes"];
    assert_eq!(attributes["__BARYCENTRIC"], 0, "{attributes}");
    assert_eq!(attributes["_WEIGHT_PAINT"], 0, "{attributes}");
}

/// Checks the packed model with the Khronos glTF validator, where it is
/// installed (`tests/install-tools.sh`), its URIs loaded from the source
/// folder: the packed model has no error the source model has not (the
/// hand-made mesh has no texture coordinates, which its textured material
/// wants). The source model's errors, or none when skipped.
fn khronos_check(p: &Project, run: &assets_test_support::Run) -> Vec<String> {
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let glb = parcel
        .bytes(assets_runtime::ResourceId::of(MODEL_NAME))
        .unwrap();
    let folder = p.path().join("assets/models/FlightHelmet");
    let Some(packed) = assets_test_support::khronos_gltf_report(&glb, &folder) else {
        eprintln!("skipped the Khronos glTF validator: not installed (tests/install-tools.sh)");
        return Vec::new();
    };
    let source = std::fs::read(p.path().join(MODEL)).unwrap();
    let source = assets_test_support::khronos_gltf_report(&source, &folder).unwrap();
    let (packed, source) = (khronos_errors(&packed), khronos_errors(&source));
    assert_eq!(
        packed, source,
        "the packed model's errors, then the source's"
    );
    eprintln!("Khronos glTF validator: the packed model's errors are the source's: {packed:?}");
    source
}

/// [`gltf_json`] as Blender or glTF-Transform write a model with WebP
/// textures: the PNG stays as the fallback `source` of the base colour,
/// the emissive texture has only its WebP (no `source`, as glTF 2.0
/// allows), and `EXT_texture_webp` is used, not required.
fn webp_model() -> String {
    gltf_json("Leather%20Parts.png")
        .replace(
            r#""extensionsUsed": ["EXT_made_up"],"#,
            r#""extensionsUsed": ["EXT_made_up", "EXT_texture_webp"],"#,
        )
        .replace(
            r#""textures": [{"source": 0}],"#,
            r#""textures": [{"source": 0, "extensions": {"EXT_texture_webp": {"source": 1}}},
                            {"extensions": {"EXT_texture_webp": {"source": 1}}}],"#,
        )
        .replace(
            r#""images": [{"uri": "Leather%20Parts.png", "name": "leather"}],"#,
            r#""images": [{"uri": "Leather%20Parts.png", "name": "leather"}, {"uri": "coin.webp"}],"#,
        )
        .replace(
            r#""baseColorTexture": {"index": 0}}"#,
            r#""baseColorTexture": {"index": 0}}, "emissiveTexture": {"index": 1}"#,
        )
}

#[test]
fn textures_whose_image_comes_from_ext_texture_webp_pack_and_name_their_images() {
    let p = project();
    let webp = include_bytes!("fixtures/coin-lossy.webp");
    p.file(MODEL, webp_model())
        .file("assets/models/FlightHelmet/coin.webp", webp);
    let run = p.build_ok();
    assert!(
        run.with_reason("asset-warning").next().is_none(),
        "{}",
        run.stderr
    );
    let json = packed_json(&run);
    assert_eq!(
        json["textures"][1]["extensions"]["EXT_texture_webp"]["source"],
        1
    );
    assert!(
        json["textures"][1].get("source").is_none(),
        "{}",
        json["textures"]
    );
    // The WebP is an asset of its own, decoded by its rule: the model names it.
    assert_eq!(json["images"][1]["uri"], "coin.webp");
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let coin = parcel
        .by_uri(MODEL_NAME, "coin.webp")
        .expect("the parcel holds the WebP");
    assert_eq!(coin.kind, "image");
    let header = coin.image().unwrap().header;
    assert_eq!((header.width, header.height), (48, 36));

    // The Khronos validator agrees, and finds nothing wrong with the WebP
    // textures in the source.
    let source = khronos_check(&p, &run);
    assert!(
        !source
            .iter()
            .any(|e| e.contains("texture") || e.contains("image")),
        "{source:?}"
    );

    // An image an extension names must exist; the error says where.
    p.file(
        MODEL,
        webp_model().replace(
            r#"{"EXT_texture_webp": {"source": 1}}}],"#,
            r#"{"EXT_texture_webp": {"source": 7}}}],"#,
        ),
    );
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    assert_eq!(
        run.failure_message(MODEL_NAME),
        "invalid glTF: textures[1].extensions.EXT_texture_webp.source: image 7 does not exist (the model has 2)"
    );

    // One it does not know passes through, said once.
    let unknown = webp_model().replace(
        r#"{"extensions": {"EXT_texture_webp": {"source": 1}}}],"#,
        r#"{"extensions": {"EXT_texture_jxl": {"source": 1}}}],"#,
    );
    p.file(MODEL, unknown);
    let run = p.build_ok();
    let warning = run.with_reason("asset-warning").next().expect("a warning");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("textures[1] takes its image from `EXT_texture_jxl`"),
        "{warning}"
    );
}

/// A model compressed by gltfpack (meshoptimizer's packer, `-c`), as web
/// games ship them: `EXT_meshopt_compression` views read their data from
/// one buffer and name a placeholder buffer, with no `uri`, as their
/// fallback. Packed with an image held in the GLB, the compressed data's
/// buffer moves from index 0 to 1, and the views' extension must follow
/// it; the Khronos validator, which knows the extension, finds no error
/// the source has not. gltfpack comes from `tests/install-tools.sh`;
/// skipped, and said, without it.
#[test]
fn a_meshopt_compressed_model_keeps_its_views_on_their_buffers() {
    let Some(gltfpack) = assets_test_support::npm_tool("gltfpack") else {
        eprintln!("gltfpack is not installed (tests/install-tools.sh): meshopt not checked");
        return;
    };
    let p = project();
    let packed = p.path().join("assets/models/packed/Packed Helmet.gltf");
    std::fs::create_dir_all(packed.parent().unwrap()).unwrap();
    let out = std::process::Command::new("node")
        .arg(gltfpack.join("cli.js"))
        .arg("-i")
        .arg(p.path().join(MODEL))
        .arg("-o")
        .arg(&packed)
        .arg("-c")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gltfpack: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An image held in the GLB (a data URI): the BIN chunk comes first.
    let mut source: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&packed).unwrap()).unwrap();
    let png = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        png_bytes(4, 4, 1),
    );
    let images = source["images"].as_array_mut().unwrap();
    images.push(serde_json::json!({"uri": format!("data:image/png;base64,{png}")}));
    std::fs::write(&packed, serde_json::to_vec(&source).unwrap()).unwrap();
    let meshopt_views = |doc: &serde_json::Value| -> Vec<(u64, u64)> {
        (doc["bufferViews"].as_array().unwrap().iter())
            .filter_map(|v| {
                let m = &v["extensions"]["EXT_meshopt_compression"];
                Some((v["buffer"].as_u64()?, m["buffer"].as_u64()?))
            })
            .collect()
    };
    assert!(
        !meshopt_views(&source).is_empty(),
        "gltfpack compressed nothing"
    );
    let placeholder = &source["buffers"][1];
    assert!(placeholder.get("uri").is_none(), "{placeholder}");

    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let name = "models/packed/Packed Helmet.gltf";
    let glb = parcel.bytes(assets_runtime::ResourceId::of(name)).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&gltf::binary::Glb::from_slice(&glb).unwrap().json).unwrap();
    // BIN chunk (the image), the kept `.bin` the data is in, the
    // placeholder: every compressed view reads 1, falls back on 2.
    let buffers = json["buffers"].as_array().unwrap();
    assert_eq!(buffers.len(), 3, "{buffers:?}");
    assert_eq!(buffers[2], *placeholder);
    let views = meshopt_views(&json);
    assert!(views.iter().all(|&v| v == (2, 1)), "{views:?}");

    let folder = packed.parent().unwrap();
    let Some(report) = assets_test_support::khronos_gltf_report(&glb, folder) else {
        eprintln!("skipped the Khronos glTF validator: not installed (tests/install-tools.sh)");
        return;
    };
    let source = std::fs::read(&packed).unwrap();
    let source = assets_test_support::khronos_gltf_report(&source, folder).unwrap();
    assert_eq!(khronos_errors(&report), khronos_errors(&source));
}
