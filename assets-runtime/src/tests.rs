//! Round trips, the pinned header layout, and hostile input.

use std::borrow::Cow;

use crate::Compression;
use crate::format::{ENTRY_LEN, HEADER_LEN, table_checksum, u64_at};
use crate::image::{Encoding, ImageHeader, PixelFormat};
use crate::write::ParcelWriter;
use crate::{Parcel, ParcelBuf, ParcelError, ResourceId};

fn image_bytes(w: u32, h: u32) -> Vec<u8> {
    let header = ImageHeader {
        width: w,
        height: h,
        format: PixelFormat::Rgba8,
        encoding: Encoding::Raw,
    };
    let mut out = header.encode().to_vec();
    out.extend((0..w * h * 4).map(|i| i as u8));
    out
}

/// Reads every view of `r`, pixels included (when they fit in 64 MiB, as a
/// game reading untrusted parcels would limit them).
fn read_all(r: &crate::Resource<'_>) {
    let _ = r.verify();
    if r.len() <= 64 << 20 {
        if let Ok(bytes) = r.bytes() {
            assert_eq!(bytes.len() as u64, r.len());
        }
        let _ = r.text();
    }
    if let Some(image) = r.image()
        && image.header.raw_len().is_some_and(|n| n <= 64 << 20)
        && let Ok(rows) = image.pixels()
    {
        assert_eq!(Some(rows.len()), image.header.raw_len());
    }
}

/// The bytes of a `w`×`h` image resource whose rows are compressed with `encoding`.
fn compressed_image_bytes(w: u32, h: u32, encoding: Encoding) -> Vec<u8> {
    let rows: Vec<u8> = (0..w * h * 4).map(|i| (i / 16) as u8).collect();
    let header = ImageHeader {
        width: w,
        height: h,
        format: PixelFormat::Rgba8,
        encoding,
    };
    let mut out = header.encode().to_vec();
    out.extend(crate::image::encode_pixels(encoding, &rows).unwrap());
    out
}

/// A story long and repetitive enough to be worth compressing.
const STORY: &str =
    "Once upon a time a sprite was packed. Once upon a time a sprite was packed again.\n";

fn sample() -> Vec<u8> {
    sample_with(Compression::None)
}

/// The sample parcel with its compressible resources compressed.
fn sample_with(compression: Compression) -> Vec<u8> {
    let mut w = ParcelWriter::compressed(compression);
    w.add("greeting.txt", "text", b"hello\n".to_vec());
    w.add("story.txt", "text", STORY.repeat(4).into_bytes());
    w.add("levels/two.lvl", "level", [7u8; 300].to_vec());
    w.add("sprites/hero.png", "image", image_bytes(2, 3));
    w.add(
        "textures/wall.png",
        "image",
        compressed_image_bytes(16, 8, Encoding::Lz4),
    );
    w.add("levels/one.lvl#collision", "level", vec![1, 2, 3, 4, 5]);
    w.add("empty.bin", "bytes", Vec::new());
    w.finish().unwrap()
}

/// The compressions this build can write.
fn compressions() -> Vec<Compression> {
    let mut all = vec![Compression::None, Compression::Lz4];
    if cfg!(feature = "write-zstd") {
        all.push(Compression::Zstd);
    }
    all
}

