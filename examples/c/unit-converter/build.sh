#!/usr/bin/env bash
# Builds handler.wasm (a WebAssembly component) with `skillhost handler
# build`, which tells the language from the files here and finds the tools
# where .ci/install-example-toolchains.sh or `skillhost toolchain install`
# put them (`skillhost doctor` lists them). $SKILLHOST picks the binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "${SKILLHOST:-skillhost}" handler build "$here"
