//! `command`: run an external tool on the asset (Ampere's `Run()`).
//!
//! ```toml
//! [[package.metadata.assets.rules]]
//! match = "levels/*.lvl"
//! processor = "command"
//! command = ["lvlc", "{input}", "-o", "{output}", "--deps", "{depfile}"]
//! kind = "level"            # output kind, default "bytes"
//! extension = "bin"         # of the {output} file name, default "out"
//! version = "2"             # change to rebuild when the tool itself changes
//! inputs = ["tiles/*.png"]  # assets the tool reads that it does not list (any processor)
//! ```
//!
//! Placeholders, replaced anywhere inside an argument:
//!
//! | placeholder     | replaced by |
//! |-----------------|-------------|
//! | `{input}`       | the asset's file |
//! | `{output}`      | where the tool writes its one output |
//! | `{output:NAME}` | where it writes output `NAME`, one of `outputs` |
//! | `{depfile}`     | where it may write a Makefile-style depfile (see [`super::depfile`]) |
//! | `{asset}`       | the asset path |
//! | `{tmpdir}`      | a private, empty directory |
//! | `{variant}`     | the build variant |
//! | `{platform}`    | the platform built for (a name under `[package.metadata.assets.platforms]`), empty when the target is none of them |
//!
//! A command holding `{platform}` is built once per platform (its step is
//! keyed by platform); any other is built once and shared by every platform,
//! since the pipeline cannot see what else a tool reads to tell platforms
//! apart.
//!
//! The tool runs in the package directory with no stdin and no shell. A
//! non-zero exit, or a missing output, fails the asset and shows the tool's
//! stderr.
//!
//! # What the tool read
//!
//! The asset's file is always an input. The tool's own reads are invisible
//! to the pipeline, so a tool that reads more must say what: through
//! `{depfile}` (every prerequisite inside the package becomes an input, as
//! ninja does with `deps = gcc`; files outside it, like system headers, are
//! not tracked, and `version` is how to say the tool changed), or through the
//! rule's `inputs` globs for tools that write no depfile. Either way, editing
//! such a file reruns the step, and a listed file that does not exist yet
//! reruns it when created.
//!
//! # Several outputs
//!
//! `outputs = ["atlas.png", "atlas.json"]` declares named outputs; the tool
//! writes each to `{output:atlas.png}` and so on, and each becomes a
//! resource `<asset>#<name>`. `kind` may then be a table giving each output
//! its kind (`kind = { "atlas.json" = "text" }`, the rest `bytes`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{Context, ProcessError, Processor, TOOL_CLOCK_MARGIN, ToolInputs, Unsettled, depfile};

/// Runs an external program.
#[derive(Debug, Clone, Copy)]
pub struct Command;

/// Settings of the `command` processor (its module docs list the keys).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSettings {
    command: Vec<String>,
    #[serde(default)]
    kind: Kinds,
    #[serde(default)]
    extension: Option<String>,
    #[serde(default)]
    outputs: Vec<String>,
    /// Only hashed into the step key.
    #[serde(default)]
    #[allow(dead_code)]
    version: Option<toml::Value>,
}

/// `kind = "level"` for every output, or a kind per output name.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Kinds {
    All(String),
    PerOutput(BTreeMap<String, String>),
}

impl Default for Kinds {
    fn default() -> Kinds {
        Kinds::All("bytes".into())
    }
}

impl Kinds {
    fn of(&self, output: &str) -> &str {
        match self {
            Kinds::All(kind) => kind,
            Kinds::PerOutput(kinds) => kinds.get(output).map_or("bytes", String::as_str),
        }
    }
}

/// Where the tool writes: one unnamed output, or the named ones.
struct Outputs {
    /// Label (empty for the single output) and file.
    files: Vec<(String, PathBuf)>,
}

