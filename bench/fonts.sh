#!/usr/bin/env bash
# Glyphs rasterized per second: the example game's font (Fira Sans Bold,
# Latin-1) copied N times, each baked at six sizes (12 to 64 px) into one
# atlas, from a cold cache: coverage bitmaps, distance fields, and the same
# files copied as bytes (the pipeline's own cost), side by side, three
# rounds. Glyphs per second count the time above the copy's.
#
#   bench/fonts.sh [N] [CARGO_ASSETS_BINARY]
set -euo pipefail
n=${1:-8}
source "$(dirname "$0")/lib.sh"
bin=$(release_binary "${2:-}")
scratch_package
mkdir -p "$work/assets/fonts"
for i in $(seq 1 "$n"); do
    cp "$here/examples/sprite-demo/assets/fonts/FiraSans-Bold-Latin1.ttf" "$work/assets/fonts/f$i.ttf"
done
manifest() {
    printf '[package]\nname = "fonts"\nversion = "0.1.0"\nedition = "2021"\n\n[package.metadata.assets.atlases.main]\nmax-size = 4096\n\n[[package.metadata.assets.rules]]\nmatch = "fonts/*.ttf"\n%s\n' "$1" > "$work/Cargo.toml"
}
rule() {
    case $1 in
        copy) echo 'processor = "copy"' ;;
        *) printf 'processor = "font"\nsizes = [12, 16, 24, 32, 48, 64]\nranges = [[0x20, 0x7E], [0xA0, 0xFF]]\nmode = "%s"\n' "$1" ;;
    esac
}
for round in 1 2 3; do
    for mode in copy bitmap sdf; do
        manifest "$(rule $mode)"
        rm -rf "$work/target"
        start=$(date +%s%N)
        (cd "$work" && "$bin" assets build -q >/dev/null)
        end=$(date +%s%N)
        echo "$mode $(((end - start) / 1000000))" >> "$work/times"
    done
done
glyphs=$(cd "$work" && "$bin" assets inspect --message-format json target/assets/parcels/fonts/dev/main.parcel 2>/dev/null \
    | grep -o '"glyphs":[0-9]*' | cut -d: -f2 | paste -sd+ | bc)
median() { awk -v m="$1" '$1 == m {print $2}' "$work/times" | sort -n | sed -n 2p; }
copy=$(median copy)
echo "| mode | fonts | glyphs | cold build, ms (3 runs) | over copy, ms | glyphs/s |"
echo "|---|---:|---:|---|---:|---:|"
for mode in copy bitmap sdf; do
    times=$(awk -v m=$mode '$1 == m {print $2}' "$work/times" | sort -n | paste -sd' ')
    m=$(median $mode)
    awk -v mode=$mode -v n="$n" -v g="$glyphs" -v t="$times" -v m="$m" -v c="$copy" \
        'BEGIN { if (mode == "copy") printf "| %s | %d | - | %s | - | - |\n", mode, n, t;
                 else printf "| %s | %d | %d | %s | %d | %.0f |\n", mode, n, g, t, m - c, g / ((m - c) / 1000) }'
done
