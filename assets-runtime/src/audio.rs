//! The `audio` resource: a sound file as it was authored (WAV, Ogg Vorbis,
//! FLAC or MP3), behind a small header that says what the `audio` processor
//! found when it decoded the whole file: its format, channels, sample rate
//! and length in frames. A game learns a sound's duration without decoding
//! it, and hands [`Audio::data`] to its audio library (rodio, kira,
//! bevy_audio...) as the file it always was.
//!
//! ```text
//! offset  size  field
//!      0     4  magic "AUD1"
//!      4     1  format: 1 WAV, 2 Ogg Vorbis, 3 FLAC, 4 MP3
//!      5     1  channels (at least 1)
//!      6     2  zero
//!      8     4  sample rate in Hz (u32 LE, at least 1)
//!     12     4  zero
//!     16     8  frames: samples per channel (u64 LE)
//!     24     …  the file's bytes
//! ```
//!
//! Stored uncompressed, like images (the encoded formats are compressed
//! already, and a WAV's samples are read in place); the header is checked
//! when the parcel is opened.

use std::time::Duration;

/// The header's length: the file's bytes start here.
pub const AUDIO_HEADER_LEN: usize = 24;

const MAGIC: &[u8; 4] = b"AUD1";

/// The container and codec of an [`Audio`] resource's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AudioFormat {
    /// RIFF WAVE (PCM or IEEE float samples).
    Wav,
    /// Vorbis in an Ogg container.
    OggVorbis,
    /// FLAC.
    Flac,
    /// MPEG-1/2 Layer III.
    Mp3,
}

impl AudioFormat {
    /// The byte the header stores it as (the writer's side of `from_code`).
    #[cfg(feature = "write")]
    fn code(self) -> u8 {
        match self {
            AudioFormat::Wav => 1,
            AudioFormat::OggVorbis => 2,
            AudioFormat::Flac => 3,
            AudioFormat::Mp3 => 4,
        }
    }

    fn from_code(code: u8) -> Option<AudioFormat> {
        Some(match code {
            1 => AudioFormat::Wav,
            2 => AudioFormat::OggVorbis,
            3 => AudioFormat::Flac,
            4 => AudioFormat::Mp3,
            _ => return None,
        })
    }

    /// The usual file extension: `wav`, `ogg`, `flac`, `mp3`.
    pub fn extension(self) -> &'static str {
        match self {
            AudioFormat::Wav => "wav",
            AudioFormat::OggVorbis => "ogg",
            AudioFormat::Flac => "flac",
            AudioFormat::Mp3 => "mp3",
        }
    }
}

/// What an `audio` resource's header says of its sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AudioInfo {
    /// The file's format.
    pub format: AudioFormat,
    /// Channels: 1 mono, 2 stereo...
    pub channels: u8,
    /// Frames per second.
    pub sample_rate: u32,
    /// Frames (samples per channel) the whole file decoded to.
    pub frames: u64,
}

impl AudioInfo {
    /// How long the sound plays.
    pub fn duration(&self) -> Duration {
        let whole = self.frames / u64::from(self.sample_rate);
        let rest = self.frames % u64::from(self.sample_rate);
        Duration::from_secs(whole)
            + Duration::from_nanos(rest * 1_000_000_000 / u64::from(self.sample_rate))
    }

    /// The resource: this header, then `file`, the sound file's bytes.
    #[cfg(feature = "write")]
    pub fn encode(&self, file: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(AUDIO_HEADER_LEN + file.len());
        out.extend_from_slice(MAGIC);
        out.push(self.format.code());
        out.push(self.channels);
        out.extend_from_slice(&[0; 2]);
        out.extend_from_slice(&self.sample_rate.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.frames.to_le_bytes());
        out.extend_from_slice(file);
        out
    }
}

/// An `audio` resource: what its header says, and the file's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Audio<'a> {
    /// Format, channels, sample rate and length.
    pub info: AudioInfo,
    /// The sound file, as authored: give it to an audio library.
    pub data: &'a [u8],
}

impl<'a> Audio<'a> {
    /// Reads a resource's bytes; `None` if the header is not a valid one.
    pub fn parse(bytes: &'a [u8]) -> Option<Audio<'a>> {
        let header = bytes.get(..AUDIO_HEADER_LEN)?;
        if &header[..4] != MAGIC || header[6..8] != [0; 2] || header[12..16] != [0; 4] {
            return None;
        }
        let format = AudioFormat::from_code(header[4])?;
        let channels = header[5];
        let sample_rate = u32::from_le_bytes(header[8..12].try_into().ok()?);
        let frames = u64::from_le_bytes(header[16..24].try_into().ok()?);
        if channels == 0 || sample_rate == 0 {
            return None;
        }
        Some(Audio {
            info: AudioInfo {
                format,
                channels,
                sample_rate,
                frames,
            },
            data: &bytes[AUDIO_HEADER_LEN..],
        })
    }
}

#[cfg(all(test, feature = "write"))]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_a_bad_one_is_refused() {
        let info = AudioInfo {
            format: AudioFormat::OggVorbis,
            channels: 2,
            sample_rate: 44_100,
            frames: 66_150,
        };
        let bytes = info.encode(b"OggS...");
        let audio = Audio::parse(&bytes).unwrap();
        assert_eq!(audio.info, info);
        assert_eq!(audio.data, b"OggS...");
        assert_eq!(info.duration(), Duration::from_millis(1500));
        for at in [0, 4, 5, 6, 8, 12] {
            let mut bad = bytes.clone();
            bad[at] = if at == 5 || at == 8 { 0 } else { 0xEE };
            if at == 8 {
                bad[8..12].copy_from_slice(&[0; 4]);
            }
            assert!(Audio::parse(&bad).is_none(), "byte {at}");
        }
        assert!(Audio::parse(&bytes[..AUDIO_HEADER_LEN - 1]).is_none());
    }
}
