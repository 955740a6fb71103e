//! `cargo assets watch`: build, then rebuild whenever something a step read
//! changes, and tell running games over the hot-reload port.
//!
//! - It watches directories, not files: every asset root recursively and the
//!   package directory for `Cargo.toml`. So editors that save by writing a
//!   temp file and renaming it over the original (vim, JetBrains "safe
//!   write") are seen, and so are files created where a processor looked and
//!   found nothing (its record says so; the rebuild's check finds it).
//! - It waits for writes to settle and coalesces everything that arrived
//!   into one build: a burst ends after [`QUIET`] without events, or only
//!   [`QUIET_CLOSED`] when every file written in it has been closed (or
//!   renamed into place), which is how a save ends; never later than
//!   [`SETTLE_MAX`] after it began. File opens and reads are not changes:
//!   the build itself reads every input.
//! - Each package's pipeline keeps its state between builds (the record
//!   log, the walk, the plan, the stats of everything under the roots) and
//!   is told which paths changed, so an edit's build looks again only at
//!   what those paths touch (see `assets_build::Changes`). It trusts the
//!   watcher for that, and checks the trust: once quiet for [`IDLE`] after
//!   each round of builds, what each pipeline kept is compared with the
//!   disk (`Pipeline::drifted`: the roots walked, the kept stats taken
//!   again), and anything the watcher did not report (a write through a
//!   hard link from outside the roots, say) is built then, with a warning.
//!   An overflowing event queue (a `git checkout` of thousands of files),
//!   or any error from the watcher, makes the next build look at
//!   everything. So nothing is missed for longer than one idle moment, and
//!   the number of builds stays bounded by the settle window.
//! - Events under the target directory (our own outputs) are ignored.
//! - A failed build keeps the last good parcels (the parcel stage's rule)
//!   and says why; watching goes on, also after a broken `Cargo.toml`.
//! - After each build, every rewritten parcel is announced to connected games
//!   with the names of the resources that changed (see [`crate::reload_server`]).
//! - A changed parcel is written as a patch beside the last whole one
//!   (`assets_build::BuildOptions::patch_parcels`): an edit costs the bytes
//!   it changed, not the parcel's size, and the game reads the parcel
//!   through the patch (`assets_runtime::patch`). Once idle, with nothing
//!   drifted, the patched parcels are written whole again, as `cargo assets
//!   build` writes them, and the games told (no `patch` in the notice).
//! - Once idle with nothing to write either, each atlas the builds found
//!   fresh is packed into memory (`Pipeline::warm_up_while`), once: the
//!   first edit of an atlas then re-packs from memory, as later ones do. A
//!   save stops it between two atlases, so its build waits for one at most.
//! - Several packages (a workspace, or `-p a -p b`) are watched by one
//!   process and served on one port; a change rebuilds only the packages
//!   whose roots or manifest it touched. Packages with processor crates are
//!   built by a runner process (see [`crate::runner`]), which works on one
//!   package, so those are watched one at a time (`-p`).

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use assets_build::manifest::AssetRoot;
use assets_build::{BuildReport, Changes, Manifest, OnFailure, ParcelOutcome, Pipeline, Registry};
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher};

use super::{Exit, build};
use crate::cli::WatchArgs;
use crate::message::Message;
use crate::reload_server::ReloadServer;
use crate::runner;
use crate::shell::{Shell, Style};
use crate::workspace::{self, Package};

/// Quiet time that ends a burst of events while a file written in it may
/// still be open.
pub const QUIET: Duration = Duration::from_millis(40);
/// Quiet time that ends a burst in which every written file was closed.
pub const QUIET_CLOSED: Duration = Duration::from_millis(15);
/// Quiet time after the builds before what the pipelines kept is checked
/// against the disk (`Pipeline::drifted`).
pub const IDLE: Duration = Duration::from_millis(250);
/// The longest a burst may delay a build.
pub const SETTLE_MAX: Duration = Duration::from_millis(1000);

/// A package being watched: its pipeline (which keeps blobs in memory from
/// one build to the next) and the asset roots it is watched at.
struct Watched {
    package: Package,
    pipeline: Pipeline,
    /// Whether its last build left a parcel seen through a patch.
    patched: bool,
    roots: Vec<PathBuf>,
    /// The roots as the manifest names them, for [`BuildReport::inputs_outside`].
    asset_roots: Vec<AssetRoot>,
    /// Files outside the roots that the last build's steps read (a tool's
    /// config), each watched through its folder.
    outside: Vec<PathBuf>,
}

