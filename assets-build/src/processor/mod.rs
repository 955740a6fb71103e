//! Processors: the code that turns one source asset into outputs.
//!
//! A [`Processor`] is a name, a version and a `process` function. The protocol
//! of one call, which every processor follows:
//!
//! ```text
//! process(settings) := (read | look | dependency | emit)* → Ok | Err
//! ```
//!
//! - `settings` are the asset's rule's keys as the processor's
//!   [`Processor::Settings`] type, read by the engine (which reports a bad
//!   key at its line in `Cargo.toml` before anything runs).
//! - `ctx.source()`, `ctx.read(path)`, `ctx.try_read(path)` read files; every
//!   read is recorded as an input with its hash, and a file looked for and not
//!   found is recorded as absent, so creating it later reruns the step.
//! - `ctx.dependency(asset)` gets another asset's outputs, building it first if
//!   needed, and records the use.
//! - `ctx.emit(kind, bytes)` / `ctx.emit_labeled(label, kind, bytes)` produce outputs.
//!
//! A processor must be a pure function of what it read through the context and
//! its settings: that is what makes the cache correct. An edit to its code
//! reruns its steps by itself: the registry keys them by a fingerprint of the
//! processor's sources (see `code.rs`). Bump [`Processor::version`] when what
//! it produces changes for a reason that fingerprint cannot see, such as a
//! dependency crate's update.
//!
//! Built-ins: `copy`, `text`, `shader`, `image`, `sprite`,
//! `command`, `ktx2`, `tilemap`, `sheet`, `gltf`, `font`, `aseprite` and `audio`
//! (cargo features `gltf`, `fonts`, `aseprite` and `audio`, in `pipeline`),
//! and `texture` (feature `textures`).

#[cfg(feature = "aseprite")]
pub(crate) mod aseprite;
#[cfg(feature = "audio")]
pub(crate) mod audio;
mod code;
pub(crate) mod command;
pub(crate) mod context;
pub(crate) mod copy;
pub(crate) mod depfile;
#[cfg(feature = "hdr")]
pub(crate) mod exr;
#[cfg(feature = "fonts")]
pub(crate) mod font;
#[cfg(feature = "gltf")]
pub(crate) mod gltf;
pub(crate) mod image;
pub(crate) mod ktx2;
pub(crate) mod shader;
pub(crate) mod sheet;
mod slices;
pub(crate) mod sprite;
pub(crate) mod sprite_source;
pub(crate) mod svg;
pub(crate) mod text;
#[cfg(feature = "textures")]
pub(crate) mod texture;
pub(crate) mod tilemap;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;

pub use context::tools::{TOOL_CLOCK_MARGIN, ToolInputs, Unsettled};
pub use context::{Context, DependencyOutputs};

use crate::asset_path::{AssetPath, AssetPathError};
pub use crate::manifest::SettingsError;
use crate::manifest::{ManifestError, Settings};
use crate::store::StoreError;

