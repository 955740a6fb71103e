//! Sprites and texture atlases: many images in, dense pages out.
//!
//! ```text
//! sprites/ui/a.png ─sprite─▶ SpriteSource (decoded, trimmed; cached)  ┐
//! sprites/ui/b.png ─sprite─▶ SpriteSource                             ├─▶ atlas:ui ─▶ pages + frames
//! …                                                                   ┘
//! ```
//!
//! An atlas is a many-to-one stage on top of ordinary steps. A rule marks
//! images as sprites of a named atlas (`processor = "sprite"`, `atlas = "ui"`);
//! the planner groups them and adds one step per atlas, `atlas:<name>`, that
//! depends on each of its sprites (`stage.rs`). Decoding happens once per
//! sprite and is cached (a [`SpriteSource`], the `sprite` processor's
//! output, defined beside it); packing and drawing run in the atlas step
//! from cached pixels, so editing one sprite re-decodes that sprite only.
//!
//! Packing ([`pack`], [`maxrects`]) is pure geometry behind the [`Packer`]
//! trait; [`layout`] adds padding, extrusion, cropping and power-of-two
//! rounding; [`compose`] draws the pages. Everything is deterministic: the
//! sprite list is sorted by path, the packer breaks ties by input order, and
//! the choice between packing tries keeps the earliest among equals.
//!
//! In a parcel, each sprite is a `sprite` resource named by its own asset path
//! (its [`SpriteFrame`](assets_runtime::SpriteFrame)), and each page an `image`
//! named `atlas:<name>#<page>`. A parcel that selects any sprite of an atlas
//! gets all of that atlas's pages.

pub mod compose;
pub mod layout;
pub mod maxrects;
pub mod pack;
pub(crate) mod stage;

pub use maxrects::MaxRects;
pub use pack::{PackOptions, Packer, Packing, Placement, Size};
pub(crate) use stage::member_label;
pub use stage::{AtlasPacker, FRAMES_KIND, FRAMES_LABEL};

pub use crate::asset_path::ATLAS_PREFIX;
pub use crate::processor::sprite_source::{
    SPRITE_SOURCE_KIND, SPRITE_SOURCES_KIND, SPRITES_LABEL, SpriteSource,
};
