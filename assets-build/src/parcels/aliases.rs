//! The manifest's `aliases` in a parcel: an old name kept answering after
//! its asset was renamed. Each resource of the renamed asset that a parcel
//! holds (`new`, `new#label`) gets one of kind `alias` under the old name
//! (`old`, `old#label`), whose bytes are the name it stands for;
//! `assets_runtime::Parcel::get` follows it, and `include_parcel!` keeps
//! the old constant, deprecated. An alias costs its name's bytes, not a
//! copy of the resource.

use std::collections::{BTreeMap, HashMap, HashSet};

use assets_runtime::format::KIND_ALIAS;

use super::{Planned, Source};
use crate::asset_path::AssetPath;
use crate::manifest::Alias;
use crate::store::{Store, StoreError};

/// `planned` with the alias resources of `aliases` appended (in the order
/// of the aliases, then of the resources), or `None` when none applies.
/// The aliases' bytes are put in the store, as every resource's are.
pub(super) fn with_aliases(
    planned: &[Planned],
    aliases: &BTreeMap<AssetPath, Alias>,
    store: &Store,
) -> Result<Option<Vec<Planned>>, StoreError> {
    if aliases.is_empty() {
        return Ok(None);
    }
    // Renamed asset → the names its resources have in this parcel.
    let mut held: HashMap<&str, Vec<&str>> = HashMap::new();
    let wanted: HashSet<&str> = aliases.values().map(|a| a.asset.as_str()).collect();
    for p in planned {
        let asset = p.name.split_once('#').map_or(p.name.as_str(), |(a, _)| a);
        if wanted.contains(asset) {
            held.entry(asset).or_default().push(&p.name);
        }
    }
    let mut added = Vec::new();
    for (old, alias) in aliases {
        for &name in held.get(alias.asset.as_str()).into_iter().flatten() {
            let label = &name[alias.asset.as_str().len()..];
            let hash = store.put(name.as_bytes())?;
            added.push(Planned {
                name: format!("{old}{label}"),
                kind: KIND_ALIAS.to_owned(),
                source: Source::Blob {
                    hash,
                    len: name.len() as u64,
                },
                shows: None,
                compression: None,
                alias_of: Some(name.to_owned()),
            });
        }
    }
    if added.is_empty() {
        return Ok(None);
    }
    let mut all = Vec::with_capacity(planned.len() + added.len());
    all.extend(planned.iter().cloned());
    all.extend(added);
    Ok(Some(all))
}
