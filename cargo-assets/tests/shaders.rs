//! The `shader` processor through the real binary, on shaders shaped like a
//! game's: WESL `import`s of a noise library and of a sibling module, a
//! quoted naga_oil `#import`, storage buffers, textures and samplers, a
//! compute shader, one that imports another package's modules, and one
//! with an error. Imports are dependencies found while building; naga
//! validates; errors carry file:line:col of the original source.

use assets_test_support::Project;
use serde_json::Value;

const NOISE: &str = "\
// Value noise, two octaves.
fn hash(p: vec2<f32>) -> f32 {
    return fract(sin(dot(p, vec2<f32>(12.9898, 78.233))) * 43758.5453);
}

fn fbm(p: vec2<f32>) -> f32 {
    return 0.5 * hash(p) + 0.25 * hash(p * 2.0);
}
";

const COMMON: &str = "\
struct Light {
    direction: vec3<f32>,
    intensity: f32,
}

const PI: f32 = 3.14159265;
";

const WATER: &str = "\
import package::shaders::lib::noise::fbm;
import super::common::{Light, PI};

@group(0) @binding(0) var<uniform> light: Light;
@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(1) @binding(0) var foam: texture_2d<f32>;
@group(1) @binding(1) var foam_sampler: sampler;

@fragment
fn fs_main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    let n = fbm(uv * PI) * light.intensity + heights[0];
    return textureSample(foam, foam_sampler, uv) * n;
}
";

const PARTICLES: &str = "\
#import \"shaders/common.wgsl\"

struct Particle {
    position: vec2<f32>,
    velocity: vec2<f32>,
}

@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    particles[i].position += particles[i].velocity * PI;
}
";

const BROKEN: &str = "\
@fragment
fn fs_main() -> @location(0) vec4<f32> {
    let x: f32 = 1u;
    return vec4<f32>(x);
}
";

const BEVY_MATERIAL: &str = "\
import bevy_pbr::forward_io::VertexOutput;

@fragment
fn fragment(mesh: VertexOutput) -> @location(0) vec4<f32> {
    return vec4<f32>(1.0);
}
";

fn project() -> Project {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata("")
        .file("assets/shaders/lib/noise.wesl", NOISE)
        .file("assets/shaders/common.wgsl", COMMON)
        .file("assets/shaders/water.wesl", WATER)
        .file("assets/shaders/particles.wgsl", PARTICLES)
        .file("assets/shaders/bevy_material.wesl", BEVY_MATERIAL);
    p
}

