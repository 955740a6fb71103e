//! `<name>.parcel.sums`: what each resource of a parcel holds, written
//! beside the parcel by the parcel stage and read by two readers: the next
//! write of the same parcel (which resources changed, and which it can copy
//! from the previous file as stored), and the store (which blobs the
//! cache's parcels hold whole, so it need not keep a second copy; see
//! `store::in_parcels`).
//!
//! The text: a header line, `#parcel <compression> <table checksum>`, then
//! one line per resource, `<content> <name>` (the name escaped with
//! [`assets_runtime::line_escape`]). A content is a blob hash, `<hash>` when
//! the resource is the whole blob, or `frame:<hash>` for a sprite's frame
//! (cut from its atlas's table; the hash is of the frame's own bytes, so a
//! frame another sprite's edit did not move keeps its content); either may
//! go on with `+<hash>`, the sprite's own pixels, which the frame does not
//! show, and end in `@<compression>` when the resource's rule chose its own.
//! (Written before 2026-11-28, a frame was `<table hash>:<start>:<len>`:
//! such a line is a content like any other, which a frame now never
//! equals, so a parcel written then is written again once.)
//!
//! The table checksum ties the lines to the parcel they describe: a build
//! killed between writing the parcel and its `.sums` leaves lines that name
//! another parcel's checksum, and neither reader trusts them.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use assets_runtime::format::{HEADER_LEN, stated_table_checksum};
use assets_runtime::line_escape::{escape, unescape};

use crate::hash::ContentHash;

/// The start of the header line.
const HEADER: &str = "#parcel ";

/// The start of a frame's content, before the hash of its bytes.
pub(crate) const FRAME: &str = "frame:";

/// The `.sums` text of a parcel written with `compression` whose table
/// checksum is `table_checksum`, holding `resources` (content, name).
pub(crate) fn write<'a>(
    compression: &str,
    table_checksum: u64,
    resources: impl Iterator<Item = (&'a str, &'a str)>,
) -> String {
    write_placing(compression, table_checksum, resources, |_| {})
}

/// [`write`], telling `placed` where each resource's content starts in
/// the text, in order (see [`content_at`]): a watched pipeline keeps
/// these for the next patch of the parcel, instead of finding each line
/// again in the text.
pub(crate) fn write_placing<'a>(
    compression: &str,
    table_checksum: u64,
    resources: impl Iterator<Item = (&'a str, &'a str)>,
    mut placed: impl FnMut(usize),
) -> String {
    let mut out = format!("{HEADER}{compression} {table_checksum:016x}\n");
    for (content, name) in resources {
        placed(out.len());
        out.push_str(content);
        out.push(' ');
        out.push_str(&escape(name));
        out.push('\n');
    }
    out
}

/// The compression and table checksum of a `.sums` text's header line.
pub(crate) fn header(text: &str) -> Option<(&str, u64)> {
    let header = text.lines().next()?.strip_prefix(HEADER)?;
    let (compression, checksum) = header.split_once(' ')?;
    Some((compression, u64::from_str_radix(checksum, 16).ok()?))
}

/// The resource lines of a `.sums` text, content and name (escaped), in
/// order; header or not.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
}

/// A map from resource names, hashed with foldhash rather than SipHash: a
/// watched edit looks up every planned resource's name in the patch's
/// contents (a million at 1M assets), and the names come from the
/// package's own files.
pub(crate) type NameMap<'s, V> = HashMap<Cow<'s, str>, V, foldhash::fast::RandomState>;

/// What each resource of a `.sums` text holds, by name ([`contents`]).
pub(crate) type Contents<'s> = NameMap<'s, &'s str>;

/// The resource lines of a `.sums` text, name to content; header or not.
pub(crate) fn contents(text: &str) -> Contents<'_> {
    // Sized once: 10,000 lines grown into by doubling rehashed the map
    // over a dozen times.
    let mut map = Contents::with_capacity_and_hasher(line_count(text), Default::default());
    map.extend(lines(text).map(|(content, name)| (unescape(name), content)));
    map
}