/// Turns one asset into outputs. See the [module docs](self) for the protocol.
///
/// ```
/// use assets_build::{Context, ProcessError, Processor};
/// use serde::Deserialize;
///
/// /// The keys a rule may give `upper`; a typo is an error at its line.
/// #[derive(Deserialize)]
/// #[serde(deny_unknown_fields, rename_all = "kebab-case")]
/// struct UpperSettings {
///     #[serde(default)]
///     keep_first_line: bool,
/// }
///
/// struct Upper;
///
/// impl Processor for Upper {
///     type Settings = UpperSettings;
///     fn name(&self) -> &str { "upper" }
///     fn version(&self) -> u32 { 1 }
///     fn process(&self, ctx: &mut Context<'_>, settings: UpperSettings) -> Result<(), ProcessError> {
///         let text = String::from_utf8(ctx.source()?).map_err(ProcessError::other)?;
///         let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
///         let first = if settings.keep_first_line { first.to_owned() } else { first.to_uppercase() };
///         ctx.emit("text", format!("{first}\n{}", rest.to_uppercase()).into_bytes())
///     }
/// }
/// ```
pub trait Processor: Send + Sync + 'static {
    /// The settings a rule gives this processor (its keys besides `match`,
    /// `processor`, `inputs`...), read with serde: deserialized by the
    /// engine before anything runs, once per rule, so a misspelled key or a
    /// bad value is one error at its line in `Cargo.toml`, with the closest
    /// field of this type as a suggestion (use `#[serde(deny_unknown_fields)]`).
    /// [`NoSettings`] for a processor that takes none.
    type Settings: DeserializeOwned;

    /// The name rules use: `processor = "<name>"`.
    fn name(&self) -> &str;
    /// Bump when the outputs for the same inputs change for a reason the
    /// code fingerprint does not see (a dependency's new release, a change
    /// of output format made in another crate): every step that used the
    /// processor then reruns. An edit to the processor's own crate needs no
    /// bump (see the [module docs](self)).
    fn version(&self) -> u32;
    /// Processes `ctx.asset()` with its `settings`.
    fn process(&self, ctx: &mut Context<'_>, settings: Self::Settings) -> Result<(), ProcessError>;

    /// Checks what serde cannot: values that parse but do not go together
    /// (a format and a quality it lacks). Called once per rule and
    /// processor, before anything runs. The default accepts all.
    fn check_settings(&self, settings: &Self::Settings) -> Result<(), SettingsError> {
        let _ = settings;
        Ok(())
    }

    /// Checks a rule's settings against the target triple built for, when
    /// the build has one (a build script always does; `cargo assets` with
    /// `--target`), before anything runs: for settings that target's
    /// platform cannot use, such as a GPU format its GPUs do not all
    /// support. Called once per rule and processor, after
    /// [`check_settings`](Processor::check_settings). The default accepts
    /// any target.
    fn check_target(&self, settings: &Self::Settings, target: &str) -> Result<(), SettingsError> {
        let _ = (settings, target);
        Ok(())
    }

    /// Whether this processor's assets are packed into an atlas: the
    /// planner takes their `atlas` setting (default `"main"`) out of the
    /// settings it passes on, and the atlas step depends on each. Such a
    /// processor emits a [`sprite_source::SpriteSource`] as its main output,
    /// or several as an output labelled [`sprite_source::SPRITES_LABEL`]
    /// beside a main output their frames complete (see [`crate::unstable::atlas`]).
    /// `sprite` and `font` do.
    fn packs_into_atlas(&self) -> bool {
        false
    }

    /// Whether this processor's outputs, with these `settings`, depend on
    /// the platform built for (it reads [`Context::platform`]): such a step
    /// is keyed by platform, and built once per platform. Else only steps
    /// whose settings differ on the platform are, and the others are
    /// built once and shared. `command` says yes when its argv holds
    /// `{platform}`.
    fn platform_dependent(&self, settings: &Self::Settings) -> bool {
        let _ = settings;
        false
    }

    /// Whether this processor's outputs are a function of its source's
    /// bytes and its settings alone: never of the asset's path, nor of any
    /// other file. Then a file renamed (or moved) with the same bytes and
    /// settings takes its old outputs, and no processor runs. `copy`,
    /// `image`, `sprite`, `texture`, `ktx2` and `font` say yes; a
    /// processor that resolves paths relative to its asset (includes,
    /// imports, a model's URIs) or hands its path to a tool must not.
    fn path_independent(&self) -> bool {
        false
    }
}

/// The settings of a processor that takes none: any key is an error. (A
/// processor that takes any keys, to pass them on to a tool, says
/// `type Settings = toml::Table`.)
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// A [`Processor`] with its settings type erased, as the [`Registry`] keeps
/// it and the engine calls it: every method takes the rule's settings as
/// written and reads them as the processor's type. Implemented for every
/// processor; nothing else implements it.
pub(crate) trait ErasedProcessor: Send + Sync + 'static {
    /// [`Processor::name`].
    fn name(&self) -> &str;
    /// [`Processor::version`].
    fn version(&self) -> u32;
    /// Reads the settings, then [`Processor::check_settings`].
    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError>;
    /// Reads the settings, then [`Processor::check_target`].
    fn check_target(&self, settings: &Settings, target: &str) -> Result<(), SettingsError>;
    /// [`Processor::packs_into_atlas`].
    fn packs_into_atlas(&self) -> bool;
    /// [`Processor::platform_dependent`]; `false` for settings that do not read.
    fn platform_dependent(&self, settings: &Settings) -> bool;
    /// [`Processor::path_independent`].
    fn path_independent(&self) -> bool;
    /// Reads the step's settings (an error points at the rule), then
    /// [`Processor::process`].
    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError>;
}

