use super::*;

fn parse(assets: &str) -> Result<Manifest, ManifestError> {
    let text = format!("[package]\nname = \"game\"\nversion = \"0.1.0\"\n\n{assets}");
    Manifest::parse(Path::new("/p/Cargo.toml"), &text)
}

fn asset(p: &str) -> AssetPath {
    AssetPath::new(p).unwrap()
}

#[test]
fn no_assets_section_means_defaults() {
    let m = parse("").unwrap();
    assert_eq!(
        m.roots,
        vec![AssetRoot {
            name: "assets".into(),
            dir: "/p/assets".into()
        }]
    );
    assert_eq!(m.parcels.len(), 1);
    assert_eq!(m.parcels[0].name, "main");
    assert!(m.parcels[0].contains(&asset("deep/down/x.png")));
    assert_eq!(m.assign(&asset("a/b.PNG"), None).processor, "image");
    assert_eq!(m.assign(&asset("shader.wgsl"), None).processor, "shader");
    assert_eq!(m.assign(&asset("level.bin"), None).processor, "copy");
    assert_eq!(m.assign(&asset("noext"), None).processor, "copy");
}

#[test]
fn first_matching_rule_wins_and_overrides_merge() {
    let m = parse(
        r#"
[package.metadata.assets]
root = ["./art/", "data"]

[[package.metadata.assets.rules]]
match = "ui/*.png"
processor = "copy"
level = 1

[[package.metadata.assets.rules]]
match = "ui/**"
processor = "text"

[package.metadata.assets.overrides."ui/logo.png"]
level = 2
extra = "x"
"#,
    )
    .unwrap();
    assert_eq!(
        m.roots.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["art", "data"]
    );
    let a = m.assign(&asset("ui/button.png"), None);
    assert_eq!(a.processor, "copy");
    assert_eq!(a.settings.canonical_json(), r#"{"level":1}"#);
    // `*` does not cross `/`, so the second rule catches deeper files.
    assert_eq!(m.assign(&asset("ui/deep/x.png"), None).processor, "text");
    let o = m.assign(&asset("ui/logo.png"), None);
    assert_eq!(o.processor, "copy");
    assert_eq!(o.settings.canonical_json(), r#"{"extra":"x","level":2}"#);
    assert_eq!(
        o.origin.unwrap().key,
        "package.metadata.assets.overrides.\"ui/logo.png\""
    );
}

#[test]
fn parcels_take_arrays_or_include_exclude_tables() {
    let m = parse(
        r#"
[package.metadata.assets.parcels]
ui = ["ui/**"]
levels = { include = ["levels/**"], exclude = ["levels/test/**"] }
"#,
    )
    .unwrap();
    let names: Vec<_> = m.parcels.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["levels", "ui"]);
    assert!(m.parcels[0].contains(&asset("levels/a.lvl")));
    assert!(!m.parcels[0].contains(&asset("levels/test/a.lvl")));
    assert!(!m.parcels[1].contains(&asset("levels/a.lvl")));
}

#[test]
fn typed_settings_report_typos_with_a_suggestion() {
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct S {
        premultiply: bool,
    }
    let m = parse("[[package.metadata.assets.rules]]\nmatch = \"*.png\"\npremultiplyy = true\n")
        .unwrap();
    let err = m
        .assign(&asset("a.png"), None)
        .settings
        .get::<S>()
        .unwrap_err();
    assert!(
        err.message.contains("unknown field `premultiplyy`"),
        "{err}"
    );
    assert_eq!(err.help.as_deref(), Some("did you mean `premultiply`?"));
}

/// A bad manifest section and what its error must say:
/// (section, line, key, message part, help part).
type BadCase = (
    &'static str,
    usize,
    Option<&'static str>,
    &'static str,
    Option<&'static str>,
);

const BAD: &[BadCase] = &[
    (
        "[package.metadata.assets]\nrool = \"a\"\n",
        6,
        None,
        "unknown field `rool`",
        Some("did you mean `root`?"),
    ),
    (
        "[package.metadata.assets]\nroot = \"/abs\"\n",
        6,
        Some("package.metadata.assets.root"),
        "asset root `/abs` is not a path inside the package",
        Some("roots are relative to the directory of Cargo.toml"),
    ),
    (
        "[package.metadata.assets]\nroot = \"../..\"\n",
        6,
        Some("package.metadata.assets.root"),
        "asset root `../..` is not a path inside the package",
        Some("escape `cargo package`"),
    ),
    (
        "[package.metadata.assets]\nroot = [\"assets\", \"art/../../../..\"]\n",
        6,
        Some("package.metadata.assets.root"),
        "asset root `art/../../../..` is not a path inside the package",
        Some("move the assets into the package"),
    ),
    (
        "[package.metadata.assets]\nroot = 3\n",
        6,
        Some("package.metadata.assets.root"),
        "expected a relative path",
        None,
    ),
    (
        "[[package.metadata.assets.rules]]\nprocessor = \"copy\"\n",
        5,
        Some("package.metadata.assets.rules[0]"),
        "rule has no `match` key",
        Some("add a glob"),
    ),
    (
        "[[package.metadata.assets.rules]]\nmatch = \"a/[*.png\"\n",
        6,
        Some("package.metadata.assets.rules[0].match"),
        "invalid glob `a/[*.png`",
        None,
    ),
    (
        "[[package.metadata.assets.rules]]\nmatch = \"*\"\nprocessor = 7\n",
        7,
        Some("package.metadata.assets.rules[0].processor"),
        "expected a string, found integer",
        Some(
            "name one processor, `processor = \"image\"`, or a chain whose stages each take \
             the one before's output, `processor = [\"command\", \"image\"]`",
        ),
    ),
    (
        "[package.metadata.assets.parcels]\n\"9lives\" = [\"**\"]\n",
        6,
        Some("package.metadata.assets.parcels.9lives"),
        "invalid parcel name `9lives`",
        Some("start with a letter"),
    ),
    (
        "[package.metadata.assets.parcels]\nmain = { include = [\"**\"], exlude = [] }\n",
        6,
        Some("package.metadata.assets.parcels.main"),
        "unknown key `exlude` in parcel",
        Some("did you mean `exclude`?"),
    ),
    (
        "[package.metadata.assets.parcels]\nmain = []\n",
        6,
        Some("package.metadata.assets.parcels.main"),
        "parcel `main` includes nothing",
        Some("list globs"),
    ),
    (
        "[package.metadata.assets.atlases.ui]\nmax-size = \"big\"\n",
        6,
        None,
        "invalid type: string \"big\", expected u32",
        None,
    ),
    (
        "[package.metadata.assets.overrides.\"../x.png\"]\na = 1\n",
        5,
        Some("package.metadata.assets.overrides.\"../x.png\""),
        "invalid asset path in override",
        None,
    ),
    ("[package.metadata.assets\n", 5, None, "", None),
];

#[test]
fn bad_manifests_name_line_key_and_fix() {
    for &(section, line, key, text, help) in BAD {
        let err = parse(section).expect_err(section);
        assert_eq!(err.line, Some(line), "{section}\n{err}");
        assert_eq!(err.key.as_deref(), key, "{section}\n{err}");
        assert!(err.message.contains(text), "{section}\n{err}");
        match help {
            Some(h) => assert!(
                err.help.as_deref().is_some_and(|x| x.contains(h)),
                "{section}\n{err}"
            ),
            None => assert_eq!(err.help, None, "{section}\n{err}"),
        }
        assert!(err.to_string().contains("/p/Cargo.toml:"), "{err}");
    }
}

#[test]
fn a_manifest_without_package_is_an_error() {
    let err = Manifest::parse(Path::new("Cargo.toml"), "[workspace]\n").unwrap_err();
    assert!(err.message.contains("no `[package]` table"));
}
