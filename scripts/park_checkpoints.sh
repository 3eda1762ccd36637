#!/usr/bin/env bash
# Keeps a copy of every unfinished run's checkpoints outside the ignored paths, and brings it back.
#
# Checkpoints live in results/*/runs/*/checkpoints/, which .gitignore keeps out of commits (~15 MB a run).
# A move to another machine that restores a checkout's untracked files but not its ignored ones (a fresh
# checkout with the untracked files copied over) loses them, and an unfinished run then restarts from step 0. This
# script copies them to parked/<run id>/checkpoints/ (untracked, not ignored: never commit it; PARK_DIR=<dir>
# puts them elsewhere):
#
#   scripts/park_checkpoints.sh park RUN_STORE...     # copy each unfinished run's checkpoints (last, best)
#                                                     # when newer than its parked copy; drop the parked
#                                                     # copy of a run that has finished
#   scripts/park_checkpoints.sh restore RUN_STORE...  # put back each parked copy that is newer than what
#                                                     # the run has (or that the run lacks)
#
# "Newer" is the step in checkpoints/last/state.json. A copy is made into parked/<id>.tmp and renamed,
# and a copy that fails (the trainer replaced its checkpoint meanwhile) is dropped and made again on the
# next pass, so parked/ only ever holds complete checkpoints. Safe beside a running trainer; run it in the
# commit loop:
#   while sleep 120; do scripts/commit_finished_runs.sh results/lm/runs;
#                       scripts/park_checkpoints.sh park results/lm/runs; done &
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 park|restore RUN_STORE..." >&2; exit 2; }
[ $# -ge 2 ] || usage
mode=$1; shift
case "$mode" in park|restore) ;; *) usage ;; esac
park=${PARK_DIR:-parked}

step_of() {  # the step in a checkpoint directory's state.json, -1 when there is none
  python3 -c 'import json,sys
try: print(int(json.load(open(sys.argv[1]))["step"]))
except Exception: print(-1)' "$1/state.json"
}

for store in "$@"; do
  [ -d "$store" ] || { echo "park_checkpoints: $store is not a directory" >&2; exit 2; }
  if [ "$mode" = park ]; then
    for run in "$store"/*/; do
      run=${run%/}; id=$(basename "$run")
      if [ -f "$run/results.json" ]; then
        [ -d "$park/$id" ] && rm -rf "$park/$id" && echo "park_checkpoints: $id finished, parked copy dropped"
        continue
      fi
      [ -f "$run/checkpoints/last/state.json" ] || continue
      have=$(step_of "$run/checkpoints/last")
      [ "$have" -gt "$(step_of "$park/$id/checkpoints/last")" ] || continue
      rm -rf "$park/$id.tmp"
      mkdir -p "$park/$id.tmp/checkpoints"
      ok=1
      for ck in last best; do
        [ -d "$run/checkpoints/$ck" ] || continue
        cp -a "$run/checkpoints/$ck" "$park/$id.tmp/checkpoints/" 2>/dev/null || ok=0
      done
      # the copy must be of one complete checkpoint: the step it started from, state.json present
      if [ $ok = 1 ] && [ "$(step_of "$park/$id.tmp/checkpoints/last")" = "$have" ]; then
        rm -rf "$park/$id" && mv "$park/$id.tmp" "$park/$id" && echo "park_checkpoints: $id parked at step $have"
      else
        rm -rf "$park/$id.tmp"
      fi
    done
  else
    [ -d "$park" ] || continue
    for p in "$park"/*/; do
      p=${p%/}; id=$(basename "$p")
      case "$id" in *.tmp) continue ;; esac
      run="$store/$id"
      [ -d "$run" ] || [ -L "$run" ] || continue   # another store's run
      [ -f "$run/results.json" ] && continue
      want=$(step_of "$p/checkpoints/last")
      [ "$want" -gt "$(step_of "$run/checkpoints/last")" ] || continue
      [ -e "$run/.lock" ] && pgrep -f "relpos.* run " >/dev/null && {
        echo "park_checkpoints: $id may be training (a .lock and a relpos run process): not restored" >&2; continue; }
      rm -rf "$run/checkpoints"
      cp -a "$p/checkpoints" "$run/" && echo "park_checkpoints: $id restored at step $want"
    done
  fi
done