#[test]
fn every_kind_reads_back_as_written() {
    for compression in compressions() {
        let bytes = sample_with(compression);
        let p = Parcel::from_bytes(&bytes).unwrap();
        assert_eq!(p.len(), 7);
        assert_eq!(p.text(ResourceId::of("greeting.txt")).unwrap(), "hello\n");
        assert_eq!(
            p.text(ResourceId::of("story.txt")).unwrap(),
            STORY.repeat(4)
        );
        assert_eq!(
            p.bytes(ResourceId::of("levels/two.lvl")).unwrap(),
            &[7u8; 300][..]
        );
        let image = p.image(ResourceId::of("sprites/hero.png")).unwrap();
        assert_eq!(
            (image.header.width, image.header.height, image.data.len()),
            (2, 3, 24)
        );
        assert_eq!(image.data[5], 5);
        // What a file in `levels/` names by relative URI.
        let two = p.by_uri("levels/one.lvl", "two.lvl").unwrap();
        assert_eq!(two.name, "levels/two.lvl");
        let hero = p.by_uri("levels/one.lvl", "../sprites/hero.png").unwrap();
        assert_eq!(hero.name, "sprites/hero.png");
        assert!(p.by_uri("levels/one.lvl", "three.lvl").is_none());
        assert!(
            p.by_uri("levels/one.lvl", "../../sprites/hero.png")
                .is_none()
        );
        let level = p.by_name("levels/one.lvl#collision").unwrap();
        assert_eq!(
            (level.kind, level.bytes().unwrap()),
            ("level", Cow::Borrowed(&[1u8, 2, 3, 4, 5][..]))
        );
        assert_eq!(p.bytes(ResourceId::of("empty.bin")).unwrap(), &[][..]);
        assert_eq!(p.get(ResourceId::of("missing.png")), None);
        assert_eq!(
            p.bytes(ResourceId::of("missing.png")),
            Err(ParcelError::Missing {
                id: ResourceId::of("missing.png")
            })
        );
        let err = p.text(ResourceId::of("sprites/hero.png")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "resource `sprites/hero.png` is of kind `image`, not `text`",
            "kinds are checked"
        );
        let wall = p.image(ResourceId::of("textures/wall.png")).unwrap();
        assert_eq!(wall.header.encoding, Encoding::Lz4);
        let rows = wall.pixels().unwrap();
        assert_eq!((rows.len(), rows[16], rows[511]), (16 * 8 * 4, 1, 31));
        // What is compressed: the story and the level, never images or
        // what is too small to gain.
        let compressed: Vec<&str> = p
            .iter()
            .filter(|r| r.compression() != Compression::None)
            .map(|r| r.name)
            .collect();
        let expected: &[&str] = if compression == Compression::None {
            &[]
        } else {
            &["levels/two.lvl", "story.txt"]
        };
        let mut compressed = compressed;
        compressed.sort();
        assert_eq!(compressed, expected, "{compression:?}");
        for r in p.iter() {
            assert_eq!(
                r.compression() == Compression::None,
                r.stored().len() as u64 == r.len()
            );
            assert_eq!(
                r.checksum(),
                xxhash_rust::xxh3::xxh3_64(&r.bytes().unwrap())
            );
            assert_eq!(
                r.stored().as_ptr() as usize % 16,
                bytes.as_ptr() as usize % 16
            );
            // Borrowed exactly when stored as it is: zero-copy.
            let borrowed = matches!(r.bytes().unwrap(), Cow::Borrowed(_));
            assert_eq!(borrowed, r.compression() == Compression::None, "{}", r.name);
        }
        p.verify().unwrap();
        let owned = ParcelBuf::from_vec(bytes.clone()).unwrap();
        assert_eq!(
            owned.parcel().text(ResourceId::of("greeting.txt")).unwrap(),
            "hello\n"
        );
    }
}

/// A compressed parcel is smaller than the same parcel uncompressed, and
/// the same bytes come out: the compressions only change what is stored.
#[test]
fn compression_changes_what_is_stored_not_what_is_read() {
    let plain = sample_with(Compression::None);
    let read = |bytes: &[u8]| -> Vec<(String, u64, Vec<u8>)> {
        Parcel::from_bytes(bytes)
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r.name.to_owned(),
                    r.checksum(),
                    r.bytes().unwrap().into_owned(),
                )
            })
            .collect()
    };
    for compression in compressions().into_iter().skip(1) {
        let packed = sample_with(compression);
        assert!(packed.len() < plain.len(), "{compression:?}");
        assert_eq!(read(&packed), read(&plain), "{compression:?}");
        assert_eq!(packed, sample_with(compression), "deterministic");
    }
}