/// The reflection JSON of `shader` in the built parcel.
fn reflection(run: &assets_test_support::Run, shader: &str) -> Value {
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let text = parcel
        .text(assets_runtime::ResourceId::of(&format!(
            "{shader}#reflection"
        )))
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn shaders_are_validated_and_reflected_through_their_imports() {
    let p = project();
    let run = p.build_ok();
    let water = reflection(&run, "shaders/water.wesl");
    assert_eq!(water["validated"], true, "{water}");
    assert_eq!(
        water["imports"],
        serde_json::json!(["shaders/lib/noise.wesl", "shaders/common.wgsl"])
    );
    assert_eq!(
        water["entry_points"],
        serde_json::json!([{"name": "fs_main", "stage": "fragment"}])
    );
    let bindings: Vec<(u64, u64, &str, &str)> = water["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["group"].as_u64().unwrap(),
                b["binding"].as_u64().unwrap(),
                b["name"].as_str().unwrap(),
                b["holds"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bindings,
        [
            (0, 0, "light", "uniform"),
            (0, 1, "heights", "storage read"),
            (1, 0, "foam", "texture d2"),
            (1, 1, "foam_sampler", "sampler"),
        ]
    );
    let particles = reflection(&run, "shaders/particles.wgsl");
    assert_eq!(particles["validated"], true, "{particles}");
    assert_eq!(
        particles["entry_points"],
        serde_json::json!([{"name": "step", "stage": "compute", "workgroup_size": [64, 1, 1]}])
    );
    assert_eq!(particles["bindings"][0]["holds"], "storage read_write");
    // Another package's modules are not in the tree: built, not validated.
    let bevy = reflection(&run, "shaders/bevy_material.wesl");
    assert_eq!(bevy["validated"], false);
    assert_eq!(bevy["external"], serde_json::json!(["bevy_pbr"]));
    assert!(
        bevy["not_validated_because"]
            .as_str()
            .unwrap()
            .contains("imports `bevy_pbr`, which is not a crate this package depends on")
    );
    // `inspect` shows the reflection (the listing's form is in the CLI
    // output snapshots).
    let inspect = p.run(&["inspect", run.parcel("main").to_str().unwrap()]);
    assert!(inspect.success(), "{}", inspect.stderr);
    let listed = inspect
        .with_reason("resource")
        .find(|m| m["name"] == "shaders/water.wesl")
        .expect("water listed");
    assert_eq!(listed["reflection"], water);
    // The shader's own text is kept as written, imports and all.
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let water = assets_runtime::ResourceId::of("shaders/water.wesl");
    assert_eq!(parcel.get(water).unwrap().kind, "shader");
    assert_eq!(parcel.shader(water).unwrap(), WATER);

    // Who uses the noise library: the importer, found while building.
    let rdeps = p
        .command(["rdeps", "shaders/lib/noise.wesl"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(rdeps.stdout).unwrap(),
        "shaders/water.wesl uses the outputs of shaders/lib/noise.wesl\n"
    );

    // Editing the module rebuilds it and exactly its importer.
    p.file(
        "assets/shaders/lib/noise.wesl",
        NOISE.replace("0.25", "0.3"),
    );
    let run = p.build_ok();
    assert_eq!(
        run.processed(),
        ["shaders/lib/noise.wesl", "shaders/water.wesl"]
    );
    // The importer's own text is unchanged (imports are kept as written),
    // but a game composing it with the module must reload it: it is named.
    let written = (run.with_reason("parcel-written").next()).expect("the parcel is rewritten");
    let changed: Vec<&str> = (written["changed"].as_array().unwrap().iter())
        .map(|c| c.as_str().unwrap())
        .filter(|c| !c.contains("#"))
        .collect();
    assert_eq!(changed, ["shaders/lib/noise.wesl", "shaders/water.wesl"]);
    // Editing the quoted `#import` rebuilds the common module and both users.
    p.file(
        "assets/shaders/common.wgsl",
        COMMON.replace("3.14159265", "3.1415927"),
    );
    let mut processed = p.build_ok().processed();
    processed.sort();
    assert_eq!(
        processed,
        [
            "shaders/common.wgsl",
            "shaders/particles.wgsl",
            "shaders/water.wesl"
        ]
    );
}

#[test]
fn an_invalid_shader_fails_by_name_with_its_line_and_column_and_the_rest_builds() {
    let p = project();
    p.file("assets/shaders/broken.wgsl", BROKEN);
    let run = p.run(&["build"]);
    assert!(!run.success());
    let message = run.failure_message("shaders/broken.wgsl");
    assert!(
        message.starts_with("shaders/broken.wgsl:3:9: ")
            && message.contains("expected to be `f32`, but got `u32`"),
        "{message}"
    );
    let finished = run.build_finished();
    assert_eq!((finished.failed, finished.ran), (1, 6), "{}", run.stderr);

    // Through an import: the error is the importer's, at its own line.
    p.remove("assets/shaders/broken.wgsl");
    p.file(
        "assets/shaders/water.wesl",
        WATER.replace("fbm(uv * PI)", "fbm(PI)"),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/water.wesl");
    assert!(
        message.starts_with("shaders/water.wesl:11:13: ")
            && message.contains("Argument 0 value [1] doesn't match the type"),
        "{message}"
    );
}

#[test]
fn creating_a_module_an_import_looked_for_rebuilds_the_importer() {
    let p = project();
    p.file(
        "assets/shaders/water.wesl",
        WATER.replace(
            "import super::common::{Light, PI};",
            "import super::common::{Light, PI};\nimport super::waves::swell;",
        ),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/water.wesl");
    assert!(
        message.contains("shaders/water.wesl:3: `import super::waves::swell;`: module not found (looked for `shaders/waves/swell.wesl`, `shaders/waves/swell.wgsl`, `shaders/waves.wesl`, `shaders/waves.wgsl`)"),
        "{message}"
    );
    p.file(
        "assets/shaders/waves.wgsl",
        "fn swell(t: f32) -> f32 { return sin(t); }\n",
    );
    let run = p.build_ok();
    let mut processed = run.processed();
    processed.sort();
    assert_eq!(processed, ["shaders/water.wesl", "shaders/waves.wgsl"]);
    assert_eq!(reflection(&run, "shaders/water.wesl")["validated"], true);
}

/// A sprite shader a WebGL2 game can take: vertex and fragment stages, a
/// uniform, a texture and a sampler, no storage buffers.
const SPRITE: &str = "\
struct Camera {
    view_proj: mat4x4<f32>,
}

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(1) @binding(0) var page: texture_2d<f32>;
@group(1) @binding(1) var page_sampler: sampler;

@vertex
fn vs_main(@location(0) position: vec2<f32>, @location(1) uv: vec2<f32>) -> VertexOut {
    var out: VertexOut;
    out.position = camera.view_proj * vec4<f32>(position, 0.0, 1.0);
    out.uv = uv;
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    return textureSample(page, page_sampler, in.uv);
}
";

/// A project whose shaders are translated: the water shader (through its
/// imports, with a storage buffer) and the compute shader to every language
/// but GLSL ES (WebGL2 has neither storage buffers nor compute), the sprite
/// shader to all four.
fn translated() -> Project {
    let p = project();
    p.file("assets/shaders/sprite.wgsl", SPRITE).metadata(
        "[[package.metadata.assets.rules]]\n\
         match = \"shaders/sprite.wgsl\"\n\
         targets = [\"spirv\", \"msl\", \"glsl\", \"glsl-es\"]\n\n\
         [[package.metadata.assets.rules]]\n\
         match = \"shaders/{particles.wgsl,water.wesl}\"\n\
         targets = [\"spirv\", \"msl\", \"glsl\"]\n",
    );
    p
}

/// Runs `tool args... file` if the tool is installed (`tests/install-tools.sh`
/// installs it; CI runs that first), failing the test on its complaint.
fn khronos_check(tool: &str, args: &[&str], bytes: &[u8], file_name: &str) -> bool {
    if std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("{tool} is not installed (tests/install-tools.sh): skipping its check");
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name);
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new(tool)
        .args(args)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool} rejects {file_name}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn validated_shaders_are_translated_to_spirv_msl_and_glsl() {
    let p = translated();
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let get = |name: &str| {
        let r = parcel
            .get(assets_runtime::ResourceId::of(name))
            .unwrap_or_else(|| panic!("no resource `{name}`"));
        (r.kind.to_owned(), r.bytes().unwrap().into_owned())
    };
    let mut khronos = 0;
    for (shader, stage, entry) in [
        ("shaders/water.wesl", naga::ShaderStage::Fragment, "fs_main"),
        ("shaders/particles.wgsl", naga::ShaderStage::Compute, "step"),
    ] {
        // SPIR-V: words in little-endian order, read back by naga's own
        // SPIR-V front end (a different parser than the one that wrote
        // WGSL in), with the entry point intact.
        let (kind, spirv) = get(&format!("{shader}#spirv"));
        assert_eq!(kind, "bytes");
        assert_eq!(spirv[..4], 0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
        let module = naga::front::spv::parse_u8_slice(&spirv, &Default::default()).unwrap();
        let eps: Vec<_> = module
            .entry_points
            .iter()
            .map(|e| (e.stage, e.name.as_str()))
            .collect();
        assert_eq!(eps, [(stage, entry)], "{shader}");
        naga::valid::Validator::new(Default::default(), naga::valid::Capabilities::all())
            .validate(&module)
            .unwrap();
        if khronos_check("spirv-val", &[], &spirv, "shader.spv") {
            khronos += 1;
        }
        let (kind, msl) = get(&format!("{shader}#msl"));
        let msl = String::from_utf8(msl).unwrap();
        assert_eq!(kind, "text");
        let qualifier = if stage == naga::ShaderStage::Compute {
            "kernel"
        } else {
            "fragment"
        };
        assert!(msl.starts_with("// language: metal2.0"), "{msl}");
        assert!(
            msl.contains(&format!("{qualifier} void {entry}("))
                || msl.contains(&format!("{qualifier} {entry}Output {entry}(")),
            "{msl}"
        );
        let (_, glsl) = get(&format!("{shader}#glsl.{entry}"));
        let glsl = String::from_utf8(glsl).unwrap();
        assert!(glsl.starts_with("#version 450 core"), "{glsl}");
        let extension = if stage == naga::ShaderStage::Compute {
            "shader.comp"
        } else {
            "shader.frag"
        };
        if khronos_check("glslangValidator", &[], glsl.as_bytes(), extension) {
            khronos += 1;
        }
    }
    // The sprite shader: both stages, in each language.
    let (_, spirv) = get("shaders/sprite.wgsl#spirv");
    let module = naga::front::spv::parse_u8_slice(&spirv, &Default::default()).unwrap();
    assert_eq!(module.entry_points.len(), 2);
    for (entry, extension) in [("vs_main", "shader.vert"), ("fs_main", "shader.frag")] {
        for (language, version) in [
            ("glsl", "#version 450 core"),
            ("glsl-es", "#version 300 es"),
        ] {
            let (_, text) = get(&format!("shaders/sprite.wgsl#{language}.{entry}"));
            let text = String::from_utf8(text).unwrap();
            assert!(text.starts_with(version), "{text}");
            if khronos_check("glslangValidator", &[], text.as_bytes(), extension) {
                khronos += 1;
            }
        }
    }
    assert!(
        parcel
            .get(assets_runtime::ResourceId::of(
                "shaders/water.wesl#glsl-es.fs_main"
            ))
            .is_none(),
        "not asked for"
    );
    eprintln!("{khronos} outputs also checked by the Khronos validators");
}

#[test]
fn a_target_that_cannot_take_the_shader_fails_it_by_name_with_the_fix() {
    let p = translated();
    p.metadata(
        "[[package.metadata.assets.rules]]\n\
         match = \"shaders/particles.wgsl\"\n\
         targets = [\"glsl-es\"]\n",
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/particles.wgsl");
    assert!(
        message.contains("translating to glsl-es (entry point `step`)")
            && message.contains("remove `glsl-es` from this shader's `targets`"),
        "{message}"
    );
    // A capability the target's back end cannot write.
    p.metadata(
        "[[package.metadata.assets.rules]]\n\
         match = \"shaders/particles.wgsl\"\n\
         capabilities = [\"float64\"]\n\
         targets = [\"msl\"]\n",
    );
    let message = p.run(&["build"]).failure_message("shaders/particles.wgsl");
    assert!(
        message.contains("`targets` holds `msl`, which cannot use the capabilities float64"),
        "{message}"
    );
    p.metadata(
        "[[package.metadata.assets.rules]]\n\
         match = \"shaders/particles.wgsl\"\n\
         capabilities = [\"float-64\"]\n",
    );
    let message = p.run(&["build"]).failure_message("shaders/particles.wgsl");
    assert!(
        message.contains(
            "`capabilities` holds `float-64`, which naga does not know; known: immediates, float64,"
        ),
        "{message}"
    );
    // A shader that cannot be validated cannot be translated.
    p.metadata(
        "[[package.metadata.assets.rules]]\n\
         match = \"shaders/bevy_material.wesl\"\n\
         targets = [\"spirv\"]\n",
    );
    let message = p
        .run(&["build"])
        .failure_message("shaders/bevy_material.wesl");
    assert!(
        message.contains(
            "`targets` needs the shader validated, and it cannot be: it imports `bevy_pbr`"
        ),
        "{message}"
    );
}

/// A crate with shader modules as Bevy lays them out (`src/<path>.wesl`),
/// using `@if` groups, `package::` paths and another crate's module.
const KIT_LIGHTING: &str = "\
import package::types::Surface;
import kit_math::consts::TAU;

@if(FANCY) {
fn shade(s: Surface) -> vec4<f32> {
    return s.color * (0.5 + 0.5 * cos(TAU * s.roughness));
}
}
@else {
fn shade(s: Surface) -> vec4<f32> {
    return s.color;
}
}
";

const KIT_TYPES: &str = "\
import kit_math::consts::TAU;

struct Surface {
    color: vec4<f32>,
    roughness: f32,
}

fn tau_surface() -> Surface {
    return Surface(vec4<f32>(TAU), 1.0);
}
";

const MATH_CONSTS: &str = "const TAU: f32 = 6.2831853;\n";

/// A game's material: a crate's types, its function, a constant module.
const MATERIAL: &str = "\
import shader_kit::lighting::shade;
import shader_kit::types::{Surface, tau_surface};

@group(constants::MATERIAL_BIND_GROUP) @binding(0) var<uniform> tint: vec4<f32>;

@fragment
fn fragment(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    var s = tau_surface();
    s.color = tint * uv.x;
    @if(FANCY) {
    let lit = shade(s) * 2.0;
    }
    @else {
    let lit = shade(s);
    }
    return lit;
}
";

/// A game package depending on `shader_kit` (inside it, a path dependency)
/// which depends on `kit_math` (outside it, a sibling directory).
fn with_shader_crates(settings: &str) -> (Project, tempfile::TempDir) {
    let outside = tempfile::tempdir().unwrap();
    let math = outside.path().join("kit_math");
    std::fs::create_dir_all(math.join("src/consts")).unwrap();
    std::fs::write(
        math.join("Cargo.toml"),
        "[package]\nname = \"kit_math\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(math.join("src/lib.rs"), "").unwrap();
    std::fs::write(math.join("src/consts.wesl"), MATH_CONSTS).unwrap();
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(&format!(
        "[dependencies]\nshader_kit = {{ path = \"shader_kit\" }}\n\n\
         [package.metadata.assets]\n\
         [[package.metadata.assets.rules]]\nmatch = \"shaders/*.wesl\"\n{settings}\n"
    ))
    .file(
        "shader_kit/Cargo.toml",
        format!(
            "[package]\nname = \"shader_kit\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nkit_math = {{ path = {:?} }}\n",
            math.display().to_string()
        ),
    )
    .file("shader_kit/src/lib.rs", "")
    .file("shader_kit/src/lighting.wesl", KIT_LIGHTING)
    .file("shader_kit/src/types.wesl", KIT_TYPES)
    .file("assets/shaders/material.wesl", MATERIAL);
    (p, outside)
}

#[test]
fn a_shader_importing_crates_modules_is_composed_and_validated_and_their_edits_rerun_it() {
    let (p, _outside) =
        with_shader_crates("features = [\"FANCY\"]\nconstants = { MATERIAL_BIND_GROUP = 2 }");
    let run = p.build_ok();
    let material = reflection(&run, "shaders/material.wesl");
    assert_eq!(material["validated"], true, "{material}");
    assert_eq!(material["external"], serde_json::json!(["shader_kit"]));
    assert_eq!(material["bindings"][0]["group"], 2, "{material}");
    assert_eq!(material["bindings"][0]["name"], "tint");
    // The text in the parcel is the shader as written, imports and all.
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let id = assets_runtime::ResourceId::of("shaders/material.wesl");
    assert_eq!(parcel.shader(id).unwrap(), MATERIAL);
    assert!(p.build_ok().processed().is_empty());

    // A crate's module is an input: an edit inside the package reruns the
    // importer, and a type error there fails it naming that file and item.
    p.file(
        "shader_kit/src/lighting.wesl",
        KIT_LIGHTING.replace("return s.color * (", "return s.roughness * (1u + "),
    );
    let run = p.run(&["build"]);
    assert!(!run.success());
    let message = run.failure_message("shaders/material.wesl");
    assert!(
        message.contains("shader_kit/src/lighting.wesl:5: in `shade`"),
        "{message}"
    );
    p.file(
        "shader_kit/src/lighting.wesl",
        KIT_LIGHTING.replace("0.5 + 0.5", "0.25 + 0.75"),
    );
    assert_eq!(p.build_ok().processed(), ["shaders/material.wesl"]);
    assert!(p.build_ok().processed().is_empty());
    // A module of a crate outside the package (kit_math, a sibling
    // directory) is not an input: crates from a registry never change
    // under one release, and a new release changes the lockfile, which is.
    let lock = std::fs::read_to_string(p.path().join("Cargo.lock")).unwrap();
    p.file("Cargo.lock", format!("{lock}\n"));
    assert_eq!(p.build_ok().processed(), ["shaders/material.wesl"]);

    // An error in the shader's own code names the shader and its function.
    p.file(
        "assets/shaders/material.wesl",
        MATERIAL.replace("s.color = tint * uv.x;", "s.color = tint * 1u;"),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/material.wesl");
    assert!(
        message.starts_with("shaders/material.wesl:9: in `fragment` (`s.color = tint * 1u;`)"),
        "{message}"
    );
}

#[test]
fn features_decide_which_groups_are_linked_and_a_missing_crate_module_is_named() {
    // Without `FANCY`, the `@else` groups are linked; without `constants`
    // the virtual module is missing, and the error says where it comes from.
    let (p, _outside) = with_shader_crates("");
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/material.wesl");
    assert!(message.contains("`constants` module"), "{message}");
    p.file(
        "Cargo.toml",
        std::fs::read_to_string(p.path().join("Cargo.toml"))
            .unwrap()
            .replace(
                "match = \"shaders/*.wesl\"\n",
                "match = \"shaders/*.wesl\"\npreset = \"bevy-mesh2d\"\n",
            ),
    );
    let run = p.build_ok();
    let material = reflection(&run, "shaders/material.wesl");
    assert_eq!(material["validated"], true, "{material}");
    assert_eq!(
        material["bindings"][0]["group"], 2,
        "bevy-mesh2d's material group"
    );

    // An import of a crate module that does not exist names the files
    // looked for.
    p.file(
        "assets/shaders/material.wesl",
        MATERIAL.replace("shader_kit::lighting::shade", "shader_kit::lights::shade"),
    );
    let run = p.run(&["build"]);
    let message = run.failure_message("shaders/material.wesl");
    assert!(
        message.contains("crate `shader_kit` has no such module")
            && message.contains("shader_kit/src/lights.wesl"),
        "{message}"
    );
}
