//! A result entry: one step's [`Record`] as the remote cache keeps it, with
//! its small outputs inside.
//!
//! ```text
//! cargo-assets result 1\n
//! {"record":{…},"inline":[true,false,…]}\n      one line of JSON
//! <the bytes of every inlined output, in output order>
//! ```
//!
//! Bazel's remote cache keeps an action's result and its outputs apart and
//! lets small outputs ride inside the result; so does this. A sprite's
//! cached pixels are a few kilobytes, and one request per step instead of
//! two halves the round trips of a build fetched from the remote. Outputs
//! over [`INLINE_MAX`] (an atlas's pages) are blobs of their own, fetched
//! only when missing locally.
//!
//! Nothing here is trusted: the lengths must add up exactly, and every
//! output, inlined or not, is checked against its hash before use (by the
//! caller, which knows which are needed).

use crate::record::Record;

/// The first line of every entry.
const MAGIC: &[u8] = b"cargo-assets result 1\n";

/// Outputs up to this size travel inside the entry.
pub(crate) const INLINE_MAX: u64 = 256 << 10;

/// A decoded entry.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The step's record, as the machine that built it wrote it.
    pub record: Record,
    /// Each output's bytes when inlined, in output order.
    pub inline: Vec<Option<Vec<u8>>>,
}

#[derive(serde::Serialize)]
struct HeaderOut<'a> {
    record: &'a Record,
    inline: Vec<bool>,
}

#[derive(serde::Deserialize)]
struct HeaderIn {
    record: Record,
    inline: Vec<bool>,
}

/// The entry for `record`, whose outputs' bytes are `outputs` (in order).
pub(crate) fn encode(record: &Record, outputs: &[Vec<u8>]) -> Vec<u8> {
    let inline: Vec<bool> = record
        .outputs
        .iter()
        .map(|o| o.size <= INLINE_MAX)
        .collect();
    let header = serde_json::to_vec(&HeaderOut {
        record,
        inline: inline.clone(),
    })
    .expect("a record serializes");
    let mut bytes = Vec::with_capacity(MAGIC.len() + header.len() + 1);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&header);
    bytes.push(b'\n');
    for (bytes_of, inlined) in outputs.iter().zip(inline) {
        if inlined {
            bytes.extend_from_slice(bytes_of);
        }
    }
    bytes
}

/// Reads an entry; `None` if it is not one, or its lengths do not add up.
pub(crate) fn decode(bytes: &[u8]) -> Option<Entry> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let header: HeaderIn = serde_json::from_slice(&rest[..end]).ok()?;
    if header.inline.len() != header.record.outputs.len() {
        return None;
    }
    let mut body = &rest[end + 1..];
    let mut inline = Vec::with_capacity(header.inline.len());
    for (output, &inlined) in header.record.outputs.iter().zip(&header.inline) {
        if !inlined {
            inline.push(None);
            continue;
        }
        let len = usize::try_from(output.size)
            .ok()
            .filter(|&n| n <= body.len())?;
        let (taken, left) = body.split_at(len);
        inline.push(Some(taken.to_vec()));
        body = left;
    }
    body.is_empty().then_some(Entry {
        record: header.record,
        inline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset_path::AssetPath;
    use crate::hash::ContentHash;
    use crate::record::{OutputRecord, RECORD_FORMAT};

    fn record(sizes: &[u64]) -> Record {
        Record {
            format: RECORD_FORMAT,
            asset: AssetPath::new("hero.png").unwrap(),
            variant: "dev".into(),
            processor: "sprite".into(),
            processor_version: 1,
            processor_code: None,
            settings: "{}".into(),
            key: ContentHash::of(b"key"),
            started_ns: 1,
            inputs: vec![],
            dependencies: vec![],
            references: vec![],
            diagnostics: vec![],
            outputs: sizes
                .iter()
                .map(|&size| OutputRecord {
                    label: String::new(),
                    kind: "bytes".into(),
                    size,
                    hash: ContentHash::of(b"x"),
                })
                .collect(),
            reason: None,
            fetched_from: None,
            outputs_hash: Default::default(),
        }
    }

    #[test]
    fn small_outputs_ride_inside_and_large_ones_do_not() {
        let big = INLINE_MAX + 1;
        let record = record(&[3, big, 2]);
        let outputs = vec![b"abc".to_vec(), vec![0; big as usize], b"de".to_vec()];
        let bytes = encode(&record, &outputs);
        assert!(bytes.len() < 1000, "the large output is not inside");
        let entry = decode(&bytes).unwrap();
        assert_eq!(entry.record, record);
        assert_eq!(
            entry.inline,
            vec![Some(b"abc".to_vec()), None, Some(b"de".to_vec())]
        );
    }

    #[test]
    fn anything_that_does_not_add_up_is_refused() {
        let record = record(&[3]);
        let bytes = encode(&record, &[b"abc".to_vec()]);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_none());
        let mut other_magic = bytes.clone();
        other_magic[0] = b'C';
        assert!(decode(&other_magic).is_none());
        assert!(decode(b"cargo-assets result 1\n{\"record\":1}\n").is_none());
    }
}
