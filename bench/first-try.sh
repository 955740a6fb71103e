#!/usr/bin/env bash
# A real asset tree built as a newcomer would, first with no rules at all
# (the defaults by extension), then with the rules that make every image a
# GPU texture, SVGs rasterized, HDR/EXR float textures and fonts baked:
# what ran, with which processor, what failed or warned, and how long the
# cold build took.
#
#   bench/first-try.sh ASSETS_DIR [CARGO_ASSETS_BINARY]
#
# BENCHMARKS.md, "A second real tree", used Godot's demo projects
# (github.com/godotengine/godot-demo-projects, every file of the tree).
set -euo pipefail
src=${1:?usage: bench/first-try.sh ASSETS_DIR [CARGO_ASSETS_BINARY]}
source "$(dirname "$0")/lib.sh"
bin=$(release_binary "${2:-}")
scratch_package
cp -r "$src" "$work/assets"
echo "$(find "$work/assets" -type f | wc -l) files, $(du -sh "$work/assets" | cut -f1)"

package='[package]
name = "first-try"
version = "0.1.0"
edition = "2021"
'
processed='
[[package.metadata.assets.rules]]
match = "**/*.{png,jpg,jpeg,webp,bmp,tga}"
processor = "texture"

[[package.metadata.assets.rules]]
match = "**/*.svg"
processor = "image"

[[package.metadata.assets.rules]]
match = "**/*.{hdr,exr}"
processor = "texture"
format = "bc6h"

[[package.metadata.assets.rules]]
match = "**/*.{ttf,otf}"
processor = "font"
'
for manifest in defaults processed; do
    printf '%s' "$package" > "$work/Cargo.toml"
    [ "$manifest" = processed ] && printf '%s' "$processed" >> "$work/Cargo.toml"
    rm -rf "$work/target"
    start=$(date +%s%N)
    (cd "$work" && "$bin" assets build --message-format json 2>/dev/null) > "$work/messages.json" || true
    end=$(date +%s%N)
    echo
    echo "## $manifest: $(((end - start) / 1000000)) ms, cold"
    python3 - "$work/messages.json" <<'EOF'
import collections, json, sys
ran, failed, warned, finished = collections.Counter(), [], [], None
for line in open(sys.argv[1]):
    m = json.loads(line)
    reason = m.get("reason")
    if reason == "asset-processed":
        ran[m["processor"]] += 1
    elif reason == "asset-failed":
        failed.append((m["asset"], m["message"]))
    elif reason == "asset-warning":
        warned.append((m["asset"], m["message"]))
    elif reason == "build-finished":
        finished = m
print("| processor | assets |\n|---|---:|")
for processor, n in ran.most_common():
    print(f"| {processor} | {n} |")
print(f"\nfailed: {len(failed)}, warnings: {len(warned)}, success: {finished and finished['success']}")
for asset, message in failed + warned:
    print(f"- `{asset}`: {message}")
EOF
done
