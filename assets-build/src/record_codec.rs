//! The binary form of a [`Record`] in the record log (see `record_log.rs`).
//!
//! Why not JSON, which the log held before: a no-op build reads every
//! record, and at 10,000 assets parsing 8.4 MB of JSON lines (each checked
//! by a BLAKE3 of its text) was the longest phase of the no-op, ~80 ms of
//! ~210 on two cores: strings scanned for escapes and checked as UTF-8,
//! every hash read from 64 hex digits. Here hashes are their 32 bytes,
//! numbers are fixed-width little-endian, and a record is ~40% of its JSON
//! size. Serde's binary formats do not fit [`Record`] as it is: its JSON
//! form (kept for the remote cache's entries, see `remote/entry.rs`)
//! flattens untagged and internally tagged enums, which only self-describing
//! formats can read. People read records through `cargo assets why` and
//! `cargo assets deps`, which print them.
//!
//! Layout, in field order (`str` is a `u32` byte length then UTF-8; `hash`
//! is 32 bytes; a list is a `u32` count then its items; an option is a `u8`
//! 0 or 1 then the value):
//!
//! ```text
//! u32 format, str asset, str variant, str processor, u32 processor_version,
//! option processor_code: u64,
//! str settings, hash key, u64 started_ns,
//! list of inputs:       str path, u8 state,
//!                         0 present:   u64 size, mtime_ns, ctime_ns, ino, dev, hash
//!                         1 absent:    u8 bool
//!                         2 unsettled: u8 bool
//! list of dependencies: str asset, hash outputs_hash
//! list of references:   str asset
//! list of warnings:     str
//! list of outputs:      str label, str kind, u64 size, hash
//! option reason:        u8 kind (the order of `DirtyReason`'s variants), its fields
//! option fetched_from:  str
//! ```
//!
//! [`decode`] reads untrusted bytes (a log may be torn or damaged): any
//! length past the end, bad UTF-8, unknown tag, invalid asset path or
//! trailing byte makes it `None`, never a panic or a huge allocation.

use crate::asset_path::AssetPath;
use crate::hash::ContentHash;
use crate::record::{
    DependencyUse, Diagnostic, DirtyReason, FileStamp, Input, InputState, Location, OutputRecord,
    Record, Severity,
};

/// Appends the binary form of `record` to `out`.
pub(crate) fn encode(record: &Record, out: &mut Vec<u8>) {
    let mut w = Writer(out);
    w.u32(record.format);
    w.str(record.asset.as_str());
    w.str(&record.variant);
    w.str(&record.processor);
    w.u32(record.processor_version);
    match record.processor_code {
        None => w.u8(0),
        Some(code) => {
            w.u8(1);
            w.u64(code);
        }
    }
    w.str(&record.settings);
    w.hash(&record.key);
    w.u64(record.started_ns);
    w.len(record.inputs.len());
    for input in &record.inputs {
        w.str(&input.path);
        match &input.state {
            InputState::Present { stamp, hash } => {
                w.u8(0);
                for n in [
                    stamp.size,
                    stamp.mtime_ns,
                    stamp.ctime_ns,
                    stamp.ino,
                    stamp.dev,
                ] {
                    w.u64(n);
                }
                w.hash(hash);
            }
            InputState::Absent { absent } => {
                w.u8(1);
                w.u8(u8::from(*absent));
            }
            InputState::Unsettled { unsettled } => {
                w.u8(2);
                w.u8(u8::from(*unsettled));
            }
        }
    }
    w.len(record.dependencies.len());
    for d in &record.dependencies {
        w.str(d.asset.as_str());
        w.hash(&d.outputs_hash);
    }
    w.len(record.references.len());
    for r in &record.references {
        w.str(r.as_str());
    }
    w.len(record.diagnostics.len());
    for d in &record.diagnostics {
        w.u8(match d.severity {
            Severity::Warning => 0,
            Severity::Note => 1,
        });
        w.str(&d.message);
        match &d.location {
            None => w.u8(0),
            Some(at) => {
                w.u8(1);
                match &at.file {
                    None => w.u8(0),
                    Some(file) => {
                        w.u8(1);
                        w.str(file.as_str());
                    }
                }
                w.u32(at.line);
                // Columns count from 1: 0 is "unknown".
                w.u32(at.column.unwrap_or(0));
            }
        }
    }
    w.len(record.outputs.len());
    for o in &record.outputs {
        w.str(&o.label);
        w.str(&o.kind);
        w.u64(o.size);
        w.hash(&o.hash);
    }
    match &record.reason {
        None => w.u8(0),
        Some(reason) => {
            w.u8(1);
            reason_out(&mut w, reason);
        }
    }
    match &record.fetched_from {
        None => w.u8(0),
        Some(remote) => {
            w.u8(1);
            w.str(remote);
        }
    }
}

