//! The escaping shared by cargo-assets' line-based text formats (the parcel
//! table of contents in [`toc`](crate::toc), the hot-reload protocol in
//! [`reload`](crate::reload)): a field never holds a raw tab or newline, so
//! fields split on tabs and records on newlines.
//!
//! `\`, tab and newline are written `\\`, `\t`, `\n`. Reading is lenient:
//! `\` before any other character stands for that character, and a final
//! lone `\` for itself.
//!
//! Both directions borrow the field when it has nothing to escape (nearly
//! every name): a parcel's table of contents and its `.sums` hold one line
//! per resource, and copying each name through three `replace`s was a tenth
//! of rewriting a 10,000-resource parcel.

use std::borrow::Cow;

/// `s` with `\`, tab and newline escaped (feature `write`).
#[cfg(feature = "write")]
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.bytes().any(|b| matches!(b, b'\\' | b'\t' | b'\n')) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The text a field written by `escape` (feature `write`) stands for.
pub fn unescape(s: &str) -> Cow<'_, str> {
    if !s.as_bytes().contains(&b'\\') {
        return Cow::Borrowed(s);
    }
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
    Cow::Owned(out)
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
