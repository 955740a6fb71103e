//! `ktx2`: a KTX2 file made by another tool (toktx, Compressonator, an
//! engine's exporter), checked the way the runtime reads it and kept as it
//! is, as a `texture` resource: `PARCEL.texture(id)` reads it, and a file
//! the runtime could not read fails here, by name and reason, rather than
//! in the game. The default for `.ktx2`; needs no encoder, so it is always
//! built in (the `texture` processor, which makes KTX2 files from images,
//! is the `textures` feature).

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
        1
    }

    fn process(&self, ctx: &mut Context<'_>, _: NoSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        assets_runtime::texture::Texture::check(&bytes)
            .map_err(|why| ProcessError::msg(format!("cannot be a texture: {why}")))?;
        ctx.emit(assets_runtime::format::KIND_TEXTURE, bytes)
    }
}
