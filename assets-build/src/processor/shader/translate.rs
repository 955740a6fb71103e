//! Translation with naga's back ends (feature `shader-targets`): the
//! validated module written as SPIR-V, MSL, or GLSL (desktop 4.50, or ES
//! 3.00 for WebGL2), for games that hand their graphics API a shader it
//! reads natively instead of shipping a WGSL compiler.
//!
//! Every option is fixed here, none taken from how the tool itself was
//! compiled (naga's SPIR-V writer adds debug names in debug builds unless
//! told not to), so the output is the same from a debug and a release
//! `cargo assets`, and from a build script.

use naga::back::{glsl, msl, spv};
use naga::valid::{Capabilities, ModuleInfo};

use super::{Translated, Translation};
use crate::processor::ProcessError;

/// The capabilities `target`'s back end can write.
pub(super) fn supported(target: Translation) -> Capabilities {
    match target {
        Translation::Spirv => spv::supported_capabilities(),
        Translation::Msl => msl::supported_capabilities(),
        Translation::Glsl | Translation::GlslEs => glsl::supported_capabilities(),
    }
}

/// `module` written for `target`: one output, or one per entry point for
/// GLSL (a GLSL program holds one stage).
pub(super) fn translate(
    module: &naga::Module,
    info: &ModuleInfo,
    target: Translation,
) -> Result<Vec<Translated>, ProcessError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        ProcessError::msg(format!(
            "translating to {what}: {e}; remove `{}` from this shader's `targets`, \
             or do without what that language lacks",
            target.name()
        ))
    };
    match target {
        Translation::Spirv => {
            let options = spv::Options {
                lang_version: (1, 0),
                flags: spv::WriterFlags::ADJUST_COORDINATE_SPACE
                    | spv::WriterFlags::LABEL_VARYINGS
                    | spv::WriterFlags::CLAMP_FRAG_DEPTH,
                ..spv::Options::default()
            };
            let words =
                spv::write_vec(module, info, &options, None).map_err(|e| failed("SPIR-V", &e))?;
            let bytes = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            Ok(vec![(target.name().to_owned(), "bytes", bytes)])
        }
        Translation::Msl => {
            let options = msl::Options {
                lang_version: (2, 0),
                ..msl::Options::default()
            };
            let pipeline = msl::PipelineOptions::default();
            let (text, _) = msl::write_string(module, info, &options, &pipeline)
                .map_err(|e| failed("MSL", &e))?;
            Ok(vec![(target.name().to_owned(), "text", text.into_bytes())])
        }
        Translation::Glsl | Translation::GlslEs => {
            let options = glsl::Options {
                version: match target {
                    Translation::Glsl => glsl::Version::Desktop(450),
                    _ => glsl::Version::Embedded {
                        version: 300,
                        is_webgl: true,
                    },
                },
                ..glsl::Options::default()
            };
            let mut out = Vec::new();
            for ep in &module.entry_points {
                let pipeline = glsl::PipelineOptions {
                    shader_stage: ep.stage,
                    entry_point: ep.name.clone(),
                    multiview: None,
                };
                let mut text = String::new();
                let what = format!("{} (entry point `{}`)", target.name(), ep.name);
                glsl::Writer::new(
                    &mut text,
                    module,
                    info,
                    &options,
                    &pipeline,
                    naga::proc::BoundsCheckPolicies::default(),
                )
                .and_then(|mut w| w.write())
                .map_err(|e| failed(&what, &e))?;
                out.push((
                    format!("{}.{}", target.name(), ep.name),
                    "text",
                    text.into_bytes(),
                ));
            }
            Ok(out)
        }
    }
}
