//! With the `textures` feature: links the C++ runtime, which the prebuilt
//! kernels of `intel_tex_2` reference (their ASTC object is C++) while that
//! crate does not say so itself. Nothing otherwise.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_TEXTURES").is_none() {
        return;
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("apple") {
        println!("cargo:rustc-link-lib=c++");
    } else if !target.contains("msvc") {
        println!("cargo:rustc-link-lib=stdc++");
    }
}