/// The record whose binary form is exactly `bytes`.
pub(crate) fn decode(bytes: &[u8]) -> Option<Record> {
    let mut r = Reader(bytes);
    let record = Record {
        format: r.u32()?,
        asset: r.asset()?,
        variant: r.string()?,
        processor: r.string()?,
        processor_version: r.u32()?,
        processor_code: match r.u8()? {
            0 => None,
            1 => Some(r.u64()?),
            _ => return None,
        },
        settings: r.string()?,
        key: r.hash()?,
        started_ns: r.u64()?,
        inputs: r.list(|r| {
            let path = r.string()?;
            let state = match r.u8()? {
                0 => InputState::Present {
                    stamp: FileStamp {
                        size: r.u64()?,
                        mtime_ns: r.u64()?,
                        ctime_ns: r.u64()?,
                        ino: r.u64()?,
                        dev: r.u64()?,
                    },
                    hash: r.hash()?,
                },
                1 => InputState::Absent { absent: r.bool()? },
                2 => InputState::Unsettled {
                    unsettled: r.bool()?,
                },
                _ => return None,
            };
            Some(Input { path, state })
        })?,
        dependencies: r.list(|r| {
            Some(DependencyUse {
                asset: r.asset()?,
                outputs_hash: r.hash()?,
            })
        })?,
        references: r.list(Reader::asset)?,
        diagnostics: r.list(|r| {
            Some(Diagnostic {
                severity: match r.u8()? {
                    0 => Severity::Warning,
                    1 => Severity::Note,
                    _ => return None,
                },
                message: r.string()?,
                location: r.option(|r| {
                    Some(Location {
                        file: r.option(Reader::asset)?,
                        line: r.u32()?,
                        column: Some(r.u32()?).filter(|&c| c != 0),
                    })
                })?,
            })
        })?,
        outputs: r.list(|r| {
            Some(OutputRecord {
                label: r.string()?,
                kind: r.string()?,
                size: r.u64()?,
                hash: r.hash()?,
            })
        })?,
        reason: r.option(reason_in)?,
        fetched_from: r.option(Reader::string)?,
        outputs_hash: Default::default(),
    };
    r.0.is_empty().then_some(record)
}

/// A [`DirtyReason`]: its variant's place in the enum, then its fields.
fn reason_out(w: &mut Writer<'_>, reason: &DirtyReason) {
    match reason {
        DirtyReason::NoRecord => w.tagged(0, &[]),
        DirtyReason::ProcessorChanged { previous } => w.tagged(1, &[previous]),
        DirtyReason::ProcessorVersionChanged { previous, current } => {
            w.u8(2);
            w.u32(*previous);
            w.u32(*current);
        }
        DirtyReason::SettingsChanged { previous, current } => w.tagged(3, &[previous, current]),
        DirtyReason::InputChanged { path } => w.tagged(4, &[path]),
        DirtyReason::InputAppeared { path } => w.tagged(5, &[path]),
        DirtyReason::InputRemoved { path } => w.tagged(6, &[path]),
        DirtyReason::DependencyChanged { asset } => w.tagged(7, &[asset.as_str()]),
        DirtyReason::OutputMissing { label } => w.tagged(8, &[label]),
        DirtyReason::ProcessorCodeChanged => w.tagged(9, &[]),
    }
}

