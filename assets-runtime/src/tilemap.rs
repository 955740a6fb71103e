//! The `tilemap` resource: a tile map as a game draws it, read without a
//! map library. The `tilemap` processor makes one from a Tiled map
//! (`.tmx`, `.tmj`): its tilesets (external `.tsx`/`.tsj` files read in),
//! its layers with each tile layer's cells decoded whatever the editor's
//! encoding was (CSV, base64, zlib, gzip, zstd; an infinite map's chunks
//! joined into one region), its objects, and every custom property. It
//! makes one from each level of an LDtk project too (`World.ldtk#Level_0`),
//! whose tiles are *placed* (at pixel positions, stacked as LDtk's auto
//! layers stack them: [`Layer::placed`]) and whose IntGrids are *values*
//! ([`LayerKind::Values`]).
//!
//! **What a game does with it.** For each tile layer in draw order
//! ([`TileMap::layers`]), each cell holds a global tile id (`gid`, 0 for
//! none, with Tiled's flip bits: [`Cell`]), and each placed tile one too; [`TileMap::tile`] says which
//! tileset it comes from and where its pixels lie in that tileset's image,
//! itself an `image` (or `sprite`) resource of the same parcel, named by
//! its asset path ([`Tileset::image`]). Group layers are flattened: each
//! layer carries its groups' path, and offsets, opacity, visibility,
//! parallax and tint combined as Tiled combines them when it draws.
//!
//! **Layout** (little-endian; a string is a `(start, length)` pair of u32
//! into the strings; a range is a `(first, count)` pair of u32 into a
//! table):
//!
//! ```text
//! offset      size  field
//!      0         4  magic "ATMP"
//!      4         2  layout version, 1
//!      6         1  orientation: 0 orthogonal, 1 isometric, 2 staggered, 3 hexagonal
//!      7         1  render order: 0 right-down, 1 right-up, 2 left-down, 3 left-up
//!      8         8  width, height in tiles (an infinite map: its chunks' bounds)
//!     16         8  tile width, height in pixels
//!     24         4  hex side length in pixels
//!     28         1  stagger axis: 0 x, 1 y
//!     29         1  stagger index: 0 odd, 1 even
//!     30         1  flags: bit 0 infinite, bit 1 has a background colour
//!     31         1  zero
//!     32         4  background colour, RGBA
//!     36    10 × 4  counts: T tilesets, K tiles, A animation frames, L layers,
//!                   O objects, P points, R properties, C cells, X placed
//!                   tiles, S string bytes
//!     76         8  the map's class (string)
//!     84         8  the map's properties (range)
//!     92    T × 76  tilesets, by first gid
//!      …    K × 52  tiles that have data of their own
//!      …     A × 8  animation frames: local tile id, duration in ms
//!      …   L × 116  layers, in draw order
//!      …    O × 72  objects
//!      …     P × 8  points: x, y (f32)
//!      …    R × 20  properties
//!      …     C × 4  cells (u32 gids, or values), each grid layer's row by row
//!      …    X × 16  placed tiles: x, y in pixels (i32), gid (u32), opacity (f32)
//!      …         S  strings, UTF-8
//! ```
//!
//! A tileset is its first gid, tile count, columns, tile width and height,
//! spacing, margin (u32 each), drawing offset x, y (i32), name, image
//! (strings), image width and height (u32), tiles and properties (ranges).
//! A tile: its local id (u32), image (string, in a collection of images),
//! image width and height (u32), class (string), animation frames,
//! properties and collision shapes (ranges; objects). A layer: kind (u8: 0 tiles, 1 objects, 2 image, 3
//! placed tiles, 4 values),
//! flags (u8: bit 0 visible, bit 1 repeat x, bit 2 repeat y), zero (u16),
//! id (u32), name, groups' path, class (strings), opacity, offset x, y,
//! parallax x, y (f32), tint (RGBA), the cells' region x, y (i32), width,
//! height (u32), first cell (u32; the layer's cells are width × height from
//! there), objects (range), image (string), properties (range), a cell's
//! width and height in pixels (u32), placed tiles (range). An object:
//! id, gid (u32; 0 unless a tile object), shape (u8: 0 rectangle, 1
//! ellipse, 2 point, 3 polygon, 4 polyline, 5 text), flags (u8: bit 0
//! visible), zero (u16), x, y, width, height, rotation in degrees clockwise
//! (f32), name, class, text (strings), points (range; relative to x, y)
//! and properties (range). A property: type (u8: 0 string, 1 int, 2 float,
//! 3 bool, 4 color, 5 file, 6 object, 7 class), three zero bytes, name and
//! value (strings; the value as Tiled writes it, a class's members as a
//! JSON object).
//!
//! The resource may be stored compressed (cells compress well), so
//! [`crate::Parcel::tilemap`] decompresses it if need be, then checks it
//! whole: every count, string, range and code. Nothing here panics on any
//! bytes, and a map that parses never fails an accessor.

use std::borrow::Cow;

use crate::format::{tables_len, u16_at, u32_at};

/// Magic bytes of a tile map resource.
pub const TILEMAP_MAGIC: [u8; 4] = *b"ATMP";
const HEADER_LEN: usize = 92;
const TILESET_LEN: usize = 76;
const TILE_LEN: usize = 52;
const FRAME_LEN: usize = 8;
const LAYER_LEN: usize = 116;
const OBJECT_LEN: usize = 72;
const POINT_LEN: usize = 8;
const PROPERTY_LEN: usize = 20;
const CELL_LEN: usize = 4;
const PLACED_LEN: usize = 16;

/// The gid bit of a tile flipped horizontally.
pub const FLIPPED_HORIZONTALLY: u32 = 0x8000_0000;
/// The gid bit of a tile flipped vertically.
pub const FLIPPED_VERTICALLY: u32 = 0x4000_0000;
/// The gid bit of a tile flipped along its diagonal (with the two others,
/// a rotation by 90°; on hexagonal maps, a rotation by 60°).
pub const FLIPPED_DIAGONALLY: u32 = 0x2000_0000;
/// The gid bit of a hexagonal tile rotated by 120°.
pub const ROTATED_HEXAGONAL_120: u32 = 0x1000_0000;
const FLIP_BITS: u32 = 0xf000_0000;

