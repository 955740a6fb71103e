#!/usr/bin/env bash
# Tile maps converted by the `tilemap` processor, compared with other
# readers of the same files: Tiled maps with pytiled-parser and PyTMX, LDtk
# levels with their project's JSON (bench/tilemaps.py says what is compared).
#
#   bench/tilemaps.sh MAPS_DIR [CARGO_ASSETS_BINARY]
#
# MAPS_DIR is a tree of maps with what they name: Tiled's `examples/` or
# LDtk's `app/extraFiles/samples/` (docs/processors.md, "Tile maps", used
# mapeditor/tiled aa069419 and deepnight/ldtk's samples). The readers come
# from the virtualenv tests/install-tools.sh makes; without them, Tiled maps
# are said to be read by no other reader.
set -euo pipefail
maps=$(realpath "${1:?usage: bench/tilemaps.sh MAPS_DIR [CARGO_ASSETS_BINARY]}")
source "$(dirname "$0")/lib.sh"
bin=$(release_binary "${2:-}")
scratch_package
cp -r "$maps" "$work/assets"
cat > "$work/Cargo.toml" <<'TOML'
[package]
name = "tilemaps-bench"
version = "0.0.0"
edition = "2021"

[package.metadata.assets.parcels]
maps = ["**/*.tmx", "**/*.tmj", "**/*.ldtk"]
TOML
(cd "$work" && "$bin" assets build --quiet)
cargo build -q -p assets-runtime --example tilemap_json --manifest-path "$here/Cargo.toml"
python="$here/target/tools/venv/bin/python"
[ -x "$python" ] || python=python3
"$python" "$here/bench/tilemaps.py" "$work/assets" \
    "$work/target/assets/parcels/tilemaps-bench/dev/maps.parcel" \
    "$here/target/debug/examples/tilemap_json"
