//! Any bytes given to `Parcel::from_bytes` are rejected or read safely.
//! Run: `cd assets-runtime && cargo fuzz run from_bytes -s none`.
#![no_main]

use assets_runtime::Parcel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parcel) = Parcel::from_bytes(data) {
        for r in parcel.iter() {
            assert_eq!(parcel.get(r.id).map(|x| x.name), Some(r.name));
            let _ = (r.text(), r.image(), r.verify(), parcel.by_name(r.name));
            // A valid parcel's sprites always resolve to their page.
            if r.kind == "sprite" {
                assert!(parcel.sprite(r.id).is_some(), "sprite `{}` has no page", r.name);
            }
        }
    }
});
