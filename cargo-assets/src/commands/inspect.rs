//! `cargo assets inspect <parcel>`: list a parcel's resources and verify it;
//! with `--atlas <name>`, also draw that atlas's pages (see [`super::picture`]).
//! The parcel is a file, or a name of the package's manifest (`main`): the
//! one `cargo assets build` wrote for the variant (`--release`, `--platform`).
//!
//! While `cargo assets watch` runs, an edit leaves a patch beside the parcel
//! (`<name>.parcel.patch`, see `assets_runtime::patch`) until it is idle.
//! Inspect shows what a game sees then: the parcel through its patch, each
//! resource the patch holds marked, both files verified; `--base` shows the
//! parcel alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assets_build::unstable::report::plural;
use assets_runtime::{Compression, ParcelError, Patched, PatchedBuf, Resource};

use super::{Exit, picture};
use crate::cli::InspectArgs;
use crate::message::{
    AnimationMessage, FontMessage, FrameMessage, ImageMessage, Message, ResourceMessage,
    TextureMessage,
};
use crate::shell::{Shell, Style};
use crate::workspace::Package;

/// The reflection the `shader` processor stored beside `shader`, if any.
fn reflection_of(parcel: &Patched<'_>, shader: &str) -> Option<serde_json::Value> {
    let id = assets_runtime::ResourceId::of(&format!("{shader}#reflection"));
    serde_json::from_str(&parcel.text(id).ok()?).ok()
}

/// `vs_main (vertex), fs_main (fragment); 3 bindings` or why not validated.
fn describe_reflection(reflection: &serde_json::Value) -> String {
    if reflection["validated"] != true {
        let why = reflection["not_validated_because"].as_str().unwrap_or("?");
        return format!("not validated: {why}");
    }
    let list = |key: &str| reflection[key].as_array().cloned().unwrap_or_default();
    let entry_points: Vec<String> = list("entry_points")
        .iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap_or("?");
            let stage = e["stage"].as_str().unwrap_or("?");
            match e["workgroup_size"].as_array() {
                Some(size) => {
                    let size: Vec<String> = size.iter().map(|n| n.to_string()).collect();
                    format!("{name} ({stage} {})", size.join("x"))
                }
                None => format!("{name} ({stage})"),
            }
        })
        .collect();
    let bindings: Vec<String> = list("bindings")
        .iter()
        .map(|b| {
            format!(
                "@group({}) @binding({}) {}: {}",
                b["group"],
                b["binding"],
                b["name"].as_str().unwrap_or("?"),
                b["holds"].as_str().unwrap_or("?")
            )
        })
        .collect();
    let bindings = if bindings.is_empty() {
        "no bindings".to_owned()
    } else {
        bindings.join(", ")
    };
    let entry_points = if entry_points.is_empty() {
        "no entry points".to_owned()
    } else {
        entry_points.join(", ")
    };
    format!("validated: {entry_points}; {bindings}")
}

