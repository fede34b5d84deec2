#!/usr/bin/env bash
# Builds handler.wasm (a WebAssembly component) from handler.js with
# componentize-js, pinned in examples/js/package.json (`npm ci` there first,
# or run .ci/install-example-toolchains.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
cli="$here/../node_modules/@bytecodealliance/componentize-js/src/cli.js"
if ! command -v node >/dev/null; then
    echo "build.sh: node is not installed (Node.js 18+ is needed for componentize-js)" >&2
    exit 1
fi
if [ ! -f "$cli" ]; then
    echo "build.sh: componentize-js is not installed: run \`npm ci\` in examples/js" >&2
    exit 1
fi
# The handler needs no stdio, clocks, randomness or HTTP: disabling them keeps
# the component's imports to what skillhost:skill/handler declares (plus the
# few WASI interfaces the engine itself needs).
node "$cli" "$here/handler.js" --wit "$repo/wit" --world-name handler \
    --disable http fetch-event -o "$here/handler.wasm"
echo "built $here/handler.wasm ($(wc -c <"$here/handler.wasm") bytes)"
