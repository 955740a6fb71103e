//! `command`: run an external tool on the asset (Ampere's `Run()`).
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "levels/*.lvl"
//! processor = "command"
//! command = ["lvlc", "{input}", "-o", "{output}"]
//! kind = "level"            # output kind, default "bytes"
//! extension = "bin"         # of the {output} file name, default "out"
//! version = "2"             # change to rebuild when the tool itself changes
//! ```
//!
//! Placeholders, replaced anywhere inside an argument: `{input}` (the asset's
//! file), `{output}` (where the tool must write), `{asset}` (the asset path),
//! `{tmpdir}` (a private temp directory), `{variant}`. The tool runs in the
//! package directory with no stdin. A non-zero exit, or no file at `{output}`,
//! fails the asset and shows the tool's stderr.
//!
//! The tool's own reads are not seen, so only the asset file is an input.

use std::process::Stdio;

use serde::Deserialize;

use super::{Context, ProcessError, Processor};

/// Runs an external program.
#[derive(Debug, Clone, Copy)]
pub struct Command;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandSettings {
    command: Vec<String>,
    #[serde(default = "default_kind")]
    kind: String,
    #[serde(default)]
    extension: Option<String>,
    /// Only hashed into the step key.
    #[serde(default)]
    #[allow(dead_code)]
    version: Option<toml::Value>,
}

fn default_kind() -> String {
    "bytes".into()
}

impl Processor for Command {
    fn name(&self) -> &str {
        "command"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>) -> Result<(), ProcessError> {
        let settings: CommandSettings = ctx.settings()?;
        let Some(program) = settings.command.first() else {
            return Err(ProcessError::msg(
                "`command` is empty; give the program and its arguments",
            ));
        };
        let input = ctx.source_file()?;
        let asset = ctx.asset().to_string();
        let variant = ctx.variant().to_owned();
        let package_dir = ctx.package_dir().to_owned();
        let tmpdir = ctx.temp_dir()?.to_owned();
        let stem = asset.rsplit('/').next().unwrap_or("output");
        let stem = stem
            .split('.')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("output");
        let output = tmpdir.join(format!(
            "{stem}.{}",
            settings.extension.as_deref().unwrap_or("out")
        ));
        let expand = |arg: &str| {
            arg.replace("{input}", &input.to_string_lossy())
                .replace("{output}", &output.to_string_lossy())
                .replace("{asset}", &asset)
                .replace("{tmpdir}", &tmpdir.to_string_lossy())
                .replace("{variant}", &variant)
        };
        let result = std::process::Command::new(expand(program))
            .args(settings.command[1..].iter().map(|a| expand(a)))
            .current_dir(&package_dir)
            .env("CARGO_ASSETS_VARIANT", &variant)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                ProcessError::msg(format!(
                    "could not run `{program}`: {e}; is it installed and on PATH?"
                ))
            })?;
        let stderr = String::from_utf8_lossy(&result.stderr);
        let stderr = stderr.trim_end();
        let show_stderr = if stderr.is_empty() {
            String::new()
        } else {
            format!("\n--- stderr\n{stderr}")
        };
        if !result.status.success() {
            return Err(ProcessError::msg(format!(
                "`{program}` failed ({}){show_stderr}",
                result.status
            )));
        }
        let bytes = std::fs::read(&output).map_err(|e| {
            ProcessError::msg(format!(
                "`{program}` succeeded but did not write its output `{{output}}` ({e}){show_stderr}"
            ))
        })?;
        ctx.emit(&settings.kind, bytes)
    }
}
