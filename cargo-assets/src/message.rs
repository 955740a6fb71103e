//! The machine-readable messages of `--message-format json`: one JSON object
//! per line on stdout, its `reason` naming what it is, as with cargo's own
//! `--message-format json`.
//!
//! Every message is a variant of [`Message`], built by the commands and
//! printed by `Shell::message`; the tests
//! read stdout back into the same type, so a field renamed here is renamed
//! for both, and a message that stops matching its type fails every test
//! that sees it. Reasons are kebab-case, fields snake_case; keys are printed
//! sorted (through `serde_json::Value`), so the order of fields here does not
//! change a byte of output.
//!
//! This is a stable interface for scripts and editors: fields may be added,
//! never renamed or removed without a new reason.

use std::collections::BTreeMap;
use std::path::PathBuf;

use assets_build::unstable::query::Use;
use assets_build::{AssetPath, Location, unstable::DirtyReason};
use serde::{Deserialize, Serialize};

/// One line of `--message-format json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Message {
    /// A step reused from the cache.
    AssetFresh {
        /// The asset.
        asset: AssetPath,
        /// Its processor.
        processor: String,
    },
    /// A step fetched from the remote cache; no processor ran.
    AssetFetched {
        /// The asset.
        asset: AssetPath,
        /// Its processor.
        processor: String,
        /// The remote cache, without credentials.
        from: String,
    },
    /// A step whose processor ran and succeeded.
    AssetProcessed {
        /// The asset.
        asset: AssetPath,
        /// Its processor.
        processor: String,
        /// Why it ran.
        why: DirtyReason,
    },
    /// A step that failed.
    AssetFailed {
        /// The asset.
        asset: AssetPath,
        /// Its processor.
        processor: String,
        /// The error, as the terminal shows it.
        message: String,
        /// Why it ran; `null` when it failed before running.
        why: Option<DirtyReason>,
    },
    /// A fresh step built again to check the cache (`verify`), whose
    /// rebuild differs from what the cache holds, or failed.
    AssetUnreproduced {
        /// The asset.
        asset: AssetPath,
        /// Its processor.
        processor: String,
        /// The outputs that differ (empty when the rebuild failed).
        outputs: Vec<OutputMismatchMessage>,
        /// The rebuild's error, if it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A copy the cache holds of an output (or a parcel) found damaged:
    /// its bytes no longer match their hash. It was removed, or the parcel
    /// written again; the next build makes what was lost.
    CacheDamaged {
        /// The asset whose output, or one it reads, was damaged.
        asset: AssetPath,
        /// What was found.
        error: String,
    },
    /// A rule of the manifest that no asset came from.
    RuleUnused {
        /// Its key: `package.metadata.assets.rules[2]`.
        key: String,
        /// Its line in `Cargo.toml`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<usize>,
        /// What is wrong: "rule `sprite/*.png` matches no asset".
        message: String,
    },
    /// An alias of the manifest: an old name still answering for a
    /// renamed asset, until what names it is changed.
    AliasKept {
        /// Its key: `package.metadata.assets.aliases."old.png"`.
        key: String,
        /// Its line in `Cargo.toml`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<usize>,
        /// "`old.png` is kept as an alias of `new.png`".
        message: String,
    },
    /// What a processor (or the tool it ran) warned of, verbatim; said
    /// again by every build that reuses the step.
    AssetWarning {
        /// The asset.
        asset: AssetPath,
        /// The processor.
        processor: String,
        /// The warning.
        message: String,
        /// Where in the input: `{"line": 3, "column": 5}`, with `file`
        /// when it is not the asset's own source.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        location: Option<Location>,
    },
    /// What a processor noted (information, never counted as a warning);
    /// said again by every build that reuses the step.
    AssetNote {
        /// The asset.
        asset: AssetPath,
        /// The processor.
        processor: String,
        /// The note.
        message: String,
        /// Where in the input, as for `asset-warning`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        location: Option<Location>,
    },
    /// A step not built because a dependency failed.
    AssetSkipped {
        /// The asset.
        asset: AssetPath,
        /// The failed dependency.
        dependency: AssetPath,
    },
    /// A parcel rewritten.
    ParcelWritten {
        /// Its name in the manifest.
        parcel: String,
        /// Where it was written.
        path: PathBuf,
        /// The patch written over it, when `watch` wrote the change as one
        /// (`assets_runtime::patch`); absent when the parcel is whole.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        patch: Option<PathBuf>,
        /// Resources added, changed or removed, sorted.
        changed: Vec<String>,
    },
    /// A parcel written (or left unchanged) without some of its assets,
    /// which failed: in a development build or under `watch`, so that a
    /// running game keeps going (release builds keep the parcel as it was).
    ParcelStandIns {
        /// Its name in the manifest.
        parcel: String,
        /// Failed assets whose last good outputs it holds instead, sorted.
        last_good: Vec<String>,
        /// Failed assets it is without (they never built), sorted.
        left_out: Vec<String>,
    },
    /// `--out-dir`: the parcels' resources written as files.
    OutDirWritten {
        /// The folder.
        dir: PathBuf,
        /// Files written (new or changed).
        written: usize,
        /// Files already right, left alone.
        unchanged: usize,
        /// Files of an earlier build no longer produced, removed.
        removed: usize,
    },
    /// The end of one package's build (the last line of `build`).
    BuildFinished(BuildFinished),
    /// One resource of an inspected parcel.
    Resource(ResourceMessage),
    /// The end of `inspect`.
    InspectFinished {
        /// Resources in the parcel.
        resources: usize,
        /// Whether every resource matched its checksum.
        intact: bool,
    },
    /// A picture of an atlas page drawn by `inspect --atlas`.
    AtlasPicture {
        /// The atlas.
        atlas: String,
        /// The PNG written.
        path: PathBuf,
        /// Its width in pixels.
        width: u32,
        /// Its height in pixels.
        height: u32,
        /// Sprites on the page.
        sprites: usize,
    },
    /// The answer of `why`.
    Outputs {
        /// The asset asked about.
        asset: AssetPath,
        /// Its resources, sorted by name.
        resources: Vec<OutputMessage>,
        /// The parcels holding them, by name, with their files (the
        /// `cargo assets build` parcels of this variant).
        parcels: BTreeMap<String, PathBuf>,
    },
    /// `source`: where a parcel resource comes from.
    Source {
        /// The resource asked about.
        resource: String,
        /// The step that made it: an asset, or a generated step (`atlas:ui`).
        asset: AssetPath,
        /// The asset's file, relative to the package; absent for a
        /// generated step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// The processor.
        processor: String,
    },
    /// `why`: why an asset was last built, and whether the next build will.
    Why {
        /// The asset asked about.
        asset: AssetPath,
        /// Why it was last built, if a record says.
        last: Option<DirtyReason>,
        /// Whether the next build reuses it.
        fresh: bool,
        /// Why the next build would rebuild it.
        next: Option<DirtyReason>,
        /// The platform records it is shared from, when not its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shared_from: Option<String>,
        /// The remote cache its outputs were fetched from, if they were.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fetched_from: Option<String>,
    },
    /// The answer of `deps`.
    Deps {
        /// The asset asked about.
        asset: AssetPath,
        /// Files it read or looked for.
        inputs: Vec<InputMessage>,
        /// Assets whose outputs it used.
        dependencies: Vec<AssetPath>,
        /// Assets whose resources its outputs name (a model's textures),
        /// held by every parcel that holds it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        references: Vec<AssetPath>,
    },
    /// The answer of `rdeps`.
    Rdeps {
        /// The asset asked about.
        asset: AssetPath,
        /// Steps that use it, and how.
        users: Vec<UserMessage>,
    },
    /// The answer of `graph`.
    Graph {
        /// Every step.
        nodes: Vec<AssetPath>,
        /// Every use between steps.
        edges: Vec<EdgeMessage>,
    },
    /// The end of `gc` in one cache.
    GcFinished {
        /// Blobs removed.
        removed: u64,
        /// Bytes they held.
        bytes_freed: u64,
        /// Blobs kept.
        kept: u64,
    },
    /// `watch` is listening for games on `port`.
    WatchStarted {
        /// The hot-reload port on 127.0.0.1.
        port: u16,
    },
}

