//! `include_parcel!("name")`: embeds the parcel `name` that the package's
//! build script wrote (`assets_build::build()`), and declares one typed
//! constant per resource, so a missing asset is a compile error.
//!
//! Use it through `assets_runtime::include_parcel!`; see that crate for an
//! example. The expansion of `include_parcel!("main")` is:
//!
//! ```text
//! pub mod main {
//!     pub static PARCEL: assets_runtime::StaticParcel = /* include_bytes! of the parcel */;
//!     pub const PATH: &str = "<OUT_DIR>/assets/main.parcel";   // to reopen at run time
//!     pub mod sprites {
//!         pub const HERO_IDLE: assets_runtime::SpriteId = /* id of "sprites/hero-idle.png" */;
//!     }
//! }
//! ```
//!
//! How names become identifiers (`names.rs`, and the README's table):
//! folders become modules in `snake_case`, a file becomes a constant named by
//! its stem (the name without its last extension) in `UPPER_SNAKE_CASE`,
//! words split as the `heck` crate splits them (`FlightHelmet` →
//! `flight_helmet`), a labelled resource `a.lvl#collision` becomes
//! `A_COLLISION`; characters other than ASCII letters and digits separate
//! words, a leading digit gets a `_` before it, and a module named like a
//! keyword gets a `_` after it. Files of one folder that would share a
//! constant carry their extension (`LOGO_PNG`, `LOGO_SVG`); resources that
//! still land on one identifier are compile errors, all in one compile,
//! naming both. Atlas pages (`atlas:<name>#<n>`) get no constant: sprites
//! reach them.
//!
//! Where the parcel is: the build script sets `CARGO_ASSETS_PARCELS` (through
//! `cargo:rustc-env`) to the directory it wrote parcels to; each parcel has a
//! text table of contents beside it, `<name>.parcel.toc`, which is what this
//! macro reads (it cannot depend on `assets-runtime`, which re-exports it).

#![deny(clippy::print_stdout, clippy::print_stderr)] // errors are compile_error!s, never prints

use proc_macro::TokenStream;

mod expand;
mod names;
mod toc;

/// Embeds a parcel built by `build.rs` and declares typed constants for its
/// resources. See the [crate docs](crate).
#[proc_macro]
pub fn include_parcel(input: TokenStream) -> TokenStream {
    let result = expand::parcel_name(input)
        .map_err(|e| vec![e])
        .and_then(|name| expand::expand(&name));
    match result {
        Ok(code) => code,
        Err(messages) => messages
            .iter()
            .map(|m| format!("::core::compile_error!({m:?});"))
            .collect::<String>()
            .parse()
            .expect("compile_error! calls parse"),
    }
}