macro_rules! codes {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $code:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// The byte the layout stores it as.
            pub fn code(self) -> u8 {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            fn from_code(code: u8) -> Option<$name> {
                match code {
                    $($code => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

codes! {
    /// How tiles are laid out on screen.
    Orientation {
        /// A grid of rectangles.
        Orthogonal = 0,
        /// Diamonds, rows running diagonally.
        Isometric = 1,
        /// Diamonds, every other row or column shifted ([`TileMap::stagger`]).
        Staggered = 2,
        /// Hexagons, every other row or column shifted.
        Hexagonal = 3,
    }
}

codes! {
    /// In which order the editor draws tiles (which overlaps which when
    /// tiles are taller than the grid).
    RenderOrder {
        /// Rows left to right, top to bottom.
        RightDown = 0,
        /// Rows left to right, bottom to top.
        RightUp = 1,
        /// Rows right to left, top to bottom.
        LeftDown = 2,
        /// Rows right to left, bottom to top.
        LeftUp = 3,
    }
}

codes! {
    /// What a layer holds.
    LayerKind {
        /// A grid of cells ([`Layer::cell`]).
        Tiles = 0,
        /// Objects ([`Layer::objects`]).
        Objects = 1,
        /// One image ([`Layer::image`]).
        Image = 2,
        /// Tiles at pixel positions, in draw order ([`Layer::placed`]):
        /// LDtk's tile and auto layers, whose tiles may stack and lie off
        /// the grid.
        Placed = 3,
        /// A grid of integers, not tiles ([`Layer::cells`], each `Cell`'s
        /// number; 0 for none): LDtk's IntGrid, cells [`Layer::cell_size`]
        /// pixels wide.
        Values = 4,
    }
}

codes! {
    /// The shape of an object.
    Shape {
        /// A rectangle of its width and height (also a tile object's).
        Rectangle = 0,
        /// An ellipse in its width and height.
        Ellipse = 1,
        /// A point.
        Point = 2,
        /// A closed polygon ([`Object::points`]).
        Polygon = 3,
        /// An open line ([`Object::points`]).
        Polyline = 4,
        /// Text ([`Object::text`]).
        Text = 5,
    }
}

codes! {
    /// The type of a custom property: how to read its value.
    PropertyType {
        /// Any text.
        String = 0,
        /// An integer.
        Int = 1,
        /// A number.
        Float = 2,
        /// `true` or `false`.
        Bool = 3,
        /// `#AARRGGBB` or `#RRGGBB`, as Tiled writes it.
        Color = 4,
        /// A path, as written (relative to the map).
        File = 5,
        /// An object's id (0 for none).
        Object = 6,
        /// A custom class's members, as a JSON object.
        Class = 7,
    }
}

/// Which axis a staggered or hexagonal map shifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaggerAxis {
    /// Every other column.
    X,
    /// Every other row.
    Y,
}

/// Which rows or columns a staggered or hexagonal map shifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaggerIndex {
    /// The odd ones.
    Odd,
    /// The even ones.
    Even,
}

/// A cell's content: a global tile id with Tiled's flip bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Cell(pub u32);

impl Cell {
    /// The global tile id without flip bits; 0 for an empty cell.
    pub fn gid(self) -> u32 {
        self.0 & !FLIP_BITS
    }

    /// Whether no tile is there.
    pub fn is_empty(self) -> bool {
        self.gid() == 0
    }

    /// Flipped horizontally.
    pub fn flipped_horizontally(self) -> bool {
        self.0 & FLIPPED_HORIZONTALLY != 0
    }

    /// Flipped vertically.
    pub fn flipped_vertically(self) -> bool {
        self.0 & FLIPPED_VERTICALLY != 0
    }

    /// Flipped along its diagonal.
    pub fn flipped_diagonally(self) -> bool {
        self.0 & FLIPPED_DIAGONALLY != 0
    }
}

/// A validated tile map. See the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct TileMap<'a> {
    bytes: Cow<'a, [u8]>,
    /// Where each table starts: tilesets, tiles, frames, layers, objects,
    /// points, properties, cells, placed tiles, strings; then the end.
    at: [usize; 11],
}

/// Table numbers, in layout order.
const TILESETS: usize = 0;
const TILES: usize = 1;
const FRAMES: usize = 2;
const LAYERS: usize = 3;
const OBJECTS: usize = 4;
const POINTS: usize = 5;
const PROPERTIES: usize = 6;
const CELLS: usize = 7;
const PLACED: usize = 8;
const STRINGS: usize = 9;
const END: usize = 10;
const RECORD_LEN: [usize; 10] = [
    TILESET_LEN,
    TILE_LEN,
    FRAME_LEN,
    LAYER_LEN,
    OBJECT_LEN,
    POINT_LEN,
    PROPERTY_LEN,
    CELL_LEN,
    PLACED_LEN,
    1,
];

fn f32_at(bytes: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(bytes, at))
}

fn i32_at(bytes: &[u8], at: usize) -> i32 {
    u32_at(bytes, at) as i32
}

fn rgba_at(bytes: &[u8], at: usize) -> [u8; 4] {
    [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]
}

impl<'a> TileMap<'a> {
    /// Parses and checks a tile map resource's bytes (see the [module
    /// docs](self) for what is checked).
    pub fn parse(bytes: impl Into<Cow<'a, [u8]>>) -> Option<TileMap<'a>> {
        let bytes = bytes.into();
        let b = &bytes[..];
        if b.len() < HEADER_LEN || b[..4] != TILEMAP_MAGIC || u16_at(b, 4) != 1 {
            return None;
        }
        Orientation::from_code(b[6])?;
        RenderOrder::from_code(b[7])?;
        if b[28] > 1 || b[29] > 1 || b[30] & !3 != 0 || b[31] != 0 {
            return None;
        }
        let mut at = [0; 11];
        let mut end = HEADER_LEN;
        for (table, &each) in RECORD_LEN.iter().enumerate() {
            at[table] = end;
            let count = u32_at(b, 36 + 4 * table) as usize;
            end = tables_len(end, &[(count, each)])?;
        }
        at[END] = end;
        if end != b.len() {
            return None;
        }
        let map = TileMap { bytes, at };
        map.check().then_some(map)
    }

    /// Every string, range and code of every record is in bounds.
    fn check(&self) -> bool {
        let b = &self.bytes[..];
        let tilesets_ok = (0..self.count(TILESETS)).all(|i| {
            let r = self.record(TILESETS, i);
            self.strings_ok(&[r + 36, r + 44])
                && self.range_ok(TILES, r + 60)
                && self.range_ok(PROPERTIES, r + 68)
                && u32_at(b, r) >= 1
                && (i == 0 || u32_at(b, self.record(TILESETS, i - 1)) < u32_at(b, r))
        });
        let tiles_ok = (0..self.count(TILES)).all(|i| {
            let r = self.record(TILES, i);
            self.strings_ok(&[r + 4, r + 20])
                && self.range_ok(FRAMES, r + 28)
                && self.range_ok(PROPERTIES, r + 36)
                && self.range_ok(OBJECTS, r + 44)
        });
        let layers_ok = (0..self.count(LAYERS)).all(|i| {
            let r = self.record(LAYERS, i);
            let cells = (u32_at(b, r + 64) as usize).checked_mul(u32_at(b, r + 68) as usize);
            let cells_end = cells.and_then(|n| n.checked_add(u32_at(b, r + 72) as usize));
            LayerKind::from_code(b[r]).is_some()
                && b[r + 1] & !7 == 0
                && u16_at(b, r + 2) == 0
                && self.strings_ok(&[r + 8, r + 16, r + 24, r + 84])
                && cells_end.is_some_and(|end| end <= self.count(CELLS))
                && self.range_ok(OBJECTS, r + 76)
                && self.range_ok(PROPERTIES, r + 92)
                && self.range_ok(PLACED, r + 108)
        });
        let objects_ok = (0..self.count(OBJECTS)).all(|i| {
            let r = self.record(OBJECTS, i);
            Shape::from_code(b[r + 8]).is_some()
                && b[r + 9] & !1 == 0
                && u16_at(b, r + 10) == 0
                && self.strings_ok(&[r + 32, r + 40, r + 48])
                && self.range_ok(POINTS, r + 56)
                && self.range_ok(PROPERTIES, r + 64)
        });
        let properties_ok = (0..self.count(PROPERTIES)).all(|i| {
            let r = self.record(PROPERTIES, i);
            PropertyType::from_code(b[r]).is_some()
                && b[r + 1..r + 4] == [0, 0, 0]
                && self.strings_ok(&[r + 4, r + 12])
        });
        self.strings_ok(&[76])
            && self.range_ok(PROPERTIES, 84)
            && tilesets_ok
            && tiles_ok
            && layers_ok
            && objects_ok
            && properties_ok
    }

    fn count(&self, table: usize) -> usize {
        (self.at[table + 1] - self.at[table]) / RECORD_LEN[table]
    }

    fn record(&self, table: usize, index: usize) -> usize {
        self.at[table] + index * RECORD_LEN[table]
    }

    fn range_ok(&self, table: usize, at: usize) -> bool {
        let b = &self.bytes[..];
        let (first, count) = (u32_at(b, at) as usize, u32_at(b, at + 4) as usize);
        first
            .checked_add(count)
            .is_some_and(|end| end <= self.count(table))
    }

    fn strings_ok(&self, at: &[usize]) -> bool {
        at.iter().all(|&at| {
            self.string_bytes(at)
                .is_some_and(|s| std::str::from_utf8(s).is_ok())
        })
    }

    fn string_bytes(&self, at: usize) -> Option<&[u8]> {
        let b = &self.bytes[..];
        let start = self.at[STRINGS].checked_add(u32_at(b, at) as usize)?;
        let end = start.checked_add(u32_at(b, at + 4) as usize)?;
        if end > self.at[END] {
            return None;
        }
        b.get(start..end)
    }

    /// The string whose `(start, length)` pair is at `at` (checked at parse).
    fn string(&self, at: usize) -> &str {
        (self.string_bytes(at))
            .and_then(|s| std::str::from_utf8(s).ok())
            .unwrap_or("")
    }

    /// The records of the range whose `(first, count)` pair is at `at`.
    fn range(&self, at: usize) -> std::ops::Range<usize> {
        let b = &self.bytes[..];
        let first = u32_at(b, at) as usize;
        first..first + u32_at(b, at + 4) as usize
    }

    fn properties_at(&self, at: usize) -> Properties<'_> {
        Properties {
            map: self,
            range: self.range(at),
        }
    }

    /// How tiles are laid out.
    pub fn orientation(&self) -> Orientation {
        Orientation::from_code(self.bytes[6]).unwrap_or(Orientation::Orthogonal)
    }

    /// In which order the editor draws tiles.
    pub fn render_order(&self) -> RenderOrder {
        RenderOrder::from_code(self.bytes[7]).unwrap_or(RenderOrder::RightDown)
    }

    /// Width and height in tiles: of the map, or of the region an infinite
    /// map's chunks cover.
    pub fn size(&self) -> (u32, u32) {
        (u32_at(&self.bytes, 8), u32_at(&self.bytes, 12))
    }

    /// A tile's width and height in pixels on the grid.
    pub fn tile_size(&self) -> (u32, u32) {
        (u32_at(&self.bytes, 16), u32_at(&self.bytes, 20))
    }

    /// The length of a hexagon's flat side in pixels (hexagonal maps).
    pub fn hex_side_length(&self) -> u32 {
        u32_at(&self.bytes, 24)
    }

    /// Which rows or columns a staggered or hexagonal map shifts.
    pub fn stagger(&self) -> (StaggerAxis, StaggerIndex) {
        let axis = [StaggerAxis::X, StaggerAxis::Y][usize::from(self.bytes[28] & 1)];
        let index = [StaggerIndex::Odd, StaggerIndex::Even][usize::from(self.bytes[29] & 1)];
        (axis, index)
    }

    /// Whether the map was infinite in the editor (its layers' regions
    /// then start where their chunks do: [`Layer::origin`]).
    pub fn infinite(&self) -> bool {
        self.bytes[30] & 1 != 0
    }

    /// The background colour, RGBA, if the map has one.
    pub fn background(&self) -> Option<[u8; 4]> {
        (self.bytes[30] & 2 != 0).then(|| rgba_at(&self.bytes, 32))
    }

    /// The map's class (`""` for none).
    pub fn class(&self) -> &str {
        self.string(76)
    }

    /// The map's custom properties.
    pub fn properties(&self) -> Properties<'_> {
        self.properties_at(84)
    }

    /// The tilesets, by first gid.
    pub fn tilesets(&self) -> impl ExactSizeIterator<Item = Tileset<'_>> + '_ {
        (0..self.count(TILESETS)).map(|i| Tileset {
            map: self,
            at: self.record(TILESETS, i),
        })
    }

    /// The tileset named `name`, if there is one.
    pub fn tileset(&self, name: &str) -> Option<Tileset<'_>> {
        self.tilesets().find(|t| t.name() == name)
    }

    /// The tile a cell shows: its tileset and local id, or `None` for an
    /// empty cell or a gid no tileset holds.
    pub fn tile(&self, cell: Cell) -> Option<(Tileset<'_>, u32)> {
        let gid = cell.gid();
        let tileset = self
            .tilesets()
            .take_while(|t| t.first_gid() <= gid)
            .last()?;
        let local = gid - tileset.first_gid();
        (local < tileset.tile_count()).then_some((tileset, local))
    }

    /// The layers, in draw order (groups flattened).
    pub fn layers(&self) -> impl ExactSizeIterator<Item = Layer<'_>> + '_ {
        (0..self.count(LAYERS)).map(|i| Layer {
            map: self,
            at: self.record(LAYERS, i),
        })
    }

    /// The first layer named `name`, if there is one.
    pub fn layer(&self, name: &str) -> Option<Layer<'_>> {
        self.layers().find(|l| l.name() == name)
    }

    /// The object whose id is `id`, in whichever layer (not a tile's
    /// collision shapes, whose ids count within their tile).
    pub fn object(&self, id: u32) -> Option<Object<'_>> {
        self.layers()
            .flat_map(|l| l.objects())
            .find(|o| o.id() == id)
    }
}

