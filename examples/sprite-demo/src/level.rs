//! Reading what the `level` processor made (see `examples/level-processor`),
//! and the title from the level's JSON data.

/// A tile map: one byte per tile, row by row.
pub struct Level<'a> {
    pub width: u16,
    pub height: u16,
    tiles: &'a [u8],
}

impl<'a> Level<'a> {
    /// `b"LVL1"`, width and height (little-endian `u16`), then the tiles.
    pub fn decode(bytes: &'a [u8]) -> Option<Level<'a>> {
        let rest = bytes.strip_prefix(b"LVL1")?;
        let width = u16::from_le_bytes(rest.get(0..2)?.try_into().ok()?);
        let height = u16::from_le_bytes(rest.get(2..4)?.try_into().ok()?);
        let tiles = rest.get(4..)?;
        (tiles.len() == usize::from(width) * usize::from(height)).then_some(Level {
            width,
            height,
            tiles,
        })
    }

    /// Every tile with its column and row.
    pub fn tiles(&self) -> impl Iterator<Item = (u32, u32, u8)> + '_ {
        let w = usize::from(self.width);
        self.tiles
            .iter()
            .enumerate()
            .map(move |(i, &t)| ((i % w) as u32, (i / w) as u32, t))
    }
}

/// The `"name"` of the level's JSON data (a game would use serde; this one
/// keeps its dependencies to the runtime and a PNG writer).
pub fn title(json: &str) -> Option<&str> {
    let after = &json[json.find("\"name\"")? + 6..];
    let start = after.find('"')? + 1;
    let len = after[start..].find('"')?;
    Some(&after[start..start + len])
}
