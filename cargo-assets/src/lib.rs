//! `cargo assets`: build, watch and inspect game assets.
//!
//! A thin front-end over `assets_build`: `cli` parses arguments, each of
//! `commands` resolves them and calls the library, and `shell` is the only
//! place that writes to the terminal; [`message`] types every line of
//! `--message-format json`. It is a library too, so that the
//! processor runner (`runner.rs`) can be this same program with a package's
//! custom processors linked in; what that needs ([`main_with`],
//! [`Allocator`]) and [`message`] are its whole public surface.

#![deny(clippy::print_stdout, clippy::print_stderr)] // only `shell` writes to the terminal

// What `main` needs is public: [`main_with`], [`run`], the [`Allocator`],
// and the [`message`] types (the JSON lines other programs read). The rest
// is this program's own.
mod cli;
mod commands;
pub mod message;
mod reload_server;
mod runner;
mod shell;
mod workspace;

use std::process::ExitCode;

/// The global allocator of the `cargo-assets` binary and of every processor
/// runner (the same program with a package's processors linked in): each
/// sets `#[global_allocator] static ALLOCATOR: cargo_assets::Allocator =
/// cargo_assets::Allocator;`. mimalloc: a build is a fresh process of many
/// small allocations on short-lived worker threads, which glibc's arenas
/// serve slowly; what it saves and costs (time on large projects and small
/// ones, peak memory) is measured in BENCHMARKS.md, "The parcel stage's
/// bookkeeping, and the CLI's allocator". Built without transparent huge
/// pages (mimalloc's `no_thp`): with them, each first touch of its arenas
/// zeroed 2 MiB, and a cold 10k build took a third longer ("The allocator
/// without huge pages"). The libraries never choose: a build script keeps
/// the system allocator unless it sets its own.
pub use mimalloc::MiMalloc as Allocator;

use assets_build::Registry;
use clap::Parser;

use cli::{Cli, Command};
use commands::Exit;
use commands::query::Question;
use shell::Shell;

/// The program: parses `std::env::args`, runs the command, and returns the
/// exit code, with `processors` registered besides the built-in ones.
pub fn main_with(processors: &[fn(&mut Registry)]) -> ExitCode {
    run(std::env::args_os(), processors)
}

/// The program on `args` (the first is the program's name).
pub fn run(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    processors: &[fn(&mut Registry)],
) -> ExitCode {
    // As a Cargo subcommand we are run as `cargo-assets assets <args>`.
    let mut args: Vec<_> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "assets") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    let shell = Shell::new(&cli.output);
    let result = match &cli.command {
        Command::Build(args) => commands::build::exec(args, &shell, processors),
        Command::Verify(args) => commands::build::verify(args, &shell, processors),
        Command::Clean(args) => commands::clean::exec(args, &shell),
        Command::Inspect(args) => commands::inspect::exec(args, &shell),
        Command::Watch(args) => commands::watch::exec(args, &shell, processors),
        Command::Why(args) => commands::query::exec(Question::Why, args, &shell, processors),
        Command::Deps(args) => commands::query::exec(Question::Deps, args, &shell, processors),
        Command::Rdeps(args) => commands::query::exec(Question::Rdeps, args, &shell, processors),
        Command::Outputs(args) => {
            commands::query::exec(Question::Outputs, args, &shell, processors)
        }
        Command::Source(args) => commands::query::exec(Question::Source, args, &shell, processors),
        Command::Graph(args) => commands::query::graph(args, &shell, processors),
        Command::Gc(args) => commands::query::collect(args, &shell),
        Command::BuildScript => commands::build::build_script(processors),
    };
    match result {
        Ok(Exit::Success) => ExitCode::SUCCESS,
        Ok(Exit::BuildFailed) => ExitCode::from(101),
        Ok(Exit::Usage) => ExitCode::from(1),
        Ok(Exit::Delegated(code)) => ExitCode::from(code),
        Err(e) => {
            shell.error(error_text(&e));
            ExitCode::from(101)
        }
    }
}

/// An error and its causes on one line, `a: b: c`, as `{:#}` prints them,
/// less each cause whose text the line already holds (errors that show
/// their source in their own message too: "No space left on device"
/// printed twice).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}