#[test]
fn the_header_layout_is_pinned_byte_by_byte() {
    let mut w = ParcelWriter::new();
    w.add("a", "bytes", b"xyz".to_vec());
    let bytes = w.finish().unwrap();
    let id = ResourceId::of("a").raw().to_le_bytes();
    #[rustfmt::skip]
    let expected_header: [u8; 56] = [
        b'C', b'A', b'P', b'A', b'R', b'C', b'E', b'L', // magic
        2, 0,                                           // version 2
        64, 0,                                          // header length
        0, 0, 0, 0,                                     // flags
        1, 0, 0, 0,                                     // count
        0, 0, 0, 0,                                     // bucket bits: 1 bucket
        144, 0, 0, 0, 0, 0, 0, 0,                       // names at 64 + 4*2 + 72
        6, 0, 0, 0, 0, 0, 0, 0,                         // names length: "a" + "bytes"
        160, 0, 0, 0, 0, 0, 0, 0,                       // data at 150 rounded up to 16
        16, 0, 0, 0, 0, 0, 0, 0,                        // data length: 3 rounded up to 16
    ];
    assert_eq!(bytes[..56], expected_header);
    assert_eq!(bytes[56..64], table_checksum(&bytes, 160).to_le_bytes());
    #[rustfmt::skip]
    let expected_tables: [u8; 8] = [
        0, 0, 0, 0, // bucket 0 starts at entry 0
        1, 0, 0, 0, // end: count
    ];
    assert_eq!(bytes[64..72], expected_tables);
    let entry = &bytes[72..72 + ENTRY_LEN];
    assert_eq!(entry[..8], id);
    assert_eq!(
        entry[8..24],
        [0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0]
    ); // name 0+1, kind 1+5
    assert_eq!(
        entry[24..40],
        [0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
    ); // data 0+3
    let sum = xxhash_rust::xxh3::xxh3_64(b"xyz").to_le_bytes();
    assert_eq!(entry[40..48], sum); // stored checksum
    assert_eq!(entry[48..56], 3u64.to_le_bytes()); // length, as stored
    assert_eq!(entry[56..64], sum); // checksum, as stored
    assert_eq!(entry[64..72], [0; 8]); // not compressed, reserved
    assert_eq!(&bytes[144..150], b"abytes");
    assert_eq!(bytes[150..160], [0; 10]);
    assert_eq!(&bytes[160..163], b"xyz");
    assert_eq!(bytes.len(), 176);
}

#[test]
fn every_bit_flip_and_every_truncation_is_rejected() {
    for compression in compressions() {
        every_bit_flip_and_every_truncation_is_rejected_with(compression);
    }
}

fn every_bit_flip_and_every_truncation_is_rejected_with(compression: Compression) {
    let bytes = sample_with(compression);
    for len in 0..bytes.len() {
        assert!(
            Parcel::from_bytes(&bytes[..len]).is_err(),
            "truncated to {len}"
        );
    }
    let mut copy = bytes.clone();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            copy[i] ^= 1 << bit;
            let result = Parcel::from_bytes(&copy).and_then(|p| p.verify());
            assert!(
                result.is_err(),
                "{compression:?}: flip of bit {bit} of byte {i} was accepted"
            );
            copy[i] ^= 1 << bit;
        }
    }
}

#[test]
fn reading_at_any_alignment_gives_the_same_results() {
    let bytes = sample();
    let reference: Vec<(ResourceId, String, Vec<u8>)> = Parcel::from_bytes(&bytes)
        .unwrap()
        .iter()
        .map(|r| (r.id, r.name.to_owned(), r.stored().to_vec()))
        .collect();
    let mut buffer = vec![0u8; bytes.len() + 16];
    for offset in 0..16 {
        buffer[offset..offset + bytes.len()].copy_from_slice(&bytes);
        let p = Parcel::from_bytes(&buffer[offset..offset + bytes.len()]).unwrap();
        let got: Vec<_> = p
            .iter()
            .map(|r| (r.id, r.name.to_owned(), r.stored().to_vec()))
            .collect();
        assert_eq!(got, reference, "at offset {offset}");
        p.verify().unwrap();
    }
}

#[test]
fn older_and_newer_format_versions_are_rejected_clearly() {
    for version in [1, 3] {
        let mut bytes = sample();
        bytes[8] = version;
        let err = Parcel::from_bytes(&bytes).unwrap_err();
        assert_eq!(
            err,
            ParcelError::UnsupportedVersion {
                found: version.into(),
                supported: 2
            }
        );
        assert!(
            err.to_string()
                .contains(&format!("version {version} is not supported")),
            "{err}"
        );
    }
}