impl Outputs {
    fn plan(
        settings: &CommandSettings,
        asset: &str,
        tmpdir: &Path,
    ) -> Result<Outputs, ProcessError> {
        if settings.outputs.is_empty() {
            if let Kinds::PerOutput(_) = settings.kind {
                return Err(ProcessError::msg(
                    "`kind` is a table of kinds per output, but there is no `outputs` list; \
                     give `kind = \"...\"`, or name the outputs with `outputs = [...]`",
                ));
            }
            let file = asset.rsplit('/').next().unwrap_or("output");
            let stem = file
                .split('.')
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or("output");
            let extension = settings.extension.as_deref().unwrap_or("out");
            let path = tmpdir.join(format!("{stem}.{extension}"));
            return Ok(Outputs {
                files: vec![(String::new(), path)],
            });
        }
        let dir = tmpdir.join("out");
        std::fs::create_dir_all(&dir).map_err(|source| ProcessError::Read {
            path: dir.display().to_string(),
            source,
        })?;
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        for name in &settings.outputs {
            let plain = !name.is_empty()
                && !name.starts_with('.')
                && !name.contains(['/', '\\', '#', '{', '}', ':']);
            if !plain {
                return Err(ProcessError::msg(format!(
                    "output name `{name}` must be a plain file name (no `/`, `\\`, `#`, `:`, braces, or leading `.`)"
                )));
            }
            if files.iter().any(|(n, _)| n == name) {
                return Err(ProcessError::msg(format!(
                    "output `{name}` is listed twice in `outputs`"
                )));
            }
            files.push((name.clone(), dir.join(name)));
        }
        if let Kinds::PerOutput(kinds) = &settings.kind
            && let Some(unknown) = kinds.keys().find(|k| !settings.outputs.contains(k))
        {
            return Err(ProcessError::msg(format!(
                "`kind` names output `{unknown}`, which is not in `outputs` ({})",
                settings.outputs.join(", ")
            )));
        }
        Ok(Outputs { files })
    }

