//! Entry points for the fuzz targets (`assets-build/fuzz/`), compiled only
//! under `--cfg fuzzing`, which `cargo fuzz` sets: no part of the library's
//! surface. Each runs what a build runs on an untrusted file, from its
//! bytes, and returns nothing: a target fails by panicking, hanging or
//! exhausting memory, never by an error the pipeline reports.

/// The manifest reader on a `Cargo.toml` text.
pub fn manifest(text: &str) {
    let _ = crate::manifest::Manifest::parse(std::path::Path::new("/fuzz/Cargo.toml"), text);
}

/// A depfile's prerequisites.
pub fn depfile(text: &str) {
    let _ = crate::processor::depfile::prerequisites(text);
}

/// The shader processor's import scan and preprocessor check.
pub fn shader_imports(text: &str) {
    crate::processor::shader::scan(text);
}

/// The font processor on a font file, with its default settings (printable
/// ASCII at 32 px, kerning read), and as a signed distance field.
#[cfg(feature = "fonts")]
pub fn font(bytes: &[u8]) {
    for settings in [r#"{}"#, r#"{"mode": "sdf", "sizes": [12]}"#] {
        let settings: crate::processor::font::FontSettings =
            serde_json::from_str(settings).expect("valid settings");
        let _ = crate::processor::font::bake(bytes, &settings);
    }
}

/// The glTF processor's reading of a `.gltf` or `.glb` file.
#[cfg(feature = "gltf")]
pub fn gltf(bytes: &[u8]) {
    let _ = crate::processor::gltf::read(bytes.to_vec());
}

/// The aseprite processor's walk and flattening of an `.aseprite` file.
#[cfg(feature = "aseprite")]
pub fn aseprite(bytes: &[u8]) {
    let _ = crate::processor::aseprite::read(bytes, 4096, true);
}
