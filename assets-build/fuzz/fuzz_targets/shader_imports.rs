//! `assets_build::fuzzing::shader_imports` on any UTF-8 text.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    assets_build::fuzzing::shader_imports(text);
});
