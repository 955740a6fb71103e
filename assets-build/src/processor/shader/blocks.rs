//! WESL conditional groups, decided before linking: `@if(expr) { ... }`,
//! then any `@elif(expr) ...` and `@else ...`, each a braced group or the
//! one item it is written on, at module scope or in a function.
//!
//! The linker we use (the `wesl` crate at the release our toolchain builds)
//! takes `@if`/`@elif`/`@else` on single declarations, members and
//! statements, but not on a braced group, which Bevy's shaders use
//! throughout. So a chain with a group in it is decided here, with the same
//! features: the chosen branch's text is kept, a group without its braces
//! (its items are spliced into what holds it, so a `let` inside one is seen
//! after it, as Bevy's shaders rely on), and every other branch is blanked.
//! Blanking keeps each newline, so a line of the result is the same line of
//! the source, and errors point where they should. A chain of single items
//! is left to the linker.
//!
//! An expression holds feature names, `true`, `false`, `!`, `&&`, `||` and
//! parentheses; a feature not enabled is off, as WESL says. One that does
//! not parse is an error naming its line.

use std::collections::BTreeSet;

/// `text` with its conditional blocks decided for the `enabled` features.
pub(super) fn decide(text: &str, enabled: &BTreeSet<String>) -> Result<String, String> {
    let mut out = text.as_bytes().to_vec();
    scan(text, 0, text.len(), enabled, &mut out)?;
    // Only whole ASCII spans were blanked, and `@`, braces and newlines
    // are ASCII, so what is left is still UTF-8.
    String::from_utf8(out).map_err(|_| "not UTF-8 after deciding `@if` blocks".to_owned())
}

