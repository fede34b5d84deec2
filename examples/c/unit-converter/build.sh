#!/usr/bin/env bash
# Builds handler.wasm (a WebAssembly component) from handler.c:
#   wit-bindgen c          bindings for wit/skill.wit (world `handler`)
#   clang-19 (wasm32-wasi) a preview1 reactor module, against Debian's wasi-libc
#   wasm-tools component new, with the preview1 reactor adapter -> component
# Tools are looked up in target/example-tools (where
# .ci/install-example-toolchains.sh puts them), then on PATH; the adapter in
# $WASI_ADAPTER or target/example-tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
tools="${CARGO_TARGET_DIR:-$repo/target}/example-tools"
export PATH="$tools/bin:$PATH"
clang="${CC_WASM:-clang-19}"
adapter="${WASI_ADAPTER:-$tools/wasi_snapshot_preview1.reactor.wasm}"
need() {
    command -v "$1" >/dev/null || {
        echo "build.sh: $1 is not installed ($2; or run .ci/install-example-toolchains.sh)" >&2
        exit 1
    }
}
need "$clang" "apt-get install clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc"
need wit-bindgen "cargo install --locked wit-bindgen-cli --version 0.63.0"
need wasm-tools "cargo install --locked wasm-tools --version 1.263.0"
[ -s "$adapter" ] || {
    echo "build.sh: the WASI preview1 reactor adapter is missing at $adapter (set WASI_ADAPTER, or run .ci/install-example-toolchains.sh)" >&2
    exit 1
}
out="${CARGO_TARGET_DIR:-$repo/target}/examples/c/unit-converter"
rm -rf "$out" && mkdir -p "$out"
wit-bindgen c "$repo/wit" --world handler --out-dir "$out" >/dev/null
# -ffp-contract=off: no fused multiply-add, so the arithmetic rounds exactly
# as in the Rust, JavaScript and Python handlers. --strip-debug drops
# wasi-libc's DWARF (180 KB -> 54 KB); the producers section stays.
"$clang" --target=wasm32-wasi -mexec-model=reactor -O2 -ffp-contract=off \
    -Wall -Wextra -Werror -Wno-unused-parameter -I "$out" \
    -o "$out/core.wasm" "$here/handler.c" "$out/handler.c" "$out/handler_component_type.o" -lm -Wl,--strip-debug
wasm-tools component new "$out/core.wasm" --adapt "wasi_snapshot_preview1=$adapter" -o "$here/handler.wasm"
echo "built $here/handler.wasm ($(wc -c <"$here/handler.wasm") bytes)"
