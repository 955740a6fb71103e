//! A tile layer's cells as Tiled stores them: a JSON array of gids, CSV
//! text, or base64 of little-endian u32s, raw or compressed with zlib, gzip
//! or zstd. The layer declares how many cells it has; decoding stops one
//! byte past what they take, so a small file cannot inflate into a large
//! allocation, and any other count is an error that says both numbers.

use std::io::Read;

use serde_json::Value;

/// The `n` cells of `data`, stored with `(encoding, compression)`.
pub(super) fn decode(
    data: &Value,
    (encoding, compression): (&str, &str),
    n: usize,
) -> Result<Vec<u32>, String> {
    let cells = match (data, encoding) {
        (Value::Array(items), _) => items
            .iter()
            .map(gid)
            .collect::<Result<Vec<u32>, String>>()?,
        (Value::String(text), "csv") => (text.split(',').map(str::trim))
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse()
                    .map_err(|_| format!("`{t}` in the CSV cells is not a tile id"))
            })
            .collect::<Result<Vec<u32>, String>>()?,
        (Value::String(text), "base64") => {
            let packed = base64(text)?;
            let bytes = match compression {
                "" => packed,
                "zlib" => bounded(flate2::read::ZlibDecoder::new(&packed[..]), n * 4)?,
                "gzip" => bounded(flate2::read::GzDecoder::new(&packed[..]), n * 4)?,
                "zstd" => {
                    let decoder = ruzstd::decoding::StreamingDecoder::new(&packed[..])
                        .map_err(|e| format!("the cells' zstd data is corrupt ({e})"))?;
                    bounded(decoder, n * 4)?
                }
                other => {
                    return Err(format!(
                        "cell compression `{other}` is not one Tiled writes (zlib, gzip, zstd)"
                    ));
                }
            };
            if bytes.len() % 4 != 0 {
                return Err(format!(
                    "the cells decode to {} bytes, not a whole number of 4-byte tile ids",
                    bytes.len()
                ));
            }
            (bytes.chunks_exact(4))
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        }
        (Value::String(text), "") if text.trim().is_empty() => Vec::new(),
        (Value::Null, _) => Vec::new(),
        (_, other) => {
            return Err(format!(
                "cell encoding `{other}` is not one Tiled writes (csv, base64)"
            ));
        }
    };
    if cells.len() != n {
        return Err(format!(
            "the layer has {} cells where its size says {n}",
            cells.len()
        ));
    }
    Ok(cells)
}

fn gid(value: &Value) -> Result<u32, String> {
    let parsed = match value {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    parsed.ok_or_else(|| format!("`{value}` is not a tile id"))
}

/// Reads at most `limit` bytes and one more, so a longer stream is seen to
/// be one without being inflated whole.
fn bounded(reader: impl Read, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    (reader.take(limit as u64 + 1))
        .read_to_end(&mut out)
        .map_err(|e| format!("the cells' compressed data is corrupt ({e})"))?;
    Ok(out)
}

/// Standard base64 (Tiled's), whitespace ignored.
fn base64(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits, mut padding) = (0u32, 0, 0);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            _ => return Err(format!("`{}` is not a base64 character", c as char)),
        };
        if padding > 0 {
            return Err("base64 data goes on after its padding".into());
        }
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn encode64(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn every_encoding_tiled_writes_gives_the_same_cells() {
        let cells: Vec<u32> = vec![1, 0, 0x8000_0003, 70000, 2, 5];
        let raw: Vec<u8> = cells.iter().flat_map(|c| c.to_le_bytes()).collect();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(&raw).unwrap();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(&raw).unwrap();
        // One zstd frame holding one raw block: the content size in one
        // byte (single segment), then the block header, then the bytes.
        let mut zstd = vec![0x28, 0xb5, 0x2f, 0xfd, 0x20, raw.len() as u8];
        zstd.extend_from_slice(&(1 | (raw.len() as u32) << 3).to_le_bytes()[..3]);
        zstd.extend_from_slice(&raw);
        let csv = "1,0,2147483651,\n70000,2,5\n";
        let array: Value = serde_json::json!([1, 0, 2147483651u32, "70000", 2, 5]);
        assert_eq!(decode(&array, ("", ""), 6).unwrap(), cells);
        assert_eq!(decode(&csv.into(), ("csv", ""), 6).unwrap(), cells);
        for (packed, compression) in [
            (raw.clone(), ""),
            (zlib.finish().unwrap(), "zlib"),
            (gzip.finish().unwrap(), "gzip"),
            (zstd, "zstd"),
        ] {
            let text = format!("\n   {}\n", encode64(&packed));
            assert_eq!(
                decode(&text.into(), ("base64", compression), 6).unwrap(),
                cells,
                "{compression}"
            );
        }
        let err = decode(&csv.into(), ("csv", ""), 8).unwrap_err();
        assert_eq!(err, "the layer has 6 cells where its size says 8");
        assert!(
            decode(&"AAAA!".into(), ("base64", ""), 1)
                .unwrap_err()
                .contains("`!`")
        );
        assert!(
            decode(&"AAAA".into(), ("base64", "lzma"), 1)
                .unwrap_err()
                .contains("lzma")
        );
        assert!(decode(&"eJzz".into(), ("base64", "zlib"), 1).is_err());
    }

    #[test]
    fn a_stream_that_inflates_past_the_layer_stops_there() {
        // 64 MiB of zeros in a few KB of zlib, for a layer of 4 cells.
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        zlib.write_all(&vec![0; 64 << 20]).unwrap();
        let text = encode64(&zlib.finish().unwrap());
        let err = decode(&text.into(), ("base64", "zlib"), 4).unwrap_err();
        assert_eq!(
            err,
            "the cells decode to 17 bytes, not a whole number of 4-byte tile ids"
        );
    }
}
