# Sourced by .ci/run: serves the local model for tests/real_model.rs.
# `start_local_model` starts llama.cpp's OpenAI-compatible server on
# 127.0.0.1, waits until it answers, and exports SKILLHOST_TEST_MODEL_URL;
# `stop_local_model` stops it. One server, one slot: the real-model tests
# take turns (a lock in the test module).

model_port="${SKILLHOST_CI_MODEL_PORT:-8089}"
model_pid=""

start_local_model() {
    local py="${PYTHON:-python3}" gguf log
    gguf=$("$py" "$(dirname "${BASH_SOURCE[0]}")/local-model-path.py")
    log="${TMPDIR:-/tmp}/skillhost-local-model.log"
    "$py" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
        --host 127.0.0.1 --port "$model_port" --n_ctx 8192 --seed 7 \
        >"$log" 2>&1 &
    model_pid=$!
    for _ in $(seq 1 120); do
        if curl -fsS "http://127.0.0.1:$model_port/v1/models" >/dev/null 2>&1; then
            export SKILLHOST_TEST_MODEL_URL="http://127.0.0.1:$model_port/v1"
            echo "local model served at $SKILLHOST_TEST_MODEL_URL (pid $model_pid)"
            return 0
        fi
        if ! kill -0 "$model_pid" 2>/dev/null; then
            break
        fi
        sleep 1
    done
    echo "the local model server did not start; its log:" >&2
    tail -n 40 "$log" >&2
    return 1
}

stop_local_model() {
    if [ -n "$model_pid" ]; then
        kill "$model_pid" 2>/dev/null || true
        wait "$model_pid" 2>/dev/null || true
        model_pid=""
    fi
}