/// A tileset of a [`TileMap`].
#[derive(Debug, Clone, Copy)]
pub struct Tileset<'m> {
    map: &'m TileMap<'m>,
    at: usize,
}

impl<'m> Tileset<'m> {
    fn u32(&self, offset: usize) -> u32 {
        u32_at(&self.map.bytes, self.at + offset)
    }

    /// The gid of its first tile.
    pub fn first_gid(&self) -> u32 {
        self.u32(0)
    }

    /// How many tiles it has.
    pub fn tile_count(&self) -> u32 {
        self.u32(4)
    }

    /// How many tiles a row of its image holds.
    pub fn columns(&self) -> u32 {
        self.u32(8)
    }

    /// A tile's width and height in pixels.
    pub fn tile_size(&self) -> (u32, u32) {
        (self.u32(12), self.u32(16))
    }

    /// Pixels between tiles in its image.
    pub fn spacing(&self) -> u32 {
        self.u32(20)
    }

    /// Pixels around the tiles in its image.
    pub fn margin(&self) -> u32 {
        self.u32(24)
    }

    /// Where its tiles are drawn, relative to their cell, in pixels.
    pub fn offset(&self) -> (i32, i32) {
        let b = &self.map.bytes;
        (i32_at(b, self.at + 28), i32_at(b, self.at + 32))
    }

    /// Its name.
    pub fn name(&self) -> &'m str {
        self.map.string(self.at + 36)
    }

    /// Its image: the resource name (asset path) of an `image` or `sprite`
    /// resource of the parcel; `""` for a collection of images, whose
    /// tiles each name their own ([`Tile::image`]).
    pub fn image(&self) -> &'m str {
        self.map.string(self.at + 44)
    }

    /// Its image's width and height in pixels, as the tileset says.
    pub fn image_size(&self) -> (u32, u32) {
        (self.u32(52), self.u32(56))
    }

    /// Where tile `local` lies in the image: `(x, y, width, height)` in
    /// pixels; `None` past the last tile or for a collection of images.
    pub fn tile_rect(&self, local: u32) -> Option<(u32, u32, u32, u32)> {
        let columns = self.columns();
        if local >= self.tile_count() || columns == 0 || self.image().is_empty() {
            return None;
        }
        let (w, h) = self.tile_size();
        let (col, row) = (local % columns, local / columns);
        let x = self
            .margin()
            .checked_add(col.checked_mul(w.checked_add(self.spacing())?)?)?;
        let y = self
            .margin()
            .checked_add(row.checked_mul(h.checked_add(self.spacing())?)?)?;
        Some((x, y, w, h))
    }

    /// The tiles that have data of their own (an image, an animation, a
    /// class or properties), by local id.
    pub fn tiles(&self) -> impl ExactSizeIterator<Item = Tile<'m>> + use<'m> {
        let map = self.map;
        map.range(self.at + 60).map(move |i| Tile {
            map,
            at: map.record(TILES, i),
        })
    }

    /// Tile `local`'s own data, if it has any.
    pub fn tile(&self, local: u32) -> Option<Tile<'m>> {
        self.tiles().find(|t| t.id() == local)
    }

    /// Its custom properties.
    pub fn properties(&self) -> Properties<'m> {
        self.map.properties_at(self.at + 68)
    }
}

