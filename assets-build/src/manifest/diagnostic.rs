//! [`ManifestError`]: an error in `Cargo.toml` that points at the text.
//!
//! Every manifest error names the file, the line and column, the key path
//! (`package.metadata.assets.rules[1].match`) when one is known, and says what
//! was expected. Its `Display` renders a cargo-like snippet:
//!
//! ```text
//! invalid glob `sprites/[*.png`: unclosed character class; missing ']'
//!   --> /game/Cargo.toml:12:9
//!    |
//! 12 | match = "sprites/[*.png"
//!    |         ^^^^^^^^^^^^^^^^
//!    = key: package.metadata.assets.rules[0].match
//!    = help: ...
//! ```

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// An error in the `[package.metadata.assets]` section of a `Cargo.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The `Cargo.toml` that holds the mistake.
    pub file: PathBuf,
    /// 1-based line of the offending text, if it has a place.
    pub line: Option<usize>,
    /// 1-based column (in characters).
    pub column: Option<usize>,
    /// The dotted key path, e.g. `package.metadata.assets.rules[0].processor`.
    pub key: Option<String>,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
    /// How to fix it, when we can tell.
    pub help: Option<String>,
    snippet: Option<Snippet>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Snippet {
    line_text: String,
    underline_start: usize,
    underline_len: usize,
}

impl ManifestError {
    /// An error about `file` as a whole (e.g. it could not be read).
    pub fn whole_file(file: &Path, message: impl Into<String>) -> ManifestError {
        ManifestError {
            file: file.to_owned(),
            line: None,
            column: None,
            key: None,
            message: message.into(),
            help: None,
            snippet: None,
        }
    }

