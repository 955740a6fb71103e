//! UASTC 4×4 levels through Basis Universal's encoder (the
//! `basis-universal` crate, feature `basis`: it compiles the C++ library).
//!
//! UASTC is the Basis Universal format that no GPU samples but every GPU
//! gets from one file: a loader transcodes each level when it loads it, to
//! ASTC 4×4 (losslessly), BC7, ETC2 or RGBA8, whichever the GPU takes
//! (see `assets_runtime::TextureFormat::needs_transcoding`). A Rust game
//! built for the web has no transcoder that compiles there, which the
//! processor's target check says (`GpuFamily::lacks`). Its blocks are
//! 16 bytes, like BC7's, and its quality sits a little below BC7's
//! (BENCHMARKS.md, "GPU textures").
//!
//! The crate's encoder writes a `.basis` file, not the blocks alone; each
//! level is encoded on its own (the processor's own mips, which are
//! gamma-correct and alpha-aware, where the encoder's would not be) and its
//! blocks taken out of that file's one slice, as the `.basis` layout in
//! Binomial's `basisu_file_headers.h` places them: a 77-byte header whose
//! bytes 65..69 hold the slice table's offset, then 23-byte slice
//! descriptors whose bytes 9..13 are the blocks across and down and 13..21
//! the slice's offset and length. Those are read checked: a file that does
//! not add up is an error, never a wrong texture.
//!
//! UASTC encoding is a function of the pixels and the settings: the same
//! image gives the same blocks on any thread count, since each level is
//! encoded on one thread (RDO's jobs split the same way every time).

use basis_universal::sys;
use basis_universal::{BasisTextureFormat, ColorSpace, Compressor, CompressorParams};

use super::Quality;
use super::mips::Level;

/// Bytes of one UASTC block.
const BLOCK_BYTES: usize = 16;

/// The UASTC blocks of `level`, rows of 4×4 blocks top to bottom (edge
/// blocks padded by the encoder). `srgb` chooses the encoder's perceptual
/// error metric (color) over a plain one (data, normals). `rdo`, Basis
/// Universal's rate-distortion optimization at that lambda, trades some
/// quality for blocks that zstd (KTX2 supercompression, or a parcel's
/// own) compresses far better.
pub fn encode(
    level: &Level,
    quality: Quality,
    srgb: bool,
    rdo: Option<f32>,
) -> Result<Vec<u8>, String> {
    let mut params = CompressorParams::new();
    params.set_basis_format(BasisTextureFormat::UASTC4x4);
    set_uastc_level(&mut params, quality);
    params.set_rdo_uastc(rdo);
    params.set_color_space(if srgb {
        ColorSpace::Srgb
    } else {
        ColorSpace::Linear
    });
    params.set_generate_mipmaps(false);
    params
        .source_image_mut(0)
        .init(&level.pixels, level.width, level.height, 4);
    // One thread: the pipeline already runs textures, and their levels,
    // side by side.
    let mut compressor = Compressor::new(1);
    // SAFETY: `params` is fully set above (format, level, color space, one
    // source image of `width × height` RGBA pixels), which is what the
    // library's checks expect; it copies the pixels in `init`.
    let encoded = unsafe {
        if !compressor.init(&params) {
            return Err("Basis Universal's encoder refused its parameters".into());
        }
        compressor.process()
    };
    encoded.map_err(|e| format!("Basis Universal's UASTC encoder failed: {e:?}"))?;
    let (across, down, blocks) = only_slice(compressor.basis_file())?;
    let want = (level.width.div_ceil(4), level.height.div_ceil(4));
    if (across, down) != want {
        return Err(format!(
            "Basis Universal's encoder wrote {across}x{down} blocks for a {}x{} level ({}x{} expected)",
            level.width, level.height, want.0, want.1
        ));
    }
    Ok(blocks.to_vec())
}