/// A tile of a [`Tileset`] that has data of its own.
#[derive(Debug, Clone, Copy)]
pub struct Tile<'m> {
    map: &'m TileMap<'m>,
    at: usize,
}

impl<'m> Tile<'m> {
    /// Its local id in its tileset.
    pub fn id(&self) -> u32 {
        u32_at(&self.map.bytes, self.at)
    }

    /// Its own image, in a collection of images (a resource name; `""`
    /// otherwise).
    pub fn image(&self) -> &'m str {
        self.map.string(self.at + 4)
    }

    /// Its own image's width and height.
    pub fn image_size(&self) -> (u32, u32) {
        let b = &self.map.bytes;
        (u32_at(b, self.at + 12), u32_at(b, self.at + 16))
    }

    /// Its class (`""` for none).
    pub fn class(&self) -> &'m str {
        self.map.string(self.at + 20)
    }

    /// Its animation: each frame's local tile id and duration in
    /// milliseconds; empty if it does not animate.
    pub fn animation(&self) -> impl ExactSizeIterator<Item = (u32, u32)> + use<'m> {
        let map = self.map;
        map.range(self.at + 28).map(move |i| {
            let r = map.record(FRAMES, i);
            (u32_at(&map.bytes, r), u32_at(&map.bytes, r + 4))
        })
    }

    /// Its custom properties.
    pub fn properties(&self) -> Properties<'m> {
        self.map.properties_at(self.at + 36)
    }

    /// Its collision shapes (Tiled's tile collision editor), positioned
    /// relative to the tile's top-left corner.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = Object<'m>> + use<'m> {
        let map = self.map;
        map.range(self.at + 44).map(move |i| Object {
            map,
            at: map.record(OBJECTS, i),
        })
    }
}

/// A layer of a [`TileMap`].
#[derive(Debug, Clone, Copy)]
pub struct Layer<'m> {
    map: &'m TileMap<'m>,
    at: usize,
}

impl<'m> Layer<'m> {
    fn f32(&self, offset: usize) -> f32 {
        f32_at(&self.map.bytes, self.at + offset)
    }

    /// What it holds.
    pub fn kind(&self) -> LayerKind {
        LayerKind::from_code(self.map.bytes[self.at]).unwrap_or(LayerKind::Tiles)
    }

    /// Whether it is shown (and every group it is in).
    pub fn visible(&self) -> bool {
        self.map.bytes[self.at + 1] & 1 != 0
    }

    /// Whether its image repeats along x and along y (image layers).
    pub fn repeat(&self) -> (bool, bool) {
        let flags = self.map.bytes[self.at + 1];
        (flags & 2 != 0, flags & 4 != 0)
    }

    /// Its id in the map.
    pub fn id(&self) -> u32 {
        u32_at(&self.map.bytes, self.at + 4)
    }

    /// Its name.
    pub fn name(&self) -> &'m str {
        self.map.string(self.at + 8)
    }

    /// The names of the groups it is in, outermost first, joined by `/`
    /// (`""` at the top level).
    pub fn groups(&self) -> &'m str {
        self.map.string(self.at + 16)
    }

    /// Its class (`""` for none).
    pub fn class(&self) -> &'m str {
        self.map.string(self.at + 24)
    }

    /// Its opacity, its groups' multiplied in.
    pub fn opacity(&self) -> f32 {
        self.f32(32)
    }

    /// Where it is drawn relative to the map, in pixels, its groups'
    /// offsets added.
    pub fn offset(&self) -> (f32, f32) {
        (self.f32(36), self.f32(40))
    }

    /// How fast it scrolls with the camera (1 = with the map), its groups'
    /// factors multiplied in.
    pub fn parallax(&self) -> (f32, f32) {
        (self.f32(44), self.f32(48))
    }

    /// The colour its pixels are multiplied by, RGBA (white for none), its
    /// groups' tints multiplied in.
    pub fn tint(&self) -> [u8; 4] {
        rgba_at(&self.map.bytes, self.at + 52)
    }

    /// The tile coordinates of its cells' first cell: `(0, 0)` in a finite
    /// map; where its chunks start in an infinite one.
    pub fn origin(&self) -> (i32, i32) {
        let b = &self.map.bytes;
        (i32_at(b, self.at + 56), i32_at(b, self.at + 60))
    }

    /// Its cells' width and height (zero unless a tile layer).
    pub fn size(&self) -> (u32, u32) {
        let b = &self.map.bytes;
        (u32_at(b, self.at + 64), u32_at(b, self.at + 68))
    }

    /// The cell at tile coordinates `(x, y)` of the map (an empty cell
    /// outside its region).
    pub fn cell(&self, x: i32, y: i32) -> Cell {
        let (ox, oy) = self.origin();
        let (w, h) = self.size();
        let (dx, dy) = (i64::from(x) - i64::from(ox), i64::from(y) - i64::from(oy));
        if dx < 0 || dy < 0 || dx >= i64::from(w) || dy >= i64::from(h) {
            return Cell(0);
        }
        let first = u32_at(&self.map.bytes, self.at + 72) as usize;
        let index = first + (dy * i64::from(w) + dx) as usize;
        Cell(u32_at(&self.map.bytes, self.map.record(CELLS, index)))
    }

    /// Its cells, row by row from [`Layer::origin`].
    pub fn cells(&self) -> impl ExactSizeIterator<Item = Cell> + use<'m> {
        let map = self.map;
        let (w, h) = self.size();
        let first = u32_at(&map.bytes, self.at + 72) as usize;
        (first..first + w as usize * h as usize)
            .map(move |i| Cell(u32_at(&map.bytes, map.record(CELLS, i))))
    }

    /// Its objects (object layers), in the order drawn.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = Object<'m>> + use<'m> {
        let map = self.map;
        map.range(self.at + 76).map(move |i| Object {
            map,
            at: map.record(OBJECTS, i),
        })
    }

    /// Its image (image layers): a resource name; `""` otherwise.
    pub fn image(&self) -> &'m str {
        self.map.string(self.at + 84)
    }

    /// Its custom properties.
    pub fn properties(&self) -> Properties<'m> {
        self.map.properties_at(self.at + 92)
    }

    /// The width and height of one of its cells in pixels: the map's tile
    /// size, or an LDtk layer's own grid.
    pub fn cell_size(&self) -> (u32, u32) {
        let b = &self.map.bytes;
        (u32_at(b, self.at + 100), u32_at(b, self.at + 104))
    }

    /// Its tiles at pixel positions (placed-tile layers), in the order
    /// drawn: later ones over earlier ones.
    pub fn placed(&self) -> impl ExactSizeIterator<Item = PlacedTile> + use<'m> {
        let map = self.map;
        map.range(self.at + 108).map(move |i| {
            let r = map.record(PLACED, i);
            let b = &map.bytes;
            PlacedTile {
                x: i32_at(b, r),
                y: i32_at(b, r + 4),
                tile: Cell(u32_at(b, r + 8)),
                opacity: f32_at(b, r + 12),
            }
        })
    }
}

/// A tile of a placed-tile layer ([`Layer::placed`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacedTile {
    /// Where its top-left corner is drawn, in pixels from the layer's
    /// origin (before [`Layer::offset`]).
    pub x: i32,
    /// Where its top-left corner is drawn.
    pub y: i32,
    /// Its tile, with flip bits ([`TileMap::tile`]).
    pub tile: Cell,
    /// Its own opacity, times the layer's.
    pub opacity: f32,
}

