//! [`Event`]: what a build tells its front-end while it runs.
//!
//! The library never prints. It calls a handler, from any worker thread, and
//! the front-end decides: the CLI draws status lines or JSON, the build-script
//! helper writes `cargo:` directives.

use std::path::Path;
use std::time::Duration;

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
    /// A step has run longer than its deadline (its rule's `timeout`, or
    /// [`BuildOptions::step_timeout`](crate::unstable::BuildOptions)), not counting
    /// time spent waiting for steps it needs; said once a step. The step
    /// cannot be stopped from outside: the front-ends end the process,
    /// which is safe at any moment, naming the asset.
    Overdue {
        /// The asset.
        asset: &'a AssetPath,
        /// Its processor.
        processor: &'a str,
        /// How long it has run.
        elapsed: Duration,
        /// Its deadline.
        timeout: Duration,
    },
    /// The remote cache failed, or returned bytes that were dropped; the
    /// build goes on without them.
    RemoteWarning {
        /// What happened, and what the build does instead.
        message: &'a str,
    },
}

impl Event<'_> {
    /// For [`Event::Overdue`], what a front-end says before it ends the
    /// process.
    pub fn overdue_message(&self) -> Option<String> {
        let Event::Overdue {
            asset,
            processor,
            elapsed,
            timeout,
        } = self
        else {
            return None;
        };
        let seconds = |d: &Duration| match d.subsec_millis() {
            0 => format!("{} s", d.as_secs()),
            _ => format!("{:.1} s", d.as_secs_f64()),
        };
        Some(format!(
            "`{asset}` ({processor}) has run for {:.0} s, past its deadline of {}: the build is stopped (a running step cannot be interrupted; nothing half-written is kept). If the file is not hostile and needs longer, raise `timeout = SECONDS` on its rule or CARGO_ASSETS_STEP_TIMEOUT; else fix it, or leave it out with `ignore = [\"{asset}\"]` under [package.metadata.assets]",
            elapsed.as_secs_f64(),
            seconds(timeout),
        ))
    }
}

/// Receives events; must be callable from several threads at once.
pub type EventHandler<'a> = &'a (dyn Fn(&Event<'_>) + Sync);
