//! Read cargo-assets parcels in a game.
//!
//! A parcel is one file of named resources (sprites, text, images, bytes,
//! your own kinds), written by the cargo-assets pipeline. This crate reads it:
//! [`Parcel::from_bytes`] validates the bytes once (bounds, overlaps, version,
//! checksums of the tables) and then every lookup is a slice into them, found
//! in O(1) by [`ResourceId`]; a resource the parcel stores compressed is
//! decompressed when read. The bytes may be untrusted: corrupt or hostile
//! input is an error, never a panic or an out-of-bounds read.
//!
//! ```
//! # use assets_runtime::{Parcel, ResourceId};
//! # fn show(bytes: &[u8]) -> Result<(), assets_runtime::ParcelError> {
//! let parcel = Parcel::from_bytes(bytes)?;
//! const HELLO: ResourceId = ResourceId::of("greeting.txt");
//! // Borrowed from `bytes` when stored as it is, else decompressed.
//! let text = parcel.text(HELLO)?;
//! println!("{text}");
//! # Ok(()) }
//! ```
//!
//! - [`format`](mod@format): the file layout, byte by byte, and what is checked when.
//! - [`id`]: why ids stay stable when assets are added or removed.
//! - [`image`]: the image resource layout.
//! - [`sprite`]: sprite frames: where a sprite lies in its atlas page.
//! - [`font`]: fonts baked into glyphs in atlas pages, with line metrics
//!   and kerning.
//! - [`texture`]: GPU textures (KTX2: mip chains, BCn, ETC2 and ASTC
//!   block compression), ready to upload.
//! - [`patch`]: a parcel seen through the patch `cargo assets watch` writes
//!   beside it after an edit.
//! - Aliases ([`format::KIND_ALIAS`]): an old name kept answering after an
//!   asset was renamed; [`Parcel::get`] and [`Parcel::by_name`] follow one
//!   to the resource it names ([`Resource::alias_of`]).
//! - [`reload`]: the hot-reload client a game polls while `cargo assets watch`
//!   runs, and the protocol it reads.
//! - [`toc`]: the parcel's text table of contents; [`line_escape`]: the
//!   escaping both text formats share.
//! - [`uri`]: references from one resource to another by relative URI,
//!   as a glTF model names its textures.
//! - [`typed`]: ids that carry their resource's kind, as `include_parcel!` generates them.
//! - `write` (feature `write`): the writer the pipeline uses, so that reader
//!   and writer share one definition of the format. The same feature holds
//!   the writers of the two text formats, beside their readers
//!   ([`toc::parse`], [`reload::ReloadClient`]), and `lz4_pieces`: one LZ4
//!   block of a large image made of pieces compressed apart, so the writer
//!   compresses an atlas page on every core.
//!
//! In a game, `include_parcel!("main")` (from `assets-macros`, re-exported
//! here behind the default `macros` feature) embeds the parcel the build
//! script wrote and declares a typed constant per resource ([`typed`]).
//!
//! The only `unsafe` is the memory map of a parcel file (`mapped.rs`, with
//! its safety argument and the stance on files changed underneath); it
//! depends on `xxhash-rust`, `ktx2` (the texture container), `memmap2` (feature `mmap`, default), the pure
//! Rust decoders `lz4_flex` and `ruzstd` (features `lz4` and `zstd`,
//! default), and `assets-macros` for the macro.

#![deny(clippy::print_stdout, clippy::print_stderr)] // a library read by games: it never prints

pub mod animation;
pub mod audio;
mod codec;
mod error;
pub mod font;
pub mod format;
pub mod id;
pub mod image;
pub mod line_escape;
#[cfg(feature = "write")]
pub mod lz4_pieces;
#[allow(unsafe_code)]
mod mapped;
mod parcel;
pub mod patch;
pub mod reload;
pub mod sprite;
mod static_parcel;
pub mod texture;
pub mod tilemap;
pub mod toc;
pub mod typed;
pub mod uri;
mod validate;
#[cfg(feature = "write")]
pub mod write;

pub use animation::{Animation, AnimationFrame, Direction, SliceCenter, SliceKey, Tag, UserData};
#[cfg(feature = "macros")]
pub use assets_macros::include_parcel;
pub use audio::{Audio, AudioFormat, AudioInfo};
pub use error::ParcelError;
pub use font::{Font, FontSize, Glyph};
pub use format::Compression;
pub use id::ResourceId;
pub use parcel::{Parcel, ParcelBuf, Resource};
pub use patch::{Patched, PatchedBuf};
pub use sprite::{Sprite, SpriteFrame};
pub use static_parcel::StaticParcel;
pub use texture::{NotATexture, Texture, TextureFormat};
pub use tilemap::TileMap;
pub use typed::{
    AnimationId, AudioId, BytesId, FontId, Id, IdOf, ImageId, ModelId, ShaderId, SpriteId, TextId,
    TextureId, TileMapId,
};

#[cfg(test)]
mod tests;