impl Watched {
    /// Whether a change at `path` can affect this package's build.
    fn is_affected_by(&self, path: &Path) -> bool {
        path == self.package.manifest_path
            || self.roots.iter().any(|r| path.starts_with(r))
            || self.outside.iter().any(|f| f == path)
    }

    /// Watches the folders of the files outside the roots that `report`'s
    /// steps read. A folder that does not exist yet is not watched: the file
    /// is then picked up by the next build that a root's change starts.
    fn follow_outside(&mut self, watcher: &mut impl Watcher, report: &BuildReport) {
        let dir = self.package.dir().to_owned();
        let now: Vec<PathBuf> = report
            .inputs_outside(&self.asset_roots)
            .into_iter()
            .map(|p| dir.join(p))
            .collect();
        if now == self.outside {
            return;
        }
        let folders = |files: &[PathBuf]| -> HashSet<PathBuf> {
            files
                .iter()
                .filter_map(|f| f.parent().map(Path::to_owned))
                .collect()
        };
        let (old, new) = (folders(&self.outside), folders(&now));
        for gone in old.difference(&new).filter(|f| **f != dir) {
            let _ = watcher.unwatch(gone);
        }
        for added in new.difference(&old).filter(|f| **f != dir) {
            let _ = watcher.watch(added, RecursiveMode::NonRecursive);
        }
        self.outside = now;
    }

    /// Watches the roots the manifest now names (they change when
    /// `Cargo.toml` does); a manifest that does not load keeps the old ones.
    fn follow_roots(&mut self, watcher: &mut impl Watcher, shell: &Shell) {
        let Ok(manifest) = Manifest::load(&self.package.manifest_path) else {
            return;
        };
        let now: Vec<PathBuf> = manifest.roots.iter().map(|r| r.dir.clone()).collect();
        self.asset_roots = manifest.roots;
        if now == self.roots {
            return;
        }
        for old in &self.roots {
            let _ = watcher.unwatch(old);
        }
        for root in &now {
            if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
                shell.warn(format!("could not watch `{}`: {e}", root.display()));
            }
        }
        self.roots = now;
    }
}

