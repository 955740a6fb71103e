//! The cargo-assets pipeline: turns a package's source assets into cached,
//! content-addressed outputs, rebuilding only what changed.
//!
//! In a package's `build.rs`: `fn main() { assets_build::build().unwrap() }`
//! (see [`build_script`]); the game then embeds the parcels with
//! `assets_runtime::include_parcel!`.
//!
//! # Where to start reading
//!
//! [`Pipeline::build`] is the whole flow:
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
//! - [`manifest`]: `[package.metadata.assets]`, raw TOML mirror → resolved [`Manifest`].
//! - [`discover`]: finds assets under the roots; rejects paths that escape them.
//! - [`processor`]: the [`Processor`] trait, its [`Context`] (which records every
//!   read), the [`Registry`] and the built-ins.
//! - `scheduler`: parallel workers, dependencies built on demand, cycle detection.
//! - [`freshness`]: the design memo on what is hashed, and the typed [`DirtyReason`].
//! - [`record`], [`record_log`] and [`store`]: what is kept between builds;
//!   [`cache_layout`]: where (every path under the cache, in one place).
//! - [`atlas`]: sprites grouped into atlases, packed into pages by a generated
//!   `atlas:<name>` step.
//! - [`query`]: `why`, `deps`, `rdeps`, the graph, and `gc`, from the records.
//! - [`parcels`]: bundles outputs into parcel files (format: `assets_runtime::format`).
//!
//! # Files on disk
//!
//! Under the cache directory (`target/assets/`, drawn in [`CacheLayout`]):
//! `blobs/` (outputs by blake3 hash, see [`Store`]),
//! `records/<package>/<variant>.jsonl` (every step's [`Record`], one
//! checksummed JSON line each, see [`record_log`]), `parcels/`, `tmp/`, `lock`.
//!
//! # Invariants
//!
//! - This crate never prints: it returns a [`BuildReport`] and emits [`Event`]s.
//!   The exception is [`build_script`], the `build.rs` front-end, whose stdout
//!   is its protocol with Cargo.
//! - Keys and outputs hold no absolute paths and no times; records hold
//!   mtimes only to skip re-hashing.
//! - A record is written after its blobs; nothing is written in place.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod asset_path;
pub mod atlas;
pub mod build_script;
pub mod cache_layout;
pub mod discover;
pub mod event;
pub mod freshness;
pub mod hash;
pub mod manifest;
mod parallel;
pub mod parcels;
mod pipeline;
mod plan;
pub mod processor;
pub mod query;
pub mod record;
pub mod record_log;
pub mod report;
mod scheduler;
pub mod store;

pub use asset_path::AssetPath;
pub use build_script::{BuildScriptError, Builder, build};
pub use cache_layout::CacheLayout;
pub use event::{Event, EventHandler};
pub use freshness::DirtyReason;
pub use hash::ContentHash;
pub use manifest::{Manifest, ManifestError};
pub use parcels::{ParcelOutcome, ParcelReport};
pub use pipeline::{
    BuildError, BuildOptions, CleanStats, Pipeline, clean, clean_package, package_key,
};
pub use processor::{Context, ProcessError, Processor, Registry};
pub use record::Record;
pub use report::{BuildReport, Outcome, StepReport};
pub use store::Store;
