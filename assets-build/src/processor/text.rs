//! `text`: UTF-8 text, normalized, with optional `#include` expansion.
//!
//! Settings (all optional):
//!
//! | key            | default | meaning |
//! |----------------|---------|---------|
//! | `normalize`    | `true`  | CRLF → LF and no BOM, so a Windows checkout builds the same bytes |
//! | `includes`     | `false` | expand lines `#include "path"` (for shaders: WGSL has no includes) |
//! | `include-dirs` | `[]`    | folders (relative to the asset root) searched after the including file's own |
//!
//! An include is resolved against the including file's folder, then each of
//! `include-dirs` in order; the first that exists wins. The included file is a
//! dependency (its own `text` output is used, so it is expanded too), and each
//! place looked at before it is recorded as absent: creating a file there
//! later rebuilds the includer. Includes that loop are a dependency cycle.

use serde::Deserialize;

use super::{Context, ProcessError, Processor};
use crate::asset_path::AssetPath;

/// Emits UTF-8 text.
#[derive(Debug, Clone, Copy)]
pub struct Text;

/// Settings of the `text` processor (its module docs list the keys).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TextSettings {
    #[serde(default = "yes")]
    normalize: bool,
    #[serde(default)]
    includes: bool,
    #[serde(default)]
    include_dirs: Vec<String>,
}

pub(super) fn yes() -> bool {
    true
}

impl Processor for Text {
    type Settings = TextSettings;

    fn name(&self) -> &str {
        "text"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(&self, ctx: &mut Context<'_>, s: TextSettings) -> Result<(), ProcessError> {
        let text = prepare(ctx, s.normalize, s.includes, &s.include_dirs)?;
        ctx.emit("text", text.into_bytes())
    }
}

/// The asset's source as UTF-8, normalized and with its includes expanded
/// as the settings ask: what the `text` and `shader` processors emit.
pub(super) fn prepare(
    ctx: &mut Context<'_>,
    normalize_it: bool,
    includes: bool,
    include_dirs: &[String],
) -> Result<String, ProcessError> {
    let mut text = read_utf8(ctx)?;
    if normalize_it {
        text = normalize(&text);
    }
    if includes {
        text = expand_includes(ctx, &text, include_dirs)?;
    }
    Ok(text)
}

/// The asset's source as UTF-8, or an error naming the first bad byte.
fn read_utf8(ctx: &mut Context<'_>) -> Result<String, ProcessError> {
    String::from_utf8(ctx.source()?).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        ProcessError::msg(format!(
            "not valid UTF-8: invalid byte at offset {at} (line {line}); save the file as UTF-8 or use `processor = \"copy\"`"
        ))
    })
}

/// No BOM, LF line ends: a Windows checkout builds the same bytes.
fn normalize(text: &str) -> String {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n")
}

/// `text` with each `#include "path"` line replaced by that file's text.
fn expand_includes(
    ctx: &mut Context<'_>,
    text: &str,
    dirs: &[String],
) -> Result<String, ProcessError> {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let Some(name) = include_target(line) else {
            out.push_str(line);
            continue;
        };
        let at = |what: String| {
            ProcessError::msg(format!("line {}: `#include \"{name}\"`: {what}", n + 1))
        };
        let mut candidates = vec![ctx.asset().sibling(name).map_err(|e| at(e.to_string()))?];
        for dir in dirs {
            candidates
                .push(AssetPath::new(&format!("{dir}/{name}")).map_err(|e| at(e.to_string()))?);
        }
        let Some(found) = candidates.iter().find(|c| ctx.exists(c)) else {
            let looked: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
            return Err(at(format!("not found (looked for {})", looked.join(", "))));
        };
        let included = ctx.dependency(found.as_str())?;
        let main = included.outputs().iter().find(|o| o.label.is_empty());
        if main.is_none_or(|o| o.kind != "text" && o.kind != "shader") {
            return Err(at(format!("`{found}` is not processed as text")));
        }
        let body = String::from_utf8(included.bytes("")?).map_err(|_| at("not UTF-8".into()))?;
        out.push_str(&body);
        if !body.is_empty() && !body.ends_with('\n') && line.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// `#include "path"` → `path`.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("#include")?.trim();
    rest.strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_removes_bom_and_carriage_returns() {
        assert_eq!(normalize("\u{feff}a\r\nb\r\n"), "a\nb\n");
        assert_eq!(normalize("a\rb"), "a\rb");
    }

    #[test]
    fn include_lines_are_recognized() {
        assert_eq!(
            include_target("#include \"common.wgsl\"\n"),
            Some("common.wgsl")
        );
        assert_eq!(
            include_target("  #include   \"a/b.wgsl\"  "),
            Some("a/b.wgsl")
        );
        assert_eq!(include_target("// #include \"x\""), None);
        assert_eq!(include_target("#include <x>"), None);
    }
}
