//! What cargo-assets' own front-ends use (the `cargo assets` command, the
//! benchmarks, the Bevy adapter): the pipeline a front-end drives, its
//! reports and events, the cache, the queries, the built-in processors.
//!
//! **No stability promise**: anything here may change in any release,
//! without a major version. A `build.rs` needs only [`crate::build`] or
//! [`crate::Builder`]; a processor crate only the crate's root items, the
//! [`crate::processor`] module and [`crate::testing`] (the list is in
//! `ARCHITECTURE.md`). Ask for what you need from here to be made stable.

pub use crate::cache::{CleanStats, GcStats, clean, clean_package, gc};
pub use crate::cache_layout::{CacheLayout, variant_slot};
pub use crate::event::{Event, EventHandler};
pub use crate::hash::ContentHash;
pub use crate::manifest::{DEFAULT_STEP_TIMEOUT, Manifest, ManifestError, parse_step_timeout};
pub use crate::memory_budget::{DEFAULT_MEMORY_BUDGET, parse_size};
pub use crate::pipeline::{BuildError, BuildOptions, Pipeline, package_key};
pub use crate::record::{DirtyReason, Record};
pub use crate::record_log::read_records;
pub use crate::remote::{RemoteConfig, RemoteStats};
pub use crate::report::{
    BuildReport, OnFailure, Outcome, ParcelOutcome, ParcelReport, StandIn, StepReport,
};
pub use crate::store::{Store, StoreError};
pub use crate::verify::{Verification, Verify};
pub use crate::warm::Changes;

/// Sprites grouped into atlases and packed into pages (the `atlas:<name>`
/// step).
pub mod atlas {
    pub use crate::atlas::*;
}

/// What a build reports while it runs.
pub mod event {
    pub use crate::event::*;
}

/// `[package.metadata.assets]`: the raw TOML mirror and the resolved
/// manifest.
pub mod manifest {
    pub use crate::manifest::*;
}

/// Every resource of the parcels as a file under a folder.
pub mod out_dir {
    pub use crate::out_dir::*;
}

/// `why`, `deps`, `rdeps` and the graph, from the records.
pub mod query {
    pub use crate::query::*;
}

/// What one step read, used and wrote, kept between builds.
pub mod record {
    pub use crate::record::*;
}

/// The remote cache shared by a team and CI.
pub mod remote {
    pub use crate::remote::*;
}

/// What a build did.
pub mod report {
    pub use crate::report::*;
}

/// `cargo assets verify`: steps run again and compared with the cache.
pub mod verify {
    pub use crate::verify::*;
}

/// What a long-lived pipeline is told changed.
pub mod warm {
    pub use crate::warm::*;
}

/// When a watching front-end builds: the watch policy's state machine.
pub mod watch {
    pub use crate::watch::*;
}

/// How the built-in processors decode source images (PNG, JPEG, WebP, BMP,
/// TGA, SVG with the `svg` feature and EXR with `hdr`), for benchmarks.
pub mod images {
    pub use crate::processor::image::decode_rgba8;
}

/// The built-in processors, as `Registry::with_builtins` registers them,
/// for tests and benchmarks that run one directly.
pub mod builtins {
    #[cfg(feature = "aseprite")]
    pub use crate::processor::aseprite::Aseprite;
    #[cfg(feature = "audio")]
    pub use crate::processor::audio::Audio;
    pub use crate::processor::command::Command;
    pub use crate::processor::copy::Copy;
    #[cfg(feature = "fonts")]
    pub use crate::processor::font::Font;
    #[cfg(feature = "gltf")]
    pub use crate::processor::gltf::Gltf;
    pub use crate::processor::image::Image;
    pub use crate::processor::ktx2::Ktx2;
    pub use crate::processor::shader::Shader;
    pub use crate::processor::sheet::Sheet;
    pub use crate::processor::sprite::Sprite;
    pub use crate::processor::text::Text;
    #[cfg(feature = "textures")]
    pub use crate::processor::texture::Texture;
    pub use crate::processor::tilemap::Tilemap;

    /// The `texture` processor's encoder and mip chain, for the benchmarks.
    #[cfg(feature = "textures")]
    pub mod texture {
        pub use crate::processor::texture::Quality;
        pub use crate::processor::texture::encode::{encode, encode_with};
        pub use crate::processor::texture::mips::{Level, Texels, chain};
    }
}
