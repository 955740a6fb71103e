//! The parcels a game serves to Bevy ([`Parcels`]), and the
//! [`AssetReader`] over them ([`ParcelReader`]).
//!
//! A Bevy asset path is a parcel's resource name: `sprites/hero.png` reads
//! the resource of that name from the first parcel that holds it. What the
//! reader hands a loader depends on the resource's kind:
//!
//! | kind | bytes read | loader |
//! |---|---|---|
//! | `image` | the resource (its header and rows) | [`ParcelImageLoader`], named by the meta the reader supplies |
//! | `sprite` | the sprite cut from its atlas page, trim undone, as an `image` resource | the same |
//! | `texture` | the KTX2 file | [`ParcelTextureLoader`](crate::ParcelTextureLoader): a GPU-format image with its mips |
//! | `audio` | the sound file, without the parcel's header | Bevy's audio loader: by extension where the name says the format, else (a `.wav` transcoded to Ogg Vorbis) named by the meta the reader supplies |
//! | any other (`text`, `bytes`, `gltf`, `shader`, ...) | the resource's bytes, decompressed | Bevy's, by extension (no meta) |
//!
//! So `asset_server.load::<Image>("sprites/hero.png")` gives the sprite's
//! own pixels whether the game reads loose files or a parcel, and nothing
//! ever asks the disk or the network for a `.meta` file: the reader answers
//! every meta request from the parcel's table.
//!
//! An atlas page (`atlas:ui#0`, a name Bevy's paths cannot hold) is served
//! at `cargo-assets-atlas/ui/0`, for sprites drawn from their page through a
//! `TextureAtlasLayout` (see [`Parcels::atlas_slot`]).
//!
//! Folders are the names' folders: `load_folder("sprites")` lists the
//! resources under `sprites/` (generated ones, such as atlas pages, and
//! sub-resources named `asset#label` are not files and are left out).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use assets_runtime::image::{Encoding, IMAGE_HEADER_LEN, ImageHeader};
use assets_runtime::{Patched, PatchedBuf, ResourceId, SpriteFrame, StaticParcel};
use bevy_asset::io::{AssetReader, AssetReaderError, PathStream, Reader, VecReader};
use bevy_asset::meta::{AssetAction, AssetMeta, AssetMetaDyn};
use bevy_math::{IRect, IVec2, URect};

use crate::image::ParcelImageLoader;

/// One parcel the game serves.
enum Held {
    /// Embedded by `include_parcel!`.
    Static(Patched<'static>),
    /// Opened from a file (memory-mapped), through the patch `watch` wrote
    /// over it if a reload notice named one, and opened again on reload.
    File(PathBuf, PatchedBuf),
}

impl Held {
    fn parcel(&self) -> Patched<'_> {
        match self {
            Held::Static(p) => *p,
            Held::File(_, buf) => buf.parcel(),
        }
    }
}

/// The parcels served to Bevy, searched in the order added. Shared by the
/// reader and the game (a `Resource` in the app, see
/// [`CargoAssetsPlugin`](crate::CargoAssetsPlugin)), so that a parcel
/// reopened after a rebuild is what the next load reads.
#[derive(Clone, Default, bevy_ecs::resource::Resource)]
pub struct Parcels(Arc<RwLock<Vec<Held>>>);

/// Why a parcel could not be served.
#[derive(Debug, thiserror::Error)]
#[error("could not open parcel `{}`: {source}", path.display())]
pub struct OpenError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: assets_runtime::ParcelError,
}

impl Parcels {
    /// Serves the parcel `include_parcel!` embedded (`&main::PARCEL`).
    pub fn add_static(&self, parcel: &'static StaticParcel) {
        // A parcel seen through no patch: nothing to check, it cannot fail.
        if let Ok(alone) = Patched::new(*parcel.get(), None) {
            self.write().push(Held::Static(alone));
        }
    }

    /// Serves the parcel in the file at `path`, validated once and mapped.
    pub fn add_file(&self, path: impl Into<PathBuf>) -> Result<(), OpenError> {
        let path = path.into();
        let buf = open(&path, None)?;
        self.write().push(Held::File(path, buf));
        Ok(())
    }

