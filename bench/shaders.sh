#!/usr/bin/env bash
# Shaders validated per second: N fragment shaders that each import a noise
# module and a common module (WESL), built from a cold cache with naga
# validation on and off, side by side, three times each.
#
#   bench/shaders.sh [N] [CARGO_ASSETS_BINARY]
set -euo pipefail
n=${1:-1000}
source "$(dirname "$0")/lib.sh"
bin=$(release_binary "${2:-}")
scratch_package
mkdir -p "$work/src" "$work/assets/shaders/lib"
touch "$work/src/lib.rs"
cat > "$work/assets/shaders/lib/noise.wesl" <<'WGSL'
fn hash(p: vec2<f32>) -> f32 {
    return fract(sin(dot(p, vec2<f32>(12.9898, 78.233))) * 43758.5453);
}
fn fbm(p: vec2<f32>) -> f32 {
    return 0.5 * hash(p) + 0.25 * hash(p * 2.0) + 0.125 * hash(p * 4.0);
}
WGSL
cat > "$work/assets/shaders/common.wgsl" <<'WGSL'
struct Light {
    direction: vec3<f32>,
    intensity: f32,
}
const PI: f32 = 3.14159265;
WGSL
for i in $(seq 1 "$n"); do
    cat > "$work/assets/shaders/m$i.wesl" <<WGSL
import package::shaders::lib::noise::fbm;
import super::common::{Light, PI};

@group(0) @binding(0) var<uniform> light: Light;
@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(1) @binding(0) var tex: texture_2d<f32>;
@group(1) @binding(1) var samp: sampler;

@fragment
fn fs_main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    let n = fbm(uv * PI * $i.0) * light.intensity + heights[$i];
    return textureSample(tex, samp, uv) * n;
}
WGSL
done
echo "| shaders | validate | cold build, ms (3 runs) | shaders/s |"
echo "|---:|---|---|---:|"
for round in 1 2 3; do
    for validate in true false; do
        printf '[package]\nname = "shaders"\nversion = "0.1.0"\nedition = "2021"\n\n[[package.metadata.assets.rules]]\nmatch = "shaders/**"\nvalidate = %s\n' "$validate" > "$work/Cargo.toml"
        rm -rf "$work/target"
        start=$(date +%s%N)
        (cd "$work" && "$bin" assets build -q >/dev/null)
        end=$(date +%s%N)
        echo "$validate $(((end - start) / 1000000))" >> "$work/times"
    done
done
for validate in true false; do
    times=$(awk -v v=$validate '$1 == v {print $2}' "$work/times" | sort -n | paste -sd' ')
    median=$(awk -v v=$validate '$1 == v {print $2}' "$work/times" | sort -n | sed -n 2p)
    awk -v n="$n" -v v="$validate" -v t="$times" -v m="$median" \
        'BEGIN {printf "| %d | %s | %s | %.0f |\n", n, v, t, (n + 2) / (m / 1000)}'
done
