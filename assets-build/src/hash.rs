//! [`ContentHash`]: the blake3 hash that names blobs and pins inputs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The blake3 hash of some bytes. Written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// Hashes `bytes`.
    pub fn of(bytes: &[u8]) -> ContentHash {
        ContentHash(*blake3::hash(bytes).as_bytes())
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The hash as 64 hex digits.
    pub fn to_hex(&self) -> String {
        self.to_string()
    }
}

impl From<blake3::Hash> for ContentHash {
    fn from(h: blake3::Hash) -> Self {
        ContentHash(*h.as_bytes())
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

/// The error for a string that is not 64 hex digits.
#[derive(Debug, thiserror::Error)]
#[error("invalid content hash `{0}`: expected 64 hex digits")]
pub struct ParseHashError(String);

impl FromStr for ContentHash {
    type Err = ParseHashError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        fn nibble(c: u8) -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                b'A'..=b'F' => Some(c - b'A' + 10),
                _ => None,
            }
        }
        let err = || ParseHashError(s.to_owned());
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(err());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            let (hi, lo) = (nibble(bytes[2 * i]), nibble(bytes[2 * i + 1]));
            *byte = (hi.ok_or_else(err)? << 4) | lo.ok_or_else(err)?;
        }
        Ok(ContentHash(out))
    }
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContentHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <&str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let h = ContentHash::of(b"hello");
        assert_eq!(h.to_hex().len(), 64);
        assert_eq!(h.to_hex().parse::<ContentHash>().unwrap(), h);
        assert!("xyz".parse::<ContentHash>().is_err());
        assert!("é".repeat(32).parse::<ContentHash>().is_err());
    }
}
