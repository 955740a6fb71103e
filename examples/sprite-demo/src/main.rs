//! The example game. Its assets are built today by `cargo assets build`;
//! the game code that embeds them with `include_parcel!` and renders a scene
//! arrives with the Cargo-integration work (see ARCHITECTURE.md, "Not yet built").

fn main() {}
