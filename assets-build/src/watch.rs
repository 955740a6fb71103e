//! When a watching front-end builds: the policy of `cargo assets watch` as
//! a state machine that is told what the file watcher saw and what time it
//! is, and answers what to do next. It does no I/O and reads no clock, so a
//! test drives it through save storms, idle moments and failed builds in
//! microseconds; the front-end owns the watcher, the clock and the builds.
//!
//! - **Bursts.** The first change that matters starts a burst; every change
//!   in it is gathered into one build. A burst ends after [`QUIET`] without
//!   changes, or only [`QUIET_CLOSED`] once every file written in it has
//!   been closed (or renamed into place, or removed), which is how a save
//!   ends; never later than [`SETTLE_MAX`] after it began, so a storm of
//!   saves builds at most once per [`SETTLE_MAX`] and is never starved.
//! - **Only changes count.** The front-end passes only changes at paths a
//!   build can read; opening or reading a file is not a change (the build
//!   itself reads every input, and a game or a script may poll a file), so
//!   neither ends an idle moment nor starts a burst.
//! - **Lost events.** An overflowing queue or a watcher error means anything
//!   may have changed: the burst's build then looks at everything.
//! - **The idle moment.** [`IDLE`] after the builds with no change, the
//!   front-end is asked, once, for its idle work ([`Next::Idle`]): compare
//!   what the pipelines kept with the disk, write patched parcels whole,
//!   warm caches. Changes that arrive meanwhile are given to the machine as
//!   usual; [`Watch::is_quiet`] tells long idle work to stop, and what the
//!   idle work found is built together with them ([`Watch::idle_done`]).
//! - **Failures change nothing here.** A failed build (a broken file, a
//!   broken `Cargo.toml`) is followed by the same wait as a good one, and the
//!   save that fixes it is built like any other.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Quiet time that ends a burst while a file written in it may still be
/// open.
pub const QUIET: Duration = Duration::from_millis(40);
/// Quiet time that ends a burst in which every written file was closed.
pub const QUIET_CLOSED: Duration = Duration::from_millis(15);
/// Quiet time after the builds before the idle work.
pub const IDLE: Duration = Duration::from_millis(250);
/// The longest a burst may delay a build.
pub const SETTLE_MAX: Duration = Duration::from_millis(1000);

/// A change the file watcher reported at a path a build can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// A file was created, or written (it may still be open).
    Written(PathBuf),
    /// A file written in the burst was closed: its writer is done.
    Closed(PathBuf),
    /// A file was renamed (from or to this path) or removed: nothing is
    /// writing it any more.
    Moved(PathBuf),
    /// Something else changed at the path (a folder was created, a file's
    /// permissions): a change, but no writer to wait for.
    Touched(PathBuf),
    /// Events were lost (an overflowing queue, a watcher error): anything
    /// may have changed.
    Lost,
}

/// What to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// What changed at these paths.
    At(HashSet<PathBuf>),
    /// Possibly anything: the first build, or events were lost.
    Unknown,
    /// Nothing changed: the idle work asked for the parcels to be written
    /// whole.
    Settle,
}

/// What the front-end should do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Build this change, then call [`Watch::built`].
    Build(Change),
    /// Do the idle work, then call [`Watch::idle_done`] with what it found.
    Idle,
    /// Wait for the watcher until this moment (`None`: for ever), giving
    /// the machine what it reports, then ask again.
    WaitUntil(Option<Instant>),
}

/// The watch policy's state (see the module docs).
#[derive(Debug)]
pub struct Watch {
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// A build is due (the first one, or what the idle work found).
    Due(Change),
    /// A build is running (or the front-end has not said it is done).
    Building,
    /// After the builds: the idle work is due at this moment, or was done.
    Waiting { idle_at: Option<Instant> },
    /// The idle work is running; nothing has changed yet.
    Idling,
    /// Changes are arriving: gathered until they settle.
    Settling(Burst),
}

/// The changes of a burst and its timing.
#[derive(Debug)]
struct Burst {
    started: Instant,
    last: Instant,
    paths: HashSet<PathBuf>,
    unknown: bool,
    /// Files written and not seen closed: a writer may be between writes.
    open: HashSet<PathBuf>,
    /// Whether it began while the idle work ran: what the work found is
    /// then added when it ends.
    during_idle: bool,
}

impl Default for Watch {
    fn default() -> Self {
        Self::new()
    }
}

impl Watch {
    /// A machine whose first answer is to build everything.
    pub fn new() -> Watch {
        Watch {
            phase: Phase::Due(Change::Unknown),
        }
    }

