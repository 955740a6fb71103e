//! [`ParcelWriter`]: builds parcel bytes (feature `write`, used by assets-build).
//!
//! The output is deterministic: entries sorted by id, kind names stored once
//! in order of first use in that sorted order, zero padding, no timestamps.

use std::collections::HashMap;
use std::fmt;

use crate::format::{
    DATA_ALIGN, ENTRY_LEN, HEADER_LEN, MAGIC, VERSION, bucket_bits_for, bucket_of, data_checksum,
    table_checksum,
};
use crate::id::ResourceId;

/// Collects resources, then lays them out as a parcel.
#[derive(Debug, Default)]
pub struct ParcelWriter {
    resources: Vec<(ResourceId, String, String, Vec<u8>)>,
}

/// Why a parcel could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// Two resources have one name.
    DuplicateName(String),
    /// Two names hash to one id (astronomically unlikely; rename one).
    IdCollision(String, String),
    /// Names exceed the format's 4 GiB names area.
    TooLarge,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::DuplicateName(n) => write!(f, "two resources are named `{n}`"),
            WriteError::IdCollision(a, b) => {
                write!(f, "`{a}` and `{b}` have the same resource id; rename one")
            }
            WriteError::TooLarge => f.write_str("the names of this parcel exceed 4 GiB"),
        }
    }
}

impl std::error::Error for WriteError {}

impl ParcelWriter {
    /// An empty parcel.
    pub fn new() -> ParcelWriter {
        ParcelWriter::default()
    }

    /// Adds a resource.
    pub fn add(&mut self, name: &str, kind: &str, data: Vec<u8>) {
        self.resources
            .push((ResourceId::of(name), name.to_owned(), kind.to_owned(), data));
    }

    /// The parcel's bytes.
    pub fn finish(mut self) -> Result<Vec<u8>, WriteError> {
        self.resources.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        for pair in self.resources.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(if pair[0].1 == pair[1].1 {
                    WriteError::DuplicateName(pair[0].1.clone())
                } else {
                    WriteError::IdCollision(pair[0].1.clone(), pair[1].1.clone())
                });
            }
        }
        let count = self.resources.len();
        let bits = bucket_bits_for(count);
        let buckets = 1usize << bits;

        // Names area: each name, then each kind name once.
        let mut names = Vec::new();
        let mut kinds: HashMap<&str, (u32, u32)> = HashMap::new();
        let mut name_spans = Vec::with_capacity(count);
        let push = |names: &mut Vec<u8>, s: &str| -> Result<(u32, u32), WriteError> {
            let start = u32::try_from(names.len()).map_err(|_| WriteError::TooLarge)?;
            names.extend_from_slice(s.as_bytes());
            Ok((
                start,
                u32::try_from(s.len()).map_err(|_| WriteError::TooLarge)?,
            ))
        };
        for (_, name, _, _) in &self.resources {
            name_spans.push(push(&mut names, name)?);
        }
        let mut kind_spans = Vec::with_capacity(count);
        for (_, _, kind, _) in &self.resources {
            let span = match kinds.get(kind.as_str()) {
                Some(&s) => s,
                None => {
                    let s = push(&mut names, kind)?;
                    kinds.insert(kind, s);
                    s
                }
            };
            kind_spans.push(span);
        }

        // Data area: each resource at the next multiple of 16.
        let mut data_offsets = Vec::with_capacity(count);
        let mut data_len = 0usize;
        for (_, _, _, data) in &self.resources {
            data_offsets.push(data_len);
            data_len = (data_len + data.len()).next_multiple_of(DATA_ALIGN);
        }
        let entries_at = HEADER_LEN + 4 * (buckets + 1);
        let names_at = entries_at + count * ENTRY_LEN;
        let data_at = (names_at + names.len()).next_multiple_of(DATA_ALIGN);
        let mut out = vec![0u8; data_at + data_len];

        out[..8].copy_from_slice(&MAGIC);
        out[8..10].copy_from_slice(&VERSION.to_le_bytes());
        out[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        out[16..20].copy_from_slice(&(count as u32).to_le_bytes());
        out[20..24].copy_from_slice(&bits.to_le_bytes());
        out[24..32].copy_from_slice(&(names_at as u64).to_le_bytes());
        out[32..40].copy_from_slice(&(names.len() as u64).to_le_bytes());
        out[40..48].copy_from_slice(&(data_at as u64).to_le_bytes());
        out[48..56].copy_from_slice(&(data_len as u64).to_le_bytes());

        // Bucket k starts at the first entry whose bucket is >= k.
        let mut entry = 0;
        for k in 0..=buckets {
            while entry < count && bucket_of(self.resources[entry].0.raw(), bits) < k {
                entry += 1;
            }
            let at = HEADER_LEN + 4 * k;
            out[at..at + 4].copy_from_slice(&(entry as u32).to_le_bytes());
        }
        for (i, (id, _, _, data)) in self.resources.iter().enumerate() {
            let e = entries_at + i * ENTRY_LEN;
            out[e..e + 8].copy_from_slice(&id.raw().to_le_bytes());
            out[e + 8..e + 12].copy_from_slice(&name_spans[i].0.to_le_bytes());
            out[e + 12..e + 16].copy_from_slice(&name_spans[i].1.to_le_bytes());
            out[e + 16..e + 20].copy_from_slice(&kind_spans[i].0.to_le_bytes());
            out[e + 20..e + 24].copy_from_slice(&kind_spans[i].1.to_le_bytes());
            out[e + 24..e + 32].copy_from_slice(&(data_offsets[i] as u64).to_le_bytes());
            out[e + 32..e + 40].copy_from_slice(&(data.len() as u64).to_le_bytes());
            out[e + 40..e + 48].copy_from_slice(&data_checksum(data).to_le_bytes());
            let d = data_at + data_offsets[i];
            out[d..d + data.len()].copy_from_slice(data);
        }
        out[names_at..names_at + names.len()].copy_from_slice(&names);
        let checksum = table_checksum(&out, data_at);
        out[56..64].copy_from_slice(&checksum.to_le_bytes());
        Ok(out)
    }
}
