# Shared by the shell benchmarks: `source "$(dirname "$0")/lib.sh"`.
#
# `here`: the checkout. `release_binary [PATH]`: PATH made absolute, or this
# checkout's release `cargo-assets`, built first. `scratch_package`: a
# temporary package directory (`$work`, with `src/lib.rs`), removed on exit.

here=$(cd "$(dirname "$0")/.." && pwd)

release_binary() {
    if [ -n "${1:-}" ]; then
        realpath "$1"
    else
        cargo build --release -q -p cargo-assets --manifest-path "$here/Cargo.toml"
        echo "$here/target/release/cargo-assets"
    fi
}

scratch_package() {
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/src"
    touch "$work/src/lib.rs"
}
