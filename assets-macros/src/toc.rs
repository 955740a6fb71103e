//! Reading a parcel's table of contents. The format is defined in
//! `assets_runtime::toc`, beside its writer; this crate cannot depend on the
//! runtime (which re-exports the macro), so it keeps this small reader, and
//! the tests below check it against the runtime's writer and reader.

/// The first line of a table of contents, version 2.
const HEADER: &str = "cargo-assets parcel toc 2";

/// One resource: its kind and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: String,
    pub name: String,
    /// For an alias (an old name kept after a rename), the name it stands for.
    pub alias_of: Option<String>,
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
            let (kind, rest) = line
                .split_once('\t')
                .ok_or("its table of contents has a malformed line")?;
            let (name, alias_of) = match rest.split_once('\t') {
                Some((name, target)) => (name, Some(unescape(target))),
                None => (rest, None),
            };
            Ok(Entry {
                kind: unescape(kind),
                name: unescape(name),
                alias_of,
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
        let text = "cargo-assets parcel toc 2\n42\nsprite\tui/a b.png\ntext\tweird\\tname\\\\x\n";
        let entries = parse(text, 42).unwrap();
        assert_eq!(entries[1].name, "weird\tname\\x");
        assert_eq!(entries[0].kind, "sprite");
        assert!(parse(text, 43).unwrap_err().contains("disagree"));
        assert!(parse("other\n", 42).is_err());
    }

    /// What the pipeline's writer writes, this reader reads as the
    /// runtime's own reader does, names with tabs, newlines and `\` included.
    #[test]
    fn reads_what_the_writer_writes() {
        assert_eq!(HEADER, assets_runtime::toc::HEADER);
        let entries = [
            ("sprite", "ui/a b.png", None),
            ("text", "weird\tname\\x", None),
            ("image", "atlas:ui#0", None),
            ("bytes", "two\nlines", None),
            ("alias", "old\tname.txt", Some("weird\tname\\x")),
        ];
        let text = assets_runtime::toc::write(7, entries);
        type Read = (String, String, Option<String>);
        let ours: Vec<Read> = parse(&text, 7)
            .unwrap()
            .into_iter()
            .map(|e| (e.kind, e.name, e.alias_of))
            .collect();
        let runtime: Vec<Read> = assets_runtime::toc::parse(&text)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| (e.kind, e.name, e.alias_of))
            .collect();
        assert_eq!(ours, runtime);
        let written: Vec<Read> = entries
            .iter()
            .map(|(k, n, a)| (k.to_string(), n.to_string(), a.map(str::to_owned)))
            .collect();
        assert_eq!(ours, written);
    }
}
