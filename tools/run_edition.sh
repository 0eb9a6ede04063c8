#!/usr/bin/env bash
# The real LLM runs of this edition, in rounds so partial data stays balanced.
#
#   nohup tools/run_edition.sh >> "${TJ_STATE_DIR:-$HOME/.cache/trajectory-judge/llm}/run_edition.log" 2>&1 &
#
# Sequential on one llama-server (2 cores: never two model runs at once). Each round raises
# --limit (a stratified prefix of data/trajectories.jsonl) and runs: outcome, step, reply with
# the 1.5B model; step with the 0.5B model; selfcons with the 1.5B on half the round's prefix
# (all of it in the 400 round), so every round leaves every judge on a balanced prefix.
# Every `trajectory-judge run` is resumable, so rerunning this script continues where it stopped.
# A failed run (server crash, transport fault) is retried after restarting the server.
# With TJ_ORGANIC=1, organic agent episodes are played too: one per ten trajectories of the round
# (15 after the 150 round, ...), 60 at the end.
# TJ_ROUNDS overrides the rounds; TJ_SELFCONS_CAP caps the self-consistency prefix (e.g. 200).
# The runs write into $TJ_DATA (default data/), which SHA256SUMS pins: they pass --force, and
# tools/snapshot_data.py stages the files with their new checksums for a commit.
# State (server files, this script's PID) lives in $TJ_STATE_DIR, default
# ${XDG_CACHE_HOME:-~/.cache}/trajectory-judge/llm (see llm_server.sh).
# Stop: kill "$(cat "$TJ_STATE_DIR/run_edition.pid")" (the run in flight stops within seconds, its
# verdicts kept), then tools/llm_server.sh stop. Resume: start this script again.
set -uo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
cd "$HERE"
DATA=${TJ_DATA:-data}
PORT=${TJ_PORT:-8080}
CACHE=${TJ_CACHE_PROMPT:-prefix}
ROUNDS=${TJ_ROUNDS:-"40 100 150 200 300 400"}
TJ="$HERE/.venv/bin/trajectory-judge"
STATE=${TJ_STATE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trajectory-judge/llm}
export TJ_STATE_DIR=$STATE
mkdir -p "$STATE"
echo $$ > "$STATE/run_edition.pid"
CHILD=
# stopping the script stops the run in flight cleanly (its verdicts are kept; rerun to resume)
trap '[[ -n "$CHILD" ]] && kill -TERM "$CHILD" && wait "$CHILD"; echo "[$(date -u +%FT%TZ)] stopped by signal"; exit 130' TERM INT

log() { echo "[$(date -u +%FT%TZ)] $*"; }

judge() {  # judge MODEL JUDGES LIMIT
  local model=$1 judges=$2 limit=$3
  for attempt in 1 2 3; do
    tools/llm_server.sh start "$model" || { log "server start failed ($model)"; sleep 30; continue; }
    log "run $judges with $model, limit $limit (attempt $attempt)"
    "$TJ" run --data "$DATA" --force --judges "$judges" --backend openai --base-url "http://127.0.0.1:$PORT" \
      --model "$model" --judge-model-name "$model" --limit "$limit" --num-ctx 8192 \
      --temperature 0 --seed 7 --timeout 600 --cache-prompt "$CACHE" &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=
    [[ $rc -eq 0 ]] && return 0
    [[ $rc -eq 130 || $rc -eq 143 ]] && { log "interrupted"; exit 130; }
    [[ $rc -eq 2 ]] && { log "refused (exit 2), e.g. another process writes $DATA; not retrying"; return 1; }
    log "run failed with exit $rc; restarting the server and resuming"
    tools/llm_server.sh stop
  done
  log "giving up on $judges with $model at limit $limit"
  return 1
}

organic() {  # organic EPISODES: the 1.5B model drives the agent (resumable, like the judge runs)
  tools/llm_server.sh start qwen2.5-coder:1.5b || { log "server start failed"; return 1; }
  log "organic episodes with qwen2.5-coder:1.5b, first $1 instances"
  "$TJ" agent --data "$DATA" --force --episodes "$1" --backend openai --base-url "http://127.0.0.1:$PORT" \
    --model qwen2.5-coder:1.5b --num-ctx 8192 --temperature 0 --seed 7 --timeout 600 --cache-prompt off &
  CHILD=$!
  wait "$CHILD" || log "organic episodes failed (exit $?)"
  CHILD=
}

log "run_edition start (pid $$, rounds: $ROUNDS, cache: $CACHE, organic: ${TJ_ORGANIC:-no})"
for LIMIT in $ROUNDS; do
  judge qwen2.5-coder:1.5b outcome,step,reply "$LIMIT"
  judge qwen2.5-coder:0.5b step "$LIMIT"
  if [[ $LIMIT -ge 400 ]]; then SC=$LIMIT; else SC=$(( LIMIT / 2 )); fi
  if [[ -n "${TJ_SELFCONS_CAP:-}" && $SC -gt $TJ_SELFCONS_CAP ]]; then SC=$TJ_SELFCONS_CAP; fi
  judge qwen2.5-coder:1.5b selfcons "$SC"
  if [[ -n "${TJ_ORGANIC:-}" ]]; then organic $(( LIMIT / 10 )); fi
done
if [[ -n "${TJ_ORGANIC:-}" ]]; then organic 60; fi
log "run_edition done"
