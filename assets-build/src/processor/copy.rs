//! `copy`: the source bytes, unchanged, as a `bytes` output.

use serde::Deserialize;

use super::{Context, ProcessError, Processor};
use crate::manifest::{Settings, SettingsError};

/// `copy` takes no settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CopySettings {}

/// Emits the source file as it is.
#[derive(Debug, Clone, Copy)]
pub struct Copy;

impl Processor for Copy {
    fn path_independent(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "copy"
    }

    fn version(&self) -> u32 {
        1
    }

    fn check_settings(&self, settings: &Settings) -> Result<(), SettingsError> {
        settings.get::<CopySettings>().map(drop)
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        ctx.emit("bytes", bytes)
    }
}
