#!/usr/bin/env bash
# Commits every finished run directory (one with results.json) under the given run stores that git does
# not track yet, one commit per run, without checkpoints (.gitignore keeps them out). For long campaigns:
# a session that ends without warning then loses no finished run. Before it commits a run it keeps what the
# run's position encoding learned (position_parameters.json, from the ignored checkpoint:
# scripts/learned_positions.py --write-run-files), so figures about it can be checked in any clone.
#   scripts/commit_finished_runs.sh results/converged/runs results/lm_extrapolation/runs
#   while sleep 120; do scripts/commit_finished_runs.sh results/converged/runs; done &   # keep watching
# A pass is skipped while another git command holds the index (.git/index.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 RUN_STORE..." >&2; exit 2; }
for store in "$@"; do
  [ -d "$store" ] || { echo "commit_finished_runs: $store is not a directory" >&2; exit 2; }
  for run in "$store"/*/; do
    run=${run%/}
    [ -f "$run/results.json" ] || continue
    [ -z "$(git status --porcelain --untracked-files=all -- "$run")" ] && continue
    [ -e .git/index.lock ] && exit 0
    [ -f "$run/position_parameters.json" ] || python3 scripts/learned_positions.py --write-run-files "$run" > /dev/null || true
    if git ls-files --error-unmatch -- "$run/results.json" > /dev/null 2>&1; then
      # committed before: only files added since (e.g. position_parameters.json written later) go in
      git add -- "$run"
      added=$(git diff --cached --name-only -- "$run" | xargs -r -n1 basename | tr '\n' ' ')
      git commit -q -m "files added to the finished run $run: ${added% }" -- "$run" && echo "committed files of $run"
      continue
    fi
    git add -- "$run"
    metrics=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r.get("metrics",{}); print(", ".join(f"{k} {v:.2f}" for k,v in m.items() if k.endswith(("bleu_tok","ppl@64","ppl@1024","accuracy")))[:120])' "$run/results.json" 2>/dev/null || true)
    git commit -q -m "finished run: $run${metrics:+ ($metrics)}" -- "$run" && echo "committed $run"
  done
done
