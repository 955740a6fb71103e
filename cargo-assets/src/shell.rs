//! The terminal: the only module that writes to stdout and stderr.
//!
//! Status lines go to stderr in Cargo's shape (the verb right-aligned to 12
//! columns); with `--message-format json`, one JSON object per line goes to
//! stdout. Writes lock the stream, so worker threads can report concurrently.
//!
//! A long build on a terminal also gets a progress bar on the last line of
//! stderr, as Cargo draws one: it appears only once a build has run for
//! [`PROGRESS_DELAY`] (a no-op never flashes one), never when stderr is not a
//! terminal or with `-q`, and status lines are printed above it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{ColorChoice, MessageFormat, OutputArgs};
use crate::message::Message;

/// How much to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: errors only.
    Quiet,
    /// Default.
    Normal,
    /// `-v`.
    Verbose,
}

/// Output settings resolved from flags and `CARGO_TERM_*`.
#[derive(Debug)]
pub struct Shell {
    verbosity: Verbosity,
    color: bool,
    json: bool,
    terminal: bool,
    progress: Mutex<Option<Progress>>,
}

/// How long a build runs before its progress bar appears.
pub const PROGRESS_DELAY: Duration = Duration::from_millis(400);

#[derive(Debug)]
struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
}

/// Status line colors.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    /// Green: progress.
    Good,
    /// Cyan: fresh, informational.
    Note,
    /// Yellow: warnings.
    Warn,
    /// Red: errors.
    Bad,
}

impl Shell {
    /// Resolves `--color`, `-v`, `-q` with `CARGO_TERM_COLOR` / `CARGO_TERM_VERBOSE`.
    pub fn new(args: &OutputArgs) -> Shell {
        let env_color = std::env::var("CARGO_TERM_COLOR").ok();
        let color = match args.color {
            Some(c) => c,
            None => match env_color.as_deref() {
                Some("always") => ColorChoice::Always,
                Some("never") => ColorChoice::Never,
                _ => ColorChoice::Auto,
            },
        };
        let terminal = std::io::stderr().is_terminal();
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal,
        };
        let env_verbose = std::env::var("CARGO_TERM_VERBOSE").is_ok_and(|v| v == "true");
        let verbosity = if args.quiet {
            Verbosity::Quiet
        } else if args.verbose > 0 || env_verbose {
            Verbosity::Verbose
        } else {
            Verbosity::Normal
        };
        Shell {
            verbosity,
            color,
            json: args.message_format == MessageFormat::Json,
            terminal,
            progress: Mutex::new(None),
        }
    }

    /// Starts a progress bar for `total` steps (drawn only on a terminal,
    /// and only after [`PROGRESS_DELAY`]).
    pub fn progress_start(&self, total: usize) {
        if !self.terminal || self.verbosity == Verbosity::Quiet {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
        let template = "{prefix:>12} [{bar:27}] {pos}/{len}: {wide_msg}";
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix("Building");
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner) = Some(Progress {
            bar,
            started: Instant::now(),
            shown: false,
        });
    }

    /// A step starts on `what`: the bar names it.
    pub fn progress_working_on(&self, what: &str) {
        self.with_progress(|bar| bar.set_message(what.to_owned()));
    }

    /// One more step done.
    pub fn progress_step(&self) {
        self.with_progress(|bar| bar.inc(1));
    }

    fn with_progress(&self, f: impl FnOnce(&ProgressBar)) {
        let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(p) = progress.as_mut() else { return };
        if !p.shown && p.started.elapsed() >= PROGRESS_DELAY {
            p.bar.set_draw_target(ProgressDrawTarget::stderr());
            p.shown = true;
        }
        f(&p.bar);
    }

    /// Removes the progress bar.
    pub fn progress_finish(&self) {
        if let Some(p) = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            p.bar.finish_and_clear();
        }
    }

    /// The verbosity.
    pub fn verbosity(&self) -> Verbosity {
        self.verbosity
    }

    /// `   Processing sprites/hero.png` on stderr, unless quiet.
    pub fn status(&self, verb: &str, message: impl std::fmt::Display, style: Style) {
        if self.verbosity >= Verbosity::Normal {
            self.line(&format!("{:>12}", verb), message, style);
        }
    }

    /// A status-styled line that is part of a command's answer (one per
    /// resource of `inspect`): shown when JSON was not asked for, since the
    /// JSON messages then carry the same answer.
    pub fn listing(&self, verb: &str, message: impl std::fmt::Display, style: Style) {
        if !self.json {
            self.status(verb, message, style);
        }
    }

    /// `warning: ...` on stderr, unless quiet.
    pub fn warn(&self, message: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            self.line("warning:", message, Style::Warn);
        }
    }

    /// `note: ...` on stderr, unless quiet.
    pub fn note(&self, message: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            self.line("note:", message, Style::Note);
        }
    }

    /// `error: ...` on stderr, always.
    pub fn error(&self, message: impl std::fmt::Display) {
        self.line("error:", message, Style::Bad);
    }

    fn line(&self, head: &str, message: impl std::fmt::Display, style: Style) {
        let progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        match progress.as_ref().filter(|p| p.shown) {
            Some(p) => p.bar.suspend(|| self.write_line(head, message, style)),
            None => self.write_line(head, message, style),
        }
    }

    fn write_line(&self, head: &str, message: impl std::fmt::Display, style: Style) {
        let mut err = std::io::stderr().lock();
        let _ = if self.color {
            let code = match style {
                Style::Good => "32",
                Style::Note => "36",
                Style::Warn => "33",
                Style::Bad => "31",
            };
            writeln!(err, "\x1b[1;{code}m{head}\x1b[0m {message}")
        } else {
            writeln!(err, "{head} {message}")
        };
    }

    /// A line of a command's answer (`why`, `graph`...) on stdout, when JSON
    /// was not asked for (then the answer is the JSON message).
    pub fn print(&self, text: &str) {
        if !self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
        }
    }

    /// One JSON message on stdout, if JSON was asked for.
    pub fn message(&self, message: &Message) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", message.to_line());
            let _ = out.flush();
        }
    }
}
