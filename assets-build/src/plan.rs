//! Planning: every discovered asset gets a step with its processor, settings
//! and key, before anything runs; a chain's earlier stages get steps of
//! their own (see [`Stage`]); sprites are grouped by atlas, and each atlas
//! gets a generated step after every asset (see [`crate::unstable::atlas`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use assets_runtime::Compression;

use crate::asset_path::{AssetMap, AssetPath};
use crate::atlas::AtlasPacker;
use crate::discover::Discovered;
use crate::freshness::Current;
use crate::hash::ContentHash;
use crate::manifest::{
    Assignment, DEFAULT_ATLAS, Manifest, ManifestError, Origin, Settings, SettingsError,
    did_you_mean,
};
use crate::parallel;
use crate::processor::{ErasedProcessor, Registry};
use crate::record::{step_key, system_time_ns};

/// One asset's build step, as planned.
pub(crate) struct Step {
    pub asset: AssetPath,
    pub root: usize,
    pub processor: Arc<dyn ErasedProcessor>,
    /// The fingerprint of the processor's code, when known (see
    /// `processor/code.rs`): part of the key.
    pub code: Option<u64>,
    /// Shared by every step with equal settings (see [`SharedSettings`]).
    pub settings: Arc<Settings>,
    pub settings_json: Arc<str>,
    pub origin: Option<Origin>,
    /// The rule the asset matched (its index in the manifest), if any.
    pub rule: Option<usize>,
    pub key: ContentHash,
    pub group: Group,
    /// Assets the rule's `inputs` globs match (root index and path): read
    /// as inputs before the processor runs, and listed in the key.
    pub extra_inputs: Vec<(usize, AssetPath)>,
    /// The platform, when it is part of the key (see [`plan`]); what
    /// `ctx.platform()` gives.
    pub platform: Option<String>,
    /// The rule's `compression`, for the parcels that hold the step's
    /// resources (not part of the key: it changes the parcel, not the
    /// outputs).
    pub compression: Option<Compression>,
    /// Where this step sits in a chain (`processor = ["a", "b"]`), if it
    /// is one's stage.
    pub stage: Option<Stage>,
}

/// A step of a chain: every stage but the last is a step of its own,
/// `stage<n>:<file>`, and the last is the asset's step. A stage's source
/// is the main output of the stage before, used as a dependency: an edit
/// that leaves a stage's output as it was stops there (early cutoff), and
/// each stage is cached with its own processor, settings and key.
pub(crate) struct Stage {
    /// The file the chain builds: what `ctx.asset()` says in every stage.
    pub file: AssetPath,
    /// The stage whose main output is this one's source; `None` for the
    /// first, which reads the file.
    pub previous: Option<AssetPath>,
}

impl Step {
    /// The asset a processor is told it builds: the file, also for a
    /// chain's earlier stages.
    pub fn file(&self) -> &AssetPath {
        self.stage.as_ref().map_or(&self.asset, |s| &s.file)
    }
}

impl Plan {
    /// Step `i` as the freshness check compares it with its record, now.
    pub fn current<'a>(
        &'a self,
        i: usize,
        package_dir: &'a std::path::Path,
        stats: Option<&'a crate::stat_cache::StatCache>,
    ) -> Current<'a> {
        let step = &self.steps[i];
        Current {
            key: step.key,
            processor: step.processor.name(),
            version: step.processor.version(),
            code: step.code,
            settings_json: &step.settings_json,
            package_dir,
            now_ns: system_time_ns(std::time::SystemTime::now()),
            stats,
            assets: &self.index,
        }
    }
}

/// How a step takes part in an atlas.
pub(crate) enum Group {
    /// It does not (an atlas step itself is `None` too).
    None,
    /// A sprite: the atlas step's index, and this sprite's place in its list.
    Sprite { atlas: usize, slot: usize },
}

/// The steps of a build, by asset path.
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    pub index: AssetMap<usize>,
    /// See [`Plan::selected`].
    selected: OnceLock<Vec<Vec<bool>>>,
}

