//! The `cargo-assets` binary: the program of [`cargo_assets::main_with`]
//! with the built-in processors.

/// mimalloc instead of the system allocator: a build is a fresh process
/// that makes and frees hundreds of thousands of small allocations (records,
/// paths, decoded sprites) on short-lived worker threads, which glibc's
/// per-thread arenas serve slowly. On a 10k-asset project, side by side on
/// one machine, the whole `cargo assets build` took 0.78 of the time for a
/// no-op, 0.84 for a one-sprite edit and 0.96 for a cold build, for 1.4×
/// the peak memory (BENCHMARKS.md, "The parcel stage's bookkeeping, and
/// the CLI's allocator"). The library never chooses: a build script keeps
/// the system allocator unless it sets its own `#[global_allocator]`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cargo_assets::main_with(&[])
}
