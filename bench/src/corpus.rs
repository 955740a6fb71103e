//! The corpus generator: a synthetic game project of N assets, the same
//! bytes for the same seed.
//!
//! The mix, by share of N (folders of at most 200 files):
//!
//! | share | what | processor |
//! |---:|---|---|
//! | 55% | sprite PNGs, sides 16–128 px, a third with a transparent border of 1–8 px, in four atlases (`chars`, `ui`, `env`, `fx`, 2048² pages) | `sprite` |
//! | 5% | texture PNGs, sides 256–512 px | `image` (premultiplied) |
//! | 15% | JSON data, 200 B–4 KiB | `text` |
//! | 10% | WGSL shaders including one of eight library files | `text` with `#include` |
//! | 10% | plain text, 100 B–2 KiB | `text` |
//! | 5% | bundles: a custom processor's inputs, each listing 2–4 data or text assets (and sometimes an earlier bundle) whose outputs it combines | `bundle` (registered by the benchmark) |
//!
//! Everything is derived from a xorshift64 generator seeded with the seed, so
//! the same seed gives the same files byte for byte (PNG encoding included:
//! the `image` crate's encoder is deterministic).

use std::path::{Path, PathBuf};

use assets_build::{Context, ProcessError, Processor, Registry};

/// The generated project.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The package directory (holds `Cargo.toml` and `assets/`).
    pub dir: PathBuf,
    /// Every asset file.
    pub files: Vec<PathBuf>,
    /// The PNGs among them (sprites and textures).
    pub images: Vec<PathBuf>,
    /// The sprite PNGs.
    pub sprites: Vec<PathBuf>,
}

const ATLASES: [&str; 4] = ["chars", "ui", "env", "fx"];

/// A small seeded xorshift generator: the same seed, the same corpus.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed` (not zero).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }
}

/// Writes a project of `n` assets into `dir`.
pub fn generate(dir: &Path, n: usize, seed: u64) -> Corpus {
    let mut rng = Rng(seed.max(1));
    let mut corpus = Corpus {
        dir: dir.to_owned(),
        files: Vec::new(),
        images: Vec::new(),
        sprites: Vec::new(),
    };
    std::fs::write(dir.join("Cargo.toml"), manifest()).expect("write Cargo.toml");
    let write = |corpus: &mut Corpus, rel: String, bytes: &[u8]| {
        let path = dir.join("assets").join(rel);
        std::fs::create_dir_all(path.parent().expect("has a folder")).expect("create folder");
        std::fs::write(&path, bytes).expect("write asset");
        corpus.files.push(path.clone());
        path
    };
    for lib in 0..8 {
        let body =
            format!("// library {lib}\nfn helper{lib}(x: f32) -> f32 {{ return x * {lib}.5; }}\n");
        write(
            &mut corpus,
            format!("shaders/lib/common{lib}.wgsl"),
            body.as_bytes(),
        );
    }
    let mut referable: Vec<String> = Vec::new();
    let mut bundles: Vec<String> = Vec::new();
    for i in 0..n {
        let folder = format!("d{:03}", i / 200);
        let class = rng.next() % 100;
        match class {
            0..55 => {
                let atlas = ATLASES[(rng.next() % 4) as usize];
                let (w, h) = (rng.range(16, 128), rng.range(16, 128));
                let border = if rng.next().is_multiple_of(3) {
                    rng.range(1, 8)
                } else {
                    0
                };
                let png = png(w, h, border, &mut rng);
                let path = write(
                    &mut corpus,
                    format!("sprites/{atlas}/{folder}/s{i}.png"),
                    &png,
                );
                corpus.images.push(path.clone());
                corpus.sprites.push(path);
            }
            55..60 => {
                let (w, h) = (rng.range(256, 512), rng.range(256, 512));
                let png = png(w, h, 0, &mut rng);
                let path = write(&mut corpus, format!("textures/{folder}/t{i}.png"), &png);
                corpus.images.push(path);
            }
            60..75 => {
                let len = rng.range(200, 4096) as usize;
                let rel = format!("data/{folder}/d{i}.json");
                write(&mut corpus, rel.clone(), json(len, &mut rng).as_bytes());
                referable.push(rel);
            }
            75..85 => {
                let lib = rng.next() % 8;
                let body = format!(
                    "#include \"common{lib}.wgsl\"\n@fragment fn main{i}() -> @location(0) vec4<f32> {{ return vec4<f32>({}.0); }}\n",
                    rng.range(0, 9)
                );
                write(&mut corpus, format!("shaders/s{i}.wgsl"), body.as_bytes());
            }
            85..95 => {
                let len = rng.range(100, 2048) as usize;
                let rel = format!("text/{folder}/t{i}.txt");
                write(&mut corpus, rel.clone(), words(len, &mut rng).as_bytes());
                referable.push(rel);
            }
            _ => {
                let mut lines = Vec::new();
                for _ in 0..rng.range(2, 4) {
                    if !referable.is_empty() {
                        lines.push(referable[(rng.next() as usize) % referable.len()].clone());
                    }
                }
                if !bundles.is_empty() && rng.next().is_multiple_of(4) {
                    lines.push(bundles[(rng.next() as usize) % bundles.len()].clone());
                }
                let rel = format!("bundles/{folder}/b{i}.bundle");
                write(
                    &mut corpus,
                    rel.clone(),
                    (lines.join("\n") + "\n").as_bytes(),
                );
                bundles.push(rel);
            }
        }
    }
    corpus
}

