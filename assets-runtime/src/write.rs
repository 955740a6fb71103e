//! [`ParcelWriter`]: builds parcel bytes (feature `write`, used by assets-build).
//!
//! The output is deterministic: entries sorted by id, kind names stored once
//! in order of first use in that sorted order, zero padding, no timestamps,
//! and compression a pure function of the bytes.
//!
//! Compression ([`ParcelWriter::compressed`], or one resource's own with
//! [`ParcelWriter::add_later_compressed`]) is decided per resource: never
//! for `image` and `sprite` resources (their layouts are checked at open;
//! image rows have their own encodings), nor for resources under
//! [`MIN_COMPRESSED`] bytes, and kept only where it saves at least a 32nd of
//! the bytes and at least one 16-byte alignment step: what is not worth a
//! decompression is stored as it is and read in place.

use std::collections::HashMap;
use std::fmt;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use crate::codec;
use crate::format::{
    Compression, DATA_ALIGN, ENTRY_LEN, FLAG_PATCH, HEADER_LEN, MAGIC, VERSION, bucket_bits_for,
    bucket_of, data_checksum, stored_uncompressed, table_checksum,
};
use crate::id::ResourceId;
use crate::parcel::Resource;

pub use crate::codec::{RESOURCE_ZSTD_LEVEL, ZSTD_LEVEL};

/// Resources shorter than this are never compressed: the saving would be
/// less than the alignment padding around them.
pub const MIN_COMPRESSED: usize = 64;

/// Collects resources, then lays them out as a parcel: in memory with
/// [`finish`](ParcelWriter::finish), or streamed to a file with
/// [`write_to`](ParcelWriter::write_to), which holds one resource's bytes at
/// a time (a parcel can be far larger than the memory one wants to spend).
#[derive(Debug, Default)]
pub struct ParcelWriter {
    resources: Vec<Pending>,
    compression: Option<Compression>,
    /// The header's flags: [`FLAG_PATCH`] or none.
    flags: u32,
}

#[derive(Debug)]
struct Pending {
    id: ResourceId,
    name: String,
    kind: String,
    len: u64,
    /// The bytes, if given up front; else fetched while writing.
    data: Option<Vec<u8>>,
    /// The compression asked for (`None`: stored as it is).
    compression: Option<Compression>,
}

/// Why a parcel could not be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    /// Two resources have one name.
    DuplicateName(String),
    /// Two names hash to one id (astronomically unlikely; rename one).
    IdCollision(String, String),
    /// Names exceed the format's 4 GiB names area.
    TooLarge,
    /// A resource's bytes were not as long as announced.
    WrongLength(String),
    /// [`ParcelWriter::finish`] met a resource added without its bytes.
    MissingBytes(String),
    /// The caller's `fetch` failed; the caller holds the reason.
    FetchFailed,
    /// The compression asked for is not in this build: the named cargo
    /// feature of assets-runtime brings it.
    CompressionUnavailable {
        /// The compression.
        compression: Compression,
        /// The feature.
        feature: &'static str,
    },
    /// Writing failed.
    Io(std::io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::DuplicateName(n) => write!(f, "two resources are named `{n}`"),
            WriteError::IdCollision(a, b) => {
                write!(f, "`{a}` and `{b}` have the same resource id; rename one")
            }
            WriteError::TooLarge => f.write_str("the names of this parcel exceed 4 GiB"),
            WriteError::WrongLength(n) => {
                write!(f, "resource `{n}` is not as long as announced")
            }
            WriteError::MissingBytes(n) => write!(f, "resource `{n}` was added without its bytes"),
            WriteError::FetchFailed => f.write_str("a resource's bytes could not be fetched"),
            WriteError::CompressionUnavailable {
                compression,
                feature,
            } => write!(
                f,
                "{} compression needs the `{feature}` feature of assets-runtime",
                compression.name()
            ),
            // Transparent: shown, and chained, as the I/O error itself.
            WriteError::Io(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io(e) => e.source(),
            _ => None,
        }
    }
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

impl ParcelWriter {
    /// An empty parcel whose resources are stored as they are.
    pub fn new() -> ParcelWriter {
        ParcelWriter::default()
    }

    /// An empty parcel whose resources are compressed with `compression`
    /// where that is worth it (see the module docs).
    pub fn compressed(compression: Compression) -> ParcelWriter {
        ParcelWriter {
            resources: Vec::new(),
            compression: Some(compression).filter(|&c| c != Compression::None),
            flags: 0,
        }
    }