    /// Serves the parcel file at `path`, through `patch` if given, ahead of
    /// every other: what a reload notice names (the `cargo assets` parcel,
    /// rebuilt), which then shadows an embedded copy of the same parcel.
    /// Replaces the file parcel at `path` if there is one.
    pub fn reload(&self, path: &Path, patch: Option<&Path>) -> Result<(), OpenError> {
        let buf = open(path, patch)?;
        let mut held = self.write();
        held.retain(|h| !matches!(h, Held::File(p, _) if p == path));
        held.insert(0, Held::File(path.to_owned(), buf));
        Ok(())
    }

    /// The name of resource `id` in the first parcel that holds it: what a
    /// typed constant of `include_parcel!` loads (see [`crate::ParcelAssets`]).
    pub fn name_of(&self, id: ResourceId) -> Option<String> {
        let held = self.read();
        held.iter()
            .find_map(|h| h.parcel().get(id).map(|r| r.name.to_owned()))
    }

    /// The tile map `id`, owned: a Tiled map (which the asset server also
    /// loads, as [`ParcelTileMap`](crate::ParcelTileMap)), or an LDtk level
    /// (`World.ldtk#Level_0`, whose `#` Bevy's asset paths read as a label,
    /// so only this reaches it). `None` if no parcel holds a tile map of
    /// that id. Its images load from the asset server by the names it gives.
    pub fn tilemap(&self, id: ResourceId) -> Option<assets_runtime::TileMap<'static>> {
        let held = self.read();
        let resource = held.iter().find_map(|h| h.parcel().get(id))?;
        let bytes = resource.bytes().ok()?.into_owned();
        (resource.kind == "tilemap")
            .then(|| assets_runtime::TileMap::parse(bytes))
            .flatten()
    }

    /// The `tilemap` resources named `<project>#<label>` (an LDtk project's
    /// levels), in the first parcel that holds any: each label and its
    /// bytes.
    pub(crate) fn levels_of(&self, project: &str) -> Vec<(String, Vec<u8>)> {
        let prefix = format!("{project}#");
        let held = self.read();
        for h in held.iter() {
            let levels: Vec<(String, Vec<u8>)> = (h.parcel().iter())
                .filter(|r| r.kind == "tilemap")
                .filter_map(|r| {
                    let label = r.name.strip_prefix(&prefix)?;
                    Some((label.to_owned(), r.bytes().ok()?.into_owned()))
                })
                .collect();
            if !levels.is_empty() {
                return levels;
            }
        }
        Vec::new()
    }

    /// Where sprite `id` lies on its page, with every sprite of that page
    /// (for one `TextureAtlasLayout` a page): `None` if no parcel holds such
    /// a sprite. A sprite the atlas turned a quarter (`rotate = true`) has
    /// no place in a `TextureAtlasLayout`, which cannot turn: an error.
    pub fn atlas_slot(&self, id: ResourceId) -> Option<Result<AtlasSlot, TurnedSprite>> {
        let held = self.read();
        let parcel = held
            .iter()
            .find_map(|h| Some(h.parcel()).filter(|p| p.get(id).is_some()))?;
        let frame = parcel.sprite(id)?.frame;
        slot_of(&parcel, &frames_on(&parcel, &[frame.page]), frame)
    }

    /// Where each frame of animation `id` lies on its page, as
    /// [`Parcels::atlas_slot`] says for a sprite, with the animation's
    /// durations and tags: `None` if no parcel holds such an animation.
    pub fn animation_slots(&self, id: ResourceId) -> Option<Result<AnimationSlots, TurnedSprite>> {
        let held = self.read();
        let parcel = held
            .iter()
            .find_map(|h| Some(h.parcel()).filter(|p| p.get(id).is_some()))?;
        let animation = parcel.animation(id)?;
        let pages: Vec<ResourceId> = animation.sprite_frames().map(|f| f.page).collect();
        // Every page's frames listed once, not once a frame.
        let on_pages = frames_on(&parcel, &pages);
        let mut slots = Vec::with_capacity(animation.frame_count());
        for frame in animation.sprite_frames() {
            match slot_of(&parcel, &on_pages, frame)? {
                Ok(slot) => slots.push(slot),
                Err(turned) => return Some(Err(turned)),
            }
        }
        Some(Ok(AnimationSlots {
            slots,
            durations_ms: animation.frames().map(|f| f.duration_ms).collect(),
            tags: (animation.tags())
                .map(|t| AnimationTag {
                    name: t.name.to_owned(),
                    from: t.from,
                    to: t.to,
                    direction: t.direction,
                    repeat: t.repeat,
                    data: t.user_data.text.map(str::to_owned),
                    color: t.user_data.color,
                })
                .collect(),
            slices: animation.slice_keys().map(AnimationSlice::of).collect(),
        }))
    }

    /// What the reader hands Bevy for `name`, and the meta naming its
    /// loader where Bevy's own, chosen by extension, cannot read it.
    fn serve(&self, name: &str) -> Option<Served> {
        // An atlas page, under the path `atlas_slot` gives it.
        let page;
        let name = match name
            .strip_prefix(PAGE_PREFIX)
            .and_then(|r| r.split_once('/'))
        {
            Some((atlas, n)) => {
                page = format!("atlas:{atlas}#{n}");
                page.as_str()
            }
            None => name,
        };
        let held = self.read();
        let (parcel, resource) = held
            .iter()
            .find_map(|h| Some((h.parcel(), h.parcel().by_name(name)?)))?;
        Some(match resource.kind {
            "image" => Served::Image(resource.bytes().ok()?.into_owned()),
            "sprite" => Served::Image(cut_sprite(&parcel, resource.id)?),
            "texture" => Served::Texture(resource.bytes().ok()?.into_owned()),
            "tilemap" => Served::TileMap(resource.bytes().ok()?.into_owned()),
            "text" if name.ends_with(".ldtk") && has_levels(&parcel, name) => {
                Served::LdtkProject(resource.bytes().ok()?.into_owned())
            }
            // The sound file, for Bevy's audio loader, without the header
            // the parcel adds: by the extension where the name says what it
            // holds, else named (a `.wav` the pipeline made Ogg Vorbis).
            "audio" => {
                let audio = resource.audio()?;
                let stored = audio.info.format.extension();
                let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
                let says = extension.as_deref().is_some_and(|e| {
                    e == stored || (stored == "ogg" && matches!(e, "oga" | "spx"))
                });
                let bytes = audio.data.to_vec();
                if says {
                    Served::Bytes(bytes)
                } else {
                    Served::Audio(bytes)
                }
            }
            _ => Served::Bytes(resource.bytes().ok()?.into_owned()),
        })
    }

    /// The files and folders right under `folder` (`""` for the top).
    fn list(&self, folder: &str) -> Vec<PathBuf> {
        let prefix = if folder.is_empty() {
            String::new()
        } else {
            format!("{folder}/")
        };
        let held = self.read();
        let mut entries: Vec<PathBuf> = held
            .iter()
            .flat_map(|h| {
                h.parcel()
                    .iter()
                    .map(|r| r.name.to_owned())
                    .collect::<Vec<_>>()
            })
            .filter(|name| is_file_name(name))
            .filter_map(|name| {
                let rest = name.strip_prefix(&prefix)?;
                let entry = match rest.split_once('/') {
                    Some((dir, _)) => dir,
                    None => rest,
                };
                Some(PathBuf::from(format!("{prefix}{entry}")))
            })
            .collect();
        entries.sort();
        entries.dedup();
        entries
    }

    fn is_folder(&self, folder: &str) -> bool {
        let prefix = format!("{folder}/");
        let held = self.read();
        held.iter().any(|h| {
            h.parcel()
                .iter()
                .any(|r| is_file_name(r.name) && r.name.starts_with(&prefix))
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Held>> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Held>> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }
}

fn open(path: &Path, patch: Option<&Path>) -> Result<PatchedBuf, OpenError> {
    PatchedBuf::open(path, patch).map_err(|source| OpenError {
        path: path.to_owned(),
        source,
    })
}

/// Where atlas pages are served: `cargo-assets-atlas/<atlas>/<page>`.
pub const PAGE_PREFIX: &str = "cargo-assets-atlas/";

/// Every frame on each of `pages` (each sprite by its name, each animation
/// frame as `<animation>#<index>`), in name order: the page's one
/// `TextureAtlasLayout`, whoever asks.
fn frames_on(
    parcel: &Patched<'_>,
    pages: &[ResourceId],
) -> HashMap<ResourceId, Vec<(String, SpriteFrame)>> {
    let mut on: HashMap<ResourceId, Vec<(String, SpriteFrame)>> =
        pages.iter().map(|&p| (p, Vec::new())).collect();
    // A name is made only for a frame on one of `pages`.
    for r in parcel.iter() {
        if let Some(f) = r.sprite_frame()
            && let Some(list) = on.get_mut(&f.page)
        {
            list.push((r.name.to_owned(), f));
        }
        if let Some(animation) = r.animation() {
            for (i, f) in animation.sprite_frames().enumerate() {
                if let Some(list) = on.get_mut(&f.page) {
                    list.push((format!("{}#{i}", r.name), f));
                }
            }
        }
    }
    for list in on.values_mut() {
        list.sort_by(|a, b| a.0.cmp(&b.0));
    }
    on
}

/// Where `frame` lies on its page, among the page's frames in `on_pages`
/// (from [`frames_on`]).
fn slot_of(
    parcel: &Patched<'_>,
    on_pages: &HashMap<ResourceId, Vec<(String, SpriteFrame)>>,
    frame: SpriteFrame,
) -> Option<Result<AtlasSlot, TurnedSprite>> {
    let page = frame.page;
    let image = parcel.image(page)?;
    let page_name = parcel.get(page)?.name.to_owned();
    let on_page = on_pages.get(&page)?;
    if let Some((name, _)) = on_page.iter().find(|(_, f)| f.rotated) {
        return Some(Err(TurnedSprite {
            sprite: name.clone(),
        }));
    }
    let index = on_page.iter().position(|(_, f)| *f == frame)?;
    let (atlas, n) = page_name.strip_prefix("atlas:")?.split_once('#')?;
    Some(Ok(AtlasSlot {
        page: format!("{PAGE_PREFIX}{atlas}/{n}"),
        page_id: page,
        size: (image.header.width, image.header.height),
        rects: on_page.iter().map(|(_, f)| [f.x, f.y, f.w, f.h]).collect(),
        index,
        frame,
    }))
}

/// An animation's frames on their pages ([`Parcels::animation_slots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AnimationSlots {
    /// Each frame's place, in order.
    pub slots: Vec<AtlasSlot>,
    /// Each frame's duration in milliseconds, in order.
    pub durations_ms: Vec<u32>,
    /// The tags, as authored.
    pub tags: Vec<AnimationTag>,
    /// The slices' keys, each slice's in frame order.
    pub slices: Vec<AnimationSlice>,
}