fn manifest() -> String {
    let mut m =
        String::from("[package]\nname = \"corpus\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n");
    for atlas in ATLASES {
        m.push_str(&format!(
            "[[package.metadata.assets.rules]]\nmatch = \"sprites/{atlas}/**/*.png\"\nprocessor = \"sprite\"\natlas = \"{atlas}\"\n\n\
             [package.metadata.assets.atlases.{atlas}]\nmax-size = 2048\npadding = 2\n\n"
        ));
    }
    m.push_str(
        "[[package.metadata.assets.rules]]\nmatch = \"textures/**/*.png\"\npremultiply = true\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"shaders/*.wgsl\"\nincludes = true\ninclude-dirs = [\"shaders/lib\"]\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"bundles/**/*.bundle\"\nprocessor = \"bundle\"\n",
    );
    m
}

fn png(w: u32, h: u32, border: u32, rng: &mut Rng) -> Vec<u8> {
    let border = border.min(w / 3).min(h / 3);
    let base = rng.next();
    let image = image::RgbaImage::from_fn(w, h, |x, y| {
        if x < border || y < border || x + border >= w || y + border >= h {
            return image::Rgba([0; 4]);
        }
        // Blocky shapes compress like pixel art, not like noise.
        let v = ((u64::from(x / 4) * 0x9e37_79b9) ^ (u64::from(y / 4) * 0x85eb_ca6b))
            .wrapping_add(base);
        image::Rgba([v as u8, (v >> 8) as u8, (v >> 16) as u8, 255])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode PNG");
    out.into_inner()
}

fn words(len: usize, rng: &mut Rng) -> String {
    const WORDS: [&str; 8] = [
        "meadow", "coin", "hero", "tree", "river", "stone", "cloud", "lantern",
    ];
    let mut s = String::with_capacity(len + 8);
    while s.len() < len {
        s.push_str(WORDS[(rng.next() % 8) as usize]);
        s.push(if rng.next().is_multiple_of(12) {
            '\n'
        } else {
            ' '
        });
    }
    s.push('\n');
    s
}

fn json(len: usize, rng: &mut Rng) -> String {
    let mut s = String::from("{\n");
    let mut i = 0;
    while s.len() < len {
        s.push_str(&format!("  \"key{i}\": {},\n", rng.range(0, 100_000)));
        i += 1;
    }
    s.push_str("  \"end\": true\n}\n");
    s
}

/// `bundle`: combines the main outputs of the assets a `.bundle` file lists,
/// one per line, as length-prefixed blocks: a processor with dependencies.
pub struct Bundle;

impl Processor for Bundle {
    type Settings = assets_build::NoSettings;

    fn name(&self) -> &str {
        "bundle"
    }

    fn version(&self) -> u32 {
        1
    }

    fn process(
        &self,
        ctx: &mut Context<'_>,
        _: assets_build::NoSettings,
    ) -> Result<(), ProcessError> {
        let list = String::from_utf8(ctx.source()?).map_err(ProcessError::other)?;
        let mut out = Vec::new();
        for line in list.lines().filter(|l| !l.is_empty()) {
            let bytes = ctx.dependency(line)?.bytes("")?;
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        ctx.emit("bundle", out)
    }
}

/// The corpus's custom processors.
pub fn register(registry: &mut Registry) {
    registry.register(Bundle);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(corpus: &Corpus) -> blake3::Hash {
        let mut h = blake3::Hasher::new();
        for f in &corpus.files {
            h.update(
                f.strip_prefix(&corpus.dir)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .as_bytes(),
            );
            h.update(&std::fs::read(f).unwrap());
        }
        h.finalize()
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_another_seed_does_not() {
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let one = generate(a.path(), 300, 7);
        let two = generate(b.path(), 300, 7);
        let other = generate(c.path(), 300, 8);
        assert_eq!(digest(&one), digest(&two));
        assert_ne!(digest(&one), digest(&other));
        assert!(one.sprites.len() > 100 && one.images.len() > one.sprites.len());
    }
}