/// The resource lines of a `.sums` text, looked up by name in the order
/// they were written. A build plans a parcel's resources in the order the
/// last one did, so a lookup first tries the line after the last one
/// found, and hashes nothing; a name found elsewhere (a resource added,
/// removed or moved) is looked up in a map of every line, made on first
/// need. A patch compares 10,000 resources with its base's lines on every
/// edit: through the map alone, making it was ~2.4 ms of it.
pub(crate) struct InOrder<'s> {
    text: &'s str,
    /// Where the line after the last one found starts.
    next: usize,
    /// How many lookups found their line there.
    in_order: usize,
    /// Every resource line: name to content and where the next line starts.
    map: OnceCell<NameMap<'s, (&'s str, usize)>>,
}

impl<'s> InOrder<'s> {
    pub(crate) fn new(text: &'s str) -> InOrder<'s> {
        InOrder {
            text,
            next: 0,
            in_order: 0,
            map: OnceCell::new(),
        }
    }

    /// The content of the resource `name`.
    pub(crate) fn get(&mut self, name: &str) -> Option<&'s str> {
        // The common case, without looking for the line's end first: the
        // next line's content, a space, and `name` as it is written (a
        // name without a backslash is written as it is, and no written
        // name holds a line break).
        let rest = &self.text[self.next..];
        if let Some((content, after)) = rest.split_once(' ')
            && !content.starts_with('#')
            && !name.contains('\\')
            && let Some(end) = after.strip_prefix(name)
            && (end.is_empty() || end.starts_with('\n'))
        {
            self.next = self.text.len() - end.len() + usize::from(!end.is_empty());
            self.in_order += 1;
            return Some(content);
        }
        let mut at = self.next;
        while let Some((line, next)) = line_at(self.text, at) {
            at = next;
            if line.starts_with('#') {
                continue;
            }
            if let Some((content, escaped)) = line.split_once(' ')
                && unescape(escaped) == name
            {
                self.next = next;
                self.in_order += 1;
                return Some(content);
            }
            break;
        }
        let &(content, next) = self.map().get(name)?;
        self.next = next;
        Some(content)
    }

    /// Whether it holds a line for `name` (see [`InOrder::get`]).
    pub(crate) fn contains(&mut self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many resource lines it holds: counted, not hashed, unless every
    /// lookup so far found its line in order and no line is left after the
    /// last (then it is how many were found).
    pub(crate) fn len(&self) -> usize {
        if self.map.get().is_none() && self.text[self.next..].trim().is_empty() {
            return self.in_order;
        }
        let mut count = 0;
        let mut at = 0;
        while let Some((line, next)) = line_at(self.text, at) {
            at = next;
            count += usize::from(!line.starts_with('#') && line.contains(' '));
        }
        count
    }

    /// The names of its resource lines, in no order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.map().keys().map(|n| n.as_ref())
    }

    fn map(&self) -> &NameMap<'s, (&'s str, usize)> {
        self.map.get_or_init(|| {
            let mut map = NameMap::with_capacity_and_hasher(line_count(self.text), Default::default());
            let mut at = 0;
            while let Some((line, next)) = line_at(self.text, at) {
                at = next;
                if let Some((content, name)) = line.split_once(' ')
                    && !line.starts_with('#')
                {
                    map.insert(unescape(name), (content, next));
                }
            }
            map
        })
    }
}