/// A slice key of an animation, owned (see [`assets_runtime::SliceKey`]),
/// in image coordinates: on the canvas, y down, as Aseprite has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnimationSlice {
    /// Its slice's name.
    pub name: String,
    /// The first frame it holds for; it holds until its slice's next key.
    pub from: u32,
    /// Its bounds on the canvas.
    pub bounds: IRect,
    /// The centre of a 9-slice, relative to the bounds, if it is one: the
    /// borders around it are a `TextureSlicer`'s.
    pub center: Option<URect>,
    /// Its pivot, relative to the bounds, if it has one.
    pub pivot: Option<IVec2>,
    /// Its slice's user data text, as authored (a hitbox's kind...).
    pub data: Option<String>,
    /// Its slice's user data colour, RGBA.
    pub color: Option<[u8; 4]>,
}

impl AnimationSlice {
    fn of(key: assets_runtime::SliceKey<'_>) -> AnimationSlice {
        let wide = |start: i32, len: u32| start.saturating_add_unsigned(len);
        AnimationSlice {
            name: key.name.to_owned(),
            from: key.from,
            bounds: IRect::new(
                key.x,
                key.y,
                wide(key.x, key.width),
                wide(key.y, key.height),
            ),
            // The reader keeps a centre inside its bounds: x, y >= 0.
            center: (key.center).map(|c| {
                let (x, y) = (c.x.unsigned_abs(), c.y.unsigned_abs());
                URect::new(x, y, x.saturating_add(c.width), y.saturating_add(c.height))
            }),
            pivot: key.pivot.map(|(x, y)| IVec2::new(x, y)),
            data: key.user_data.text.map(str::to_owned),
            color: key.user_data.color,
        }
    }
}

