//! `gltf`: a glTF 2.0 model (`.gltf` with its `.bin` buffers and textures,
//! or `.glb`) made into one self-contained GLB, so a game loads one
//! resource and finds everything in it. Default for `.gltf` and `.glb`
//! (cargo feature `gltf`, on by default).
//!
//! ```text
//! FlightHelmet.gltf ──┬─ buffers[0].uri = "FlightHelmet.bin"      ─┐
//!                     └─ images[3].uri  = "Leather%20Parts.png"  ─┤ read through the context
//!                                                                  ▼ (inputs; a missing one is recorded)
//!                     GLB: JSON chunk (buffers → one, images → bufferViews + mimeType)
//!                          BIN chunk  (the buffers, then each image's encoded bytes, 4-aligned)
//! ```
//!
//! - The document is validated with the `gltf` crate: indices in range,
//!   required fields present, accessor types sensible. `extensionsRequired`
//!   is set aside for that check only: the processor moves bytes and never
//!   needs to understand an extension (Draco, meshopt, KTX2 textures), so
//!   a model that requires one still builds, with the extension kept.
//! - Every buffer and image URI is a file relative to the model's folder
//!   (percent-encoded, as the spec says) or a `data:` URI. Files are read
//!   through the [`Context`], so editing a `.bin` or a texture reruns the
//!   model, and a file that is missing is an error naming the URI and is
//!   recorded: creating it reruns the step. Paths cannot leave the asset
//!   root; `http:` and other schemes are refused.
//! - Images are embedded in their original encoded bytes (PNG stays PNG),
//!   with `mimeType` from the data URI or the bytes' signature.
//! - The JSON is edited as plain JSON, so names, extras and extensions the
//!   processor does not know pass through unchanged. The output is
//!   deterministic: the same files give the same bytes.
//!
//! Output kind: `gltf` (a GLB file).

use std::borrow::Cow;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Context, ProcessError, Processor};
use crate::manifest::{Settings, SettingsError};

/// Packs a glTF model into one GLB.
#[derive(Debug, Clone, Copy)]
pub struct Gltf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GltfSettings {}

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

impl Processor for Gltf {
    fn name(&self) -> &str {
        "gltf"
    }

    fn version(&self) -> u32 {
        1
    }

    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError> {
        settings.get::<GltfSettings>().map(drop)
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let _: GltfSettings = ctx.settings()?;
        let source = ctx.source()?;
        let (json_bytes, glb_bin) = if source.starts_with(GLB_MAGIC) {
            let glb = gltf::binary::Glb::from_slice(&source)
                .map_err(|e| ProcessError::msg(format!("not a valid GLB file: {e}")))?;
            (glb.json.into_owned(), glb.bin.map(Cow::into_owned))
        } else {
            (source, None)
        };
        let mut doc: Value = serde_json::from_slice(&json_bytes)
            .map_err(|e| ProcessError::msg(format!("not valid glTF JSON: {e}")))?;
        validate(&doc)?;
        let folder = match ctx.asset().as_str().rsplit_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => String::new(),
        };
        let mut bin = Vec::new();
        // Buffers first, each at a 4-aligned offset: every accessor's
        // offset within its buffer keeps its alignment.
        let buffers = take_array(&mut doc, "buffers");
        let mut buffer_offsets = Vec::with_capacity(buffers.len());
        for (i, buffer) in buffers.iter().enumerate() {
            let declared = buffer["byteLength"].as_u64().unwrap_or(0) as usize;
            let data = match buffer.get("uri").and_then(Value::as_str) {
                Some(uri) => load_uri(ctx, &folder, uri, &format!("buffers[{i}]"))?.1,
                None if i == 0 => glb_bin.clone().ok_or_else(|| {
                    ProcessError::msg(
                        "buffers[0] has no `uri` and the file has no GLB binary chunk",
                    )
                })?,
                None => {
                    return Err(ProcessError::msg(format!(
                        "buffers[{i}] has no `uri`; only the first buffer of a GLB may omit it"
                    )));
                }
            };
            if data.len() < declared {
                return Err(ProcessError::msg(format!(
                    "buffers[{i}] declares {declared} bytes but has {}",
                    data.len()
                )));
            }
            pad_to_4(&mut bin, 0);
            buffer_offsets.push(bin.len());
            bin.extend_from_slice(&data[..declared]);
        }
        if let Some(views) = doc.get_mut("bufferViews").and_then(Value::as_array_mut) {
            for view in views {
                let buffer = view["buffer"].as_u64().unwrap_or(0) as usize;
                let offset = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0);
                view["buffer"] = json!(0);
                view["byteOffset"] = json!(offset + buffer_offsets[buffer] as u64);
            }
        }
        // Images with a URI become bufferViews of the one buffer.
        let mut images = take_array(&mut doc, "images");
        for (i, image) in images.iter_mut().enumerate() {
            let Some(uri) = image.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            let (declared_mime, data) = load_uri(ctx, &folder, &uri, &format!("images[{i}]"))?;
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
            pad_to_4(&mut bin, 0);
            let view = json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": data.len()});
            bin.extend_from_slice(&data);
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
        if !bin.is_empty() || !buffers.is_empty() {
            pad_to_4(&mut bin, 0);
            doc["buffers"] = json!([{"byteLength": bin.len()}]);
        }
        ctx.emit("gltf", glb(&doc, &bin))
    }
}

