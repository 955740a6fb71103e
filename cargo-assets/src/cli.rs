//! Command-line arguments, as parsed. No logic: commands resolve them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `cargo assets`: the content pipeline for Rust games.
#[derive(Debug, Parser)]
#[command(name = "cargo-assets", bin_name = "cargo assets", version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Output options shared by every command.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the package's assets.
    Build(BuildArgs),
    /// Remove the asset cache (`<target-dir>/assets`).
    Clean(PackageArgs),
    /// List a parcel's resources and verify its checksums.
    Inspect(InspectArgs),
}

/// Where the package and its target directory are.
#[derive(Debug, Args)]
pub struct PackageArgs {
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH", global = true)]
    pub manifest_path: Option<PathBuf>,
    /// Directory for all generated artifacts.
    #[arg(long, value_name = "DIRECTORY", global = true)]
    pub target_dir: Option<PathBuf>,
}

/// `cargo assets inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The parcel file.
    pub parcel: PathBuf,
    /// Also draw this atlas's pages, with sprite outlines, as PNG files.
    #[arg(long, value_name = "NAME")]
    pub atlas: Option<String>,
    /// Where `--atlas` writes its pictures [default: beside the parcel].
    #[arg(long, value_name = "DIRECTORY", requires = "atlas")]
    pub out_dir: Option<PathBuf>,
}

/// `cargo assets build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The package.
    #[command(flatten)]
    pub package: PackageArgs,
    /// Number of parallel jobs, defaults to # of CPUs.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Build the `release` variant.
    #[arg(short, long, conflicts_with = "profile")]
    pub release: bool,
    /// Build the variant of this profile name.
    #[arg(long, value_name = "PROFILE-NAME")]
    pub profile: Option<String>,
}

/// Output options.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Use verbose output.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Do not print cargo log messages.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Coloring: auto, always, never.
    #[arg(long, value_name = "WHEN", global = true)]
    pub color: Option<ColorChoice>,
    /// Machine-readable messages on stdout.
    #[arg(long, value_name = "FMT", global = true, default_value = "human")]
    pub message_format: MessageFormat,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Color when stderr is a terminal.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// `--message-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    /// Status lines for people.
    Human,
    /// One JSON object per line on stdout.
    Json,
}
