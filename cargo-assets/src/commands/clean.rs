//! `cargo assets clean`.

use assets_build::{unstable::Event, unstable::clean, unstable::clean_package};

use super::Exit;
use crate::cli::PackageArgs;
use crate::shell::{Shell, Style};
use crate::workspace;

/// Removes the cache directory (one per target directory: a workspace's
/// packages share it); with `-p`, only those packages' records and
/// parcels, as `cargo clean -p` does (blobs are shared: `gc` frees the ones
/// nothing uses any more).
pub fn exec(args: &PackageArgs, shell: &Shell) -> anyhow::Result<Exit> {
    let packages = workspace::select(args)?;
    if !args.packages.is_empty() {
        for package in &packages {
            let stats = clean_package(&package.cache_dir, &package.name, &|e: &Event<'_>| {
                super::render_lock_wait(shell, e)
            })?;
            shell.status(
                "Removed",
                format!(
                    "{} files, {} total, of `{}` (shared blobs stay; `cargo assets gc` frees unused ones)",
                    stats.files,
                    human_bytes(stats.bytes),
                    package.name
                ),
                Style::Good,
            );
        }
        return Ok(Exit::Success);
    }
    for cache_dir in workspace::cache_dirs(&packages) {
        let stats = clean(&cache_dir, &|e: &Event<'_>| {
            super::render_lock_wait(shell, e)
        })?;
        shell.status(
            "Removed",
            format!("{} files, {} total", stats.files, human_bytes(stats.bytes)),
            Style::Good,
        );
    }
    Ok(Exit::Success)
}

pub use assets_build::unstable::report::human_bytes;
