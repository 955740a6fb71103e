//! One module per command: its arguments resolved, a call into the library,
//! and the rendering of what it returns.

pub mod build;
pub mod clean;
pub mod inspect;
pub mod picture;
pub mod query;
pub mod watch;

/// How a command ended, as an exit code (Cargo's conventions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0.
    Success,
    /// 101: the build ran and something failed.
    BuildFailed,
    /// The exit code of the processor runner that did the work.
    Delegated(u8),
}
