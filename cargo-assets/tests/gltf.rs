//! glTF models through the real binary: a `.gltf` with its `.bin` buffer and
//! a PNG texture (in a CamelCase folder, the texture's name percent-encoded
//! in its URI, as exporters write them) becomes one GLB that the `gltf`
//! crate loads from the parcel bytes alone; its buffer and texture are
//! inputs, found while building.

use assets_test_support::{Project, gltf_bin as bin, gltf_json, png_bytes};

const MODEL: &str = "assets/models/FlightHelmet/FlightHelmet.gltf";
const BIN: &str = "assets/models/FlightHelmet/FlightHelmet.bin";
const TEXTURE: &str = "assets/models/FlightHelmet/Leather Parts.png";

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.file(MODEL, gltf_json("Leather%20Parts.png"))
        .file(BIN, bin(1.0))
        .png(TEXTURE, 8, 8, 7);
    p
}

/// The model's GLB from the built parcel, and what it says: the texture's
/// bytes and MIME type, and the vertex bytes.
fn built_model(p: &Project, run: &assets_test_support::Run) -> (Vec<u8>, String, Vec<u8>) {
    let parcel = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&parcel).unwrap();
    let id = assets_runtime::ResourceId::of("models/FlightHelmet/FlightHelmet.gltf");
    assert_eq!(parcel.get(id).unwrap().kind, "gltf");
    let glb = parcel.bytes(id).unwrap();
    let model = gltf::Gltf::from_slice(&glb).expect("the gltf crate loads the packed model");
    let blob = model.blob.as_deref().expect("a binary chunk");
    assert!(
        model
            .buffers()
            .all(|b| matches!(b.source(), gltf::buffer::Source::Bin))
    );
    let image = model.images().next().unwrap();
    let gltf::image::Source::View { view, mime_type } = image.source() else {
        panic!("the image still points at a file");
    };
    let texture = blob[view.offset()..view.offset() + view.length()].to_vec();
    let accessor = model.accessors().next().unwrap();
    let view = accessor.view().unwrap();
    let at = view.offset() + accessor.offset();
    let vertices = blob[at..at + 36].to_vec();
    // What the processor does not know passes through.
    let json = packed_json(run);
    assert_eq!(json["extensionsUsed"], serde_json::json!(["EXT_made_up"]));
    assert_eq!(json["materials"][0]["extensions"]["EXT_made_up"]["x"], 1);
    assert_eq!(json["images"][0]["name"], "leather");
    let _ = p;
    (texture, mime_type.to_owned(), vertices)
}

#[test]
fn a_gltf_with_its_buffer_and_texture_becomes_one_glb_with_the_original_png() {
    let p = project();
    let run = p.build_ok();
    let (texture, mime, vertices) = built_model(&p, &run);
    assert_eq!(texture, p.read(TEXTURE), "the PNG's own bytes");
    assert_eq!(mime, "image/png");
    assert_eq!(vertices, bin(1.0)[4..]);

    // (what, edit, assets whose processor runs)
    type Case = (&'static str, fn(&Project), &'static [&'static str]);
    let cases: &[Case] = &[
        ("nothing changed", |_| {}, &[]),
        (
            "editing the buffer reruns the model (and the buffer's own copy)",
            |p| {
                p.file(BIN, bin(2.0));
            },
            &[
                "models/FlightHelmet/FlightHelmet.bin",
                "models/FlightHelmet/FlightHelmet.gltf",
            ],
        ),
        (
            "editing the texture reruns the model and the image",
            |p| {
                p.png(TEXTURE, 8, 8, 8);
            },
            &[
                "models/FlightHelmet/FlightHelmet.gltf",
                "models/FlightHelmet/Leather Parts.png",
            ],
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
    let (texture, _, vertices) = built_model(&p, &p.build_ok());
    assert_eq!(texture, p.read(TEXTURE));
    assert_eq!(vertices, bin(2.0)[4..]);
}

#[test]
fn a_missing_texture_names_the_uri_and_creating_it_rebuilds_the_model() {
    let p = project();
    p.file(MODEL, gltf_json("Missing%20Metal.png"));
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101));
    let message = run.failure_message("models/FlightHelmet/FlightHelmet.gltf");
    assert!(
        message.contains("images[0] refers to `Missing%20Metal.png`")
            && message.contains("`models/FlightHelmet/Missing Metal.png` does not exist"),
        "{message}"
    );
    p.png("assets/models/FlightHelmet/Missing Metal.png", 4, 4, 1);
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        [
            "models/FlightHelmet/FlightHelmet.gltf",
            "models/FlightHelmet/Missing Metal.png"
        ]
    );
    let (texture, ..) = built_model(&p, &run);
    assert_eq!(texture, png_bytes(4, 4, 1));
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
        let message = run.failure_message("models/FlightHelmet/FlightHelmet.gltf");
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
        .bytes(assets_runtime::ResourceId::of(
            "models/FlightHelmet/FlightHelmet.gltf",
        ))
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
    let json = packed_json(&p.build_ok());
    assert_eq!(
        json["extensionsRequired"],
        serde_json::json!(["EXT_made_up"])
    );
}

#[test]
fn a_glb_with_an_external_texture_is_packed_too() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    // A GLB whose buffer is its BIN chunk and whose image is still a file.
    let json = gltf_json("Leather%20Parts.png").replace(r#""uri": "FlightHelmet.bin", "#, "");
    let glb = {
        let mut json = json.into_bytes();
        json.resize(json.len().next_multiple_of(4), b' ');
        let bin = bin(3.0);
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = b"glTF".to_vec();
        for n in [2, total as u32, json.len() as u32, 0x4E4F_534A] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&json);
        for n in [bin.len() as u32, 0x004E_4942] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&bin);
        out
    };
    p.file("assets/models/FlightHelmet/FlightHelmet.gltf", glb)
        .png(TEXTURE, 8, 8, 7);
    let run = p.build_ok();
    let (texture, _, vertices) = built_model(&p, &run);
    assert_eq!(texture, p.read(TEXTURE));
    assert_eq!(vertices, bin(3.0)[4..]);
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
    built_model(&p, &run);
    let json = packed_json(&run);
    let attributes = &json["meshes"][0]["primitives"][0]["attributes"];
    assert_eq!(attributes["__BARYCENTRIC"], 0, "{attributes}");
    assert_eq!(attributes["_WEIGHT_PAINT"], 0, "{attributes}");
}
