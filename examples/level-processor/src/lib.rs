//! A custom cargo-assets processor, written the way a game would write one:
//! `level` turns an ASCII map into a compact tile grid.
//!
//! ```text
//! # Meadow             comment lines start with `#`
//! .T........T.         one character per tile, every row the same width
//! ..H.C.C.C...
//! ```
//!
//! Tiles: `.` empty, `T` tree, `C` coin, `H` hero, `B` button. The output, of
//! kind `level`: `b"LVL1"`, width and height as little-endian `u16`, then one
//! byte per tile, row by row (the tile's character).
//!
//! A map should hold one hero, where the player starts: a map without one,
//! or with a second, builds with a warning at the place (`levels/a.lvl:3:5`),
//! or fails under the rule's `strict = true`.
//!
//! Used by `build.rs` through [`register`]:
//! `assets_build::Builder::new().register(level_processor::register)`.

use assets_build::{Context, Location, ProcessError, Processor, Registry};
use serde::Deserialize;

/// The characters a map may hold.
pub const TILES: &str = ".TCHB";

/// Registers this crate's processors.
pub fn register(registry: &mut Registry) {
    // `.lvl` files are levels wherever no rule says otherwise.
    registry.register(Level).claim_extensions("level", &["lvl"]);
}

/// ASCII maps to tile grids.
#[derive(Debug, Clone, Copy)]
pub struct Level;

/// `level`'s settings: the keys of a rule that names it. A key it does not
/// know is an error at its line in `Cargo.toml`, with the nearest one.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelSettings {
    /// A map without exactly one hero fails, instead of building with a
    /// warning.
    pub strict: bool,
}

impl Processor for Level {
    type Settings = LevelSettings;

    fn name(&self) -> &str {
        "level"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>, settings: LevelSettings) -> Result<(), ProcessError> {
        let source = ctx.source()?;
        let text = std::str::from_utf8(&source)
            .map_err(|e| ProcessError::msg(format!("a level map must be UTF-8: {e}")))?;
        let level = encode(text)?;
        let heroes = find(text, 'H');
        let problem = match heroes.as_slice() {
            [_] => return ctx.emit("level", level),
            [] => (
                None,
                "no hero (`H`): the player has nowhere to start".to_owned(),
            ),
            [(l, c), second, ..] => (
                Some(Location::at(second.0, second.1)),
                format!("a second hero: the player starts at the first, line {l}, column {c}"),
            ),
        };
        match problem {
            (_, message) if settings.strict => Err(ProcessError::msg(message)),
            (Some(at), message) => {
                ctx.warn_at(at, message);
                ctx.emit("level", level)
            }
            (None, message) => {
                ctx.warn(message);
                ctx.emit("level", level)
            }
        }
    }
}

/// Where `tile` is in the map: (line, column), both from 1.
fn find(text: &str, tile: char) -> Vec<(u32, u32)> {
    let mut found = Vec::new();
    for (line, row) in (1..).zip(text.lines()) {
        if row.starts_with('#') {
            continue;
        }
        found.extend(
            (1..)
                .zip(row.chars())
                .filter(|(_, c)| *c == tile)
                .map(|(column, _)| (line, column)),
        );
    }
    found
}

/// Parses an ASCII map into the binary grid.
pub fn encode(text: &str) -> Result<Vec<u8>, ProcessError> {
    let rows: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let width = rows.first().map_or(0, |(_, r)| r.chars().count());
    if width == 0 {
        return Err(ProcessError::msg("the map is empty"));
    }
    let mut out = b"LVL1".to_vec();
    let dims = |n: usize, what| {
        u16::try_from(n).map_err(|_| ProcessError::msg(format!("the map is too {what} ({n})")))
    };
    out.extend_from_slice(&dims(width, "wide")?.to_le_bytes());
    out.extend_from_slice(&dims(rows.len(), "tall")?.to_le_bytes());
    for (line, row) in rows {
        if row.chars().count() != width {
            return Err(ProcessError::msg(format!(
                "line {line} is {} tiles wide, the first row {width}",
                row.chars().count()
            )));
        }
        for (column, c) in row.chars().enumerate() {
            if !TILES.contains(c) {
                return Err(ProcessError::msg(format!(
                    "line {line}, column {}: unknown tile `{c}` (tiles: {TILES})",
                    column + 1
                )));
            }
            out.push(c as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use assets_build::testing::ProcessorTest;

    #[test]
    fn process_reads_only_its_map_and_emits_one_level() {
        let run = ProcessorTest::new("levels/one.lvl", "TH\n.C\n")
            .run(&Level)
            .expect_ok();
        assert_eq!(run.main(), b"LVL1\x02\x00\x02\x00TH.C");
        assert_eq!(run.output("").unwrap().kind, "level");
        assert_eq!(run.read, ["levels/one.lvl"]);
        assert!(run.missing.is_empty() && run.dependencies.is_empty());
        assert!(run.diagnostics.is_empty(), "{:?}", run.diagnostics);

        let typo = ProcessorTest::new("levels/one.lvl", "H.\n")
            .settings("strikt = true")
            .run(&Level);
        let error = typo.error().unwrap();
        assert!(error.contains("unknown field `strikt`"), "{error}");
        let bad = ProcessorTest::new("levels/one.lvl", [0xff, b'\n']).run(&Level);
        assert!(bad.error().unwrap().contains("UTF-8"));
    }

    #[test]
    fn a_second_hero_warns_at_its_place_and_fails_when_strict() {
        let map = "# two heroes\nH..\n.TH\n";
        let run = ProcessorTest::new("levels/two.lvl", map)
            .run(&Level)
            .expect_ok();
        assert_eq!(
            run.warnings(),
            ["a second hero: the player starts at the first, line 2, column 1"]
        );
        assert_eq!(run.diagnostics[0].location, Some(Location::at(3, 3)));
        assert_eq!(run.main(), b"LVL1\x03\x00\x02\x00H...TH");

        let none = ProcessorTest::new("levels/none.lvl", "..\n").run(&Level);
        assert_eq!(
            none.warnings(),
            ["no hero (`H`): the player has nowhere to start"]
        );
        assert_eq!(none.diagnostics[0].location, None);

        let strict = ProcessorTest::new("levels/two.lvl", map)
            .settings("strict = true")
            .run(&Level);
        assert!(strict.error().unwrap().contains("a second hero"));
        assert!(strict.outputs.is_empty() && strict.diagnostics.is_empty());
    }

    #[test]
    fn maps_encode_row_by_row_and_errors_say_where() {
        let bytes = encode("# title\nT.\n.C\n").unwrap();
        assert_eq!(bytes, b"LVL1\x02\x00\x02\x00T..C");
        let err = encode("..\n.x\n").unwrap_err().to_string();
        assert_eq!(err, "line 2, column 2: unknown tile `x` (tiles: .TCHB)");
        assert!(
            encode("..\n.\n")
                .unwrap_err()
                .to_string()
                .contains("line 2 is 1 tiles wide")
        );
    }
}