#[test]
fn ids_keep_naming_the_same_resources_when_others_come_and_go() {
    let build = |names: &[&str]| {
        let mut w = ParcelWriter::new();
        for n in names {
            w.add(n, "text", n.as_bytes().to_vec());
        }
        w.finish().unwrap()
    };
    let before = build(&["a.txt", "b.txt", "c.txt"]);
    let after = build(&["a.txt", "c.txt", "d.txt", "e.txt", "f.txt"]);
    let (before, after) = (
        Parcel::from_bytes(&before).unwrap(),
        Parcel::from_bytes(&after).unwrap(),
    );
    for name in ["a.txt", "c.txt"] {
        const_assert_same(&before, &after, name);
    }
    assert!(
        after.get(ResourceId::of("b.txt")).is_none(),
        "a removed resource is missing, not another one"
    );
}

fn const_assert_same(before: &Parcel<'_>, after: &Parcel<'_>, name: &str) {
    let id = ResourceId::of(name);
    assert_eq!(before.get(id).unwrap().name, name);
    assert_eq!(after.get(id).unwrap().name, name);
    assert_eq!(after.text(id).unwrap(), name);
}

/// Recomputes the table checksum so corruptions reach the structural checks.
fn resign(bytes: &mut [u8]) {
    let data_at = u64::from_le_bytes(bytes[40..48].try_into().unwrap());
    let data_at = usize::try_from(data_at)
        .unwrap_or(usize::MAX)
        .min(bytes.len())
        .max(HEADER_LEN);
    let sum = table_checksum(bytes, data_at);
    bytes[56..64].copy_from_slice(&sum.to_le_bytes());
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

#[test]
fn structured_corruptions_with_valid_checksums_are_rejected_or_read_safely() {
    for compression in compressions() {
        structured_corruptions_are_rejected_or_read_safely_with(compression);
    }
}

fn structured_corruptions_are_rejected_or_read_safely_with(compression: Compression) {
    let original = sample_with(compression);
    let count = u32::from_le_bytes(original[16..20].try_into().unwrap()) as usize;
    let entries_at = u64_at(&original, 24) as usize - count * ENTRY_LEN;
    // (offset, width) of every numeric field: header fields, then each entry's.
    let mut fields: Vec<(usize, usize)> = vec![
        (16, 4),
        (20, 4),
        (24, 8),
        (32, 8),
        (40, 8),
        (48, 8),
        (64, 4),
        (68, 4),
        (72, 4),
    ];
    for i in 0..count {
        let e = entries_at + i * ENTRY_LEN;
        fields.extend([
            (e, 8),
            (e + 8, 4),
            (e + 12, 4),
            (e + 16, 4),
            (e + 20, 4),
            (e + 24, 8),
            (e + 32, 8),
            (e + 48, 8),
            (e + 64, 1),
        ]);
    }
    let len = original.len() as u64;
    let interesting = [
        0,
        1,
        15,
        16,
        17,
        48,
        len - 1,
        len,
        len + 1,
        u32::MAX as u64,
        u64::MAX,
        u64::MAX - 15,
    ];
    let mut rng = Lcg(7);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut bytes = original.clone();
        for _ in 0..1 + rng.next() % 3 {
            let (at, width) = fields[(rng.next() as usize) % fields.len()];
            let value = if rng.next().is_multiple_of(2) {
                interesting[(rng.next() as usize) % interesting.len()]
            } else {
                rng.next()
            };
            bytes[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
        resign(&mut bytes);
        if let Ok(p) = Parcel::from_bytes(&bytes) {
            // Whatever was accepted must be safe to read in full.
            accepted += 1;
            for r in p.iter() {
                assert_eq!(p.get(r.id).map(|x| x.name), Some(r.name));
                read_all(&r);
            }
        }
    }
    // A value equal to the original (or an unused one) is a legitimate parcel.
    assert!(accepted < 2_000, "{accepted} corruptions accepted");

    // The named cases: a huge count, an offset+length that overflows,
    // two entries sharing bytes.
    let mut huge = original.clone();
    huge[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    resign(&mut huge);
    assert!(matches!(
        Parcel::from_bytes(&huge),
        Err(ParcelError::BadHeader { .. })
    ));
    let mut overflow = original.clone();
    let e = entries_at + ENTRY_LEN;
    overflow[e + 24..e + 32].copy_from_slice(&(u64::MAX - 15).to_le_bytes());
    resign(&mut overflow);
    assert!(matches!(
        Parcel::from_bytes(&overflow),
        Err(ParcelError::BadEntry { .. })
    ));
    let mut overlap = original.clone();
    let (e0, e1) = (entries_at, entries_at + ENTRY_LEN);
    let first_offset: [u8; 8] = overlap[e0 + 24..e0 + 32].try_into().unwrap();
    overlap[e1 + 24..e1 + 32].copy_from_slice(&first_offset);
    resign(&mut overlap);
    let err = Parcel::from_bytes(&overlap).unwrap_err();
    assert!(
        matches!(
            err,
            ParcelError::Overlap { .. } | ParcelError::BadEntry { .. }
        ),
        "{err}"
    );
}

/// Damaged compressed rows (every byte flipped, every truncation) give an
/// error or rows of the declared length, never a panic.
#[test]
fn damaged_compressed_pixels_are_an_error_not_a_panic() {
    let mut encodings = vec![Encoding::Lz4];
    if cfg!(feature = "write-zstd") {
        encodings.push(Encoding::Zstd);
    }
    for encoding in encodings {
        let bytes = compressed_image_bytes(24, 10, encoding);
        let header = ImageHeader::parse(&bytes).unwrap();
        let payload = &bytes[crate::image::IMAGE_HEADER_LEN..];
        let read = |data: &[u8]| {
            if let Ok(rows) = (crate::image::Image { header, data }).pixels() {
                assert_eq!(rows.len(), 24 * 10 * 4, "{encoding:?}");
            }
        };
        for at in 0..payload.len() {
            for bit in [0x01, 0x80, 0xff] {
                let mut damaged = payload.to_vec();
                damaged[at] ^= bit;
                read(&damaged);
            }
            read(&payload[..at]);
        }
    }
}

#[test]
fn inputs_that_once_crashed_the_fuzzer_are_rejected() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        if let Ok(p) = Parcel::from_bytes(&bytes) {
            for r in p.iter() {
                read_all(&r);
            }
        }
        seen += 1;
    }
    assert!(seen >= 1);
}

fn frame_on(page: &str, x: u32, w: u32) -> crate::SpriteFrame {
    crate::SpriteFrame {
        page: ResourceId::of(page),
        page_index: 0,
        x,
        y: 0,
        w,
        h: 3,
        rotated: false,
        trim_x: 0,
        trim_y: 0,
        source_width: w,
        source_height: 3,
        uv: [0.0, 0.0, 1.0, 1.0],
    }
}

fn with_sprite(page_name: &str, frame: crate::SpriteFrame) -> Result<Vec<u8>, ParcelError> {
    let mut w = ParcelWriter::new();
    w.add(page_name, "image", image_bytes(4, 3));
    w.add("sprites/a.png", "sprite", frame.encode().to_vec());
    let bytes = w.finish().unwrap();
    Parcel::from_bytes(&bytes)?;
    Ok(bytes)
}

#[test]
fn sprites_resolve_to_their_frame_and_page() {
    let bytes = with_sprite("atlas:main#0", frame_on("atlas:main#0", 1, 3)).unwrap();
    let p = Parcel::from_bytes(&bytes).unwrap();
    let sprite = p.sprite(ResourceId::of("sprites/a.png")).unwrap();
    assert_eq!(sprite.frame, frame_on("atlas:main#0", 1, 3));
    assert_eq!(sprite.page.header.width, 4);
    assert!(
        p.sprite(ResourceId::of("atlas:main#0")).is_none(),
        "a page is not a sprite"
    );
}

#[test]
fn sprites_without_their_page_or_outside_it_are_rejected_at_open() {
    let missing = with_sprite("atlas:main#0", frame_on("atlas:other#0", 0, 3)).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "corrupt parcel: sprite or font `sprites/a.png`: its page is not an image resource of the parcel"
    );
    let outside = with_sprite("atlas:main#0", frame_on("atlas:main#0", 2, 3)).unwrap_err();
    assert!(matches!(outside, ParcelError::BadSprite { what, .. } if what.contains("outside")));
    let mut w = ParcelWriter::new();
    w.add("sprites/a.png", "sprite", vec![0; 71]);
    let bytes = w.finish().unwrap();
    assert!(matches!(
        Parcel::from_bytes(&bytes),
        Err(ParcelError::BadEntry {
            what: "sprite resource is malformed",
            ..
        })
    ));
}

