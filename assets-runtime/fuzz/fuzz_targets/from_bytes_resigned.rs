//! Like `from_bytes`, but first rewrites the checksums to match, so that
//! mutations reach the checks behind them instead of stopping at a checksum
//! mismatch: each entry's stored checksum (so mutated compressed bytes reach
//! the decompressors), then the table checksum. Run:
//! `cargo fuzz run from_bytes_resigned -s none`.
#![no_main]

use assets_runtime::Parcel;
use libfuzzer_sys::fuzz_target;

mod resign;

fuzz_target!(|data: &[u8]| {
    let bytes = resign::resigned(data);
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
            // A valid parcel's textures give every level, of its length
            // (a supercompressed level whose frame is damaged gives none).
            if let Some(t) = r.texture() {
                for i in 0..t.levels {
                    let (w, h) = t.level_size(i);
                    match t.level(i) {
                        Some(l) => assert_eq!(l.len() as u64, t.format.level_len(w, h)),
                        None => assert!(t.is_supercompressed()),
                    }
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