impl Plan {
    /// For each parcel of `manifest` (the one this plan was made from), in
    /// its order: which steps it selects (never an atlas step itself, nor
    /// an earlier stage of a chain).
    /// Worked out on first use and kept with the plan: matching every
    /// asset against a parcel's globs is ~1 µs an asset, and a watched
    /// pipeline keeps its plan from one edit to the next.
    pub fn selected(&self, manifest: &Manifest) -> &[Vec<bool>] {
        self.selected.get_or_init(|| {
            (manifest.parcels.iter())
                .map(|spec| {
                    parallel::map(&self.steps, |s| {
                        s.asset.atlas_name().is_none()
                            && !s.asset.is_stage()
                            && spec.contains(&s.asset)
                    })
                })
                .collect()
        })
    }

    /// The order workers take steps in: each atlas's sprites, then the
    /// atlas, atlas by atlas; then every other step, in plan order.
    ///
    /// An atlas waits for all its sprites and then packs, draws and
    /// compresses its pages, the largest steps of a build. Planned last, it
    /// ran when nothing else was left, one or two at a time on a machine's
    /// cores: a cold 10k build spent its last ~180 ms on one core. Taken as
    /// soon as its sprites are, it runs while the other workers go on with
    /// the rest. The order changes when steps run, never what they make.
    pub fn run_order(&self) -> Vec<usize> {
        let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, step) in self.steps.iter().enumerate() {
            if let Group::Sprite { atlas, .. } = step.group {
                members.entry(atlas).or_default().push(i);
            }
        }
        let mut order = Vec::with_capacity(self.steps.len());
        // Marks, not a set: at 1M files a set of the sprites was 50 ms of
        // every watched edit.
        let mut grouped = vec![false; self.steps.len()];
        for (&atlas, sprites) in &members {
            order.extend(sprites);
            order.push(atlas);
        }
        for &i in &order {
            grouped[i] = true;
        }
        order.extend((0..self.steps.len()).filter(|&i| !grouped[i]));
        order
    }
}

