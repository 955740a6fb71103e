#!/usr/bin/env bash
# Parcel size against source bytes on a real asset tree, dev and release,
# with the default manifest (a model names its buffers and textures, stored
# once as assets of their own) and with self-contained models (`embed =
# true`, the files they name left out of the parcel).
#
#   bench/real-tree.sh ASSETS_DIR [CARGO_ASSETS_BINARY...]
#
# ASSETS_DIR is copied into a temporary package as `assets/`; each binary
# (default: this checkout's release build) builds it from a cold cache. With
# two binaries (an older build first, say) the rows sit side by side.
# BENCHMARKS.md, "A real asset tree", used Bevy's `assets/` folder.
set -euo pipefail
src=${1:?usage: bench/real-tree.sh ASSETS_DIR [CARGO_ASSETS_BINARY...]}
shift
source "$(dirname "$0")/lib.sh"
binaries=()
for b in "$@"; do binaries+=("$(release_binary "$b")"); done
[ ${#binaries[@]} -gt 0 ] || binaries=("$(release_binary)")
set -- "${binaries[@]}"
scratch_package
cp -r "$src" "$work/assets"
source_bytes=$(find "$work/assets" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
files=$(find "$work/assets" -type f | wc -l)
package='[package]
name = "real-tree"
version = "0.1.0"
edition = "2021"
'
echo "$files files, $source_bytes bytes"
echo
echo "| manifest | binary | variant | parcel bytes | / source bytes | build, cold |"
echo "|---|---|---|---:|---:|---:|"
for manifest in default self-contained-models; do
    printf '%s' "$package" > "$work/Cargo.toml"
    if [ "$manifest" = self-contained-models ]; then
        printf '\n[[package.metadata.assets.rules]]\nmatch = "**/*.{gltf,glb}"\nembed = true\n' >> "$work/Cargo.toml"
        printf '\n[package.metadata.assets.parcels]\nmain = { include = ["**"], exclude = ["models/**/*.{png,jpg,jpeg,ktx2,bin}"] }\n' >> "$work/Cargo.toml"
    fi
    for bin in "$@"; do
        for variant in dev release; do
            rm -rf "$work/target"
            flag=()
            [ "$variant" = release ] && flag=(--release)
            start=$(date +%s%N)
            if ! (cd "$work" && "$bin" assets build "${flag[@]}" -q >/dev/null 2>&1); then
                echo "| $manifest | $bin | $variant | (the binary rejects this manifest) | | |"
                continue
            fi
            end=$(date +%s%N)
            bytes=$(stat -c %s "$work/target/assets/parcels/real-tree/$variant/main.parcel")
            awk -v m="$manifest" -v b="$bin" -v v="$variant" -v p="$bytes" -v s="$source_bytes" -v t=$(((end - start) / 1000000)) \
                'BEGIN {printf "| %s | %s | %s | %d | %.2f | %d ms |\n", m, b, v, p, p / s, t}'
        done
    done
done
