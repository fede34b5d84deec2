#!/usr/bin/env bash
# Installs the official MCP Python SDK that tests/mcp_python.rs drives
# `skillhost mcp` with. Idempotent: does nothing when a fitting version is
# already importable. Tested with mcp 1.30.0.
set -euo pipefail

PY="${PYTHON:-python3}"
SPEC='mcp>=1.9,<2'

if "$PY" - <<'PYEOF' 2>/dev/null; then
import importlib.metadata as m
major, minor = (int(x) for x in m.version("mcp").split(".")[:2])
raise SystemExit(0 if (major, minor) >= (1, 9) and major < 2 else 1)
PYEOF
    echo "mcp Python SDK already installed: $("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
    exit 0
fi

"$PY" -m pip install --quiet "$SPEC"
"$PY" -c 'import mcp, importlib.metadata as m; print("installed mcp", m.version("mcp"))'
