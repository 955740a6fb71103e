//! The Aseprite file's layout, walked before `asefile` reads it: what the
//! processor takes from the file itself, and the checks that make a damaged
//! file an error instead of a crash.
//!
//! The file is a 128-byte header, then each frame: a 16-byte header (its
//! length, magic `0xF1FA`, its duration) and chunks (length, type, data).
//! Three things are read here:
//!
//! - **the header**: frame count and canvas size, for the limits and the
//!   memory reservation before anything is decoded;
//! - **the tags**, with the ping-pong-reverse direction `asefile` refuses
//!   (see the parent module);
//! - **what `asefile` trusts**: it indexes with the file's numbers, so a
//!   damaged file would panic or ask for a 17 GB buffer. Every layer's
//!   nesting, every cel's layer and size, every compressed block's
//!   inflated length (inflated here, up to what it should hold, so a
//!   block that inflates to more is refused before the reader sees it),
//!   every tileset's size and every tile a tilemap cel uses are checked,
//!   and their bytes are counted for the reservation.

use std::io::Read;

use assets_runtime::animation::Direction;
use assets_runtime::animation::write::TagSpec;

use crate::processor::ProcessError;

const HEADER_LEN: usize = 128;
const FILE_MAGIC: u16 = 0xA5E0;
const FRAME_MAGIC: u16 = 0xF1FA;
const FRAME_HEADER_LEN: usize = 16;
const CHUNK_HEADER_LEN: usize = 6;
const LAYER_CHUNK: u16 = 0x2004;
const CEL_CHUNK: u16 = 0x2005;
const TAGS_CHUNK: u16 = 0x2018;
const PALETTE_CHUNK: u16 = 0x2019;
/// A palette's fields before its entries: size, first and last index, reserved.
const PALETTE_FIXED_LEN: usize = 20;
/// A palette entry's least length: flags, red, green, blue, alpha.
const PALETTE_ENTRY_LEN: usize = 6;
const TILESET_CHUNK: u16 = 0x2023;
/// A layer's fields before its name: flags, type, child level, default
/// size, blend mode, opacity, reserved.
const LAYER_FIXED_LEN: usize = 16;
/// A cel's fields before its size: layer, x, y, opacity, type, z, reserved.
const CEL_FIXED_LEN: usize = 16;
/// A compressed tilemap cel's fields between its size and its tiles: bits
/// per tile, four bitmasks, reserved.
const TILEMAP_FIXED_LEN: usize = 28;
/// From a tag's start to its direction byte: from, to (two words).
const DIRECTION_AT: usize = 4;
/// A tag's fixed part: from, to, direction, repeat, reserved, colour, extra.
const TAG_FIXED_LEN: usize = 17;
/// A tileset's fields before its name: id, flags, tiles, tile size, base, reserved.
const TILESET_FIXED_LEN: usize = 32;

/// What the walk found.
#[derive(Debug)]
pub(super) struct Layout {
    pub frames: u32,
    pub width: u32,
    pub height: u32,
    /// The file's tags.
    pub tags: Vec<TagSpec>,
    /// Where each ping-pong-reverse tag's direction byte is.
    pub ping_pong_reverse: Vec<usize>,
    /// Bytes of pixels and tiles the file inflates to, over all its cels
    /// and tilesets.
    pub pixel_bytes: u64,
}

