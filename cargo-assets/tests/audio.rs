//! Sounds through the real binary: `.wav`, `.ogg`, `.flac` and `.mp3` files
//! are `audio` by default, checked by decoding them whole, and a game reads
//! each one's length, channels and sample rate from the parcel beside the
//! file's own bytes. The fixtures were written by libsndfile 1.2.2 (libvorbis,
//! libFLAC, LAME), as a sound tool exports them
//! (`assets-build/tests/fixtures/audio/README.md`).

use assets_runtime::{AudioFormat, ParcelBuf, ResourceId};
use assets_test_support::Project;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets-build/tests/fixtures/audio"
);

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

#[test]
fn sounds_are_checked_and_a_game_reads_their_length_without_decoding() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    let formats = [
        ("wav", AudioFormat::Wav),
        ("ogg", AudioFormat::OggVorbis),
        ("flac", AudioFormat::Flac),
        ("mp3", AudioFormat::Mp3),
    ];
    for (ext, _) in formats {
        // Names as a sound library exports them: spaces, capitals.
        p.file(
            &format!("assets/sfx/Door Slam.{ext}"),
            fixture(&format!("chirp.{ext}")),
        );
    }
    let run = p.build_ok();
    let buf = ParcelBuf::open(&run.parcel("main")).unwrap();
    let parcel = buf.parcel();
    for (ext, format) in formats {
        let name = format!("sfx/Door Slam.{ext}");
        let sound = parcel.audio(ResourceId::of_runtime(&name)).unwrap();
        assert_eq!(
            sound.data,
            fixture(&format!("chirp.{ext}")),
            "{name}: the file as authored"
        );
        assert_eq!(
            (
                sound.info.format,
                sound.info.channels,
                sound.info.sample_rate,
                sound.info.frames
            ),
            (format, 2, 22_050, 5_512),
            "{name}"
        );
    }

    // A truncated copy fails by name and reason; the last good parcel stays.
    let good = std::fs::read(run.parcel("main")).unwrap();
    let ogg = fixture("chirp.ogg");
    p.file("assets/sfx/Door Slam.ogg", &ogg[..ogg.len() / 2]);
    let run = p.run(&["build"]);
    assert_eq!(run.code, Some(101), "{}", run.stderr);
    let message = run.failure_message("sfx/Door Slam.ogg");
    assert!(
        message.starts_with("starts as an Ogg file but cannot be read (cut short or damaged?)"),
        "{message}"
    );
    assert!(run.stderr.contains("`sfx/Door Slam.ogg`"), "{}", run.stderr);
    assert_eq!(std::fs::read(run.parcel("main")).unwrap(), good);

    // Put back as it was, its last good build is fresh again: nothing runs.
    p.file("assets/sfx/Door Slam.ogg", &ogg);
    let run = p.build_ok();
    assert!(run.processed().is_empty(), "{:?}", run.processed());
    assert_eq!(std::fs::read(run.parcel("main")).unwrap(), good);
}

/// A `seconds`-long stereo sound at 44.1 kHz as a 16-bit WAV: two tones
/// and a sweep, as music and effects hold; its samples too, interleaved.
fn music_wav(seconds: f64) -> (Vec<u8>, Vec<i16>) {
    surround_wav(seconds, 2)
}

/// [`music_wav`] with `channels` channels (the third on, quieter tones).
fn surround_wav(seconds: f64, channels: u16) -> (Vec<u8>, Vec<i16>) {
    let rate = 44_100u32;
    let frames = (seconds * f64::from(rate)) as usize;
    let mut samples = Vec::with_capacity(frames * usize::from(channels));
    for i in 0..frames {
        let t = i as f64 / f64::from(rate);
        let sweep = (std::f64::consts::TAU * (200.0 + 300.0 * t) * t).sin();
        let left = 0.4 * (std::f64::consts::TAU * 440.0 * t).sin() + 0.2 * sweep;
        let right = 0.3 * (std::f64::consts::TAU * 660.0 * t).sin() + 0.2 * sweep;
        samples.extend([(left * 32767.0) as i16, (right * 32767.0) as i16]);
        for c in 2..channels {
            let tone = 0.1 * (std::f64::consts::TAU * 110.0 * f64::from(c) * t).sin();
            samples.push((tone * 32767.0) as i16);
        }
    }
    let frame_bytes = 2 * channels;
    let data_len = (samples.len() * 2) as u32;
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&channels.to_le_bytes());
    wav.extend_from_slice(&rate.to_le_bytes());
    wav.extend_from_slice(&(rate * u32::from(frame_bytes)).to_le_bytes()); // bytes a second
    wav.extend_from_slice(&frame_bytes.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits a sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    for s in &samples {
        wav.extend_from_slice(&s.to_le_bytes());
    }
    (wav, samples)
}

