//! [`ContentHash`]: the blake3 hash that names blobs and pins inputs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The blake3 hash of some bytes. Written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ContentHash([u8; 32]);

/// A map's hasher is fed the first eight bytes, not all 32: they are
/// already a uniform hash, and a parcel stage puts 10,000 of them in a set
/// on every watched edit. (Equal hashes have equal first bytes, as `Hash`
/// requires.)
impl std::hash::Hash for ContentHash {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let [a, b, c, d, e, f, g, h, ..] = self.0;
        state.write_u64(u64::from_le_bytes([a, b, c, d, e, f, g, h]));
    }
}

impl ContentHash {
    /// Hashes `bytes`.
    pub fn of(bytes: &[u8]) -> ContentHash {
        ContentHash(*blake3::hash(bytes).as_bytes())
    }

    /// The hash whose raw bytes are `bytes`.
    pub fn from_bytes(bytes: [u8; 32]) -> ContentHash {
        ContentHash(bytes)
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The hash as 64 hex digits.
    pub fn to_hex(&self) -> String {
        self.hex().to_string()
    }

    /// The 64 hex digits, without allocating. Records hold thousands of
    /// hashes, so this is on the path of every record written (and a
    /// parcel's `.sums` lines, a million at 1M assets, of every watched
    /// edit: blake3's own `to_hex`, pushing one checked char at a time,
    /// was 60 ms of such an edit).
    pub(crate) fn hex(&self) -> Hex {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0; 64];
        for (pair, byte) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        Hex(out)
    }
}

/// A hash's 64 lowercase hex digits ([`ContentHash::hex`]).
pub(crate) struct Hex([u8; 64]);

impl std::ops::Deref for Hex {
    type Target = str;

    fn deref(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

impl From<blake3::Hash> for ContentHash {
    fn from(h: blake3::Hash) -> Self {
        ContentHash(*h.as_bytes())
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
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
        // A no-op build parses every hash of every record: a table lookup
        // per digit, one check at the end.
        const INVALID: u8 = 0xff;
        const NIBBLES: [u8; 256] = {
            let mut table = [INVALID; 256];
            let mut c = 0;
            while c < 256 {
                table[c] = match c as u8 {
                    b @ b'0'..=b'9' => b - b'0',
                    b @ b'a'..=b'f' => b - b'a' + 10,
                    b @ b'A'..=b'F' => b - b'A' + 10,
                    _ => INVALID,
                };
                c += 1;
            }
            table
        };
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(ParseHashError(s.to_owned()));
        }
        let mut out = [0u8; 32];
        let mut invalid = 0;
        for (byte, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let (hi, lo) = (NIBBLES[usize::from(pair[0])], NIBBLES[usize::from(pair[1])]);
            invalid |= hi | lo;
            *byte = (hi << 4) | (lo & 0xf);
        }
        if invalid == INVALID {
            return Err(ParseHashError(s.to_owned()));
        }
        Ok(ContentHash(out))
    }
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
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
        assert_eq!(h.to_hex().to_uppercase().parse::<ContentHash>().unwrap(), h);
        for at in [0, 1, 31, 63] {
            let mut bad = h.to_hex().into_bytes();
            bad[at] = b'g';
            let bad = String::from_utf8(bad).unwrap();
            assert!(bad.parse::<ContentHash>().is_err(), "{bad}");
        }
        assert_eq!(format!("{h}"), h.to_hex());
        assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{h}\""));
        // The same digits as BLAKE3's own encoding, every nibble value seen.
        for bytes in [[0u8; 32], [0xff; 32], *h.as_bytes(), std::array::from_fn(|i| i as u8 * 8)] {
            let h = ContentHash::from_bytes(bytes);
            assert_eq!(&*h.hex(), blake3::Hash::from_bytes(bytes).to_hex().as_str());
        }
    }
}