impl<P: Processor> ErasedProcessor for P {
    fn name(&self) -> &str {
        Processor::name(self)
    }

    fn version(&self) -> u32 {
        Processor::version(self)
    }

    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError> {
        Processor::check_settings(self, &settings.get::<P::Settings>()?)
    }

    fn check_target(&self, settings: &Settings, target: &str) -> Result<(), SettingsError> {
        Processor::check_target(self, &settings.get::<P::Settings>()?, target)
    }

    fn packs_into_atlas(&self) -> bool {
        Processor::packs_into_atlas(self)
    }

    fn platform_dependent(&self, settings: &Settings) -> bool {
        (settings.get::<P::Settings>()).is_ok_and(|s| Processor::platform_dependent(self, &s))
    }

    fn path_independent(&self) -> bool {
        Processor::path_independent(self)
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let settings = ctx.settings::<P::Settings>()?;
        Processor::process(self, ctx, settings)
    }
}

/// What a caught panic said: the scheduler's, around every processor, and
/// a processor's own around a crate that panics on bad input.
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Processors by name.
#[derive(Clone, Default)]
pub struct Registry {
    processors: BTreeMap<String, Registered>,
    /// Extensions (lowercase) claimed by a processor, by its name.
    extensions: BTreeMap<String, String>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Registry {
        Registry::default()
    }

    /// The built-in processors: `copy`, `text`, `shader`, `image`, `sprite`,
    /// `command`, `ktx2`, `tilemap`, `sheet`, `gltf`, `font`, `aseprite` and `audio`
    /// (with the cargo features `gltf`, `fonts`, `aseprite` and `audio`, in
    /// `pipeline`), and `texture` (feature `textures`).
    pub fn with_builtins() -> Registry {
        let mut r = Registry::empty();
        r.builtin(copy::Copy);
        r.builtin(text::Text);
        r.builtin(shader::Shader);
        r.builtin(image::Image);
        r.builtin(sprite::Sprite);
        r.builtin(command::Command);
        r.builtin(ktx2::Ktx2);
        r.builtin(tilemap::Tilemap);
        r.builtin(sheet::Sheet);
        #[cfg(feature = "gltf")]
        r.builtin(gltf::Gltf);
        #[cfg(feature = "fonts")]
        r.builtin(font::Font);
        #[cfg(feature = "aseprite")]
        r.builtin(aseprite::Aseprite);
        #[cfg(feature = "audio")]
        r.builtin(audio::Audio);
        #[cfg(feature = "textures")]
        r.builtin(texture::Texture);
        r
    }

    fn builtin(&mut self, processor: impl Processor) {
        let code = code::builtin(Processor::name(&processor));
        self.insert(processor, code);
    }

    /// Adds `processor`, replacing one of the same name. Its steps are
    /// keyed by a fingerprint of the source code of the crate that calls
    /// this (see the [module docs](self)), so editing that code reruns
    /// them; call it from the crate that defines the processor.
    #[track_caller]
    pub fn register(&mut self, processor: impl Processor) -> &mut Registry {
        let code = code::of_caller(std::panic::Location::caller());
        self.insert(processor, code)
    }

    fn insert(&mut self, processor: impl Processor, code: Option<u64>) -> &mut Registry {
        let name = Processor::name(&processor).to_owned();
        let processor = Arc::new(processor);
        (self.processors).insert(name, Registered { processor, code });
        self
    }