/// A parcel with a one-size, two-glyph font whose glyphs lie at `frames`,
/// beside a 4x3 page `atlas:main#0`.
fn with_font(frames: [crate::SpriteFrame; 2]) -> Result<Vec<u8>, ParcelError> {
    use crate::font::write::{FontTables, GlyphMetrics};
    let glyph = |ch| GlyphMetrics {
        ch,
        advance: 3.0,
        left: 0.0,
        top: 2.0,
    };
    let size = crate::FontSize {
        px: 4.0,
        ascent: 3.0,
        descent: -1.0,
        line_gap: 0.0,
    };
    let tables = FontTables {
        spread: 0.0,
        sizes: vec![(size, vec![glyph('a'), glyph('b')])],
        kerning: vec![],
    };
    let mut font = tables.encode();
    for f in frames {
        font.extend_from_slice(&f.encode());
    }
    let mut w = ParcelWriter::compressed(Compression::Lz4);
    w.add("atlas:main#0", "image", image_bytes(4, 3));
    w.add("fonts/a.ttf", "font", font);
    let bytes = w.finish().unwrap();
    Parcel::from_bytes(&bytes)?;
    Ok(bytes)
}

#[test]
fn fonts_are_stored_as_they_are_and_their_glyphs_checked_against_pages_at_open() {
    let bytes = with_font([
        frame_on("atlas:main#0", 0, 2),
        frame_on("atlas:main#0", 2, 2),
    ])
    .unwrap();
    let p = Parcel::from_bytes(&bytes).unwrap();
    let id = crate::FontId::of("fonts/a.ttf");
    assert_eq!(
        p.get(id).unwrap().compression(),
        Compression::None,
        "never compressed"
    );
    let font = p.font(id).unwrap();
    assert_eq!(font.glyph(4.0, 'b').unwrap().frame.x, 2);
    assert!(
        p.font(crate::FontId::of("atlas:main#0")).is_none(),
        "a page is not a font"
    );
    let outside = with_font([
        frame_on("atlas:main#0", 0, 2),
        frame_on("atlas:main#0", 3, 2),
    ]);
    assert!(
        matches!(outside, Err(ParcelError::BadSprite { ref name, what }) if name == "fonts/a.ttf" && what.contains("outside")),
        "{outside:?}"
    );
    let missing = with_font([
        frame_on("atlas:main#0", 0, 2),
        frame_on("atlas:other#0", 0, 2),
    ]);
    assert!(
        matches!(missing, Err(ParcelError::BadSprite { .. })),
        "{missing:?}"
    );
}

