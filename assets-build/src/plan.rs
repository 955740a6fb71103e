//! Planning: every discovered asset gets a step with its processor, settings
//! and key, before anything runs.

use std::collections::HashMap;
use std::sync::Arc;

use crate::asset_path::AssetPath;
use crate::discover::Discovered;
use crate::hash::ContentHash;
use crate::manifest::{Manifest, ManifestError, Origin, Settings, did_you_mean};
use crate::processor::{Processor, Registry};
use crate::record::step_key;

/// One asset's build step, as planned.
pub(crate) struct Step {
    pub asset: AssetPath,
    pub root: usize,
    pub processor: Arc<dyn Processor>,
    pub settings: Settings,
    pub settings_json: String,
    pub origin: Option<Origin>,
    pub key: ContentHash,
}

/// The steps of a build, by asset path.
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    pub index: HashMap<AssetPath, usize>,
}

/// Assigns every asset its processor. Errors point at the rule or override.
pub(crate) fn plan(
    manifest: &Manifest,
    registry: &Registry,
    assets: &[Discovered],
    variant: &str,
) -> Result<Plan, ManifestError> {
    if let Some((asset, o)) = manifest
        .overrides
        .iter()
        .find(|(a, _)| assets.binary_search_by(|d| d.path.cmp(a)).is_err())
    {
        return Err(manifest
            .error_at(&o.origin, format!("override for `{asset}`, which is not an asset"))
            .help("override keys are asset paths relative to the asset root, e.g. \"sprites/hero.png\""));
    }
    let mut steps = Vec::with_capacity(assets.len());
    for d in assets {
        let a = manifest.assign(&d.path);
        let Some(processor) = registry.get(&a.processor) else {
            let mut help = format!(
                "known processors: {}",
                registry.names().collect::<Vec<_>>().join(", ")
            );
            if let Some(s) = did_you_mean(&a.processor, registry.names()) {
                help = format!("did you mean `{s}`? {help}");
            }
            let message = format!("unknown processor `{}` for `{}`", a.processor, d.path);
            let err = match a.processor_origin.as_ref().or(a.origin.as_ref()) {
                Some(origin) => manifest.error_at(origin, message),
                None => manifest.error(message),
            };
            return Err(err.help(help));
        };
        let settings_json = a.settings.canonical_json();
        let key = step_key(
            processor.name(),
            processor.version(),
            &settings_json,
            &d.path,
            variant,
        );
        steps.push(Step {
            asset: d.path.clone(),
            root: d.root,
            processor: Arc::clone(processor),
            settings: a.settings,
            settings_json,
            origin: a.origin,
            key,
        });
    }
    let index = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.asset.clone(), i))
        .collect();
    Ok(Plan { steps, index })
}
