//! A headless Bevy `App` (no renderer) loading from a parcel the real
//! pipeline built: images and sprites equal their source PNGs, folders list
//! what they hold, a missing path is Bevy's not-found, the typed IDs of
//! `include_parcel!` load, and the same app code reading loose files with
//! Bevy's own PNG loader gets the same pixels.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assets_runtime::{ResourceId, SpriteId};
use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::AssetApp;
use bevy_asset::{
    AssetPlugin, AssetServer, Assets, Handle, LoadState, LoadedFolder, UntypedHandle,
};
use bevy_cargo_assets::{CargoAssetsPlugin, ParcelAssets};
use bevy_ecs::system::RunSystemOnce;
use bevy_image::{CompressedImageFormats, Image, ImageLoader, ImagePlugin};
use bevy_math::{IRect, IVec2, URect};

/// A sprite with a clear border the atlas trims away (and the reader puts back).
fn sprite(w: u32, h: u32, seed: u32) -> image::RgbaImage {
    image::RgbaImage::from_fn(w, h, |x, y| {
        let inside = x >= 2 && y >= 1 && x + 2 < w && y + 1 < h;
        let v = (x * 31 + y * 17 + seed * 7) as u8;
        image::Rgba(if inside {
            [v, 255 - v, (seed * 40) as u8, 255]
        } else {
            [0; 4]
        })
    })
}