/// An object of an object layer.
#[derive(Debug, Clone, Copy)]
pub struct Object<'m> {
    map: &'m TileMap<'m>,
    at: usize,
}

impl<'m> Object<'m> {
    fn f32(&self, offset: usize) -> f32 {
        f32_at(&self.map.bytes, self.at + offset)
    }

    /// Its id, unique in the map.
    pub fn id(&self) -> u32 {
        u32_at(&self.map.bytes, self.at)
    }

    /// The tile it shows (a tile object), else an empty cell.
    pub fn tile(&self) -> Cell {
        Cell(u32_at(&self.map.bytes, self.at + 4))
    }

    /// Its shape.
    pub fn shape(&self) -> Shape {
        Shape::from_code(self.map.bytes[self.at + 8]).unwrap_or(Shape::Rectangle)
    }

    /// Whether it is shown.
    pub fn visible(&self) -> bool {
        self.map.bytes[self.at + 9] & 1 != 0
    }

    /// Where it is, in pixels (a tile object: its bottom-left corner, as
    /// Tiled places them).
    pub fn position(&self) -> (f32, f32) {
        (self.f32(12), self.f32(16))
    }

    /// Its width and height in pixels.
    pub fn size(&self) -> (f32, f32) {
        (self.f32(20), self.f32(24))
    }

    /// Its rotation in degrees, clockwise, around its position.
    pub fn rotation(&self) -> f32 {
        self.f32(28)
    }

    /// Its name.
    pub fn name(&self) -> &'m str {
        self.map.string(self.at + 32)
    }

    /// Its class (`""` for none).
    pub fn class(&self) -> &'m str {
        self.map.string(self.at + 40)
    }

    /// Its text (text objects).
    pub fn text(&self) -> &'m str {
        self.map.string(self.at + 48)
    }

    /// Its points relative to its position (polygons and polylines).
    pub fn points(&self) -> impl ExactSizeIterator<Item = (f32, f32)> + use<'m> {
        let map = self.map;
        map.range(self.at + 56).map(move |i| {
            let r = map.record(POINTS, i);
            (f32_at(&map.bytes, r), f32_at(&map.bytes, r + 4))
        })
    }

    /// Its custom properties (a template's, under the object's own).
    pub fn properties(&self) -> Properties<'m> {
        self.map.properties_at(self.at + 64)
    }
}

/// Custom properties of a map, tileset, tile, layer or object, as authored.
#[derive(Debug, Clone)]
pub struct Properties<'m> {
    map: &'m TileMap<'m>,
    range: std::ops::Range<usize>,
}

impl<'m> Properties<'m> {
    /// The property named `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<Property<'m>> {
        self.clone().find(|p| p.name == name)
    }
}

impl<'m> Iterator for Properties<'m> {
    type Item = Property<'m>;

    fn next(&mut self) -> Option<Property<'m>> {
        let i = self.range.next()?;
        let r = self.map.record(PROPERTIES, i);
        Some(Property {
            kind: PropertyType::from_code(self.map.bytes[r]).unwrap_or(PropertyType::String),
            name: self.map.string(r + 4),
            value: self.map.string(r + 12),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl ExactSizeIterator for Properties<'_> {}

/// One custom property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Property<'m> {
    /// Its name.
    pub name: &'m str,
    /// Its type.
    pub kind: PropertyType,
    /// Its value as Tiled writes it.
    pub value: &'m str,
}

impl Property<'_> {
    /// Its value as an integer (`int` and `object` properties).
    pub fn as_int(&self) -> Option<i64> {
        self.value.parse().ok()
    }

    /// Its value as a number (`float` and `int` properties).
    pub fn as_float(&self) -> Option<f64> {
        self.value.parse().ok()
    }

    /// Its value as a boolean (`bool` properties).
    pub fn as_bool(&self) -> Option<bool> {
        self.value.parse().ok()
    }

    /// Its value as RGBA (`color` properties: `#AARRGGBB` or `#RRGGBB`).
    pub fn as_color(&self) -> Option<[u8; 4]> {
        parse_color(self.value)
    }
}

/// RGBA of a colour written as Tiled writes them: `#AARRGGBB` or
/// `#RRGGBB` (the `#` optional).
pub fn parse_color(text: &str) -> Option<[u8; 4]> {
    let hex = text.strip_prefix('#').unwrap_or(text);
    if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let value = u32::from_str_radix(hex, 16).ok()?;
    let [a, r, g, b] = match hex.len() {
        8 => value.to_be_bytes(),
        6 => (value | 0xff00_0000).to_be_bytes(),
        _ => return None,
    };
    Some([r, g, b, a])
}

/// The writer's half: the `tilemap` processor fills these and encodes them
/// (behind the `write` feature).
#[cfg(feature = "write")]
pub mod write {
    use super::*;

    /// A custom property.
    #[derive(Debug, Clone, PartialEq)]
    pub struct PropertySpec {
        /// Its name.
        pub name: String,
        /// Its type.
        pub kind: PropertyType,
        /// Its value as Tiled writes it.
        pub value: String,
    }

    /// A tile with data of its own.
    #[derive(Debug, Clone, PartialEq, Default)]
    pub struct TileSpec {
        /// Its local id.
        pub id: u32,
        /// Its own image (resource name), in a collection of images.
        pub image: String,
        /// That image's size.
        pub image_size: (u32, u32),
        /// Its class.
        pub class: String,
        /// Its animation: local tile id and duration in ms of each frame.
        pub animation: Vec<(u32, u32)>,
        /// Its properties.
        pub properties: Vec<PropertySpec>,
        /// Its collision shapes, relative to the tile.
        pub objects: Vec<ObjectSpec>,
    }

    /// A tileset.
    #[derive(Debug, Clone, PartialEq, Default)]
    pub struct TilesetSpec {
        /// The gid of its first tile.
        pub first_gid: u32,
        /// Its name.
        pub name: String,
        /// How many tiles.
        pub tile_count: u32,
        /// Tiles per row of its image.
        pub columns: u32,
        /// A tile's size.
        pub tile_size: (u32, u32),
        /// Pixels between tiles.
        pub spacing: u32,
        /// Pixels around the tiles.
        pub margin: u32,
        /// Drawing offset.
        pub offset: (i32, i32),
        /// Its image (resource name); empty for a collection of images.
        pub image: String,
        /// Its image's size.
        pub image_size: (u32, u32),
        /// Tiles with data of their own, by id.
        pub tiles: Vec<TileSpec>,
        /// Its properties.
        pub properties: Vec<PropertySpec>,
    }

    /// An object.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ObjectSpec {
        /// Its id.
        pub id: u32,
        /// The tile it shows, with flip bits; 0 for none.
        pub gid: u32,
        /// Its shape.
        pub shape: Shape,
        /// Shown.
        pub visible: bool,
        /// Position, size, rotation.
        pub x: f32,
        /// Position.
        pub y: f32,
        /// Size.
        pub width: f32,
        /// Size.
        pub height: f32,
        /// Degrees clockwise.
        pub rotation: f32,
        /// Its name.
        pub name: String,
        /// Its class.
        pub class: String,
        /// Its text (text objects).
        pub text: String,
        /// Its points (polygons, polylines).
        pub points: Vec<(f32, f32)>,
        /// Its properties.
        pub properties: Vec<PropertySpec>,
    }

