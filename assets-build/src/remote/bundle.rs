//! Bundles: the result entries of one folder's assets in one object, so
//! that a build from an empty local cache makes a request per folder
//! instead of one per asset.
//!
//! ```text
//! cargo-assets bundle 1\n
//! then per member: result key (32 bytes), entry length (u64 LE), the entry
//! ```
//!
//! A game keeps related assets together (a character's frames, a level's
//! tiles), and such a folder is usually unchanged between two builds or
//! changed as a whole, so the folder is the unit. A bundle is named by its
//! members: the hash of each asset's path and [result key], in path order,
//! under `bundle/<key>`. A machine can name a folder's bundle only when it
//! knows every member's result key, which it does when it has no record of
//! any of them (a fresh clone, a new CI runner: exactly when there are many
//! lookups); any edit, addition or removal in the folder names another
//! bundle, so a stale one is never asked for. A folder whose bundle is
//! missing is looked up step by step, as it would be without bundles, and
//! a writing build uploads the bundle once it holds every member's entry.
//!
//! A bundle is untrusted like an entry: lengths must add up exactly, each
//! member is decoded as an entry and used only for the key it is filed
//! under, and every output is checked against its hash before use.
//!
//! [result key]: super::result_key

use crate::hash::ContentHash;

/// The first line of every bundle.
const MAGIC: &[u8] = b"cargo-assets bundle 1\n";

/// The name of the bundle of `members` (asset path and result key, in any
/// order; sorted here).
pub(crate) fn bundle_key(members: &[(&str, ContentHash)]) -> ContentHash {
    let mut sorted: Vec<_> = members.to_vec();
    sorted.sort_unstable();
    let mut h = blake3::Hasher::new();
    h.update(MAGIC);
    for (path, key) in sorted {
        h.update(&(path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update(key.as_bytes());
    }
    ContentHash::from_bytes(*h.finalize().as_bytes())
}

/// A bundle of `entries` (result key and encoded entry).
pub(crate) fn encode(entries: &[(ContentHash, &[u8])]) -> Vec<u8> {
    let total: usize = entries.iter().map(|(_, e)| 40 + e.len()).sum();
    let mut out = Vec::with_capacity(MAGIC.len() + total);
    out.extend_from_slice(MAGIC);
    for (key, entry) in entries {
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&(entry.len() as u64).to_le_bytes());
        out.extend_from_slice(entry);
    }
    out
}

/// The members of a bundle; `None` if it is not one or its lengths do not
/// add up.
pub(crate) fn decode(bytes: &[u8]) -> Option<Vec<(ContentHash, &[u8])>> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut members = Vec::new();
    while !rest.is_empty() {
        let (key, after) = rest.split_first_chunk::<32>()?;
        let (len, after) = after.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if len > after.len() {
            return None;
        }
        let (entry, after) = after.split_at(len);
        members.push((ContentHash::from_bytes(*key), entry));
        rest = after;
    }
    Some(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_round_trip_and_every_truncation_is_refused() {
        let (a, b) = (ContentHash::of(b"a"), ContentHash::of(b"b"));
        let bytes = encode(&[(a, b"first entry"), (b, b"")]);
        let members = decode(&bytes).unwrap();
        assert_eq!(members, vec![(a, &b"first entry"[..]), (b, &b""[..])]);
        for cut in 0..bytes.len() {
            let got = decode(&bytes[..cut]);
            // Cutting exactly after a whole member leaves a valid, shorter
            // bundle; anything else is refused.
            assert!(
                got.is_none() || got.as_ref().is_some_and(|m| m.len() < 2),
                "cut at {cut}"
            );
        }
        assert!(decode(b"cargo-assets result 1\n").is_none());
    }

    #[test]
    fn a_bundle_is_named_by_every_member_whatever_the_order() {
        let (a, b) = (ContentHash::of(b"a"), ContentHash::of(b"b"));
        let key = bundle_key(&[("s/a.png", a), ("s/b.png", b)]);
        assert_eq!(key, bundle_key(&[("s/b.png", b), ("s/a.png", a)]));
        assert_ne!(key, bundle_key(&[("s/a.png", a)]), "a member removed");
        assert_ne!(
            key,
            bundle_key(&[("s/a.png", a), ("s/b.png", a)]),
            "a member changed"
        );
        assert_ne!(
            key,
            bundle_key(&[("s/a.png", a), ("s/c.png", b)]),
            "a member renamed"
        );
    }
}
