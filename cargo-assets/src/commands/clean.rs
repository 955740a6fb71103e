//! `cargo assets clean`.

use assets_build::{Event, clean};

use super::Exit;
use crate::cli::PackageArgs;
use crate::shell::{Shell, Style};
use crate::workspace::Package;

/// Removes the cache directory.
pub fn exec(args: &PackageArgs, shell: &Shell) -> anyhow::Result<Exit> {
    let package = Package::locate(args)?;
    let on_event = |e: &Event<'_>| {
        if let Event::WaitingForLock { path } = e {
            shell.status(
                "Blocking",
                format!("waiting for file lock on `{}`", path.display()),
                Style::Note,
            );
        }
    };
    let stats = clean(&package.cache_dir, &on_event)?;
    shell.status(
        "Removed",
        format!("{} files, {} total", stats.files, human_bytes(stats.bytes)),
        Style::Good,
    );
    Ok(Exit::Success)
}

/// `1.5MiB`, as Cargo writes sizes.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{size:.1}{}", UNITS[unit])
    }
}
