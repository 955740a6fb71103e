//! `cargo assets inspect <parcel>`: list a parcel's resources and verify it.

use std::path::Path;

use assets_runtime::{ParcelBuf, Resource};
use serde_json::json;

use super::Exit;
use crate::shell::{Shell, Style};

/// Lists and verifies the parcel at `path`.
pub fn exec(path: &Path, shell: &Shell) -> anyhow::Result<Exit> {
    let buf = ParcelBuf::open(path)
        .map_err(|e| anyhow::anyhow!("`{}` is not a valid parcel: {e}", path.display()))?;
    let parcel = buf.parcel();
    let mut resources: Vec<Resource<'_>> = parcel.iter().collect();
    resources.sort_by_key(|r| r.name);
    let mut corrupt = Vec::new();
    for r in &resources {
        let intact = r.verify().is_ok();
        if !intact {
            corrupt.push(r.name);
        }
        let mut message = json!({
            "reason": "resource", "name": r.name, "kind": r.kind, "size": r.data.len(),
            "id": format!("{:016x}", r.id.raw()), "checksum": format!("{:016x}", r.checksum()),
            "intact": intact,
        });
        let mut detail = String::new();
        if let Some(image) = r.image() {
            message["image"] = json!({"width": image.header.width, "height": image.header.height});
            detail = format!(" {}x{}", image.header.width, image.header.height);
        }
        shell.message(&message);
        shell.status(
            r.kind,
            format!("{} ({} bytes{detail})", r.name, r.data.len()),
            Style::Note,
        );
    }
    shell.message(&json!({"reason": "inspect-finished", "resources": resources.len(), "intact": corrupt.is_empty()}));
    if !corrupt.is_empty() {
        shell.error(format!(
            "`{}` is corrupt: {} do not match their checksums: {}",
            path.display(),
            corrupt.len(),
            corrupt.join(", ")
        ));
        return Ok(Exit::BuildFailed);
    }
    shell.status(
        "Verified",
        format!("{} resources in {}", resources.len(), path.display()),
        Style::Good,
    );
    Ok(Exit::Success)
}
