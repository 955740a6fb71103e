//! One module per command: its arguments resolved, a call into the library,
//! and the rendering of what it returns.

pub mod build;
pub mod clean;
pub mod inspect;
pub mod picture;
pub mod query;
pub mod watch;

use assets_build::unstable::Event;

use crate::shell::{Shell, Style};

/// How a command ended, as an exit code (Cargo's conventions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0.
    Success,
    /// 101: the build ran and something failed.
    BuildFailed,
    /// 1: the command was asked something that does not exist (an unknown
    /// asset), already reported.
    Usage,
    /// The exit code of the processor runner that did the work.
    Delegated(u8),
}

impl Exit {
    /// Whether it is exit code 0.
    pub fn is_success(self) -> bool {
        matches!(self, Exit::Success | Exit::Delegated(0))
    }
}

/// Says that a command waits for another process's lock on the cache (the
/// only event `clean` and `gc` have).
pub fn render_lock_wait(shell: &Shell, event: &Event<'_>) {
    if let Event::WaitingForLock { path } = event {
        shell.status(
            "Blocking",
            format!("waiting for file lock on `{}`", path.display()),
            Style::Note,
        );
    }
}
