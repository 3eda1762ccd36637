#!/usr/bin/env bash
# The length-generalization study under Ruoss et al.'s protocol (configs/ruoss/), both stages, resumable,
# one task at a time (TASKS, default "reverse duplicate_string"), so that a task's study is complete before
# the next task's sweep starts:
#   1. configs/ruoss/lr_sweep.yaml restricted to the task: every encoding at three learning rates, seed 1;
#   2. scripts/choose_lr.py picks each cell's rate on in-distribution validation (written to
#      results/ruoss_lr_sweep/lr_choice.json) and configs/ruoss/study.yaml trains seeds 2-5 at that rate,
#      cell by cell, as soon as the cell's sweep is complete. A cell with no competent rate (seed 1 did not
#      reach the target at any rate) is not trained further: its models say nothing about extrapolation.
# Finished runs are skipped (both configs share the run store results/ruoss/runs). Two 1-thread runs side by
# side. Commit finished runs as they come: scripts/commit_finished_runs.sh results/ruoss/runs (a loop).
#   scripts/ruoss_campaign.sh                       # until done (many hours)
#   FINISH_BY=@$(date -d '16:20' +%s) scripts/ruoss_campaign.sh   # start only runs that can finish by then
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${RELPOS:-build/relpos}
fb=()
[ -n "${FINISH_BY:-}" ] && fb=(--finish-before "$FINISH_BY")
# Overriding the grid rewrites the experiment.yaml of the experiment it runs: scratch experiment
# directories take that, the runs themselves go to the shared store.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# relpos run's own --finish-before estimates from finished runs of the same points, which a cell's new seeds
# do not have yet: the deadline is applied to each cell here, from its seed-1 run's time.
deadline=()
[ -n "${FINISH_BY:-}" ] && deadline=(--finish-before "${FINISH_BY#@}")
for task in ${TASKS:-reverse duplicate_string}; do
  echo "ruoss_campaign: $task, stage 1, the learning-rate sweep"
  "$bin" run configs/ruoss/lr_sweep.yaml "sweep.grid.data.task=[$task]" "results_dir=$scratch/sweep" --jobs 2 "${fb[@]}" </dev/null
  # the sweep's own experiment.yaml and run links (no run starts): choose_lr reads them
  "$bin" run configs/ruoss/lr_sweep.yaml --start-before @1 >/dev/null
  python3 scripts/choose_lr.py results/ruoss_lr_sweep --json results/ruoss_lr_sweep/lr_choice.json
  python3 scripts/choose_lr.py results/ruoss_lr_sweep --overrides --competent-only "${deadline[@]}" |
    { grep -F "sweep.grid.data.task=[$task]" || true; } | while read -r line; do
    eval "set -- $line"
    echo "ruoss_campaign: $task, stage 2, $*"
    "$bin" run configs/ruoss/study.yaml "$@" "results_dir=$scratch/study" --jobs 2 "${fb[@]}" </dev/null
  done
done
# The study's own experiment.yaml and run links (no run starts), then its report.
"$bin" run configs/ruoss/study.yaml --start-before @1 >/dev/null
"$bin" report results/ruoss_encoder_only
