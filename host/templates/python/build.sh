#!/usr/bin/env bash
# Builds handler.wasm from app.py with componentize-py
# (`pip install componentize-py==0.25.1`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v componentize-py >/dev/null; then
    echo "build.sh: componentize-py is not installed: pip install componentize-py==0.25.1" >&2
    exit 1
fi
cd "$here"
componentize-py -d "$here/wit" -w handler componentize app -o "$here/handler.wasm"
echo "built $here/handler.wasm"