/// Where `content`, a content [`InOrder::get`] found in `text`, starts in
/// it: with [`content_at`], a way back to it once the text is kept.
pub(crate) fn offset_of(text: &str, content: &str) -> usize {
    let at = (content.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    debug_assert!(text.get(at..).is_some_and(|rest| rest.starts_with(content)));
    at
}

/// The content of the resource line whose content starts at `at` in
/// `text` ([`offset_of`]).
pub(crate) fn content_at(text: &str, at: usize) -> Option<&str> {
    text.get(at..)?.split_once(' ').map(|(content, _)| content)
}

/// The line of `text` that starts at `at`, and where the next one starts.
fn line_at(text: &str, at: usize) -> Option<(&str, usize)> {
    let rest = text.get(at..).filter(|r| !r.is_empty())?;
    Some(match rest.find('\n') {
        Some(end) => (&rest[..end], at + end + 1),
        None => (rest, text.len()),
    })
}

/// The number of lines of `text`, at most one more than there are
/// resource lines.
fn line_count(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// Whether a `.sums` text whose header states `table_checksum` was
/// written with the parcel file at `parcel` (whose header states the
/// same). Reads the parcel's header only: which version of a parcel a
/// file is, not whether it is intact (every read from it is checked).
pub(crate) fn describes(table_checksum: u64, parcel: &Path) -> bool {
    let mut header = [0; HEADER_LEN];
    File::open(parcel)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| stated_table_checksum(&header) == Some(table_checksum))
}

/// The blob a content names, when the resource is that whole blob (not a
/// slice of it).
pub(crate) fn whole_blob(content: &str) -> Option<ContentHash> {
    let blob = content.split_once('@').map_or(content, |(blob, _)| blob);
    let blob = blob.split_once('+').map_or(blob, |(blob, _)| blob);
    if blob.contains(':') {
        return None;
    }
    blob.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_text_reads_back_and_names_its_whole_blobs() {
        let (a, b) = (ContentHash::of(b"a"), ContentHash::of(b"b"));
        let whole = a.to_hex();
        let slice = format!("{FRAME}{}+{}", b.to_hex(), a.to_hex());
        let member = format!("{}+{}@none", b.to_hex(), a.to_hex());
        let text = write(
            "zstd",
            0xfeed,
            [
                (whole.as_str(), "levels/one two.txt"),
                (slice.as_str(), "sprites/hero.png"),
                (member.as_str(), "fonts/mono.ttf"),
            ]
            .into_iter(),
        );
        assert_eq!(header(&text), Some(("zstd", 0xfeed)));
        let contents = contents(&text);
        assert_eq!(contents.len(), 3);
        let blob = |name: &str| whole_blob(contents[name]);
        assert_eq!(blob("levels/one two.txt"), Some(a));
        assert_eq!(blob("sprites/hero.png"), None, "a frame is a slice");
        assert_eq!(blob("fonts/mono.ttf"), Some(b));
        assert!(header("").is_none() && header("b3 name\n").is_none());
    }

    #[test]
    fn where_the_writer_places_each_content_is_where_a_reader_finds_it() {
        let names = ["a.txt", "b c.txt", "d\ne\\f.txt", "é.txt"];
        let contents = ["1", "22", "frame:3", "4+5@none"];
        let mut placed = Vec::new();
        let text = write_placing(
            "lz4",
            9,
            contents.iter().copied().zip(names),
            |at| placed.push(at),
        );
        assert_eq!(text, write("lz4", 9, contents.iter().copied().zip(names)));
        let at: Vec<Option<&str>> = placed.iter().map(|&at| content_at(&text, at)).collect();
        assert_eq!(at, contents.map(Some));
        let mut sums = InOrder::new(&text);
        let found: Vec<usize> = (names.iter())
            .map(|n| offset_of(&text, sums.get(n).expect("written")))
            .collect();
        assert_eq!(found, placed);
    }

    #[test]
    fn lines_are_found_in_order_out_of_order_and_not_at_all() {
        let names = ["a.txt", "b c.txt", "d\ne.txt", "f.txt"];
        let text = write(
            "lz4",
            7,
            names.iter().zip(["1", "2", "3", "4"]).map(|(n, c)| (c, *n)),
        );
        let mut sums = InOrder::new(&text);
        assert_eq!(sums.len(), 4);
        // In order: each the line after the last found, escapes and all.
        let found: Vec<_> = names.iter().map(|n| sums.get(n)).collect();
        assert_eq!(found, [Some("1"), Some("2"), Some("3"), Some("4")]);
        assert_eq!(sums.get("a.txt"), Some("1"), "back to the start");
        assert_eq!(sums.get("b c.txt"), Some("2"), "and on in order again");
        assert_eq!(sums.get("new.txt"), None);
        assert_eq!(sums.get("f.txt"), Some("4"), "past a line not asked for");
        assert!(sums.contains("d\ne.txt") && !sums.contains("#parcel"));
        let mut all: Vec<&str> = sums.names().collect();
        all.sort_unstable();
        assert_eq!(all, ["a.txt", "b c.txt", "d\ne.txt", "f.txt"]);
        assert_eq!(InOrder::new("").len(), 0);
        assert_eq!(InOrder::new("").get("a.txt"), None);
    }
}
