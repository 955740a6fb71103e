//! The `cargo-assets` binary: the program of [`cargo_assets::main_with`]
//! with the built-in processors, on [`cargo_assets::Allocator`].

#[global_allocator]
static ALLOCATOR: cargo_assets::Allocator = cargo_assets::Allocator;

fn main() -> std::process::ExitCode {
    cargo_assets::main_with(&[])
}
