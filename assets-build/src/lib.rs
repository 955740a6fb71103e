//! The cargo-assets pipeline: turns a package's source assets into cached,
//! content-addressed outputs, rebuilding only what changed.
//!
//! In a package's `build.rs`: `fn main() { assets_build::build().unwrap() }`
//! (see [`build_script`]); the game then embeds the parcels with
//! `assets_runtime::include_parcel!`.
//!
//! # What is stable
//!
//! Two kinds of users depend on this crate, and what they use is all that
//! semver covers:
//!
//! - a `build.rs`: [`build`], [`Builder`], [`BuildScriptError`] and the
//!   environment variables in [`build_script`];
//! - a processor crate: [`Processor`] with its settings type ([`NoSettings`],
//!   [`processor::SettingsError`]), [`Context`], [`ProcessError`],
//!   [`Registry`], [`AssetPath`], the diagnostics ([`Location`],
//!   [`Diagnostic`], [`Severity`]), the rest of [`processor`]
//!   (dependencies' outputs, an external tool's inputs) and the [`testing`]
//!   kit.
//!
//! Everything else is in [`unstable`]: what cargo-assets' own front-ends
//! (the CLI, the benchmarks, the Bevy adapter) drive, free to change in any
//! release.
//!
//! # Where to start reading
//!
//! [`Pipeline::build`](unstable::Pipeline::build) is the whole flow:
//!
//! ```text
//! Cargo.toml ──manifest──▶ Manifest ──discover──▶ [Discovered] ──plan──▶ steps
//!      steps ──scheduler──▶ per step: freshness::check(record) ─fresh─▶ reuse
//!                                                       └─stale─▶ Processor::process(Context)
//!                                                                   └▶ Store::put(outputs), write Record
//!      ──parcels──▶ <cache>/parcels/<package>/<variant>/<name>.parcel, or OUT_DIR/assets/ (rewritten only when changed)
//!      ──▶ BuildReport (+ Events while running)
//! ```
//!
//! Public modules are what front-ends and processors use; the others are
//! internal (`pub(crate)`, shown by `cargo doc --document-private-items`),
//! and their module docs hold the design memos.
//!
//! - [`manifest`](unstable::manifest): `[package.metadata.assets]`, raw TOML mirror → resolved [`Manifest`](unstable::Manifest).
//! - `discover`: finds assets under the roots; rejects paths that escape them.
//! - [`processor`]: the [`Processor`] trait, its [`Context`] (which records every
//!   read), the [`Registry`] and the built-ins.
//! - `plan`, `scheduler`: steps from assets; parallel workers, dependencies
//!   built on demand, cycle detection.
//! - `freshness`: the design memo on what is hashed, and the check that
//!   names a typed [`DirtyReason`](unstable::DirtyReason) (kept in the step's [`Record`](unstable::Record)).
//! - [`record`](unstable::record), `record_log` and `store`: what is kept between builds;
//!   `cache_layout`: where (every path under the cache, in one place).
//! - [`atlas`](unstable::atlas): sprites grouped into atlases, packed into pages by a generated
//!   `atlas:<name>` step.
//! - [`query`](unstable::query): `why`, `deps`, `rdeps` and the graph, from the records; it
//!   changes nothing.
//! - [`remote`](unstable::remote): the remote cache shared by a team and CI (OpenDAL, behind
//!   the `remote` feature), asked when the local cache cannot serve a step.
//! - `cache`: the cache's lock, and [`clean`](unstable::clean), [`clean_package`](unstable::clean_package), [`gc`](unstable::gc).
//! - `parcels`: bundles outputs into parcel files (format: `assets_runtime::format`),
//!   or, for `watch`, into patches over them (`parcels/patch.rs`);
//!   `parcel_sums`: the `.sums` beside each, what its resources hold.
//! - [`report`](unstable::report), [`event`](unstable::event): what a build did, returned and as it happens.
//! - [`testing`]: a processor's `process` run in a unit test, its inputs
//!   given as bytes, what it read, missed, used and emitted returned.
//! - [`out_dir`](unstable::out_dir): every resource of the parcels as a file under a folder,
//!   kept in sync (`cargo assets build --out-dir`).
//!
//! The module graph has no cycle (checked by `cargo test -p
//! assets-test-support --test module_graph`): a type two modules share lives
//! in the lower one. At the bottom, importing nothing from the crate:
//! `asset_path`, `hash`, `parallel`.
//!
//! # Files on disk
//!
//! Under the cache directory (`target/assets/`, drawn in [`CacheLayout`](unstable::CacheLayout)):
//! `packs/` and `blobs/` (outputs by blake3 hash, small ones appended to
//! pack files, see [`Store`](unstable::Store); an output a parcel holds whole is only there),
//! `records/<package>/<variant>.records` (every step's [`Record`](unstable::Record), one
//! checksummed binary frame each), `parcels/`, `tmp/`, `lock`.
//!
//! # Invariants
//!
//! - This crate never prints: it returns a [`BuildReport`](unstable::BuildReport) and emits [`Event`](unstable::Event)s.
//!   The exception is [`build_script`], the `build.rs` front-end, whose stdout
//!   is its protocol with Cargo.
//! - Keys and outputs hold no absolute paths and no times; records hold
//!   mtimes only to skip re-hashing.
//! - A record is written after its blobs (or after they are kept in memory
//!   for a parcel: a kill before it lands makes the step run again);
//!   nothing is written in place.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The pipeline's items: compiled only with the `in-process` feature (in
/// `pipeline`). Without it the crate is [`build_script`] alone, a client of
/// the installed `cargo-assets` (see "Where the pipeline runs" there).
macro_rules! in_process {
    ($($item:item)*) => { $( #[cfg(feature = "in-process")] $item )* };
}

pub mod build_script;
pub use build_script::{BuildScriptError, Builder, build};

in_process! {
    pub mod asset_path;
    pub(crate) mod atlas;
    mod buffers;
    mod cache;
    pub(crate) mod cache_layout;
    pub(crate) mod discover;
    pub(crate) mod event;
    pub(crate) mod freshness;
    pub(crate) mod hash;
    pub(crate) mod manifest;
    mod memory_budget;
    pub(crate) mod out_dir;
    mod parallel;
    pub(crate) mod parcel_sums;
    pub(crate) mod parcels;
    mod pipeline;
    mod plan;
    pub mod processor;
    pub(crate) mod query;
    pub(crate) mod record;
    mod record_codec;
    pub(crate) mod record_log;
    pub(crate) mod remote;
    pub(crate) mod report;
    mod scheduler;
    mod stat_cache;
    pub(crate) mod store;
    pub mod testing;
    pub mod unstable;
    mod verdicts;
    pub(crate) mod verify;
    pub(crate) mod warm;
    pub(crate) mod watch;

    pub use asset_path::AssetPath;
    pub use processor::{Context, NoSettings, ProcessError, Processor, Registry};
    pub use record::{Diagnostic, Location, Severity};
}

#[cfg(all(fuzzing, feature = "in-process"))]
#[doc(hidden)]
pub mod fuzzing;