/// Watches and rebuilds until killed.
pub fn exec(
    args: &WatchArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    let packages = workspace::select(&args.package)?;
    if let [package] = packages.as_slice() {
        if let Some(code) = runner::delegate_if_needed(package, shell)? {
            return Ok(Exit::Delegated(code));
        }
    } else if let Some(package) = packages.iter().find(|p| runner::needs_runner(p).is_some()) {
        bail!(
            "`{}` uses processor crates, which are built into a runner that watches one package; \
             help: watch it on its own with `-p {}`",
            package.name,
            package.name
        );
    }
    let cache_dirs = workspace::cache_dirs(&packages);
    let mut watched = Vec::with_capacity(packages.len());
    for package in packages {
        let mut pipeline = build::pipeline(&package, &args.jobs, &args.variant, processors)?;
        pipeline.keep_state_in_memory();
        pipeline.set_patch_parcels(true);
        // One broken file does not stop a running game, whatever the variant.
        pipeline.options_mut().on_failure = Some(OnFailure::StandIn);
        watched.push(Watched {
            package,
            pipeline,
            patched: false,
            roots: Vec::new(),
            asset_roots: Vec::new(),
            outside: Vec::new(),
        });
    }
    let server = ReloadServer::start(args.port.unwrap_or(0))
        .with_context(|| format!("could not listen on 127.0.0.1:{}", args.port.unwrap_or(0)))?;
    let (tx, rx) = channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .context("could not start watching files")?;
    for w in &watched {
        let dir = w.package.dir();
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("could not watch `{}`", dir.display()))?;
    }
    let what = match watched.as_slice() {
        [w] => w.package.dir().display().to_string(),
        all => all
            .iter()
            .map(|w| w.package.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    };
    shell.status(
        "Watching",
        format!("{what} (hot reload on 127.0.0.1:{})", server.port()),
        Style::Good,
    );
    shell.message(&Message::WatchStarted {
        port: server.port(),
    });
    let mut dirty = vec![true; watched.len()];
    let mut change = Change::Unknown;
    loop {
        let nothing = HashSet::new();
        let changes = match &change {
            Change::Unknown => Changes::Unknown,
            Change::At(paths) => Changes::At(paths),
            Change::Settle => Changes::At(&nothing),
        };
        let settle = matches!(change, Change::Settle);
        for (w, _) in watched.iter_mut().zip(&dirty).filter(|(_, dirty)| **dirty) {
            // A package's roots are watched before its build stats what is
            // under them: the pipeline trusts the watcher there.
            w.follow_roots(&mut watcher, shell);
            if dirty.len() > 1 && !settle {
                shell.status("Building", &w.package.name, Style::Good);
            }
            w.pipeline.set_patch_parcels(!settle);
            let built = build::build_once(&w.pipeline, changes, shell);
            w.pipeline.set_patch_parcels(true);
            match built {
                Ok(report) => {
                    w.patched = report.parcels.iter().any(|p| p.patch.is_some());
                    w.follow_outside(&mut watcher, &report);
                    // Games hear of the parcels before `build-finished` is
                    // said, so a client that connects after it only hears of
                    // later builds.
                    for parcel in &report.parcels {
                        if let ParcelOutcome::Written { changed, .. } = &parcel.outcome {
                            let patch = parcel.patch.as_deref();
                            server.notify(&parcel.name, &parcel.path, patch, changed);
                        }
                    }
                    if settle {
                        // Not a build of anything: the parcels, written whole.
                        build::render_parcels(shell, &report);
                    } else {
                        build::finish(shell, &w.package, &report, false);
                    }
                    // The manifest's `out-dir`, kept in sync on every save
                    // (read through the patches the parcels now have).
                    if let Some(dir) = build::manifest(&w.package).and_then(|m| m.out_dir)
                        && let Err(e) = build::write_out_dir(shell, &dir, &report)
                    {
                        shell.error(format!("{e:#}; still watching"));
                    }
                }
                Err(e) => shell.error(format!("{e}; still watching")),
            }
        }
        shell.status("Waiting", "for changes", Style::Note);
        let relevant = |path: &Path| {
            !cache_dirs.iter().any(|c| path.starts_with(c))
                && watched.iter().any(|w| w.is_affected_by(path))
        };
        // Once quiet after the builds, what the pipelines kept is checked
        // against the disk: a change the watcher missed is built then; if
        // none was, patched parcels are written whole.
        let mut check = |quiet: &dyn Fn() -> bool| match drifted(&watched, shell) {
            Some(paths) => Some(Change::At(paths)),
            None if watched.iter().any(|w| w.patched) => Some(Change::Settle),
            None => {
                // Settled: each atlas the first edit would read and draw
                // from the cache is packed into memory now (once), until
                // a file is saved.
                for w in &watched {
                    w.pipeline.warm_up_while(quiet);
                }
                None
            }
        };
        change = match wait_for_change(&rx, relevant, Some(&mut check)) {
            None => return Ok(Exit::Success),
            Some(change) => change,
        };
        dirty = match &change {
            Change::Unknown => vec![true; watched.len()],
            Change::At(paths) => watched
                .iter()
                .map(|w| paths.iter().any(|p| w.is_affected_by(p)))
                .collect(),
            Change::Settle => watched.iter().map(|w| w.patched).collect(),
        };
    }
}

/// The paths whose files changed though the watcher said nothing, in any
/// watched package (see `Pipeline::drifted`); `None` if there are none.
fn drifted(watched: &[Watched], shell: &Shell) -> Option<HashSet<PathBuf>> {
    let drifted: HashSet<PathBuf> = watched.iter().flat_map(|w| w.pipeline.drifted()).collect();
    let mut names: Vec<String> = drifted
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect();
    names.sort();
    let more = names.len().saturating_sub(3);
    names.truncate(3);
    match more {
        _ if drifted.is_empty() => return None,
        0 => {}
        n => names.push(format!("{n} more")),
    }
    shell.warn(format!(
        "the file watcher did not report changes to {}; building them now",
        names.join(", ")
    ));
    Some(drifted)
}

/// What a settled burst of events changed.
enum Change {
    /// These paths (each relevant to some package).
    At(HashSet<PathBuf>),
    /// Possibly anything: the watcher lost events (an overflowing queue).
    Unknown,
    /// Nothing, after an idle moment: the patched parcels are written whole.
    Settle,
}

/// What [`wait_for_change`] asks once idle, handed a probe that says
/// whether the watcher is still quiet; a change it found, if any.
type IdleCheck<'a> = dyn FnMut(&dyn Fn() -> bool) -> Option<Change> + 'a;

