//! `why`, `deps`, `rdeps`, `graph` and `gc`: questions to the content
//! database (see `assets_build::unstable::query`), answered as lines for people or one
//! JSON object per answer.

use assets_build::unstable::gc;
use assets_build::unstable::query::{Database, Use};
use assets_build::unstable::report::plural;
use assets_build::{Registry, unstable::BuildOptions, unstable::Event};

use super::Exit;
use crate::cli::{GraphArgs, PackageArgs, QueryArgs, VariantArgs};
use crate::message::{EdgeMessage, InputMessage, Message, OutputMessage, UserMessage, Via};
use crate::runner;
use crate::shell::{Shell, Style};
use crate::workspace::{self, Package};

/// Which question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// `why`.
    Why,
    /// `deps`.
    Deps,
    /// `rdeps`.
    Rdeps,
    /// `outputs`.
    Outputs,
    /// `source`.
    Source,
}

fn how(u: &Use) -> &'static str {
    Via::from(u).as_str()
}

/// Opens the database, or hands the command to the processor runner.
fn open(
    package: &PackageArgs,
    variant: &VariantArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Result<Database, u8>> {
    let package = Package::locate(package)?;
    if let Some(code) = runner::delegate_if_needed(&package, shell)? {
        return Ok(Err(code));
    }
    let mut options = BuildOptions::new(&package.manifest_path, &package.cache_dir);
    variant.apply(&mut options);
    let mut registry = Registry::with_builtins();
    for register in processors {
        register(&mut registry);
    }
    Ok(Ok(Database::open(&options, &registry)?))
}

/// `why`, `deps` or `rdeps` about `args.asset`.
pub fn exec(
    question: Question,
    args: &QueryArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    let db = match open(&args.package, &args.variant, shell, processors)? {
        Ok(db) => db,
        Err(code) => return Ok(Exit::Delegated(code)),
    };
    if question == Question::Source {
        let source = match db.source(&args.asset) {
            Ok(source) => source,
            Err(e) => {
                shell.error(e.to_string());
                return Ok(Exit::Usage);
            }
        };
        match &source.file {
            Some(file) => shell.print(&format!(
                "{}: from {file} ({}, asset `{}`)",
                args.asset, source.processor, source.asset
            )),
            None => shell.print(&format!(
                "{}: made by the generated step `{}` ({})",
                args.asset, source.asset, source.processor
            )),
        }
        shell.message(&Message::Source {
            resource: args.asset.clone(),
            asset: source.asset,
            file: source.file,
            processor: source.processor,
        });
        return Ok(Exit::Success);
    }
    let asset = match db.asset(&args.asset) {
        Ok(asset) => asset,
        Err(e) => {
            // A wrong argument, not a failed build: exit 1, as for other usage errors.
            shell.error(e.to_string());
            return Ok(Exit::Usage);
        }
    };
    match question {
        Question::Why => {
            let why = db.why(&asset)?;
            match (&why.fetched_from, &why.last) {
                (Some(from), _) => shell.print(&format!(
                    "{asset}: fetched from remote `{from}` (built on another machine, its inputs checked against these files)"
                )),
                (None, Some(last)) => shell.print(&format!("{asset}: last built because {last}")),
                (None, None) => shell.print(&format!("{asset}: last built because no record of why")),
            }
            if let Some(from) = &why.shared_from {
                shell.print(&format!(
                    "{asset}: the same step on every platform: its record is shared with `{from}`"
                ));
            }
            match &why.next {
                None => shell.print(&format!("{asset}: fresh; the next build reuses it")),
                Some(r) => shell.print(&format!("{asset}: the next build rebuilds it: {r}")),
            }
            shell.message(&Message::Why {
                asset: asset.clone(),
                fresh: why.next.is_none(),
                last: why.last,
                next: why.next,
                shared_from: why.shared_from,
                fetched_from: why.fetched_from,
            });
        }
        Question::Source => {} // answered above, before the asset is looked up
        Question::Outputs => {
            let outputs = db.outputs(&asset)?;
            for (name, kind, size) in &outputs.resources {
                shell.print(&format!(
                    "{name}: {kind}, {}",
                    super::clean::human_bytes(*size)
                ));
            }
            if outputs.parcels.is_empty() {
                shell.print(&format!("{asset}: in no parcel `cargo assets build` wrote"));
            }
            for (parcel, path) in &outputs.parcels {
                shell.print(&format!(
                    "{asset}: in parcel `{parcel}` ({})",
                    path.display()
                ));
            }
            let resources = (outputs.resources.into_iter())
                .map(|(name, kind, size)| OutputMessage { name, kind, size })
                .collect();
            shell.message(&Message::Outputs {
                asset: asset.clone(),
                resources,
                parcels: outputs.parcels,
            });
        }
        Question::Deps => {
            let deps = db.deps(&asset)?;
            for (path, present) in &deps.inputs {
                let what = if *present {
                    "reads"
                } else {
                    "looked for (missing)"
                };
                shell.print(&format!("{asset} {what} {path}"));
            }
            for d in &deps.dependencies {
                shell.print(&format!("{asset} uses the outputs of {d}"));
            }
            for r in &deps.references {
                shell.print(&format!("{asset} refers to {r}"));
            }
            let inputs: Vec<_> = deps
                .inputs
                .iter()
                .map(|(path, present)| InputMessage {
                    path: path.clone(),
                    present: *present,
                })
                .collect();
            shell.message(&Message::Deps {
                asset: asset.clone(),
                inputs,
                dependencies: deps.dependencies,
                references: deps.references,
            });
        }
        Question::Rdeps => {
            let users = db.rdeps(&asset);
            if users.is_empty() {
                shell.print(&format!("nothing uses {asset}"));
            }
            for (user, u) in &users {
                let what = match u {
                    Use::Outputs => "uses the outputs of",
                    Use::Refers => "refers to",
                    Use::File => "reads the file of",
                    Use::LookedFor => "looked for (and would read) the file of",
                };
                shell.print(&format!("{user} {what} {asset}"));
            }
            let users: Vec<_> = users
                .iter()
                .map(|(user, u)| UserMessage {
                    asset: user.clone(),
                    via: u.into(),
                })
                .collect();
            shell.message(&Message::Rdeps {
                asset: asset.clone(),
                users,
            });
        }
    }
    Ok(Exit::Success)
}

/// `graph [--dot]`.
pub fn graph(
    args: &GraphArgs,
    shell: &Shell,
    processors: &[fn(&mut Registry)],
) -> anyhow::Result<Exit> {
    let db = match open(&args.package, &args.variant, shell, processors)? {
        Ok(db) => db,
        Err(code) => return Ok(Exit::Delegated(code)),
    };
    let edges = db.graph();
    let nodes = db.steps();
    if args.dot {
        let mut dot = String::from(
            "digraph assets {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
        );
        // Every step is a node, also one that uses and is used by nothing.
        for node in &nodes {
            dot.push_str(&format!("  {:?};\n", node.as_str()));
        }
        for (from, to, u) in &edges {
            let style = match u {
                Use::Outputs => "",
                Use::Refers => " [style=bold]",
                Use::File => " [style=dashed]",
                Use::LookedFor => " [style=dotted]",
            };
            dot.push_str(&format!(
                "  {:?} -> {:?}{style};\n",
                from.as_str(),
                to.as_str()
            ));
        }
        dot.push_str("}\n");
        shell.print(dot.trim_end());
    } else {
        for (from, to, u) in &edges {
            shell.print(&format!("{from} -> {to} ({})", how(u)));
        }
    }
    let list: Vec<_> = edges
        .iter()
        .map(|(from, to, u)| EdgeMessage {
            from: from.clone(),
            to: to.clone(),
            via: u.into(),
        })
        .collect();
    shell.message(&Message::Graph {
        nodes: nodes.into_iter().cloned().collect(),
        edges: list,
    });
    Ok(Exit::Success)
}

/// `gc`, in each target directory of the selected packages.
pub fn collect(args: &PackageArgs, shell: &Shell) -> anyhow::Result<Exit> {
    for cache_dir in workspace::cache_dirs(&workspace::select(args)?) {
        let stats = gc(&cache_dir, &|e: &Event<'_>| {
            super::render_lock_wait(shell, e)
        })?;
        shell.status(
            "Removed",
            format!(
                "{}, {} freed ({} kept)",
                plural(stats.removed as usize, "unused blob"),
                super::clean::human_bytes(stats.bytes_freed),
                stats.kept
            ),
            Style::Good,
        );
        shell.message(&Message::GcFinished {
            removed: stats.removed,
            bytes_freed: stats.bytes_freed,
            kept: stats.kept,
        });
    }
    Ok(Exit::Success)
}
