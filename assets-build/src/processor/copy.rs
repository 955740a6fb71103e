//! `copy`: the source bytes, unchanged, as a `bytes` output.

use super::{Context, ProcessError, Processor};

/// Emits the source file as it is.
#[derive(Debug, Clone, Copy)]
pub struct Copy;

impl Processor for Copy {
    fn name(&self) -> &str {
        "copy"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        ctx.emit("bytes", bytes)
    }
}