    /// `{output}` or `{output:NAME}`'s file, or an error naming the choices.
    fn file(&self, name: Option<&str>) -> Result<&Path, ProcessError> {
        let names = || {
            self.files
                .iter()
                .map(|(n, _)| format!("{{output:{n}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (name, self.files.as_slice()) {
            (None, [(label, path)]) if label.is_empty() => Ok(path),
            (None, _) => Err(ProcessError::msg(format!(
                "`{{output}}` is ambiguous with several `outputs`; use {}",
                names()
            ))),
            (Some(n), files) => files
                .iter()
                .find(|(label, _)| label == n)
                .map(|(_, path)| path.as_path())
                .ok_or_else(|| {
                    let known = if files.iter().any(|(l, _)| !l.is_empty()) {
                        format!("the outputs are {}", names())
                    } else {
                        "declare it with `outputs = [...]`".to_owned()
                    };
                    ProcessError::msg(format!("`{{output:{n}}}` is not an output; {known}"))
                }),
        }
    }
}

/// The values placeholders stand for.
struct Placeholders<'a> {
    input: String,
    asset: &'a str,
    tmpdir: String,
    variant: &'a str,
    platform: &'a str,
    depfile: String,
    outputs: &'a Outputs,
}

impl Placeholders<'_> {
    /// `arg` with every placeholder replaced; unknown `{...}` are left as written.
    fn expand(&self, arg: &str, used_depfile: &mut bool) -> Result<String, ProcessError> {
        let mut out = String::with_capacity(arg.len());
        let mut rest = arg;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                out.push_str(&rest[open..]);
                return Ok(out);
            };
            let name = &after[..close];
            let value = match name {
                "input" => self.input.clone(),
                "asset" => self.asset.to_owned(),
                "tmpdir" => self.tmpdir.clone(),
                "variant" => self.variant.to_owned(),
                "platform" => self.platform.to_owned(),
                "depfile" => {
                    *used_depfile = true;
                    self.depfile.clone()
                }
                "output" => self.outputs.file(None)?.to_string_lossy().into_owned(),
                _ => match name.strip_prefix("output:") {
                    Some(n) => self.outputs.file(Some(n))?.to_string_lossy().into_owned(),
                    None => format!("{{{name}}}"),
                },
            };
            out.push_str(&value);
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl Processor for Command {
    type Settings = CommandSettings;

    fn name(&self) -> &str {
        "command"
    }

    fn version(&self) -> u32 {
        2
    }

    fn platform_dependent(&self, settings: &CommandSettings) -> bool {
        settings
            .command
            .iter()
            .any(|arg| arg.contains("{platform}"))
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        settings: CommandSettings,
    ) -> Result<(), ProcessError> {
        let Some(program) = settings.command.first() else {
            return Err(ProcessError::msg(
                "`command` is empty; give the program and its arguments",
            ));
        };
        let input = ctx.source_file()?;
        let asset = ctx.asset().to_string();
        let variant = ctx.variant().to_owned();
        let platform = ctx.platform().unwrap_or_default().to_owned();
        let package_dir = ctx.package_dir().to_owned();
        let tmpdir = ctx.temp_dir()?.to_owned();
        let outputs = Outputs::plan(&settings, &asset, &tmpdir)?;
        let depfile = tmpdir.join("deps.d");
        let placeholders = Placeholders {
            input: input.to_string_lossy().into_owned(),
            asset: &asset,
            tmpdir: tmpdir.to_string_lossy().into_owned(),
            variant: &variant,
            platform: &platform,
            depfile: depfile.to_string_lossy().into_owned(),
            outputs: &outputs,
        };
        let mut used_depfile = false;
        let args = settings
            .command
            .iter()
            .map(|a| placeholders.expand(a, &mut used_depfile))
            .collect::<Result<Vec<_>, _>>()?;
        // A file the tool listed that changed while it ran leaves what it
        // read unknown: run it again once the file has settled (a few
        // times at most; then the next build reruns the step).
        let mut attempt = 1;
        let stderr = loop {
            let tool_started = std::time::SystemTime::now();
            let stderr = run_tool(program, &args, &package_dir, &variant, ctx.deadline())?;
            let show_stderr = shown(&stderr);
            if !used_depfile {
                break stderr;
            }
            let text = std::fs::read_to_string(&depfile).map_err(|e| {
                ProcessError::msg(format!(
                    "`{program}` was given `{{depfile}}` but wrote no depfile there ({e}); \
                     without it the files it read are unknown{show_stderr}"
                ))
            })?;
            let listed = depfile::prerequisites(&text);
            let paths: Vec<&Path> = listed.iter().map(Path::new).collect();
            let last = attempt == MAX_TOOL_RUNS;
            let unsettled = if last {
                Unsettled::Record
            } else {
                Unsettled::Report
            };
            match ctx.record_tool_inputs(&paths, tool_started, unsettled)? {
                ToolInputs::Recorded => break stderr,
                ToolInputs::Unsettled(_) => {
                    std::thread::sleep(TOOL_CLOCK_MARGIN);
                    attempt += 1;
                }
            }
        };
        let show_stderr = shown(&stderr);
        for (label, file) in &outputs.files {
            let bytes = std::fs::read(file).map_err(|e| {
                let placeholder = if label.is_empty() {
                    "{output}".to_owned()
                } else {
                    format!("{{output:{label}}}")
                };
                ProcessError::msg(format!(
                    "`{program}` succeeded but did not write its output `{placeholder}` ({e}){show_stderr}"
                ))
            })?;
            ctx.emit_labeled(label, settings.kind.of(label), bytes)?;
        }
        // What a tool that succeeded said is for the user: a warning,
        // verbatim, kept with the step and said again when it is reused.
        if !stderr.is_empty() {
            ctx.warn(stderr);
        }
        Ok(())
    }
}

/// A tool's stderr, ready to append to an error message.
fn shown(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("\n--- stderr\n{stderr}")
    }
}

/// How many times a tool runs when files it read keep changing under it.
const MAX_TOOL_RUNS: u32 = 3;

