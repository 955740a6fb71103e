//! `copy`: the source bytes, unchanged, as a `bytes` output.

use super::{Context, NoSettings, ProcessError, Processor};

/// Emits the source file as it is.
#[derive(Debug, Clone, Copy)]
pub struct Copy;

impl Processor for Copy {
    type Settings = NoSettings;

    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "copy"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>, _: NoSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        ctx.emit("bytes", bytes)
    }
}