impl Message {
    /// This message as one line of JSON (no newline), keys sorted.
    pub fn to_line(&self) -> String {
        // Through `Value`, whose maps are sorted: the output does not depend
        // on the order of fields in the types.
        let value =
            serde_json::to_value(self).expect("messages hold only strings, numbers and maps");
        value.to_string()
    }
}

/// One output of an `asset-unreproduced` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputMismatchMessage {
    /// The output's label (empty for the main output).
    pub label: String,
    /// Its blake3 hash in the cache, or `null` if the cache has no such output.
    pub cached: Option<String>,
    /// Its hash when built again, or `null` if the rebuild made none.
    pub rebuilt: Option<String>,
}

/// The `build-finished` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildFinished {
    /// The package; absent when the build could not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Whether every step and parcel succeeded.
    pub success: bool,
    /// Steps whose processor ran.
    pub ran: usize,
    /// Steps reused.
    pub fresh: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Steps skipped.
    pub skipped: usize,
    /// Steps fetched from the remote cache (absent when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fetched: usize,
    /// What the build did with the remote cache (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<assets_build::unstable::RemoteStats>,
    /// Fresh steps built again to check the cache (absent when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verified: usize,
    /// Of those, the ones that did not reproduce it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreproduced: usize,
    /// Each parcel on disk (written or unchanged) by name.
    pub parcels: BTreeMap<String, PathBuf>,
    /// The platform built for (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Why the build could not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The `resource` message of `inspect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceMessage {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Its size in bytes, once decompressed.
    pub size: u64,
    /// Its size in the parcel.
    pub stored_size: u64,
    /// How it is stored: `none`, `lz4` or `zstd`.
    pub compression: String,
    /// Its id, 16 hex digits.
    pub id: String,
    /// The checksum of its bytes once decompressed, 16 hex digits.
    pub checksum: String,
    /// Whether its bytes match the checksum.
    pub intact: bool,
    /// For an image: its size and how its pixels are stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageMessage>,
    /// For a sprite: its frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprite: Option<FrameMessage>,
    /// For a font: what was baked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font: Option<FontMessage>,
    /// For an animation: its frames and tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animation: Option<AnimationMessage>,
    /// For a texture: its format, size and mip levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texture: Option<TextureMessage>,
    /// For a shader: its reflection (the JSON of its `#reflection` resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reflection: Option<serde_json::Value>,
    /// Whether it comes from the parcel's patch (an edit under `watch`),
    /// not from the parcel.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub patched: bool,
}