    /// Marks what it writes as a patch whose sprites and fonts may lie on
    /// its base's pages ([`FLAG_PATCH`]): it is then read only through
    /// its base (see [`crate::patch`]).
    pub fn patch(mut self) -> ParcelWriter {
        self.flags |= FLAG_PATCH;
        self
    }

    /// Adds a resource with its bytes.
    pub fn add(&mut self, name: &str, kind: &str, data: Vec<u8>) {
        self.push(name, kind, data.len() as u64, Some(data), self.compression);
    }

    /// Adds a resource of `len` bytes that `write_to`'s `fetch` will provide,
    /// by the index of this call among all `add*` calls.
    pub fn add_later(&mut self, name: &str, kind: &str, len: u64) {
        self.push(name, kind, len, None, self.compression);
    }

    /// As [`add_later`](ParcelWriter::add_later), compressed with
    /// `compression` instead of the parcel's (where that is worth it, as
    /// for every resource).
    pub fn add_later_compressed(
        &mut self,
        name: &str,
        kind: &str,
        len: u64,
        compression: Compression,
    ) {
        let compression = Some(compression).filter(|&c| c != Compression::None);
        self.push(name, kind, len, None, compression);
    }

    fn push(
        &mut self,
        name: &str,
        kind: &str,
        len: u64,
        data: Option<Vec<u8>>,
        compression: Option<Compression>,
    ) {
        self.resources.push(Pending {
            id: ResourceId::of_runtime(name),
            name: name.to_owned(),
            kind: kind.to_owned(),
            len,
            data,
            compression,
        });
    }

    /// The parcel's bytes, in memory. Every resource must have been added
    /// with its bytes.
    pub fn finish(self) -> Result<Vec<u8>, WriteError> {
        let names: Vec<String> = self.resources.iter().map(|r| r.name.clone()).collect();
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_to(&mut out, |i| {
            Err(WriteError::MissingBytes(names[i].clone()))
        })?;
        Ok(out.into_inner())
    }