/// A project whose parcel the pipeline builds: two sprites in an atlas (one
/// in a subfolder), an image, a text. Returns its directory and the parcel.
fn built_project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bevy-game\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"sprites/**/*.png\"\nprocessor = \"sprite\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"sounds/*.flac\"\nprocessor = \"audio\"\ntranscode = \"vorbis\"\n",
    )
    .unwrap();
    let write_png = |name: &str, img: &image::RgbaImage| {
        let path = root.join("assets").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        img.save(&path).unwrap();
    };
    write_png("sprites/hero.png", &sprite(24, 18, 1));
    write_png("sprites/tiles/grass.png", &sprite(16, 16, 2));
    write_png("images/sky.png", &sprite(40, 30, 3));
    std::fs::create_dir_all(root.join("assets/characters")).unwrap();
    std::fs::copy(
        aseprite_fixture("layers_and_tags.aseprite"),
        root.join("assets/characters/Hero Run.aseprite"),
    )
    .unwrap();
    std::fs::copy(
        aseprite_fixture("slice_advanced.aseprite"),
        root.join("assets/characters/Slime.aseprite"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets/textures")).unwrap();
    std::fs::write(root.join("assets/textures/ground.ktx2"), ground_ktx2().1).unwrap();
    // The same, each level a zstd frame (as `toktx --zcmp` writes).
    let format = assets_runtime::TextureFormat::Bc1RgbaUnormSrgb;
    let zstd = assets_runtime::texture::write::ktx2_zstd(format, 16, 16, &ground_ktx2().0, 19);
    std::fs::write(root.join("assets/textures/ground zstd.ktx2"), zstd.unwrap()).unwrap();
    std::fs::create_dir_all(root.join("assets/sounds")).unwrap();
    std::fs::write(root.join("assets/sounds/Door Slam.ogg"), sound_file()).unwrap();
    // Shipped as Ogg Vorbis under its own name.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets-build/tests/fixtures/audio/chirp.flac"),
        root.join("assets/sounds/Theme.flac"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets/data")).unwrap();
    std::fs::write(
        root.join("assets/data/level.json"),
        "{\"name\": \"meadow\"}\n",
    )
    .unwrap();
    let parcel = build_parcel(root);
    (dir, parcel)
}

/// Builds the package at `root` with the pipeline; the path of its parcel.
fn build_parcel(root: &Path) -> PathBuf {
    let options = assets_build::unstable::BuildOptions::new(
        root.join("Cargo.toml"),
        root.join("target/assets"),
    );
    let report = assets_build::unstable::Pipeline::new(options)
        .build(&|_| {})
        .unwrap();
    assert!(report.success(), "{:?}", report.failure_summary());
    report.parcels[0].path.clone()
}

/// A ready-made BC1 texture, 16×16 with its five mips (the block bytes
/// are arbitrary: any 8 bytes are a BC1 block): its levels and its file.
fn ground_ktx2() -> (Vec<Vec<u8>>, Vec<u8>) {
    let levels: Vec<Vec<u8>> = [16u32, 4, 1, 1, 1]
        .iter()
        .enumerate()
        .map(|(i, blocks)| {
            (0..blocks * 8)
                .map(|b| (b as usize * 7 + i) as u8)
                .collect()
        })
        .collect();
    let format = assets_runtime::TextureFormat::Bc1RgbaUnormSrgb;
    let file = assets_runtime::texture::write::ktx2(format, 16, 16, &levels);
    (levels, file)
}

/// A headless app: task pools, the asset server (with `asset_plugin`'s
/// settings), Bevy's image plugin (its PNG loader), and `before` added first.
fn app(before: Option<CargoAssetsPlugin>, asset_plugin: AssetPlugin) -> App {
    let mut app = App::new();
    app.add_plugins(TaskPoolPlugin::default());
    if let Some(plugin) = before {
        app.add_plugins(plugin);
    }
    app.add_plugins((asset_plugin, ImagePlugin::default()));
    // What Bevy's renderer registers (ImagePlugin only pre-registers it,
    // for the GPU's compressed formats): Bevy's loader of PNG files.
    app.register_asset_loader(ImageLoader::new(CompressedImageFormats::NONE));
    app.finish();
    app.cleanup();
    app
}

/// Updates `app` until every handle is loaded or failed; their states.
fn settle(app: &mut App, handles: &[UntypedHandle]) -> Vec<LoadState> {
    for _ in 0..2000 {
        app.update();
        let server = app.world().resource::<AssetServer>();
        let states: Vec<LoadState> = handles.iter().map(|h| server.load_state(h.id())).collect();
        if states
            .iter()
            .all(|s| matches!(s, LoadState::Loaded | LoadState::Failed(_)))
        {
            return states;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let server = app.world().resource::<AssetServer>();
    let states: Vec<LoadState> = handles.iter().map(|h| server.load_state(h.id())).collect();
    panic!("assets did not settle: {states:?}");
}

fn pixels(app: &App, handle: &Handle<Image>) -> (u32, u32, Vec<u8>) {
    let images = app.world().resource::<Assets<Image>>();
    let image = images.get(handle).expect("the image is loaded");
    let size = image.size();
    (
        size.x,
        size.y,
        image.data.clone().expect("pixels in main-world memory"),
    )
}

/// Loads `paths` as images the way a game does, returning each one's pixels.
fn load_images(app: &mut App, paths: &[&str]) -> Vec<(u32, u32, Vec<u8>)> {
    let handles: Vec<Handle<Image>> = {
        let server = app.world().resource::<AssetServer>();
        paths.iter().map(|p| server.load(p.to_string())).collect()
    };
    let untyped: Vec<UntypedHandle> = handles.iter().map(|h| h.clone().untyped()).collect();
    let states = settle(app, &untyped);
    for (path, state) in paths.iter().zip(&states) {
        assert!(matches!(state, LoadState::Loaded), "{path}: {state:?}");
    }
    handles.iter().map(|h| pixels(app, h)).collect()
}

fn source(project: &Path, name: &str) -> (u32, u32, Vec<u8>) {
    let img = image::open(project.join("assets").join(name))
        .unwrap()
        .to_rgba8();
    (img.width(), img.height(), img.into_raw())
}

#[test]
fn images_and_sprites_load_from_a_parcel_as_their_source_pngs() {
    let (project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    let paths = [
        "images/sky.png",
        "sprites/hero.png",
        "sprites/tiles/grass.png",
    ];
    let loaded = load_images(&mut app, &paths);
    for (path, got) in paths.iter().zip(&loaded) {
        assert!(
            *got == source(project.path(), path),
            "{path}: pixels differ"
        );
    }
}

#[test]
fn the_same_app_code_reads_loose_files_and_the_parcel_alike() {
    let (project, parcel) = built_project();
    let paths = [
        "images/sky.png",
        "sprites/hero.png",
        "sprites/tiles/grass.png",
    ];
    // Bevy's own file source and PNG loader, on the same tree.
    let loose = AssetPlugin {
        file_path: project.path().join("assets").display().to_string(),
        ..AssetPlugin::default()
    };
    let from_files = load_images(&mut app(None, loose), &paths);
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let from_parcel = load_images(&mut app(Some(plugin), AssetPlugin::default()), &paths);
    assert!(
        from_files == from_parcel,
        "the parcel's pixels differ from Bevy's own loading"
    );
}

#[test]
fn folders_list_the_parcels_files_and_a_missing_path_is_not_found() {
    let (_project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    let (folder, missing) = {
        let server = app.world().resource::<AssetServer>();
        let folder: Handle<LoadedFolder> = server.load_folder("sprites");
        let missing: Handle<Image> = server.load("sprites/nobody.png");
        (folder, missing)
    };
    let states = settle(
        &mut app,
        &[folder.clone().untyped(), missing.clone().untyped()],
    );
    assert!(matches!(states[0], LoadState::Loaded), "{:?}", states[0]);
    let folders = app.world().resource::<Assets<LoadedFolder>>();
    let mut names: Vec<String> = folders
        .get(&folder)
        .unwrap()
        .handles
        .iter()
        .map(|h| h.path().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["sprites/hero.png", "sprites/tiles/grass.png"]);
    match &states[1] {
        LoadState::Failed(e) => assert!(
            e.to_string().contains("not found") || e.to_string().contains("NotFound"),
            "{e}"
        ),
        other => panic!("a missing path loaded: {other:?}"),
    }
}

#[test]
fn typed_ids_load_handles_through_the_parcel() {
    let (project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    // What `include_parcel!` generates for `sprites/hero.png`.
    const HERO: SpriteId = SpriteId::of("sprites/hero.png");
    let handle = app
        .world_mut()
        .run_system_once(|assets: ParcelAssets<'_>| assets.sprite(HERO))
        .unwrap()
        .expect("the parcel holds the sprite");
    let nothing = app
        .world_mut()
        .run_system_once(|assets: ParcelAssets<'_>| {
            assets.load::<Image>(ResourceId::of("no/such.png"))
        })
        .unwrap();
    assert!(nothing.is_none());
    settle(&mut app, &[handle.clone().untyped()]);
    assert!(pixels(&app, &handle) == source(project.path(), "sprites/hero.png"));
}

/// Runs `cargo assets <args>` in this process.
fn cargo_assets(args: &[&str]) -> std::process::ExitCode {
    let args = std::iter::once("cargo-assets").chain(args.iter().copied());
    cargo_assets::run(args.map(std::ffi::OsString::from), &[])
}

#[test]
fn a_sprite_saved_under_watch_is_reloaded_in_the_running_app() {
    let (project, _) = built_project();
    let manifest = project.path().join("Cargo.toml");
    let target = project.path().join("target");
    let (manifest, target) = (manifest.to_str().unwrap(), target.to_str().unwrap());
    let built = cargo_assets(&[
        "build",
        "-q",
        "--manifest-path",
        manifest,
        "--target-dir",
        target,
    ]);
    assert_eq!(built, std::process::ExitCode::SUCCESS);
    let parcel = project
        .path()
        .join("target/assets/parcels/bevy-game/dev/main.parcel");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (m, t, p) = (manifest.to_owned(), target.to_owned(), port.to_string());
    std::thread::spawn(move || {
        cargo_assets(&[
            "watch",
            "-q",
            "--port",
            &p,
            "--manifest-path",
            &m,
            "--target-dir",
            &t,
        ])
    });

    let plugin = CargoAssetsPlugin::file(&parcel).unwrap().hot_reload(port);
    let watching = AssetPlugin {
        watch_for_changes_override: Some(true),
        ..AssetPlugin::default()
    };
    let mut app = app(Some(plugin), watching);
    let hero: Handle<Image> = app
        .world()
        .resource::<AssetServer>()
        .load("sprites/hero.png");
    settle(&mut app, &[hero.clone().untyped()]);
    assert!(pixels(&app, &hero) == source(project.path(), "sprites/hero.png"));

    // Saved while the game runs (after the watcher's first build has had
    // time to settle): the handle's pixels become the new ones.
    std::thread::sleep(Duration::from_secs(3));
    sprite(30, 20, 9)
        .save(project.path().join("assets/sprites/hero.png"))
        .unwrap();
    let new = source(project.path(), "sprites/hero.png");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while pixels(&app, &hero) != new {
        assert!(
            std::time::Instant::now() < deadline,
            "the sprite was not reloaded"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_ktx2_texture_loads_in_its_gpu_format_with_its_mips() {
    let (_project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    // Plain, and zstd-supercompressed: the same image.
    let grounds: Vec<Handle<Image>> = ["textures/ground.ktx2", "textures/ground zstd.ktx2"]
        .map(|path| app.world().resource::<AssetServer>().load(path))
        .into();
    let states = settle(
        &mut app,
        &grounds
            .iter()
            .map(|h| h.clone().untyped())
            .collect::<Vec<_>>(),
    );
    let images = app.world().resource::<Assets<Image>>();
    for (ground, state) in grounds.iter().zip(&states) {
        assert!(matches!(state, LoadState::Loaded), "{state:?}");
        let image = images.get(ground).unwrap();
        assert_eq!(
            image.texture_descriptor.format,
            wgpu_types::TextureFormat::Bc1RgbaUnormSrgb
        );
        assert_eq!(image.texture_descriptor.mip_level_count, 5);
        assert_eq!((image.width(), image.height()), (16, 16));
        let (levels, _) = ground_ktx2();
        assert_eq!(
            image.data.as_deref(),
            Some(levels.concat().as_slice()),
            "level 0 first"
        );
    }
}

/// A parcel holding `stone.png` (`photo`) as a UASTC texture.
fn uastc_parcel(photo: &image::RgbaImage) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bevy-game\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"*.png\"\nprocessor = \"texture\"\nformat = \"uastc\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets")).unwrap();
    photo.save(root.join("assets/stone.png")).unwrap();
    let parcel = build_parcel(root);
    (dir, parcel)
}

#[test]
fn a_uastc_texture_is_transcoded_to_what_the_gpu_takes() {
    // Smooth colour with some detail, as photos and painted art are.
    let photo = image::RgbaImage::from_fn(40, 24, |x, y| {
        let detail = ((x * 7 + y * 13) % 11) as u8;
        image::Rgba([(x * 6) as u8 + detail, (y * 10) as u8, 200 - detail, 255])
    });
    let (_project, parcel) = uastc_parcel(&photo);
    use wgpu_types::{AstcBlock, AstcChannel, TextureFormat as F};
    // (what the renderer says the GPU takes, the format the image gets)
    for (gpu, want) in [
        (None, F::Rgba8UnormSrgb),
        (Some(CompressedImageFormats::BC), F::Bc7RgbaUnormSrgb),
        (Some(CompressedImageFormats::ETC2), F::Etc2Rgba8UnormSrgb),
        (
            Some(CompressedImageFormats::ASTC_LDR | CompressedImageFormats::BC),
            F::Astc {
                block: AstcBlock::B4x4,
                channel: AstcChannel::UnormSrgb,
            },
        ),
    ] {
        let mut app = App::new();
        app.add_plugins(TaskPoolPlugin::default());
        if let Some(formats) = gpu {
            // As Bevy's renderer publishes it in its `finish`.
            app.insert_resource(bevy_image::CompressedImageFormatSupport(formats));
        }
        app.add_plugins(CargoAssetsPlugin::file(&parcel).unwrap());
        app.add_plugins((AssetPlugin::default(), ImagePlugin::default()));
        app.finish();
        app.cleanup();
        let handle: Handle<Image> = app.world().resource::<AssetServer>().load("stone.png");
        let states = settle(&mut app, &[handle.clone().untyped()]);
        assert!(
            matches!(states[0], LoadState::Loaded),
            "{gpu:?}: {:?}",
            states[0]
        );
        let images = app.world().resource::<Assets<Image>>();
        let image = images.get(&handle).unwrap();
        assert_eq!(image.texture_descriptor.format, want, "{gpu:?}");
        assert_eq!(image.texture_descriptor.mip_level_count, 6, "40x24 to 1x1");
        // Every level, as that format lays it out.
        let bytes: u64 = (0..6)
            .map(|i| {
                let (w, h) = ((40u32 >> i).max(1), (24u32 >> i).max(1));
                let blocks = u64::from(w.div_ceil(4) * h.div_ceil(4));
                match want {
                    F::Rgba8UnormSrgb => u64::from(w * h * 4),
                    _ => blocks * 16,
                }
            })
            .sum();
        let data = image.data.as_deref().unwrap();
        assert_eq!(data.len() as u64, bytes, "{gpu:?}");
        if gpu.is_none() {
            // RGBA8: level 0 within a stated PSNR of the source.
            let sum: f64 = (photo.as_raw().iter().zip(data))
                .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                .sum();
            let mse = sum / photo.as_raw().len() as f64;
            let psnr = 10.0 * (255.0f64 * 255.0 / mse).log10();
            assert!(psnr > 35.0, "UASTC to RGBA8: PSNR {psnr:.1} dB");
        }
    }
}

#[test]
fn a_sprite_draws_from_its_page_through_a_texture_atlas_layout() {
    let (project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    const HERO: SpriteId = SpriteId::of("sprites/hero.png");
    const GRASS: SpriteId = SpriteId::of("sprites/tiles/grass.png");
    let (hero, grass) = app
        .world_mut()
        .run_system_once(|mut assets: ParcelAssets<'_>| {
            let hero = assets.atlas_sprite(HERO).unwrap().unwrap();
            let grass = assets.atlas_sprite(GRASS).unwrap().unwrap();
            (hero, grass)
        })
        .unwrap();
    assert_eq!(hero.atlas.layout, grass.atlas.layout, "one layout a page");
    assert_ne!(hero.atlas.index, grass.atlas.index);
    settle(&mut app, &[hero.image.clone().untyped()]);
    let (page_w, _, page) = pixels(&app, &hero.image);
    let layouts = app
        .world()
        .resource::<Assets<bevy_image::TextureAtlasLayout>>();
    let rect = layouts.get(&hero.atlas.layout).unwrap().textures[hero.atlas.index];
    // The rect holds the trimmed sprite: its pixels are the source's inside
    // the trim offsets.
    let (src_w, _, src) = source(project.path(), "sprites/hero.png");
    let (tx, ty) = (hero.frame.trim_x, hero.frame.trim_y);
    assert_eq!((rect.width(), rect.height()), (hero.frame.w, hero.frame.h));
    for y in 0..rect.height() {
        for x in 0..rect.width() {
            let at = (((rect.min.y + y) * page_w + rect.min.x + x) * 4) as usize;
            let want = (((ty + y) * src_w + tx + x) * 4) as usize;
            assert_eq!(page[at..at + 4], src[want..want + 4], "pixel ({x}, {y})");
        }
    }
}

#[test]
fn a_turned_sprite_is_refused_by_name_for_a_layout_and_loads_upright_alone() {
    // Two tall sprites and three wide ones on 32-pixel pages, turning
    // allowed: the packer lays two wide ones turned beside the tall ones.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"turned\"\nversion = \"0.1.0\"\n\n\
         [[package.metadata.assets.rules]]\nmatch = \"sprites/*.png\"\nprocessor = \"sprite\"\n\n\
         [package.metadata.assets.atlases.main]\nmax-size = 32\nrotate = true\npadding = 0\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets/sprites")).unwrap();
    let solid = |w: u32, h: u32, seed: u8| {
        image::RgbaImage::from_fn(w, h, |x, y| {
            image::Rgba([seed.wrapping_mul(40), (x * 8) as u8, (y * 8) as u8, 255])
        })
    };
    for (name, w, h) in [
        ("tall", 8, 30),
        ("tall2", 8, 30),
        ("w0", 30, 8),
        ("w1", 30, 8),
        ("w2", 30, 8),
    ] {
        solid(w, h, name.len() as u8)
            .save(root.join(format!("assets/sprites/{name}.png")))
            .unwrap();
    }
    let parcel_path = build_parcel(root);
    let buf = assets_runtime::ParcelBuf::open(&parcel_path).unwrap();
    let turned: Vec<String> = (buf.parcel().iter())
        .filter(|r| r.sprite_frame().is_some_and(|f| f.rotated))
        .map(|r| r.name.to_owned())
        .collect();
    assert!(!turned.is_empty(), "the packing turns a sprite");

    let plugin = CargoAssetsPlugin::file(&parcel_path).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    let name = turned[0].clone();
    let id = SpriteId::from_id(ResourceId::of_runtime(&name));
    let refused = app
        .world_mut()
        .run_system_once(move |mut assets: ParcelAssets<'_>| {
            assets
                .atlas_sprite(id)
                .unwrap()
                .err()
                .map(|e| e.to_string())
        })
        .unwrap()
        .expect("a layout of a page holding a turned sprite is refused");
    assert!(
        (turned.iter())
            .any(|t| refused.contains(&format!("sprite `{t}` lies turned on its atlas page")))
            && refused.contains("set `rotate = false`"),
        "{refused}"
    );
    // Alone, it is the source image, upright.
    let loaded = load_images(&mut app, &[name.as_str()]);
    assert_eq!(loaded[0], source(root, &name));
}

/// A real Ogg Vorbis file (libsndfile's; see assets-build's audio fixtures).
fn sound_file() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../assets-build/tests/fixtures/audio/chirp.ogg"
    ))
    .unwrap()
}

#[test]
fn a_sound_is_served_as_its_file_for_bevys_audio_loader() {
    use bevy_asset::io::{AssetReader, Reader as _};
    let (_dir, parcel) = built_project();
    let parcels = bevy_cargo_assets::Parcels::default();
    parcels.add_file(&parcel).unwrap();
    // The parcel holds it as `audio` (checked, with its length)...
    let held = assets_runtime::ParcelBuf::open(&parcel).unwrap();
    let audio = held
        .parcel()
        .audio(ResourceId::of("sounds/Door Slam.ogg"))
        .unwrap();
    assert_eq!(audio.info.frames, 5_512);
    // ...and Bevy's reader is handed the file itself, which `bevy_audio`'s
    // loader for `.ogg` reads, with no `.meta` asked of anyone.
    let reader = bevy_cargo_assets::ParcelReader::new(parcels);
    let bytes = futures_lite::future::block_on(async {
        let mut file = reader
            .read(Path::new("sounds/Door Slam.ogg"))
            .await
            .unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).await.unwrap();
        bytes
    });
    assert_eq!(bytes, sound_file());
    let meta =
        futures_lite::future::block_on(reader.read_meta(Path::new("sounds/Door Slam.ogg.meta")));
    assert!(
        meta.is_err(),
        "no meta: Bevy's loader for the extension, with its defaults"
    );
    // A FLAC the pipeline made Ogg Vorbis keeps its name: the meta names
    // `bevy_audio`'s loader, which would not be asked for `.flac` files
    // without Bevy's `flac` feature (rodio tells the format by the bytes).
    let (bytes, meta) = futures_lite::future::block_on(async {
        let mut file = reader.read(Path::new("sounds/Theme.flac")).await.unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).await.unwrap();
        let mut meta = reader
            .read_meta(Path::new("sounds/Theme.flac.meta"))
            .await
            .expect("a meta naming the loader");
        let mut text = Vec::new();
        meta.read_to_end(&mut text).await.unwrap();
        (bytes, String::from_utf8(text).unwrap())
    });
    assert!(bytes.starts_with(b"OggS"));
    assert!(
        meta.contains("loader: \"bevy_audio::audio_source::AudioLoader\""),
        "{meta}"
    );
}

/// A file of `assets-build/tests/fixtures/aseprite/` (an Aseprite file and
/// Aseprite's own export of its frames; see the README there).
fn aseprite_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets-build/tests/fixtures/aseprite")
        .join(name)
}

#[test]
fn an_aseprite_animation_draws_each_frame_from_its_page_and_plays_its_tags() {
    let (_project, parcel) = built_project();
    let plugin = CargoAssetsPlugin::file(&parcel).unwrap();
    let mut app = app(Some(plugin), AssetPlugin::default());
    const RUN: assets_runtime::AnimationId =
        assets_runtime::AnimationId::of("characters/Hero Run.aseprite");
    const HERO: SpriteId = SpriteId::of("sprites/hero.png");
    const SLIME: assets_runtime::AnimationId =
        assets_runtime::AnimationId::of("characters/Slime.aseprite");
    let (run, hero, slime) = app
        .world_mut()
        .run_system_once(|mut assets: ParcelAssets<'_>| {
            let run = assets.atlas_animation(RUN).unwrap().unwrap();
            let hero = assets.atlas_sprite(HERO).unwrap().unwrap();
            let slime = assets.atlas_animation(SLIME).unwrap().unwrap();
            (run, hero, slime)
        })
        .unwrap();
    // Its slices, in image coordinates (the fixtures' README says what
    // ase-parser reads): `Slice 1` keyed at every frame with a pivot,
    // `Slice 2` a 9-slice.
    assert!(run.slices.is_empty());
    let hop = slime.slice("Slice 1", 2).unwrap();
    assert_eq!(
        (hop.from, hop.bounds, hop.pivot),
        (2, IRect::new(24, 11, 32, 21), Some(IVec2::new(4, 10)))
    );
    let panel = slime.slice("Slice 2", 3).unwrap();
    assert_eq!(panel.center, Some(URect::new(3, 3, 5, 5)));
    assert!(slime.slice("Slice 3", 0).is_none());
    assert_eq!(run.frames.len(), 4);
    assert_eq!(run.durations_ms, [100; 4]);
    let t3 = run.tag("T3").unwrap();
    assert_eq!(run.frame_at(Some(t3), Duration::from_millis(150)), 2);
    assert_eq!(run.frame_at(None, Duration::from_millis(350)), 3);
    // The frames share their page's one layout with the sprites.
    let mut indices: Vec<usize> = run.frames.iter().map(|f| f.atlas.index).collect();
    indices.push(hero.atlas.index);
    indices.sort_unstable();
    indices.dedup();
    assert_eq!(
        indices.len(),
        5,
        "each frame and the sprite a rect of its own"
    );
    let handles: Vec<UntypedHandle> = run
        .frames
        .iter()
        .map(|f| f.image.clone().untyped())
        .collect();
    settle(&mut app, &handles);
    for (i, frame) in run.frames.iter().enumerate() {
        assert_eq!(frame.atlas.layout, hero.atlas.layout, "one layout a page");
        let (page_w, _, page) = pixels(&app, &frame.image);
        let layouts = app
            .world()
            .resource::<Assets<bevy_image::TextureAtlasLayout>>();
        let rect = layouts.get(&frame.atlas.layout).unwrap().textures[frame.atlas.index];
        let png = aseprite_fixture(&format!("layers_and_tags_{:02}.png", i + 1));
        let exported = image::open(png).unwrap().into_rgba8();
        let (tx, ty) = (frame.frame.trim_x, frame.frame.trim_y);
        for y in 0..rect.height() {
            for x in 0..rect.width() {
                let at = (((rect.min.y + y) * page_w + rect.min.x + x) * 4) as usize;
                let want = exported.get_pixel(tx + x, ty + y).0;
                if want[3] == 0 {
                    assert_eq!(page[at + 3], 0, "frame {i} ({x}, {y}) clear");
                } else {
                    assert_eq!(
                        page[at..at + 4],
                        want,
                        "frame {i} pixel ({x}, {y}), as Aseprite exports it"
                    );
                }
            }
        }
    }
}

#[test]
fn a_tiled_map_loads_with_the_images_it_draws_with() {
    use bevy_cargo_assets::ParcelTileMap;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bevy-maps\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    for folder in ["maps", "tilesets"] {
        std::fs::create_dir_all(root.join("assets").join(folder)).unwrap();
    }
    // As Tiled saves them: the map names its tileset, the tileset its image.
    std::fs::write(
        root.join("assets/maps/Meadow.tmx"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" orientation="orthogonal" renderorder="right-down" width="3" height="1" tilewidth="16" tileheight="16" infinite="0">
 <tileset firstgid="1" source="../tilesets/meadow.tsx"/>
 <layer id="1" name="Ground" width="3" height="1"><data encoding="csv">1,0,2</data></layer>
</map>
"#,
    )
    .unwrap();
    std::fs::write(
        root.join("assets/tilesets/meadow.tsx"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" name="meadow" tilewidth="16" tileheight="16" tilecount="2" columns="2">
 <image source="meadow tiles.png" width="32" height="16"/>
</tileset>
"#,
    )
    .unwrap();
    sprite(32, 16, 4)
        .save(root.join("assets/tilesets/meadow tiles.png"))
        .unwrap();
    let parcel = build_parcel(root);

    let mut app = app(
        Some(CargoAssetsPlugin::file(&parcel).unwrap()),
        AssetPlugin::default(),
    );
    let handle: Handle<ParcelTileMap> = app
        .world()
        .resource::<AssetServer>()
        .load("maps/Meadow.tmx");
    loaded_with_dependencies(&mut app, handle.id().untyped());
    let maps = app.world().resource::<Assets<ParcelTileMap>>();
    let loaded = maps.get(&handle).expect("the map, with its dependencies");
    let map = loaded.map();
    let cells: Vec<u32> = map
        .layer("Ground")
        .unwrap()
        .cells()
        .map(|c| c.gid())
        .collect();
    assert_eq!(cells, [1, 0, 2]);
    let tileset = map.tileset("meadow").unwrap();
    assert_eq!(tileset.image(), "tilesets/meadow tiles.png");
    let image = loaded
        .image(tileset.image())
        .expect("a handle to it")
        .clone();
    assert!(loaded.image("tilesets/meadow.tsx").is_none());
    assert_eq!(
        pixels(&app, &image),
        source(root, "tilesets/meadow tiles.png")
    );
}

#[test]
fn an_ldtk_level_loads_as_a_label_of_its_project_and_through_parcels() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bevy-ldtk\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("assets/atlas")).unwrap();
    sprite(32, 16, 5)
        .save(root.join("assets/atlas/tiles.png"))
        .unwrap();
    std::fs::write(
        root.join("assets/World.ldtk"),
        r#"{"jsonVersion": "1.5.3", "defaultGridSize": 16,
            "defs": {"tilesets": [{"identifier": "Tiles", "uid": 1, "relPath": "atlas/tiles.png",
                "pxWid": 32, "pxHei": 16, "tileGridSize": 16, "spacing": 0, "padding": 0, "__cWid": 2, "__cHei": 1}]},
            "levels": [{"identifier": "Level_0", "iid": "l0", "worldX": 0, "worldY": 0, "pxWid": 32, "pxHei": 16,
                "fieldInstances": [], "layerInstances": [
                    {"__identifier": "Ground", "__type": "Tiles", "__cWid": 2, "__cHei": 1, "__gridSize": 16,
                     "__opacity": 1, "__pxTotalOffsetX": 0, "__pxTotalOffsetY": 0, "__tilesetDefUid": 1,
                     "layerDefUid": 3, "visible": true, "intGridCsv": [], "autoLayerTiles": [], "entityInstances": [],
                     "gridTiles": [{"px": [16, 0], "src": [16, 0], "f": 0, "t": 1}]}]}]}"#,
    )
    .unwrap();
    let parcel = build_parcel(root);
    let parcels = bevy_cargo_assets::Parcels::default();
    parcels.add_file(&parcel).unwrap();
    let level = parcels
        .tilemap(ResourceId::of("World.ldtk#Level_0"))
        .expect("the level");
    let ground = level.layer("Ground").unwrap();
    let placed: Vec<(i32, i32, u32)> = ground.placed().map(|p| (p.x, p.y, p.tile.gid())).collect();
    assert_eq!(placed, [(16, 0, 2)]);
    assert_eq!(level.tilesets().next().unwrap().image(), "atlas/tiles.png");
    assert!(
        parcels.tilemap(ResourceId::of("World.ldtk")).is_none(),
        "the project is text"
    );

    // Through the asset server: the level is a labelled asset of the
    // project, as a glTF file's scenes are, with its tileset image.
    let mut app = app(
        Some(CargoAssetsPlugin::file(&parcel).unwrap()),
        AssetPlugin::default(),
    );
    let handle: Handle<bevy_cargo_assets::ParcelTileMap> = app
        .world()
        .resource::<AssetServer>()
        .load("World.ldtk#Level_0");
    loaded_with_dependencies(&mut app, handle.id().untyped());
    let maps = app
        .world()
        .resource::<Assets<bevy_cargo_assets::ParcelTileMap>>();
    let loaded = maps.get(&handle).expect("the level");
    let placed: Vec<u32> = (loaded.map().layer("Ground").unwrap().placed())
        .map(|p| p.tile.gid())
        .collect();
    assert_eq!(placed, [2]);
    let image = loaded.image("atlas/tiles.png").expect("its image").clone();
    assert_eq!(pixels(&app, &image), source(root, "atlas/tiles.png"));
}

/// Updates `app` until the asset `id` and its dependencies are loaded,
/// failing if it fails.
fn loaded_with_dependencies(app: &mut App, id: bevy_asset::UntypedAssetId) {
    for _ in 0..2000 {
        app.update();
        let server = app.world().resource::<AssetServer>();
        if server.is_loaded_with_dependencies(id) {
            return;
        }
        let state = server.load_state(id);
        assert!(!matches!(state, LoadState::Failed(_)), "{state:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("{id:?} did not load");
}
