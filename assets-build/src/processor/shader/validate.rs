//! Validation and reflection with naga (feature `shaders`): the shader
//! linked with its modules is parsed and validated, errors placed at the
//! original file, line and column; the module's entry points and bindings
//! become the reflection.

use super::imports::Linked;
use super::{Binding, EntryPoint, Reflection};
use crate::asset_path::AssetPath;
use crate::processor::ProcessError;
use naga::valid::{Capabilities, ModuleInfo};

/// The linked source: every module's text, import lines blanked (so lines
/// keep their numbers), and where each module starts.
fn link(linked: &Linked) -> (String, Vec<(usize, &AssetPath)>) {
    let mut source = String::new();
    let mut starts = Vec::new();
    for m in &linked.modules {
        starts.push((source.len(), &m.asset));
        let mut in_import = false;
        for line in m.text.split_inclusive('\n') {
            let t = line.trim_start();
            let import = in_import
                || t.starts_with("#import")
                || t.starts_with("#define_import_path")
                || (t.starts_with("import") && t[6..].starts_with(char::is_whitespace));
            if import {
                in_import = !line.contains(';') && !t.starts_with('#');
                source.push_str(if line.ends_with('\n') { "\n" } else { "" });
            } else {
                source.push_str(line);
            }
        }
        if !source.ends_with('\n') {
            source.push('\n');
        }
    }
    (source, starts)
}

/// `file:line:col` of byte `offset` of the linked source.
fn locate(source: &str, starts: &[(usize, &AssetPath)], offset: usize) -> String {
    let i = starts
        .partition_point(|(s, _)| *s <= offset)
        .saturating_sub(1);
    let Some(&(start, asset)) = starts.get(i) else {
        return "?".into();
    };
    let before = &source[start..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |n| before.len() - n - 1)
        + 1;
    format!("{asset}:{line}:{col}")
}

/// naga's default capabilities and those named (kebab-case: `float64`,
/// `immediates`, `shader-int64`...); an unknown name is an error listing them.
pub(super) fn capabilities(names: &[String]) -> Result<Capabilities, ProcessError> {
    let mut caps = Capabilities::default();
    for name in names {
        let flag = Capabilities::from_name(&name.replace('-', "_").to_ascii_uppercase())
            .ok_or_else(|| {
                ProcessError::msg(format!(
                    "`capabilities` holds `{name}`, which naga does not know; known: {}",
                    capability_names(Capabilities::all())
                ))
            })?;
        caps |= flag;
    }
    Ok(caps)
}

/// The `capabilities` name of the flag naga's message says is missing:
/// "Capability Capabilities(TEXTURE_AND_SAMPLER_BINDING_ARRAY) is not
/// supported" gives `texture-and-sampler-binding-array`.
fn missing_capability(message: &str) -> Option<String> {
    let rest = message.split("Capability Capabilities(").nth(1)?;
    let flag = rest.split(')').next()?;
    let caps = Capabilities::from_name(flag)?;
    Some(capability_names(caps))
}

/// `float64, shader-int64`: the flags of `caps` as `capabilities` names them.
pub(super) fn capability_names(caps: Capabilities) -> String {
    let names: Vec<String> = caps
        .iter_names()
        .map(|(n, _)| n.to_ascii_lowercase().replace('_', "-"))
        .collect();
    names.join(", ")
}

/// Parses and validates the linked shader with `capabilities`, filling the
/// reflection; the module and its info, for translation.
pub(super) fn validate(
    linked: &Linked,
    capabilities: Capabilities,
    reflection: &mut Reflection,
) -> Result<(naga::Module, ModuleInfo), ProcessError> {
    let (source, starts) = link(linked);
    check(
        &source,
        &|offset| locate(&source, &starts, offset),
        capabilities,
        reflection,
    )
}

/// Parses and validates WGSL `source`, whose byte offsets `locate` turns
/// into places in the files it came from.
pub(super) fn check(
    source: &str,
    locate: &dyn Fn(usize) -> String,
    capabilities: Capabilities,
    reflection: &mut Reflection,
) -> Result<(naga::Module, ModuleInfo), ProcessError> {
    use naga::valid::{ValidationFlags, Validator};

    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        let at = e
            .labels()
            .next()
            .and_then(|(span, _)| span.to_range())
            .map_or_else(|| "?".into(), |r| locate(r.start));
        let labels: Vec<String> = e
            .labels()
            .filter(|(_, l)| !l.is_empty())
            .map(|(_, l)| l.to_owned())
            .collect();
        let detail = if labels.is_empty() {
            String::new()
        } else {
            format!(" ({})", labels.join("; "))
        };
        ProcessError::msg(format!("{at}: {}{detail}", e.message()))
    })?;
    let info = Validator::new(ValidationFlags::all(), capabilities)
        .validate(&module)
        .map_err(|e| {
            let at = e
                .spans()
                .next()
                .and_then(|(span, _)| span.to_range())
                .map_or_else(|| "?".into(), |r| locate(r.start));
            let mut message = e.as_inner().to_string();
            let mut inner: Option<&dyn std::error::Error> = std::error::Error::source(e.as_inner());
            while let Some(cause) = inner {
                message.push_str(&format!(": {cause}"));
                inner = cause.source();
            }
            if let Some(flag) = missing_capability(&message) {
                message.push_str(&format!(
                    "; if the devices it runs on have it, allow it with `capabilities = [\"{flag}\"]`"
                ));
            }
            ProcessError::msg(format!("{at}: {message}"))
        })?;
    reflection.validated = true;
    for ep in &module.entry_points {
        let stage = match ep.stage {
            naga::ShaderStage::Vertex => "vertex",
            naga::ShaderStage::Fragment => "fragment",
            naga::ShaderStage::Compute => "compute",
            _ => "other",
        };
        reflection.entry_points.push(EntryPoint {
            name: ep.name.clone(),
            stage,
            workgroup_size: (ep.stage == naga::ShaderStage::Compute).then_some(ep.workgroup_size),
        });
    }
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        let holds = match var.space {
            naga::AddressSpace::Uniform => "uniform".to_owned(),
            naga::AddressSpace::Storage { access } => {
                if access.contains(naga::StorageAccess::STORE) {
                    "storage read_write".to_owned()
                } else {
                    "storage read".to_owned()
                }
            }
            _ => match &module.types[var.ty].inner {
                naga::TypeInner::Image { dim, class, .. } => {
                    let class = match class {
                        naga::ImageClass::Depth { .. } => "depth texture",
                        naga::ImageClass::Storage { .. } => "storage texture",
                        _ => "texture",
                    };
                    format!("{class} {dim:?}").to_lowercase()
                }
                naga::TypeInner::Sampler { comparison: true } => "comparison sampler".to_owned(),
                naga::TypeInner::Sampler { comparison: false } => "sampler".to_owned(),
                naga::TypeInner::BindingArray { .. } => "binding array".to_owned(),
                other => format!("{other:?}")
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or("")
                    .to_lowercase(),
            },
        };
        reflection.bindings.push(Binding {
            group: binding.group,
            binding: binding.binding,
            name: var.name.clone().unwrap_or_default(),
            holds,
        });
    }
    reflection.bindings.sort_by_key(|b| (b.group, b.binding));
    Ok((module, info))
}