/// Blocks until a change at a path `relevant` accepts, then until it
/// settles. `None` if the watcher stopped. If no such change comes for
/// [`IDLE`], `idle` is asked once, and a change it finds is returned. It is
/// handed a probe saying whether the watcher is still quiet, for long idle
/// work to stop at a save; what arrived meanwhile is seen after it.
///
/// Events that do not matter (reads, writes outside the roots) do not put
/// the idle moment off: a program that reads a file in the package every
/// tenth of a second (a script polling `watch`'s own output there) kept
/// the patched parcels from ever being written whole.
fn wait_for_change(
    rx: &Receiver<notify::Result<notify::Event>>,
    relevant: impl Fn(&Path) -> bool,
    mut idle: Option<&mut IdleCheck<'_>>,
) -> Option<Change> {
    // Whether the event may change what a build makes: an error or a
    // rescan request (an overflowing queue, say) may mean anything.
    let matters = |event: &notify::Result<notify::Event>| match event {
        Ok(e) if !e.need_rescan() => {
            changes_content(&e.kind) && e.paths.iter().any(|p| relevant(p))
        }
        _ => true,
    };
    let mut unknown = false;
    let mut paths = HashSet::new();
    let mut found_idle = None;
    // Whether the event matters; notes what it changed.
    let mut see = |event: &notify::Result<notify::Event>, burst: &mut Burst| {
        if !matters(event) {
            return false;
        }
        match event {
            Ok(e) if !e.need_rescan() => {
                paths.extend(e.paths.iter().filter(|p| relevant(p)).cloned());
                burst.see(e);
            }
            // Anything may have changed, so rebuild everything.
            _ => unknown = true,
        }
        true
    };
    let mut burst = Burst::default();
    // Every event that matters ends this loop, so the idle moment is
    // counted from its start.
    let idle_at = Instant::now() + IDLE;
    loop {
        let event = match idle.as_mut() {
            None => rx.recv().ok()?,
            Some(check) => match rx.recv_timeout(idle_at.saturating_duration_since(Instant::now()))
            {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) => {
                    let (early, stirred) = (RefCell::new(Vec::new()), Cell::new(false));
                    let quiet = || {
                        while let Ok(event) = rx.try_recv() {
                            stirred.set(stirred.get() || matters(&event));
                            early.borrow_mut().push(event);
                        }
                        !stirred.get()
                    };
                    let found = check(&quiet);
                    idle = None;
                    if !stirred.get() {
                        match found {
                            Some(change) => return Some(change),
                            None => continue,
                        }
                    }
                    // Saved during the idle work: built with what it found.
                    found_idle = found;
                    for event in early.into_inner() {
                        see(&event, &mut burst);
                    }
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => return None,
            },
        };
        if see(&event, &mut burst) {
            break;
        }
    }
    let start = Instant::now();
    let mut quiet_since = Instant::now();
    while start.elapsed() < SETTLE_MAX {
        match rx.recv_timeout(burst.quiet().saturating_sub(quiet_since.elapsed())) {
            Ok(event) => {
                if see(&event, &mut burst) {
                    quiet_since = Instant::now();
                }
            }
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    match found_idle {
        Some(Change::At(found)) => paths.extend(found),
        Some(Change::Unknown) => unknown = true,
        Some(Change::Settle) | None => {}
    }
    Some(if unknown {
        Change::Unknown
    } else {
        Change::At(paths)
    })
}

/// The files a burst of events wrote and has not seen closed: while there
/// are any, a writer may be between two writes.
#[derive(Debug, Default)]
struct Burst {
    open: HashSet<PathBuf>,
}

impl Burst {
    fn see(&mut self, event: &notify::Event) {
        match event.kind {
            EventKind::Create(CreateKind::Folder) => {}
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any) => {
                self.open.extend(event.paths.iter().cloned());
            }
            // Closed after writing, renamed into place, or gone: done.
            EventKind::Access(AccessKind::Close(AccessMode::Write))
            | EventKind::Modify(ModifyKind::Name(_))
            | EventKind::Remove(_) => {
                for path in &event.paths {
                    self.open.remove(path);
                }
            }
            _ => {}
        }
    }

    /// How long without events ends the burst.
    fn quiet(&self) -> Duration {
        if self.open.is_empty() {
            QUIET_CLOSED
        } else {
            QUIET
        }
    }
}

/// Whether an event of this kind can change what a build reads. Reading is
/// not: the build itself opens every input (and the game or an editor may
/// too), and counting opens would make every build trigger the next.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{DataChange, RemoveKind, RenameMode};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn event(kind: EventKind, path: &str) -> notify::Event {
        notify::Event::new(kind).add_path(PathBuf::from(path))
    }

    #[test]
    fn a_burst_is_settled_sooner_once_every_written_file_is_closed() {
        let mut burst = Burst::default();
        assert_eq!(burst.quiet(), QUIET_CLOSED);
        // An in-place save: truncate, write, close.
        burst.see(&event(
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            "a.png",
        ));
        assert_eq!(burst.quiet(), QUIET, "a writer may still be writing");
        burst.see(&event(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            "a.png",
        ));
        assert_eq!(burst.quiet(), QUIET_CLOSED);
        // A safe-write: a temp file created, written, closed, renamed over.
        burst.see(&event(EventKind::Create(CreateKind::File), ".a.png.tmp"));
        burst.see(&event(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            ".a.png.tmp",
        ));
        burst.see(&event(
            EventKind::Modify(ModifyKind::Name(RenameMode::From)),
            ".a.png.tmp",
        ));
        burst.see(&event(
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            "a.png",
        ));
        assert_eq!(burst.quiet(), QUIET_CLOSED);
        // A file still being written; then removed.
        burst.see(&event(EventKind::Create(CreateKind::File), "b.png"));
        burst.see(&event(EventKind::Create(CreateKind::Folder), "dir"));
        assert_eq!(burst.quiet(), QUIET);
        burst.see(&event(EventKind::Remove(RemoveKind::File), "b.png"));
        assert_eq!(burst.quiet(), QUIET_CLOSED);
    }

    /// The idle work is told of a save made while it runs, stops, and the
    /// save is built together with what the idle check found; without a
    /// save, what it found is the change.
    #[test]
    fn a_save_during_the_idle_work_stops_it_and_is_built() {
        let relevant = |p: &Path| p.starts_with("assets");
        let (tx, rx) = channel();
        let mut probes = Vec::new();
        let mut idle = |quiet: &dyn Fn() -> bool| {
            probes.push(quiet());
            // A read and a file outside the roots do not count; a save does.
            for (kind, path) in [
                (
                    EventKind::Access(AccessKind::Close(AccessMode::Read)),
                    "assets/a.png",
                ),
                (EventKind::Create(CreateKind::File), "target/x"),
            ] {
                tx.send(Ok(event(kind, path))).unwrap();
            }
            probes.push(quiet());
            tx.send(Ok(event(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                "assets/b.png",
            )))
            .unwrap();
            probes.push(quiet());
            probes.push(quiet());
            Some(Change::At(HashSet::from([PathBuf::from(
                "assets/drifted.txt",
            )])))
        };
        let Some(Change::At(paths)) = wait_for_change(&rx, relevant, Some(&mut idle)) else {
            panic!("a change at paths");
        };
        assert_eq!(probes, [true, true, false, false]);
        assert_eq!(
            paths,
            HashSet::from([
                PathBuf::from("assets/b.png"),
                PathBuf::from("assets/drifted.txt")
            ])
        );

        let (_tx, rx) = channel();
        let mut idle = |quiet: &dyn Fn() -> bool| {
            assert!(quiet());
            Some(Change::Settle)
        };
        assert!(matches!(
            wait_for_change(&rx, relevant, Some(&mut idle)),
            Some(Change::Settle)
        ));
    }

    /// Reads every 20 ms, without end, do not keep the idle work from
    /// running: it runs while they go on, an idle moment after the start.
    #[test]
    fn reads_do_not_put_off_the_idle_work() {
        let relevant = |p: &Path| p.starts_with("assets");
        let (tx, rx) = channel();
        let reading = Arc::new(AtomicBool::new(true));
        let reader = {
            let reading = Arc::clone(&reading);
            std::thread::spawn(move || {
                // Stops by itself, so that a failing test ends.
                let start = Instant::now();
                while reading.load(Ordering::Relaxed) && start.elapsed() < 20 * IDLE {
                    let read = event(
                        EventKind::Access(AccessKind::Close(AccessMode::Read)),
                        "assets/a.png",
                    );
                    if tx.send(Ok(read)).is_err() {
                        break;
                    }
                    std::thread::sleep(IDLE / 12);
                }
            })
        };
        let mut ran_while_reading = None;
        let mut idle = |_: &dyn Fn() -> bool| {
            ran_while_reading = Some(reading.swap(false, Ordering::Relaxed));
            Some(Change::Settle)
        };
        assert!(matches!(
            wait_for_change(&rx, relevant, Some(&mut idle)),
            Some(Change::Settle)
        ));
        reader.join().unwrap();
        assert_eq!(
            ran_while_reading,
            Some(true),
            "the idle work ran during the reads"
        );
    }

    #[test]
    fn reads_are_not_changes_but_closing_a_written_file_is() {
        assert!(!changes_content(&EventKind::Access(AccessKind::Open(
            notify::event::AccessMode::Any
        ))));
        assert!(!changes_content(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(changes_content(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(changes_content(&EventKind::Modify(ModifyKind::Any)));
    }
}