/// Walks the file in `bytes` (untrusted), refusing a canvas, cel or tileset
/// wider or taller than `max_dimension`.
pub(super) fn walk(bytes: &[u8], max_dimension: u32) -> Result<Layout, ProcessError> {
    if bytes.len() < HEADER_LEN || word(bytes, 4) != Some(FILE_MAGIC) {
        return Err(ProcessError::msg(
            "not an Aseprite file (no 0xA5E0 magic in its header)",
        ));
    }
    let field = |at| u32::from(word(bytes, at).unwrap_or(0));
    let (frames, width, height, depth) = (field(6), field(8), field(10), field(12));
    if frames == 0 || width == 0 || height == 0 {
        return Err(ProcessError::msg(format!(
            "its header says {frames} frames of {width}x{height}: nothing to draw"
        )));
    }
    check_size("its canvas", width, height, max_dimension)?;
    let bytes_per_pixel = match depth {
        32 => 4,
        16 => 2,
        8 => 1,
        other => {
            return Err(ProcessError::msg(format!(
                "its header says {other} bits per pixel; Aseprite writes 8, 16 or 32"
            )));
        }
    };
    let mut walk = Walk {
        bytes,
        max_dimension,
        bytes_per_pixel,
        layers: Vec::new(),
        tilesets: std::collections::BTreeMap::new(),
        layout: Layout {
            frames,
            width,
            height,
            tags: Vec::new(),
            ping_pong_reverse: Vec::new(),
            pixel_bytes: 0,
        },
    };
    let mut frame_at = HEADER_LEN;
    for f in 0..frames {
        let frame_len = dword(bytes, frame_at).ok_or_else(|| truncated(&format!("frame {f}")))?;
        if word(bytes, frame_at + 4) != Some(FRAME_MAGIC) || (frame_len as usize) < FRAME_HEADER_LEN {
            return Err(ProcessError::msg(format!(
                "frame {f}'s header is damaged (no 0xF1FA magic)"
            )));
        }
        let frame_end = (frame_at.checked_add(frame_len as usize))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| truncated(&format!("frame {f}")))?;
        let mut chunk_at = frame_at + FRAME_HEADER_LEN;
        while chunk_at + CHUNK_HEADER_LEN <= frame_end {
            let chunk_len = dword(bytes, chunk_at).unwrap_or(0) as usize;
            let chunk_end = (chunk_at.checked_add(chunk_len))
                .filter(|&end| chunk_len >= CHUNK_HEADER_LEN && end <= frame_end)
                .ok_or_else(|| truncated(&format!("a chunk of frame {f}")))?;
            let chunk = Chunk {
                data: chunk_at + CHUNK_HEADER_LEN,
                end: chunk_end,
                frame: f,
            };
            match word(bytes, chunk_at + 4) {
                Some(LAYER_CHUNK) => walk.layer(&chunk)?,
                Some(CEL_CHUNK) => walk.cel(&chunk)?,
                Some(TAGS_CHUNK) if walk.layout.tags.is_empty() => walk.tags(&chunk)?,
                Some(TILESET_CHUNK) => walk.tileset(&chunk)?,
                Some(PALETTE_CHUNK) => walk.palette(&chunk)?,
                _ => {}
            }
            chunk_at = chunk_end;
        }
        frame_at = frame_end;
    }
    Ok(walk.layout)
}

struct Walk<'a> {
    bytes: &'a [u8],
    max_dimension: u32,
    bytes_per_pixel: u64,
    /// Each layer's child level, and its tileset's id if it is a tilemap.
    layers: Vec<(u16, Option<u32>)>,
    /// Each tileset's tile count, by id.
    tilesets: std::collections::BTreeMap<u32, u32>,
    layout: Layout,
}

/// Where a chunk's data starts and ends, and its frame.
struct Chunk {
    data: usize,
    end: usize,
    frame: u32,
}

