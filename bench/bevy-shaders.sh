#!/usr/bin/env bash
# Bevy's example shaders validated at build time against Bevy's own shader
# packages: how many of `assets/shaders/` validate with `preset =
# "bevy-mesh"` alone, how many with the features and capabilities each
# example's pipeline sets, and why each other one does not.
#
#   bench/bevy-shaders.sh BEVY_CHECKOUT [CARGO_ASSETS_BINARY]
#
# BEVY_CHECKOUT is a Bevy source tree (its `crates/` and `assets/shaders/`,
# of one commit). A temporary package depends on Bevy's rendering crates by
# path; each is a manifest beside a link to the checkout's `src/`, which is
# all `cargo metadata` and the shader processor read, so nothing of Bevy is
# compiled. With BEVY_VERSION set (`BEVY_VERSION=0.20.1`), the crates are
# that release's from crates.io instead (downloaded by `cargo metadata`,
# not compiled) and only the checkout's `assets/shaders/` is used.
# BENCHMARKS.md, "Bevy's shaders", used bevyengine/bevy 4805ca792c.
set -euo pipefail
bevy=$(realpath "${1:?usage: bench/bevy-shaders.sh BEVY_CHECKOUT [CARGO_ASSETS_BINARY]}")
source "$(dirname "$0")/lib.sh"
bin=$(release_binary "${2:-}")
scratch_package
deps=""
for crate_dir in "$bevy"/crates/*/; do
    crate=$(basename "$crate_dir")
    find "$crate_dir/src" -name '*.wesl' -print -quit 2>/dev/null | grep -q . || continue
    if [ -n "${BEVY_VERSION:-}" ]; then
        deps+="$crate = \"=$BEVY_VERSION\""$'\n'
        continue
    fi
    mkdir -p "$work/crates/$crate"
    ln -s "$crate_dir/src" "$work/crates/$crate/src"
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n' \
        "$crate" > "$work/crates/$crate/Cargo.toml"
    touch "$work/crates/$crate/lib.rs"
    deps+="$crate = { path = \"crates/$crate\" }"$'\n'
done
mkdir -p "$work/assets"
cp -r "$bevy/assets/shaders" "$work/assets/"
shaders=$(find "$work/assets/shaders" -name '*.wesl' -o -name '*.wgsl' | wc -l)

manifest() {
    cat > "$work/Cargo.toml" <<EOF
[package]
name = "bevy-shaders"
version = "0.1.0"
edition = "2021"

[dependencies]
$deps
[package.metadata.assets]
[[package.metadata.assets.rules]]
match = "shaders/**/*.{wesl,wgsl}"
preset = "bevy-mesh"
$1
EOF
}

# What the examples' pipelines set that a mesh material's does not.
BINDING_ARRAYS='capabilities = ["texture-and-sampler-binding-array", "texture-and-sampler-binding-array-non-uniform-indexing"]'
OVERRIDES="
[package.metadata.assets.overrides.\"shaders/show_prepass.wesl\"]
features = [\"DEPTH_PREPASS\", \"NORMAL_PREPASS\", \"MOTION_VECTOR_PREPASS\"]
[package.metadata.assets.overrides.\"shaders/water_material.wesl\"]
features = [\"PREPASS_PIPELINE\", \"PREPASS_FRAGMENT\", \"DEFERRED_PREPASS\", \"NORMAL_PREPASS_OR_DEFERRED_PREPASS\"]
[package.metadata.assets.overrides.\"shaders/texture_binding_array.wesl\"]
$BINDING_ARRAYS
[package.metadata.assets.overrides.\"shaders/custom_clustered_decal.wesl\"]
features = [\"CLUSTERED_DECALS_ARE_USABLE\"]
$BINDING_ARRAYS
[package.metadata.assets.overrides.\"shaders/irradiance_volume_voxel_visualization.wesl\"]
features = [\"IRRADIANCE_VOLUME\", \"IRRADIANCE_VOLUMES_ARE_USABLE\", \"MULTIPLE_LIGHT_PROBES_IN_ARRAY\"]
$BINDING_ARRAYS
"

echo "$shaders shaders; $(echo -n "$deps" | grep -c .) of Bevy's crates with shader modules (${BEVY_VERSION:-checkout})"
for variant in preset-alone per-example; do
    if [ "$variant" = preset-alone ]; then manifest ""; else manifest "$OVERRIDES"; fi
    rm -rf "$work/target"
    start=$(date +%s.%N)
    (cd "$work" && "$bin" assets build > "$work/out.txt" 2>&1) || true
    end=$(date +%s.%N)
    failed=$(grep -c '^error: failed to process' "$work/out.txt" || true)
    parcel="$work/target/assets/parcels/bevy-shaders/dev/main.parcel"
    validated=0
    if [ -f "$parcel" ]; then
        validated=$( (cd "$work" && "$bin" assets inspect "$parcel" 2>&1) | grep -c ', validated: ' || true)
    fi
    echo
    echo "## $variant: $validated of $shaders validated, $failed failed, cold build $(awk "BEGIN {printf \"%.2f\", $end - $start}") s"
    grep '^error: failed to process' "$work/out.txt" | sed 's/^error: failed to process //' | cut -c1-300 || true
done
