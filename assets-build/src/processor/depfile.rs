//! Makefile-style depfiles, as `gcc -MD`, `clang -MD`, `glslc -MD` and many
//! asset tools write them, and as ninja reads them:
//!
//! ```text
//! out/level.bin: assets/levels/one.lvl \
//!   assets/tiles/grass\ tile.png assets/palette.txt
//! ```
//!
//! Every rule's prerequisites are returned in order, without repeats; the
//! targets (before each `:`) are ignored, since the step already knows its
//! outputs. Escapes follow what these tools write: `\ ` is a space in a
//! name, `\#` a `#`, `$$` a `$`, and a backslash before a newline continues
//! the line. A `:` ends the targets only when followed by whitespace or the
//! end of the line, so `C:\path` on Windows stays one name.

/// The prerequisites listed in `text`, in order of first appearance.
pub fn prerequisites(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_targets = true;
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(' ' | '#' | '\\') => word.push(chars.next().expect("peeked")),
                Some('\n') => {
                    chars.next();
                    push(&mut word, in_targets, &mut out);
                }
                Some('\r') => {
                    chars.next();
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    push(&mut word, in_targets, &mut out);
                }
                _ => word.push('\\'),
            },
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            ':' if in_targets && chars.peek().is_none_or(|n| n.is_whitespace()) => {
                word.clear();
                in_targets = false;
            }
            '\n' => {
                push(&mut word, in_targets, &mut out);
                in_targets = true;
            }
            c if c.is_whitespace() => push(&mut word, in_targets, &mut out),
            c => word.push(c),
        }
    }
    push(&mut word, in_targets, &mut out);
    out
}

/// Ends `word`: a prerequisite when past the targets, new to `out`.
fn push(word: &mut String, in_targets: bool, out: &mut Vec<String>) {
    if !word.is_empty() && !in_targets && !out.contains(word) {
        out.push(std::mem::take(word));
    }
    word.clear();
}

#[cfg(test)]
mod tests {
    use super::prerequisites;

    #[test]
    fn gcc_style_depfiles_are_read() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("one rule", "out.o: a.c b.h\n", &["a.c", "b.h"]),
            (
                "continued lines",
                "out.o: a.c \\\n  b.h \\\r\n  c.h\n",
                &["a.c", "b.h", "c.h"],
            ),
            (
                "escaped space, hash and dollar",
                "out: my\\ file.png x\\#1 cost$$.txt\n",
                &["my file.png", "x#1", "cost$.txt"],
            ),
            (
                "several rules, repeats once",
                "a.o: x.h y.h\nb.o: y.h z.h\n\n",
                &["x.h", "y.h", "z.h"],
            ),
            ("several targets", "a b: c\n", &["c"]),
            (
                "a drive letter is not a separator",
                "out: C:\\x\\y.h\n",
                &["C:\\x\\y.h"],
            ),
            ("no trailing newline", "out: a", &["a"]),
            ("empty prerequisites (gcc -MP phony rules)", "a.h:\n", &[]),
            ("nothing", "", &[]),
        ];
        for &(what, text, expected) in cases {
            assert_eq!(prerequisites(text), expected, "{what}");
        }
    }
}
