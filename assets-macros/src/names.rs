//! From resource names to Rust paths: folders to modules, files to constants.
//!
//! | resource                                   | path                                   |
//! |--------------------------------------------|----------------------------------------|
//! | `sprites/hero-idle.png`                    | `sprites::HERO_IDLE`                   |
//! | `models/FlightHelmet/FlightHelmet.gltf`    | `models::flight_helmet::FLIGHT_HELMET` |
//! | `ui/OK Button.png`                         | `ui::OK_BUTTON`                        |
//! | `1st/2nd.txt`                              | `_1st::_2ND`                           |
//! | `type/mod.rs`                              | `type_::MOD`                           |
//! | `levels/one.lvl#collision`                 | `levels::ONE_COLLISION`                |
//! | `branding/logo.png` + `branding/logo.svg`  | `branding::LOGO_PNG`, `branding::LOGO_SVG` |
//!
//! Words are split the way `heck` splits them (case changes, `-`, `_`,
//! spaces, dots; a digit stays with the word before it: `Texture2D` →
//! `TEXTURE2_D`). Characters that are not ASCII letters or digits separate
//! words too. Modules are `snake_case` (a keyword gets a trailing `_`),
//! constants `UPPER_SNAKE_CASE` of the file stem; a name starting with a
//! digit, or with no letters at all, gets a leading `_`. When two files of
//! one folder would get one constant, each carries its extension instead.

use heck::{ToShoutySnakeCase, ToSnakeCase};

/// Rust keywords (strict and reserved) that a module may not be named.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// A resource name taken apart: `sprites/ui/hero-idle.png#glow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustName {
    /// Module per folder: `["sprites", "ui"]`.
    pub modules: Vec<String>,
    /// The file's name as written: `hero-idle.png`.
    pub file: String,
    stem: String,
    extension: Option<String>,
    label: Option<String>,
}

impl RustName {
    /// Splits `name` into its folders, file, stem, extension and label.
    pub fn new(name: &str) -> RustName {
        let (path, label) = match name.split_once('#') {
            Some((p, l)) => (p, Some(l.to_owned())),
            None => (name, None),
        };
        let mut parts: Vec<&str> = path.split('/').collect();
        let file = parts.pop().unwrap_or_default();
        let (stem, extension) = match file.rfind('.') {
            Some(i) if i > 0 => (&file[..i], Some(file[i + 1..].to_owned())),
            _ => (file, None),
        };
        RustName {
            modules: parts.iter().map(|p| module(p)).collect(),
            file: file.to_owned(),
            stem: stem.to_owned(),
            extension,
            label,
        }
    }

    /// The constant: `HERO_IDLE_GLOW`; with `with_extension`,
    /// `HERO_IDLE_PNG_GLOW`.
    pub fn constant(&self, with_extension: bool) -> String {
        let mut words = self.stem.clone();
        if let Some(ext) = self.extension.as_ref().filter(|_| with_extension) {
            words = format!("{words} {ext}");
        }
        if let Some(label) = &self.label {
            words = format!("{words} {label}");
        }
        identifier(&words, |w| w.to_shouty_snake_case())
    }
}

fn module(part: &str) -> String {
    let m = identifier(part, |w| w.to_snake_case());
    if KEYWORDS.contains(&m.as_str()) {
        format!("{m}_")
    } else {
        m
    }
}

/// `case` applied to `s` with every character other than ASCII letters and
/// digits turned into a word break; never empty, never starting with a digit.
fn identifier(s: &str, case: impl Fn(&str) -> String) -> String {
    let words: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut out = case(&words);
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_modules_and_constants_predictably() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("sprites/hero-idle.png", &["sprites"], "HERO_IDLE"),
            ("ui/Buttons/OK.png", &["ui", "buttons"], "OK"),
            ("level1.json", &[], "LEVEL1"),
            ("1st/2nd.txt", &["_1st"], "_2ND"),
            ("type/mod.rs", &["type_"], "MOD"),
            ("a b/c.d.e", &["a_b"], "C_D"),
            (".hidden", &[], "HIDDEN"),
            ("levels/one.lvl#collision", &["levels"], "ONE_COLLISION"),
            ("héros.png", &[], "H_ROS"),
            (
                "models/FlightHelmet/FlightHelmet_Materials_LeatherPartsMat_BaseColor.png",
                &["models", "flight_helmet"],
                "FLIGHT_HELMET_MATERIALS_LEATHER_PARTS_MAT_BASE_COLOR",
            ),
            ("UI/HTTPServer.json", &["ui"], "HTTP_SERVER"),
            ("x/Player2Idle.png", &["x"], "PLAYER2_IDLE"),
            ("sounds/Game Over (loud).ogg", &["sounds"], "GAME_OVER_LOUD"),
            ("x/___.txt", &["x"], "_"),
        ];
        for &(name, modules, constant) in cases {
            let n = RustName::new(name);
            assert_eq!(
                (
                    n.modules
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .as_slice(),
                    n.constant(false).as_str()
                ),
                (modules, constant),
                "{name}"
            );
        }
    }

    #[test]
    fn the_extension_goes_before_the_label() {
        let n = RustName::new("maps/One.lvl#collision");
        assert_eq!(n.constant(true), "ONE_LVL_COLLISION");
        assert_eq!(n.file, "One.lvl");
        assert_eq!(RustName::new("noext").constant(true), "NOEXT");
    }
}
