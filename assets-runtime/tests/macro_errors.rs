//! `include_parcel!`'s compile errors, pinned with trybuild: a parcel that
//! does not exist (listing those that do), two assets mapping to one
//! constant (all of them in one compile), an asset the code names that is not there, a constant used as
//! the wrong kind, and a package without the build script.
//!
//! Parcels are written here, as a build script would leave them: the parcel
//! file and its table of contents in one directory, named by
//! `CARGO_ASSETS_PARCELS`.

/// Writes `<name>.parcel` (arbitrary bytes: the failing cases never read it)
/// and its table of contents listing `entries` as (kind, name).
fn parcel(dir: &std::path::Path, name: &str, entries: &[(&str, &str)]) {
    let bytes = vec![0u8; 64];
    std::fs::write(dir.join(format!("{name}.parcel")), &bytes).unwrap();
    let mut toc = format!("{}\n{}\n", assets_runtime::toc::HEADER, bytes.len());
    for (kind, resource) in entries {
        toc.push_str(&format!("{kind}\t{resource}\n"));
    }
    std::fs::write(dir.join(format!("{name}.parcel.toc")), toc).unwrap();
}

/// Runs the ignored test `name` of this binary in a child process with
/// `CARGO_ASSETS_PARCELS` set to `parcels` (or unset): trybuild's cargo
/// inherits the environment, and changing our own needs `unsafe`.
fn run_with_parcels(name: &str, parcels: Option<&std::path::Path>) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child.args([name, "--exact", "--ignored", "--nocapture"]);
    match parcels {
        Some(dir) => child.env("CARGO_ASSETS_PARCELS", dir),
        None => child.env_remove("CARGO_ASSETS_PARCELS"),
    };
    let status = child.status().unwrap();
    assert!(status.success(), "{name} failed; its output is above");
}

#[test]
fn include_parcel_errors_name_the_problem_and_the_fix() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("macro-parcels");
    std::fs::create_dir_all(&dir).unwrap();
    parcel(
        &dir,
        "main",
        &[
            ("sprite", "sprites/hero-idle.png"),
            ("shader", "shaders/water.wgsl"),
            ("text", "shaders/water.wgsl#reflection"),
            ("font", "fonts/FiraSans-Bold.ttf"),
            ("text", "data/intro.txt"),
            ("level", "levels/one.lvl#collision"),
            ("tilemap", "maps/Level 1.tmx"),
            ("image", "atlas:main#0"),
            ("sprite", "branding/bevy_bird_dark.png"),
            ("bytes", "branding/bevy_bird_dark.svg"),
            ("bytes", "models/FlightHelmet/FlightHelmet.gltf"),
            ("bytes", "models/FlightHelmet/FlightHelmet.bin"),
            (
                "image",
                "models/FlightHelmet/FlightHelmet_Materials_LeatherPartsMat_BaseColor.png",
            ),
        ],
    );
    parcel(
        &dir,
        "clash",
        &[
            ("sprite", "ui/ok-button.png"),
            ("sprite", "ui/ok_button.png"),
            ("sprite", "ui/logo.png"),
            ("bytes", "ui/logo.svg"),
            ("text", "data/Game Over.txt"),
            ("text", "data/game_over.txt"),
        ],
    );
    // One after the other: both use trybuild's one project directory.
    run_with_parcels("with_parcels", Some(&dir));
    run_with_parcels("without_parcels", None);
}

#[test]
#[ignore = "run by include_parcel_errors_name_the_problem_and_the_fix"]
fn with_parcels() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/with_parcels/works.rs");
    t.compile_fail("tests/ui/with_parcels/missing_parcel.rs");
    t.compile_fail("tests/ui/with_parcels/name_collision.rs");
    t.compile_fail("tests/ui/with_parcels/missing_asset.rs");
    t.compile_fail("tests/ui/with_parcels/wrong_kind.rs");
}

#[test]
#[ignore = "run by include_parcel_errors_name_the_problem_and_the_fix"]
fn without_parcels() {
    trybuild::TestCases::new().compile_fail("tests/ui/no_build_script/no_build_script.rs");
}