    /// What a layer holds.
    #[derive(Debug, Clone, PartialEq)]
    pub enum LayerData {
        /// Cells (gids with flip bits), row by row, of a region.
        Tiles {
            /// The region's first cell's tile coordinates.
            origin: (i32, i32),
            /// The region's width and height.
            size: (u32, u32),
            /// `size.0 × size.1` cells.
            cells: Vec<u32>,
        },
        /// Objects.
        Objects(Vec<ObjectSpec>),
        /// Tiles at pixel positions, in draw order.
        Placed(Vec<PlacedTile>),
        /// Integers on a grid (LDtk's IntGrid), row by row, of a region.
        Values {
            /// The region's first cell's coordinates, in cells.
            origin: (i32, i32),
            /// The region's width and height in cells.
            size: (u32, u32),
            /// `size.0 × size.1` values.
            values: Vec<u32>,
        },
        /// One image (resource name), maybe repeated along x and y.
        Image {
            /// Its resource name.
            image: String,
            /// Repeats along x, along y.
            repeat: (bool, bool),
        },
    }

    /// A layer, its groups already combined in.
    #[derive(Debug, Clone, PartialEq)]
    pub struct LayerSpec {
        /// Its id.
        pub id: u32,
        /// Its name.
        pub name: String,
        /// Its groups' names, outermost first, joined by `/`.
        pub groups: String,
        /// Its class.
        pub class: String,
        /// Shown.
        pub visible: bool,
        /// Opacity.
        pub opacity: f32,
        /// Offset in pixels.
        pub offset: (f32, f32),
        /// Parallax factors.
        pub parallax: (f32, f32),
        /// Tint, RGBA.
        pub tint: [u8; 4],
        /// A cell's width and height in pixels.
        pub cell_size: (u32, u32),
        /// What it holds.
        pub data: LayerData,
        /// Its properties.
        pub properties: Vec<PropertySpec>,
    }

    impl LayerSpec {
        /// A top-level layer shown as authored: visible, opaque, in place,
        /// scrolling with the map, untinted, without class or properties.
        pub fn new(id: u32, name: &str, cell_size: (u32, u32), data: LayerData) -> LayerSpec {
            LayerSpec {
                id,
                name: name.to_owned(),
                groups: String::new(),
                class: String::new(),
                visible: true,
                opacity: 1.0,
                offset: (0.0, 0.0),
                parallax: (1.0, 1.0),
                tint: [255; 4],
                cell_size,
                data,
                properties: Vec::new(),
            }
        }
    }

    /// A whole map.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TileMapSpec {
        /// Layout.
        pub orientation: Orientation,
        /// Drawing order.
        pub render_order: RenderOrder,
        /// Size in tiles.
        pub size: (u32, u32),
        /// Grid tile size in pixels.
        pub tile_size: (u32, u32),
        /// Hexagonal maps' side length.
        pub hex_side_length: u32,
        /// Staggered and hexagonal maps.
        pub stagger: (StaggerAxis, StaggerIndex),
        /// Infinite in the editor.
        pub infinite: bool,
        /// Background colour, RGBA.
        pub background: Option<[u8; 4]>,
        /// Its class.
        pub class: String,
        /// Its properties.
        pub properties: Vec<PropertySpec>,
        /// Tilesets, by first gid.
        pub tilesets: Vec<TilesetSpec>,
        /// Layers in draw order.
        pub layers: Vec<LayerSpec>,
    }

    /// The tables being written.
    #[derive(Default)]
    struct Tables {
        tilesets: Vec<u8>,
        tiles: Vec<u8>,
        frames: Vec<u8>,
        layers: Vec<u8>,
        objects: Vec<u8>,
        points: Vec<u8>,
        properties: Vec<u8>,
        cells: Vec<u8>,
        placed: Vec<u8>,
        strings: Vec<u8>,
    }

    fn word(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    fn float(out: &mut Vec<u8>, v: f32) {
        word(out, v.to_bits());
    }

    fn count(n: usize) -> u32 {
        u32::try_from(n).expect("a tile map's tables hold fewer than 2^32 records")
    }

    /// A `(first, count)` pair.
    fn pair(first: usize, n: usize) -> [u8; 8] {
        let mut out = [0; 8];
        out[..4].copy_from_slice(&count(first).to_le_bytes());
        out[4..].copy_from_slice(&count(n).to_le_bytes());
        out
    }

    impl Tables {
        /// Adds `s` to the strings; its `(start, length)` pair.
        fn string(&mut self, s: &str) -> [u8; 8] {
            let start = self.strings.len();
            self.strings.extend_from_slice(s.as_bytes());
            pair(start, s.len())
        }

        /// Adds `objects` to their table (their points and properties to
        /// theirs); their range.
        fn objects(&mut self, objects: &[ObjectSpec]) -> [u8; 8] {
            let first = self.objects.len() / OBJECT_LEN;
            for o in objects {
                let (name, class, text) = (
                    self.string(&o.name),
                    self.string(&o.class),
                    self.string(&o.text),
                );
                let points = pair(self.points.len() / POINT_LEN, o.points.len());
                for &(x, y) in &o.points {
                    float(&mut self.points, x);
                    float(&mut self.points, y);
                }
                let properties = self.properties(&o.properties);
                let b = &mut self.objects;
                word(b, o.id);
                word(b, o.gid);
                b.extend_from_slice(&[o.shape.code(), u8::from(o.visible), 0, 0]);
                for v in [o.x, o.y, o.width, o.height, o.rotation] {
                    float(b, v);
                }
                for field in [name, class, text, points, properties] {
                    b.extend_from_slice(&field);
                }
            }
            pair(first, objects.len())
        }

        /// Adds `properties` to their table; their range.
        fn properties(&mut self, properties: &[PropertySpec]) -> [u8; 8] {
            let first = self.properties.len() / PROPERTY_LEN;
            for p in properties {
                let (name, value) = (self.string(&p.name), self.string(&p.value));
                self.properties.extend_from_slice(&[p.kind.code(), 0, 0, 0]);
                self.properties.extend_from_slice(&name);
                self.properties.extend_from_slice(&value);
            }
            pair(first, properties.len())
        }
    }

    impl TileMapSpec {
        /// The resource's bytes.
        pub fn encode(&self) -> Vec<u8> {
            let mut t = Tables::default();
            let mut tail = Vec::new();
            tail.extend_from_slice(&t.string(&self.class));
            tail.extend_from_slice(&t.properties(&self.properties));
            for ts in &self.tilesets {
                let b = &mut t.tilesets;
                for v in [
                    ts.first_gid,
                    ts.tile_count,
                    ts.columns,
                    ts.tile_size.0,
                    ts.tile_size.1,
                    ts.spacing,
                    ts.margin,
                    ts.offset.0 as u32,
                    ts.offset.1 as u32,
                ] {
                    word(b, v);
                }
                let v = t.string(&ts.name);
                t.tilesets.extend_from_slice(&v);
                let v = t.string(&ts.image);
                t.tilesets.extend_from_slice(&v);
                word(&mut t.tilesets, ts.image_size.0);
                word(&mut t.tilesets, ts.image_size.1);
                word(&mut t.tilesets, count(t.tiles.len() / TILE_LEN));
                word(&mut t.tilesets, count(ts.tiles.len()));
                for tile in &ts.tiles {
                    word(&mut t.tiles, tile.id);
                    let v = t.string(&tile.image);
                    t.tiles.extend_from_slice(&v);
                    word(&mut t.tiles, tile.image_size.0);
                    word(&mut t.tiles, tile.image_size.1);
                    let v = t.string(&tile.class);
                    t.tiles.extend_from_slice(&v);
                    word(&mut t.tiles, count(t.frames.len() / FRAME_LEN));
                    word(&mut t.tiles, count(tile.animation.len()));
                    for &(id, ms) in &tile.animation {
                        word(&mut t.frames, id);
                        word(&mut t.frames, ms);
                    }
                    let v = t.properties(&tile.properties);
                    t.tiles.extend_from_slice(&v);
                    let v = t.objects(&tile.objects);
                    t.tiles.extend_from_slice(&v);
                }
                let v = t.properties(&ts.properties);
                t.tilesets.extend_from_slice(&v);
            }
            for layer in &self.layers {
                let (kind, repeat, origin, size, image) = match &layer.data {
                    LayerData::Tiles { origin, size, .. } => {
                        (LayerKind::Tiles, (false, false), *origin, *size, "")
                    }
                    LayerData::Objects(_) => {
                        (LayerKind::Objects, (false, false), (0, 0), (0, 0), "")
                    }
                    LayerData::Image { image, repeat } => {
                        (LayerKind::Image, *repeat, (0, 0), (0, 0), image.as_str())
                    }
                    LayerData::Placed(_) => (LayerKind::Placed, (false, false), (0, 0), (0, 0), ""),
                    LayerData::Values { origin, size, .. } => {
                        (LayerKind::Values, (false, false), *origin, *size, "")
                    }
                };
                let flags =
                    u8::from(layer.visible) | u8::from(repeat.0) << 1 | u8::from(repeat.1) << 2;
                t.layers.extend_from_slice(&[kind.code(), flags, 0, 0]);
                word(&mut t.layers, layer.id);
                let v = t.string(&layer.name);
                t.layers.extend_from_slice(&v);
                let v = t.string(&layer.groups);
                t.layers.extend_from_slice(&v);
                let v = t.string(&layer.class);
                t.layers.extend_from_slice(&v);
                let b = &mut t.layers;
                for v in [
                    layer.opacity,
                    layer.offset.0,
                    layer.offset.1,
                    layer.parallax.0,
                    layer.parallax.1,
                ] {
                    float(b, v);
                }
                b.extend_from_slice(&layer.tint);
                for v in [origin.0 as u32, origin.1 as u32, size.0, size.1] {
                    word(b, v);
                }
                word(b, count(t.cells.len() / CELL_LEN));
                if let LayerData::Tiles { cells, .. } | LayerData::Values { values: cells, .. } =
                    &layer.data
                {
                    debug_assert_eq!(cells.len(), size.0 as usize * size.1 as usize);
                    for &c in cells {
                        word(&mut t.cells, c);
                    }
                }
                let objects: &[ObjectSpec] = match &layer.data {
                    LayerData::Objects(objects) => objects,
                    _ => &[],
                };
                let v = t.objects(objects);
                t.layers.extend_from_slice(&v);
                let v = t.string(image);
                t.layers.extend_from_slice(&v);
                let v = t.properties(&layer.properties);
                t.layers.extend_from_slice(&v);
                word(&mut t.layers, layer.cell_size.0);
                word(&mut t.layers, layer.cell_size.1);
                let placed: &[PlacedTile] = match &layer.data {
                    LayerData::Placed(placed) => placed,
                    _ => &[],
                };
                word(&mut t.layers, count(t.placed.len() / PLACED_LEN));
                word(&mut t.layers, count(placed.len()));
                for p in placed {
                    for v in [p.x as u32, p.y as u32, p.tile.0, p.opacity.to_bits()] {
                        word(&mut t.placed, v);
                    }
                }
            }

            let mut out = Vec::new();
            out.extend_from_slice(&TILEMAP_MAGIC);
            out.extend_from_slice(&1u16.to_le_bytes());
            out.extend_from_slice(&[self.orientation.code(), self.render_order.code()]);
            for v in [
                self.size.0,
                self.size.1,
                self.tile_size.0,
                self.tile_size.1,
                self.hex_side_length,
            ] {
                word(&mut out, v);
            }
            let flags = u8::from(self.infinite) | u8::from(self.background.is_some()) << 1;
            out.extend_from_slice(&[
                u8::from(self.stagger.0 == StaggerAxis::Y),
                u8::from(self.stagger.1 == StaggerIndex::Even),
                flags,
                0,
            ]);
            out.extend_from_slice(&self.background.unwrap_or_default());
            let tables = [
                (&t.tilesets, TILESET_LEN),
                (&t.tiles, TILE_LEN),
                (&t.frames, FRAME_LEN),
                (&t.layers, LAYER_LEN),
                (&t.objects, OBJECT_LEN),
                (&t.points, POINT_LEN),
                (&t.properties, PROPERTY_LEN),
                (&t.cells, CELL_LEN),
                (&t.placed, PLACED_LEN),
                (&t.strings, 1),
            ];
            for (table, each) in tables {
                debug_assert_eq!(table.len() % each, 0);
                word(&mut out, count(table.len() / each));
            }
            out.extend_from_slice(&tail);
            for (table, _) in tables {
                out.extend_from_slice(table);
            }
            out
        }
    }
}