/// A tag of an animation, owned (see [`assets_runtime::Tag`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnimationTag {
    /// Its name.
    pub name: String,
    /// Its first frame.
    pub from: u32,
    /// Its last frame.
    pub to: u32,
    /// Which way it plays.
    pub direction: assets_runtime::Direction,
    /// Passes to play; 0 for forever.
    pub repeat: u16,
    /// Its user data text, as authored (an event...).
    pub data: Option<String>,
    /// Its user data colour, RGBA (its colour in Aseprite's timeline).
    pub color: Option<[u8; 4]>,
}

impl AnimationTag {
    /// As the runtime's [`assets_runtime::Tag`], which plays it.
    pub fn as_tag(&self) -> assets_runtime::Tag<'_> {
        assets_runtime::Tag {
            name: &self.name,
            from: self.from,
            to: self.to,
            direction: self.direction,
            repeat: self.repeat,
            user_data: assets_runtime::UserData {
                text: self.data.as_deref(),
                color: self.color,
            },
        }
    }
}

/// A sprite's place on its atlas page ([`Parcels::atlas_slot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AtlasSlot {
    /// The page's Bevy asset path.
    pub page: String,
    /// The page's resource id.
    pub page_id: ResourceId,
    /// The page's size in pixels.
    pub size: (u32, u32),
    /// Every frame of the page (`x, y, w, h`), in name order (an
    /// animation's frames named `<animation>#<index>`).
    pub rects: Vec<[u32; 4]>,
    /// This frame's place in `rects`.
    pub index: usize,
    /// Its frame: trim offsets and source size, to place it as drawn.
    pub frame: assets_runtime::SpriteFrame,
}

