//! Typed ids: [`Id<K>`], an id that also says what kind of resource it names.
//!
//! `include_parcel!` generates one constant per resource with the type of its
//! kind (`SpriteId`, `TextId`, `ImageId`, `BytesId`, `ShaderId`, `FontId`,
//! `AnimationId`, `TextureId`, `ModelId`, `AudioId`, `TileMapId`; `ResourceId` for other
//! kinds), and the parcel's accessors take ids of the matching kind:
//! `parcel.sprite(ui::BUTTON)` compiles, `parcel.text(ui::BUTTON)` does not.
//! A plain [`ResourceId`] is accepted by every accessor, for names known only
//! at run time.

use std::fmt;
use std::marker::PhantomData;

use crate::id::ResourceId;

/// Marker types for [`Id`]: one per built-in resource kind.
pub mod kind {
    /// `sprite` resources: frames in an atlas page.
    #[derive(Debug)]
    pub enum Sprite {}
    /// `text` resources: UTF-8 text.
    #[derive(Debug)]
    pub enum Text {}
    /// `image` resources.
    #[derive(Debug)]
    pub enum Image {}
    /// `bytes` resources.
    #[derive(Debug)]
    pub enum Bytes {}
    /// `shader` resources: WGSL or WESL source.
    #[derive(Debug)]
    pub enum Shader {}
    /// `font` resources: glyphs baked into atlas pages, with metrics.
    #[derive(Debug)]
    pub enum Font {}
    /// `animation` resources: frames in atlas pages, durations and tags.
    #[derive(Debug)]
    pub enum Animation {}
    /// `texture` resources: GPU textures in KTX2 containers.
    #[derive(Debug)]
    pub enum Texture {}
    /// `gltf` resources: glTF models, one GLB each.
    #[derive(Debug)]
    pub enum Model {}
    /// `audio` resources: sound files with their length and format.
    #[derive(Debug)]
    pub enum Audio {}
    /// `tilemap` resources: layers of cells, tilesets, objects.
    #[derive(Debug)]
    pub enum TileMap {}
}

/// The id of a resource of kind `K`.
pub struct Id<K> {
    id: ResourceId,
    kind: PhantomData<fn() -> K>,
}

/// The id of a sprite.
pub type SpriteId = Id<kind::Sprite>;
/// The id of a text resource.
pub type TextId = Id<kind::Text>;
/// The id of an image.
pub type ImageId = Id<kind::Image>;
/// The id of a bytes resource.
pub type BytesId = Id<kind::Bytes>;
/// The id of a shader.
pub type ShaderId = Id<kind::Shader>;
/// The id of a font.
pub type FontId = Id<kind::Font>;
/// The id of an animation.
pub type AnimationId = Id<kind::Animation>;
/// The id of a texture.
pub type TextureId = Id<kind::Texture>;
/// The id of a glTF model.
pub type ModelId = Id<kind::Model>;
/// The id of a sound.
pub type AudioId = Id<kind::Audio>;
/// The id of a tile map.
pub type TileMapId = Id<kind::TileMap>;

impl<K> Id<K> {
    /// The id of the resource named `name`, asserted to be of kind `K`.
    pub const fn of(name: &str) -> Id<K> {
        Id::from_id(ResourceId::of(name))
    }

    /// A typed id from an untyped one.
    pub const fn from_id(id: ResourceId) -> Id<K> {
        Id {
            id,
            kind: PhantomData,
        }
    }

    /// The untyped id.
    pub const fn id(self) -> ResourceId {
        self.id
    }
}

// Written by hand: derives would require `K: Clone` and so on.
impl<K> Clone for Id<K> {
    fn clone(&self) -> Id<K> {
        *self
    }
}

impl<K> Copy for Id<K> {}

impl<K> PartialEq for Id<K> {
    fn eq(&self, other: &Id<K>) -> bool {
        self.id == other.id
    }
}

impl<K> Eq for Id<K> {}

impl<K> std::hash::Hash for Id<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl<K> fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.id, f)
    }
}

impl<K> From<Id<K>> for ResourceId {
    fn from(id: Id<K>) -> ResourceId {
        id.id
    }
}

/// An id usable where a resource of kind `K` is expected: an [`Id<K>`], or
/// an untyped [`ResourceId`].
pub trait IdOf<K>: Copy {
    /// The untyped id.
    fn resource_id(self) -> ResourceId;
}

impl<K> IdOf<K> for Id<K> {
    fn resource_id(self) -> ResourceId {
        self.id
    }
}

impl<K> IdOf<K> for ResourceId {
    fn resource_id(self) -> ResourceId {
        self
    }
}
