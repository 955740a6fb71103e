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
    /// Build, then build every fresh step again without the cache and fail
    /// if any output differs (`--verify-fraction` checks a share).
    Verify(BuildArgs),
    /// Remove the asset cache (`<target-dir>/assets`).
    Clean(PackageArgs),
    /// List a parcel's resources and verify its checksums.
    Inspect(InspectArgs),
    /// Build, then rebuild on every change and notify running games.
    Watch(WatchArgs),
    /// Why an asset was last built, and whether the next build will rebuild it.
    Why(QueryArgs),
    /// What an asset's step read, looked for, and used.
    Deps(QueryArgs),
    /// Which steps use an asset: its outputs, its file, or its absence.
    Rdeps(QueryArgs),
    /// What an asset produced (resources, kinds, sizes) and which parcels hold it.
    Outputs(QueryArgs),
    /// Where a parcel resource comes from: its asset, file and processor.
    Source(QueryArgs),
    /// The whole dependency graph, as a list or in Graphviz's DOT.
    Graph(GraphArgs),
    /// Remove blobs that no record uses, and report the bytes freed.
    Gc(PackageArgs),
    /// What a game's `build.rs` runs when assets-build has no pipeline of
    /// its own (its default): the build script's build, in this process,
    /// with the environment Cargo gave the script.
    /// (Named so that no typo of a command is taken for it: clap suggests
    /// hidden commands too.)
    #[command(hide = true, name = "as-script")]
    BuildScript,
}

/// How much of the machine a build uses.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Number of parallel jobs, defaults to # of CPUs.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Memory that large decodes may hold at once, e.g. `4GiB`; a bigger
    /// image fails by name [default: 1GiB]
    #[arg(long, value_name = "SIZE", env = "CARGO_ASSETS_MEMORY_BUDGET", value_parser = assets_build::unstable::parse_size)]
    pub memory_budget: Option<u64>,
    /// Seconds a step may run before the build stops, where its rule has
    /// no `timeout` [default: 300]
    #[arg(long, value_name = "SECONDS", env = "CARGO_ASSETS_STEP_TIMEOUT", value_parser = assets_build::unstable::parse_step_timeout)]
    pub step_timeout: Option<std::time::Duration>,
}

impl JobsArgs {
    /// Sets the jobs and the memory budget of `options`.
    pub fn apply(&self, options: &mut assets_build::unstable::BuildOptions) -> anyhow::Result<()> {
        if let Some(jobs) = self.jobs {
            anyhow::ensure!(jobs > 0, "`--jobs` must be at least 1");
            options.jobs = jobs;
        }
        if let Some(bytes) = self.memory_budget {
            options.memory_budget = bytes;
        }
        if let Some(timeout) = self.step_timeout {
            options.step_timeout = timeout;
        }
        Ok(())
    }
}

/// The build variant: `dev`, `release` or a profile's name.
#[derive(Debug, Args)]
pub struct VariantArgs {
    /// The `release` variant.
    #[arg(short, long, conflicts_with = "profile")]
    pub release: bool,
    /// The variant of this profile name.
    #[arg(long, value_name = "PROFILE-NAME")]
    pub profile: Option<String>,
    /// Build for the platform whose `targets` cover this target triple, as
    /// `cargo build --target` does
    #[arg(long, value_name = "TRIPLE", conflicts_with = "platform")]
    pub target: Option<String>,
    /// Build for this platform (declared under [package.metadata.assets.platforms])
    #[arg(long, value_name = "NAME")]
    pub platform: Option<String>,
}

impl VariantArgs {
    /// Sets the variant and the platform of `options`.
    pub fn apply(&self, options: &mut assets_build::unstable::BuildOptions) {
        options.variant = self.name();
        options.target = self.target.clone();
        options.platform = self.platform.clone();
    }

    /// The variant's name.
    pub fn name(&self) -> String {
        match (&self.profile, self.release) {
            (Some(p), _) => p.clone(),
            (None, true) => "release".into(),
            (None, false) => "dev".into(),
        }
    }
}

