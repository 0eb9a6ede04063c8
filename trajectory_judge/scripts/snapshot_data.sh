#!/usr/bin/env bash
# Stage a consistent snapshot of data/ while a run may still be appending to it.
#
#   trajectory_judge/scripts/snapshot_data.sh && git commit -m "Data: ..."
#
# Rewrites data/SHA256SUMS, stages data/, then checks that every staged file ends with a newline
# and hashes to its manifest entry; a line appended between hashing and staging makes it retry.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$HERE"
TJ=${TJ:-$HERE/.venv/bin/trajectory-judge}
for attempt in 1 2 3 4 5; do
  "$TJ" manifest --data data >/dev/null
  git add data/
  ok=1
  while read -r sum name; do
    staged=$(git show ":data/$name" | sha256sum | cut -d' ' -f1)
    last=$(git show ":data/$name" | tail -c 1 | od -An -c | tr -d ' ')
    [[ "$staged" == "$sum" && "$last" == '\n' ]] || { ok=0; echo "retry: data/$name changed while staging"; }
  done < data/SHA256SUMS
  [[ $ok == 1 ]] && { git diff --cached --stat -- data/; exit 0; }
  sleep 2
done
echo "could not stage a consistent snapshot of data/" >&2
exit 1
