//! Relative references from one resource to another, as files write them.
//!
//! A glTF model names its textures by URI, relative to the model's own
//! file: `"uri": "Leather%20Parts.png"` in `models/FlightHelmet/FlightHelmet.gltf`
//! means the file `models/FlightHelmet/Leather Parts.png`. In a parcel,
//! resources are named by those same paths, so the reference names a
//! resource: [`resolve`] turns the model's name and the URI into it, and
//! [`crate::Parcel::by_uri`] looks it up.
//!
//! The pipeline resolves references with this same function when it
//! decides what a model refers to, so the names agree by construction.
//! A URI that names no resource of the parcel (a scheme such as `data:`
//! or `https:`, a bad escape, a path above the parcel's root) is an
//! error, never a panic: URIs come from untrusted files.

use std::fmt;

/// Why a URI names no resource.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UriError {
    /// It has a scheme (`data:`, `https:`, ...): not a relative reference.
    Scheme(String),
    /// A `%` escape is not two hex digits, or the bytes are not UTF-8.
    BadEscape,
    /// It starts at `/`, or a `..` climbs above the root.
    OutsideRoot,
    /// It is empty, or names a folder (`a/`, `.`, `..`).
    NotAFile,
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UriError::Scheme(scheme) => write!(f, "it is a `{scheme}:` URI, not a relative one"),
            UriError::BadEscape => f.write_str("it has a bad `%` escape or is not UTF-8"),
            UriError::OutsideRoot => f.write_str("it leaves the asset root"),
            UriError::NotAFile => f.write_str("it names no file"),
        }
    }
}

impl std::error::Error for UriError {}

/// The name that `uri`, written in the resource named `base`, refers to:
/// the URI's path, percent-decoded, joined to `base`'s folder, with `.`
/// and `..` resolved. A query or fragment is not part of the name.
///
/// ```
/// use assets_runtime::uri::resolve;
/// let model = "models/FlightHelmet/FlightHelmet.gltf";
/// assert_eq!(
///     resolve(model, "Leather%20Parts.png").unwrap(),
///     "models/FlightHelmet/Leather Parts.png"
/// );
/// assert_eq!(resolve(model, "../shared/rust.png").unwrap(), "models/shared/rust.png");
/// assert!(resolve(model, "data:image/png;base64,AAAA").is_err());
/// ```
pub fn resolve(base: &str, uri: &str) -> Result<String, UriError> {
    if let Some(scheme) = scheme(uri) {
        return Err(UriError::Scheme(scheme.to_owned()));
    }
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let path = String::from_utf8(percent_decode(path)?).map_err(|_| UriError::BadEscape)?;
    if path.starts_with('/') {
        return Err(UriError::OutsideRoot);
    }
    if matches!(path.rsplit('/').next(), Some("" | "." | "..")) {
        return Err(UriError::NotAFile);
    }
    let mut parts: Vec<&str> = base.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or(UriError::OutsideRoot)?;
            }
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// `uri`'s scheme (`data` in `data:...`), if it has one (RFC 3986: a
/// letter, then letters, digits, `+`, `-` or `.`, then `:`).
pub fn scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some(scheme)
}

/// `%20` → space, as URIs write bytes outside their own alphabet.
pub fn percent_decode(s: &str) -> Result<Vec<u8>, UriError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(UriError::BadEscape)?;
            let digit = |b: u8| (b as char).to_digit(16).ok_or(UriError::BadEscape);
            out.push((digit(hex[0])? * 16 + digit(hex[1])?) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_against_the_folder_of_their_resource() {
        let model = "models/FlightHelmet/FlightHelmet.gltf";
        let cases = [
            (
                "Leather%20Parts.png",
                "models/FlightHelmet/Leather Parts.png",
            ),
            ("./tex/a.png", "models/FlightHelmet/tex/a.png"),
            ("../../textures/b.png", "textures/b.png"),
            ("a.png?v=2#frag", "models/FlightHelmet/a.png"),
            ("%C3%A9t%C3%A9.png", "models/FlightHelmet/été.png"),
        ];
        for (uri, name) in cases {
            assert_eq!(resolve(model, uri).as_deref(), Ok(name), "{uri}");
        }
        assert_eq!(resolve("top.gltf", "a.png").as_deref(), Ok("a.png"));
    }

    #[test]
    fn what_names_no_resource_is_an_error() {
        let model = "models/m.gltf";
        let cases = [
            (
                "data:image/png;base64,AAAA",
                UriError::Scheme("data".into()),
            ),
            (
                "https://example.com/a.png",
                UriError::Scheme("https".into()),
            ),
            ("bad%2", UriError::BadEscape),
            ("bad%zz.png", UriError::BadEscape),
            ("%FF.png", UriError::BadEscape),
            ("../../a.png", UriError::OutsideRoot),
            ("", UriError::NotAFile),
            ("#fragment", UriError::NotAFile),
            ("folder/", UriError::NotAFile),
            (".", UriError::NotAFile),
            ("..", UriError::NotAFile),
            ("a/..", UriError::NotAFile),
            ("/etc/passwd", UriError::OutsideRoot),
        ];
        for (uri, error) in cases {
            assert_eq!(resolve(model, uri), Err(error), "{uri}");
        }
        // A colon after a slash is a path, not a scheme.
        assert_eq!(scheme("./a:b.png"), None);
        assert_eq!(scheme("1x:y"), None);
    }
}
