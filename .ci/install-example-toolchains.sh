#!/usr/bin/env bash
# Installs the toolchains that build the example handlers in examples/
# (Rust, JavaScript, Python, C) on a fresh Debian machine, as root.
# Idempotent: what is already installed at the pinned version is kept.
# Each step that fails stops the script with a message naming the toolchain,
# so CI says which example cannot be built and why.
#
# Where things go (all under the repo's target dir, so a cached target/
# carries them from one run to the next, and nothing leaks outside):
#   target/example-tools/bin     wasm-tools, wit-bindgen (cargo install --locked;
#                                 their build tree is removed once installed)
#   target/example-tools/venv    componentize-py
#   target/example-tools/wasi_snapshot_preview1.reactor.wasm
#                                 the preview1 -> preview2 adapter for C
#   examples/js/node_modules     componentize-js (npm ci, from package-lock.json)
#
# componentize-js 0.23 imports @bytecodealliance/preview2-shim at build time
# but lists it only as a devDependency of its own, so npm does not install it;
# examples/js/package.json pins it next to componentize-js.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
tools="$target/example-tools"
mkdir -p "$tools"

# Pinned versions: change them here (and in examples/js/package.json).
WASM_TOOLS_VERSION=1.263.0
WIT_BINDGEN_VERSION=0.63.0
COMPONENTIZE_PY_VERSION=0.25.1
# The adapter must speak the WASI 0.2 that the host's wasmtime links.
ADAPTER_VERSION=48.0.8
LLVM=19

fail() {
    echo "install-example-toolchains: cannot install the $1 toolchain: $2" >&2
    exit 1
}
step() { echo "== example toolchains: $*"; }

# --- C: clang + lld + compiler-rt for wasm32 + wasi-libc (Debian) ---------
step "C (clang-$LLVM, lld-$LLVM, libclang-rt-$LLVM-dev-wasm32, wasi-libc)"
c_pkgs=(clang-$LLVM lld-$LLVM libclang-rt-$LLVM-dev-wasm32 wasi-libc)
missing=()
for p in "${c_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || fail C "apt-get is not available to install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || fail C "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || fail C "apt-get install ${missing[*]} failed"
fi

# --- wasm-tools and wit-bindgen (crates.io, built from source) -----------
cargo_tool() { # name crate version features
    local bin="$1" crate="$2" version="$3" features="$4"
    if "$tools/bin/$bin" --version 2>/dev/null | grep -q " $version"; then return 0; fi
    step "cargo install $crate $version (compiles from source, a few minutes)"
    CARGO_TARGET_DIR="$tools/build" cargo install --quiet --locked --root "$tools" \
        --version "$version" --no-default-features --features "$features" "$crate" \
        || fail C "cargo install $crate@$version failed"
}
cargo_tool wasm-tools wasm-tools "$WASM_TOOLS_VERSION" component
cargo_tool wit-bindgen wit-bindgen-cli "$WIT_BINDGEN_VERSION" c

# --- the WASI preview1 reactor adapter (crates.io) -----------------------
# Debian's wasi-libc targets preview1; `wasm-tools component new` needs this
# adapter to turn the C module into a preview2 component. The crate ships
# the adapter's bytes; a two-line program writes them out.
adapter="$tools/wasi_snapshot_preview1.reactor.wasm"
stamp="$tools/adapter.version"
if [ ! -s "$adapter" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$ADAPTER_VERSION" ]; then
    step "wasi-preview1-component-adapter-provider $ADAPTER_VERSION"
    src="$tools/adapter-extract"
    mkdir -p "$src/src"
    cat >"$src/Cargo.toml" <<TOML
[package]
name = "adapter-extract"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
wasi-preview1-component-adapter-provider = "=$ADAPTER_VERSION"
[workspace]
TOML
    cat >"$src/src/main.rs" <<'RS'
fn main() {
    let out = std::env::args().nth(1).expect("usage: adapter-extract OUT");
    std::fs::write(&out, wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        .expect("write the adapter");
}
RS
    (cd "$src" && env -u RUSTFLAGS cargo run --quiet --release --target-dir "$tools/build" -- "$adapter") \
        || fail C "extracting the preview1 adapter from wasi-preview1-component-adapter-provider@$ADAPTER_VERSION failed"
    echo "$ADAPTER_VERSION" >"$stamp"
fi

# The tools are installed; their build tree (~600 MB) is no longer needed,
# and CI machines can be short of disk.
rm -rf "$tools/build"

# --- JavaScript: componentize-js (npm) -----------------------------------
step "JavaScript (componentize-js via npm ci in examples/js)"
command -v node >/dev/null || fail JavaScript "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail JavaScript "npm is not installed (apt-get install npm)"
if [ ! -f examples/js/node_modules/@bytecodealliance/componentize-js/src/cli.js ] \
    || [ examples/js/package-lock.json -nt examples/js/node_modules/.package-lock.json ]; then
    (cd examples/js && npm ci --no-audit --no-fund --loglevel=error) \
        || fail JavaScript "npm ci in examples/js failed"
fi

# --- Python: componentize-py (PyPI) ---------------------------------------
step "Python (componentize-py $COMPONENTIZE_PY_VERSION in $tools/venv)"
py="$(command -v python3 || true)"
[ -n "$py" ] || fail Python "python3 is not installed"
if ! "$tools/venv/bin/componentize-py" --version 2>/dev/null | grep -q " $COMPONENTIZE_PY_VERSION"; then
    [ -x "$tools/venv/bin/python" ] || "$py" -m venv "$tools/venv" \
        || fail Python "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check \
        "componentize-py==$COMPONENTIZE_PY_VERSION" \
        || fail Python "pip install componentize-py==$COMPONENTIZE_PY_VERSION failed"
fi

# --- Rust: the guest target ------------------------------------------------
step "Rust (wasm32-wasip2 target)"
rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2 \
    || fail Rust "rustup target add wasm32-wasip2 failed"

step "done"