    /// Writes the parcel to `out`, from its start: header and tables first
    /// (checksums still zero), then each resource, fetched one at a time
    /// (`fetch(i)` for the `i`-th resource added with [`add_later`]) and
    /// checksummed (and compressed) as it is written, or copied as another
    /// parcel stores it ([`Payload::Stored`]), then the completed header and
    /// tables.
    ///
    /// [`add_later`]: ParcelWriter::add_later
    pub fn write_to<'p, W: Write + Seek>(
        self,
        out: &mut W,
        mut fetch: impl FnMut(usize) -> Result<Payload<'p>, WriteError>,
    ) -> Result<Written, WriteError> {
        // Sorted by id through a list of (id, index): the resources
        // themselves are too large to move around cheaply.
        let mut by_id: Vec<(ResourceId, usize)> =
            self.resources.iter().map(|r| r.id).zip(0..).collect();
        by_id.sort_unstable();
        let mut slots: Vec<Option<Pending>> = self.resources.into_iter().map(Some).collect();
        let order: Vec<(usize, Pending)> = by_id
            .iter()
            .map(|&(_, i)| (i, slots[i].take().expect("each index once")))
            .collect();
        for pair in order.windows(2) {
            let (a, b) = (&pair[0].1, &pair[1].1);
            if a.id == b.id {
                let (a, b) = if a.name <= b.name { (a, b) } else { (b, a) };
                return Err(if a.name == b.name {
                    WriteError::DuplicateName(a.name.clone())
                } else {
                    WriteError::IdCollision(a.name.clone(), b.name.clone())
                });
            }
        }
        let count = order.len();
        let bits = bucket_bits_for(count);
        let buckets = 1usize << bits;

        // Names area: each name, then each kind name once.
        let mut names = Vec::new();
        let mut kinds: HashMap<&str, (u32, u32)> = HashMap::new();
        let push = |names: &mut Vec<u8>, s: &str| -> Result<(u32, u32), WriteError> {
            let start = u32::try_from(names.len()).map_err(|_| WriteError::TooLarge)?;
            names.extend_from_slice(s.as_bytes());
            Ok((
                start,
                u32::try_from(s.len()).map_err(|_| WriteError::TooLarge)?,
            ))
        };
        let name_spans = order
            .iter()
            .map(|(_, r)| push(&mut names, &r.name))
            .collect::<Result<Vec<_>, _>>()?;
        let mut kind_spans = Vec::with_capacity(count);
        for (_, r) in &order {
            let span = match kinds.get(r.kind.as_str()) {
                Some(&s) => s,
                None => {
                    let s = push(&mut names, &r.kind)?;
                    kinds.insert(&r.kind, s);
                    s
                }
            };
            kind_spans.push(span);
        }

        let entries_at = HEADER_LEN + 4 * (buckets + 1);
        let names_at = entries_at + count * ENTRY_LEN;
        let data_at = (names_at + names.len()).next_multiple_of(DATA_ALIGN);

        // Header and tables: everything before the data.
        let mut head = vec![0u8; data_at];
        head[..8].copy_from_slice(&MAGIC);
        head[8..10].copy_from_slice(&VERSION.to_le_bytes());
        head[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        head[12..16].copy_from_slice(&self.flags.to_le_bytes());
        head[16..20].copy_from_slice(&(count as u32).to_le_bytes());
        head[20..24].copy_from_slice(&bits.to_le_bytes());
        head[24..32].copy_from_slice(&(names_at as u64).to_le_bytes());
        head[32..40].copy_from_slice(&(names.len() as u64).to_le_bytes());
        head[40..48].copy_from_slice(&(data_at as u64).to_le_bytes());
        // Bucket k starts at the first entry whose bucket is >= k.
        let mut entry = 0;
        for k in 0..=buckets {
            while entry < count && bucket_of(order[entry].1.id.raw(), bits) < k {
                entry += 1;
            }
            let at = HEADER_LEN + 4 * k;
            head[at..at + 4].copy_from_slice(&(entry as u32).to_le_bytes());
        }
        head[names_at..names_at + names.len()].copy_from_slice(&names);

        // The data area: each resource at the next multiple of 16, its
        // stored length known once it is compressed.
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&head)?;
        let mut written = 0u64;
        let mut place = |i: usize, r: &Pending, packed: Packed<'_>| -> Result<(), WriteError> {
            let Packed {
                compression,
                stored,
                checksum,
                stored_checksum,
            } = packed;
            let offset = written.next_multiple_of(DATA_ALIGN as u64);
            let stored_len = stored.len() as u64;
            let e = entries_at + i * ENTRY_LEN;
            let entry = &mut head[e..e + ENTRY_LEN];
            entry[0..8].copy_from_slice(&r.id.raw().to_le_bytes());
            entry[8..12].copy_from_slice(&name_spans[i].0.to_le_bytes());
            entry[12..16].copy_from_slice(&name_spans[i].1.to_le_bytes());
            entry[16..20].copy_from_slice(&kind_spans[i].0.to_le_bytes());
            entry[20..24].copy_from_slice(&kind_spans[i].1.to_le_bytes());
            entry[24..32].copy_from_slice(&offset.to_le_bytes());
            entry[32..40].copy_from_slice(&stored_len.to_le_bytes());
            entry[40..48].copy_from_slice(&stored_checksum.to_le_bytes());
            entry[48..56].copy_from_slice(&r.len.to_le_bytes());
            entry[56..64].copy_from_slice(&checksum.to_le_bytes());
            entry[64] = compression.byte();
            out.write_all(&ZEROS[..(offset - written) as usize])?;
            out.write_all(&stored)?;
            written = offset + stored_len;
            Ok(())
        };
        // A batch at a time: fetched one by one and written in order here,
        // packed (checksummed, compressed where asked) on a thread of its
        // own meanwhile, so the next batch packs while this one is written:
        // the parcel stage runs after every step, when the other cores
        // have nothing left to do.
        let mut order = order.into_iter().enumerate().peekable();
        std::thread::scope(|scope| -> Result<(), WriteError> {
            let (to_pack, packing) = std::sync::mpsc::sync_channel::<Batch<'p>>(1);
            let (to_write, packed) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                for mut batch in packing {
                    let result = pack_batch(&mut batch);
                    if to_write.send((batch, result)).is_err() {
                        break;
                    }
                }
            });
            let mut in_flight = 0;
            loop {
                while in_flight < 2 && order.peek().is_some() {
                    let mut batch = Vec::new();
                    let mut batch_bytes = 0;
                    while let Some((i, (index, mut r))) =
                        order.next_if(|_| batch.len() < BATCH_LEN && batch_bytes < BATCH_BYTES)
                    {
                        let payload = match r.data.take() {
                            Some(data) => Payload::Bytes(data),
                            None => fetch(index)?,
                        };
                        batch_bytes += r.len;
                        batch.push((i, r, payload));
                    }
                    to_pack
                        .send(batch)
                        .expect("the packing thread takes batches until it is told to stop");
                    in_flight += 1;
                }
                if in_flight == 0 {
                    return Ok(());
                }
                let (batch, result) = packed
                    .recv()
                    .expect("the packing thread answers every batch");
                in_flight -= 1;
                for ((i, r, _), packed) in batch.into_iter().zip(result?) {
                    place(i, &r, packed)?;
                }
            }
        })?;
        let data_len = written.next_multiple_of(DATA_ALIGN as u64);
        out.write_all(&ZEROS[..(data_len - written) as usize])?;
        head[48..56].copy_from_slice(&data_len.to_le_bytes());
        let checksum = table_checksum(&head, data_at);
        head[56..64].copy_from_slice(&checksum.to_le_bytes());
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&head)?;
        out.flush()?;
        Ok(Written {
            len: data_at as u64 + data_len,
            table_checksum: checksum,
        })
    }
}