/// Runs the tool; its stderr (trailing white space trimmed), on success.
/// A tool still running at `deadline` (the step's `timeout`) is killed,
/// with what it started (it runs in a process group of its own on Unix),
/// and the step fails saying so.
fn run_tool(
    program: &str,
    args: &[String],
    package_dir: &Path,
    variant: &str,
    deadline: Instant,
) -> Result<String, ProcessError> {
    let mut command = std::process::Command::new(&args[0]);
    command
        .args(&args[1..])
        .current_dir(package_dir)
        .env("CARGO_ASSETS_VARIANT", variant)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| {
        ProcessError::msg(format!(
            "could not run `{program}`: {e}; is it installed and on PATH?"
        ))
    })?;
    // Read on a thread of its own, so a tool that fills the pipe is not
    // blocked while this one waits for it to exit.
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let (sent, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
        let _ = sent.send(bytes);
    });
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                stop(&mut child);
                let stderr = said
                    .recv_timeout(Duration::from_millis(200))
                    .unwrap_or_default();
                let stderr = String::from_utf8_lossy(&stderr);
                return Err(ProcessError::msg(format!(
                    "`{program}` was still running at the step's deadline and was stopped (raise `timeout = SECONDS` on its rule if it needs longer){}",
                    shown(stderr.trim_end())
                )));
            }
            Ok(None) => {
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => {
                return Err(ProcessError::msg(format!(
                    "could not wait for `{program}`: {e}"
                )));
            }
        }
    };
    // The tool has exited; what it started may still hold the pipe open.
    let stderr = said
        .recv_timeout(Duration::from_secs(1))
        .unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr);
    let stderr = stderr.trim_end();
    if !status.success() {
        return Err(ProcessError::msg(format!(
            "`{program}` failed ({status}){}",
            shown(stderr)
        )));
    }
    Ok(stderr.to_owned())
}

/// Kills a tool and, on Unix, the process group it leads (what it
/// started: a shell's children); best effort.
fn stop(child: &mut std::process::Child) {
    #[cfg(unix)]
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(names: &[&str]) -> Outputs {
        Outputs {
            files: names
                .iter()
                .map(|n| (n.to_string(), PathBuf::from(format!("/t/{n}"))))
                .collect(),
        }
    }

    fn expand(arg: &str, outputs: &Outputs) -> Result<String, String> {
        let p = Placeholders {
            input: "/p/assets/a.lvl".into(),
            asset: "a.lvl",
            tmpdir: "/t".into(),
            variant: "dev",
            platform: "web",
            depfile: "/t/deps.d".into(),
            outputs,
        };
        p.expand(arg, &mut false).map_err(|e| e.to_string())
    }

    #[test]
    fn placeholders_are_replaced_once_and_unknown_braces_kept() {
        let single = outputs(&[""]);
        assert_eq!(
            expand("-o={output} {input}{variant} {x} {", &single).unwrap(),
            "-o=/t/ /p/assets/a.lvldev {x} {"
        );
        assert_eq!(expand("--for={platform}", &single).unwrap(), "--for=web");
        assert_eq!(expand("{depfile}", &single).unwrap(), "/t/deps.d");
        // A file name holding a placeholder is not expanded again.
        let odd = Placeholders {
            input: "/p/{output}.lvl".into(),
            ..Placeholders {
                input: String::new(),
                asset: "a",
                tmpdir: "/t".into(),
                variant: "dev",
                platform: "",
                depfile: "/t/d".into(),
                outputs: &single,
            }
        };
        assert_eq!(
            odd.expand("{input}", &mut false).unwrap(),
            "/p/{output}.lvl"
        );
    }

    #[test]
    fn named_outputs_are_chosen_by_name() {
        let two = outputs(&["atlas.png", "atlas.json"]);
        assert_eq!(
            expand("{output:atlas.json}", &two).unwrap(),
            "/t/atlas.json"
        );
        let err = expand("{output}", &two).unwrap_err();
        assert!(
            err.contains("{output:atlas.png}, {output:atlas.json}"),
            "{err}"
        );
        let err = expand("{output:nope}", &two).unwrap_err();
        assert!(err.contains("is not an output"), "{err}");
    }
}
