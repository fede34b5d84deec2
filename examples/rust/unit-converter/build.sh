#!/usr/bin/env bash
# Builds handler.wasm (a WebAssembly component) from the Rust crate in
# handler/, with the skillhost guest SDK. Needs rustup's wasm32-wasip2 target.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$repo/target}/examples/rust"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "build.sh: the Rust target wasm32-wasip2 is not installed: rustup target add wasm32-wasip2" >&2
    exit 1
fi
# RUSTFLAGS meant for the host (coverage, sanitizers) must not leak into the guest.
env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
    cargo build --quiet --release --target wasm32-wasip2 \
    --manifest-path "$here/handler/Cargo.toml" --target-dir "$target_dir"
cp "$target_dir/wasm32-wasip2/release/unit_converter_handler.wasm" "$here/handler.wasm"
echo "built $here/handler.wasm ($(wc -c <"$here/handler.wasm") bytes)"
