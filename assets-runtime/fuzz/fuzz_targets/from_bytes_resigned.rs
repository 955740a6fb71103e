//! Like `from_bytes`, but first rewrites the checksums to match, so that
//! mutations reach the checks behind them instead of stopping at a checksum
//! mismatch: each entry's stored checksum (so mutated compressed bytes reach
//! the decompressors), then the table checksum. Run:
//! `cargo fuzz run from_bytes_resigned -s none`.
#![no_main]

use assets_runtime::Parcel;
use assets_runtime::format::{ENTRY_LEN, HEADER_LEN, MAX_BUCKET_BITS, table_checksum};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    resign_entries(&mut bytes);
    if bytes.len() >= HEADER_LEN {
        let data_at = u64::from_le_bytes(bytes[40..48].try_into().unwrap());
        let data_at = usize::try_from(data_at).unwrap_or(usize::MAX).clamp(HEADER_LEN, bytes.len());
        let sum = table_checksum(&bytes, data_at);
        bytes[56..64].copy_from_slice(&sum.to_le_bytes());
    }
    if let Ok(parcel) = Parcel::from_bytes(&bytes) {
        for r in parcel.iter() {
            assert_eq!(parcel.get(r.id).map(|x| x.name), Some(r.name));
            let _ = (r.verify(), parcel.by_name(r.name));
            // Bytes of a length a game would accept decompress or fail,
            // never panic, and come out as long as the entry says.
            if r.len() <= 16 << 20 {
                if let Ok(bytes) = r.bytes() {
                    assert_eq!(bytes.len() as u64, r.len());
                }
                let _ = r.text();
            }
            // Pixels of a size a game would accept decode or fail, never panic.
            if let Some(image) = r.image()
                && image.header.raw_len().is_some_and(|n| n <= 16 << 20)
                && let Ok(rows) = image.pixels()
            {
                assert_eq!(Some(rows.len()), image.header.raw_len());
            }
            // A valid parcel's sprites always resolve to their page.
            if r.kind == "sprite" {
                assert!(parcel.sprite(r.id).is_some(), "sprite `{}` has no page", r.name);
            }
            // A valid parcel's textures give every level, of its length.
            if let Some(t) = r.texture() {
                for i in 0..t.levels {
                    let (w, h) = t.level_size(i);
                    assert_eq!(t.level(i).map(|l| l.len() as u64), Some(t.format.level_len(w, h)));
                }
            }
            // A valid parcel's fonts read, and their glyphs resolve to pages.
            if r.kind == "font" {
                let font = r.font().expect("a font resource checked at open");
                for frame in font.frames() {
                    assert!(parcel.image(frame.page).is_some(), "glyph of `{}` has no page", r.name);
                }
                for size in font.sizes() {
                    for ch in ['A', 'V', 'o', ' ', '\u{10ffff}'] {
                        let _ = font.glyph(size.px, ch).map(|g| g.origin(0.0, size.ascent));
                    }
                    let _ = (font.measure("AVTo x", size.px), font.kerning('A', 'V', size.px));
                }
            }
        }
    }
});

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
        let (start, len) = (u64_at(bytes, e + 24) as usize, u64_at(bytes, e + 32) as usize);
        let Some(end) = data_at.checked_add(start).and_then(|s| s.checked_add(len)) else {
            continue;
        };
        if end <= bytes.len() {
            let sum = xxhash_rust::xxh3::xxh3_64(&bytes[end - len..end]);
            bytes[e + 40..e + 48].copy_from_slice(&sum.to_le_bytes());
        }
    }
}