/// What [`ParcelWriter::write_to`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The parcel's length in bytes.
    pub len: u64,
    /// Its table checksum (header bytes 56..64): it covers every entry, and
    /// so every resource's checksum, so it tells one parcel from another.
    pub table_checksum: u64,
}

/// A resource's bytes for [`ParcelWriter::write_to`].
#[derive(Debug)]
pub enum Payload<'p> {
    /// The bytes, as they are: the writer checksums them and compresses
    /// them as the parcel asks.
    Bytes(Vec<u8>),
    /// The bytes, kept by the caller too (a blob held in memory for more
    /// than one reader): read where they are, not copied, unless compressed.
    Shared(Arc<Vec<u8>>),
    /// The same resource as another parcel stores it (the previous version
    /// of this parcel, say): copied as it is stored, neither decompressed
    /// nor compressed again. The caller vouches that it holds the right
    /// bytes, and checks them first ([`Resource::verify_stored`] costs a
    /// hash of the stored bytes); it keeps that parcel's compression.
    Stored(Resource<'p>),
}

/// The cores this process may use, asked once: the answer reads cgroup
/// files, and a parcel is written in many batches.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// A resource as it will be stored.
struct Packed<'p> {
    compression: Compression,
    stored: Bytes<'p>,
    checksum: u64,
    stored_checksum: u64,
}

/// Bytes to write: the writer's own, the caller's shared ones, or another
/// parcel's as it stores them.
enum Bytes<'p> {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
    Borrowed(&'p [u8]),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(v) => v,
            Bytes::Borrowed(v) => v,
        }
    }
}

/// The most resources, and about the most bytes, fetched and compressed
/// together. The writer holds up to three batches in memory at once (one
/// being written, one packing, one waiting). Each batch is handed over
/// twice and starts a compressing thread: at 64 resources a batch, the
/// 160 batches of a 10,000-resource parcel left the writer waiting ~15 ms
/// of its ~85 (BENCHMARKS.md, "Pages drawn once").
const BATCH_LEN: usize = 512;
const BATCH_BYTES: u64 = 32 << 20;

/// Resources fetched together: each one's place in id order, what was
/// added, and its bytes.
type Batch<'p> = Vec<(usize, Pending, Payload<'p>)>;

