#!/usr/bin/env bash
# Installs the independent checkers some tests use when present, on a fresh
# machine: the Khronos reference validators for translated shaders,
# `spirv-val` (Debian's spirv-tools) and `glslangValidator` (glslang-tools).
# Without them those tests still check the outputs with naga's own SPIR-V
# reader and by their text, and say that the Khronos checks were skipped.
set -euo pipefail

if command -v spirv-val >/dev/null 2>&1 && command -v glslangValidator >/dev/null 2>&1; then
    echo "spirv-val and glslangValidator are installed"
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
packages="spirv-tools glslang-tools"
if command -v apt-get >/dev/null 2>&1 \
    && { $sudo apt-get install -y -q $packages >/dev/null 2>&1 \
         || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q $packages >/dev/null 2>&1; }; }; then
    echo "spirv-val and glslangValidator installed from Debian's packages"
else
    echo "could not install $packages: the shader translation test skips the Khronos checks" >&2
    exit 1
fi