/// A sprite the atlas turned a quarter: a `TextureAtlasLayout` cannot
/// hold it.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "sprite `{sprite}` lies turned on its atlas page, which a Bevy TextureAtlasLayout cannot say: \
     set `rotate = false` for atlases Bevy draws from, or load the sprite alone as an Image"
)]
pub struct TurnedSprite {
    /// The sprite.
    pub sprite: String,
}

/// Whether a resource name is a file's: not a generated step's
/// (`atlas:ui#0`) nor a sub-resource (`shaders/water.wgsl#reflection`).
pub(crate) fn is_file_name(name: &str) -> bool {
    !name.contains('#') && !name.contains(':')
}

enum Served {
    /// An `image` resource's bytes, for [`ParcelImageLoader`].
    Image(Vec<u8>),
    /// A `texture` resource's KTX2 file, for
    /// [`ParcelTextureLoader`](crate::ParcelTextureLoader).
    Texture(Vec<u8>),
    /// A `tilemap` resource, for
    /// [`ParcelTileMapLoader`](crate::ParcelTileMapLoader).
    TileMap(Vec<u8>),
    /// An LDtk project whose levels the parcel holds, for
    /// [`ParcelLdtkLoader`](crate::ParcelLdtkLoader).
    LdtkProject(Vec<u8>),
    /// Bytes for Bevy's loader of the extension.
    Bytes(Vec<u8>),
    /// A sound whose name's extension is not its format (one the `audio`
    /// processor transcoded), for Bevy's audio loader named in its meta.
    Audio(Vec<u8>),
}

/// Bevy's audio loader (`bevy_audio`, which this crate does not depend
/// on: a game that plays sounds has it), by its type path.
const BEVY_AUDIO_LOADER: &str = "bevy_audio::audio_source::AudioLoader";

/// The meta naming [`BEVY_AUDIO_LOADER`], whose settings are `()`. (The
/// type parameter only types those settings: any loader taking `()` would
/// do, and the tile map loader is one.)
fn audio_meta() -> Vec<u8> {
    let action = AssetAction::Load {
        loader: BEVY_AUDIO_LOADER.to_owned(),
        settings: (),
    };
    AssetMetaDyn::serialize(&AssetMeta::<crate::ParcelTileMapLoader, ()>::new(action))
}