    /// What to do at `now`.
    pub fn next(&mut self, now: Instant) -> Next {
        let (phase, next) = match std::mem::replace(&mut self.phase, Phase::Building) {
            Phase::Due(change) => (Phase::Building, Next::Build(change)),
            // Asked again before the build or the idle work is said to be
            // done: nothing new to do.
            phase @ (Phase::Building | Phase::Idling | Phase::Waiting { idle_at: None }) => {
                (phase, Next::WaitUntil(None))
            }
            Phase::Waiting { idle_at: Some(at) } if now >= at => (Phase::Idling, Next::Idle),
            phase @ Phase::Waiting { idle_at: Some(at) } => (phase, Next::WaitUntil(Some(at))),
            Phase::Settling(burst) if burst.during_idle => {
                (Phase::Settling(burst), Next::WaitUntil(None))
            }
            Phase::Settling(burst) => {
                let ends = (burst.last + burst.quiet()).min(burst.started + SETTLE_MAX);
                if now < ends {
                    (Phase::Settling(burst), Next::WaitUntil(Some(ends)))
                } else {
                    (Phase::Building, Next::Build(burst.change()))
                }
            }
        };
        self.phase = phase;
        next
    }

    /// The watcher reported `change` at `now`.
    pub fn see(&mut self, now: Instant, change: FileChange) {
        let mut burst = match std::mem::replace(&mut self.phase, Phase::Building) {
            Phase::Settling(burst) => burst,
            // A build due (none is, in practice, when changes come): made
            // part of the burst.
            Phase::Due(due) => {
                let mut burst = Burst::new(now, false);
                burst.add(due);
                burst
            }
            Phase::Idling => Burst::new(now, true),
            // Seen while building: it starts the next burst (the build may
            // have read the file before the change).
            Phase::Building | Phase::Waiting { .. } => Burst::new(now, false),
        };
        burst.last = now;
        match change {
            FileChange::Written(path) => {
                burst.open.insert(path.clone());
                burst.paths.insert(path);
            }
            FileChange::Closed(path) | FileChange::Moved(path) => {
                burst.open.remove(&path);
                burst.paths.insert(path);
            }
            FileChange::Touched(path) => {
                burst.paths.insert(path);
            }
            FileChange::Lost => burst.unknown = true,
        }
        self.phase = Phase::Settling(burst);
    }

    /// The build [`Next::Build`] asked for is done, well or not, at `now`.
    pub fn built(&mut self, now: Instant) {
        if matches!(self.phase, Phase::Building) {
            self.phase = Phase::Waiting {
                idle_at: Some(now + IDLE),
            };
        }
    }

    /// The idle work [`Next::Idle`] asked for is done, at `now`; it found
    /// `found` to build (files changed behind the watcher's back, parcels to
    /// write whole), or nothing.
    pub fn idle_done(&mut self, now: Instant, found: Option<Change>) {
        match &mut self.phase {
            Phase::Idling => {
                self.phase = match found {
                    Some(change) => Phase::Due(change),
                    None => Phase::Waiting { idle_at: None },
                }
            }
            // Saved during the idle work: built together with what it
            // found, once the save settles (counted from now).
            Phase::Settling(burst) if burst.during_idle => {
                burst.during_idle = false;
                burst.last = burst.last.max(now);
                if let Some(found) = found {
                    burst.add(found);
                }
            }
            _ => {}
        }
    }

    /// Whether nothing has changed since the idle work began: long idle
    /// work stops once this is false.
    pub fn is_quiet(&self) -> bool {
        !matches!(self.phase, Phase::Settling(_))
    }
}

impl Burst {
    fn new(now: Instant, during_idle: bool) -> Burst {
        Burst {
            started: now,
            last: now,
            paths: HashSet::new(),
            unknown: false,
            open: HashSet::new(),
            during_idle,
        }
    }

    /// How long without changes ends the burst.
    fn quiet(&self) -> Duration {
        if self.open.is_empty() {
            QUIET_CLOSED
        } else {
            QUIET
        }
    }

    fn add(&mut self, change: Change) {
        match change {
            Change::At(paths) => self.paths.extend(paths),
            Change::Unknown => self.unknown = true,
            Change::Settle => {}
        }
    }

    fn change(self) -> Change {
        if self.unknown {
            Change::Unknown
        } else {
            Change::At(self.paths)
        }
    }
}

#[cfg(test)]
mod tests;