/// A texture's format, size and mip levels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextureMessage {
    /// The KTX2 / Vulkan format name, e.g. `BC7_SRGB_BLOCK`.
    pub format: String,
    /// Width of level 0.
    pub width: u32,
    /// Height of level 0.
    pub height: u32,
    /// Mip levels.
    pub levels: u32,
}

/// A baked font's sizes and tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FontMessage {
    /// Pixel sizes, smallest first.
    pub sizes: Vec<f32>,
    /// Glyphs over all sizes.
    pub glyphs: usize,
    /// Kerning pairs.
    pub kerning_pairs: usize,
    /// Whether the glyphs are signed distance fields.
    pub distance_field: bool,
}

/// An animation's canvas, frames and tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnimationMessage {
    /// Every frame's size as authored.
    pub width: u32,
    /// Every frame's size as authored.
    pub height: u32,
    /// Each frame's duration in milliseconds.
    pub durations: Vec<u32>,
    /// The tags' names, as authored.
    pub tags: Vec<String>,
}

/// An image's size in pixels, and its storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageMessage {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// `raw`, `png`, `lz4` or `zstd`.
    pub encoding: String,
}

/// Where a sprite lies on its atlas page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameMessage {
    /// The page's index.
    pub page: u32,
    /// Left edge on the page.
    pub x: u32,
    /// Top edge on the page.
    pub y: u32,
    /// Width on the page.
    pub w: u32,
    /// Height on the page.
    pub h: u32,
    /// Whether it is turned 90°.
    pub rotated: bool,
    /// Trimmed pixels on the left of the source image.
    pub trim_x: u32,
    /// Trimmed pixels on top of the source image.
    pub trim_y: u32,
    /// The source image's width.
    pub source_width: u32,
    /// The source image's height.
    pub source_height: u32,
}

/// One resource of `outputs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputMessage {
    /// Its name in the parcel: the asset, or `asset#label`.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A file `deps` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputMessage {
    /// The file, relative to the package.
    pub path: String,
    /// Whether it existed (`false`: looked for and missing).
    pub present: bool,
}

/// A user `rdeps` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The step that uses the asset.
    pub asset: AssetPath,
    /// How.
    pub via: Via,
}

/// An edge of `graph`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeMessage {
    /// The step that uses.
    pub from: AssetPath,
    /// The step used.
    pub to: AssetPath,
    /// How.
    pub via: Via,
}

/// How one step uses another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// Its outputs, through `ctx.dependency`.
    Outputs,
    /// Its resources, named by the user's outputs (`ctx.reference`).
    Refers,
    /// Its file, read directly.
    File,
    /// Its file, looked for when it did not exist.
    LookedFor,
}

impl Via {
    /// The word used in messages and in the terminal.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Outputs => "outputs",
            Via::Refers => "refers",
            Via::File => "file",
            Via::LookedFor => "looked-for",
        }
    }
}

impl From<&Use> for Via {
    fn from(u: &Use) -> Via {
        match u {
            Use::Outputs => Via::Outputs,
            Use::Refers => Via::Refers,
            Use::File => Via::File,
            Use::LookedFor => Via::LookedFor,
        }
    }
}

/// Counts that are usually zero are left out of the message when they are.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field order in the types does not reach the output: keys are sorted.
    #[test]
    fn messages_print_with_sorted_keys_and_read_back() {
        let message = Message::AssetSkipped {
            asset: AssetPath::new("b/z.png").unwrap(),
            dependency: AssetPath::new("a.png").unwrap(),
        };
        let line = message.to_line();
        assert_eq!(
            line,
            r#"{"asset":"b/z.png","dependency":"a.png","reason":"asset-skipped"}"#
        );
        assert_eq!(serde_json::from_str::<Message>(&line).unwrap(), message);
    }
}
