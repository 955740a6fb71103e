assets_runtime::include_parcel!("clash");

fn main() {}
