//! Like `from_bytes`, but first rewrites the table checksum to match, so that
//! mutations reach the structural checks behind it instead of stopping at a
//! checksum mismatch. Run: `cargo fuzz run from_bytes_resigned -s none`.
#![no_main]

use assets_runtime::Parcel;
use assets_runtime::format::{HEADER_LEN, table_checksum};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= HEADER_LEN {
        let data_at = u64::from_le_bytes(bytes[40..48].try_into().unwrap());
        let data_at = usize::try_from(data_at).unwrap_or(usize::MAX).clamp(HEADER_LEN, bytes.len());
        let sum = table_checksum(&bytes, data_at);
        bytes[56..64].copy_from_slice(&sum.to_le_bytes());
    }
    if let Ok(parcel) = Parcel::from_bytes(&bytes) {
        for r in parcel.iter() {
            assert_eq!(parcel.get(r.id).map(|x| x.name), Some(r.name));
            let _ = (r.text(), r.verify(), parcel.by_name(r.name));
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
        }
    }
});
