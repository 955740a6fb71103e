//! `assets_build::fuzzing::aseprite` on any bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    assets_build::fuzzing::aseprite(bytes);
});