#[test]
fn an_opened_parcel_reads_like_its_bytes_and_survives_a_rename_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.parcel");
    let bytes = sample();
    std::fs::write(&path, &bytes).unwrap();
    let opened = ParcelBuf::open(&path).unwrap();
    let read = ParcelBuf::read(&path).unwrap();
    let names = |b: &ParcelBuf| {
        let mut v: Vec<(String, Vec<u8>)> = b
            .parcel()
            .iter()
            .map(|r| (r.name.to_owned(), r.bytes().unwrap().into_owned()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&opened), names(&read));
    assert!(format!("{:?}", opened).contains(&format!("{} bytes", bytes.len())));

    // The pipeline replaces a parcel by writing a new file and renaming it
    // over the old one: an open parcel keeps the bytes it validated.
    let mut w = ParcelWriter::new();
    w.add("other.txt", "text", b"new".to_vec());
    let tmp = dir.path().join("main.parcel.tmp");
    std::fs::write(&tmp, w.finish().unwrap()).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    assert_eq!(names(&opened), names(&read));
    assert_eq!(ParcelBuf::open(&path).unwrap().parcel().len(), 1);
    // A clone is a copy in memory.
    let copy = opened.clone();
    drop(opened);
    assert_eq!(names(&copy), names(&read));

    // An empty file is not a parcel, mapped or not.
    std::fs::write(&path, b"").unwrap();
    assert!(ParcelBuf::open(&path).is_err());
    assert!(ParcelBuf::open(&dir.path().join("missing.parcel")).is_err());
}

