assets_runtime::include_parcel!("main");

fn main() {
    // A sprite id is not a text id.
    let _ = main::PARCEL.text(main::sprites::HERO_IDLE);
}
