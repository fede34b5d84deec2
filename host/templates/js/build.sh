#!/usr/bin/env bash
# Builds handler.wasm from handler.js with componentize-js: the one in
# ./node_modules (`npm install` here first), else `componentize-js` on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tool="$here/node_modules/.bin/componentize-js"
[ -x "$tool" ] || tool="$(command -v componentize-js || true)"
if [ -z "$tool" ]; then
    echo "build.sh: componentize-js is not installed: run \`npm install\` in $here" >&2
    exit 1
fi
# No fetch()/HTTP: keeps the component's imports to the handler world + WASI.
"$tool" "$here/handler.js" --wit "$here/wit" --world-name handler \
    --disable http fetch-event -o "$here/handler.wasm"
echo "built $here/handler.wasm"