    /// An error at byte range `span` of `source`, the text of `file`.
    pub(crate) fn at(
        file: &Path,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> ManifestError {
        let mut err = ManifestError::whole_file(file, message);
        if let Some(span) = span {
            let start = floor_char_boundary(source, span.start.min(source.len()));
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = source[start..]
                .find('\n')
                .map_or(source.len(), |i| start + i);
            let line_text = source[line_start..line_end].trim_end_matches('\r');
            let column = source[line_start..start].chars().count();
            let end = span.end.clamp(start, line_end.max(start));
            let underline_len = source[start..floor_char_boundary(source, end)]
                .chars()
                .count();
            err.line = Some(source[..start].matches('\n').count() + 1);
            err.column = Some(column + 1);
            err.snippet = Some(Snippet::around(line_text, column, underline_len.max(1)));
        }
        err
    }

    /// Adds the dotted key path.
    pub(crate) fn key(mut self, key: impl Into<String>) -> ManifestError {
        self.key = Some(key.into());
        self
    }

    /// Adds a hint for the fix.
    pub(crate) fn help(mut self, help: impl Into<String>) -> ManifestError {
        self.help = Some(help.into());
        self
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The most characters of a line a snippet shows: a line of a megabyte
/// (a glob pasted by mistake) is shown around the error, not whole.
const SNIPPET_CHARS: usize = 120;

impl Snippet {
    /// The part of `line` around `len` characters from character `column`,
    /// at most [`SNIPPET_CHARS`] of it, with `...` where it is cut.
    fn around(line: &str, column: usize, len: usize) -> Snippet {
        let count = line.chars().count();
        if count <= SNIPPET_CHARS {
            return Snippet {
                line_text: line.to_owned(),
                underline_start: column,
                underline_len: len,
            };
        }
        let from = column.saturating_sub(20).min(count - SNIPPET_CHARS);
        let shown: String = line.chars().skip(from).take(SNIPPET_CHARS).collect();
        let before = if from > 0 { "..." } else { "" };
        let after = if from + SNIPPET_CHARS < count {
            "..."
        } else {
            ""
        };
        let start = column - from + before.len();
        Snippet {
            line_text: format!("{before}{shown}{after}"),
            underline_start: start,
            underline_len: len.min(SNIPPET_CHARS + before.len() - start).max(1),
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        write!(f, "\n  --> {}", self.file.display())?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, ":{line}:{column}")?;
        }
        let gutter = self.line.map_or(1, |l| l.to_string().len());
        let pad = " ".repeat(gutter);
        if let (Some(s), Some(line)) = (&self.snippet, self.line) {
            write!(f, "\n{pad} |\n{line} | {}", s.line_text)?;
            write!(
                f,
                "\n{pad} | {}{}",
                " ".repeat(s.underline_start),
                "^".repeat(s.underline_len)
            )?;
        }
        if let Some(key) = &self.key {
            write!(f, "\n{pad} = key: {key}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n{pad} = help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

/// The closest of `candidates` to `word`, if one is close enough to be a typo.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, c)| d <= (c.len().max(word.len()) / 3).max(1))
        .min()
        .map(|(_, c)| c)
}

/// Edit distance over chars where a swap of two neighbours counts as one edit
/// (optimal string alignment), so `imgae` is one edit from `image`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" messages: a
/// suggestion for `x` among the expected names.
pub(crate) fn suggest_for_unknown_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, expected) = rest.split_once('`')?;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    did_you_mean(field, candidates.iter().copied()).map(|s| format!("did you mean `{s}`?"))
}

/// For a table written as an array of tables (`[[package.metadata.assets.
/// parcels]]`, where `parcels`, `atlases`, `overrides` and `platforms` are
/// one table whose keys are names), how to write it: the TOML reader only
/// says "invalid type: sequence, expected a map" at the header. `header` is
/// the text the error points at.
pub(crate) fn suggest_for_array_of_tables(message: &str, header: &str) -> Option<String> {
    if !message.starts_with("invalid type: sequence, expected a map") {
        return None;
    }
    let name = header
        .trim()
        .strip_prefix("[[package.metadata.assets.")?
        .split([']', '.'])
        .next()?;
    let (table, key) = match name {
        "parcels" => {
            return Some(
                "`parcels` is one table of name = globs, written with single brackets: `[package.metadata.assets.parcels]`, then `main = [\"**\"]`"
                    .to_owned(),
            );
        }
        "atlases" => ("atlases.main", "max-size = 2048"),
        "overrides" => ("overrides.\"sprites/hero.png\"", "trim = false"),
        "platforms" => ("platforms.web", "targets = [\"wasm32-*\"]"),
        _ => return None,
    };
    Some(format!(
        "`{name}` is one table whose keys are names, each a table of its own, in single brackets: `[package.metadata.assets.{table}]`, then `{key}` (only `rules` is an array of tables)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_line_column_and_caret() {
        let src = "[a]\nkey = \"bad\"\n";
        let err = ManifestError::at(Path::new("Cargo.toml"), src, Some(10..15), "oops")
            .key("a.key")
            .help("fix it");
        assert_eq!((err.line, err.column), (Some(2), Some(7)));
        assert_eq!(
            err.to_string(),
            "oops\n  --> Cargo.toml:2:7\n  |\n2 | key = \"bad\"\n  |       ^^^^^\n  = key: a.key\n  = help: fix it"
        );
    }

    #[test]
    fn a_table_written_as_an_array_of_tables_says_how_to_write_it() {
        let says = |header: &str| {
            suggest_for_array_of_tables("invalid type: sequence, expected a map", header)
        };
        assert!(
            says("[[package.metadata.assets.parcels]]")
                .unwrap()
                .contains("`[package.metadata.assets.parcels]`, then `main = [\"**\"]`")
        );
        assert!(
            says("[[package.metadata.assets.atlases]]")
                .unwrap()
                .contains("`[package.metadata.assets.atlases.main]`, then `max-size = 2048`")
        );
        assert_eq!(says("[[package.metadata.assets.rules]]"), None);
        assert_eq!(
            suggest_for_array_of_tables(
                "invalid type: string",
                "[[package.metadata.assets.parcels]]"
            ),
            None
        );
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("rool", ["root", "rules"]), Some("root"));
        assert_eq!(
            did_you_mean("parcles", ["parcels", "rules"]),
            Some("parcels")
        );
        assert_eq!(did_you_mean("zzzzzz", ["root", "rules"]), None);
        assert_eq!(
            did_you_mean("imgae", ["copy", "image", "text"]),
            Some("image")
        );
        assert_eq!(
            suggest_for_unknown_field("unknown field `paddin`, expected `max-size` or `padding`"),
            Some("did you mean `padding`?".into())
        );
    }
}
