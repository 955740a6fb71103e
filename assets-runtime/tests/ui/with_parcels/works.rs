// The expansion compiles, and its constants have the kinds' types.
assets_runtime::include_parcel!("main");

fn main() {
    let _: assets_runtime::SpriteId = main::sprites::HERO_IDLE;
    let _: assets_runtime::ShaderId = main::shaders::WATER;
    let _: assets_runtime::TextId = main::shaders::WATER_REFLECTION;
    let _: assets_runtime::TextId = main::data::INTRO;
    let _: assets_runtime::FontId = main::fonts::FIRA_SANS_BOLD;
    let _: assets_runtime::ResourceId = main::levels::ONE_COLLISION;
    let _: assets_runtime::TileMapId = main::maps::LEVEL_1;
    let _ = |p: &assets_runtime::Parcel<'static>| p.tilemap(main::maps::LEVEL_1).is_ok();
    let _: &str = main::PATH;
    // Same stem in one folder: each carries its extension.
    let _: assets_runtime::SpriteId = main::branding::BEVY_BIRD_DARK_PNG;
    let _: assets_runtime::BytesId = main::branding::BEVY_BIRD_DARK_SVG;
    // CamelCase split into words; the glTF and its buffer share a stem.
    let _: assets_runtime::BytesId = main::models::flight_helmet::FLIGHT_HELMET_GLTF;
    let _: assets_runtime::BytesId = main::models::flight_helmet::FLIGHT_HELMET_BIN;
    let _: assets_runtime::ImageId =
        main::models::flight_helmet::FLIGHT_HELMET_MATERIALS_LEATHER_PARTS_MAT_BASE_COLOR;
}
