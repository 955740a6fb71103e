//! The escaping shared by cargo-assets' line-based text formats (the parcel
//! table of contents in [`toc`](crate::toc), the hot-reload protocol in
//! [`reload`](crate::reload)): a field never holds a raw tab or newline, so
//! fields split on tabs and records on newlines.
//!
//! `\`, tab and newline are written `\\`, `\t`, `\n`. Reading is lenient:
//! `\` before any other character stands for that character, and a final
//! lone `\` for itself.

/// `s` with `\`, tab and newline escaped (feature `write`).
#[cfg(feature = "write")]
pub fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

/// The text a field written by [`escape`] stands for.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::*;

    #[test]
    fn every_string_round_trips_and_holds_no_tab_or_newline() {
        for s in [
            "",
            "plain",
            "a\tb",
            "line\nbreak",
            "back\\slash",
            "\\t literal",
            "end\\",
            "\t\n\\",
        ] {
            let escaped = escape(s);
            assert!(!escaped.contains(['\t', '\n']), "{escaped:?}");
            assert_eq!(unescape(&escaped), s);
        }
        assert_eq!(unescape("a\\qb\\"), "aqb\\");
    }
}
