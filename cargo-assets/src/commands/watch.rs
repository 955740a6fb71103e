//! `cargo assets watch`: build, then rebuild whenever something a step read
//! changes, and tell running games over the hot-reload port.
//!
//! - It watches directories, not files: every asset root recursively and the
//!   package directory for `Cargo.toml`. So editors that save by writing a
//!   temp file and renaming it over the original (vim, JetBrains "safe
//!   write") are seen, and so are files created where a processor looked and
//!   found nothing (its record says so; the rebuild's check finds it).
//! - When to build is decided by the watch policy, `assets_build::unstable::watch`, a
//!   state machine with tests of its own: writes settle into one build per
//!   burst (a save ends when its file is closed or renamed into place; a
//!   storm builds at most once per second), reads are not changes, lost
//!   events rebuild everything, and an idle moment after the builds runs
//!   the idle work below. This file turns notify's events into the
//!   policy's changes and does what it answers.
//! - Each package's pipeline keeps its state between builds (the record
//!   log, the walk, the plan, the stats of everything under the roots) and
//!   is told which paths changed, so an edit's build looks again only at
//!   what those paths touch (see `assets_build::unstable::Changes`). It trusts the
//!   watcher for that, and checks the trust: once quiet for a moment after
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
//!   (`assets_build::unstable::BuildOptions::patch_parcels`): an edit costs the bytes
//!   it changed, not the parcel's size, and the game reads the parcel
//!   through the patch (`assets_runtime::patch`). Once idle, with nothing
//!   drifted, the patched parcels are written whole again, as `cargo assets
//!   build` writes them, and the games told (no `patch` in the notice).
//! - Once idle with nothing to write either, each atlas the builds found
//!   fresh is packed into memory (`Pipeline::warm_up_while`), once: the
//!   first edit of an atlas then re-packs from memory, as later ones do
//!   (from its pixels and pages while the memory holds them, and from what
//!   is kept apart of it when it does not: its sprites' sizes, its layout,
//!   which stored output each page is). A save stops it between two
//!   atlases, so its build waits for one at most.
//! - Several packages (a workspace, or `-p a -p b`) are watched by one
//!   process and served on one port; a change rebuilds only the packages
//!   whose roots or manifest it touched. Packages with processor crates are
//!   built by a runner process (see [`crate::runner`]), which works on one
//!   package, so those are watched one at a time (`-p`).

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Instant;

use anyhow::{Context as _, bail};
use assets_build::unstable::manifest::AssetRoot;
use assets_build::unstable::watch::{Change, FileChange, Next, Watch};
use assets_build::{
    Registry, unstable::BuildReport, unstable::Changes, unstable::Manifest, unstable::OnFailure,
    unstable::ParcelOutcome, unstable::Pipeline,
};
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher};