/// Sets the UASTC level of `quality`: basisu's levels 1 (`fastest` and
/// `fast`: its level 0 was 2.7 dB below on Bevy's textures, 5 dB on the
/// worst, where level 1 is 0.1 dB below level 2), 2 (its
/// default: `basic`) and 3 (`slow`; 4 is, in its own words, impractically
/// slow). The crate's setter ORs the level into the flags, over the
/// default already there, so the flags are written here whole.
fn set_uastc_level(params: &mut CompressorParams, quality: Quality) {
    let level = match quality {
        Quality::Fastest | Quality::Fast => sys::UastcPackFlags_PackUASTCLevelFaster,
        Quality::Basic => sys::UastcPackFlags_PackUASTCLevelDefault,
        Quality::Slow => sys::UastcPackFlags_PackUASTCLevelSlower,
    };
    // SAFETY: `params.0` is the live parameter object `params` owns.
    unsafe {
        let flags = sys::compressor_params_get_pack_uastc_flags(params.0);
        let mask = sys::UastcPackFlags_PackUASTCLevelMask;
        sys::compressor_params_set_pack_uastc_flags(params.0, (flags & !mask) | level);
    }
}

/// The blocks across, down, and bytes of the one slice of a UASTC `.basis`
/// file (see the module docs for the layout).
fn only_slice(file: &[u8]) -> Result<(u32, u32, &[u8]), String> {
    const HEADER: usize = 77;
    const SLICE: usize = 23;
    const UASTC: u8 = 1;
    let damaged = |what: &str| format!("Basis Universal's encoder wrote a .basis file {what}");
    let le = |bytes: &[u8]| bytes.iter().rev().fold(0u32, |n, &b| n << 8 | u32::from(b));
    if file.len() < HEADER || &file[..2] != b"sB" {
        return Err(damaged("without its header"));
    }
    let slices = le(&file[14..17]);
    if file[20] != UASTC || slices != 1 {
        return Err(damaged(&format!(
            "of format {} with {slices} slices, not one UASTC slice",
            file[20]
        )));
    }
    let at = le(&file[65..69]) as usize;
    let slice = (file.get(at..at + SLICE)).ok_or_else(|| damaged("whose slice table is cut"))?;
    let (across, down) = (le(&slice[9..11]), le(&slice[11..13]));
    let (offset, length) = (le(&slice[13..17]) as usize, le(&slice[17..21]) as usize);
    let blocks = (file.get(offset..offset + length))
        .filter(|b| b.len() == across as usize * down as usize * BLOCK_BYTES)
        .ok_or_else(|| damaged("whose slice is not its blocks"))?;
    Ok((across, down, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gradient, as smooth art is.
    fn level(width: u32, height: u32) -> Level {
        super::super::mips::level_of(width, height, |x, y| {
            [(x * 255 / width) as u8, (y * 255 / height) as u8, 128, 255]
        })
    }

    #[test]
    fn a_level_is_its_blocks_with_odd_sides_padded() {
        for (w, h) in [(16, 8), (5, 3), (1, 1)] {
            let blocks = encode(&level(w, h), Quality::Basic, true, None).expect("encoded");
            let want = w.div_ceil(4) * h.div_ceil(4) * 16;
            assert_eq!(blocks.len(), want as usize, "{w}x{h}");
        }
    }

    #[test]
    fn the_same_pixels_give_the_same_blocks_and_quality_changes_them() {
        let l = level(32, 32);
        let basic = encode(&l, Quality::Basic, true, None).unwrap();
        assert_eq!(basic, encode(&l, Quality::Basic, true, None).unwrap());
        let runs: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| encode(&l, Quality::Basic, true, None).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(runs.iter().all(|r| *r == basic), "threads change nothing");
        assert_eq!(encode(&l, Quality::Fast, true, None).unwrap().len(), basic.len());
    }

    #[test]
    fn a_file_that_does_not_add_up_is_an_error() {
        let mut params = CompressorParams::new();
        params.set_basis_format(BasisTextureFormat::UASTC4x4);
        params.set_generate_mipmaps(false);
        let l = level(8, 8);
        params.source_image_mut(0).init(&l.pixels, 8, 8, 4);
        let mut compressor = Compressor::new(1);
        // SAFETY: as in `encode`.
        unsafe {
            assert!(compressor.init(&params));
            compressor.process().unwrap();
        }
        let file = compressor.basis_file().to_vec();
        assert_eq!(only_slice(&file).unwrap().2.len(), 4 * 16);
        for len in [0, 10, 76, file.len() - 1] {
            assert!(only_slice(&file[..len]).is_err(), "cut to {len}");
        }
        let mut wrong = file.clone();
        wrong[20] = 0; // ETC1S
        assert!(only_slice(&wrong).is_err());
        let mut wrong = file;
        wrong[65..69].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(only_slice(&wrong).is_err());
    }
}
