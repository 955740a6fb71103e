#!/usr/bin/env bash
# The quick start's first `cargo build`, cold (fresh target directory, the
# registry already downloaded), with each way of optimizing the build
# script: the README's `build-override` (everything the build script links
# at opt-level 3, proc macros included) and docs/build-scripts.md's
# per-package list (only the crates that decode and compress pixels).
# Then the asset build alone, three times each from an empty asset cache.
#
#   bench/first-build.sh [ASSET-DIR]
#
# ASSET-DIR holds `sprites/*.png` and anything else (default: the example
# game's assets). Prints wall seconds; `--timings` reports are left in
# each variant's target directory.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
assets="${1:-$repo/examples/sprite-demo/assets}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

hot="assets-build assets-runtime image png fdeflate zune-jpeg zune-core image-webp lz4_flex blake3 xxhash-rust fontdue ttf-parser crc32fast miniz_oxide simd-adler32 zstd-sys symphonia-core symphonia-codec-vorbis symphonia-bundle-mp3 symphonia-bundle-flac symphonia-format-ogg symphonia-format-riff symphonia-codec-pcm"

make_crate() { # dir profile-block
    mkdir -p "$1/src"
    cp -r "$assets" "$1/assets"
    cp "$repo/Cargo.lock" "$1/"
    cat > "$1/Cargo.toml" <<EOF
[package]
name = "first-build"
version = "0.1.0"
edition = "2024"

[dependencies]
assets-runtime = { path = "$repo/assets-runtime" }

[build-dependencies]
assets-build = { path = "$repo/assets-build" }

[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"

$2
EOF
    echo 'fn main() { assets_build::build().unwrap() }' > "$1/build.rs"
    echo 'assets_runtime::include_parcel!("main"); fn main() { println!("{}", main::PARCEL.len()); }' > "$1/src/main.rs"
}

seconds() { local start=$SECONDS; "$@" > /dev/null 2>&1; echo $((SECONDS - start)); }

override=$'[profile.dev.build-override]\nopt-level = 3'
packages=""
for p in $hot; do packages+=$'\n'"[profile.dev.package.$p]"$'\nopt-level = 3'; done

for variant in build-override packages; do
    dir="$work/$variant"
    case $variant in
        build-override) make_crate "$dir" "$override" ;;
        packages) make_crate "$dir" "$packages" ;;
    esac
    cold=$(cd "$dir" && seconds cargo build --offline --timings)
    runs=""
    for i in 1 2 3; do
        start=$(date +%s.%N)
        (cd "$dir" && CARGO_ASSETS_CACHE_DIR="$work/cache-$variant-$i" cargo build --offline -q > /dev/null 2>&1)
        runs+=" $(printf '%.2f' "$(echo "$(date +%s.%N) - $start" | bc)")"
    done
    echo "$variant: first cargo build ${cold} s; asset build alone (s):$runs"
done