/// Decides the chains in `text[from..to]`.
fn scan(
    text: &str,
    from: usize,
    to: usize,
    enabled: &BTreeSet<String>,
    out: &mut [u8],
) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < to {
        if let Some(next) = past_comment(bytes, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b'@' if word_at(bytes, i + 1) == "if" => {
                let at = |e: String| format!("line {}: {e}", line_of(text, i));
                if let Some(chain) = chain_at(bytes, i).map_err(at)? {
                    let mut kept = None;
                    for branch in &chain.branches {
                        let on = match &branch.condition {
                            Some((a, b)) => {
                                let expr = &text[*a..*b];
                                evaluate(expr, enabled).map_err(|e| at(format!("`{expr}`: {e}")))?
                            }
                            None => true,
                        };
                        if on {
                            kept = Some(branch);
                            break;
                        }
                    }
                    blank(out, i, chain.end);
                    if let Some(b) = kept {
                        // The kept branch's text comes back, without the
                        // group's braces: WESL's groups splice their items
                        // into what holds them (a `let` inside one is seen
                        // after it, as Bevy's shaders rely on).
                        let (from, to) = b.keep;
                        out[from..to].copy_from_slice(&bytes[from..to]);
                        scan(text, from, to, enabled, out)?;
                    }
                    i = chain.end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// An `@if` and the `@elif`s and `@else` after it.
struct Chain {
    branches: Vec<Branch>,
    /// Just past the last branch.
    end: usize,
}

struct Branch {
    /// The expression's span; `None` for `@else`.
    condition: Option<(usize, usize)>,
    /// What the branch keeps: a group's inside, or the one item it is on.
    keep: (usize, usize),
}

/// The chain starting with the `@if` at `at`, if one of its branches is a
/// braced group; `None` for a chain of single items, left to the linker.
fn chain_at(bytes: &[u8], at: usize) -> Result<Option<Chain>, String> {
    let mut branches = Vec::new();
    let mut braced = false;
    let mut i = at;
    let mut end = at;
    loop {
        let word = word_at(bytes, i + 1);
        let condition = match word {
            "if" if branches.is_empty() => true,
            "elif" if !branches.is_empty() => true,
            "else" if !branches.is_empty() => false,
            _ => break,
        };
        let mut j = i + 1 + word.len();
        let span = if condition {
            j = skip_space(bytes, j);
            if bytes.get(j) != Some(&b'(') {
                return Err(format!("`@{word}` without a condition in parentheses"));
            }
            let close = matching(bytes, j, b'(', b')')
                .ok_or_else(|| format!("`@{word}(` is never closed"))?;
            let span = (j + 1, close);
            j = close + 1;
            Some(span)
        } else {
            None
        };
        j = skip_space(bytes, j);
        let keep = if bytes.get(j) == Some(&b'{') {
            braced = true;
            let close = matching(bytes, j, b'{', b'}')
                .ok_or_else(|| format!("`@{word}`'s `{{` is never closed"))?;
            end = close + 1;
            (j + 1, close)
        } else {
            end = item_end(bytes, j);
            (j, end)
        };
        branches.push(Branch {
            condition: span,
            keep,
        });
        let next = skip_space(bytes, end);
        if !condition || bytes.get(next) != Some(&b'@') {
            break;
        }
        i = next;
    }
    Ok(braced.then_some(Chain { branches, end }))
}

/// Just past the one item starting at `i`: a statement or declaration up
/// to its `;`, a member up to its `,`, a function or struct up to its `}`
/// (and a `;` after it), or up to the `}` closing what holds it.
fn item_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < bytes.len() {
        if let Some(next) = past_comment(bytes, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' if depth > 0 => depth -= 1,
            b'}' if depth == 0 => return i,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    let after = skip_space(bytes, i + 1);
                    return if bytes.get(after) == Some(&b';') { after + 1 } else { i + 1 };
                }
            }
            b';' | b',' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The identifier starting at `i` (empty if none).
fn word_at(bytes: &[u8], i: usize) -> &str {
    let end = bytes[i.min(bytes.len())..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(bytes.len(), |n| i + n);
    std::str::from_utf8(&bytes[i.min(end)..end]).unwrap_or("")
}

/// Past whitespace and comments from `i`.
fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    loop {
        if let Some(next) = past_comment(bytes, i) {
            i = next;
        } else if bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        } else {
            return i;
        }
    }
}

/// Past the comment starting at `i`, if one does.
fn past_comment(bytes: &[u8], i: usize) -> Option<usize> {
    match (bytes.get(i), bytes.get(i + 1)) {
        (Some(b'/'), Some(b'/')) => Some(line_end(bytes, i)),
        (Some(b'/'), Some(b'*')) => Some(block_comment_end(bytes, i)),
        _ => None,
    }
}

/// The `close` matching the `open` at `at`, comments skipped.
fn matching(bytes: &[u8], at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < bytes.len() {
        if let Some(next) = past_comment(bytes, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b if b == open => depth += 1,
            b if b == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn line_end(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |n| i + n)
}

/// Past the `*/` closing the comment opened at `i` (WGSL's nest).
fn block_comment_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Spaces over `out[from..to]`, newlines kept.
fn blank(out: &mut [u8], from: usize, to: usize) {
    for b in &mut out[from..to] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// The value of a condition: features, `true`, `false`, `!`, `&&`, `||`,
/// parentheses.
fn evaluate(expr: &str, enabled: &BTreeSet<String>) -> Result<bool, String> {
    let tokens = tokens(expr)?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        enabled,
    };
    let value = parser.or()?;
    match parser.tokens.get(parser.at) {
        None => Ok(value),
        Some(t) => Err(format!("unexpected `{t}`")),
    }
}

fn tokens(expr: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = expr.trim_start();
    while let Some(c) = rest.chars().next() {
        let len = if rest.starts_with("&&") || rest.starts_with("||") {
            2
        } else if matches!(c, '!' | '(' | ')') {
            1
        } else if c.is_ascii_alphanumeric() || c == '_' {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        } else {
            return Err(format!("`{c}` is not part of a feature condition"));
        };
        out.push(&rest[..len]);
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [&'a str],
    at: usize,
    enabled: &'a BTreeSet<String>,
}

impl Parser<'_> {
    fn or(&mut self) -> Result<bool, String> {
        let mut value = self.and()?;
        while self.eat("||") {
            value |= self.and()?;
        }
        Ok(value)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut value = self.not()?;
        while self.eat("&&") {
            value &= self.not()?;
        }
        Ok(value)
    }

    fn not(&mut self) -> Result<bool, String> {
        if self.eat("!") {
            return Ok(!self.not()?);
        }
        if self.eat("(") {
            let value = self.or()?;
            if !self.eat(")") {
                return Err("a `(` is never closed".into());
            }
            return Ok(value);
        }
        match self.tokens.get(self.at) {
            Some(&"true") => {
                self.at += 1;
                Ok(true)
            }
            Some(&"false") => {
                self.at += 1;
                Ok(false)
            }
            Some(t) if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                self.at += 1;
                Ok(self.enabled.contains(*t))
            }
            Some(t) => Err(format!("unexpected `{t}`")),
            None => Err("the condition ends early".into()),
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.tokens.get(self.at) == Some(&token) {
            self.at += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn module_scope_groups_lose_their_braces_and_keep_their_lines() {
        let text = "@if(A) {\nvar<uniform> a: f32;\n} @elif(B && !A) {\nvar<uniform> b: f32;\n} @else {\nvar<uniform> c: f32;\n}\nfn f() {}\n";
        let a = decide(text, &on(&["A"])).unwrap();
        assert!(a.contains("var<uniform> a") && !a.contains(" b:") && !a.contains(" c:"));
        assert_eq!(a.matches('{').count(), 1);
        assert_eq!(a.lines().count(), text.lines().count());
        let b = decide(text, &on(&["B"])).unwrap();
        assert!(b.contains("var<uniform> b") && !b.contains(" a:"));
        let c = decide(text, &on(&[])).unwrap();
        assert!(c.contains("var<uniform> c") && !c.contains(" b:"));
        assert_eq!(c.lines().position(|l| l.contains(" c:")), Some(5));
    }

    #[test]
    fn groups_in_functions_splice_their_statements_and_nest() {
        let text = "fn f() -> f32 {\n  @if(A) {\n    @if(B) { let x = 2.0; } @else { let x = 3.0; }\n  }\n  @else\n  let x = 1.0;\n  return x;\n}\n";
        let ab = decide(text, &on(&["A", "B"])).unwrap();
        assert!(ab.contains("let x = 2.0;") && !ab.contains("3.0") && !ab.contains("1.0"));
        assert_eq!(ab.matches('{').count(), 1);
        let a = decide(text, &on(&["A"])).unwrap();
        assert!(a.contains("let x = 3.0;") && !a.contains("2.0") && !a.contains("1.0"));
        let none = decide(text, &on(&[])).unwrap();
        assert!(none.contains("let x = 1.0;") && !none.contains("2.0") && !none.contains("3.0"));
        assert!(none.contains("return x;"));
        assert_eq!(none.lines().count(), text.lines().count());
    }

    #[test]
    fn an_if_on_one_declaration_and_commented_groups_are_left_alone() {
        let text = "@if(A) var<uniform> a: f32;\n@else var<uniform> a: i32;\n// @if(B) { var b: f32; }\n/* @if(C) { } */\n";
        assert_eq!(decide(text, &on(&[])).unwrap(), text);
    }

    #[test]
    fn a_condition_that_does_not_parse_names_its_line() {
        let err = decide("\n@if(A +) {\n}\n", &on(&[])).unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
        let err = decide("@if(A) {\n", &on(&[])).unwrap_err();
        assert!(err.contains("never closed"), "{err}");
    }
}
