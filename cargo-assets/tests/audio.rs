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
