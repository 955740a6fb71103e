//! A lossless sound as Ogg Vorbis: the `audio` processor's `transcode =
//! "vorbis"` (feature `audio-vorbis`). The samples come from the same
//! decoding that checks every source ([`super::decode`]), a packet at a
//! time, and go to Xiph's libvorbis (aoTuV's tuning, through the
//! `vorbis_rs` crate, which compiles its C) as they come, so memory stays a
//! packet's worth whatever the sound's length.
//!
//! The output is a function of the samples and the quality alone: the Ogg
//! stream's serial number, which the crate would draw at random, is taken
//! from the source's hash instead, so a build writes the same bytes twice.

use std::num::{NonZeroU8, NonZeroU32};

use assets_runtime::audio::AudioInfo;
use symphonia::core::audio::{AudioBuffer, Signal};
use vorbis_rs::{VorbisBitrateManagementStrategy, VorbisEncoder, VorbisEncoderBuilder};

use crate::hash::ContentHash;
use crate::processor::ProcessError;

/// The Ogg Vorbis file of `bytes`, a sound holding `info` (as
/// [`super::probe`] found it), at Vorbis `quality` (0 to 1).
pub fn encode(
    bytes: &[u8],
    extension: Option<&str>,
    info: &AudioInfo,
    quality: f32,
) -> Result<Vec<u8>, ProcessError> {
    let failed = |e: vorbis_rs::VorbisError| ProcessError::msg(format!("Vorbis encoding failed: {e}"));
    let rate = NonZeroU32::new(info.sample_rate).ok_or_else(|| ProcessError::msg("no sample rate"))?;
    let channels = NonZeroU8::new(info.channels).ok_or_else(|| ProcessError::msg("no channels"))?;
    let hash = ContentHash::of(bytes);
    let serial = i32::from_le_bytes(hash.as_bytes()[..4].try_into().expect("four bytes"));
    let mut encoder: VorbisEncoder<Vec<u8>> =
        VorbisEncoderBuilder::new_with_serial(rate, channels, Vec::new(), serial)
            .bitrate_management_strategy(VorbisBitrateManagementStrategy::QualityVbr {
                target_quality: quality,
            })
            .build()
            .map_err(failed)?;
    let mut planar: Option<AudioBuffer<f32>> = None;
    super::decode(bytes, extension, |decoded, take| {
        if take == 0 {
            return Ok(());
        }
        let spec = *decoded.spec();
        let capacity = decoded.capacity() as u64;
        let buffer = match &mut planar {
            Some(b) if b.capacity() >= decoded.frames() && *b.spec() == spec => b,
            _ => planar.insert(AudioBuffer::new(capacity, spec)),
        };
        decoded.convert(buffer);
        let block: Vec<&[f32]> = (0..spec.channels.count())
            .map(|c| &buffer.chan(c)[..take])
            .collect();
        encoder.encode_audio_block(&block).map_err(failed)
    })?;
    encoder.finish().map_err(failed)
}