/// `ogg` decoded by libsndfile (Python's `soundfile`, in the venv
/// `tests/install-tools.sh` makes): its frames and sample rate, and the
/// signal-to-noise ratio in dB of its samples against `source` (16-bit,
/// interleaved stereo); `None` when it is not installed.
fn libsndfile_snr(
    ogg: &[u8],
    source: &[i16],
    scratch: &std::path::Path,
) -> Option<(u64, u32, f64)> {
    let (ogg_path, wav_path) = (scratch.join("t.ogg"), scratch.join("t.raw"));
    std::fs::write(&ogg_path, ogg).unwrap();
    let raw: Vec<u8> = source.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&wav_path, raw).unwrap();
    let script = "import sys, numpy, soundfile; \
                  d, rate = soundfile.read(sys.argv[1], dtype='float64'); \
                  s = numpy.fromfile(sys.argv[2], dtype='<i2').reshape(-1, 2) / 32768.0; \
                  n = min(len(s), len(d)); \
                  noise = ((s[:n] - d[:n]) ** 2).sum(); \
                  print(len(d), rate, 10 * numpy.log10((s[:n] ** 2).sum() / noise))";
    let args = [ogg_path.as_os_str(), wav_path.as_os_str()];
    let out = assets_test_support::run_venv_python("libsndfile", script, &args)?;
    let text = String::from_utf8(out).unwrap();
    let mut words = text.split_whitespace();
    let mut next = || words.next().unwrap().to_owned();
    Some((
        next().parse().unwrap(),
        next().parse().unwrap(),
        next().parse().unwrap(),
    ))
}

#[test]
fn lossless_sounds_ship_as_ogg_vorbis_when_asked_and_lossy_ones_as_authored() {
    let p = Project::new(env!("CARGO_BIN_EXE_cargo-assets"));
    p.metadata(
        r#"
[[package.metadata.assets.rules]]
match = "music/**"
processor = "audio"
transcode = "vorbis"
"#,
    );
    let (wav, samples) = music_wav(2.0);
    p.file("assets/music/Main Theme.wav", &wav);
    p.file("assets/music/chirp.flac", fixture("chirp.flac"));
    p.file("assets/music/chirp.ogg", fixture("chirp.ogg"));
    let (surround, _) = surround_wav(0.5, 6);
    p.file("assets/music/ambience 5.1.wav", &surround);
    let run = p.build_ok();
    let bytes = std::fs::read(run.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let sound = |name: &str| parcel.audio(ResourceId::of_runtime(name)).unwrap();

    // The WAV and the FLAC: Ogg Vorbis now, every frame kept.
    let theme = sound("music/Main Theme.wav");
    assert_eq!(
        (
            theme.info.format,
            theme.info.channels,
            theme.info.sample_rate,
            theme.info.frames
        ),
        (AudioFormat::OggVorbis, 2, 44_100, 88_200)
    );
    assert!(theme.data.starts_with(b"OggS"));
    assert!(
        theme.data.len() * 6 < wav.len(),
        "{} bytes of Vorbis from {} of WAV",
        theme.data.len(),
        wav.len()
    );
    let chirp = sound("music/chirp.flac");
    assert_eq!(
        (chirp.info.format, chirp.info.frames),
        (AudioFormat::OggVorbis, 5_512)
    );
    // The Ogg was lossy already: as authored, and said so.
    assert_eq!(sound("music/chirp.ogg").data, fixture("chirp.ogg"));
    let warning = run
        .with_reason("asset-warning")
        .find(|m| m["asset"] == "music/chirp.ogg")
        .expect("a warning for the kept Ogg");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("lossy already"),
        "{warning}"
    );

    // The same samples give the same bytes: built again from nothing.
    let theme_bytes = theme.data.to_vec();
    assert!(p.run(&["clean"]).success());
    let again = p.build_ok();
    let bytes = std::fs::read(again.parcel("main")).unwrap();
    let parcel = assets_runtime::Parcel::from_bytes(&bytes).unwrap();
    let rebuilt = parcel
        .audio(ResourceId::of_runtime("music/Main Theme.wav"))
        .unwrap();
    assert_eq!(rebuilt.data, theme_bytes, "deterministic");

    // A quality outside Vorbis's range is an error at its key.
    p.metadata(
        "[[package.metadata.assets.rules]]\nmatch = \"music/**\"\nprocessor = \"audio\"\ntranscode = \"vorbis\"\nquality = 4\n",
    );
    let bad = p.run(&["build"]);
    assert!(!bad.success(), "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("`quality = 4` is outside Vorbis's 0.0 to 1.0"),
        "{}",
        bad.stderr
    );

    // libsndfile, a decoder we did not write, reads every frame back,
    // close to the source.
    let scratch = tempfile::tempdir().unwrap();
    let Some((frames, rate, snr)) = libsndfile_snr(&theme_bytes, &samples, scratch.path()) else {
        eprintln!(
            "soundfile (libsndfile) is not installed: tests/install-tools.sh installs it; skipped its check"
        );
        return;
    };
    assert_eq!((frames, rate), (88_200, 44_100));
    assert!(snr > 20.0, "SNR {snr:.1} dB");
    eprintln!(
        "Vorbis at 0.4: {} bytes from {} of WAV ({:.1}x), SNR {snr:.1} dB by libsndfile",
        theme_bytes.len(),
        wav.len(),
        wav.len() as f64 / theme_bytes.len() as f64
    );
}
