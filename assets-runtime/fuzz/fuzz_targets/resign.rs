//! Checksums rewritten to match, shared by the targets that want mutations
//! to reach the checks behind the checksums.

use assets_runtime::format::{ENTRY_LEN, HEADER_LEN, MAX_BUCKET_BITS, table_checksum};

/// `data` with each entry's stored checksum, then the table checksum,
/// rewritten to match, wherever header and entries are in bounds.
pub fn resigned(data: &[u8]) -> Vec<u8> {
    let mut bytes = data.to_vec();
    resign_entries(&mut bytes);
    if bytes.len() >= HEADER_LEN {
        let data_at = u64::from_le_bytes(bytes[40..48].try_into().unwrap());
        let data_at = usize::try_from(data_at)
            .unwrap_or(usize::MAX)
            .clamp(HEADER_LEN, bytes.len());
        let sum = table_checksum(&bytes, data_at);
        bytes[56..64].copy_from_slice(&sum.to_le_bytes());
    }
    bytes
}

/// Rewrites each entry's stored checksum to match the bytes it points at,
/// wherever header and entry are in bounds.
fn resign_entries(bytes: &mut [u8]) {
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    if bytes.len() < HEADER_LEN {
        return;
    }
    let count = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let bits = u32::from_le_bytes(bytes[20..24].try_into().unwrap());
    let data_at = u64_at(bytes, 40) as usize;
    if bits > MAX_BUCKET_BITS || data_at > bytes.len() {
        return;
    }
    let entries_at = HEADER_LEN + 4 * ((1usize << bits) + 1);
    for i in 0..count.min(4096) {
        let e = entries_at + i * ENTRY_LEN;
        if e + ENTRY_LEN > bytes.len() {
            return;
        }
        let (start, len) = (
            u64_at(bytes, e + 24) as usize,
            u64_at(bytes, e + 32) as usize,
        );
        let Some(end) = data_at.checked_add(start).and_then(|s| s.checked_add(len)) else {
            continue;
        };
        if end <= bytes.len() {
            let sum = xxhash_rust::xxh3::xxh3_64(&bytes[end - len..end]);
            bytes[e + 40..e + 48].copy_from_slice(&sum.to_le_bytes());
        }
    }
}
