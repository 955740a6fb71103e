assets_runtime::include_parcel!("main");

fn main() {}
