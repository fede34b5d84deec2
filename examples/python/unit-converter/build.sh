#!/usr/bin/env bash
# Builds handler.wasm (a WebAssembly component) from app.py with
# componentize-py. Looks for componentize-py in the venv that
# .ci/install-example-toolchains.sh makes (target/example-tools/venv), then
# on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
tool="${CARGO_TARGET_DIR:-$repo/target}/example-tools/venv/bin/componentize-py"
[ -x "$tool" ] || tool="$(command -v componentize-py || true)"
if [ -z "$tool" ]; then
    echo "build.sh: componentize-py is not installed: pip install componentize-py==0.25.1 (or run .ci/install-example-toolchains.sh)" >&2
    exit 1
fi
cd "$here"
"$tool" -d "$repo/wit" -w handler componentize app -o "$here/handler.wasm"
echo "built $here/handler.wasm ($(wc -c <"$here/handler.wasm") bytes)"