/// `why`, `deps`, `rdeps`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The asset: its path under the asset root (`sprites/hero.png`), or `atlas:<name>`.
    pub asset: String,
    /// The package.
    #[command(flatten)]
    pub package: PackageArgs,
    /// The variant.
    #[command(flatten)]
    pub variant: VariantArgs,
}

/// `watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The package.
    #[command(flatten)]
    pub package: PackageArgs,
    /// How much of the machine the build uses.
    #[command(flatten)]
    pub jobs: JobsArgs,
    /// The variant to build.
    #[command(flatten)]
    pub variant: VariantArgs,
    /// Serve hot-reload notices on 127.0.0.1:N [default: any free port, printed at start].
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
}

/// `graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Print Graphviz DOT (`cargo assets graph --dot | dot -Tsvg > graph.svg`).
    #[arg(long)]
    pub dot: bool,
    /// The package.
    #[command(flatten)]
    pub package: PackageArgs,
    /// The variant.
    #[command(flatten)]
    pub variant: VariantArgs,
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
    /// Package to work on (a workspace member's name; repeatable).
    #[arg(short, long = "package", value_name = "SPEC", global = true)]
    pub packages: Vec<String>,
    /// Every workspace member with `[package.metadata.assets]`.
    #[arg(long, global = true)]
    pub workspace: bool,
}

/// `cargo assets inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The parcel: its file, or its name in the package's manifest
    /// (`main`), as `cargo assets build` last wrote it.
    pub parcel: PathBuf,
    /// The package, when PARCEL is a name.
    #[command(flatten)]
    pub package: PackageArgs,
    /// The variant, when PARCEL is a name.
    #[command(flatten)]
    pub variant: VariantArgs,
    /// Also draw this atlas's pages, with sprite outlines, as PNG files.
    #[arg(long, value_name = "NAME")]
    pub atlas: Option<String>,
    /// Where `--atlas` writes its pictures [default: beside the parcel].
    #[arg(long, value_name = "DIRECTORY", requires = "atlas")]
    pub out_dir: Option<PathBuf>,
    /// The parcel alone, not seen through the patch `watch` leaves beside
    /// it after an edit (`<name>.parcel.patch`).
    #[arg(long)]
    pub base: bool,
}

/// `cargo assets build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Build only these assets (paths under the asset root, or
    /// `atlas:<name>`) and what they need; no parcel is written.
    #[arg(value_name = "ASSET")]
    pub assets: Vec<String>,
    /// The package.
    #[command(flatten)]
    pub package: PackageArgs,
    /// How much of the machine the build uses.
    #[command(flatten)]
    pub jobs: JobsArgs,
    /// The variant to build.
    #[command(flatten)]
    pub variant: VariantArgs,
    /// Build this fraction of the fresh steps again (0 to 1, chosen by
    /// `--verify-seed`) and fail if their outputs differ from the cache.
    #[arg(long, value_name = "F")]
    pub verify_fraction: Option<f64>,
    /// Which steps `--verify-fraction` chooses.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub verify_seed: u64,
    /// Upload the steps that run to the remote cache (`CARGO_ASSETS_REMOTE`),
    /// as `CARGO_ASSETS_REMOTE_WRITE=1` does.
    #[arg(long)]
    pub remote_write: bool,
    /// Fail the build if a processor warns (also `CARGO_ASSETS_DENY_WARNINGS=1`),
    /// for CI.
    #[arg(long, env = "CARGO_ASSETS_DENY_WARNINGS", value_parser = clap::builder::BoolishValueParser::new())]
    pub deny_warnings: bool,
    /// Also write every resource of the parcels as a file under DIR, kept
    /// in sync (`DIR/<package>/` when building several packages).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<std::path::PathBuf>,
}

impl BuildArgs {
    /// The cache check `--verify-fraction` asks for.
    pub fn verify(&self) -> anyhow::Result<Option<assets_build::unstable::Verify>> {
        match self.verify_fraction {
            None => Ok(None),
            Some(f) if (0.0..=1.0).contains(&f) => Ok(Some(assets_build::unstable::Verify {
                fraction: f,
                seed: self.verify_seed,
            })),
            Some(f) => anyhow::bail!("`--verify-fraction` must be between 0 and 1, not {f}"),
        }
    }
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
