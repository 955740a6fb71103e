//! `assets_build::fuzzing::manifest` on any UTF-8 text.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    assets_build::fuzzing::manifest(text);
});