/// The pixels of sprite `id`, cut from its page and put back at its source
/// size (the trimmed border transparent again), as a raw `image` resource.
fn cut_sprite(parcel: &Patched<'_>, id: ResourceId) -> Option<Vec<u8>> {
    let sprite = parcel.sprite(id)?;
    let f = sprite.frame;
    let page = sprite.page.pixels().ok()?;
    let pw = sprite.page.header.width as usize;
    let (sw, sh) = (f.source_width as usize, f.source_height as usize);
    let (cw, ch) = f.content_size();
    let mut rows = vec![0u8; sw * sh * 4];
    for sy in 0..ch as usize {
        for sx in 0..cw as usize {
            // A turned sprite lies a quarter turn clockwise on its page.
            let (px, py) = if f.rotated {
                (f.x as usize + f.w as usize - 1 - sy, f.y as usize + sx)
            } else {
                (f.x as usize + sx, f.y as usize + sy)
            };
            let (dx, dy) = (f.trim_x as usize + sx, f.trim_y as usize + sy);
            if dx >= sw || dy >= sh {
                return None;
            }
            let from = (py * pw + px) * 4;
            let to = (dy * sw + dx) * 4;
            rows[to..to + 4].copy_from_slice(page.get(from..from + 4)?);
        }
    }
    let header = ImageHeader {
        width: f.source_width,
        height: f.source_height,
        format: sprite.page.header.format,
        encoding: Encoding::Raw,
    };
    let mut out = Vec::with_capacity(IMAGE_HEADER_LEN + rows.len());
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&rows);
    Some(out)
}

/// Reads Bevy asset paths from [`Parcels`]. See the [module docs](self).
pub struct ParcelReader {
    parcels: Parcels,
}

impl ParcelReader {
    /// A reader of `parcels`.
    pub fn new(parcels: Parcels) -> ParcelReader {
        ParcelReader { parcels }
    }
}

/// Whether the parcel holds levels of the LDtk project `name`
/// (`tilemap` resources `<name>#<level>`).
fn has_levels(parcel: &Patched<'_>, name: &str) -> bool {
    let prefix = format!("{name}#");
    (parcel.iter()).any(|r| r.kind == "tilemap" && r.name.starts_with(&prefix))
}

/// A path as a resource name: `/`-separated, relative.
pub(crate) fn name_of(path: &Path) -> String {
    let name = path.to_string_lossy().replace('\\', "/");
    name.trim_start_matches("./")
        .trim_end_matches('/')
        .to_owned()
}

fn not_found(path: &Path) -> AssetReaderError {
    AssetReaderError::NotFound(path.to_owned())
}

impl AssetReader for ParcelReader {
    async fn read<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        match self.parcels.serve(&name_of(path)) {
            Some(
                Served::Image(bytes)
                | Served::Texture(bytes)
                | Served::TileMap(bytes)
                | Served::LdtkProject(bytes)
                | Served::Bytes(bytes)
                | Served::Audio(bytes),
            ) => Ok(VecReader::new(bytes)),
            None => Err(not_found(path)),
        }
    }

    async fn read_meta<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        // `path` is the asset's path with `.meta` appended.
        let asset = name_of(path);
        let asset = asset.strip_suffix(".meta").unwrap_or(&asset);
        match self.parcels.serve(asset) {
            Some(Served::Image(_)) => Ok(VecReader::new(ParcelImageLoader::meta())),
            Some(Served::Texture(_)) => Ok(VecReader::new(crate::ParcelTextureLoader::meta())),
            Some(Served::TileMap(_)) => Ok(VecReader::new(crate::ParcelTileMapLoader::meta())),
            Some(Served::LdtkProject(_)) => Ok(VecReader::new(crate::ParcelLdtkLoader::meta())),
            Some(Served::Audio(_)) => Ok(VecReader::new(audio_meta())),
            // Bevy's loader for the extension, with its default settings.
            Some(Served::Bytes(_)) | None => Err(not_found(path)),
        }
    }

    async fn read_directory<'a>(
        &'a self,
        path: &'a Path,
    ) -> Result<Box<PathStream>, AssetReaderError> {
        let folder = name_of(path);
        if !folder.is_empty() && !self.parcels.is_folder(&folder) {
            return Err(not_found(path));
        }
        let entries = self.parcels.list(&folder);
        Ok(Box::new(futures_lite::stream::iter(entries)))
    }

    async fn is_directory<'a>(&'a self, path: &'a Path) -> Result<bool, AssetReaderError> {
        let folder = name_of(path);
        Ok(folder.is_empty() || self.parcels.is_folder(&folder))
    }
}
