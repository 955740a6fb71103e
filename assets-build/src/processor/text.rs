//! `text`: the source as a `text` output, checked to be UTF-8.

use super::{Context, ProcessError, Processor};

/// Emits the source file after checking that it is valid UTF-8.
#[derive(Debug, Clone, Copy)]
pub struct Text;

impl Processor for Text {
    fn name(&self) -> &str {
        "text"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        if let Err(e) = std::str::from_utf8(&bytes) {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(ProcessError::msg(format!(
                "not valid UTF-8: invalid byte at offset {at} (line {line}); save the file as UTF-8 or use `processor = \"copy\"`"
            )));
        }
        ctx.emit("text", bytes)
    }
}
