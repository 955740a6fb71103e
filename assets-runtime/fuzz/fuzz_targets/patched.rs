//! Any base and patch given to `Patched::new` are rejected or read safely,
//! and a view it accepts keeps the promise a parcel keeps alone: every
//! sprite and glyph lies inside an image page, found through the view.
//! The input is a base and a patch: its first two bytes say how long the
//! base is. Checksums are rewritten to match (as `from_bytes_resigned`
//! does), so mutations reach the checks between the two. Run:
//! `cargo fuzz run patched -s none`.
#![no_main]

use assets_runtime::{Parcel, Patched};
use libfuzzer_sys::fuzz_target;

mod resign;

fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let (base, patch) = rest.split_at(usize::from(u16::from_le_bytes(*len)).min(rest.len()));
    let (base, patch) = (resign::resigned(base), resign::resigned(patch));
    let (Ok(base), Ok(patch)) = (Parcel::from_bytes(&base), Parcel::patch_from_bytes(&patch))
    else {
        return;
    };
    let Ok(view) = Patched::new(base, Some(patch)) else {
        return;
    };
    let inside = |frame: assets_runtime::SpriteFrame, name: &str| {
        let page = view.image(frame.page);
        let page = page.unwrap_or_else(|| panic!("`{name}` has no page through the patch"));
        assert!(
            frame.fits_in(page.header.width, page.header.height),
            "`{name}` lies outside its page through the patch"
        );
    };
    for r in view.iter() {
        assert_eq!(view.get(r.id).map(|x| x.name), Some(r.name));
        if let Some(frame) = r.sprite_frame() {
            inside(frame, r.name);
            assert!(view.sprite(r.id).is_some());
        }
        if let Some(font) = r.font() {
            for frame in font.frames() {
                inside(frame, r.name);
            }
        }
    }
});
