//! `audio`: a sound file (WAV, Ogg Vorbis, FLAC, MP3) checked by decoding
//! it whole, stored as it was authored behind a header with its format,
//! channels, sample rate and length ([`assets_runtime::audio`]). Default for
//! `.wav`, `.ogg`, `.oga`, `.flac` and `.mp3` (cargo feature `audio`, on by
//! default). No settings.
//!
//! Decoding is symphonia's (pure Rust), packet by packet, so memory stays
//! one packet's worth whatever the file's length. A file fails by name
//! when its container or codec cannot be read, when a packet does not
//! decode, or when it ends before the frames its header declares (a
//! truncated download or copy): it would have played cut short, or not at
//! all, in the game. The length recorded is the one the container declares
//! (an Ogg's last granule position, a WAV's data size), which a codec's
//! last block may decode a little past; a file that declares none is as
//! long as what decodes.

use assets_runtime::audio::{AudioFormat, AudioInfo};
use assets_runtime::format::KIND_AUDIO;
use symphonia::core::codecs::{CODEC_TYPE_FLAC, CODEC_TYPE_MP3, CODEC_TYPE_VORBIS, DecoderOptions};
use symphonia::core::errors::Error as DecodeError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use super::{Context, NoSettings, ProcessError, Processor};

/// Checks a sound file and records what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Audio;

impl Processor for Audio {
    type Settings = NoSettings;

    fn name(&self) -> &str {
        "audio"
    }

    fn version(&self) -> u32 {
        1
    }

    fn path_independent(&self) -> bool {
        true
    }

    fn process(&self, ctx: &mut Context<'_>, _: NoSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        let info = probe(&bytes, ctx.asset().extension())?;
        ctx.emit(KIND_AUDIO, info.encode(&bytes))
    }
}

/// Decodes `bytes` whole: what they hold, or why they cannot be played.
/// `extension` is a hint; the bytes decide.
pub fn probe(bytes: &[u8], extension: Option<&str>) -> Result<AudioInfo, ProcessError> {
    let source = std::io::Cursor::new(bytes.to_vec());
    let stream = MediaSourceStream::new(Box::new(source), MediaSourceStreamOptions::default());
    let mut hint = Hint::new();
    if let Some(ext) = extension {
        hint.with_extension(&ext.to_ascii_lowercase());
    }
    let formats = FormatOptions {
        enable_gapless: true,
        ..FormatOptions::default()
    };
    let probed = symphonia::default::get_probe()
        .format(&hint, stream, &formats, &MetadataOptions::default())
        .map_err(|e| match signature(bytes) {
            Some(name) => failed(
                &format!("starts as {name} but cannot be read (cut short or damaged?)"),
                e,
            ),
            None => failed(
                "is not a sound file this processor reads (WAV, Ogg Vorbis, FLAC, MP3)",
                e,
            ),
        })?;
    let mut reader = probed.format;
    let track =
        (reader.default_track()).ok_or_else(|| ProcessError::msg("holds no audio track"))?;
    let (track_id, params) = (track.id, track.codec_params.clone());
    let format = match params.codec {
        CODEC_TYPE_VORBIS => AudioFormat::OggVorbis,
        CODEC_TYPE_FLAC => AudioFormat::Flac,
        CODEC_TYPE_MP3 => AudioFormat::Mp3,
        _ => AudioFormat::Wav,
    };
    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions { verify: true })
        .map_err(|e| failed("uses a codec this processor cannot decode", e))?;
    let mut frames: u64 = 0;
    let mut spec = None;
    loop {
        let packet = match reader.next_packet() {
            Ok(packet) => packet,
            Err(DecodeError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(failed(&format!("is damaged after {frames} frames"), e)),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = (decoder.decode(&packet))
            .map_err(|e| failed(&format!("does not decode after {frames} frames"), e))?;
        spec.get_or_insert(*decoded.spec());
        frames += decoded.frames() as u64;
    }
    // What the container declares is the sound's length: a codec may
    // decode a little past it (Vorbis's last block, an MP3 encoder's
    // padding), which players trim. Less than it is a cut file.
    let frames = match params.n_frames {
        Some(declared) if frames < declared => {
            return Err(ProcessError::msg(format!(
                "is cut short: it decodes to {frames} frames, and its header declares {declared} (a truncated copy?)"
            )));
        }
        Some(declared) => declared,
        None => frames,
    };
    let sample_rate = (params.sample_rate)
        .or(spec.map(|s| s.rate))
        .filter(|&r| r > 0)
        .ok_or_else(|| ProcessError::msg("does not say its sample rate"))?;
    let channels = (params.channels.or(spec.map(|s| s.channels)))
        .map(|c| c.count())
        .filter(|&c| c > 0)
        .ok_or_else(|| ProcessError::msg("does not say its channels"))?;
    if frames == 0 {
        return Err(ProcessError::msg("holds no sound (0 frames)"));
    }
    Ok(AudioInfo {
        format,
        channels: u8::try_from(channels)
            .map_err(|_| ProcessError::msg(format!("has {channels} channels; at most 255")))?,
        sample_rate,
        frames,
    })
}

/// The format `bytes` start as, by their signature.
fn signature(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE" {
        Some("a WAV file")
    } else if bytes.starts_with(b"OggS") {
        Some("an Ogg file")
    } else if bytes.starts_with(b"fLaC") {
        Some("a FLAC file")
    } else if bytes.starts_with(b"ID3")
        || (bytes.len() >= 2 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
    {
        Some("an MP3 file")
    } else {
        None
    }
}

fn failed(what: &str, error: DecodeError) -> ProcessError {
    ProcessError::msg(format!("{what}: {error}"))
}
