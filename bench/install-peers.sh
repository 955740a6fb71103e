#!/usr/bin/env bash
# Installs the programs the benchmarks compare with, on a fresh machine:
# ninja (the no-op peer of the pipeline group), from Debian's packages
# (`ninja-build`, 1.11 on Debian 12), else from PyPI (`pip install ninja`).
# Without it the pipeline table says "not installed" and loses its ratio.
set -euo pipefail

if command -v ninja >/dev/null 2>&1; then
    echo "ninja $(ninja --version) is installed"
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
if command -v apt-get >/dev/null 2>&1 \
    && { $sudo apt-get install -y -q ninja-build >/dev/null 2>&1 \
         || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q ninja-build >/dev/null 2>&1; }; }; then
    echo "ninja $(ninja --version) installed from Debian's packages"
elif python3 -m pip install --quiet --user ninja && command -v ninja >/dev/null 2>&1; then
    echo "ninja $(ninja --version) installed from PyPI"
else
    echo "could not install ninja: the pipeline benchmark will run without its no-op peer" >&2
    exit 1
fi
