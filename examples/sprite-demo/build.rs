//! Builds the game's assets into parcels for `include_parcel!`, with the
//! built-in processors and the `level` processor of `level-processor`.

fn main() {
    assets_build::Builder::new()
        .register(level_processor::register)
        .build()
        .unwrap();
}
