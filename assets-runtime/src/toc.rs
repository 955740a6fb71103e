//! A parcel's table of contents, `<name>.parcel.toc`: the resource list as
//! text, for tools that must not parse the binary format (the
//! `include_parcel!` macro cannot depend on this crate, which re-exports it).
//!
//! ```text
//! cargo-assets parcel toc 2       the header, version 2
//! <length of the parcel file>     in bytes: a table of contents describes one file
//! <kind>\t<name>                  one line per resource, in the parcel's order
//! alias\t<name>\t<target>         an alias: an old name, and the resource it stands for
//! ```
//!
//! (Version 1 had no third field.)
//!
//! Kinds and names are escaped as [`line_escape`](crate::line_escape) says.
//! The writer is `write` (feature `write`, used by the pipeline); [`parse`]
//! is the reader. The macro keeps its own copy of the reader (it cannot
//! depend on this crate), and its tests parse what `write` writes.

use std::fmt;

use crate::line_escape::unescape;

/// The first line of a table of contents, version 2.
pub const HEADER: &str = "cargo-assets parcel toc 2";

/// A table of contents, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toc {
    /// The length of the parcel file it describes, in bytes.
    pub parcel_len: u64,
    /// Every resource, in the parcel's order.
    pub entries: Vec<TocEntry>,
}

/// One resource of a [`Toc`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TocEntry {
    /// Its kind: `sprite`, `image`, `text`, ...
    pub kind: String,
    /// Its name (the asset path, or a generated name such as `atlas:ui#0`).
    pub name: String,
    /// For an alias (kind `alias`), the name of the resource it stands for.
    pub alias_of: Option<String>,
}

/// Why a text is not a table of contents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TocError {
    /// The first line is not [`HEADER`]: another version, or another file.
    UnknownFormat,
    /// The parcel length line is missing or not a number.
    Truncated,
    /// A resource line has no tab between kind and name.
    MalformedLine {
        /// Its line number, from 1.
        line: usize,
    },
}

impl fmt::Display for TocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TocError::UnknownFormat => {
                write!(f, "the table of contents does not start with `{HEADER}`")
            }
            TocError::Truncated => f.write_str("the table of contents has no parcel length"),
            TocError::MalformedLine { line } => {
                write!(
                    f,
                    "line {line} of the table of contents has no tab between kind and name"
                )
            }
        }
    }
}

impl std::error::Error for TocError {}

/// Reads a table of contents.
pub fn parse(text: &str) -> Result<Toc, TocError> {
    let (parcel_len, lines) = head(text)?;
    let entries = lines
        .enumerate()
        .map(|(i, line)| {
            let (kind, rest) = line
                .split_once('\t')
                .ok_or(TocError::MalformedLine { line: i + 3 })?;
            let (name, alias_of) = match rest.split_once('\t') {
                Some((name, target)) => (name, Some(unescape(target).into_owned())),
                None => (rest, None),
            };
            Ok(TocEntry {
                kind: unescape(kind).into_owned(),
                name: unescape(name).into_owned(),
                alias_of,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Toc {
        parcel_len,
        entries,
    })
}

/// Checks that `text` is a whole table of contents, as [`parse`] would,
/// without unescaping or collecting its entries; returns the length of the
/// parcel it describes. (The pipeline asks this of every parcel on every
/// build, to keep the one it has: a full parse was 3% of a 10k no-op.)
pub fn check(text: &str) -> Result<u64, TocError> {
    let (parcel_len, lines) = head(text)?;
    match lines.enumerate().find(|(_, line)| !line.contains('\t')) {
        Some((i, _)) => Err(TocError::MalformedLine { line: i + 3 }),
        None => Ok(parcel_len),
    }
}

/// The header and the parcel length; then the resource lines.
fn head(text: &str) -> Result<(u64, std::str::Lines<'_>), TocError> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(TocError::UnknownFormat);
    }
    let parcel_len = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or(TocError::Truncated)?;
    Ok((parcel_len, lines))
}

/// The table of contents of a parcel file of `parcel_len` bytes holding
/// `entries` as (kind, name, and for an alias the name it stands for), in
/// order (feature `write`).
#[cfg(feature = "write")]
pub fn write<'a>(
    parcel_len: u64,
    entries: impl IntoIterator<Item = (&'a str, &'a str, Option<&'a str>)>,
) -> String {
    use crate::line_escape::escape;
    let mut out = format!("{HEADER}\n{parcel_len}\n");
    for (kind, name, alias_of) in entries {
        out.push_str(&escape(kind));
        out.push('\t');
        out.push_str(&escape(name));
        if let Some(target) = alias_of {
            out.push('\t');
            out.push_str(&escape(target));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "write")]
    #[test]
    fn what_is_written_reads_back() {
        let entries = [
            ("sprite", "ui/a b.png", None),
            ("text", "weird\tname\\x", None),
            ("image", "atlas:ui#0", None),
            ("bytes", "two\nlines", None),
            ("alias", "old\tname", Some("weird\tname\\x")),
        ];
        let text = write(42, entries);
        let toc = parse(&text).unwrap();
        assert_eq!(toc.parcel_len, 42);
        let read: Vec<(&str, &str, Option<&str>)> = toc
            .entries
            .iter()
            .map(|e| (e.kind.as_str(), e.name.as_str(), e.alias_of.as_deref()))
            .collect();
        assert_eq!(read, entries);
        assert_eq!(check(&text), Ok(42));
    }

    #[test]
    fn other_texts_are_refused_by_reason() {
        for read in [|t: &str| parse(t).map(|t| t.parcel_len), check] {
            assert_eq!(read("other\n42\n"), Err(TocError::UnknownFormat));
            assert_eq!(read(&format!("{HEADER}\n")), Err(TocError::Truncated));
            assert_eq!(
                read(&format!("{HEADER}\n42\nsprite\tok\nnotab\n")),
                Err(TocError::MalformedLine { line: 4 })
            );
        }
    }
}
