//! `ktx2`: a KTX2 file made by another tool (toktx, Compressonator, an
//! engine's exporter), checked the way the runtime reads it and kept as it
//! is, as a `texture` resource: `PARCEL.texture(id)` reads it. The default
//! for `.ktx2`; needs no encoder, so it is always built in (the `texture`
//! processor, which makes KTX2 files from images, is the `textures`
//! feature).
//!
//! Zstandard-supercompressed files (`toktx --zcmp`) are textures like the
//! others: the runtime decompresses their levels when asked for them, and
//! this processor decompresses each one once, so that a damaged frame
//! fails the build rather than the game's load.
//!
//! A well-formed KTX2 that the runtime's reader does not take (a float
//! environment map, a cube map, an RGB8 or BasisLZ file, as 18 of the 372
//! files of Bevy's own asset folder are) is kept as it is too,
//! as `bytes`, with a note saying why: an engine's own KTX2 loader (Bevy's,
//! through `bevy_cargo_assets`) reads it from the parcel. A damaged file
//! (a truncated level, a level of the wrong size) fails here, by name and
//! reason, rather than in the game.

use assets_runtime::format::{KIND_BYTES, KIND_TEXTURE};
use assets_runtime::texture::Texture;

use super::{Context, NoSettings, ProcessError, Processor};

/// Emits a checked KTX2 file as a `texture`.
#[derive(Debug, Clone, Copy)]
pub struct Ktx2;

impl Processor for Ktx2 {
    type Settings = NoSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "ktx2"
    }

    fn version(&self) -> u32 {
        // 2: zstd-supercompressed files are textures (they were `bytes`).
        2
    }

    fn process(&self, ctx: &mut Context<'_>, _: NoSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        match Texture::check(&bytes) {
            Ok(texture) => {
                let damaged = texture.is_supercompressed().then(|| {
                    (0..texture.levels).find(|&i| texture.level(i).is_none())
                });
                if let Some(Some(i)) = damaged {
                    let (w, h) = texture.level_size(i);
                    return Err(ProcessError::msg(format!(
                        "cannot be a texture: level {i}'s zstd frame does not decompress to the \
                         {} bytes of a {w}x{h} level (the file is damaged)",
                        texture.format.level_len(w, h)
                    )));
                }
                ctx.emit(KIND_TEXTURE, bytes)
            }
            Err(why) if why.is_unsupported() => {
                ctx.note(format!(
                    "kept as `bytes`, not a `texture`: {why}; `Parcel::texture` does not read it, \
                     an engine's own KTX2 loader (Bevy's, through bevy_cargo_assets) does"
                ));
                ctx.emit(KIND_BYTES, bytes)
            }
            Err(why) => Err(ProcessError::msg(format!("cannot be a texture: {why}"))),
        }
    }
}