/// Assigns every asset its processor. Errors point at the rule or override.
///
/// On a `platform`, a step's key includes the platform only when its
/// settings differ there (its rule's `platforms.<name>`, the platform's
/// `settings.<processor>`) or its processor is
/// [`platform_dependent`](Processor::platform_dependent): every other step
/// has the same key on every platform, so one platform's record serves the
/// others (see [`crate::record_log`]), and its processor is not told the
/// platform, so that sharing is sound.
///
/// Settings are checked once per rule (or override) and processor, and
/// against the `target` triple when there is one.
pub(crate) fn plan(
    manifest: &Manifest,
    registry: &Registry,
    assets: &[Discovered],
    variant: &str,
    platform: Option<&str>,
    target: Option<&str>,
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
    for (old, alias) in &manifest.aliases {
        let is_asset = |path: &AssetPath| assets.binary_search_by(|d| d.path.cmp(path)).is_ok();
        if is_asset(old) {
            return Err(manifest
                .error_at(&alias.origin, format!("alias `{old}` is an asset"))
                .help("an alias keeps the name of a file that was renamed; remove the alias, or the file"));
        }
        if !is_asset(&alias.asset) {
            return Err(manifest
                .error_at(
                    &alias.origin,
                    format!(
                        "alias `{old}` names `{}`, which is not an asset",
                        alias.asset
                    ),
                )
                .help("name the asset's path relative to its root, as it is now"));
        }
    }
    for platform in manifest.platforms.values() {
        for (name, settings) in &platform.processor_settings {
            if registry.get(name).is_none() {
                let help = known_processors(registry, name);
                let message = format!(
                    "platform `{}` has settings for `{name}`, which is not a processor",
                    platform.name
                );
                return Err(manifest.error_at(&settings.origin, message).help(help));
            }
        }
    }
    // Each asset is planned on its own (matching rules, serializing
    // settings, hashing a key: ~3 µs an asset, tens of milliseconds at 10k
    // before any step can start), so on every core; what depends on the
    // assets before it (atlas lists, settings checked once per rule) is
    // done after, in asset order, so errors are the ones a serial loop
    // would meet first.
    let shared = SharedSettings::default();
    let planned = parallel::map(assets, |d| {
        plan_asset(manifest, registry, &shared, assets, d, variant, platform)
    });
    let mut steps = Vec::with_capacity(assets.len());
    let mut members: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    // Processor to the rule or override keys whose settings were checked
    // with it (looked up without allocating: 10,000 steps, a few rules).
    let mut checked: HashMap<String, HashSet<String>> = HashMap::new();
    for (d, planned) in assets.iter().zip(planned) {
        let PlannedAsset {
            stages,
            step,
            atlas,
        } = planned?;
        for (n, stage) in (1..).zip(stages) {
            // Checked with the table under its name, once per rule.
            let under = stage.origin.as_ref().map(|o| format!("{}#{n}", o.key));
            check_once(&mut checked, &stage, under, target, |e| {
                let a = manifest.assign(&d.path, platform);
                stage_settings_error(manifest, &a, stage.processor.name(), e)
            })?;
            steps.push(stage);
        }
        if let Some(atlas) = atlas {
            members.entry(atlas).or_default().push(steps.len());
        }
        let under = step.origin.as_ref().map(|o| o.key.clone());
        check_once(&mut checked, &step, under, target, |e| {
            // Assigned again to say where each setting was written: only
            // an error needs it.
            let a = manifest.assign(&d.path, platform);
            settings_error(manifest, &a, step.processor.name(), e)
        })?;
        steps.push(step);
    }
    let packer: Arc<dyn ErasedProcessor> = Arc::new(AtlasPacker);
    let packer_code = crate::processor::builtin_code("atlas");
    for (name, sprites) in members {
        let atlas = steps.len();
        for (slot, &i) in sprites.iter().enumerate() {
            steps[i].group = Group::Sprite { atlas, slot };
        }
        let spec = manifest.atlases.get(&name).cloned().unwrap_or_default();
        let mut table = toml::Table::new();
        table.insert(
            "atlas".into(),
            toml::Value::try_from(&spec).expect("atlas settings serialize"),
        );
        let list = sprites.iter().map(|&i| steps[i].asset.to_string().into());
        table.insert("sprites".into(), toml::Value::Array(list.collect()));
        steps.push(step(
            AssetPath::atlas(&name),
            0,
            Arc::clone(&packer),
            packer_code,
            shared.share(Settings::from_table(table)),
            None,
            variant,
        ));
    }
    let index = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.asset.clone(), i))
        .collect();
    Ok(Plan {
        steps,
        index,
        selected: OnceLock::new(),
    })
}

/// Checks `step`'s settings with its processor (and against `target`),
/// unless a step of the same processor and rule (`under`) was checked
/// already: once per rule, however many assets it matches.
fn check_once(
    checked: &mut HashMap<String, HashSet<String>>,
    step: &Step,
    under: Option<String>,
    target: Option<&str>,
    error: impl FnOnce(SettingsError) -> ManifestError,
) -> Result<(), ManifestError> {
    let processor = &step.processor;
    let Some(under) = under else {
        return Ok(());
    };
    if (checked.get(processor.name())).is_some_and(|keys| keys.contains(&under)) {
        return Ok(());
    }
    (checked.entry(processor.name().to_owned()).or_default()).insert(under);
    processor
        .check_settings(&step.settings)
        .and_then(|()| match target {
            Some(t) => processor.check_target(&step.settings, t),
            None => Ok(()),
        })
        .map_err(error)
}

/// One asset's step as [`plan_asset`] makes it, the earlier stages of its
/// chain if it has one, and, for a sprite, its atlas (the serial pass of
/// [`plan`] lists each atlas's sprites).
struct PlannedAsset {
    stages: Vec<Step>,
    step: Step,
    atlas: Option<String>,
}

