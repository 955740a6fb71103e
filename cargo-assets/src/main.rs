//! The `cargo-assets` binary: the program of [`cargo_assets::main_with`]
//! with the built-in processors.

fn main() -> std::process::ExitCode {
    cargo_assets::main_with(&[])
}