/// Padding in the data area is not read at open (a mapped parcel stays
/// untouched until used) and is checked by `verify`, which reads the data
/// area anyway; padding in the tables is still refused at open.
#[test]
fn data_padding_is_checked_by_verify_and_table_padding_at_open() {
    let mut w = ParcelWriter::new();
    w.add("a.txt", "text", b"abc".to_vec()); // 13 bytes of padding follow
    w.add("b.bin", "bytes", vec![7; 16]);
    let bytes = w.finish().unwrap();
    let data_at = usize::try_from(u64::from_le_bytes(bytes[40..48].try_into().unwrap())).unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let a = parcel.by_name("a.txt").unwrap();
    let gap = a.stored().as_ptr() as usize - bytes.as_ptr() as usize + a.stored().len();
    assert!(gap >= data_at && bytes[gap..gap + 13].iter().all(|&b| b == 0));

    let mut dirty = bytes.clone();
    dirty[gap + 5] = 1;
    let parcel = Parcel::from_bytes(&dirty).expect("opening does not read the data area");
    assert_eq!(
        parcel.verify(),
        Err(ParcelError::NonZeroPadding { offset: gap + 5 })
    );
    let mut names = bytes.clone();
    names[data_at - 1] = 1; // padding after the names
    resign(&mut names);
    assert!(matches!(
        Parcel::from_bytes(&names),
        Err(ParcelError::NonZeroPadding { .. })
    ));
}

#[test]
fn shaders_read_as_text_through_their_own_accessor_and_are_checked_as_text() {
    let mut w = ParcelWriter::new();
    w.add(
        "shaders/water.wgsl",
        "shader",
        b"@fragment fn fs() {}\n".to_vec(),
    );
    w.add("notes.txt", "text", b"hello\n".to_vec());
    let bytes = w.finish().unwrap();
    let p = Parcel::from_bytes(&bytes).unwrap();
    let water = crate::ShaderId::of("shaders/water.wgsl");
    assert_eq!(p.shader(water).unwrap(), "@fragment fn fs() {}\n");
    assert_eq!(
        p.shader(ResourceId::of("notes.txt"))
            .unwrap_err()
            .to_string(),
        "resource `notes.txt` is of kind `text`, not `shader`"
    );
    // Shader source is UTF-8 like text, checked at open.
    let mut w = ParcelWriter::new();
    w.add("shaders/bad.wgsl", "shader", vec![0xff, 0xfe]);
    assert!(matches!(
        Parcel::from_bytes(&w.finish().unwrap()),
        Err(ParcelError::BadEntry {
            what: "text resource is not UTF-8",
            ..
        })
    ));
}

