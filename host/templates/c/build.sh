#!/usr/bin/env bash
# Builds handler.wasm from handler.c:
#   wit-bindgen c           bindings for wit/ (world `handler`)
#   clang-19 (wasm32-wasi)  a preview1 reactor module against wasi-libc
#   wasm-tools component new --adapt  the preview1 -> preview2 adapter
# Needs clang-19, lld-19, libclang-rt-19-dev-wasm32 and wasi-libc (Debian),
# wit-bindgen and wasm-tools on PATH (cargo install --locked wit-bindgen-cli
# wasm-tools), and the adapter file in $WASI_ADAPTER (the reactor adapter
# that the crates.io crate wasi-preview1-component-adapter-provider ships).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
clang="${CC_WASM:-clang-19}"
for tool in "$clang" wit-bindgen wasm-tools; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool is not installed" >&2; exit 1; }
done
if [ ! -s "${WASI_ADAPTER:-}" ]; then
    echo "build.sh: set WASI_ADAPTER to wasi_snapshot_preview1.reactor.wasm" >&2
    exit 1
fi
out="$here/build"
rm -rf "$out" && mkdir -p "$out"
wit-bindgen c "$here/wit" --world handler --out-dir "$out" >/dev/null
"$clang" --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -I "$out" \
    -o "$out/core.wasm" "$here/handler.c" "$out/handler.c" "$out/handler_component_type.o" -Wl,--strip-debug
wasm-tools component new "$out/core.wasm" --adapt "wasi_snapshot_preview1=$WASI_ADAPTER" -o "$here/handler.wasm"
echo "built $here/handler.wasm"