    /// Makes `processor` (a name) the default for files with these
    /// `extensions` (without the dot; any case), over the built-in
    /// defaults: a processor crate's `register` function says which files
    /// are its own, so a game's manifest needs no rule for them. A rule or
    /// an override that names a processor still wins.
    pub fn claim_extensions(&mut self, processor: &str, extensions: &[&str]) -> &mut Registry {
        for ext in extensions {
            (self.extensions).insert(ext.to_ascii_lowercase(), processor.to_owned());
        }
        self
    }

    /// The processor that claimed `extension`, if one did.
    pub(crate) fn claimed(&self, extension: Option<&str>) -> Option<&str> {
        let ext = extension?.to_ascii_lowercase();
        self.extensions.get(&ext).map(String::as_str)
    }

    /// The processor named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn ErasedProcessor>> {
        self.processors.get(name).map(|r| &r.processor)
    }

    /// The fingerprint of the code of the processor named `name`, when it
    /// is known (see the [module docs](self)).
    pub(crate) fn code(&self, name: &str) -> Option<u64> {
        self.processors.get(name).and_then(|r| r.code)
    }

    /// Every registered name, sorted.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.processors.keys().map(String::as_str)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// The code fingerprint of the built-in `name` (`"atlas"` for the atlas
/// step).
pub(crate) fn builtin_code(name: &str) -> Option<u64> {
    code::builtin(name)
}

/// A processor and the fingerprint of its code.
#[derive(Clone)]
struct Registered {
    processor: Arc<dyn ErasedProcessor>,
    code: Option<u64>,
}

/// Why processing an asset failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// An input could not be read.
    #[error("could not read `{path}`: {source}")]
    Read {
        /// Package-relative path.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A required input does not exist.
    #[error("`{path}` does not exist")]
    NotFound {
        /// Package-relative path.
        path: String,
    },
    /// A path asked for is not a valid asset path.
    #[error("invalid path: {0}")]
    BadPath(#[from] AssetPathError),
    /// A path resolves, through a symbolic link, outside the asset root.
    #[error("`{path}` leads outside the asset root")]
    EscapesRoot {
        /// Package-relative path.
        path: String,
    },
    /// The asset's settings do not fit the processor.
    #[error("{error}")]
    Settings {
        /// The processor.
        processor: String,
        /// Where and what, in `Cargo.toml`.
        error: Box<ManifestError>,
    },
    /// A dependency asked for by name is not an asset of this build.
    #[error("no asset named `{asset}`")]
    NoSuchAsset {
        /// The name asked for.
        asset: AssetPath,
    },
    /// A dependency failed, so this asset cannot be built.
    #[error("dependency `{asset}` failed")]
    DependencyFailed {
        /// The failed dependency.
        asset: AssetPath,
    },
    /// Assets depend on each other in a loop.
    #[error("dependency cycle: {}", DisplayCycle(.cycle))]
    Cycle {
        /// The loop, first asset repeated at the end: `a -> b -> a`.
        cycle: Vec<AssetPath>,
    },
    /// A processor emitted two outputs with one label.
    #[error("output `{label}` emitted twice")]
    DuplicateOutput {
        /// The label.
        label: String,
    },
    /// Another asset's output was found corrupt while this step read it
    /// (and was removed). The scheduler rebuilds that asset and runs this
    /// step again, so the build heals itself; a processor should pass this
    /// error on with `?` rather than wrap it.
    #[error("an output of `{asset}` was corrupt: {source}")]
    CorruptDependency {
        /// The asset whose output was corrupt.
        asset: AssetPath,
        /// What the store found.
        #[source]
        source: StoreError,
    },
    /// The cache failed while storing or reading outputs.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The processor's own reason (a decoder error, a tool's exit status...),
    /// kept whole: shown as itself, with its own sources.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl ProcessError {
    /// A failure with a plain message.
    pub fn msg(message: impl fmt::Display) -> ProcessError {
        ProcessError::Failed(message.to_string().into())
    }

    /// A failure caused by another error.
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> ProcessError {
        ProcessError::Failed(Box::new(error))
    }
}

struct DisplayCycle<'a>(&'a [AssetPath]);

impl fmt::Display for DisplayCycle<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "`{a}`")?;
        }
        Ok(())
    }
}
