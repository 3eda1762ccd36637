#!/usr/bin/env bash
# Commits every finished run directory (one with results.json) under the given run stores that git does
# not track yet, one commit per run, without checkpoints (.gitignore keeps them out). For long campaigns:
# a machine that goes away without warning then loses no finished run. Before it commits a run it keeps what the
# run's position encoding learned (position_parameters.json, from the ignored checkpoint:
# scripts/learned_positions.py --write-run-files), so figures about it can be checked in any clone.
#   scripts/commit_finished_runs.sh results/converged/runs results/lm_extrapolation/runs
#   while sleep 120; do scripts/commit_finished_runs.sh results/converged/runs; done &   # keep watching
# A pass is skipped while another git command holds the index (.git/index.lock).
# The runs configs/keep_checkpoints.list names (one glob per line, run directories as an experiment names them:
# results/<experiment>/runs/<id>, through a shared store's links too; # starts a comment) are committed with their
# best checkpoint (checkpoints/best, which .gitignore otherwise keeps out), so that a clone can still evaluate
# them another way (`relpos eval --run`); a run committed before it was listed gets it in a commit of its own
# while the checkpoint is still on disk.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 RUN_STORE..." >&2; exit 2; }
keep=()
if [ -f configs/keep_checkpoints.list ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    for match in $line; do  # the glob expands here
      [ -d "$match" ] && keep+=("$(realpath --relative-to=. "$match")")
    done
  done < configs/keep_checkpoints.list
fi
keeps_best() {  # whether the run's best checkpoint goes in with it, and is not tracked yet
  local real k
  [ -L "$1" ] && return 1  # a link into a shared store: the run's files are committed where they are
  [ -d "$1/checkpoints/best" ] || return 1
  [ -z "$(git ls-files -- "$1/checkpoints/best")" ] || return 1
  real=$(realpath --relative-to=. "$1")
  for k in "${keep[@]}"; do [ "$k" = "$real" ] && return 0; done
  return 1
}
for store in "$@"; do
  [ -d "$store" ] || { echo "commit_finished_runs: $store is not a directory" >&2; exit 2; }
  for run in "$store"/*/; do
    run=${run%/}
    [ -f "$run/results.json" ] || continue
    best=0
    keeps_best "$run" && best=1
    [ "$best" = 0 ] && [ -z "$(git status --porcelain --untracked-files=all -- "$run")" ] && continue
    [ -e .git/index.lock ] && exit 0
    [ "$best" = 1 ] && git add -f -- "$run/checkpoints/best"
    [ -f "$run/position_parameters.json" ] || python3 scripts/learned_positions.py --write-run-files "$run" > /dev/null || true
    if git ls-files --error-unmatch -- "$run/results.json" > /dev/null 2>&1; then
      # committed before: only files added since (e.g. position_parameters.json written later) go in
      git add -- "$run"
      added=$(git diff --cached --name-only -- "$run" | { grep -v /checkpoints/best/ || true; } | xargs -r -n1 basename | tr '\n' ' ')
      [ "$best" = 1 ] && added="${added}checkpoints/best (configs/keep_checkpoints.list) "
      git commit -q -m "files added to the finished run $run: ${added% }" -- "$run" && echo "committed files of $run"
      continue
    fi
    git add -- "$run"
    metrics=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r.get("metrics",{}); print(", ".join(f"{k} {v:.2f}" for k,v in m.items() if k.endswith(("bleu_tok","ppl@64","ppl@1024","accuracy")))[:120])' "$run/results.json" 2>/dev/null || true)
    with_best=""
    [ "$best" = 1 ] && with_best=", with its best checkpoint (configs/keep_checkpoints.list)"
    git commit -q -m "finished run: $run${metrics:+ ($metrics)}$with_best" -- "$run" && echo "committed $run$with_best"
  done
done
