#!/usr/bin/env bash
# Builds the handler into the component SKILL.md names (handler.wasm) with
# `skillhost handler build`, which tells the language from the files here
# and finds its tools. `skillhost doctor` says what is missing and the one
# command that installs it. $SKILLHOST picks another skillhost binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "${SKILLHOST:-skillhost}" handler build "$here"
