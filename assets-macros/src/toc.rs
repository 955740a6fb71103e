//! Reading a parcel's table of contents (written by `assets_build::parcels`).

/// The first line of a table of contents, version 1.
const HEADER: &str = "cargo-assets parcel toc 1";

/// One resource: its kind and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: String,
    pub name: String,
}

/// The entries of `text`, after checking its header and that it describes a
/// parcel of `parcel_len` bytes.
pub fn parse(text: &str, parcel_len: u64) -> Result<Vec<Entry>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err("its table of contents has an unknown format; rebuild with the same version of assets-build and assets-runtime".into());
    }
    let len: u64 = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or("its table of contents is truncated")?;
    if len != parcel_len {
        return Err(
            "the parcel and its table of contents disagree (was one changed by hand?); rebuild"
                .into(),
        );
    }
    lines
        .map(|line| {
            let (kind, name) = line
                .split_once('\t')
                .ok_or("its table of contents has a malformed line")?;
            Ok(Entry {
                kind: unescape(kind),
                name: unescape(name),
            })
        })
        .collect()
}

fn unescape(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_and_unescaped() {
        let text = "cargo-assets parcel toc 1\n42\nsprite\tui/a b.png\ntext\tweird\\tname\\\\x\n";
        let entries = parse(text, 42).unwrap();
        assert_eq!(entries[1].name, "weird\tname\\x");
        assert_eq!(entries[0].kind, "sprite");
        assert!(parse(text, 43).unwrap_err().contains("disagree"));
        assert!(parse("other\n", 42).is_err());
    }
}
