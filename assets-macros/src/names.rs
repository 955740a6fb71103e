//! From resource names to Rust paths: folders to modules, files to constants.

/// Rust keywords (strict and reserved) that a module may not be named.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// `name`'s module path and constant: `sprites/ui/hero-idle.png` →
/// (`["sprites", "ui"]`, `HERO_IDLE`); `levels/one.lvl#collision` →
/// (`["levels"]`, `ONE_COLLISION`).
pub fn rust_path(name: &str) -> (Vec<String>, String) {
    let (path, label) = match name.split_once('#') {
        Some((p, l)) => (p, Some(l)),
        None => (name, None),
    };
    let mut parts: Vec<&str> = path.split('/').collect();
    let file = parts.pop().unwrap_or_default();
    let stem = match file.rfind('.') {
        Some(i) if i > 0 => &file[..i],
        _ => file,
    };
    let mut constant = identifier(stem).to_ascii_uppercase();
    if let Some(label) = label {
        constant = format!("{constant}_{}", identifier(label).to_ascii_uppercase());
    }
    let modules = parts.iter().map(|p| module(p)).collect();
    (modules, constant)
}

fn module(part: &str) -> String {
    let m = identifier(part).to_ascii_lowercase();
    if KEYWORDS.contains(&m.as_str()) {
        format!("{m}_")
    } else {
        m
    }
}

/// ASCII letters, digits and `_`; anything else becomes `_`; never empty,
/// never starting with a digit.
fn identifier(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
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
            (".hidden", &[], "_HIDDEN"),
            ("levels/one.lvl#collision", &["levels"], "ONE_COLLISION"),
            ("héros.png", &[], "H_ROS"),
        ];
        for &(name, modules, constant) in cases {
            let (m, c) = rust_path(name);
            assert_eq!(
                (
                    m.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                    c.as_str()
                ),
                (modules, constant),
                "{name}"
            );
        }
    }
}
