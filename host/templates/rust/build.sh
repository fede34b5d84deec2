#!/usr/bin/env bash
# Builds handler.wasm from the Rust crate in handler/ (needs the
# wasm32-wasip2 target: rustup target add wasm32-wasip2).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
target_dir="${CARGO_TARGET_DIR:-$here/handler/target}"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "build.sh: the Rust target wasm32-wasip2 is not installed: rustup target add wasm32-wasip2" >&2
    exit 1
fi
env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
    cargo build --quiet --release --target wasm32-wasip2 \
    --manifest-path "$here/handler/Cargo.toml" --target-dir "$target_dir"
cp "$target_dir/wasm32-wasip2/release/{{name_snake}}_handler.wasm" "$here/handler.wasm"
echo "built $here/handler.wasm"