#[cfg(all(test, feature = "write"))]
pub(crate) mod tests {
    use super::write::*;
    use super::*;

    fn property(name: &str, kind: PropertyType, value: &str) -> PropertySpec {
        PropertySpec {
            name: name.into(),
            kind,
            value: value.into(),
        }
    }

    pub(crate) fn sample() -> TileMapSpec {
        TileMapSpec {
            orientation: Orientation::Orthogonal,
            render_order: RenderOrder::RightDown,
            size: (3, 2),
            tile_size: (16, 16),
            hex_side_length: 0,
            stagger: (StaggerAxis::Y, StaggerIndex::Odd),
            infinite: false,
            background: Some([1, 2, 3, 255]),
            class: "level".into(),
            properties: vec![property("music", PropertyType::File, "../music/cave é.ogg")],
            tilesets: vec![
                TilesetSpec {
                    first_gid: 1,
                    name: "Terrain".into(),
                    tile_count: 4,
                    columns: 2,
                    tile_size: (16, 16),
                    spacing: 1,
                    margin: 2,
                    image: "tilesets/terrain tiles.png".into(),
                    image_size: (37, 37),
                    tiles: vec![TileSpec {
                        id: 3,
                        class: "water".into(),
                        animation: vec![(3, 100), (2, 150)],
                        properties: vec![property("solid", PropertyType::Bool, "false")],
                        objects: vec![ObjectSpec {
                            id: 1,
                            gid: 0,
                            shape: Shape::Ellipse,
                            visible: true,
                            x: 1.0,
                            y: 2.0,
                            width: 8.0,
                            height: 4.0,
                            rotation: 0.0,
                            name: "bubble".into(),
                            class: String::new(),
                            text: String::new(),
                            points: vec![],
                            properties: vec![],
                        }],
                        ..TileSpec::default()
                    }],
                    ..TilesetSpec::default()
                },
                TilesetSpec {
                    first_gid: 5,
                    name: "Props".into(),
                    tile_count: 1,
                    tile_size: (32, 48),
                    tiles: vec![TileSpec {
                        id: 0,
                        image: "props/tree.png".into(),
                        image_size: (32, 48),
                        ..TileSpec::default()
                    }],
                    ..TilesetSpec::default()
                },
            ],
            layers: vec![
                LayerSpec::new(
                    1,
                    "Ground",
                    (16, 16),
                    LayerData::Tiles {
                        origin: (0, 0),
                        size: (3, 2),
                        cells: vec![1, 2, 0, 4 | FLIPPED_HORIZONTALLY, 5, 9],
                    },
                ),
                LayerSpec {
                    id: 4,
                    name: "Spawns".into(),
                    groups: "World/Things".into(),
                    class: String::new(),
                    visible: false,
                    opacity: 0.25,
                    offset: (8.0, -4.5),
                    parallax: (0.5, 1.0),
                    tint: [255, 128, 0, 255],
                    cell_size: (16, 16),
                    data: LayerData::Objects(vec![ObjectSpec {
                        id: 7,
                        gid: 0,
                        shape: Shape::Polygon,
                        visible: true,
                        x: 10.0,
                        y: 20.5,
                        width: 0.0,
                        height: 0.0,
                        rotation: 45.0,
                        name: "door".into(),
                        class: "trigger".into(),
                        text: String::new(),
                        points: vec![(0.0, 0.0), (4.0, 0.0), (2.0, 3.0)],
                        properties: vec![property("to", PropertyType::Object, "12")],
                    }]),
                    properties: vec![property("spawn", PropertyType::Int, "-3")],
                },
                LayerSpec {
                    parallax: (0.1, 0.1),
                    ..LayerSpec::new(
                        5,
                        "Sky",
                        (16, 16),
                        LayerData::Image {
                            image: "images/sky.png".into(),
                            repeat: (true, false),
                        },
                    )
                },
                LayerSpec::new(
                    6,
                    "Walls",
                    (8, 8),
                    LayerData::Placed(vec![
                        PlacedTile {
                            x: 0,
                            y: 0,
                            tile: Cell(2),
                            opacity: 1.0,
                        },
                        PlacedTile {
                            x: 4,
                            y: -8,
                            tile: Cell(3 | FLIPPED_VERTICALLY),
                            opacity: 0.5,
                        },
                    ]),
                ),
                LayerSpec::new(
                    7,
                    "Collisions",
                    (8, 8),
                    LayerData::Values {
                        origin: (0, 0),
                        size: (2, 2),
                        values: vec![1, 0, 0, 3],
                    },
                ),
            ],
        }
    }