/// An alias answers for the resource it names, through `get`, `by_name`
/// and the typed lookups, in a parcel and through a patch; a missing target
/// or an alias of an alias answers nothing; iteration shows it as it is.
#[test]
fn an_alias_answers_for_its_resource_once() {
    use crate::format::KIND_ALIAS;
    let mut w = ParcelWriter::compressed(Compression::Zstd);
    w.add("levels/intro.txt", "text", b"once upon a time".to_vec());
    w.add(
        "levels/old intro.txt",
        KIND_ALIAS,
        b"levels/intro.txt".to_vec(),
    );
    w.add("gone.txt", KIND_ALIAS, b"never/was.txt".to_vec());
    w.add("twice.txt", KIND_ALIAS, b"levels/old intro.txt".to_vec());
    w.add("bad.txt", KIND_ALIAS, vec![0xff, 0xfe]);
    let bytes = w.finish().unwrap();
    let parcel = Parcel::from_bytes(&bytes).unwrap();
    let old = ResourceId::of("levels/old intro.txt");
    let found = parcel.get(old).unwrap();
    assert_eq!(found.name, "levels/intro.txt");
    assert_eq!(&*found.text().unwrap(), "once upon a time");
    assert_eq!(
        parcel.by_name("levels/old intro.txt").unwrap().name,
        "levels/intro.txt"
    );
    assert_eq!(&*parcel.bytes(old).unwrap(), b"once upon a time");
    for dead in ["gone.txt", "twice.txt", "bad.txt"] {
        assert!(parcel.get(ResourceId::of(dead)).is_none(), "{dead}");
        assert!(parcel.by_name(dead).is_none(), "{dead}");
    }
    let listed: Vec<(&str, Option<&str>)> = parcel
        .iter()
        .filter(|r| r.kind == KIND_ALIAS)
        .map(|r| (r.name, r.alias_of()))
        .collect();
    assert!(listed.contains(&("levels/old intro.txt", Some("levels/intro.txt"))));
    assert!(listed.contains(&("bad.txt", None)));

    // A patch that adds an alias of a resource only its base holds.
    let mut p = ParcelWriter::new().patch();
    p.add("intro.txt", KIND_ALIAS, b"levels/intro.txt".to_vec());
    let patch_bytes = p.finish().unwrap();
    let patch = Parcel::patch_from_bytes(&patch_bytes).unwrap();
    let patched = crate::patch::Patched::new(parcel, Some(patch)).unwrap();
    assert_eq!(
        patched.get(ResourceId::of("intro.txt")).unwrap().name,
        "levels/intro.txt"
    );
    assert_eq!(
        patched.by_name("levels/old intro.txt").unwrap().name,
        "levels/intro.txt"
    );
}

#[test]
fn a_tile_map_reads_back_compressed_or_not_and_a_malformed_one_fails_by_name() {
    let map = crate::tilemap::tests::sample();
    // A large layer compresses; the map reads the same either way.
    let mut big = map.clone();
    if let crate::tilemap::write::LayerData::Tiles { size, cells, .. } = &mut big.layers[0].data {
        *size = (300, 200);
        *cells = (0..60_000).map(|i| 1 + i % 4).collect();
    }
    for compression in compressions() {
        let mut w = ParcelWriter::compressed(compression);
        w.add("maps/small.tmx", "tilemap", map.encode());
        w.add("maps/big.tmx", "tilemap", big.encode());
        w.add("notes.txt", "text", b"hi".to_vec());
        let bytes = w.finish().unwrap();
        let p = Parcel::from_bytes(&bytes).unwrap();
        let read = p.tilemap(crate::TileMapId::of("maps/big.tmx")).unwrap();
        let ground = read.layer("Ground").unwrap();
        assert_eq!(
            (ground.size(), ground.cell(299, 199).gid()),
            ((300, 200), 4)
        );
        if compression != Compression::None {
            let stored = p.get(ResourceId::of("maps/big.tmx")).unwrap();
            assert_eq!(stored.compression(), compression, "cells compress");
        }
        let small = p.tilemap(crate::TileMapId::of("maps/small.tmx")).unwrap();
        assert_eq!(small.class(), "level");
        let wrong = p.tilemap(ResourceId::of("notes.txt")).unwrap_err();
        assert!(matches!(wrong, ParcelError::WrongKind { .. }), "{wrong:?}");
        let missing = p.tilemap(ResourceId::of("maps/none.tmx")).unwrap_err();
        assert!(
            matches!(missing, ParcelError::Missing { .. }),
            "{missing:?}"
        );
    }
    let mut bad = map.encode();
    bad.truncate(bad.len() - 1);
    let mut w = ParcelWriter::new();
    w.add("maps/bad.tmx", "tilemap", bad);
    let bytes = w.finish().unwrap();
    let p = Parcel::from_bytes(&bytes).expect("opening does not read tile maps");
    let err = p.tilemap(ResourceId::of("maps/bad.tmx")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "corrupt parcel: tile map `maps/bad.tmx` is malformed"
    );
}