/// Plans `d` alone: its processor, settings (without `atlas`), extra
/// inputs and key; settings are checked by the caller.
fn plan_asset(
    manifest: &Manifest,
    registry: &Registry,
    shared: &SharedSettings,
    assets: &[Discovered],
    d: &Discovered,
    variant: &str,
    platform: Option<&str>,
) -> Result<PlannedAsset, ManifestError> {
    let mut a = manifest.assign(&d.path, platform);
    // The default for the extension: a processor crate's claim comes
    // before the built-in map (a rule or override naming one wins).
    if a.processor_origin.is_none()
        && let Some(claimed) = registry.claimed(d.path.extension())
    {
        a.processor = claimed.to_owned();
    }
    let Some(processor) = registry.get(&a.processor) else {
        let help = known_processors(registry, &a.processor);
        let message = format!("unknown processor `{}` for `{}`", a.processor, d.path);
        let err = manifest.error_near(a.processor_origin.as_ref().or(a.origin.as_ref()), message);
        return Err(err.help(help));
    };
    let mut settings = std::mem::take(&mut a.settings);
    let stages = chain_stages(manifest, registry, shared, &a, d, &mut settings, variant)?;
    let atlas = if processor.packs_into_atlas() {
        Some(atlas_of(
            manifest,
            &d.path,
            settings.take("atlas"),
            a.origin.as_ref(),
        )?)
    } else {
        None
    };
    let extra_inputs: Vec<(usize, AssetPath)> = match &a.inputs {
        Some(globs) => assets
            .iter()
            .filter(|other| other.path != d.path && globs.is_match(other.path.as_str()))
            .map(|other| (other.root, other.path.clone()))
            .collect(),
        None => Vec::new(),
    };
    let keyed_platform =
        platform.filter(|_| a.platform_specific || processor.platform_dependent(&settings));
    let key_variant = match keyed_platform {
        Some(p) => format!("{variant}.{p}"),
        None => variant.to_owned(),
    };
    let mut s = step(
        d.path.clone(),
        d.root,
        Arc::clone(processor),
        registry.code(&a.processor),
        shared.share(settings),
        a.origin,
        &key_variant,
    );
    s.platform = keyed_platform.map(str::to_owned);
    s.compression = a.compression;
    s.rule = a.rule;
    if let Some(last) = stages.last() {
        s.stage = Some(Stage {
            file: d.path.clone(),
            previous: Some(last.asset.clone()),
        });
    }
    if !extra_inputs.is_empty() || !a.chain.is_empty() {
        // The lists are part of the key (as an atlas's sprite list is), so
        // a file that starts or stops matching reruns the step, and so
        // does a change of the stages before it.
        let mut keyed = s.settings.table().clone();
        if !extra_inputs.is_empty() {
            let list = extra_inputs.iter().map(|(_, p)| p.to_string().into());
            keyed.insert("inputs".into(), toml::Value::Array(list.collect()));
        }
        if !a.chain.is_empty() {
            let list = a.chain.iter().map(|p| p.as_str().into());
            keyed.insert("chain".into(), toml::Value::Array(list.collect()));
        }
        s.settings_json = Settings::from_table(keyed).canonical_json().into();
        s.key = step_key(
            s.processor.name(),
            s.processor.version(),
            s.code,
            &s.settings_json,
            &s.asset,
            &key_variant,
        );
        s.extra_inputs = extra_inputs;
    }
    Ok(PlannedAsset {
        stages,
        step: s,
        atlas,
    })
}

