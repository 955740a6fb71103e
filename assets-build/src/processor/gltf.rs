//! `gltf`: a glTF 2.0 model (`.gltf` with its `.bin` buffers and textures,
//! or `.glb`) made into one GLB that names, by their URIs, the files that
//! are assets of their own, and holds the rest. Default for `.gltf` and
//! `.glb` (cargo feature `gltf`, on by default).
//!
//! ```text
//! FlightHelmet.gltf ──┬─ buffers[0].uri = "FlightHelmet.bin"     ─┬─ an asset of its own: a reference, the URI kept
//!                     └─ images[3].uri  = "Leather%20Parts.png" ─┘  (`embed = true`, a hidden file: read, into BIN)
//!                     GLB: JSON chunk (held buffers → buffer 0; held images → bufferViews + mimeType)
//!                          BIN chunk  (a GLB's own chunk and held buffers, then held images, 4-aligned)
//! ```
//!
//! - The document is validated with the `gltf` crate: indices in range,
//!   required fields present, accessor types sensible. `extensionsRequired`
//!   is set aside for that check only: the processor moves bytes and never
//!   needs to understand an extension (Draco, meshopt, KTX2 textures), so
//!   a model that requires one still builds, with the extension kept.
//! - Where glTF 2.0 allows what the crate's types or check refuse, the
//!   check is told so: an accessor without a buffer view (zeros), a
//!   primitive without `POSITION`, a scene without `nodes`, an animation
//!   channel without `target.node` (`KHR_animation_pointer`). Bytes past a
//!   GLB's declared length are left out, with a warning. Measured on the
//!   Khronos validator's own test files: the models it finds no error in
//!   and this refused went from 35 to 7, with meshopt's placeholders below
//!   (BENCHMARKS.md, "glTF: the Khronos validator's test suite").
//! - `EXT_meshopt_compression` (gltfpack, glTF-Transform): a compressed
//!   view names the buffer its data is in, in the extension, and a
//!   fallback buffer that may have no data (no `uri`). The extension's
//!   buffer is moved as the view's is; a buffer with no data is kept as a
//!   placeholder after the others (with a warning unless the extension
//!   marks it `fallback`).
//! - Every buffer and image URI is a file relative to the model's folder
//!   (percent-encoded, as the spec says; resolved by
//!   [`assets_runtime::uri::resolve`], as a game resolves it) or a `data:`
//!   URI. Files are read through the [`Context`], so editing a `.bin`
//!   reruns the model, and a file that is missing is an error naming the
//!   URI and is recorded: creating it reruns the step. Paths cannot leave
//!   the asset root; `http:` and other schemes are refused.
//! - A file that is an asset of its own is stored once, as that asset, as
//!   engines import a model's textures: a texture decoded and compressed
//!   by its own rule, a `.bin` as its bytes. The model keeps its URI, the
//!   step records a reference ([`Context::reference`]), and every parcel
//!   holding the model holds the file's resource; a game finds it with
//!   `Parcel::by_uri`. The model does not wait for its textures to build,
//!   nor rerun when they change: its GLB does not depend on them. Held inside the model too, a real tree's textures
//!   and buffers were in its parcel twice. A buffer is held when its
//!   asset's output is not its bytes (a rule other than `copy`) or is
//!   shorter than declared. `embed = true` holds every file, for a game
//!   that wants the model alone. Held images (and `data:` ones) keep
//!   their original encoded bytes (PNG stays PNG), with `mimeType` from
//!   the data URI or the bytes' signature.
//! - A texture may take its image from an extension instead of `source`
//!   (glTF 2.0 makes `source` optional for that): `EXT_texture_webp`,
//!   `KHR_texture_basisu` (KTX2), `MSFT_texture_dds`, `EXT_texture_avif`,
//!   with or without a fallback `source`, as Blender, Godot and
//!   glTF-Transform write them. The image such an extension names must
//!   exist; it is then followed like any other (a reference, or held).
//!   The `gltf` crate knows none of these and requires `source`, so its
//!   check sees the extension's image in its place. A texture whose image
//!   comes from an extension not on that list, or that has no image at all,
//!   passes through untouched with a warning, never a failed model.
//! - The JSON is edited as plain JSON, so names, extras and extensions the
//!   processor does not know pass through unchanged. The output is
//!   deterministic: the same files give the same bytes.
//!
//! Output kind: `gltf` (a GLB file).

