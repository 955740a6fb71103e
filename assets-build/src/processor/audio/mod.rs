//! `audio`: a sound file (WAV, Ogg Vorbis, FLAC, MP3) checked by decoding
//! it whole, stored as it was authored behind a header with its format,
//! channels, sample rate and length ([`assets_runtime::audio`]). Default for
//! `.wav`, `.ogg`, `.oga`, `.flac` and `.mp3` (cargo feature `audio`, on by
//! default).
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `transcode` | `"none"` | `"vorbis"`: a lossless source (WAV, FLAC) is stored as Ogg Vorbis instead, about a tenth of a WAV's bytes ([`vorbis`], feature `audio-vorbis`; `cargo assets` has it); a lossy one (Ogg, MP3) is kept as authored, with a warning, since encoding it again only loses more, and so is surround sound (more than two channels), whose channel order Vorbis defines otherwise |
//! | `quality` | `0.4` | Vorbis's quality, `0.0` (about 64 kbit/s for stereo at 44.1 kHz) to `1.0` (about 500 kbit/s); `0.4` is about 128 kbit/s. oggenc's `-q 4` is `0.4` |
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
use serde::Deserialize;
use symphonia::core::audio::AudioBufferRef;
use symphonia::core::codecs::{CODEC_TYPE_FLAC, CODEC_TYPE_MP3, CODEC_TYPE_VORBIS, DecoderOptions};
use symphonia::core::errors::Error as DecodeError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use super::{Context, ProcessError, Processor};
use crate::manifest::SettingsError;

#[cfg(feature = "audio-vorbis")]
pub mod vorbis;

/// Checks a sound file and records what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Audio;

/// Settings of the `audio` processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AudioSettings {
    /// What to store a lossless source as.
    #[serde(default)]
    pub transcode: Transcode,
    /// Vorbis's quality, 0 to 1.
    #[serde(default = "default_quality")]
    pub quality: f32,
}

/// The `transcode` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transcode {
    /// The file as authored.
    #[default]
    None,
    /// Ogg Vorbis, from a lossless source.
    Vorbis,
}

fn default_quality() -> f32 {
    0.4
}

/// Why Vorbis cannot be built here.
const NEEDS_VORBIS: &str =
    "`transcode = \"vorbis\"` needs assets-build's `audio-vorbis` feature (`cargo assets` has it)";

impl Processor for Audio {
    type Settings = AudioSettings;

    fn name(&self) -> &str {
        "audio"
    }

    fn version(&self) -> u32 {
        1
    }

    fn path_independent(&self) -> bool {
        true
    }

    fn check_settings(&self, s: &AudioSettings) -> Result<(), SettingsError> {
        if !(0.0..=1.0).contains(&s.quality) {
            return Err(SettingsError {
                message: format!("`quality = {}` is outside Vorbis's 0.0 to 1.0", s.quality),
                help: Some("0.4 (the default) is about 128 kbit/s for stereo".into()),
                key: Some("quality".into()),
            });
        }
        if s.transcode == Transcode::Vorbis && !cfg!(feature = "audio-vorbis") {
            return Err(SettingsError {
                message: NEEDS_VORBIS.to_owned(),
                help: None,
                key: Some("transcode".into()),
            });
        }
        Ok(())
    }

    fn process(&self, ctx: &mut Context<'_>, settings: AudioSettings) -> Result<(), ProcessError> {
        let bytes = ctx.source()?;
        let extension = ctx.asset().extension();
        let info = probe(&bytes, extension)?;
        if settings.transcode == Transcode::None {
            return ctx.emit(KIND_AUDIO, info.encode(&bytes));
        }
        // Vorbis orders the channels of surround sound otherwise than WAV
        // and FLAC do (5.1: front left, centre, right, rear left, right,
        // LFE), and nothing here maps them yet.
        let kept = if matches!(info.format, AudioFormat::OggVorbis | AudioFormat::Mp3) {
            Some(format!(
                "this {} file as authored: it is lossy already, and encoding it again would only \
                 lose more (transcode its lossless source instead)",
                info.format.extension()
            ))
        } else if info.channels > 2 {
            Some(format!(
                "this {}-channel sound as authored: Vorbis orders surround channels otherwise, and \
                 only mono and stereo are transcoded",
                info.channels
            ))
        } else {
            None
        };
        if let Some(why) = kept {
            ctx.warn(format!("`transcode = \"vorbis\"` keeps {why}"));
            return ctx.emit(KIND_AUDIO, info.encode(&bytes));
        }
        let (ogg, info) = transcode(&bytes, extension, info, settings.quality)?;
        ctx.emit(KIND_AUDIO, info.encode(&ogg))
    }
}

/// `bytes`, a lossless sound of `info`, as Ogg Vorbis at `quality`, with
/// what that file holds (checked by decoding it, as any source is).
#[cfg(feature = "audio-vorbis")]
fn transcode(
    bytes: &[u8],
    extension: Option<&str>,
    info: AudioInfo,
    quality: f32,
) -> Result<(Vec<u8>, AudioInfo), ProcessError> {
    let ogg = vorbis::encode(bytes, extension, &info, quality)?;
    let made = probe(&ogg, Some("ogg"))
        .map_err(|e| ProcessError::msg(format!("the Vorbis encoder wrote a file that does not decode: {e}")))?;
    if (made.frames, made.channels, made.sample_rate) != (info.frames, info.channels, info.sample_rate) {
        return Err(ProcessError::msg(format!(
            "the Vorbis encoder wrote {} frames of {} channels at {} Hz from {} frames of {} at {} Hz",
            made.frames, made.channels, made.sample_rate, info.frames, info.channels, info.sample_rate
        )));
    }
    Ok((ogg, made))
}

#[cfg(not(feature = "audio-vorbis"))]
fn transcode(
    _: &[u8],
    _: Option<&str>,
    _: AudioInfo,
    _: f32,
) -> Result<(Vec<u8>, AudioInfo), ProcessError> {
    Err(ProcessError::msg(NEEDS_VORBIS))
}

/// Decodes `bytes` whole: what they hold, or why they cannot be played.
/// `extension` is a hint; the bytes decide.
pub fn probe(bytes: &[u8], extension: Option<&str>) -> Result<AudioInfo, ProcessError> {
    decode(bytes, extension, |_, _| Ok(()))
}

/// [`probe`], handing each decoded packet to `each` with how many of its
/// frames are the sound's (the rest, past the length the container
/// declares, a player trims).
pub fn decode(
    bytes: &[u8],
    extension: Option<&str>,
    mut each: impl FnMut(&AudioBufferRef<'_>, usize) -> Result<(), ProcessError>,
) -> Result<AudioInfo, ProcessError> {
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
        let left = params.n_frames.map_or(u64::MAX, |n| n.saturating_sub(frames));
        each(&decoded, decoded.frames().min(usize::try_from(left).unwrap_or(usize::MAX)))?;
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