/// The file of the parcel `args.parcel` names: that path when it is one,
/// else the parcel of that name `cargo assets build` wrote for the
/// package and variant (`main` → `<target>/assets/parcels/<package>/dev/main.parcel`):
/// a name has no path separator, is no `.parcel` file and no file at all.
fn parcel_file(args: &InspectArgs) -> anyhow::Result<PathBuf> {
    let given = &args.parcel;
    let name = (given.to_str()).filter(|n| !n.contains(['/', '\\']) && !n.ends_with(".parcel"));
    let Some(name) = name.filter(|_| !given.exists()) else {
        return Ok(given.clone());
    };
    let package = Package::locate(&args.package)?;
    let variant = args.variant.name();
    let key = if package.name.is_empty() {
        "_"
    } else {
        &package.name
    };
    let parcels = package.cache_dir.join("parcels").join(key);
    // `<variant>/`, or `<variant>.<platform>/` for a platform's build; a
    // target triple's platform is the manifest's to say, so any of them.
    let platform = args.variant.platform.as_deref();
    let any_platform = args.variant.target.is_some();
    let mut found = Vec::new();
    let mut names = BTreeSet::new();
    for dir in read_dirs(&parcels) {
        let slot = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let matches = match slot.split_once('.') {
            Some((v, p)) => v == variant && (any_platform || platform == Some(p)),
            None => slot == variant && platform.is_none(),
        };
        if !matches {
            continue;
        }
        let file = dir.join(format!("{name}.parcel"));
        if file.is_file() {
            found.push(file);
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            if let Some(parcel) = file_name.strip_suffix(".parcel") {
                names.insert(format!("`{parcel}`"));
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 if names.is_empty() => anyhow::bail!(
            "no parcel `{name}`: `cargo assets build` has written no `{variant}` parcels \
             for `{}` under `{}`\nhelp: build first, or give the parcel's file",
            package.name,
            parcels.display()
        ),
        0 => anyhow::bail!(
            "no parcel `{name}` among the `{variant}` parcels of `{}`: {}",
            package.name,
            names.into_iter().collect::<Vec<_>>().join(", ")
        ),
        _ => {
            let files: Vec<String> = found.iter().map(|f| format!("`{}`", f.display())).collect();
            anyhow::bail!(
                "parcel `{name}` was built for more than one platform: {}\n\
                 help: choose one with `--platform <name>`, or give the file",
                files.join(", ")
            )
        }
    }
}

/// Where a resource named `name` is listed: by name, but an atlas's
/// pages by number (`atlas:main#2` before `atlas:main#10`).
fn listed_order(name: &str) -> (&str, Option<u64>, &str) {
    match name
        .rsplit_once('#')
        .map(|(base, n)| (base, n.parse().ok()))
    {
        Some((base, Some(page))) => (base, Some(page), name),
        _ => (name, None, name),
    }
}

/// The directories in `dir`, in name order; none when it cannot be read.
fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = (std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Lists and verifies the parcel `args.parcel`, and draws `args.atlas`.
pub fn exec(args: &InspectArgs, shell: &Shell) -> anyhow::Result<Exit> {
    let path = parcel_file(args)?;
    let path = path.as_path();
    let patch = Some(assets_runtime::patch::path_of(path)).filter(|p| !args.base && p.is_file());
    let buf = PatchedBuf::open(path, patch.as_deref()).map_err(|e| match e {
        // `cargo build` alone leaves no parcel under the cache: its build
        // script writes them under OUT_DIR.
        ParcelError::Io { .. } if !path.exists() => anyhow::anyhow!(
            "{e}\nhelp: `cargo assets build` writes parcels to \
             `<target>/assets/parcels/<package>/<variant>/<name>.parcel`; a build \
             script writes them under its OUT_DIR (`include_parcel!`'s `main::PATH` \
             names the file)"
        ),
        // The message names the file.
        ParcelError::Io { .. } => anyhow::anyhow!("{e}"),
        ParcelError::IsPatch => anyhow::anyhow!(
            "`{}` is a patch `cargo assets watch` wrote over a parcel; inspect the parcel \
             beside it (`{}`), which is read through it",
            path.display(),
            path.with_extension("").display()
        ),
        _ => match &patch {
            Some(patch) => anyhow::anyhow!(
                "`{}` with its patch `{}` is not a valid parcel: {e}",
                path.display(),
                patch.display()
            ),
            None => anyhow::anyhow!("`{}` is not a valid parcel: {e}", path.display()),
        },
    })?;
    let parcel = buf.parcel();
    if let Some(patch) = &patch {
        shell.status(
            "Patched",
            format!(
                "by `{}` (an edit `cargo assets watch` has not yet written whole; `--base` shows the parcel alone)",
                patch.display()
            ),
            Style::Note,
        );
    }
    let in_patch = |r: &Resource<'_>| parcel.patch().is_some_and(|p| p.get(r.id).is_some());
    let mut resources: Vec<Resource<'_>> = parcel.iter().collect();
    resources.sort_by_key(|r| listed_order(r.name));
    let mut corrupt = Vec::new();
    for r in &resources {
        let intact = r.verify().is_ok();
        if !intact {
            corrupt.push(r.name);
        }
        let mut message = ResourceMessage {
            name: r.name.to_owned(),
            kind: r.kind.to_owned(),
            size: r.len(),
            stored_size: r.stored().len() as u64,
            compression: r.compression().name().to_owned(),
            id: format!("{:016x}", r.id.raw()),
            checksum: format!("{:016x}", r.checksum()),
            intact,
            image: None,
            sprite: None,
            font: None,
            animation: None,
            texture: None,
            reflection: None,
            patched: in_patch(r),
        };
        let mut detail = String::new();
        if r.compression() != Compression::None {
            detail = format!(
                ", {} stored with {}",
                r.stored().len(),
                r.compression().name()
            );
        }
        if let Some(image) = r.image() {
            let (width, height) = (image.header.width, image.header.height);
            let encoding = image.header.encoding.name();
            message.image = Some(ImageMessage {
                width,
                height,
                encoding: encoding.to_owned(),
            });
            detail = format!(", {width}x{height} {encoding}");
        }
        if let Some(f) = r.sprite_frame() {
            message.sprite = Some(FrameMessage {
                page: f.page_index,
                x: f.x,
                y: f.y,
                w: f.w,
                h: f.h,
                rotated: f.rotated,
                trim_x: f.trim_x,
                trim_y: f.trim_y,
                source_width: f.source_width,
                source_height: f.source_height,
            });
            let turned = if f.rotated { ", rotated" } else { "" };
            detail = format!(
                " page {} at {},{} {}x{}{turned}",
                f.page_index, f.x, f.y, f.w, f.h
            );
        }
        if let Some(t) = r.texture() {
            detail = format!(
                ", {}x{} {}, {} mip levels",
                t.width,
                t.height,
                t.format.name(),
                t.levels
            );
            message.texture = Some(TextureMessage {
                format: t.format.name().to_owned(),
                width: t.width,
                height: t.height,
                levels: t.levels,
            });
        }
        if let Some(font) = r.font() {
            let sizes: Vec<f32> = font.sizes().map(|s| s.px).collect();
            let list: Vec<String> = sizes.iter().map(|px| format!("{px}")).collect();
            let field = if font.is_distance_field() {
                format!(", distance field spread {}", font.spread())
            } else {
                String::new()
            };
            detail = format!(
                ", {} glyphs at {} px, {} kerning pairs{field}",
                font.glyph_count(),
                list.join("/"),
                font.kerning_pairs()
            );
            message.font = Some(FontMessage {
                sizes,
                glyphs: font.glyph_count(),
                kerning_pairs: font.kerning_pairs(),
                distance_field: font.is_distance_field(),
            });
        }
        if let Some(animation) = r.animation() {
            let (width, height) = animation.canvas();
            let tags: Vec<String> = animation.tags().map(|t| t.name.to_owned()).collect();
            let durations: Vec<u32> = animation.frames().map(|f| f.duration_ms).collect();
            let total: u64 = durations.iter().map(|&d| u64::from(d)).sum();
            let listed = match tags.len() {
                0 => String::new(),
                _ => format!(", tags {}", tags.join(", ")),
            };
            detail = format!(
                ", {} frames of {width}x{height}, {total} ms{listed}",
                durations.len()
            );
            message.animation = Some(AnimationMessage {
                width,
                height,
                durations,
                tags,
            });
        }
        if r.kind == assets_runtime::format::KIND_SHADER
            && let Some(reflection) = reflection_of(&parcel, r.name)
        {
            detail = format!("{detail}, {}", describe_reflection(&reflection));
            message.reflection = Some(reflection);
        }
        shell.message(&Message::Resource(message));
        let patched = if in_patch(r) { ", from the patch" } else { "" };
        shell.listing(
            r.kind,
            format!("{} ({} bytes{detail}{patched})", r.name, r.len()),
            Style::Note,
        );
    }
    // Bytes between resources are zero; damage there hurts no resource,
    // but says the file is not what was written.
    let padding = match (corrupt.is_empty(), &patch) {
        (true, None) => parcel.base().verify_stored().err(),
        _ => None,
    };
    shell.message(&Message::InspectFinished {
        resources: resources.len(),
        intact: corrupt.is_empty() && padding.is_none(),
    });
    if !corrupt.is_empty() {
        let n = corrupt.len();
        shell.error(format!(
            "`{}` is corrupt: {} {} not match {} checksum or {} not decompress: {}",
            path.display(),
            plural(n, "resource"),
            if n == 1 { "does" } else { "do" },
            if n == 1 { "its" } else { "their" },
            if n == 1 { "does" } else { "do" },
            corrupt.join(", ")
        ));
        return Ok(Exit::BuildFailed);
    }
    if let Some(e) = padding {
        shell.error(format!(
            "`{}`: {e} (no resource is affected; `cargo assets build` writes it again)",
            path.display(),
        ));
        return Ok(Exit::BuildFailed);
    }
    shell.status(
        "Verified",
        format!("{} resources in {}", resources.len(), path.display()),
        Style::Good,
    );
    if let Some(atlas) = &args.atlas {
        let out_dir = match &args.out_dir {
            Some(dir) => dir.clone(),
            None => path
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .to_owned(),
        };
        for p in picture::draw(&parcel, atlas, &out_dir)? {
            shell.message(&Message::AtlasPicture {
                atlas: atlas.clone(),
                path: p.path.clone(),
                width: p.width,
                height: p.height,
                sprites: p.sprites,
            });
            shell.status(
                "Drew",
                format!(
                    "{} ({}x{}, {} sprites)",
                    p.path.display(),
                    p.width,
                    p.height,
                    p.sprites
                ),
                Style::Good,
            );
        }
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::listed_order;

    #[test]
    fn atlas_pages_are_listed_by_number() {
        let mut names = [
            "atlas:main#10",
            "b.png",
            "atlas:main#2",
            "atlas:main",
            "a#x",
            "atlas:main#1",
        ];
        names.sort_by_key(|n| listed_order(n));
        assert_eq!(
            names,
            [
                "a#x",
                "atlas:main",
                "atlas:main#1",
                "atlas:main#2",
                "atlas:main#10",
                "b.png"
            ]
        );
    }
}