/// The steps of the stages of `a`'s chain before its last, each with the
/// table under its processor's name in `settings` (taken out of them):
/// `stage1:<file>` reads the file, each later one the main output of the
/// one before. None without a chain.
fn chain_stages(
    manifest: &Manifest,
    registry: &Registry,
    shared: &SharedSettings,
    a: &Assignment,
    d: &Discovered,
    settings: &mut Settings,
    variant: &str,
) -> Result<Vec<Step>, ManifestError> {
    let mut stages: Vec<Step> = Vec::with_capacity(a.chain.len());
    // Errors of a stage point at the rule's `processor` key.
    let at = |message: String| {
        manifest.error_near(a.processor_origin.as_ref().or(a.origin.as_ref()), message)
    };
    for (n, name) in (1..).zip(&a.chain) {
        let Some(processor) = registry.get(name) else {
            let message = format!("unknown processor `{name}` in the chain for `{}`", d.path);
            return Err(at(message).help(known_processors(registry, name)));
        };
        if processor.packs_into_atlas() {
            return Err(at(format!(
                "`{name}` packs into an atlas, so it can only be a chain's last stage"
            ))
            .help("put it last, or build its input with another processor"));
        }
        let table = match settings.take(name) {
            None => toml::Table::new(),
            Some(toml::Value::Table(table)) => table,
            Some(other) => {
                let message = format!(
                    "the settings of the chain's stage `{name}` must be a table, found {}",
                    other.type_str()
                );
                let origin = a.setting_origins.get(name.as_str());
                let err = manifest.error_near(origin.or(a.origin.as_ref()), message);
                return Err(err.help(format!("`{name} = {{ key = value }}`")));
            }
        };
        let asset = AssetPath::stage(n, &d.path);
        let mut stage = step(
            asset,
            d.root,
            Arc::clone(processor),
            registry.code(name),
            shared.share(Settings::from_table(table)),
            a.origin.clone(),
            variant,
        );
        stage.rule = a.rule;
        stage.stage = Some(Stage {
            file: d.path.clone(),
            previous: stages.last().map(|s| s.asset.clone()),
        });
        stages.push(stage);
    }
    Ok(stages)
}

/// The help for an unknown processor `name`: the known ones, and the one
/// it may be a misspelling of.
fn known_processors(registry: &Registry, name: &str) -> String {
    let known = registry.names().collect::<Vec<_>>().join(", ");
    match did_you_mean(name, registry.names()) {
        Some(s) => format!("did you mean `{s}`? known processors: {known}"),
        None => format!("known processors: {known}"),
    }
}

fn step(
    asset: AssetPath,
    root: usize,
    processor: Arc<dyn ErasedProcessor>,
    code: Option<u64>,
    (settings, settings_json): (Arc<Settings>, Arc<str>),
    origin: Option<Origin>,
    variant: &str,
) -> Step {
    let key = step_key(
        processor.name(),
        processor.version(),
        code,
        &settings_json,
        &asset,
        variant,
    );
    Step {
        asset,
        root,
        processor,
        code,
        settings,
        settings_json,
        origin,
        rule: None,
        key,
        group: Group::None,
        extra_inputs: Vec::new(),
        platform: None,
        compression: None,
        stage: None,
    }
}

/// One copy of each distinct settings value, with its canonical JSON,
/// shared by the steps that have it: the assets of a rule nearly all do.
/// A step held its own (a `toml` table, whose smallest map is one node of
/// several hundred bytes, and the JSON text), a tenth of a no-op's memory
/// at a million assets, all of it fresh pages the kernel zeroes.
///
/// Keyed by the JSON, and compared as values among those of one JSON: two
/// tables that write the same JSON are the same settings as far as step
/// keys go, but a processor reads the table, so only an equal table is
/// shared.
#[derive(Default)]
struct SharedSettings(Mutex<HashMap<Arc<str>, Vec<Arc<Settings>>>>);

impl SharedSettings {
    fn share(&self, settings: Settings) -> (Arc<Settings>, Arc<str>) {
        let json = settings.canonical_json();
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (json, same) = match kept.get_key_value(json.as_str()) {
            Some((json, same)) => (Arc::clone(json), same),
            None => (Arc::from(json), &Vec::new()),
        };
        if let Some(found) = same.iter().find(|s| ***s == settings) {
            return (Arc::clone(found), json);
        }
        let settings = Arc::new(settings);
        (kept.entry(Arc::clone(&json)).or_default()).push(Arc::clone(&settings));
        (settings, json)
    }
}

