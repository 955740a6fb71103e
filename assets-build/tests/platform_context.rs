//! What a processor is told of the platform (`Context::platform`), through
//! the public pipeline with processors of the test's own: a step shared by
//! every platform is not told (its output must not depend on one), a step
//! whose rule differs on the platform is, and so is every step of a
//! processor that says its outputs depend on the platform.

use assets_build::{
    Context, ProcessError, Processor, unstable::BuildOptions, unstable::Outcome, unstable::Pipeline,
};

/// Emits the platform it was told, or `-`.
struct Tell {
    name: &'static str,
    dependent: bool,
}

/// `quality`, which the rules set differently per platform.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TellSettings {
    #[serde(default)]
    #[allow(dead_code)]
    quality: u32,
}

impl Processor for Tell {
    type Settings = TellSettings;

    fn name(&self) -> &str {
        self.name
    }
    fn version(&self) -> u32 {
        1
    }
    fn platform_dependent(&self, _: &TellSettings) -> bool {
        self.dependent
    }
    fn process(&self, ctx: &mut Context<'_>, _: TellSettings) -> Result<(), ProcessError> {
        ctx.source()?;
        let told = ctx.platform().unwrap_or("-").to_owned();
        ctx.emit("text", told.into_bytes())
    }
}

const MANIFEST: &str = r#"
[package]
name = "tell"
version = "0.1.0"
edition = "2021"

[package.metadata.assets.platforms.web]
targets = ["wasm32-*"]

[[package.metadata.assets.rules]]
match = "differs.txt"
processor = "tell"
quality = 1
platforms.web = { quality = 2 }

[[package.metadata.assets.rules]]
match = "same.txt"
processor = "tell"

[[package.metadata.assets.rules]]
match = "dependent.txt"
processor = "tell-dependent"
"#;

/// Builds for `target` and gives each asset's output text and whether it ran.
fn build(dir: &std::path::Path, target: Option<&str>) -> Vec<(String, String, bool)> {
    let mut options = BuildOptions::new(dir.join("Cargo.toml"), dir.join("target/assets"));
    options.target = target.map(str::to_owned);
    let mut pipeline = Pipeline::new(options);
    let registry = pipeline.registry_mut();
    registry.register(Tell {
        name: "tell",
        dependent: false,
    });
    registry.register(Tell {
        name: "tell-dependent",
        dependent: true,
    });
    let report = pipeline.build(&|_| {}).unwrap();
    assert!(report.success());
    let store = assets_build::unstable::Store::open(&dir.join("target/assets")).unwrap();
    report
        .steps
        .iter()
        .map(|s| {
            let record = s.record.as_ref().unwrap();
            let text = store.get(&record.outputs[0].hash).unwrap();
            let ran = matches!(s.outcome, Outcome::Ran { .. });
            (s.asset.to_string(), String::from_utf8(text).unwrap(), ran)
        })
        .collect()
}

#[test]
fn only_steps_keyed_by_platform_are_told_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::create_dir(dir.path().join("assets")).unwrap();
    for f in ["differs.txt", "same.txt", "dependent.txt"] {
        std::fs::write(dir.path().join("assets").join(f), f).unwrap();
    }
    let host = build(dir.path(), None);
    let told = |v: &[(String, String, bool)]| -> Vec<(String, String)> {
        v.iter().map(|(a, t, _)| (a.clone(), t.clone())).collect()
    };
    let pair = |a: &str, t: &str| (a.to_owned(), t.to_owned());
    assert_eq!(
        told(&host),
        [
            pair("dependent.txt", "-"),
            pair("differs.txt", "-"),
            pair("same.txt", "-")
        ]
    );
    let web = build(dir.path(), Some("wasm32-unknown-unknown"));
    assert_eq!(
        told(&web),
        [
            pair("dependent.txt", "web"),
            pair("differs.txt", "web"),
            pair("same.txt", "-")
        ]
    );
    let ran: Vec<&str> = web.iter().filter(|s| s.2).map(|s| s.0.as_str()).collect();
    assert_eq!(ran, ["dependent.txt", "differs.txt"], "same.txt is shared");
}
