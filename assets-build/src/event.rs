//! [`Event`]: what a build tells its front-end while it runs.
//!
//! The library never prints. It calls a handler, from any worker thread, and
//! the front-end decides: the CLI draws status lines or JSON, the build-script
//! helper writes `cargo:` directives.

use std::path::Path;

use crate::asset_path::AssetPath;
use crate::record::DirtyReason;
use crate::report::StepReport;

/// Something that happened during a build.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Another build holds the cache lock; this one waits.
    WaitingForLock {
        /// The lock file.
        path: &'a Path,
    },
    /// Assets were discovered and assigned processors.
    Planned {
        /// How many steps the build has.
        steps: usize,
    },
    /// A processor starts on an asset.
    Processing {
        /// The asset.
        asset: &'a AssetPath,
        /// The processor.
        processor: &'a str,
        /// Why it runs.
        reason: &'a DirtyReason,
    },
    /// A step is done (fresh, fetched, ran, failed or skipped).
    Finished {
        /// The step.
        step: &'a StepReport,
    },
    /// The remote cache failed, or returned bytes that were dropped; the
    /// build goes on without them.
    RemoteWarning {
        /// What happened, and what the build does instead.
        message: &'a str,
    },
}

/// Receives events; must be callable from several threads at once.
pub type EventHandler<'a> = &'a (dyn Fn(&Event<'_>) + Sync);