    #[test]
    fn a_map_round_trips() {
        let bytes = sample().encode();
        let map = TileMap::parse(&bytes[..]).expect("valid");
        assert_eq!(map.orientation(), Orientation::Orthogonal);
        assert_eq!((map.size(), map.tile_size()), ((3, 2), (16, 16)));
        assert_eq!(map.background(), Some([1, 2, 3, 255]));
        assert!(!map.infinite());
        assert_eq!(map.class(), "level");
        let music = map.properties().get("music").expect("property");
        assert_eq!(
            (music.kind, music.value),
            (PropertyType::File, "../music/cave é.ogg")
        );

        let terrain = map.tileset("Terrain").expect("tileset");
        assert_eq!(terrain.image(), "tilesets/terrain tiles.png");
        assert_eq!(terrain.tile_rect(3), Some((19, 19, 16, 16)));
        assert_eq!(terrain.tile_rect(4), None);
        let water = terrain.tile(3).expect("tile 3");
        assert_eq!(water.class(), "water");
        assert_eq!(water.animation().collect::<Vec<_>>(), [(3, 100), (2, 150)]);
        assert_eq!(
            water.properties().get("solid").unwrap().as_bool(),
            Some(false)
        );
        assert!(terrain.tile(0).is_none());
        let bubble = water.objects().next().expect("a collision shape");
        assert_eq!(
            (bubble.name(), bubble.shape(), bubble.size()),
            ("bubble", Shape::Ellipse, (8.0, 4.0))
        );

        let ground = map.layer("Ground").expect("layer");
        assert_eq!(ground.kind(), LayerKind::Tiles);
        let cells: Vec<u32> = ground.cells().map(Cell::gid).collect();
        assert_eq!(cells, [1, 2, 0, 4, 5, 9]);
        let flipped = ground.cell(0, 1);
        assert!(flipped.flipped_horizontally() && !flipped.flipped_vertically());
        assert_eq!(ground.cell(3, 0), Cell(0));
        assert_eq!(ground.cell(-1, 0), Cell(0));
        let (tileset, local) = map.tile(flipped).expect("a tile");
        assert_eq!((tileset.name(), local), ("Terrain", 3));
        let (props, local) = map.tile(ground.cell(1, 1)).expect("a tile");
        assert_eq!((props.name(), local), ("Props", 0));
        assert_eq!(props.tile(0).unwrap().image(), "props/tree.png");
        assert!(
            map.tile(ground.cell(2, 1)).is_none(),
            "gid 9 is no tileset's"
        );
        assert!(map.tile(Cell(0)).is_none());

        let spawns = map.layer("Spawns").expect("layer");
        assert_eq!(
            (spawns.groups(), spawns.visible(), spawns.opacity()),
            ("World/Things", false, 0.25)
        );
        assert_eq!(
            (spawns.offset(), spawns.parallax()),
            ((8.0, -4.5), (0.5, 1.0))
        );
        assert_eq!(spawns.tint(), [255, 128, 0, 255]);
        assert_eq!(spawns.properties().get("spawn").unwrap().as_int(), Some(-3));
        let door = spawns.objects().next().expect("object");
        assert_eq!(
            (door.id(), door.name(), door.class()),
            (7, "door", "trigger")
        );
        assert_eq!(
            (door.shape(), door.position(), door.rotation()),
            (Shape::Polygon, (10.0, 20.5), 45.0)
        );
        assert_eq!(
            door.points().collect::<Vec<_>>(),
            [(0.0, 0.0), (4.0, 0.0), (2.0, 3.0)]
        );
        assert_eq!(
            map.object(7)
                .unwrap()
                .properties()
                .get("to")
                .unwrap()
                .as_int(),
            Some(12)
        );
        assert!(map.object(8).is_none());

        let sky = map.layer("Sky").expect("layer");
        assert_eq!(
            (sky.kind(), sky.image(), sky.repeat()),
            (LayerKind::Image, "images/sky.png", (true, false))
        );
        assert_eq!(sky.size(), (0, 0));
        assert_eq!(sky.cells().count(), 0);

        let walls = map.layer("Walls").expect("layer");
        assert_eq!(
            (walls.kind(), walls.cell_size()),
            (LayerKind::Placed, (8, 8))
        );
        let placed: Vec<PlacedTile> = walls.placed().collect();
        assert_eq!(
            placed[1],
            PlacedTile {
                x: 4,
                y: -8,
                tile: Cell(3 | FLIPPED_VERTICALLY),
                opacity: 0.5
            }
        );
        assert_eq!(walls.cells().count(), 0);
        let collisions = map.layer("Collisions").expect("layer");
        assert_eq!(collisions.kind(), LayerKind::Values);
        assert_eq!(collisions.cell(1, 1), Cell(3));
        assert_eq!(ground.placed().count(), 0);
    }

    #[test]
    fn colours_read_as_tiled_writes_them() {
        assert_eq!(parse_color("#80ff0000"), Some([255, 0, 0, 128]));
        assert_eq!(parse_color("#00ff00"), Some([0, 255, 0, 255]));
        assert_eq!(parse_color("ff0000"), Some([255, 0, 0, 255]));
        assert_eq!(parse_color("#ff00"), None);
        assert_eq!(parse_color("#+f0000"), None);
    }

    #[test]
    fn every_truncation_and_many_byte_flips_are_refused_or_read_safely() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(
                TileMap::parse(&bytes[..len]).is_none(),
                "truncated to {len}"
            );
        }
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= flip;
                if let Some(map) = TileMap::parse(&b[..]) {
                    // Whatever survives still reads without panicking.
                    let _ = (map.class(), map.properties().count(), map.background());
                    for t in map.tilesets() {
                        let _ = (t.name(), t.image(), t.tile_rect(3), t.properties().count());
                        for tile in t.tiles() {
                            let _ = tile.objects().map(|o| o.points().count()).sum::<usize>();
                            let _ = (
                                tile.image(),
                                tile.animation().count(),
                                tile.properties().count(),
                            );
                        }
                    }
                    for l in map.layers() {
                        let _ = (
                            l.name(),
                            l.groups(),
                            l.image(),
                            l.cell(1, 1),
                            l.properties().count(),
                        );
                        let _ = (
                            l.cell_size(),
                            l.placed().filter(|p| map.tile(p.tile).is_some()).count(),
                        );
                        for c in l.cells() {
                            let _ = map.tile(c);
                        }
                        for o in l.objects() {
                            let _ = (
                                o.name(),
                                o.text(),
                                o.points().count(),
                                o.properties().count(),
                            );
                        }
                    }
                }
            }
        }
    }
}