/// Each payload of `batch` as it will be stored, in order. Compression runs
/// on every core (scoped threads taking the next resource as they finish
/// one), so a release parcel of text and models does not compress on one
/// core; the result does not depend on the thread count.
fn pack_batch<'p>(
    batch: &mut [(usize, Pending, Payload<'p>)],
) -> Result<Vec<Packed<'p>>, WriteError> {
    let work = |slot: &mut (usize, Pending, Payload<'p>)| {
        let (_, r, payload) = slot;
        match std::mem::replace(payload, Payload::Bytes(Vec::new())) {
            Payload::Bytes(data) => pack(r, Bytes::Owned(data)),
            Payload::Shared(data) => pack(r, Bytes::Shared(data)),
            Payload::Stored(from) if from.len() == r.len && from.kind == r.kind => Ok(Packed {
                compression: from.compression(),
                stored: Bytes::Borrowed(from.stored()),
                checksum: from.checksum(),
                stored_checksum: from.stored_checksum(),
            }),
            Payload::Stored(_) => Err(WriteError::WrongLength(r.name.clone())),
        }
    };
    let to_compress = batch
        .iter()
        .filter(|(_, r, p)| {
            matches!(p, Payload::Bytes(_) | Payload::Shared(_))
                && r.compression.is_some()
                && compressible(&r.kind, r.len as usize)
        })
        .count();
    let threads = cores().min(to_compress);
    if threads < 2 {
        return batch.iter_mut().map(work).collect();
    }
    let slots: Vec<std::sync::Mutex<&mut (usize, Pending, Payload<'p>)>> =
        batch.iter_mut().map(std::sync::Mutex::new).collect();
    let results: Vec<std::sync::Mutex<Option<Result<Packed<'p>, WriteError>>>> =
        slots.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take_next = || {
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(slot) = slots.get(k) else { break };
            let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
            let packed = work(&mut slot);
            *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(packed);
        }
    };
    // The calling thread is one of the workers: a batch starts one thread
    // fewer, and a parcel of 10,000 small resources is ~20 batches.
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(take_next);
        }
        take_next();
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every slot is packed once the threads end")
        })
        .collect()
}

/// `data`, checked against the length `r` announced, checksummed, and
/// compressed as `r` asks where that pays.
fn pack<'p>(r: &Pending, data: Bytes<'p>) -> Result<Packed<'p>, WriteError> {
    if data.len() as u64 != r.len {
        return Err(WriteError::WrongLength(r.name.clone()));
    }
    let checksum = data_checksum(&data);
    let plain = |data| Packed {
        compression: Compression::None,
        stored: data,
        checksum,
        stored_checksum: checksum,
    };
    let Some(c) = r.compression.filter(|_| compressible(&r.kind, data.len())) else {
        return Ok(plain(data));
    };
    match codec::encode(c, &data) {
        Some(packed) if worth_it(packed.len(), data.len()) => Ok(Packed {
            compression: c,
            stored_checksum: data_checksum(&packed),
            stored: Bytes::Owned(packed),
            checksum,
        }),
        Some(_) => Ok(plain(data)),
        None => Err(WriteError::CompressionUnavailable {
            compression: c,
            feature: "write-zstd",
        }),
    }
}

/// Whether a resource of `kind` and `len` bytes may be compressed.
fn compressible(kind: &str, len: usize) -> bool {
    !stored_uncompressed(kind) && len >= MIN_COMPRESSED
}

/// Whether `packed` bytes are worth keeping instead of `raw`: a 32nd
/// smaller, and by at least one alignment step.
fn worth_it(packed: usize, raw: usize) -> bool {
    packed <= raw - raw / 32 && packed + DATA_ALIGN <= raw
}

/// Padding source: never more than `DATA_ALIGN - 1` bytes are needed.
const ZEROS: [u8; DATA_ALIGN] = [0; DATA_ALIGN];

#[cfg(test)]
mod tests {
    use super::*;

    /// Compressing side by side gives each resource what compressing it
    /// alone gives, in order (on a machine with one core this compares the
    /// sequential path with itself).
    #[test]
    fn a_batch_packs_as_each_resource_alone_in_order() {
        let pending = |i: usize, data: &[u8]| Pending {
            id: ResourceId::of(&format!("r{i}")),
            name: format!("r{i}"),
            kind: if i.is_multiple_of(7) { "image" } else { "text" }.to_owned(),
            len: data.len() as u64,
            data: None,
            compression: Some(Compression::Lz4),
        };
        let data: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("resource {i} ").repeat(20 + i * 3).into_bytes())
            .collect();
        let mut batch: Vec<(usize, Pending, Payload<'_>)> = data
            .iter()
            .enumerate()
            .map(|(i, d)| {
                // Owned and shared bytes alike.
                let payload = if i % 2 == 0 {
                    Payload::Bytes(d.clone())
                } else {
                    Payload::Shared(Arc::new(d.clone()))
                };
                (i, pending(i, d), payload)
            })
            .collect();
        let together = pack_batch(&mut batch).unwrap();
        for (i, (d, packed)) in data.iter().zip(&together).enumerate() {
            let alone = pack(&pending(i, d), Bytes::Owned(d.clone())).unwrap();
            assert_eq!(*packed.stored, *alone.stored, "resource {i}");
            assert_eq!(packed.compression, alone.compression, "resource {i}");
            assert_eq!(packed.compression == Compression::None, i.is_multiple_of(7));
        }
    }
}
