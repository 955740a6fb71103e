//! `assets_build::fuzzing::font` on any bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    assets_build::fuzzing::font(bytes);
});
