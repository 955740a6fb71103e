// The expansion compiles, and its constants have the kinds' types.
assets_runtime::include_parcel!("main");

fn main() {
    let _: assets_runtime::SpriteId = main::sprites::HERO_IDLE;
    let _: assets_runtime::TextId = main::shaders::WATER;
    let _: assets_runtime::ResourceId = main::levels::ONE_COLLISION;
    let _: &str = main::PATH;
}