impl<'a> Walk<'a> {
    /// The chunk's bytes from `at` (relative to its data) to its end.
    fn rest(&self, chunk: &Chunk, at: usize) -> Option<&'a [u8]> {
        let bytes: &'a [u8] = self.bytes;
        bytes.get(chunk.data.checked_add(at)?..chunk.end)
    }

    fn layer(&mut self, chunk: &Chunk) -> Result<(), ProcessError> {
        let data = self.rest(chunk, 0).ok_or_else(|| truncated("a layer"))?;
        let (kind, level) = (word(data, 2), word(data, 4));
        let (Some(kind), Some(level)) = (kind, level) else {
            return Err(truncated("a layer"));
        };
        // A layer is nested at most one level deeper than the one before it.
        let deepest = self.layers.last().map_or(0, |(l, _)| l + 1);
        if level > deepest {
            return Err(ProcessError::msg(format!(
                "layer {} is nested {level} deep under a layer nested {}: its layer tree is damaged",
                self.layers.len(),
                deepest.saturating_sub(1)
            )));
        }
        // A tilemap layer names its tileset after its name.
        let tileset = match kind {
            2 => {
                let name_len = word(data, LAYER_FIXED_LEN).ok_or_else(|| truncated("a layer"))?;
                let at = LAYER_FIXED_LEN + 2 + usize::from(name_len);
                Some(dword(data, at).ok_or_else(|| truncated("a tilemap layer"))?)
            }
            _ => None,
        };
        self.layers.push((level, tileset));
        Ok(())
    }

    fn cel(&mut self, chunk: &Chunk) -> Result<(), ProcessError> {
        let f = chunk.frame;
        let data = self.rest(chunk, 0).ok_or_else(|| truncated("a cel"))?;
        let (layer, kind) = (word(data, 0), word(data, 7));
        let (Some(layer), Some(kind)) = (layer, kind) else {
            return Err(truncated(&format!("a cel of frame {f}")));
        };
        if usize::from(layer) >= self.layers.len() {
            let has = match self.layers.len() {
                1 => "1 layer".to_owned(),
                n => format!("{n} layers"),
            };
            return Err(ProcessError::msg(format!(
                "a cel of frame {f} is on layer {layer}, but the file has {has}"
            )));
        }
        let what = || format!("the cel of layer {layer} in frame {f}");
        let size = |at| -> Result<(u32, u32), ProcessError> {
            let (w, h) = (word(data, at), word(data, at + 2));
            let (Some(w), Some(h)) = (w, h) else {
                return Err(truncated(&what()));
            };
            Ok((u32::from(w), u32::from(h)))
        };
        match kind {
            // Raw pixels.
            0 => {
                let (w, h) = size(CEL_FIXED_LEN)?;
                check_size(&what(), w, h, self.max_dimension)?;
                let expected = u64::from(w) * u64::from(h) * self.bytes_per_pixel;
                let raw = self.rest(chunk, CEL_FIXED_LEN + 4).map_or(0, <[u8]>::len);
                if (raw as u64) < expected {
                    return Err(truncated(&what()));
                }
                self.layout.pixel_bytes += expected;
            }
            // Linked to the same layer's cel in another frame.
            1 => {
                let to = word(data, CEL_FIXED_LEN).ok_or_else(|| truncated(&what()))?;
                if u32::from(to) >= self.layout.frames {
                    return Err(ProcessError::msg(format!(
                        "{} links to frame {to}, past the file's {} frames",
                        what(),
                        self.layout.frames
                    )));
                }
            }
            // Compressed pixels.
            2 => {
                let (w, h) = size(CEL_FIXED_LEN)?;
                check_size(&what(), w, h, self.max_dimension)?;
                let expected = u64::from(w) * u64::from(h) * self.bytes_per_pixel;
                let compressed = self.rest(chunk, CEL_FIXED_LEN + 4);
                check_inflated(compressed.unwrap_or(&[]), expected, &what())?;
                self.layout.pixel_bytes += expected;
            }
            // Compressed tiles: a tilemap cel.
            3 => {
                let (w, h) = size(CEL_FIXED_LEN)?;
                check_size(&what(), w, h, self.max_dimension)?;
                let bits = word(data, CEL_FIXED_LEN + 4).ok_or_else(|| truncated(&what()))?;
                let mask = dword(data, CEL_FIXED_LEN + 6).ok_or_else(|| truncated(&what()))?;
                let tiles = (self.layers[usize::from(layer)].1)
                    .and_then(|id| self.tilesets.get(&id).copied())
                    .ok_or_else(|| {
                        ProcessError::msg(format!(
                            "{} holds tiles, but its layer has no tileset the file defines",
                            what()
                        ))
                    })?;
                if bits != 32 {
                    return Err(ProcessError::msg(format!(
                        "{} has {bits}-bit tiles; Aseprite writes 32",
                        what()
                    )));
                }
                let expected = u64::from(w) * u64::from(h) * 4;
                let compressed = self.rest(chunk, CEL_FIXED_LEN + 4 + TILEMAP_FIXED_LEN);
                let mut ids = Vec::new();
                inflate_exact(compressed.unwrap_or(&[]), expected, &what(), |b| {
                    ids.extend_from_slice(b)
                })?;
                let beyond = (ids.chunks_exact(4))
                    .map(|t| u32::from_le_bytes(t.try_into().expect("4 bytes")) & mask)
                    .find(|&id| id >= tiles);
                if let Some(id) = beyond {
                    return Err(ProcessError::msg(format!(
                        "{} uses tile {id}, but its tileset has {tiles} tiles",
                        what()
                    )));
                }
                self.layout.pixel_bytes += expected;
            }
            other => {
                return Err(ProcessError::msg(format!(
                    "{} is of type {other}; Aseprite writes 0 to 3",
                    what()
                )));
            }
        }
        Ok(())
    }

    fn tileset(&mut self, chunk: &Chunk) -> Result<(), ProcessError> {
        let data = self.rest(chunk, 0).ok_or_else(|| truncated("a tileset"))?;
        let (flags, tiles) = (dword(data, 4), dword(data, 8));
        let (tile_w, tile_h) = (word(data, 12), word(data, 14));
        let (Some(flags), Some(tiles), Some(tile_w), Some(tile_h)) = (flags, tiles, tile_w, tile_h)
        else {
            return Err(truncated("a tileset"));
        };
        let (tile_w, tile_h) = (u32::from(tile_w), u32::from(tile_h));
        let id = dword(data, 0).ok_or_else(|| truncated("a tileset"))?;
        self.tilesets.insert(id, tiles);
        let what = format!("its tileset of {tiles} {tile_w}x{tile_h} tiles");
        // Its image is one column of tiles.
        let tall = u64::from(tile_h) * u64::from(tiles);
        check_size(&what, tile_w, u32::try_from(tall).unwrap_or(u32::MAX), self.max_dimension)?;
        if flags & 2 == 0 {
            return Ok(());
        }
        let name_len = word(data, TILESET_FIXED_LEN).ok_or_else(|| truncated(&what))?;
        let mut at = TILESET_FIXED_LEN + 2 + usize::from(name_len);
        if flags & 1 != 0 {
            at += 8; // in an external file: its id, and the tileset's id there
        }
        let expected = u64::from(tile_w) * tall * self.bytes_per_pixel;
        let compressed = self.rest(chunk, at + 4).ok_or_else(|| truncated(&what))?;
        check_inflated(compressed, expected, &what)?;
        self.layout.pixel_bytes += expected;
        Ok(())
    }

    fn palette(&mut self, chunk: &Chunk) -> Result<(), ProcessError> {
        let data = self.rest(chunk, 0).ok_or_else(|| truncated("its palette"))?;
        let (first, last) = (dword(data, 4), dword(data, 8));
        let (Some(first), Some(last)) = (first, last) else {
            return Err(truncated("its palette"));
        };
        // As many entries as its indices say, each at least 6 bytes.
        let room = data.len().saturating_sub(PALETTE_FIXED_LEN) / PALETTE_ENTRY_LEN;
        if first > last || (last - first) as usize >= room {
            return Err(ProcessError::msg(format!(
                "its palette runs from colour {first} to {last}, which its {} bytes cannot hold: \
                 the palette is damaged",
                data.len()
            )));
        }
        Ok(())
    }

    fn tags(&mut self, chunk: &Chunk) -> Result<(), ProcessError> {
        let bytes = &self.bytes[..chunk.end];
        let cut = || truncated("its tags");
        let count = word(bytes, chunk.data).ok_or_else(cut)?;
        let mut tag_at = chunk.data + 10;
        for _ in 0..count {
            let fixed = bytes.get(tag_at..tag_at + TAG_FIXED_LEN).ok_or_else(cut)?;
            let (from, to) = (word(fixed, 0).unwrap_or(0), word(fixed, 2).unwrap_or(0));
            let repeat = word(fixed, 5).unwrap_or(0);
            let name_len = usize::from(word(bytes, tag_at + TAG_FIXED_LEN).ok_or_else(cut)?);
            let name_at = tag_at + TAG_FIXED_LEN + 2;
            let name = bytes.get(name_at..name_at + name_len).ok_or_else(cut)?;
            let name = String::from_utf8_lossy(name).into_owned();
            let direction = match fixed[DIRECTION_AT] {
                0 => Direction::Forward,
                1 => Direction::Reverse,
                2 => Direction::PingPong,
                3 => {
                    self.layout.ping_pong_reverse.push(tag_at + DIRECTION_AT);
                    Direction::PingPongReverse
                }
                other => {
                    return Err(ProcessError::msg(format!(
                        "tag `{name}` has direction {other}, which Aseprite does not write \
                         (0 to 3: forward, reverse, ping-pong, ping-pong reverse)"
                    )));
                }
            };
            if from > to || u32::from(to) >= self.layout.frames {
                return Err(ProcessError::msg(format!(
                    "tag `{name}` runs from frame {from} to {to}, outside the file's {} frames",
                    self.layout.frames
                )));
            }
            self.layout.tags.push(TagSpec {
                name,
                from: u32::from(from),
                to: u32::from(to),
                direction,
                repeat,
                // `asefile` reads it, in `super::flatten`.
                user_data: Default::default(),
            });
            tag_at = name_at + name_len;
        }
        Ok(())
    }
}