fn reason_in(r: &mut Reader<'_>) -> Option<DirtyReason> {
    Some(match r.u8()? {
        0 => DirtyReason::NoRecord,
        1 => DirtyReason::ProcessorChanged {
            previous: r.string()?,
        },
        2 => DirtyReason::ProcessorVersionChanged {
            previous: r.u32()?,
            current: r.u32()?,
        },
        3 => DirtyReason::SettingsChanged {
            previous: r.string()?,
            current: r.string()?,
        },
        4 => DirtyReason::InputChanged { path: r.string()? },
        5 => DirtyReason::InputAppeared { path: r.string()? },
        6 => DirtyReason::InputRemoved { path: r.string()? },
        7 => DirtyReason::DependencyChanged { asset: r.asset()? },
        8 => DirtyReason::OutputMissing { label: r.string()? },
        9 => DirtyReason::ProcessorCodeChanged,
        _ => return None,
    })
}

/// Little-endian fields onto a buffer.
struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u8(&mut self, n: u8) {
        self.0.push(n);
    }

    fn u32(&mut self, n: u32) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    fn u64(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    /// A count or length. Records stay far below 4 GiB (the log's frames
    /// are limited to that too).
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("a record part under 4 GiB"));
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn hash(&mut self, h: &ContentHash) {
        self.0.extend_from_slice(h.as_bytes());
    }

    /// A variant's tag, then its text fields.
    fn tagged(&mut self, tag: u8, texts: &[&str]) {
        self.u8(tag);
        texts.iter().for_each(|t| self.str(t));
    }
}