use super::{Exit, build};
use crate::cli::WatchArgs;
use crate::message::Message;
use crate::reload_server::ReloadServer;
use crate::runner;
use crate::shell::{Shell, Style};
use crate::workspace::{self, Package};

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
    let mut policy = Watch::new();
    loop {
        let relevant = |path: &Path| {
            !cache_dirs.iter().any(|c| path.starts_with(c))
                && watched.iter().any(|w| w.is_affected_by(path))
        };
        match policy.next(Instant::now()) {
            Next::WaitUntil(deadline) => {
                let event = match deadline {
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
                };
                match event {
                    Ok(event) => {
                        for change in changes_of(event, relevant) {
                            policy.see(Instant::now(), change);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return Ok(Exit::Success),
                }
            }
            Next::Idle => {
                // Saves during the idle work reach the policy, which then
                // stops the work and builds them with what it found.
                let found = {
                    let policy = RefCell::new(&mut policy);
                    let quiet = || {
                        while let Ok(event) = rx.try_recv() {
                            for change in changes_of(event, relevant) {
                                policy.borrow_mut().see(Instant::now(), change);
                            }
                        }
                        policy.borrow().is_quiet()
                    };
                    idle_work(&watched, shell, &quiet)
                };
                policy.idle_done(Instant::now(), found);
            }
            Next::Build(change) => {
                build_round(&mut watched, &change, &mut watcher, &server, shell);
                shell.status("Waiting", "for changes", Style::Note);
                policy.built(Instant::now());
            }
        }
    }
}

/// Builds each package `change` touches (every one if it is unknown; the
/// patched ones, whole, for a settle), tells the games, and watches what
/// the builds read.
fn build_round(
    watched: &mut [Watched],
    change: &Change,
    watcher: &mut impl Watcher,
    server: &ReloadServer,
    shell: &Shell,
) {
    let nothing = HashSet::new();
    let (changes, settle) = match change {
        Change::Unknown => (Changes::Unknown, false),
        Change::At(paths) => (Changes::At(paths), false),
        Change::Settle => (Changes::At(&nothing), true),
    };
    let dirty: Vec<bool> = (watched.iter())
        .map(|w| match change {
            Change::Unknown => true,
            Change::At(paths) => paths.iter().any(|p| w.is_affected_by(p)),
            Change::Settle => w.patched,
        })
        .collect();
    let several = watched.len() > 1;
    for (w, _) in watched.iter_mut().zip(&dirty).filter(|(_, dirty)| **dirty) {
        // A package's roots are watched before its build stats what is
        // under them: the pipeline trusts the watcher there.
        w.follow_roots(watcher, shell);
        if several && !settle {
            shell.status("Building", &w.package.name, Style::Good);
        }
        w.pipeline.set_patch_parcels(!settle);
        let built = build::build_once(&w.pipeline, changes, shell);
        w.pipeline.set_patch_parcels(true);
        let report = match built {
            Ok(report) => report,
            Err(e) => {
                shell.error(format!("{e}; still watching"));
                continue;
            }
        };
        w.patched = report.parcels.iter().any(|p| p.patch.is_some());
        w.follow_outside(watcher, &report);
        // Games hear of the parcels before `build-finished` is said, so a
        // client that connects after it only hears of later builds.
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
        // The manifest's `out-dir`, kept in sync on every save (read
        // through the patches the parcels now have).
        if let Some(dir) = build::manifest(&w.package).and_then(|m| m.out_dir)
            && let Err(e) = build::write_out_dir(shell, &dir, &report)
        {
            shell.error(format!("{e:#}; still watching"));
        }
    }
}

/// Once quiet after the builds: what the pipelines kept is checked against
/// the disk, and a change the watcher missed is to be built; if none was,
/// patched parcels are to be written whole; with nothing to write either,
/// each atlas the first edit would read is packed into memory (once),
/// until `quiet` says a file was saved.
fn idle_work(watched: &[Watched], shell: &Shell, quiet: &dyn Fn() -> bool) -> Option<Change> {
    match drifted(watched, shell) {
        Some(paths) => Some(Change::At(paths)),
        None if watched.iter().any(|w| w.patched) => Some(Change::Settle),
        None => {
            for w in watched {
                w.pipeline.warm_up_while(quiet);
            }
            None
        }
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

/// What the watcher's `event` changed, at paths `relevant` accepts, as
/// the watch policy counts it: nothing for a read; anything (`Lost`) for an
/// error or a rescan request (an overflowing queue, say).
fn changes_of(
    event: notify::Result<notify::Event>,
    relevant: impl Fn(&Path) -> bool,
) -> Vec<FileChange> {
    let event = match event {
        Ok(e) if !e.need_rescan() => e,
        _ => return vec![FileChange::Lost],
    };
    if !changes_content(&event.kind) {
        return Vec::new();
    }
    let change: fn(PathBuf) -> FileChange = match event.kind {
        EventKind::Create(CreateKind::Folder) => FileChange::Touched,
        EventKind::Create(_) | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any) => {
            FileChange::Written
        }
        // Closed after writing, renamed into place, or gone: done.
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => FileChange::Closed,
        EventKind::Modify(ModifyKind::Name(_)) | EventKind::Remove(_) => FileChange::Moved,
        _ => FileChange::Touched,
    };
    (event.paths.into_iter())
        .filter(|p| relevant(p))
        .map(change)
        .collect()
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

    fn changes(kind: EventKind, path: &str) -> Vec<FileChange> {
        let event = notify::Event::new(kind).add_path(PathBuf::from(path));
        changes_of(Ok(event), |p| p.starts_with("assets"))
    }

    /// The policy's tests (`assets_build::unstable::watch`) take these as given.
    #[test]
    fn watcher_events_become_the_changes_the_policy_counts() {
        let p = |s: &str| PathBuf::from(s);
        let written = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        assert_eq!(
            changes(written, "assets/a.png"),
            [FileChange::Written(p("assets/a.png"))]
        );
        let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
        assert_eq!(
            changes(closed, "assets/a.png"),
            [FileChange::Closed(p("assets/a.png"))]
        );
        let renamed = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        assert_eq!(
            changes(renamed, "assets/a.png"),
            [FileChange::Moved(p("assets/a.png"))]
        );
        let removed = EventKind::Remove(RemoveKind::File);
        assert_eq!(
            changes(removed, "assets/b.png"),
            [FileChange::Moved(p("assets/b.png"))]
        );
        let folder = EventKind::Create(CreateKind::Folder);
        assert_eq!(
            changes(folder, "assets/new"),
            [FileChange::Touched(p("assets/new"))]
        );
        // Reads are not changes, nor is anything outside what is watched.
        let read = EventKind::Access(AccessKind::Close(AccessMode::Read));
        assert!(changes(read, "assets/a.png").is_empty());
        let opened = EventKind::Access(AccessKind::Open(AccessMode::Any));
        assert!(changes(opened, "assets/a.png").is_empty());
        assert!(changes(EventKind::Create(CreateKind::File), "target/x").is_empty());
        // Lost events may be anything.
        let lost = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert_eq!(changes_of(Ok(lost), |_| false), [FileChange::Lost]);
        let error = notify::Error::generic("queue overflow");
        assert_eq!(changes_of(Err(error), |_| false), [FileChange::Lost]);
    }
}
