assets_runtime::include_parcel!("levls");

fn main() {}
