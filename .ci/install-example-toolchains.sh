#!/usr/bin/env bash
# Installs the toolchains that build the example handlers in examples/
# (Rust, JavaScript, Python, C) on a fresh Debian machine, as root, and
# bubblewrap, the box the forge builds a model's handler in.
# Idempotent: what is already installed at the pinned version is kept.
# Each step that fails stops the script with a message naming the toolchain,
# so CI says which example cannot be built and why.
#
# Where things go (all under the repo's target dir, so a cached target/
# carries them from one run to the next, and nothing leaks outside):
#   target/example-tools/venv          componentize-py (pip, in a venv:
#                                       Debian's Python is externally managed)
#   target/example-tools/node_modules  componentize-js (npm ci, from
#                                       examples/js/package-lock.json)
# C needs only the Debian packages: `skillhost handler build` generates the
# bindings and makes the component in-process (wit-bindgen-c, wit-component
# and the preview1 adapter are compiled into skillhost). Nothing is compiled
# from source here.
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

# Pinned versions: change them here, in examples/js/package.json and in
# host/src/toolchain/mod.rs (what `skillhost toolchain install` installs).
COMPONENTIZE_PY_VERSION=0.25.1
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

# --- JavaScript: componentize-js (npm) -----------------------------------
# Into the tools folder, from examples/js's lock, where `skillhost handler
# build` looks (as it looks in $SKILLHOST_HOME/tools after `skillhost
# toolchain install js`).
step "JavaScript (componentize-js via npm ci into $tools)"
command -v node >/dev/null || fail JavaScript "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail JavaScript "npm is not installed (apt-get install npm)"
if [ ! -f "$tools/node_modules/@bytecodealliance/componentize-js/src/cli.js" ] \
    || ! cmp -s examples/js/package-lock.json "$tools/package-lock.json"; then
    cp examples/js/package.json examples/js/package-lock.json "$tools/"
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error) \
        || fail JavaScript "npm ci in $tools failed"
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

# --- bubblewrap: the box `forge handler` builds a model's handler in -------
# (docs/forge.md, "The build box"). Without it the forge's builds fail
# closed, and so do tests/forge_handler/ and forge::buildbox's tests.
step "bubblewrap (bwrap, the forge's build box)"
if ! command -v bwrap >/dev/null; then
    command -v apt-get >/dev/null || fail bubblewrap "apt-get is not available to install bubblewrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq bubblewrap >/dev/null 2>&1 || {
        apt-get update -qq || fail bubblewrap "apt-get update failed"
        apt-get install -y -qq bubblewrap >/dev/null || fail bubblewrap "apt-get install -y bubblewrap failed"
    }
fi
bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/bin /bin \
    --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev true \
    || fail bubblewrap "bwrap is installed but cannot start a box here (user namespaces refused?)"

step "done"