/// Checks `doc` with the `gltf` crate, `extensionsRequired` set aside (see
/// the module docs). The error names the JSON path that is wrong.
fn validate(doc: &Value) -> Result<(), ProcessError> {
    let mut checked = doc.clone();
    let Some(object) = checked.as_object_mut() else {
        return Err(ProcessError::msg(
            "not a glTF document: the JSON is not an object",
        ));
    };
    object.remove("extensionsRequired");
    let root: gltf::json::Root = serde_json::from_value(checked)
        .map_err(|e| ProcessError::msg(format!("not a valid glTF 2.0 document: {e}")))?;
    gltf::Document::from_json(root)
        .map(drop)
        .map_err(|e| ProcessError::msg(format!("invalid glTF: {e}")))
}

/// The bytes a buffer or image URI names, and the media type of a `data:`
/// URI. `what` is its place in the document, for errors.
fn load_uri(
    ctx: &mut Context<'_>,
    folder: &str,
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
            percent_decode(payload).map_err(|e| ProcessError::msg(format!("{what}: {e}")))?
        };
        return Ok(((!mime.is_empty()).then(|| mime.to_owned()), bytes));
    }
    if let Some((scheme, _)) = uri.split_once(':')
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err(ProcessError::msg(format!(
            "{what}: `{uri}` is a `{scheme}:` URI; only files beside the model and `data:` URIs can be packed"
        )));
    }
    let relative = percent_decode(uri)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| ProcessError::msg(format!("{what}: `{uri}` is not a valid URI")))?;
    let path = format!("{folder}{relative}");
    match ctx.try_read(&path) {
        Ok(Some(bytes)) => Ok((None, bytes)),
        Ok(None) => Err(ProcessError::msg(format!(
            "{what} refers to `{uri}`, and `{path}` does not exist; add the file or fix the URI"
        ))),
        Err(ProcessError::BadPath(e)) => Err(ProcessError::msg(format!(
            "{what}: `{uri}` is not a path inside the asset root ({e})"
        ))),
        Err(e) => Err(e),
    }
}

/// `%20` → space, as URIs in glTF files are written.
fn percent_decode(s: &str) -> Result<Vec<u8>, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape in `{s}`"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
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
    fn percent_escapes_and_signatures() {
        assert_eq!(
            percent_decode("Base%20Color.png").unwrap(),
            b"Base Color.png"
        );
        assert!(percent_decode("bad%2").is_err());
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
}
