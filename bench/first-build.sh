#!/usr/bin/env bash
# The quick start's first `cargo build`, cold (fresh target directory, the
# registry already downloaded), each way the build script can get its
# pipeline, beside the same crate without cargo-assets (`none`):
#
# - `installed`: the README's way, assets-build's default, a thin client
#   running the installed `cargo-assets` (CARGO_ASSETS_BIN if set, else
#   installed first by `cargo install --path`, timed: the once-per-machine
#   cost);
# - `build-override`: the pipeline compiled into the build script
#   (`features = ["pipeline"]`), everything it links at opt-level 3;
# - `packages`: the same with docs/build-scripts.md's per-package list
#   (only the crates that decode and compress pixels at opt-level 3).
#
# Then the asset build alone, three times each from an empty asset cache.
#
#   bench/first-build.sh [ASSET-DIR] [VARIANT...]
#
# ASSET-DIR holds `sprites/*.png` and anything else (default: the example
# game's assets); VARIANTs default to all four. Prints wall seconds;
# `--timings` reports are left in each variant's target directory.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
assets="${1:-$repo/examples/sprite-demo/assets}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

hot="assets-build assets-runtime image png fdeflate zune-jpeg zune-core image-webp lz4_flex blake3 xxhash-rust fontdue ttf-parser crc32fast miniz_oxide simd-adler32 zstd-sys symphonia-core symphonia-codec-vorbis symphonia-bundle-mp3 symphonia-bundle-flac symphonia-format-ogg symphonia-format-riff symphonia-codec-pcm"

shift || true
variants="${*:-none installed build-override packages}"

make_crate() { # dir features profile-block
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
assets-build = { path = "$repo/assets-build", features = [$2] }

[[package.metadata.assets.rules]]
match = "sprites/**/*.png"
processor = "sprite"

$3
EOF
    echo 'fn main() { assets_build::build().unwrap() }' > "$1/build.rs"
    echo 'assets_runtime::include_parcel!("main"); fn main() { println!("{}", main::PARCEL.len()); }' > "$1/src/main.rs"
}

make_plain_crate() { # dir: the same game without cargo-assets
    mkdir -p "$1/src"
    cp "$repo/Cargo.lock" "$1/"
    printf '[package]\nname = "first-build"\nversion = "0.1.0"\nedition = "2024"\n' > "$1/Cargo.toml"
    echo 'fn main() { println!("{}", 0); }' > "$1/src/main.rs"
}

seconds() { local start=$SECONDS; "$@" > /dev/null 2>&1; echo $((SECONDS - start)); }

override=$'[profile.dev.build-override]\nopt-level = 3'
packages=""
for p in $hot; do packages+=$'\n'"[profile.dev.package.$p]"$'\nopt-level = 3'; done

case " $variants " in
    *" installed "*)
        if [ -z "${CARGO_ASSETS_BIN:-}" ]; then
            took=$(seconds cargo install --offline --locked --path "$repo/cargo-assets" --root "$work/root" --target-dir "$work/install-target")
            echo "installed: cargo install (once per machine) ${took} s"
            export CARGO_ASSETS_BIN="$work/root/bin/cargo-assets"
        fi ;;
esac

for variant in $variants; do
    dir="$work/$variant"
    case $variant in
        none) make_plain_crate "$dir" ;;
        installed) make_crate "$dir" "" "" ;;
        build-override) make_crate "$dir" '"pipeline"' "$override" ;;
        packages) make_crate "$dir" '"pipeline"' "$packages" ;;
        *) echo "unknown variant $variant" >&2; exit 2 ;;
    esac
    cold=$(cd "$dir" && seconds cargo build --offline --timings)
    if [ "$variant" = none ]; then
        echo "none: first cargo build ${cold} s"
        continue
    fi
    runs=""
    for i in 1 2 3; do
        start=$(date +%s.%N)
        (cd "$dir" && CARGO_ASSETS_CACHE_DIR="$work/cache-$variant-$i" cargo build --offline -q > /dev/null 2>&1)
        runs+=" $(printf '%.2f' "$(echo "$(date +%s.%N) - $start" | bc)")"
    done
    echo "$variant: first cargo build ${cold} s; asset build alone (s):$runs"
done