/// Settings that the chain's stage `processor` rejected: they are the table
/// under its name, so the error points there.
fn stage_settings_error(
    manifest: &Manifest,
    a: &Assignment,
    processor: &str,
    e: SettingsError,
) -> ManifestError {
    let message = format!(
        "invalid settings for the chain's stage `{processor}`: {}",
        e.message
    );
    let origin = a.setting_origins.get(processor).or(a.origin.as_ref());
    let error = manifest.error_near(origin, message);
    match e.help {
        Some(help) => error.help(help),
        None => error,
    }
}

/// Settings that `processor` rejected, pointing at the offending key when
/// it is one the processor does not know (with the keys it does know, and
/// the rule's own keys, as suggestions), else at the rule.
fn settings_error(
    manifest: &Manifest,
    a: &Assignment,
    processor: &str,
    e: SettingsError,
) -> ManifestError {
    let unknown = e
        .message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'));
    if let Some((field, expected)) = unknown
        && let Some(origin) = a.setting_origins.get(field)
    {
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        let rule_keys = ["match", "processor", "inputs"];
        let mut error = manifest.error_at(
            origin,
            format!("unknown key `{field}` for processor `{processor}`"),
        );
        let takes = if known.is_empty() {
            format!("`{processor}` takes no settings")
        } else {
            format!("`{processor}` takes: {}", known.join(", "))
        };
        error = match did_you_mean(field, known.iter().copied().chain(rule_keys)) {
            Some(s) => error.help(format!("did you mean `{s}`? {takes}")),
            None => error.help(takes),
        };
        return error;
    }
    let message = format!(
        "invalid settings for processor `{processor}`: {}",
        e.message
    );
    let at_key = e.key.as_ref().and_then(|k| a.setting_origins.get(k));
    let error = manifest.error_near(at_key.or(a.origin.as_ref()), message);
    match e.help {
        Some(help) => error.help(help),
        None => error,
    }
}

/// The atlas a sprite's `atlas` setting names: declared, or the default.
fn atlas_of(
    manifest: &Manifest,
    asset: &AssetPath,
    setting: Option<toml::Value>,
    origin: Option<&Origin>,
) -> Result<String, ManifestError> {
    let error = |message: String| manifest.error_near(origin, message);
    let name = match setting {
        None => return Ok(DEFAULT_ATLAS.to_owned()),
        Some(toml::Value::String(name)) => name,
        Some(other) => {
            return Err(error(format!(
                "`atlas` of sprite `{asset}` must be a string, not {}",
                other.type_str()
            )));
        }
    };
    if name == DEFAULT_ATLAS || manifest.atlases.contains_key(&name) {
        return Ok(name);
    }
    let mut help = format!(
        "declare it with [package.metadata.assets.atlases.{name}], or use a declared atlas"
    );
    if let Some(s) = did_you_mean(&name, manifest.atlases.keys().map(String::as_str)) {
        help = format!("did you mean `{s}`? {help}");
    }
    Err(error(format!(
        "sprite `{asset}` names atlas `{name}`, which is not declared"
    ))
    .help(help))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(toml: &str) -> Settings {
        Settings::from_table(toml.parse().unwrap())
    }

    #[test]
    fn equal_settings_are_one_value_and_equal_json_is_not_enough() {
        let shared = SharedSettings::default();
        let (a, a_json) = shared.share(settings("pivot = [0.5, 1.0]\nmips = true"));
        let (b, b_json) = shared.share(settings("mips = true\npivot = [0.5, 1.0]"));
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a_json, &b_json));
        let (c, _) = shared.share(settings("mips = false"));
        assert!(!Arc::ptr_eq(&a, &c));
        // JSON has no infinities: they are spelled out, so two settings
        // (and two step keys), down to a nested array.
        let (up, up_json) = shared.share(settings("scale = inf\nk = [[nan]]"));
        let (down, down_json) = shared.share(settings("scale = -inf\nk = [[nan]]"));
        assert_ne!(up_json, down_json);
        assert!(!Arc::ptr_eq(&up, &down));
        assert_eq!(down.table()["scale"].as_float(), Some(f64::NEG_INFINITY));
        assert_eq!(
            &*down_json,
            r#"{"k":[[{"toml-float":"nan"}]],"scale":{"toml-float":"-inf"}}"#
        );
    }
}