use std::borrow::Cow;

use assets_runtime::format::KIND_BYTES;
use assets_runtime::uri::{self, UriError};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Context, ProcessError, Processor};
use crate::asset_path::AssetPath;

/// Packs a glTF model into one GLB.
#[derive(Debug, Clone, Copy)]
pub struct Gltf;

/// Settings of the `gltf` processor (its module docs list the keys).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GltfSettings {
    /// Every file the model names goes into the GLB, also those that are
    /// assets of their own.
    #[serde(default)]
    embed: bool,
}

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

impl Processor for Gltf {
    type Settings = GltfSettings;

    fn name(&self) -> &str {
        "gltf"
    }

    fn version(&self) -> u32 {
        // 3: `EXT_meshopt_compression` views keep naming their data's
        // buffer, and its fallback placeholders are kept.
        3
    }

    fn process(&self, ctx: &mut Context<'_>, settings: GltfSettings) -> Result<(), ProcessError> {
        let source = ctx.source()?;
        let Checked {
            mut doc,
            glb_bin,
            warnings,
        } = read(source)?;
        for warning in warnings {
            ctx.warn(warning);
        }
        // A loader without these cannot load the model at all: worth saying,
        // though packing moves their bytes without needing to know them.
        let required: Vec<&str> = (doc["extensionsRequired"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        if !required.is_empty() {
            ctx.warn(format!(
                "requires the glTF extensions {}, passed through untouched: the game's glTF loader must support them",
                required.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        let mut packed = Packed::default();
        packed.buffers(ctx, &mut doc, settings.embed, glb_bin)?;
        packed.images(ctx, &mut doc, settings.embed)?;
        let bin = packed.finish(&mut doc)?;
        ctx.emit(assets_runtime::format::KIND_GLTF, glb(&doc, &bin))
    }
}

/// The GLB being packed: its BIN chunk, and where each of the source's
/// buffers went.
#[derive(Default)]
struct Packed {
    /// The held buffers, then the held images, each 4-aligned (so every
    /// accessor's offset within its buffer keeps its alignment).
    bin: Vec<u8>,
    /// Per source buffer, where it went.
    placed: Vec<Placed>,
    /// The buffers that name assets of their own, in order.
    kept: Vec<Value>,
    /// The buffers with no data ([`Placed::Placeholder`]), in order.
    placeholders: Vec<Value>,
    /// Whether an image went into the BIN chunk.
    held_images: bool,
    /// How many buffer views the source had (held images add theirs).
    source_views: usize,
}

/// Where a source buffer went.
#[derive(Clone, Copy)]
enum Placed {
    /// Into the BIN chunk, at this offset.
    Bin(usize),
    /// Kept, naming an asset of its own: the n-th kept buffer.
    Kept(usize),
    /// A buffer with no data anywhere, kept as one (no `uri`) after the
    /// others: the n-th. `EXT_meshopt_compression` writes these as the
    /// fallback of compressed views (gltfpack, glTF-Transform), which a
    /// loader that knows the extension never reads.
    Placeholder(usize),
}

impl Packed {
    /// Takes `doc`'s buffers: each one kept when it names an asset whose
    /// resource is its bytes, else read into the BIN chunk (a GLB's own
    /// chunk, `glb_bin`, included).
    fn buffers(
        &mut self,
        ctx: &mut Context<'_>,
        doc: &mut Value,
        embed: bool,
        mut glb_bin: Option<Vec<u8>>,
    ) -> Result<(), ProcessError> {
        let buffers = take_array(doc, "buffers");
        for (i, buffer) in buffers.into_iter().enumerate() {
            let what = format!("buffers[{i}]");
            let declared = buffer["byteLength"].as_u64().unwrap_or(0);
            let uri = buffer.get("uri").and_then(Value::as_str);
            if let Some(uri) = uri
                && let Some(path) = asset_named(ctx, embed, uri, &what)?
            {
                // Its resource must be the file's bytes, long enough: what
                // a `copy` rule makes. Used, so a change reruns this check.
                let outputs = ctx.dependency(path.as_str())?;
                let main = outputs.outputs().iter().find(|o| o.label.is_empty());
                if main.is_some_and(|o| o.kind == KIND_BYTES && o.size >= declared) {
                    ctx.reference(&path)?;
                    self.placed.push(Placed::Kept(self.kept.len()));
                    self.kept.push(buffer);
                    continue;
                }
            }
            let data = match uri {
                Some(uri) => load_uri(ctx, uri, &what)?.1,
                None if i == 0 => glb_bin.take().ok_or_else(|| {
                    ProcessError::msg(
                        "buffers[0] has no `uri` and the file has no GLB binary chunk",
                    )
                })?,
                None => {
                    let fallback = &buffer["extensions"]["EXT_meshopt_compression"]["fallback"];
                    if *fallback != json!(true) {
                        ctx.warn(format!(
                            "buffers[{i}] has no `uri` (only a GLB's first buffer may omit it): \
                             kept with no data, as a placeholder that nothing may read"
                        ));
                    }
                    self.placed.push(Placed::Placeholder(self.placeholders.len()));
                    self.placeholders.push(buffer);
                    continue;
                }
            };
            let declared = declared as usize;
            if data.len() < declared {
                return Err(ProcessError::msg(format!(
                    "buffers[{i}] declares {declared} bytes but has {}",
                    data.len()
                )));
            }
            pad_to_4(&mut self.bin, 0);
            self.placed.push(Placed::Bin(self.bin.len()));
            self.bin.extend_from_slice(&data[..declared]);
        }
        Ok(())
    }

    /// Takes `doc`'s images with a URI: each one a reference when it names
    /// an asset of its own, else read into the BIN chunk, with a view.
    fn images(
        &mut self,
        ctx: &mut Context<'_>,
        doc: &mut Value,
        embed: bool,
    ) -> Result<(), ProcessError> {
        let views = doc.get("bufferViews").and_then(Value::as_array);
        self.source_views = views.map_or(0, Vec::len);
        let mut images = take_array(doc, "images");
        for (i, image) in images.iter_mut().enumerate() {
            let Some(uri) = image.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            let what = format!("images[{i}]");
            // Any resource will do (an image, a sprite, a texture, bytes):
            // the game reads it by its kind.
            if let Some(path) = asset_named(ctx, embed, &uri, &what)? {
                ctx.reference(&path)?;
                continue;
            }
            let (declared_mime, data) = load_uri(ctx, &uri, &what)?;
            let mime = image
                .get("mimeType")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or(declared_mime.filter(|m| m.starts_with("image/")))
                .or_else(|| sniff_mime(&data).map(str::to_owned))
                .ok_or_else(|| {
                    ProcessError::msg(format!(
                        "images[{i}] (`{uri}`) is not PNG, JPEG, KTX2, WebP or DDS, and has no `mimeType`"
                    ))
                })?;
            pad_to_4(&mut self.bin, 0);
            let view = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": data.len()});
            self.bin.extend_from_slice(&data);
            self.held_images = true;
            let views = doc
                .as_object_mut()
                .expect("validated as an object")
                .entry("bufferViews")
                .or_insert_with(|| json!([]));
            let views = views.as_array_mut().expect("bufferViews is an array");
            views.push(view);
            let object = image.as_object_mut().expect("validated as an object");
            object.remove("uri");
            object.insert("bufferView".into(), json!(views.len() - 1));
            object.insert("mimeType".into(), json!(mime));
        }
        if !images.is_empty() {
            doc["images"] = Value::Array(images);
        }
        Ok(())
    }

    /// Writes `doc`'s buffers (the BIN chunk first, as a GLB's must be,
    /// then the kept ones) and points the source's views at them; the BIN
    /// chunk's bytes.
    fn finish(mut self, doc: &mut Value) -> Result<Vec<u8>, ProcessError> {
        let has_bin = self.held_images || self.placed.iter().any(|p| matches!(p, Placed::Bin(_)));
        let first_kept = usize::from(has_bin);
        let first_placeholder = first_kept + self.kept.len();
        if first_placeholder == 0 && !self.placeholders.is_empty() {
            // The first buffer of a GLB without a `uri` is its BIN chunk.
            return Err(ProcessError::msg(
                "the model's buffers have no `uri` and it has no GLB binary chunk: no data at all",
            ));
        }
        // Where a view's buffer went: its new index, and where in the BIN
        // chunk it starts when it went there.
        let moved = |buffer: usize| match *self.placed.get(buffer).expect("validated: views name buffers") {
            Placed::Bin(at) => (0, Some(at as u64)),
            Placed::Kept(k) => (first_kept + k, None),
            Placed::Placeholder(n) => (first_placeholder + n, None),
        };
        // Points a view (or its compressed data) at where its buffer went.
        let point = |at: &mut serde_json::Map<String, Value>, (buffer, start): (usize, Option<u64>)| {
            at.insert("buffer".into(), json!(buffer));
            if let Some(start) = start {
                let offset = at.get("byteOffset").and_then(Value::as_u64);
                at.insert("byteOffset".into(), json!(offset.unwrap_or(0) + start));
            }
        };
        if let Some(views) = doc.get_mut("bufferViews").and_then(Value::as_array_mut) {
            for view in views.iter_mut().take(self.source_views) {
                let view = view.as_object_mut().expect("validated: views are objects");
                let buffer = view.get("buffer").and_then(Value::as_u64).unwrap_or(0);
                point(view, moved(buffer as usize));
                // A compressed view's data is in a buffer of its own.
                let meshopt = view.get_mut("extensions").and_then(|e| e.get_mut("EXT_meshopt_compression"));
                if let Some(meshopt) = meshopt.and_then(Value::as_object_mut) {
                    let source = meshopt.get("buffer").and_then(Value::as_u64);
                    let source = source.filter(|&b| (b as usize) < self.placed.len());
                    let Some(source) = source else {
                        return Err(ProcessError::msg(
                            "a buffer view's EXT_meshopt_compression.buffer names no buffer of the model",
                        ));
                    };
                    point(meshopt, moved(source as usize));
                }
            }
        }
        if has_bin || !self.kept.is_empty() {
            pad_to_4(&mut self.bin, 0);
            let chunk = has_bin.then(|| json!({"byteLength": self.bin.len()}));
            let buffers = chunk.into_iter().chain(self.kept).chain(self.placeholders);
            doc["buffers"] = Value::Array(buffers.collect());
        }
        Ok(self.bin)
    }
}

/// A glTF or GLB file, read and checked.
#[derive(Debug)]
pub(crate) struct Checked {
    /// The document (see [`validate`]).
    pub doc: Value,
    /// The GLB's binary chunk, if any.
    pub glb_bin: Option<Vec<u8>>,
    /// What the check warns of.
    pub warnings: Vec<String>,
}

/// Reads and checks a glTF or GLB file: all that reads the untrusted bytes
/// before the model's references are followed.
pub(crate) fn read(mut source: Vec<u8>) -> Result<Checked, ProcessError> {
    let mut warnings = Vec::new();
    // Bytes past the length a GLB's header declares are not the model's
    // (the Khronos validator warns of them; the `gltf` crate fails).
    let declared = source.get(8..12).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    if let Some(declared) = declared.filter(|&d| source.starts_with(GLB_MAGIC) && (12..source.len()).contains(&d)) {
        let extra = source.len() - declared;
        let bytes = if extra == 1 { "byte" } else { "bytes" };
        warnings.push(format!(
            "{extra} {bytes} past the GLB's declared length ({declared}) left out: not part of the model"
        ));
        source.truncate(declared);
    }
    let (json_bytes, glb_bin) = if source.starts_with(GLB_MAGIC) {
        let glb = gltf::binary::Glb::from_slice(&source)
            .map_err(|e| ProcessError::msg(format!("not a valid GLB file: {e}")))?;
        (glb.json.into_owned(), glb.bin.map(Cow::into_owned))
    } else {
        (source, None)
    };
    let doc: Value = serde_json::from_slice(&json_bytes)
        .map_err(|e| ProcessError::msg(format!("not valid glTF JSON: {e}")))?;
    warnings.extend(validate(&doc)?);
    Ok(Checked {
        doc,
        glb_bin,
        warnings,
    })
}

/// Checks `doc` with the `gltf` crate, `extensionsRequired` set aside (see
/// the module docs). The error names the JSON path that is wrong; the
/// warnings, textures that pack though a user should know of them: one
/// whose image comes from an extension this processor does not know, or
/// one with no image at all.
fn validate(doc: &Value) -> Result<Vec<String>, ProcessError> {
    let mut warnings = Vec::new();
    let mut checked = doc.clone();
    let Some(object) = checked.as_object_mut() else {
        return Err(ProcessError::msg(
            "not a glTF document: the JSON is not an object",
        ));
    };
    object.remove("extensionsRequired");
    let images = object
        .get("images")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if let Some(textures) = object.get_mut("textures").and_then(Value::as_array_mut) {
        for (i, texture) in textures.iter_mut().enumerate() {
            let from_extensions = texture_extension_sources(texture, i, images)?;
            let unknown: Vec<String> = (from_extensions.iter())
                .filter(|(name, _)| !known_texture_extension(name))
                .map(|(name, _)| format!("`{name}`"))
                .collect();
            if !unknown.is_empty() {
                warnings.push(format!(
                    "textures[{i}] takes its image from {}, which cargo-assets does not know: passed through untouched, its image packed as any other",
                    unknown.join(", ")
                ));
            } else if texture.get("source").is_none() && from_extensions.is_empty() {
                warnings.push(format!(
                    "textures[{i}] has no image: no `source`, and no extension that gives one"
                ));
            }
            // What the `gltf` crate requires, for its check only: the
            // extension's image, or any, when the texture has no `source`.
            if let Some(texture) = texture.as_object_mut()
                && !texture.contains_key("source")
            {
                let stand_in = from_extensions.first().map_or(0, |(_, s)| *s);
                texture.insert("source".into(), json!(stand_in));
            }
        }
        if images == 0 && !textures.is_empty() {
            object.insert("images".into(), json!([{"uri": "data:,"}]));
        }
    }
    // What glTF 2.0 makes optional and the crate's types require: a
    // scene's `nodes`, and a channel's `target.node` (a channel without
    // one is ignored, or animates what `KHR_animation_pointer` names).
    for scene in array_mut(object, "scenes") {
        if let Some(scene) = scene.as_object_mut() {
            scene.entry("nodes").or_insert_with(|| json!([]));
        }
    }
    for animation in array_mut(object, "animations") {
        if let Some(channels) = animation.get_mut("channels").and_then(Value::as_array_mut) {
            channels.retain(|c| c.get("target").is_none_or(|t| t.get("node").is_some()));
        }
    }
    let root: gltf::json::Root = serde_json::from_value(checked)
        .map_err(|e| ProcessError::msg(format!("not a valid glTF 2.0 document: {e}")))?;
    check_position_accessors(&root)?;
    let mut errors = Vec::new();
    gltf::json::validation::Validate::validate(&root, &root, gltf::json::Path::new, &mut |path, error| {
        let path = path();
        if !allowed_by_the_spec(path.as_str(), &error) {
            errors.push(format!("{path}: {error};"));
        }
    });
    if !errors.is_empty() {
        return Err(ProcessError::msg(format!("invalid glTF: {}", errors.join(" "))));
    }
    Ok(warnings)
}

/// The array at `key` of `object`, each element; none when it is not one.
fn array_mut<'a>(
    object: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Value> {
    (object.get_mut(key).and_then(Value::as_array_mut).into_iter()).flatten()
}

/// What the `gltf` crate's check reports and glTF 2.0 allows (the Khronos
/// validator finds no error in either): an accessor without a buffer view,
/// whose values are zeros (or its sparse values over zeros), and a
/// primitive without `POSITION`, which is not drawn.
fn allowed_by_the_spec(path: &str, error: &gltf::json::validation::Error) -> bool {
    let missing = matches!(error, gltf::json::validation::Error::Missing);
    let accessor_view = path
        .strip_prefix("accessors[")
        .and_then(|rest| rest.strip_suffix("].bufferView"))
        .is_some_and(|index| index.bytes().all(|b| b.is_ascii_digit()));
    let no_position = path.starts_with("meshes[") && path.ends_with(".attributes[\"POSITION\"]");
    missing && (accessor_view || no_position)
}

/// Extensions that give a texture its image (WebP, KTX2, DDS, AVIF) in
/// place of `source`.
const TEXTURE_EXTENSIONS: &[&str] = &[
    "EXT_texture_webp",
    "KHR_texture_basisu",
    "MSFT_texture_dds",
    "EXT_texture_avif",
];

fn known_texture_extension(name: &str) -> bool {
    TEXTURE_EXTENSIONS.contains(&name)
}

/// The images `texture` (the `i`-th) takes from its extensions, by
/// extension name, known ones first; an index past the model's `images`
/// is an error naming its path.
fn texture_extension_sources(
    texture: &Value,
    i: usize,
    images: usize,
) -> Result<Vec<(String, u64)>, ProcessError> {
    let mut found = Vec::new();
    let Some(extensions) = texture.get("extensions").and_then(Value::as_object) else {
        return Ok(found);
    };
    for (name, extension) in extensions {
        let Some(source) = extension.get("source") else {
            continue;
        };
        let index = source.as_u64().filter(|&s| (s as usize) < images);
        let Some(index) = index else {
            return Err(ProcessError::msg(format!(
                "invalid glTF: textures[{i}].extensions.{name}.source: image {source} does not exist (the model has {images})"
            )));
        };
        found.push((name.clone(), index));
    }
    found.sort_by_key(|(name, _)| !known_texture_extension(name));
    Ok(found)
}

/// Every primitive's `POSITION` names an accessor the model has. The
/// `gltf` crate's validation reads that accessor (for its `min` and `max`)
/// before it checks the index, and panics on one out of range: found by the
/// `gltf` fuzz target, four bytes away from a valid model.
fn check_position_accessors(root: &gltf::json::Root) -> Result<(), ProcessError> {
    let position = gltf::json::validation::Checked::Valid(gltf::Semantic::Positions);
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            if let Some(index) = primitive.attributes.get(&position)
                && index.value() >= root.accessors.len()
            {
                return Err(ProcessError::msg(format!(
                    "invalid glTF: meshes[{m}].primitives[{p}].attributes.POSITION: accessor {} does not exist (the model has {})",
                    index.value(),
                    root.accessors.len()
                )));
            }
        }
    }
    Ok(())
}

/// The bytes a buffer or image URI names, and the media type of a `data:`
/// URI. `what` is its place in the document, for errors.
fn load_uri(
    ctx: &mut Context<'_>,
    uri: &str,
    what: &str,
) -> Result<(Option<String>, Vec<u8>), ProcessError> {
    if let Some(data) = uri.strip_prefix("data:") {
        let (header, payload) = data
            .split_once(',')
            .ok_or_else(|| ProcessError::msg(format!("{what}: malformed data URI (no `,`)")))?;
        let (mime, base64) = match header.strip_suffix(";base64") {
            Some(mime) => (mime, true),
            None => (header, false),
        };
        let bytes = if base64 {
            base64::engine::general_purpose::STANDARD
                .decode(payload)
                .map_err(|e| ProcessError::msg(format!("{what}: bad base64 in data URI: {e}")))?
        } else {
            uri::percent_decode(payload)
                .map_err(|e| ProcessError::msg(format!("{what}: data URI: {e}")))?
        };
        return Ok(((!mime.is_empty()).then(|| mime.to_owned()), bytes));
    }
    let path = file_of(ctx.asset(), uri, what)?;
    match ctx.try_read(path.as_str())? {
        Some(bytes) => Ok((None, bytes)),
        None => Err(ProcessError::msg(format!(
            "{what} refers to `{uri}`, and `{path}` does not exist; add the file or fix the URI"
        ))),
    }
}

/// The asset that the file URI `uri` names, when the model may refer to
/// it instead of holding its bytes: `embed` is off and the file is an asset
/// of its own. Nothing is recorded yet.
fn asset_named(
    ctx: &mut Context<'_>,
    embed: bool,
    uri: &str,
    what: &str,
) -> Result<Option<AssetPath>, ProcessError> {
    if embed || uri::scheme(uri).is_some() {
        return Ok(None);
    }
    let path = file_of(ctx.asset(), uri, what)?;
    Ok((ctx.exists(&path) && ctx.is_asset(&path)).then_some(path))
}

/// The asset that a file URI in `model` names, as a game resolves it.
fn file_of(model: &AssetPath, uri: &str, what: &str) -> Result<AssetPath, ProcessError> {
    let outside = |e: &dyn std::fmt::Display| {
        ProcessError::msg(format!(
            "{what}: `{uri}` is not a path inside the asset root ({e})"
        ))
    };
    let name = uri::resolve(model.as_str(), uri).map_err(|e| match e {
        UriError::Scheme(scheme) => ProcessError::msg(format!(
            "{what}: `{uri}` is a `{scheme}:` URI; only files beside the model and `data:` URIs can be packed"
        )),
        UriError::BadEscape => ProcessError::msg(format!("{what}: `{uri}` is not a valid URI")),
        e => outside(&e),
    })?;
    AssetPath::new(&name).map_err(|e| outside(&e))
}

/// The media type of encoded image bytes, by their signature.
fn sniff_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"\xABKTX 20\xBB\r\n\x1a\n") {
        Some("image/ktx2")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"DDS ") {
        Some("image/vnd-ms.dds")
    } else {
        None
    }
}

fn take_array(doc: &mut Value, key: &str) -> Vec<Value> {
    match doc.get_mut(key).map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

fn pad_to_4(bytes: &mut Vec<u8>, with: u8) {
    bytes.resize(bytes.len().next_multiple_of(4), with);
}

/// A GLB file: header, JSON chunk (space-padded), BIN chunk if any.
fn glb(doc: &Value, bin: &[u8]) -> Vec<u8> {
    let mut json = serde_json::to_vec(doc).expect("JSON values serialize");
    pad_to_4(&mut json, b' ');
    let bin_len = if bin.is_empty() { 0 } else { 8 + bin.len() };
    let total = 12 + 8 + json.len() + bin_len;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&json);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert_eq!(sniff_mime(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff_mime(b"RIFF....WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_mime(b"GIF89a"), None);
    }

    #[test]
    fn a_glb_is_laid_out_as_the_spec_draws_it() {
        let out = glb(&json!({"asset": {"version": "2.0"}}), &[1, 2, 3, 4]);
        assert_eq!(&out[..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(out[8..12].try_into().unwrap()) as usize,
            out.len()
        );
        let json_len = u32::from_le_bytes(out[12..16].try_into().unwrap()) as usize;
        assert_eq!(json_len % 4, 0);
        let parsed = gltf::binary::Glb::from_slice(&out).unwrap();
        assert_eq!(parsed.bin.as_deref(), Some(&[1u8, 2, 3, 4][..]));
    }

    /// What glTF 2.0 allows and the `gltf` crate's types or check refuse,
    /// each from a file of the Khronos validator's own suite that it finds
    /// no error in: read, the document unchanged. What the spec forbids
    /// beside them still fails.
    #[test]
    fn models_the_spec_allows_and_the_crate_refuses_are_read() {
        let model = |extra: Value| {
            let mut doc = json!({
                "asset": {"version": "2.0"},
                "buffers": [{"byteLength": 12, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAA"}],
                "bufferViews": [{"buffer": 0, "byteLength": 12}],
                "nodes": [{}],
            });
            for (key, value) in extra.as_object().unwrap() {
                doc[key] = value.clone();
            }
            doc
        };
        let read_doc = |doc: &Value| read(serde_json::to_vec(doc).unwrap());
        // accessor/valid.gltf: no bufferView, so zeros (sparse, or not).
        let zeros = model(json!({"accessors": [
            {"componentType": 5126, "count": 2, "type": "SCALAR"},
            {"componentType": 5126, "count": 3, "type": "VEC3", "bufferView": 0},
        ]}));
        // mesh/primitive_no_position.gltf: a primitive not drawn.
        let no_position = model(json!({
            "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "bufferView": 0}],
            "meshes": [{"primitives": [{"attributes": {"NORMAL": 0}}]}],
        }));
        // root/named_objects.gltf, KHR_animation_pointer: a channel
        // without `target.node`; scene/custom_property.gltf: no `nodes`.
        let pointer = model(json!({
            "accessors": [
                {"componentType": 5126, "count": 1, "type": "SCALAR", "bufferView": 0, "min": [0], "max": [0]},
                {"componentType": 5126, "count": 1, "type": "SCALAR", "bufferView": 0, "byteOffset": 4},
            ],
            "animations": [{
                "channels": [{"sampler": 0, "target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": "/materials/0/alphaCutoff"}}}}],
                "samplers": [{"input": 0, "output": 1}],
            }],
            "scenes": [{"name": "empty"}],
        }));
        for doc in [zeros, no_position, pointer] {
            let checked = read_doc(&doc).unwrap_or_else(|e| panic!("{e}: {doc}"));
            assert_eq!(checked.doc, doc, "the document is kept as it is");
            assert!(checked.warnings.is_empty(), "{:?}", checked.warnings);
        }
        // Still refused: a buffer view that does not exist, a missing type.
        let broken = model(json!({"accessors": [{"componentType": 5126, "count": 2, "type": "SCALAR", "bufferView": 3}]}));
        let err = read_doc(&broken).unwrap_err().to_string();
        assert!(err.contains("accessors[0].bufferView: Index out of bounds"), "{err}");
        let untyped = model(json!({"accessors": [{"componentType": 5126, "count": 2}]}));
        assert!(read_doc(&untyped).is_err());

        // glb/extra_data.glb: a byte past the declared length, left out.
        let mut file = glb(&json!({"asset": {"version": "2.0"}}), &[]);
        file.push(0);
        let checked = read(file).unwrap();
        assert_eq!(checked.warnings.len(), 1);
        assert!(checked.warnings[0].starts_with("1 byte past the GLB's declared length (48) left out"));
    }

    #[test]
    fn a_position_accessor_out_of_range_is_an_error_not_a_panic() {
        // What the fuzz target found: the `gltf` crate's validation indexed
        // the accessors with it unchecked.
        let found = include_bytes!("../../tests/fixtures/gltf-position-accessor-out-of-range.gltf");
        let err = read(found.to_vec()).unwrap_err().to_string();
        assert!(
            err.contains("meshes[0].primitives[0].attributes.POSITION: accessor 0 does not exist (the model has 0)"),
            "{err}"
        );
    }
}
