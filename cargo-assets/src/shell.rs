//! The terminal: the only module that writes to stdout and stderr.
//!
//! Status lines go to stderr in Cargo's shape (the verb right-aligned to 12
//! columns); with `--message-format json`, one JSON object per line goes to
//! stdout. Writes lock the stream, so worker threads can report concurrently.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};

use crate::cli::{ColorChoice, MessageFormat, OutputArgs};

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
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => std::io::stderr().is_terminal(),
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

    /// `warning: ...` on stderr, unless quiet.
    pub fn warn(&self, message: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            self.line("warning:", message, Style::Warn);
        }
    }

    /// `error: ...` on stderr, always.
    pub fn error(&self, message: impl std::fmt::Display) {
        self.line("error:", message, Style::Bad);
    }

    fn line(&self, head: &str, message: impl std::fmt::Display, style: Style) {
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
    pub fn message(&self, value: &serde_json::Value) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{value}");
            let _ = out.flush();
        }
    }
}