fn check_size(what: &str, w: u32, h: u32, max_dimension: u32) -> Result<(), ProcessError> {
    if w.max(h) > max_dimension {
        return Err(ProcessError::msg(format!(
            "{what} is {w}x{h}, over `max-dimension` ({max_dimension}); \
             raise it in the rule if this is meant"
        )));
    }
    Ok(())
}

/// Inflates the zlib block at the start of `compressed`, and refuses it
/// unless it holds exactly `expected` bytes (never inflating more than one
/// past them).
fn check_inflated(compressed: &[u8], expected: u64, what: &str) -> Result<(), ProcessError> {
    inflate_exact(compressed, expected, what, |_| {})
}

/// [`check_inflated`], handing each piece inflated to `sink`.
fn inflate_exact(
    compressed: &[u8],
    expected: u64,
    what: &str,
    mut sink: impl FnMut(&[u8]),
) -> Result<(), ProcessError> {
    let mut inflated = flate2::read::ZlibDecoder::new(compressed).take(expected + 1);
    let mut buffer = [0u8; 16 << 10];
    let mut got = 0u64;
    loop {
        match inflated.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                got += n as u64;
                sink(&buffer[..n]);
            }
            Err(e) => {
                return Err(ProcessError::msg(format!(
                    "{what}: its compressed pixels are damaged ({e})"
                )));
            }
        }
    }
    if got > expected {
        return Err(ProcessError::msg(format!(
            "{what}: its compressed pixels inflate to more than the {expected} bytes its size says"
        )));
    }
    if got < expected {
        return Err(ProcessError::msg(format!(
            "{what}: its compressed pixels inflate to {got} bytes, not the {expected} its size says"
        )));
    }
    Ok(())
}

fn truncated(what: &str) -> ProcessError {
    ProcessError::msg(format!("the file is truncated or damaged in {what}"))
}

fn word(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn dword(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}
