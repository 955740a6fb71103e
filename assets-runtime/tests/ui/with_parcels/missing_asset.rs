assets_runtime::include_parcel!("main");

fn main() {
    // The constant of an asset that is not in the parcel does not exist.
    let _ = main::sprites::VILLAIN;
}