/// Fields off the front of a byte slice; `None` past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u32()?).ok()
    }

    fn string(&mut self) -> Option<String> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).ok().map(str::to_owned)
    }

    fn asset(&mut self) -> Option<AssetPath> {
        let n = self.len()?;
        let name = std::str::from_utf8(self.take(n)?).ok()?;
        AssetPath::from_name(name).ok()
    }

    fn hash(&mut self) -> Option<ContentHash> {
        self.array().map(ContentHash::from_bytes)
    }

    /// A list; its count is checked against the bytes left (every item
    /// takes at least one), so a damaged count cannot reserve gigabytes.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let n = self.len()?;
        if n > self.0.len() {
            return None;
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(item(self)?);
        }
        Some(items)
    }

    fn option<T>(&mut self, value: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => value(self).map(Some),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RECORD_FORMAT;

    /// A record with every input state, and `reason`.
    fn record(reason: Option<DirtyReason>) -> Record {
        let stamp = FileStamp {
            size: 3,
            mtime_ns: u64::MAX,
            ctime_ns: 8,
            ino: 9,
            dev: 10,
        };
        Record {
            format: RECORD_FORMAT,
            asset: AssetPath::new("sprites/héros.png").unwrap(),
            variant: "dev".into(),
            processor: "sprite".into(),
            processor_version: 3,
            processor_code: Some(u64::MAX - 5),
            settings: r#"{"pivot":[0.5,1]}"#.into(),
            key: ContentHash::of(b"key"),
            started_ns: 1_795_602_941_449_858_262,
            inputs: vec![
                Input {
                    path: "assets/sprites/héros.png".into(),
                    state: InputState::Present {
                        stamp,
                        hash: ContentHash::of(b"png"),
                    },
                },
                Input {
                    path: "assets/sprites/héros.json".into(),
                    state: InputState::Absent { absent: true },
                },
                Input {
                    path: "tools/palette.act".into(),
                    state: InputState::Unsettled { unsettled: true },
                },
            ],
            dependencies: vec![DependencyUse {
                asset: AssetPath::from_name("atlas:main").unwrap(),
                outputs_hash: ContentHash::of(b"outputs"),
            }],
            references: vec![AssetPath::new("models/Leather Parts.png").unwrap()],
            diagnostics: vec![
                Diagnostic {
                    severity: Severity::Warning,
                    message: "`tiles.png` is 1 px wider than its grid".into(),
                    location: Some(
                        Location::at(3, 14).in_file(AssetPath::new("maps/tiles.tsx").unwrap()),
                    ),
                },
                Diagnostic {
                    severity: Severity::Note,
                    message: "2 of 3 lines\nfrom a tool".into(),
                    location: Some(Location::line(7)),
                },
                Diagnostic {
                    severity: Severity::Warning,
                    message: String::new(),
                    location: None,
                },
            ],
            outputs: vec![
                OutputRecord {
                    label: String::new(),
                    kind: "sprite-source".into(),
                    size: 911,
                    hash: ContentHash::of(b"a"),
                },
                OutputRecord {
                    label: "0".into(),
                    kind: "image".into(),
                    size: 0,
                    hash: ContentHash::of(b""),
                },
            ],
            reason,
            fetched_from: Some("s3://bucket/prefix".into()),
            outputs_hash: Default::default(),
        }
    }

    fn every_reason() -> Vec<Option<DirtyReason>> {
        let s = |s: &str| s.to_owned();
        vec![
            None,
            Some(DirtyReason::NoRecord),
            Some(DirtyReason::ProcessorChanged {
                previous: s("copy"),
            }),
            Some(DirtyReason::ProcessorVersionChanged {
                previous: 1,
                current: 2,
            }),
            Some(DirtyReason::SettingsChanged {
                previous: s("{}"),
                current: s(r#"{"x":1}"#),
            }),
            Some(DirtyReason::InputChanged { path: s("a") }),
            Some(DirtyReason::InputAppeared { path: s("b") }),
            Some(DirtyReason::InputRemoved { path: s("c") }),
            Some(DirtyReason::DependencyChanged {
                asset: AssetPath::new("d.png").unwrap(),
            }),
            Some(DirtyReason::OutputMissing { label: s("0") }),
            Some(DirtyReason::ProcessorCodeChanged),
        ]
    }

    #[test]
    fn every_field_and_variant_round_trips() {
        for reason in every_reason() {
            let mut r = record(reason);
            for fetched_from in [None, Some("s3://b".to_owned())] {
                r.fetched_from = fetched_from;
                let mut bytes = Vec::new();
                encode(&r, &mut bytes);
                assert_eq!(decode(&bytes), Some(r.clone()));
                // Smaller than its JSON, which this replaced.
                assert!(bytes.len() < serde_json::to_vec(&r).unwrap().len());
            }
        }
    }

    #[test]
    fn damaged_bytes_are_refused_without_panicking() {
        let mut bytes = Vec::new();
        encode(&record(Some(DirtyReason::NoRecord)), &mut bytes);
        for len in 0..bytes.len() {
            assert_eq!(decode(&bytes[..len]), None, "cut to {len} bytes");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None, "a trailing byte");
        // Every byte flipped: decoded to something or refused, never a
        // panic; a count or length made huge is refused before allocating.
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let _ = decode(&damaged);
            }
        }
        let mut huge = bytes.clone();
        let inputs_at = offset_of_inputs(&bytes);
        huge[inputs_at..inputs_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&huge), None);
    }

    /// Where the input count lies in an encoded record.
    fn offset_of_inputs(bytes: &[u8]) -> usize {
        let mut r = Reader(bytes);
        r.u32().unwrap();
        r.asset().unwrap();
        r.string().unwrap();
        r.string().unwrap();
        r.u32().unwrap();
        if r.u8().unwrap() == 1 {
            r.u64().unwrap();
        }
        r.string().unwrap();
        r.hash().unwrap();
        r.u64().unwrap();
        bytes.len() - r.0.len()
    }
}
