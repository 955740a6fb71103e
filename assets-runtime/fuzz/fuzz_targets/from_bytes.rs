//! Any bytes given to `Parcel::from_bytes` are rejected or read safely.
//! Run: `cd assets-runtime && cargo fuzz run from_bytes -s none`.
#![no_main]

use assets_runtime::Parcel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parcel) = Parcel::from_bytes(data) {
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
        }
    }
});
